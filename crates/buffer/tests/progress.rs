//! Buffers driven while their consumer works (`ProgressStream`, `for_each_driven`,
//! `drive_while`), against futures-util's `buffered(n).for_each`, in tokio's paused virtual
//! time, where elapsed times are exact and may be asserted. The two scenarios are those of
//! futures-rs issue #2387: futures that need polling to advance, and a consumer that waits for
//! something a buffered future holds.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_core::Stream;
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, FobStreamExt, ProgressStream, ProgressStreamExt, TryBufferExt};
use support::{Counted, Gauge};
use tokio::sync::Mutex;
use tokio::time::{Instant, sleep, timeout};

const ITEMS: u64 = 6;
const CONCURRENCY: usize = 3;

/// Five 10 ms sleeps in a row: a future that needs five polls, 10 ms apart, to finish.
async fn in_steps(id: u64) -> u64 {
    for _ in 0..5 {
        sleep(Duration::from_millis(10)).await;
    }
    id
}

fn steps() -> impl Stream<Item = impl Future<Output = u64>> + Unpin {
    stream::iter(0..ITEMS).map(in_steps)
}

/// The consumer: 30 ms per item, recording what it got.
fn store(seen: &mut Vec<u64>, id: u64) -> impl Future<Output = ()> + use<> {
    seen.push(id);
    sleep(Duration::from_millis(30))
}

/// Runs `consume` in paused time; the virtual time it took.
fn elapsed_of<F: Future>(consume: impl FnOnce() -> F) -> (F::Output, Duration) {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(async {
            let start = Instant::now();
            let out = consume().await;
            (out, start.elapsed())
        })
}

/// The first outputs at 50 ms, then the consumer's 30 ms per item: the slower side alone. Each
/// future behind the first `CONCURRENCY` starts as a place frees and finishes in 50 ms, within
/// the 30 ms × `CONCURRENCY` the consumer spends on the outputs ahead of it.
const DRIVEN: Duration = Duration::from_millis(50 + 30 * ITEMS);

#[test]
fn futures_in_steps_run_while_the_consumer_works_in_every_adapter() {
    let in_order: Vec<u64> = (0..ITEMS).collect();
    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        steps()
            .ordered_buffer(CONCURRENCY)
            .for_each_driven(|id| store(&mut seen, id))
            .await;
        assert_eq!(seen, in_order);
    });
    assert_eq!(took, DRIVEN, "ordered_buffer");

    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        steps()
            .fast_ordered_buffer(CONCURRENCY)
            .window(CONCURRENCY + 2)
            .for_each_driven(|id| store(&mut seen, id))
            .await;
        assert_eq!(seen, in_order);
    });
    assert_eq!(took, DRIVEN, "fast_ordered_buffer with a window");

    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        steps()
            .unordered_buffer(CONCURRENCY)
            .for_each_driven(|id| store(&mut seen, id))
            .await;
        seen.sort_unstable();
        assert_eq!(seen, in_order);
    });
    assert_eq!(took, DRIVEN, "unordered_buffer");

    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        stream::iter(0..ITEMS)
            .map(|id| Ok::<_, ()>(async move { Ok::<_, ()>(in_steps(id).await) }))
            .try_ordered_buffer(CONCURRENCY)
            .for_each_driven(|id| store(&mut seen, id.unwrap()))
            .await;
        assert_eq!(seen, in_order);
    });
    assert_eq!(took, DRIVEN, "try_ordered_buffer");

    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        stream::iter(0..ITEMS)
            .map(|id| Ok::<_, ()>(async move { Ok::<_, ()>(in_steps(id).await) }))
            .try_unordered_buffer(CONCURRENCY)
            .for_each_driven(|id| store(&mut seen, id.unwrap()))
            .await;
        seen.sort_unstable();
        assert_eq!(seen, in_order);
    });
    assert_eq!(took, DRIVEN, "try_unordered_buffer");
}

