//! Stress: eight threads wake the futures of one primitive, polled on a multi-thread tokio
//! runtime, a million times in all (which takes at most a few seconds a test even in a debug
//! build; the `--ignored` tests: ten million), at two paces: a flood over 1,000 futures
//! (`PINFOLD_STRESS_WAKES` wakes), and ping-pong over 64, where each wake waits for the poll
//! that answers the previous one, so that the set keeps going idle and being woken
//! (`PINFOLD_PING_PONG_WAKES` wakes; see [`Pace`]). Every output must arrive exactly once, every future must be dropped exactly once,
//! and nothing may hang: each test has a time limit that fails it (`tokio::time::timeout` on the
//! real clock for a wake that is lost, a watchdog that aborts the process for a poll or a thread
//! that never returns).
//!
//! And churn: many small sets of every kind are made, polled and dropped while four threads keep
//! waking, cloning and dropping their wakers; afterwards no parent waker may be left alive (a set
//! forgets its task when it is dropped) and every future and output was dropped exactly once.
//!
//! ```text
//! cargo test -p pinfold-reliability --test stress                          # 1,000,000 wakes
//! cargo test -p pinfold-reliability --release --test stress -- --ignored   # 10,000,000 wakes
//! PINFOLD_STRESS_WAKES=100000000 PINFOLD_PING_PONG_WAKES=100000000 \
//!     cargo test -p pinfold-reliability --release --test stress
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream;
use pinfold_buffer::BufferExt;
use pinfold_reliability::ctl::{Ctl, CtlHandle, Out, Outcome, Spec, World};
use pinfold_reliability::exec::{Exec, WakeFlag};
use pinfold_reliability::sizes::{churn_sets, ping_pong_wakes, stress_wakes, time_limit};
use pinfold_reliability::watchdog::Watchdog;

/// Threads that wake the futures.
const WAKER_THREADS: usize = 8;
/// How the waker threads send their wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pace {
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
    fn futures(self) -> usize {
        match self {
            Pace::Flood => 1_000,
            Pace::PingPong => 64,
        }
    }
}
/// Wakes of the tests that run by default.
const DEFAULT_WAKES: u64 = 1_000_000;
/// Wakes of the `--ignored` tests.
const DEEP_WAKES: u64 = 10_000_000;
/// How long a stress test may take before it fails (times `PINFOLD_TIMEOUT_SCALE`).
const LIMIT: Duration = Duration::from_secs(300);

