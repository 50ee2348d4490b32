//! `concurrent_for_each(limit, f)`: every item handled once in any order, the limit on the
//! futures running, the stream polled only while a slot is free, no limit (`None` or 0), the
//! end, panics in `f` and in the futures, wakes from other threads, allocations, and the cases
//! of futures-util's `StreamExt::for_each_concurrent` (its documentation's example, its
//! zero-is-no-limit rule, and futures-rs's auto-trait checks).

mod support;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures_channel::{mpsc, oneshot};
use futures_core::FusedFuture;
use futures_util::{FutureExt, stream};
use pinfold_buffer::{ConcurrentForEach, ConcurrentForEachExt};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::channels::{id_channels, send_from_threads};
use pinfold_testkit::future::{block_on, poll_once, poll_with};
use pinfold_testkit::probe::Spinner;
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::tracked::{Counts, TRACKED_PANIC, Tracked};
use support::{CountingSource, Gate, GateState, Gauge, counting_waker, gates, random};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// `f` for gates: waits for the gate, holding a `gauge` guard from the moment the item is
/// taken until the gate opens or is dropped.
fn gauged(gauge: &Gauge) -> impl FnMut(Gate) -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
    let gauge = gauge.clone();
    move |gate| {
        let guard = gauge.enter();
        Box::pin(async move {
            gate.await;
            drop(guard);
        })
    }
}

/// Polls `fut` with a counting waker until it is `Ready` or `Pending` without having woken
/// itself: what an executor would do, without the waits.
fn poll_until_idle<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    let (waker, wakes) = counting_waker();
    loop {
        let before = wakes.count();
        let polled = poll_with(fut, &waker);
        if polled.is_ready() || wakes.count() == before {
            return polled;
        }
    }
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn every_item_is_handled_once_and_at_most_limit_run_at_once() {
    let gauge = Gauge::default();
    let delays = random(2_000, 20, 0x5eed);
    let seen: Vec<Cell<usize>> = (0..delays.len()).map(|_| Cell::new(0)).collect();
    let finished = RefCell::new(Vec::new());
    stream::iter(delays.into_iter().enumerate())
        .concurrent_for_each(16, |(id, millis)| {
            let guard = gauge.enter();
            let (seen, finished) = (&seen, &finished);
            async move {
                tokio::time::sleep(Duration::from_millis(millis)).await;
                seen[id].set(seen[id].get() + 1);
                finished.borrow_mut().push(id);
                drop(guard);
            }
        })
        .await;
    assert!(seen.iter().all(|count| count.get() == 1), "each item once");
    assert_eq!(gauge.max(), 16, "at most 16 running, and 16 were");
    assert_eq!(gauge.now(), 0);
    let finished = finished.into_inner();
    assert_ne!(
        finished,
        (0..2_000).collect::<Vec<_>>(),
        "in the order they finish"
    );
}

#[test]
fn the_stream_is_polled_only_while_a_slot_is_free() {
    let (items, states) = gates(10);
    let (source, counts) = CountingSource::new(items);
    let gauge = Gauge::default();
    let mut fut = source.concurrent_for_each(3, gauged(&gauge));
    assert_eq!(poll_once(&mut fut), Poll::Pending);
    assert_eq!(
        (counts.polls(), counts.pulled()),
        (3, 3),
        "full: not polled a 4th time"
    );
    assert_eq!(gauge.now(), 3);
    assert_eq!(poll_once(&mut fut), Poll::Pending);
    assert_eq!(counts.polls(), 3, "still full");

    // A slot freed is refilled in the same poll.
    states[1].open();
    assert_eq!(poll_until_idle(&mut fut), Poll::Pending);
    assert_eq!((counts.polls(), counts.pulled()), (4, 4));
    assert_eq!(gauge.now(), 3);
    assert_eq!(
        states[3].polls(),
        1,
        "the new future is polled in the poll that pulled it"
    );
    for state in &states {
        state.open();
    }
    assert_eq!(poll_until_idle(&mut fut), Poll::Ready(()));
    assert_eq!(counts.pulled(), 10);
    assert_eq!(gauge.max(), 3);
    assert!(states.iter().all(|state| state.drops() == 1));
}