#[test]
fn futures_in_steps_wait_for_the_consumer_under_for_each() {
    // futures-util: a future makes one step per `next()`, so those behind the first five take
    // a 30 ms consumer turn per 10 ms step.
    let ((), futures_util_took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        steps()
            .buffered(CONCURRENCY)
            .for_each(|id| store(&mut seen, id))
            .await;
        assert_eq!(seen, (0..ITEMS).collect::<Vec<_>>());
    });
    // pinfold's buffer consumed with `for_each` stalls the same way: driving is what changes.
    let ((), undriven_took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        steps()
            .ordered_buffer(CONCURRENCY)
            .window(CONCURRENCY)
            .for_each(|id| store(&mut seen, id))
            .await;
    });
    // The sum of both sides: the futures' 50 ms for each round of five, and the consumer's
    // 30 ms for each item.
    let sum = Duration::from_millis(ITEMS * 50 / CONCURRENCY as u64 + ITEMS * 30);
    assert_eq!(futures_util_took, sum);
    assert_eq!(undriven_took, sum);
    assert!(DRIVEN < sum);
}

#[test]
fn drive_while_keeps_futures_in_steps_running_in_a_loop_of_ones_own() {
    let ((), took) = elapsed_of(|| async {
        let mut seen = Vec::new();
        let mut results = steps().ordered_buffer(CONCURRENCY);
        while let Some(id) = results.next().await {
            results.drive_while(store(&mut seen, id)).await;
        }
        assert_eq!(seen, (0..ITEMS).collect::<Vec<_>>());
    });
    assert_eq!(took, DRIVEN);
}

/// Buffered future 1 takes `lock` at its first poll and gives it back at its next one, 10 ms
/// later; the consumer takes the same lock for each item, starting with the output of future
/// 0, ready at 1 ms.
async fn lock_held_by_a_buffered_future(driven: bool) -> Result<Vec<u64>, ()> {
    let lock = Arc::new(Mutex::new(()));
    let futures = stream::iter(0..3u64).map({
        let lock = lock.clone();
        move |id| {
            let lock = lock.clone();
            async move {
                match id {
                    // Finishes after future 1 has taken the lock.
                    0 => sleep(Duration::from_millis(1)).await,
                    1 => {
                        let _held = lock.lock().await;
                        sleep(Duration::from_millis(10)).await;
                    }
                    _ => {}
                }
                id
            }
        }
    });
    let mut seen = Vec::new();
    let consume = |id| {
        seen.push(id);
        let lock = lock.clone();
        async move {
            drop(lock.lock().await);
        }
    };
    let done = if driven {
        timeout(
            Duration::from_secs(1),
            futures.ordered_buffer(2).for_each_driven(consume),
        )
        .await
    } else {
        timeout(
            Duration::from_secs(1),
            futures.buffered(2).for_each(consume),
        )
        .await
    };
    done.map(|()| seen).map_err(drop)
}

#[test]
fn a_consumer_waiting_for_a_lock_a_buffered_future_holds_completes_when_driven() {
    let (seen, took) = elapsed_of(|| lock_held_by_a_buffered_future(true));
    assert_eq!(seen, Ok(vec![0, 1, 2]));
    assert_eq!(took, Duration::from_millis(10));
}

#[test]
fn a_consumer_waiting_for_a_lock_a_buffered_future_holds_hangs_under_for_each() {
    // futures-util's `buffered(2).for_each`: future 1 holds the lock and is not polled while
    // the consumer of output 0 waits for it; only the 1 s timeout ends the wait.
    let (seen, took) = elapsed_of(|| lock_held_by_a_buffered_future(false));
    assert_eq!(seen, Err(()));
    assert_eq!(took, Duration::from_secs(1));
}

/// Polls `buffer`'s progress once with a no-op waker.
fn progress<S: ProgressStream + Unpin>(buffer: &mut S) -> Poll<()> {
    Pin::new(buffer).poll_progress(&mut Context::from_waker(Waker::noop()))
}

/// Drives `buffer` until nothing more can move without taking an item: each call is one
/// round, which polls each future at most once, so futures started in a round run in the next.
fn progress_until_stuck<S: ProgressStream + Unpin>(buffer: &mut S) {
    for _ in 0..10 {
        if progress(buffer).is_ready() {
            return;
        }
    }
    panic!("still moving after 10 rounds");
}

