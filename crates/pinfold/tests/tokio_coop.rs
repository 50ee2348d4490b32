//! The `tokio-coop` feature: every primitive that returns outputs in a loop spends tokio's
//! cooperative budget, so a task that drains one whose futures or streams are always ready
//! still lets the other tasks of a current-thread runtime run (it yields every 128 outputs,
//! as tokio's `JoinSet` does).
//!
//! Each test runs two tasks on a current-thread runtime: a ticker that counts its turns, and
//! a drainer that takes `ITEMS` outputs from a primitive refilled with ready work. Without the
//! feature (these tests are compiled only with it) the drainer never returns `Pending`, so the
//! ticker gets no turn until it is done: the counts asserted here would be 0.

#![cfg(feature = "tokio-coop")]

use std::future::{Future, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use futures_util::stream;
use pinfold::{
    BufferExt, ConcurrentForEachExt, FutureMap, FuturesOrdered, FuturesOrderedBounded,
    FuturesUnordered, FuturesUnorderedBounded, Merge, MergeBounded, StreamMap, join_all,
    try_join_all,
};

/// Outputs each drainer takes.
const ITEMS: usize = 4_096;

/// tokio's budget per task poll.
const BUDGET: usize = 128;

/// Runs `drain` (given the ticker's count) as a task beside a ticker on a current-thread
/// runtime, and returns how many turns the ticker had while the drainer ran.
fn ticks_while<D, F>(drain: D) -> usize
where
    D: FnOnce() -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                loop {
                    ticks.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            }
        });
        // Let the ticker start, so that every tick counted below happened during the drain.
        tokio::task::yield_now().await;
        let before = ticks.load(Ordering::Relaxed);
        tokio::spawn(drain()).await.unwrap();
        let during = ticks.load(Ordering::Relaxed) - before;
        ticker.abort();
        during
    })
}

/// The drainer yielded about once per `BUDGET` outputs: at least half as often, to leave
/// room for how tokio schedules the first turns.
fn assert_yielded(primitive: &str, ticks: usize, outputs: usize) {
    let expected = outputs / BUDGET;
    assert!(
        ticks >= expected / 2,
        "{primitive}: the other task ran {ticks} times while {outputs} outputs were drained \
         (expected about {expected})"
    );
}

#[test]
fn futures_unordered_bounded() {
    let ticks = ticks_while(|| async {
        let mut set = FuturesUnorderedBounded::new(16);
        for n in 0..16 {
            set.push(ready(n));
        }
        for _ in 0..ITEMS {
            let n = set.next().await.unwrap();
            set.push(ready(n + 16));
        }
    });
    assert_yielded("FuturesUnorderedBounded", ticks, ITEMS);
}

#[test]
fn futures_unordered() {
    let ticks = ticks_while(|| async {
        let mut set = FuturesUnordered::new();
        set.push(ready(0));
        for _ in 0..ITEMS {
            let n = set.next().await.unwrap();
            set.push(ready(n + 1));
        }
    });
    assert_yielded("FuturesUnordered", ticks, ITEMS);
}

#[test]
fn futures_ordered_sets() {
    let ticks = ticks_while(|| async {
        let mut set = FuturesOrdered::new();
        set.push_back(ready(0));
        for expected in 0..ITEMS {
            assert_eq!(set.next().await, Some(expected));
            set.push_back(ready(expected + 1));
        }
    });
    assert_yielded("FuturesOrdered", ticks, ITEMS);
    let ticks = ticks_while(|| async {
        let mut set = FuturesOrderedBounded::new(4);
        set.push_back(ready(0));
        for expected in 0..ITEMS {
            assert_eq!(set.next().await, Some(expected));
            set.push_back(ready(expected + 1));
        }
    });
    assert_yielded("FuturesOrderedBounded", ticks, ITEMS);
}

#[test]
fn buffers() {
    let ticks = ticks_while(|| async {
        let mut buffer = stream::iter(0..).map(ready).ordered_buffer(8);
        for expected in 0..ITEMS {
            assert_eq!(buffer.next().await, Some(expected));
        }
    });
    assert_yielded("ordered_buffer", ticks, ITEMS);
    let ticks = ticks_while(|| async {
        let mut buffer = stream::iter(0..).map(ready).unordered_buffer(8);
        for _ in 0..ITEMS {
            buffer.next().await.unwrap();
        }
    });
    assert_yielded("unordered_buffer", ticks, ITEMS);
}

#[test]
fn merges() {
    let ticks = ticks_while(|| async {
        let mut merged = MergeBounded::new(4);
        for n in 0..4 {
            merged.push(stream::repeat(n));
        }
        for _ in 0..ITEMS {
            merged.next().await.unwrap();
        }
    });
    assert_yielded("MergeBounded", ticks, ITEMS);
    let ticks = ticks_while(|| async {
        let mut merged: Merge<_> = (0..4).map(stream::repeat).collect();
        for _ in 0..ITEMS {
            merged.next().await.unwrap();
        }
    });
    assert_yielded("Merge", ticks, ITEMS);
}

