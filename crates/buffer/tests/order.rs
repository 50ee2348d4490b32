//! Output order, the bound on running futures, and refilling a freed slot in the same poll.

mod support;

use std::task::Poll;
use std::time::Duration;

use futures_core::Stream;
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, FobStreamExt};
use support::{CountingSource, Gate, Gauge, Spinner, drain, gates, poll_once, random};

/// Futures that each hold a `gauge` guard from the moment they are pulled from the source until
/// they finish or are dropped, so that `gauge.max()` is the most that ever ran at once.
fn gauged_sleeps(
    delays: Vec<u64>,
    gauge: &Gauge,
) -> impl Stream<Item = impl Future<Output = usize>> + Unpin {
    let gauge = gauge.clone();
    stream::iter(delays.into_iter().enumerate()).map(move |(id, millis)| {
        let guard = gauge.enter();
        async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            drop(guard);
            id
        }
    })
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn outputs_keep_input_order_under_random_delays() {
    let gauge = Gauge::default();
    let delays = random(2_000, 20, 0x5eed);
    let outputs: Vec<usize> = gauged_sleeps(delays, &gauge)
        .ordered_buffer(16)
        .collect()
        .await;
    assert_eq!(outputs, (0..2_000).collect::<Vec<_>>());
    assert_eq!(gauge.max(), 16, "at most 16 running, and 16 were");
    assert_eq!(gauge.now(), 0);
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn unordered_outputs_come_as_they_finish_under_random_delays() {
    let gauge = Gauge::default();
    let delays = random(2_000, 20, 0x5eed);
    let outputs: Vec<usize> = gauged_sleeps(delays, &gauge)
        .unordered_buffer(16)
        .collect()
        .await;
    assert_ne!(outputs, (0..2_000).collect::<Vec<_>>(), "finish order");
    let mut sorted = outputs;
    sorted.sort_unstable();
    assert_eq!(sorted, (0..2_000).collect::<Vec<_>>());
    assert_eq!(gauge.max(), 16, "at most 16 running, and 16 were");
}

/// Futures that wake themselves a random number of times, driven by a counting waker (no
/// runtime, so this runs under Miri too).
fn spinners(n: usize, gauge: &Gauge) -> impl Stream<Item = impl Future<Output = usize>> + Unpin {
    let gauge = gauge.clone();
    let spins = random(n, 6, 7);
    stream::iter(spins.into_iter().enumerate()).map(move |(id, spins)| {
        let guard = gauge.enter();
        async move {
            let id = Spinner::new(id, spins as usize).0.await;
            drop(guard);
            id
        }
    })
}

#[test]
fn outputs_keep_input_order_when_futures_wake_themselves() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let gauge = Gauge::default();
    let mut buffer = spinners(n, &gauge).ordered_buffer(8);
    assert_eq!(drain(&mut buffer), (0..n).collect::<Vec<_>>());
    assert_eq!(gauge.max(), 8);

    let gauge = Gauge::default();
    let mut buffer = spinners(n, &gauge).ordered_buffer(8).window(12);
    assert_eq!(drain(&mut buffer), (0..n).collect::<Vec<_>>());
    assert!(gauge.max() <= 8);

    let gauge = Gauge::default();
    let mut buffer = spinners(n, &gauge).fast_ordered_buffer(8);
    assert_eq!(drain(&mut buffer), (0..n).collect::<Vec<_>>());
    assert_eq!(gauge.max(), 8);
}

#[test]
fn unordered_yields_every_output_when_futures_wake_themselves() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let gauge = Gauge::default();
    let mut outputs = drain(&mut spinners(n, &gauge).unordered_buffer(8));
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(gauge.max(), 8);
}