/// A source of ready futures that counts how many were pulled.
fn counted(pulled: &Arc<AtomicUsize>) -> impl Stream<Item = std::future::Ready<u64>> + Unpin {
    let pulled = pulled.clone();
    stream::iter(0..100u64).map(move |id| {
        pulled.fetch_add(1, Ordering::SeqCst);
        std::future::ready(id)
    })
}

#[test]
fn driving_an_ordered_buffer_holds_no_more_than_its_window_or_concurrency() {
    let pulled = Arc::new(AtomicUsize::new(0));
    let mut buffer = counted(&pulled).ordered_buffer(3);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    assert_eq!(
        pulled.load(Ordering::SeqCst),
        3,
        "no window: the concurrency bounds it"
    );
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    assert_eq!(
        pulled.load(Ordering::SeqCst),
        3,
        "nothing moves until an item is taken"
    );

    let pulled = Arc::new(AtomicUsize::new(0));
    let mut buffer = counted(&pulled).ordered_buffer(3).window(7);
    progress_until_stuck(&mut buffer);
    assert_eq!(pulled.load(Ordering::SeqCst), 7);
    let outputs: Vec<u64> = futures_executor::block_on(buffer.collect());
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());
}

#[test]
fn driving_an_unordered_buffer_keeps_outputs_in_their_slots_in_finishing_order() {
    let pulled = Arc::new(AtomicUsize::new(0));
    let mut buffer = counted(&pulled).unordered_buffer(4);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    assert_eq!(
        pulled.load(Ordering::SeqCst),
        4,
        "the finished outputs fill the slots"
    );
    assert_eq!(buffer.size_hint().0, 100);
    let mut cx = Context::from_waker(Waker::noop());
    let first: Vec<u64> = (0..4)
        .map(|_| match buffer.poll_next_unpin(&mut cx) {
            Poll::Ready(Some(id)) => id,
            other => panic!("expected an output, got {other:?}"),
        })
        .collect();
    assert_eq!(first, [0, 1, 2, 3], "the order they finished in");
    let rest: Vec<u64> = futures_executor::block_on(buffer.collect());
    assert_eq!(rest, (4..100).collect::<Vec<_>>());
}

#[test]
fn an_ended_buffer_has_no_progress_to_make() {
    let mut buffer = stream::iter(0..3u64)
        .map(std::future::ready)
        .unordered_buffer(2);
    let all: Vec<u64> = futures_executor::block_on((&mut buffer).collect());
    assert_eq!(all.len(), 3);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    let mut buffer = stream::iter(0..3u64)
        .map(std::future::ready)
        .ordered_buffer(2);
    let all: Vec<u64> = futures_executor::block_on((&mut buffer).collect());
    assert_eq!(all, [0, 1, 2]);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
}

#[test]
fn a_driven_buffer_yields_what_an_undriven_one_does() {
    // Outputs of a pending source and of futures that finish at random polls, taken with a
    // drive between every two: the same outputs, in the same order (the ordered buffers), as
    // without driving.
    for seed in 1..=if cfg!(miri) { 2 } else { 20 } {
        let delays = support::random(40, 4, seed);
        let source = || {
            stream::iter(delays.clone().into_iter().enumerate())
                .map(|(id, polls)| support::Spinner::new(id, polls as usize).0)
        };
        let plain: Vec<usize> = futures_executor::block_on(source().ordered_buffer(3).collect());
        let mut driven = source().ordered_buffer(3).window(5);
        let mut got = Vec::new();
        while let Some(id) = futures_executor::block_on(driven.next()) {
            got.push(id);
            let _ = progress(&mut driven);
            let _ = progress(&mut driven);
        }
        assert_eq!(got, plain, "seed {seed}");

        let mut driven = source().unordered_buffer(3);
        let mut got = Vec::new();
        while let Some(id) = futures_executor::block_on(driven.next()) {
            got.push(id);
            let _ = progress(&mut driven);
        }
        got.sort_unstable();
        assert_eq!(got, (0..40).collect::<Vec<_>>(), "seed {seed}");
    }
}