#[test]
fn maps() {
    let ticks = ticks_while(|| async {
        let mut map = FutureMap::new();
        map.insert(0, ready(0));
        for _ in 0..ITEMS {
            let (key, n) = map.next().await.unwrap();
            map.insert(key + 1, ready(n + 1));
        }
    });
    assert_yielded("FutureMap", ticks, ITEMS);
    let ticks = ticks_while(|| async {
        let mut map = StreamMap::new();
        for key in 0..4 {
            map.insert(key, stream::repeat(key));
        }
        for _ in 0..ITEMS {
            let (key, n) = map.next().await.unwrap();
            assert_eq!(key, n);
        }
    });
    assert_yielded("StreamMap", ticks, ITEMS);
}

#[test]
fn concurrent_for_each() {
    // Each future it completes spends a unit of budget, as a join's. With a limit as large as
    // the stream, one poll could complete every future: the budget stops it. (Under a smaller
    // limit, each poll of the arena's round ends after as many futures as run, which yields
    // with a wake that tokio does not defer: the ticker's turns then are tokio's choice.)
    let ticks = ticks_while(|| async {
        let handled = AtomicUsize::new(0);
        ConcurrentForEachExt::concurrent_for_each(stream::iter(0..ITEMS), ITEMS, |_| {
            handled.fetch_add(1, Ordering::Relaxed);
            ready(())
        })
        .await;
        assert_eq!(handled.into_inner(), ITEMS);
    });
    assert_yielded("concurrent_for_each", ticks, ITEMS);
}

#[test]
fn joins() {
    // A join's output is its whole `Vec`: one unit of budget per join.
    let ticks = ticks_while(|| async {
        for _ in 0..ITEMS {
            let outputs = join_all((0..4).map(ready)).await;
            assert_eq!(outputs, [0, 1, 2, 3]);
        }
    });
    assert_yielded("join_all", ticks, ITEMS);
    let ticks = ticks_while(|| async {
        for _ in 0..ITEMS {
            let outputs = try_join_all((0..4).map(|n| ready(Ok::<_, ()>(n)))).await;
            assert_eq!(outputs, Ok(vec![0, 1, 2, 3]));
        }
    });
    assert_yielded("try_join_all", ticks, ITEMS);
}

#[test]
fn one_join_of_many_ready_futures_yields_as_it_completes_them() {
    // One join, not many: each future it completes spends a unit of budget.
    let n = 20_000;
    let ticks = ticks_while(move || async move {
        let outputs = join_all((0..n).map(ready)).await;
        assert_eq!(outputs.len(), n);
    });
    assert_yielded("one join_all", ticks, n);
    let ticks = ticks_while(move || async move {
        let outputs = try_join_all((0..n).map(|i| ready(Ok::<_, ()>(i)))).await;
        assert_eq!(outputs.map(|o| o.len()), Ok(n));
    });
    assert_yielded("one try_join_all", ticks, n);
}

#[test]
fn a_join_stops_at_the_first_future_that_finds_the_budget_spent() {
    // Each future counts its poll and is ready at once. The join's first poll completes
    // `BUDGET` of them, a unit each, then one more that finds no unit left: that one is kept,
    // and the poll stops there. Every future is polled once, and the outputs keep their order.
    let n = 3 * BUDGET;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let polled = Arc::new(AtomicUsize::new(0));
        let mut join = join_all((0..n).map(|i| {
            let polled = polled.clone();
            std::future::poll_fn(move |_| {
                polled.fetch_add(1, Ordering::Relaxed);
                std::task::Poll::Ready(i)
            })
        }));
        let first = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::pin::Pin::new(&mut join).poll(cx))
        })
        .await;
        assert!(first.is_pending(), "the budget stops the first poll");
        assert_eq!(polled.load(Ordering::Relaxed), BUDGET + 1);
        assert_eq!(join.await, (0..n).collect::<Vec<_>>());
        assert_eq!(polled.load(Ordering::Relaxed), n);
    });
}

#[test]
fn a_join_polled_once_the_budget_is_spent_polls_no_future() {
    // The task spent its whole budget before it polls the join: the join returns `Pending`
    // before it polls anything (tokio has woken the task), and completes at its next turn.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let polled = Arc::new(AtomicUsize::new(0));
        let mut join = join_all((0..4).map(|i| {
            let polled = polled.clone();
            std::future::poll_fn(move |_| {
                polled.fetch_add(1, Ordering::Relaxed);
                std::task::Poll::Ready(i)
            })
        }));
        let first = std::future::poll_fn(|cx| {
            for _ in 0..BUDGET {
                if let std::task::Poll::Ready(unit) = tokio::task::coop::poll_proceed(cx) {
                    unit.made_progress();
                }
            }
            assert!(!tokio::task::coop::has_budget_remaining());
            std::task::Poll::Ready(std::pin::Pin::new(&mut join).poll(cx))
        })
        .await;
        assert!(first.is_pending(), "no budget is left");
        assert_eq!(polled.load(Ordering::Relaxed), 0, "no future was polled");
        assert_eq!(join.await, [0, 1, 2, 3]);
    });
}