/// Runs `n` gates with `limit`, which allows them all: every one is started without any of
/// them finishing.
fn every_gate_runs_at_once(limit: Option<usize>, n: usize) {
    let (items, states) = gates(n);
    let gauge = Gauge::default();
    let mut fut = stream::iter(items).concurrent_for_each(limit, gauged(&gauge));
    assert_eq!(poll_until_idle(&mut fut), Poll::Pending);
    assert_eq!(gauge.now(), n, "{limit:?}: every future runs");
    assert!(states.iter().all(|state| state.polls() == 1));
    for state in &states {
        state.open();
    }
    assert_eq!(poll_until_idle(&mut fut), Poll::Ready(()));
    assert_eq!(gauge.now(), 0);
}

#[test]
fn no_limit_runs_every_future_at_once() {
    let n = if cfg!(miri) { 100 } else { 5_000 };
    every_gate_runs_at_once(None, n);
}

/// futures-util's documented rule: "a limit of zero is interpreted as no limit at all, and
/// will have the same result as passing in `None`" (`StreamExt::for_each_concurrent`).
#[test]
fn a_limit_of_0_is_no_limit() {
    every_gate_runs_at_once(Some(0), if cfg!(miri) { 100 } else { 5_000 });
}

/// A limit above what gets a fixed arena (4,096) still bounds the futures running.
#[test]
#[cfg_attr(miri, ignore)]
fn a_large_limit_still_bounds_the_futures_running() {
    let (items, states) = gates(6_000);
    let (source, counts) = CountingSource::new(items);
    let gauge = Gauge::default();
    let mut fut = source.concurrent_for_each(5_000, gauged(&gauge));
    assert_eq!(poll_until_idle(&mut fut), Poll::Pending);
    assert_eq!((gauge.now(), counts.pulled()), (5_000, 5_000));
    for state in &states {
        state.open();
    }
    assert_eq!(poll_until_idle(&mut fut), Poll::Ready(()));
    assert_eq!((gauge.max(), counts.pulled()), (5_000, 6_000));
}

#[test]
fn an_empty_stream_completes_at_once() {
    let (source, counts) = CountingSource::new(std::iter::empty::<Gate>());
    let gauge = Gauge::default();
    for limit in [Some(2), None] {
        let (source, counts) = CountingSource::new(std::iter::empty::<Gate>());
        let mut fut = source.concurrent_for_each(limit, gauged(&gauge));
        assert!(!fut.is_terminated());
        assert_eq!(poll_once(&mut fut), Poll::Ready(()));
        assert!(fut.is_terminated());
        assert_eq!(counts.polls(), 1);
    }
    let mut fut = source.concurrent_for_each(1, gauged(&gauge));
    assert_eq!(poll_once(&mut fut), Poll::Ready(()));
    assert_eq!(
        poll_once(&mut fut),
        Poll::Ready(()),
        "again, polling nothing"
    );
    assert_eq!(counts.polls(), 1);
}

#[test]
fn completes_only_once_the_stream_ended_and_every_future_finished() {
    let (tx, rx) = mpsc::unbounded::<Gate>();
    let gauge = Gauge::default();
    let mut fut = rx.concurrent_for_each(4, gauged(&gauge));
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut fut, &waker), Poll::Pending, "nothing yet");

    let (gate, state) = Gate::new(0);
    tx.unbounded_send(gate).unwrap();
    assert_eq!(wakes.count(), 1, "the stream woke the task");
    assert_eq!(poll_with(&mut fut, &waker), Poll::Pending);
    assert_eq!(state.polls(), 1);

    drop(tx);
    assert_eq!(
        poll_with(&mut fut, &waker),
        Poll::Pending,
        "the future runs on"
    );
    assert!(!fut.is_terminated());
    let woken = wakes.count();
    state.open();
    assert_eq!(wakes.count(), woken + 1, "the future woke the task");
    assert_eq!(poll_with(&mut fut, &waker), Poll::Ready(()));
    assert!(fut.is_terminated());
    assert_eq!(state.drops(), 1);
}