/// A future that finishes at its first poll and wakes its waker after that: the wake comes
/// to a slot that holds only an output.
struct WakesAfterFinishing(Option<Waker>, u64);

impl Future for WakesAfterFinishing {
    type Output = u64;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        self.0 = Some(cx.waker().clone());
        Poll::Ready(self.1)
    }
}

impl Drop for WakesAfterFinishing {
    fn drop(&mut self) {
        if let Some(waker) = self.0.take() {
            waker.wake();
        }
    }
}

#[test]
fn a_wake_for_a_slot_holding_an_output_gives_that_output_once() {
    let mut buffer = stream::iter(0..6u64)
        .map(|id| WakesAfterFinishing(None, id))
        .unordered_buffer(3);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    let mut all: Vec<u64> = futures_executor::block_on(buffer.collect());
    all.sort_unstable();
    assert_eq!(all, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn dropping_a_driven_buffer_drops_each_output_held_once() {
    let gauge = Gauge::default();
    let mut buffer = stream::iter(0..10)
        .map(|_| {
            let alive = gauge.enter();
            async move { alive }
        })
        .unordered_buffer(4);
    assert_eq!(progress(&mut buffer), Poll::Ready(()));
    assert_eq!(gauge.now(), 4);
    drop(buffer);
    assert_eq!(gauge.now(), 0);

    let mut buffer = stream::iter(0..10)
        .map(|_| {
            let alive = gauge.enter();
            async move { alive }
        })
        .ordered_buffer(2)
        .window(6);
    progress_until_stuck(&mut buffer);
    assert_eq!(gauge.now(), 6);
    drop(buffer);
    assert_eq!(gauge.now(), 0);
}

#[test]
fn a_future_that_panics_while_driven_loses_only_its_own_output() {
    let source = || {
        stream::iter(0..6u64).map(|id| async move {
            assert_ne!(id, 2, "future 2 fails");
            id
        })
    };
    let mut ordered = source().ordered_buffer(6);
    assert!(catch_unwind(AssertUnwindSafe(|| progress(&mut ordered))).is_err());
    let rest: Vec<u64> = futures_executor::block_on(ordered.collect());
    assert_eq!(rest, [0, 1, 3, 4, 5]);

    let mut unordered = source().unordered_buffer(6);
    assert!(catch_unwind(AssertUnwindSafe(|| progress(&mut unordered))).is_err());
    let mut rest: Vec<u64> = futures_executor::block_on(unordered.collect());
    rest.sort_unstable();
    assert_eq!(rest, [0, 1, 3, 4, 5]);
}

/// Gives `id` at its first poll; its `Drop` panics if `id` is 2.
struct PanicsOnDrop(u64);

impl Future for PanicsOnDrop {
    type Output = u64;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u64> {
        Poll::Ready(self.0)
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if self.0 == 2 && !std::thread::panicking() {
            panic!("future 2's drop fails");
        }
    }
}

#[test]
fn a_future_whose_drop_panics_as_it_finishes_while_driven_loses_its_output() {
    let mut ordered = stream::iter(0..6u64).map(PanicsOnDrop).ordered_buffer(6);
    assert!(catch_unwind(AssertUnwindSafe(|| progress_until_stuck(&mut ordered))).is_err());
    let rest: Vec<u64> = futures_executor::block_on(ordered.collect());
    assert_eq!(rest, [0, 1, 3, 4, 5]);

    let mut unordered = stream::iter(0..6u64).map(PanicsOnDrop).unordered_buffer(6);
    assert!(catch_unwind(AssertUnwindSafe(|| progress_until_stuck(&mut unordered))).is_err());
    let mut rest: Vec<u64> = futures_executor::block_on(unordered.collect());
    rest.sort_unstable();
    assert_eq!(rest, [0, 1, 3, 4, 5]);
}

#[test]
fn a_consumer_that_panics_loses_its_item_and_for_each_driven_goes_on() {
    let mut seen = Vec::new();
    let mut all = Box::pin(
        stream::iter(0..5u64)
            .map(std::future::ready)
            .ordered_buffer(2)
            .for_each_driven(|id| {
                seen.push(id);
                async move { assert_ne!(id, 1, "item 1 fails") }
            }),
    );
    let mut cx = Context::from_waker(Waker::noop());
    let first = catch_unwind(AssertUnwindSafe(|| all.as_mut().poll(&mut cx)));
    assert!(first.is_err());
    assert_eq!(all.as_mut().poll(&mut cx), Poll::Ready(()));
    drop(all);
    assert_eq!(seen, [0, 1, 2, 3, 4]);
}

/// The future for an item: its poll panics, and its `Drop` then panics too.
struct FailsTwice;

impl Future for FailsTwice {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        panic!("the item's future fails")
    }
}

impl Drop for FailsTwice {
    fn drop(&mut self) {
        panic!("and so does its drop")
    }
}

#[test]
fn a_consumer_future_whose_poll_and_drop_panic_loses_its_item_and_for_each_driven_goes_on() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let mut calls = 0;
    let mut all = Box::pin(
        stream::iter(0..3u64)
            .map(std::future::ready)
            .unordered_buffer(2)
            .for_each_driven(|_| {
                calls += 1;
                FailsTwice
            }),
    );
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..3 {
        let polled = catch_unwind(AssertUnwindSafe(|| all.as_mut().poll(&mut cx)));
        // The poll's panic goes on; the drop's, made while it unwinds, is dropped.
        let panic = polled.expect_err("the item's future panics");
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"the item's future fails")
        );
    }
    assert_eq!(all.as_mut().poll(&mut cx), Poll::Ready(()));
    drop(all);
    assert_eq!(calls, 3);
}

