//! Beacons: futures that are ready once woken a given number of times, and the waker threads
//! that wake them, as fast as they can or each wake only once the last was answered by a poll
//! (see [`Pace`]): the load of the stress tests.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;

/// Threads that wake the futures.
pub const WAKER_THREADS: usize = 8;
/// How the waker threads send their wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// As fast as they can, round-robin over 1,000 futures: the set is rarely idle, and many
    /// wakes of a slot coalesce.
    Flood,
    /// Each wake of a future only once the previous one was answered by a poll, over 64
    /// futures: the set keeps going idle and being woken, the transition where a wake is lost
    /// if the set collects its woken slots before it registers its waker.
    PingPong,
}

impl Pace {
    /// Futures per stress test; each is woken `wakes / futures` times.
    pub fn futures(self) -> usize {
        match self {
            Pace::Flood => 1_000,
            Pace::PingPong => 64,
        }
    }
}

/// What a [`Beacon`] shares with the waker thread that drives it.
#[derive(Debug)]
pub struct BeaconState {
    /// Wakes to wait for.
    target: u64,
    /// Wakes sent so far; each is counted before it is sent.
    count: AtomicU64,
    /// The waker of the latest poll.
    waker: Mutex<Option<Waker>>,
    /// Polls so far; each is counted after the registration.
    polls: AtomicU64,
    drops: AtomicUsize,
}

impl BeaconState {
    /// How many times the beacon was dropped.
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

/// A future that is `Ready(id)` once it has been woken `target` times.
#[derive(Debug)]
pub struct Beacon {
    id: usize,
    state: Arc<BeaconState>,
}

impl Future for Beacon {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        {
            let mut waker = self.state.waker.lock().unwrap();
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        self.state.polls.fetch_add(1, Ordering::SeqCst);
        // After the registration: a wake counted before it is seen here, one counted after it
        // finds the new waker.
        if self.state.count.load(Ordering::SeqCst) >= self.state.target {
            Poll::Ready(self.id)
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Beacon {
    fn drop(&mut self) {
        self.state.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// `futures` beacons sharing `wakes` wakes, and their states.
pub fn beacons(futures: usize, wakes: u64) -> (Vec<Beacon>, Vec<Arc<BeaconState>>) {
    let per_future = (wakes / futures as u64).max(1);
    (0..futures)
        .map(|id| {
            let state = Arc::new(BeaconState {
                target: per_future,
                count: AtomicU64::new(0),
                waker: Mutex::new(None),
                polls: AtomicU64::new(0),
                drops: AtomicUsize::new(0),
            });
            (
                Beacon {
                    id,
                    state: state.clone(),
                },
                state,
            )
        })
        .unzip()
}

/// Thread `t` of `WAKER_THREADS` drives the beacons `t, t + WAKER_THREADS, ...`: round after
/// round, it wakes each one that has been polled (has a waker) once, until each got its target;
/// at [`Pace::PingPong`], only those polled since their last wake. Returns the wakes it sent.
pub fn drive(t: usize, pace: Pace, states: &[Arc<BeaconState>], stop: &AtomicBool) -> u64 {
    // Each beacon, and its poll count when it was last woken.
    let mut mine: Vec<(&BeaconState, u64)> = states
        .iter()
        .skip(t)
        .step_by(WAKER_THREADS)
        .map(|s| (&**s, 0))
        .collect();
    let mut sent = 0;
    while !mine.is_empty() && !stop.load(Ordering::Relaxed) {
        let mut progressed = false;
        mine.retain_mut(|(state, polls_then)| {
            let waker = state.waker.lock().unwrap();
            let Some(waker) = waker.as_ref() else {
                return true; // not polled yet
            };
            if pace == Pace::PingPong {
                let polls = state.polls.load(Ordering::SeqCst);
                if polls <= *polls_then {
                    return true; // the last wake is not answered yet
                }
                *polls_then = polls;
            }
            let count = state.count.fetch_add(1, Ordering::SeqCst) + 1;
            waker.wake_by_ref();
            sent += 1;
            progressed = true;
            count < state.target
        });
        if !progressed {
            thread::yield_now();
        }
    }
    sent
}