/// Futures that wake themselves for ever: a poll polls each once, and wakes the task for the
/// next.
#[test]
fn each_future_is_polled_at_most_once_per_poll() {
    let counters = RefCell::new(Vec::new());
    let mut fut = stream::iter(0..4).concurrent_for_each(4, |id| {
        let (spinner, polls) = Spinner::forever(id);
        counters.borrow_mut().push(polls);
        spinner.map(drop)
    });
    let (waker, wakes) = counting_waker();
    for poll in 1..=3 {
        assert_eq!(poll_with(&mut fut, &waker), Poll::Pending);
        let polls: Vec<usize> = counters
            .borrow()
            .iter()
            .map(|p| p.load(Ordering::SeqCst))
            .collect();
        assert_eq!(polls, [poll; 4], "poll {poll}");
        assert_eq!(wakes.count(), poll, "woken once for the next poll");
    }
}

/// Tracked gates, the gates' states and the tracked counts, in id order.
type TrackedGates = (Vec<Tracked<Gate>>, Vec<Arc<GateState>>, Vec<Arc<Counts>>);

/// `n` tracked gates with ids `0..n`.
fn tracked_gates(n: usize) -> TrackedGates {
    let (items, states) = gates(n);
    let (tracked, counts) = items
        .into_iter()
        .enumerate()
        .map(|(id, gate)| Tracked::new(id, gate))
        .unzip();
    (tracked, states, counts)
}

#[test]
fn a_panic_in_f_propagates_and_the_others_go_on() {
    let (items, states, counts) = tracked_gates(6);
    let mut fut = stream::iter(items).concurrent_for_each(2, |tracked: Tracked<Gate>| {
        if tracked.id() == 3 {
            panic!("f panics at 3");
        }
        tracked.map(drop)
    });
    for state in &states {
        state.open();
    }
    let panicked = catch_unwind(AssertUnwindSafe(|| poll_until_idle(&mut fut)));
    let message = panicked.expect_err("f's panic propagates");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"f panics at 3"));
    assert_eq!(
        poll_until_idle(&mut fut),
        Poll::Ready(()),
        "the others go on"
    );
    for (id, counts) in counts.iter().enumerate() {
        assert_eq!(counts.drops(), 1, "item {id} dropped once");
        assert_eq!(
            counts.ended(),
            id != 3,
            "item {id} ran to its end, but the lost one"
        );
    }
}

/// `f` panics after a future finished in the same poll: the task is woken before the panic
/// leaves, so the futures that finish meanwhile are not left unpolled.
#[test]
fn a_panic_in_f_wakes_the_task() {
    let (items, states, counts) = tracked_gates(4);
    let mut fut = stream::iter(items).concurrent_for_each(2, |tracked: Tracked<Gate>| {
        assert_ne!(tracked.id(), 2, "f panics at 2");
        tracked.map(drop)
    });
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut fut, &waker), Poll::Pending);
    states[0].open();
    let woken = wakes.count();
    let panicked = catch_unwind(AssertUnwindSafe(|| poll_with(&mut fut, &waker)));
    assert!(panicked.is_err());
    assert!(wakes.count() > woken, "the task is woken");
    states[1].open();
    states[3].open();
    assert_eq!(poll_with(&mut fut, &waker), Poll::Ready(()));
    assert!(counts.iter().all(|counts| counts.drops() == 1));
}

#[test]
fn a_panicking_future_is_dropped_once_and_the_others_go_on() {
    for limit in [Some(3), None] {
        let (items, states, counts) = tracked_gates(8);
        let items = items.into_iter().map(|tracked| match tracked.id() {
            2 => tracked.panicking_at(1),
            5 => tracked.panicking_at(1),
            _ => tracked,
        });
        let mut fut = stream::iter(items).concurrent_for_each(limit, |t| t.map(drop));
        let mut panics = 0;
        for round in 0..20 {
            if round == 1 {
                for state in &states {
                    state.open();
                }
            }
            match catch_unwind(AssertUnwindSafe(|| poll_until_idle(&mut fut))) {
                Ok(Poll::Ready(())) => break,
                Ok(Poll::Pending) => {}
                Err(message) => {
                    let message = message.downcast_ref::<String>().map(String::as_str);
                    assert_eq!(message, Some(TRACKED_PANIC));
                    panics += 1;
                }
            }
        }
        assert!(fut.is_terminated(), "{limit:?}");
        assert_eq!(panics, 2, "{limit:?}");
        for (id, counts) in counts.iter().enumerate() {
            assert_eq!(counts.drops(), 1, "{limit:?}: item {id} dropped once");
            assert_eq!(counts.ended(), id != 2 && id != 5, "{limit:?}: item {id}");
        }
    }
}