#[test]
fn for_each_driven_ends_with_the_stream_and_is_fused() {
    use futures_core::future::FusedFuture;
    let mut count = 0;
    let mut driven = stream::iter(0..3u64)
        .map(|id| Ok::<_, ()>(std::future::ready(Ok::<_, ()>(id))))
        .try_unordered_buffer(2)
        .for_each_driven(|_| {
            count += 1;
            std::future::ready(())
        });
    assert!(!driven.is_terminated());
    futures_executor::block_on(&mut driven);
    assert!(driven.is_terminated());
    drop(driven);
    assert_eq!(count, 3);
}

/// Future 0 takes one 10 ms step, the others five.
async fn head_first(id: u64) -> u64 {
    for _ in 0..if id == 0 { 1 } else { 5 } {
        sleep(Duration::from_millis(10)).await;
    }
    id
}

#[test]
fn an_ordered_set_driven_keeps_its_futures_running_while_the_consumer_works() {
    async fn consume_set<S>(set: S, driven: bool) -> Vec<u64>
    where
        S: ProgressStream<Item = u64>,
    {
        let mut seen = Vec::new();
        if driven {
            set.for_each_driven(|id| store(&mut seen, id)).await;
        } else {
            set.for_each(|id| store(&mut seen, id)).await;
        }
        seen
    }
    let in_order: Vec<u64> = (0..ITEMS).collect();
    for driven in [true, false] {
        let (seen, took) = elapsed_of(|| {
            let mut set = pinfold_buffer::FuturesOrdered::new();
            set.extend((0..ITEMS).map(head_first));
            consume_set(set, driven)
        });
        assert_eq!(seen, in_order);
        let (seen_bounded, took_bounded) = elapsed_of(|| {
            let mut set = pinfold_buffer::FuturesOrderedBounded::new(ITEMS as usize);
            (0..ITEMS).for_each(|id| set.push_back(head_first(id)));
            consume_set(set, driven)
        });
        assert_eq!(seen_bounded, in_order);
        assert_eq!(took_bounded, took);
        if driven {
            // Output 0 at 10 ms; the others finish at 50 ms, while the consumer is on item 0,
            // and then take the consumer's 30 ms each.
            assert_eq!(took, Duration::from_millis(50 + 30 * (ITEMS - 1)));
        } else {
            // Polled only while the consumer waits for an item: output 0 comes out of the poll
            // that finishes it at 10 ms, before the others take their first step's wake; they
            // start their second step at 40 ms, once item 0 is handled, and finish at 80 ms.
            assert_eq!(took, Duration::from_millis(80 + 30 * (ITEMS - 1)));
        }
    }
}