#[test]
fn ordered_holds_early_finishers_until_the_head_is_out() {
    let (futures, states) = gates(4);
    let mut buffer = stream::iter(futures).ordered_buffer(4);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);

    states[3].open();
    states[1].open();
    assert_eq!(poll_once(&mut buffer), Poll::Pending, "the head is running");
    assert_eq!(buffer.size_hint(), (4, Some(4)));

    states[0].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(0)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut buffer), Poll::Pending, "2 is running");
    states[2].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(2)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(3)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn a_freed_slot_is_refilled_in_the_same_poll() {
    let (futures, states) = gates(5);
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.ordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(counts.pulled(), 2);

    // Future 1 finishes behind the running head: within the poll that sees it finish, the
    // next future is pulled and started.
    states[1].open();
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(counts.pulled(), 3);
    assert_eq!(states[2].polls(), 1, "future 2 started in the same poll");

    states[2].open();
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(counts.pulled(), 4);
    assert_eq!(states[3].polls(), 1, "future 3 started in the same poll");
    assert_eq!(
        states[0].polls(),
        1,
        "the head was not polled without a wake"
    );

    // The head finishes: its slot is refilled before its output is handed on.
    states[0].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(0)));
    assert_eq!(counts.pulled(), 5);
    for id in 1..=2 {
        assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(id)));
    }
    states[3].open();
    states[4].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(3)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(4)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn unordered_refills_a_freed_slot_in_the_same_poll() {
    let (futures, states) = gates(4);
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(counts.pulled(), 2);

    states[1].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(1)));
    assert_eq!(
        counts.pulled(),
        3,
        "refilled before the output was handed on"
    );
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(states[2].polls(), 1);

    for state in &states {
        state.open();
    }
    let mut rest = support::settle(&mut buffer);
    rest.sort_unstable();
    assert_eq!(rest, [0, 2, 3]);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn ready_futures_pass_straight_through() {
    let n = if cfg!(miri) { 50 } else { 5_000 };
    let futures = (0..n).map(|id| Gate::ready(id).0);
    let mut buffer = stream::iter(futures).ordered_buffer(7);
    assert_eq!(drain(&mut buffer), (0..n).collect::<Vec<_>>());

    let futures = (0..n).map(|id| Gate::ready(id).0);
    let mut outputs = drain(&mut stream::iter(futures).unordered_buffer(7));
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
}

#[test]
fn a_source_that_panics_as_a_freed_slot_is_refilled_loses_no_output() {
    // Concurrency 1: each output refills its slot in the same call, and the source panics
    // once there. The output of that call still comes (on the next call), and the buffer
    // ends. The same case as the weighted ordered queue's.
    let mut buffer = support::two_then_a_panic()
        .map(|i| async move { i })
        .ordered_buffer(1);
    let (outputs, panics) = support::poll_through_panics(&mut buffer, |_| {});
    assert_eq!(panics, 1);
    assert_eq!(outputs, [0, 1]);
}

#[test]
fn unordered_a_source_that_panics_as_a_freed_slot_is_refilled_loses_no_output() {
    // As the ordered buffer's case: the output of the call whose refill panicked still comes.
    let mut buffer = support::two_then_a_panic()
        .map(|i| async move { i })
        .unordered_buffer(1);
    let (outputs, panics) = support::poll_through_panics(&mut buffer, |buffer| {
        // The kept output is still to come: not terminated, and counted.
        assert!(!futures_core::FusedStream::is_terminated(buffer));
        assert_eq!(buffer.size_hint().0, 1);
    });
    assert_eq!(panics, 1);
    assert_eq!(outputs, [0, 1]);
    assert!(futures_core::FusedStream::is_terminated(&buffer));
}

#[test]
fn unordered_driven_after_a_refill_whose_source_panics_polls_its_running_futures() {
    // Concurrency 2: 0 (ready) and 1 (a gate) start, then 0 finishes and the source, polled
    // for the refill, panics. 0's output is kept for the next `poll_next`; meanwhile, driving
    // the buffer still polls 1, which was opened.
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let (source, gate) = support::ready_and_gate_then_a_panic(0);
    let mut buffer = source.unordered_buffer(2);
    let (waker, _) = support::counting_waker();
    assert!(catch_unwind(AssertUnwindSafe(|| support::poll_with(&mut buffer, &waker))).is_err());
    support::driving_after_a_panic_polls_the_opened_gate(&mut buffer, &gate);
}