#[test]
fn dropping_it_drops_the_stream_and_every_running_future_once() {
    let (items, _states, counts) = tracked_gates(10);
    let (source, source_counts) = Tracked::new(0, stream::iter(items));
    let mut fut = source.concurrent_for_each(4, |t| t.map(drop));
    assert_eq!(poll_once(&mut fut), Poll::Pending);
    assert_eq!(source_counts.drops(), 0);
    drop(fut);
    assert_eq!(source_counts.drops(), 1);
    assert!(
        counts.iter().all(|counts| counts.drops() == 1),
        "running and never pulled"
    );
}

#[test]
fn the_stream_is_dropped_as_soon_as_it_ends() {
    let (items, states, _) = tracked_gates(2);
    let (source, source_counts) = Tracked::new(0, stream::iter(items));
    // No limit: with one, the arena would have room for the 2 items its size hint promises,
    // and would not poll it again before one finished.
    let mut fut = source.concurrent_for_each(None, |t| t.map(drop));
    assert_eq!(poll_once(&mut fut), Poll::Pending);
    assert!(source_counts.ended());
    assert_eq!(
        source_counts.drops(),
        1,
        "ended, and dropped while futures run"
    );
    for state in &states {
        state.open();
    }
    assert_eq!(poll_until_idle(&mut fut), Poll::Ready(()));
}

/// Channels completed in a random order from 4 std threads while this thread drives the future
/// with a `block_on` that parks (a lost wake fails it).
#[test]
fn wakes_from_std_threads_are_never_lost() {
    let (rounds, n) = if cfg!(miri) { (1, 40) } else { (5, 1_000) };
    let mut rng = XorShift::new(29);
    for limit in [Some(16), None] {
        for round in 0..rounds {
            let (receivers, mut senders) = id_channels(n);
            rng.shuffle(&mut senders);
            let threads = send_from_threads(senders, 4, true);
            let handled = AtomicUsize::new(0);
            block_on(stream::iter(receivers).concurrent_for_each(limit, |rx| {
                let handled = &handled;
                async move {
                    rx.await.unwrap();
                    handled.fetch_add(1, Ordering::SeqCst);
                }
            }));
            for thread in threads {
                thread.join().unwrap();
            }
            assert_eq!(handled.into_inner(), n, "{limit:?}, round {round}");
        }
    }
}

/// The future runs as a task of a multi-thread tokio runtime, its futures woken by tasks on
/// the other workers. The timeout only guards against a hang (a lost wake).
#[test]
#[cfg_attr(miri, ignore)]
fn wakes_from_tokio_workers_are_never_lost() {
    const N: usize = 1_000;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    for limit in [Some(32), None] {
        let handled = runtime.block_on(async {
            let mut receivers = Vec::with_capacity(N);
            for id in 0..N {
                let (tx, rx) = tokio::sync::oneshot::channel();
                receivers.push(rx);
                tokio::spawn(async move {
                    for _ in 0..id % 4 {
                        tokio::task::yield_now().await;
                    }
                    let _ = tx.send(id);
                });
            }
            let handled = Arc::new(AtomicUsize::new(0));
            let counter = handled.clone();
            let task = tokio::spawn(stream::iter(receivers).concurrent_for_each(
                limit,
                move |rx| {
                    let counter = counter.clone();
                    async move {
                        rx.await.unwrap();
                        counter.fetch_add(1, Ordering::SeqCst);
                    }
                },
            ));
            tokio::time::timeout(Duration::from_secs(60), task)
                .await
                .expect("no end for 60 s: a wake was lost")
                .unwrap();
            handled.load(Ordering::SeqCst)
        });
        assert_eq!(handled, N, "{limit:?}");
    }
}

/// A future that wakes itself and returns `Pending` `.0` times, then is ready; it allocates
/// nothing.
struct WakesItself(usize);