/// An output whose gauge guard goes when the consumer takes its id.
trait Taken {
    fn take_id(self) -> usize;
}

impl Taken for Counted {
    fn take_id(self) -> usize {
        self.id
    }
}

impl Taken for Result<Counted, ()> {
    fn take_id(self) -> usize {
        self.expect("no future fails").id
    }
}

/// The ordered adapters whose driving is bounded, each with or without a window.
#[derive(Debug, Clone, Copy)]
#[expect(
    clippy::enum_variant_names,
    reason = "named for the methods that make them"
)]
enum Ordered {
    OrderedBuffer,
    FastOrderedBuffer,
    TryOrderedBuffer,
}

/// The three ordered adapters, each checked alike.
const ORDERED: [Ordered; 3] = [
    Ordered::OrderedBuffer,
    Ordered::FastOrderedBuffer,
    Ordered::TryOrderedBuffer,
];

/// The shapes of buffer checked: concurrency, and window if any.
const SHAPES: [(usize, Option<usize>); 5] = [
    (2, None),
    (3, None),
    (2, Some(5)),
    (4, Some(3)),
    (3, Some(3)),
];

/// Each adapter with each shape; under Miri, each shape at least once, each adapter with a
/// window and without.
fn ordered_cases() -> Vec<(Ordered, (usize, Option<usize>))> {
    if cfg!(miri) {
        let cases = vec![
            (Ordered::OrderedBuffer, (2, None)),
            (Ordered::FastOrderedBuffer, (3, None)),
            (Ordered::TryOrderedBuffer, (2, Some(5))),
            (Ordered::OrderedBuffer, (4, Some(3))),
            (Ordered::FastOrderedBuffer, (3, Some(3))),
            (Ordered::TryOrderedBuffer, (3, None)),
        ];
        let shapes_run = |shape| cases.iter().any(|&(_, run)| run == shape);
        assert!(
            SHAPES.into_iter().all(shapes_run),
            "a shape left out under Miri"
        );
        cases
    } else {
        ORDERED
            .into_iter()
            .flat_map(|adapter| SHAPES.into_iter().map(move |shape| (adapter, shape)))
            .collect()
    }
}

/// Runs `adapter` over `source` with `concurrency` and `window`, consuming it with `consume`.
fn run_ordered<St, Fut, R>(
    adapter: Ordered,
    source: St,
    (concurrency, window): (usize, Option<usize>),
    consume: impl Consume<R>,
) -> R
where
    St: Stream<Item = Fut> + Unpin,
    Fut: Future<Output = Counted>,
{
    match adapter {
        Ordered::OrderedBuffer => {
            let buffer = source.ordered_buffer(concurrency);
            consume.run(match window {
                Some(window) => buffer.window(window),
                None => buffer,
            })
        }
        Ordered::FastOrderedBuffer => {
            let buffer = source.fast_ordered_buffer(concurrency);
            consume.run(match window {
                Some(window) => buffer.window(window),
                None => buffer,
            })
        }
        Ordered::TryOrderedBuffer => {
            let buffer = source
                .map(|fut| Ok::<_, ()>(async move { Ok::<_, ()>(fut.await) }))
                .try_ordered_buffer(concurrency);
            consume.run(match window {
                Some(window) => buffer.window(window),
                None => buffer,
            })
        }
    }
}

/// What consumes a buffer, whatever its type.
trait Consume<R> {
    fn run<B>(self, buffer: B) -> R
    where
        B: ProgressStream + Unpin,
        B::Item: Taken;
}

/// `items` futures of 1 ms each; each counts on `gauge` from its pull until its output is
/// taken.
fn one_ms_each(
    items: usize,
    gauge: &Gauge,
) -> impl Stream<Item = impl Future<Output = Counted> + use<>> + Unpin + use<> {
    let gauge = gauge.clone();
    stream::iter(0..items).map(move |id| {
        let counted = Counted::new(id, &gauge);
        async move {
            sleep(Duration::from_millis(1)).await;
            counted
        }
    })
}