/// An output whose `Drop` panics, also while another panic unwinds.
struct PanicsWhenDropped(u64);

impl Drop for PanicsWhenDropped {
    fn drop(&mut self) {
        panic!("output {} panics in its drop", self.0)
    }
}

/// Polls `buffer` once, as a task whose frame owns it: the buffer's first future finishes at
/// once and its output is kept while its slot is refilled, where the source panics. The
/// buffer is dropped as that panic unwinds, and the kept output's `Drop` panics too: the
/// source's panic goes on, and the process does not abort.
fn drop_while_the_source_panic_unwinds<S>(make: impl FnOnce() -> S)
where
    S: Stream + Unpin,
{
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut buffer = make();
        let _ = poll_once(&mut buffer);
    }));
    let panic = polled.expect_err("the source panics");
    let message = panic.downcast_ref::<&str>().copied().unwrap_or_default();
    assert_eq!(message, "the source fails");
}

/// A source that gives one future, then panics.
fn one_then_a_panic() -> impl Stream<Item = std::future::Ready<PanicsWhenDropped>> + Unpin {
    let mut given = false;
    stream::poll_fn(move |_| {
        assert!(!given, "the source fails");
        given = true;
        Poll::Ready(Some(std::future::ready(PanicsWhenDropped(0))))
    })
}

#[test]
fn an_ordered_buffer_dropped_as_its_source_panic_unwinds_drops_the_kept_output_quietly() {
    drop_while_the_source_panic_unwinds(|| one_then_a_panic().ordered_buffer(1));
    drop_while_the_source_panic_unwinds(|| {
        one_then_a_panic()
            .map(|future| (1, future))
            .ordered_future_queue(1)
    });
}

#[test]
fn an_unordered_buffer_dropped_as_its_source_panic_unwinds_drops_the_kept_output_quietly() {
    drop_while_the_source_panic_unwinds(|| one_then_a_panic().unordered_buffer(1));
}

/// A source that gives two futures, then panics: a weighted queue asks for the second while
/// the first runs, and for the third in the refill after the first finished.
fn two_then_a_panic() -> impl Stream<Item = std::future::Ready<PanicsWhenDropped>> + Unpin {
    let mut given = 0;
    stream::poll_fn(move |_| {
        assert!(given < 2, "the source fails");
        given += 1;
        Poll::Ready(Some(std::future::ready(PanicsWhenDropped(given))))
    })
}

#[test]
fn an_unordered_future_queue_dropped_as_its_source_panic_unwinds_drops_the_kept_output_quietly() {
    drop_while_the_source_panic_unwinds(|| {
        two_then_a_panic().map(|future| (1, future)).future_queue(1)
    });
    drop_while_the_source_panic_unwinds(|| {
        two_then_a_panic()
            .map(|future| (1, None::<&str>, future))
            .future_queue_grouped(1, [("a", 1)])
    });
}

/// The futures of an unordered buffer and of a weighted queue, and their outputs, may borrow
/// what is declared after the adapter, as those of a `Vec` may: the adapters have no `Drop`
/// of their own that would make the borrow outlive them.
#[test]
fn unordered_adapters_may_hold_borrows_of_what_is_declared_after_them() {
    let mut buffer;
    let mut queue;
    let mut grouped;
    let local = String::from("borrowed");
    buffer = stream::iter(0..3)
        .map(|_| {
            let borrowed = &local;
            async move { borrowed.as_str() }
        })
        .unordered_buffer(2);
    queue = stream::iter(0..3)
        .map(|_| {
            let borrowed = &local;
            (1, async move { borrowed.as_str() })
        })
        .future_queue(2);
    grouped = stream::iter(0..3)
        .map(|_| {
            let borrowed = &local;
            (1, Some("a"), async move { borrowed.len() })
        })
        .future_queue_grouped(2, [("a", 1)]);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some("borrowed")));
    assert_eq!(poll_once(&mut queue), Poll::Ready(Some("borrowed")));
    assert_eq!(poll_once(&mut grouped), Poll::Ready(Some(8)));
}