impl Future for WakesItself {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Runs `n` items whose futures wake themselves `wakes(i)` times through
/// `concurrent_for_each` with `limit`, from construction to the end; gives the allocations it
/// made.
fn allocations_for(n: usize, limit: Option<usize>, wakes: fn(usize) -> usize) -> usize {
    let handled = Cell::new(0);
    let (waker, _) = counting_waker();
    let (_, allocations) = measure(|| {
        let mut fut = stream::iter(0..n).concurrent_for_each(limit, |i| {
            let handled = &handled;
            async move {
                WakesItself(wakes(i)).await;
                handled.set(handled.get() + 1);
            }
        });
        while poll_with(&mut fut, &waker).is_pending() {}
    });
    assert_eq!(handled.get(), n);
    allocations
}

#[test]
fn a_limit_allocates_its_arena_once_and_nothing_per_item() {
    let (few, many) = if cfg!(miri) { (10, 100) } else { (100, 10_000) };
    let allocations = allocations_for(few, Some(64), |i| i % 4);
    assert!(allocations <= 2, "the arena, at most 2: {allocations}");
    assert_eq!(allocations_for(many, Some(64), |i| i % 4), allocations);
}

#[test]
fn no_limit_allocates_in_blocks_not_per_item() {
    let (few, many) = if cfg!(miri) { (10, 200) } else { (100, 10_000) };
    // Futures that finish in their first poll never fill more than the first block.
    assert_eq!(
        allocations_for(many, None, |_| 0),
        allocations_for(few, None, |_| 0)
    );
    // Futures that wake themselves pile up while the stream is always ready: the arena grows
    // in blocks (and gives them back as they finish).
    // Fewer than one allocation per 100 items at 10,000 (per 10 at Miri's 200: three groups
    // of two allocations each, the hub and the list of groups, which has room for one group
    // until a second comes, are about 10).
    let allocations = allocations_for(many, None, |i| i % 4);
    let per = if cfg!(miri) { 10 } else { 100 };
    assert!(allocations < many / per, "{allocations} for {many} items");
}

/// futures-util's documentation example for `StreamExt::for_each_concurrent`: three oneshot
/// receivers, a limit of 2, every sender sent before the future is awaited.
#[test]
fn futures_util_example_oneshots_with_a_limit_of_2() {
    block_on(async {
        let (tx1, rx1) = oneshot::channel::<()>();
        let (tx2, rx2) = oneshot::channel::<()>();
        let (tx3, rx3) = oneshot::channel::<()>();
        let fut = stream::iter(vec![rx1, rx2, rx3]).concurrent_for_each(2, |rx| async move {
            rx.await.unwrap();
        });
        tx1.send(()).unwrap();
        tx2.send(()).unwrap();
        tx3.send(()).unwrap();
        fut.await;
    });
}

/// futures-rs's auto-trait checks of its `ForEachConcurrent` (`futures/tests/auto_traits.rs`),
/// on `ConcurrentForEach`: `Send` and `Sync` as its three type parameters are, `Unpin` as its stream is (its futures
/// and `f` need not be).
#[test]
fn auto_traits_follow_the_type_parameters_as_futures_util_s() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    fn unpin<T: Unpin>() {}
    send::<ConcurrentForEach<(), (), ()>>();
    sync::<ConcurrentForEach<(), (), ()>>();
    unpin::<ConcurrentForEach<(), std::marker::PhantomPinned, std::marker::PhantomPinned>>();
    unpin::<ConcurrentForEach<stream::Iter<std::ops::Range<u8>>, (), ()>>();
}

#[test]
fn debug_shows_the_stream_the_futures_running_and_the_limit() {
    let (items, _, _) = tracked_gates(3);
    let mut fut = stream::iter(items).concurrent_for_each(2, |t| t.map(drop));
    assert_eq!(poll_once(&mut fut), Poll::Pending);
    let text = format!("{fut:?}");
    assert!(
        text.starts_with("ConcurrentForEach { stream: Some("),
        "{text}"
    );
    assert!(text.ends_with("running: 2, limit: Some(2) }"), "{text}");
    let fut = stream::iter(0..1).concurrent_for_each(None, |_| async {});
    assert!(format!("{fut:?}").ends_with("running: 0, limit: None }"));
}