/// How the consumer drives the buffer while it spends 20 ms of virtual time on each output.
#[derive(Debug, Clone, Copy)]
enum Driver {
    ForEachDriven,
    DriveWhile,
}

impl Consume<(Vec<usize>, Duration)> for Driver {
    fn run<B>(self, mut buffer: B) -> (Vec<usize>, Duration)
    where
        B: ProgressStream + Unpin,
        B::Item: Taken,
    {
        elapsed_of(|| async move {
            let mut seen = Vec::new();
            match self {
                Driver::ForEachDriven => {
                    buffer
                        .for_each_driven(|out| {
                            seen.push(out.take_id());
                            sleep(Duration::from_millis(20))
                        })
                        .await;
                }
                Driver::DriveWhile => {
                    // Driven from the start, as `for_each_driven` is: the wait in a first
                    // `next()` would not be driven yet.
                    std::future::poll_fn(|cx| {
                        let _ = Pin::new(&mut buffer).poll_progress(cx);
                        Poll::Ready(())
                    })
                    .await;
                    while let Some(out) = buffer.next().await {
                        seen.push(out.take_id());
                        buffer.drive_while(sleep(Duration::from_millis(20))).await;
                    }
                }
            }
            seen
        })
    }
}

/// Futures much faster than the consumer: while it works on an output, the buffer finishes
/// what it runs and starts more, up to its bound; held outputs never pile up beyond it, and
/// the consumer never waits for one (each output comes 20 ms after the one before).
fn a_driven_ordered_buffer_holds_no_more_than_its_bound(driver: Driver) {
    // Under Miri, 6: past every shape's bound.
    let items = if cfg!(miri) { 6 } else { 60 };
    for (adapter, shape) in ordered_cases() {
        let gauge = Gauge::default();
        let (seen, took) = run_ordered(adapter, one_ms_each(items, &gauge), shape, driver);
        let case = format!("{adapter:?} {shape:?} {driver:?}");
        assert_eq!(seen, (0..items).collect::<Vec<_>>(), "{case}");
        let bound = shape.1.unwrap_or(shape.0);
        assert!(
            gauge.max() <= bound,
            "{case}: {} running or held at once, bound {bound}",
            gauge.max()
        );
        assert_eq!(gauge.total(), items, "{case}");
        assert_eq!(took, Duration::from_millis(1 + 20 * items as u64), "{case}");
    }
}

#[test]
fn for_each_driven_holds_no_more_than_the_window_or_the_concurrency() {
    a_driven_ordered_buffer_holds_no_more_than_its_bound(Driver::ForEachDriven);
}

#[test]
fn drive_while_holds_no_more_than_the_window_or_the_concurrency() {
    a_driven_ordered_buffer_holds_no_more_than_its_bound(Driver::DriveWhile);
}

/// Takes outputs by hand, driving the buffer between every two with a few calls of
/// `poll_progress` (how many, from `seed`), and checks `gauge` against `bound` after every call.
struct ByHand {
    gauge: Gauge,
    bound: usize,
    seed: u64,
}

impl Consume<Vec<usize>> for ByHand {
    fn run<B>(self, mut buffer: B) -> Vec<usize>
    where
        B: ProgressStream + Unpin,
        B::Item: Taken,
    {
        // Far more calls than the futures need (the source's random numbers are Miri's cost).
        let calls = if cfg!(miri) { 1_000 } else { 10_000 };
        let drives = support::random(calls, 3, self.seed);
        let check = |call: &str| {
            assert!(
                self.gauge.now() <= self.bound,
                "after {call}: {} running or held, bound {}",
                self.gauge.now(),
                self.bound
            );
        };
        let mut seen = Vec::new();
        // Driven from the start: a `poll_next` before the first drive is not driven yet.
        let _ = progress(&mut buffer);
        check("the first poll_progress");
        for drives in drives {
            match support::poll_once(&mut buffer) {
                Poll::Ready(Some(out)) => seen.push(out.take_id()),
                Poll::Ready(None) => return seen,
                Poll::Pending => {}
            }
            check("poll_next");
            for _ in 0..drives {
                let _ = progress(&mut buffer);
                check("poll_progress");
            }
        }
        panic!("not ended after {calls} outputs or waits");
    }
}