/// What a [`Beacon`] shares with the waker thread that drives it.
#[derive(Debug)]
struct BeaconState {
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

/// A future that is `Ready(id)` once it has been woken `target` times.
#[derive(Debug)]
struct Beacon {
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
fn beacons(futures: usize, wakes: u64) -> (Vec<Beacon>, Vec<Arc<BeaconState>>) {
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
fn drive(t: usize, pace: Pace, states: &[Arc<BeaconState>], stop: &AtomicBool) -> u64 {
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

/// What a consumer saw: each id's number of outputs, in the order they came.
#[derive(Debug, Default)]
struct Seen {
    order: Mutex<Vec<usize>>,
    count: AtomicUsize,
}

impl Seen {
    fn record(&self, id: usize) {
        self.order.lock().unwrap().push(id);
        self.count.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs `consume` (which takes every beacon, polls them with some primitive and records each
/// output in `seen`) on a multi-thread runtime while `WAKER_THREADS` threads send `wakes` wakes;
/// fails if it takes longer than the limit or if any output is missing, repeated or (with
/// `ordered`) out of input order.
fn stress<C, Fut>(name: &str, wakes: u64, pace: Pace, ordered: bool, consume: C)
where
    C: FnOnce(Vec<Beacon>, Arc<Seen>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let limit = time_limit(LIMIT);
    let _watchdog = Watchdog::arm(name, LIMIT + Duration::from_secs(60));
    let started = Instant::now();
    let n = pace.futures();
    let (futures, states) = beacons(n, wakes);
    let seen = Arc::new(Seen::default());
    let stop = AtomicBool::new(false);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("build a tokio runtime");
    let consumer = consume(futures, seen.clone());
    let (outcome, sent) = thread::scope(|scope| {
        let drivers: Vec<_> = (0..WAKER_THREADS)
            .map(|t| {
                let (states, stop) = (&states, &stop);
                scope.spawn(move || drive(t, pace, states, stop))
            })
            .collect();
        let outcome = runtime.block_on(async {
            let task = tokio::spawn(consumer);
            tokio::time::timeout(limit, task).await
        });
        // On a timeout, the drivers may wait for futures that will never be polled.
        stop.store(true, Ordering::SeqCst);
        let sent: u64 = drivers.into_iter().map(|d| d.join().unwrap()).sum();
        (outcome, sent)
    });
    drop(runtime);
    let took = started.elapsed();
    match outcome {
        Err(_) => panic!(
            "{name}: not done after {limit:?}: {} of {n} outputs, {sent} wakes sent \
             (a lost wake?)",
            seen.count.load(Ordering::SeqCst)
        ),
        Ok(Err(join_error)) => std::panic::resume_unwind(join_error.into_panic()),
        Ok(Ok(())) => {}
    }
    let order = seen.order.lock().unwrap().clone();
    if ordered {
        assert!(
            order.iter().copied().eq(0..n),
            "{name}: outputs out of input order"
        );
    } else {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert!(
            sorted.iter().copied().eq(0..n),
            "{name}: an output is missing or repeated"
        );
    }
    let expected_wakes = n as u64 * (wakes / n as u64).max(1);
    assert_eq!(sent, expected_wakes, "{name}: wakes sent");
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops.load(Ordering::SeqCst),
            1,
            "{name}: future {id} dropped"
        );
    }
    eprintln!(
        "{name} ({pace:?}): {n} futures, {sent} wakes from {WAKER_THREADS} threads, in \
         {took:.2?}"
    );
}

/// A bounded set of 256, refilled as outputs come out.
fn bounded(wakes: u64, pace: Pace) {
    stress("bounded", wakes, pace, false, |futures, seen| async move {
        let mut set = pinfold_bounded::FuturesUnorderedBounded::new(256);
        let mut futures = futures.into_iter();
        for fut in futures.by_ref().take(256) {
            set.push(fut);
        }
        while let Some(id) = set.next().await {
            seen.record(id);
            if let Some(fut) = futures.next() {
                set.push(fut);
            }
        }
    });
}

/// A growable set: 600 futures to start (five groups), one more for each output.
fn growable(wakes: u64, pace: Pace) {
    stress("growable", wakes, pace, false, |futures, seen| async move {
        let mut set = pinfold_unordered::FuturesUnordered::new();
        let mut futures = futures.into_iter();
        set.extend(futures.by_ref().take(600));
        while let Some(id) = set.next().await {
            seen.record(id);
            if let Some(fut) = futures.next() {
                set.push(fut);
            }
        }
    });
}

fn join_all(wakes: u64, pace: Pace) {
    stress("join_all", wakes, pace, true, |futures, seen| async move {
        for id in pinfold_join::join_all(futures).await {
            seen.record(id);
        }
    });
}

fn ordered_buffer(wakes: u64, pace: Pace) {
    stress(
        "ordered_buffer",
        wakes,
        pace,
        true,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).ordered_buffer(64);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

fn ordered_buffer_window(wakes: u64, pace: Pace) {
    stress(
        "ordered_buffer window",
        wakes,
        pace,
        true,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).ordered_buffer(64).window(96);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

fn unordered_buffer(wakes: u64, pace: Pace) {
    stress(
        "unordered_buffer",
        wakes,
        pace,
        false,
        |futures, seen| async move {
            let mut outputs = stream::iter(futures).unordered_buffer(64);
            while let Some(id) = outputs.next().await {
                seen.record(id);
            }
        },
    );
}

/// A bounded merge of 256 one-item streams (each a beacon), refilled whenever it has room (a
/// stream leaves when it is polled after its item, so the merge may run empty while beacons
/// are left).
fn merge(wakes: u64, pace: Pace) {
    stress("merge", wakes, pace, false, |futures, seen| async move {
        let mut merged = pinfold_merge::MergeBounded::new(256);
        let mut futures = futures.into_iter().peekable();
        loop {
            while !merged.is_full() {
                let Some(fut) = futures.next() else { break };
                merged.push(stream::once(fut));
            }
            match merged.next().await {
                Some(id) => seen.record(id),
                None if futures.peek().is_some() => {}
                None => break,
            }
        }
    });
}

/// A `FutureMap` keyed by the beacons' ids: 600 to start, one more for each output; each
/// output must come under its own id.
fn future_map(wakes: u64, pace: Pace) {
    stress(
        "future_map",
        wakes,
        pace,
        false,
        |futures, seen| async move {
            let mut map = pinfold_map::FutureMap::new();
            let mut futures = futures.into_iter().enumerate();
            map.extend(futures.by_ref().take(600));
            while let Some((key, id)) = map.next().await {
                assert_eq!(key, id, "an output under its own key");
                seen.record(id);
                if let Some((key, fut)) = futures.next() {
                    map.insert(key, fut);
                }
            }
        },
    );
}

#[test]
fn merge_gets_every_item_under_cross_thread_wakes() {
    merge(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn merge_gets_every_item_under_ping_pong_wakes() {
    merge(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn future_map_gets_every_output_under_cross_thread_wakes() {
    future_map(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn future_map_gets_every_output_under_ping_pong_wakes() {
    future_map(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn bounded_set_gets_every_output_under_cross_thread_wakes() {
    bounded(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn growable_set_gets_every_output_under_cross_thread_wakes() {
    growable(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn join_all_gets_every_output_under_cross_thread_wakes() {
    join_all(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn ordered_buffer_gets_every_output_under_cross_thread_wakes() {
    ordered_buffer(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn ordered_buffer_with_window_gets_every_output_under_cross_thread_wakes() {
    ordered_buffer_window(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn unordered_buffer_gets_every_output_under_cross_thread_wakes() {
    unordered_buffer(stress_wakes(DEFAULT_WAKES), Pace::Flood);
}

#[test]
fn bounded_set_gets_every_output_under_ping_pong_wakes() {
    bounded(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn growable_set_gets_every_output_under_ping_pong_wakes() {
    growable(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn join_all_gets_every_output_under_ping_pong_wakes() {
    join_all(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn ordered_buffer_gets_every_output_under_ping_pong_wakes() {
    ordered_buffer(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn ordered_buffer_with_window_gets_every_output_under_ping_pong_wakes() {
    ordered_buffer_window(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
fn unordered_buffer_gets_every_output_under_ping_pong_wakes() {
    unordered_buffer(ping_pong_wakes(DEFAULT_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn bounded_set_gets_every_output_of_ten_million_wakes() {
    bounded(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn growable_set_gets_every_output_of_ten_million_wakes() {
    growable(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn join_all_gets_every_output_of_ten_million_wakes() {
    join_all(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_gets_every_output_of_ten_million_wakes() {
    ordered_buffer(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_with_window_gets_every_output_of_ten_million_wakes() {
    ordered_buffer_window(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn unordered_buffer_gets_every_output_of_ten_million_wakes() {
    unordered_buffer(stress_wakes(DEEP_WAKES), Pace::Flood);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn bounded_set_gets_every_output_of_ten_million_ping_pong_wakes() {
    bounded(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn growable_set_gets_every_output_of_ten_million_ping_pong_wakes() {
    growable(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn join_all_gets_every_output_of_ten_million_ping_pong_wakes() {
    join_all(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_gets_every_output_of_ten_million_ping_pong_wakes() {
    ordered_buffer(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn ordered_buffer_with_window_gets_every_output_of_ten_million_ping_pong_wakes() {
    ordered_buffer_window(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

#[test]
#[ignore = "deep run: ten million wakes (use --release)"]
fn unordered_buffer_gets_every_output_of_ten_million_ping_pong_wakes() {
    unordered_buffer(ping_pong_wakes(DEEP_WAKES), Pace::PingPong);
}

// ---------------------------------------------------------------------------------------------
// Churn: sets made and dropped while their wakers are woken from other threads
// ---------------------------------------------------------------------------------------------

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
const KINDS: usize = 6;

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
            pinfold_bounded::FuturesUnorderedBounded::from_iter(futures),
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

#[test]
fn sets_dropped_while_their_wakers_are_woken_elsewhere_leak_nothing() {
    churn(churn_sets(20_000));
}

#[test]
#[ignore = "deep run: a million sets (use --release)"]
fn a_million_sets_dropped_while_their_wakers_are_woken_elsewhere_leak_nothing() {
    churn(churn_sets(1_000_000));
}

/// Makes and drops `sets` small primitives while four threads wake their wakers.
fn churn(sets: usize) {
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
