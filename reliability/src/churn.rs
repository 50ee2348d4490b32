//! Churn: many small primitives of every kind made, polled and dropped while four threads keep
//! waking, cloning and dropping their wakers; afterwards no parent waker may be left alive (a
//! primitive forgets its task when it is dropped) and every future and output was dropped
//! exactly once (see `tests/stress.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Instant;

use futures_util::stream;
use pinfold_buffer::BufferExt;

use crate::ctl::{Ctl, CtlHandle, Out, Outcome, Spec, World};
use crate::exec::{Exec, WakeFlag};
use crate::stress::LIMIT;
use crate::watchdog::Watchdog;

/// Wakers of sets old and new, woken, cloned and dropped by the churn threads.
#[derive(Debug, Default)]
struct Board {
    wakers: Mutex<Vec<Waker>>,
}

/// Most wakers on the board; the oldest go first.
const BOARD: usize = 512;

impl Board {
    fn pin(&self, waker: Waker) {
        let mut wakers = self.wakers.lock().unwrap();
        wakers.push(waker);
        if wakers.len() > BOARD {
            // Often the last reference to a dropped set's wake table.
            wakers.swap_remove(0);
        }
    }
}

/// A churn thread: takes a batch of random wakers off the board (or clones of them), then wakes
/// them by value, so that wakes race the sets' drops and wake tables die on every thread.
fn churn_thread(seed: u64, board: &Board, stop: &AtomicBool) -> u64 {
    let mut rng = seed | 1;
    let mut wakes = 0;
    let mut batch = Vec::with_capacity(16);
    while !stop.load(Ordering::Relaxed) {
        {
            let mut wakers = board.wakers.lock().unwrap();
            for _ in 0..16 {
                if wakers.is_empty() {
                    break;
                }
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = (rng >> 8) as usize % wakers.len();
                if rng.is_multiple_of(4) {
                    batch.push(wakers.swap_remove(i));
                } else {
                    batch.push(wakers[i].clone());
                }
            }
        }
        if batch.is_empty() {
            thread::yield_now();
        }
        for waker in batch.drain(..) {
            waker.wake();
            wakes += 1;
        }
    }
    wakes
}

/// The primitives the churn test makes, in turn.
pub const KINDS: usize = 6;

/// Makes a small primitive of kind `kind`, polls it, puts its wakers on the board, completes
/// some of its futures, polls it again and drops it. Returns the parent waker's record.
fn churn_once(kind: usize, round: usize, world: &mut World, board: &Board) -> Arc<WakeFlag> {
    let size = 2 + round % 7;
    let (futures, handles): (Vec<Ctl<Out>>, Vec<CtlHandle>) =
        (0..size).map(|_| world.ctl(Spec::default())).unzip();
    let mut exec = Exec::new();
    let parent = exec.flag().clone();
    let mut primitive: Pin<Box<dyn ChurnPoll>> = match kind {
        0 => Box::pin(Streamed(
            pinfold_unordered::FuturesUnorderedBounded::from_iter(futures),
        )),
        1 => {
            let mut set = pinfold_unordered::FuturesUnordered::new();
            set.extend(futures);
            // Force a second group so that the hub serves several arenas.
            for _ in 0..(32 * (round % 2)) {
                set.push(world.ctl(Spec::default()).0);
            }
            Box::pin(Streamed(set))
        }
        2 => Box::pin(Joined(pinfold_join::join_all(futures))),
        3 => Box::pin(Streamed(stream::iter(futures).ordered_buffer(3))),
        4 => Box::pin(Streamed(stream::iter(futures).unordered_buffer(3))),
        _ => Box::pin(Streamed(stream::iter(futures).ordered_buffer(4).window(2))),
    };
    let _ = exec.poll_once(|cx| primitive.as_mut().poll_some(cx));
    for handle in &handles {
        if let Some(waker) = handle.waker() {
            board.pin(waker);
        }
    }
    for handle in handles.iter().step_by(2) {
        handle.complete(Outcome::Ok);
    }
    let _ = exec.poll_once(|cx| primitive.as_mut().poll_some(cx));
    if round.is_multiple_of(3) {
        for handle in &handles {
            handle.complete(Outcome::Ok);
        }
        let _ = exec.poll_once(|cx| primitive.as_mut().poll_some(cx));
    }
    drop(primitive);
    drop(exec);
    parent
}

/// Polls a primitive of any kind, dropping its outputs.
trait ChurnPoll {
    fn poll_some(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()>;
}

struct Streamed<S>(S);

impl<S: futures_core::Stream + Unpin> ChurnPoll for Streamed<S> {
    fn poll_some(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Take what is ready now, as a consumer would.
        while let Poll::Ready(Some(_)) = Pin::new(&mut self.0).poll_next(cx) {}
        Poll::Pending
    }
}

struct Joined<F>(F);

impl<F: Future + Unpin + futures_core::future::FusedFuture> ChurnPoll for Joined<F> {
    fn poll_some(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.0.is_terminated() {
            let _ = Pin::new(&mut self.0).poll(cx);
        }
        Poll::Pending
    }
}

/// Makes and drops `sets` small primitives while four threads wake their wakers.
pub fn churn(sets: usize) {
    let _watchdog = Watchdog::arm("churn", LIMIT);
    let started = Instant::now();
    let board = Board::default();
    let stop = AtomicBool::new(false);
    let mut world = World::new("churn");
    let mut parents = Vec::with_capacity(sets);
    let wakes: u64 = thread::scope(|scope| {
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let (board, stop) = (&board, &stop);
                scope.spawn(move || {
                    churn_thread(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(t + 1), board, stop)
                })
            })
            .collect();
        for round in 0..sets {
            parents.push(churn_once(round % KINDS, round / KINDS, &mut world, &board));
        }
        stop.store(true, Ordering::SeqCst);
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    world
        .check_all_dropped_once()
        .unwrap_or_else(|e| panic!("{e}"));
    // Stale wakers are still on the board and in the futures' states (a join's first polls hand
    // the futures the task's own waker); once those are gone, no set being left, no parent
    // waker may be alive anywhere but here.
    drop(board);
    drop(world);
    for (round, parent) in parents.iter().enumerate() {
        assert_eq!(
            Arc::strong_count(parent),
            1,
            "the parent waker of set {round} (kind {}) outlived its set",
            round % KINDS
        );
    }
    eprintln!(
        "churn: {sets} small sets, {wakes} wakes from 4 threads, in {:.2?}",
        started.elapsed()
    );
}