#[test]
fn poll_next_mixed_with_poll_progress_holds_no_more_than_the_window_or_the_concurrency() {
    // Futures that finish at random polls, so the head is sometimes slow and sometimes
    // finished while driven; any number of drives between two outputs. Under Miri, one seed
    // and fewer cases (`ordered_cases`).
    let items = if cfg!(miri) { 20 } else { 200 };
    for seed in 1..=if cfg!(miri) { 1 } else { 10 } {
        let spins = support::random(items, 5, seed);
        for (adapter, shape) in ordered_cases() {
            let gauge = Gauge::default();
            let source = stream::iter(spins.clone().into_iter().enumerate()).map({
                let gauge = gauge.clone();
                move |(id, spins)| {
                    let counted = Counted::new(id, &gauge);
                    let spinner = support::Spinner::new(id, spins as usize).0;
                    async move {
                        spinner.await;
                        counted
                    }
                }
            });
            let bound = shape.1.unwrap_or(shape.0);
            let by_hand = ByHand {
                gauge: gauge.clone(),
                bound,
                seed,
            };
            let seen = run_ordered(adapter, source, shape, by_hand);
            assert_eq!(
                seen,
                (0..items).collect::<Vec<_>>(),
                "{adapter:?} {shape:?} seed {seed}"
            );
        }
    }
}

#[test]
fn for_each_driven_keeps_to_the_bound_while_it_waits_for_the_first_item() {
    // The head is stuck and the futures behind it are ready: an undriven `poll_next` would
    // pull the whole source while it waits; `for_each_driven` drives the buffer from its first
    // poll, so the head and two outputs held behind it fill the concurrency.
    let items = if cfg!(miri) { 10 } else { 100 };
    let (head, head_state) = support::Gate::new(0);
    let mut head = Some(head);
    let (source, counts) = support::CountingSource::new(0..items);
    let source = source.map(move |id| match id {
        0 => head.take().expect("the head is pulled once"),
        _ => support::Gate::ready(id).0,
    });
    let mut seen = Vec::new();
    let mut all = Box::pin(source.ordered_buffer(3).for_each_driven(|id| {
        seen.push(id);
        std::future::ready(())
    }));
    let mut cx = Context::from_waker(Waker::noop());
    assert_eq!(all.as_mut().poll(&mut cx), Poll::Pending);
    assert_eq!(counts.pulled(), 3);
    head_state.open();
    assert_eq!(all.as_mut().poll(&mut cx), Poll::Ready(()));
    drop(all);
    assert_eq!(seen, (0..items).collect::<Vec<_>>());
}

/// `drive_while` reaches a buffer through a box, a pinned box, a trait object or a second
/// reference, as `StreamExt::next` does.
#[test]
fn drive_while_reaches_a_buffer_behind_a_box_or_a_trait_object() {
    let source = || {
        stream::iter(0..3u64)
            .map(std::future::ready)
            .unordered_buffer(2)
    };

    let mut boxed = Box::new(source());
    let out = futures_executor::block_on(boxed.drive_while(async { 1 }));
    assert_eq!(out, 1);

    let mut object: Box<dyn ProgressStream<Item = u64> + Unpin> = Box::new(source());
    let out = futures_executor::block_on(object.drive_while(async { 2 }));
    assert_eq!(out, 2);

    let mut pinned = Box::pin(source());
    let out = futures_executor::block_on(pinned.drive_while(async { 4 }));
    assert_eq!(out, 4);
    assert_eq!(futures_executor::block_on(pinned.next()), Some(0));

    let mut buffer = source();
    let mut borrowed = &mut buffer;
    let out = futures_executor::block_on((&mut borrowed).drive_while(async { 3 }));
    assert_eq!(out, 3);
    let all: Vec<u64> = futures_executor::block_on(buffer.collect());
    assert_eq!(all.len(), 3);
}
