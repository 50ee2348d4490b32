//! The adapters' life: construction panics, the end of the stream and after it, size hints,
//! dropping mid-stream, panicking futures, Debug, and auto traits.

mod support;

use std::future::{Future, ready};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_channel::mpsc;
use futures_core::{FusedStream, Stream};
use futures_util::{StreamExt, stream};
use pinfold_buffer::{BufferExt, FobStreamExt, OrderedBuffer, UnorderedBuffer};
use support::{
    Counted, CountingSource, Gate, Gauge, counting_waker, gates, poll_once, poll_with, settle,
};

#[test]
#[should_panic(expected = "ordered_buffer: concurrency must be greater than 0")]
fn ordered_buffer_with_concurrency_0_panics() {
    let _ = stream::iter([ready(1)]).ordered_buffer(0);
}

#[test]
#[should_panic(expected = "unordered_buffer: concurrency must be greater than 0")]
fn unordered_buffer_with_concurrency_0_panics() {
    let _ = stream::iter([ready(1)]).unordered_buffer(0);
}

#[test]
#[should_panic(expected = "fast_ordered_buffer: concurrency must be greater than 0")]
fn fast_ordered_buffer_with_concurrency_0_panics() {
    let _ = stream::iter([ready(1)]).fast_ordered_buffer(0);
}

#[test]
fn an_empty_source_ends_at_once() {
    let (source, counts) = CountingSource::new(std::iter::empty::<Gate>());
    let mut buffer = source.ordered_buffer(3);
    assert!(!buffer.is_terminated());
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
    assert_eq!(counts.polls(), 1);

    let (source, _) = CountingSource::new(std::iter::empty::<Gate>());
    let mut buffer = source.unordered_buffer(3);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
}

#[test]
fn ends_only_after_the_source_ended_and_every_output_was_yielded() {
    let (tx, rx) = mpsc::unbounded();
    let mut buffer = rx.ordered_buffer(2);
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending, "nothing yet");

    let (head, head_state) = Gate::new(0);
    let (second, second_state) = Gate::new(1);
    tx.unbounded_send(head).unwrap();
    tx.unbounded_send(second).unwrap();
    assert!(wakes.count() > 0, "the source woke the task");
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);

    second_state.open();
    drop(tx);
    assert_eq!(
        poll_with(&mut buffer, &waker),
        Poll::Pending,
        "the head runs"
    );
    assert!(!buffer.is_terminated());
    assert_eq!(
        buffer.size_hint(),
        (2, Some(2)),
        "one running, one held, the source ended"
    );

    head_state.open();
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Ready(Some(0)));
    assert!(!buffer.is_terminated());
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Ready(Some(1)));
    assert!(!buffer.is_terminated(), "terminated before yielding None");
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Ready(None));
    assert!(buffer.is_terminated());
}

#[test]
fn unordered_ends_only_after_the_source_ended_and_every_output_was_yielded() {
    let (tx, rx) = mpsc::unbounded();
    let mut buffer = rx.unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    let (gate, state) = Gate::new(7);
    tx.unbounded_send(gate).unwrap();
    drop(tx);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert!(!buffer.is_terminated());
    state.open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(7)));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
}

#[test]
fn terminated_adapters_poll_nothing() {
    // The counting source panics if it is polled after it returned None.
    let futures = (0..5).map(|id| Gate::ready(id).0);
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.ordered_buffer(2);
    assert_eq!(settle(&mut buffer), [0, 1, 2, 3, 4]);
    assert!(buffer.is_terminated());
    for _ in 0..3 {
        assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    }
    assert_eq!(counts.polls(), 6);
    assert_eq!(buffer.size_hint(), (0, Some(0)));

    let futures = (0..5).map(|id| Gate::ready(id).0);
    let (source, counts) = CountingSource::new(futures);
    let mut buffer = source.unordered_buffer(2);
    assert_eq!(settle(&mut buffer).len(), 5);
    assert!(buffer.is_terminated());
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert_eq!(counts.polls(), 6);
    assert_eq!(buffer.size_hint(), (0, Some(0)));
}

/// Futures `0..n` that finish at once when `id` is odd and wait for their gate when it is
/// even; each output is counted by `outputs` from the moment the future is pulled.
fn odd_ones_finish(
    n: usize,
    outputs: &Gauge,
) -> (
    impl Stream<Item = impl Future<Output = Counted>> + Unpin,
    Vec<std::sync::Arc<support::GateState>>,
) {
    let (futures, states) = gates(n);
    for state in states.iter().skip(1).step_by(2) {
        state.open();
    }
    let outputs = outputs.clone();
    let source = stream::iter(futures.into_iter().enumerate()).map(move |(id, gate)| {
        let output = Counted::new(id, &outputs);
        async move {
            gate.await;
            output
        }
    });
    (source, states)
}

#[test]
fn dropping_mid_stream_drops_running_futures_and_held_outputs() {
    let outputs = Gauge::default();
    let (source, states) = odd_ones_finish(6, &outputs);
    let mut buffer = source.ordered_buffer(3);
    assert!(settle(&mut buffer).is_empty(), "the head waits");
    // Running: 0, 2, 4. Held: 1, 3. Never pulled: 5.
    assert_eq!(outputs.total(), 5);
    assert_eq!(outputs.now(), 5);
    let dropped: Vec<usize> = states.iter().map(|state| state.drops()).collect();
    assert_eq!(
        dropped,
        [0, 1, 0, 1, 0, 0],
        "finished futures are dropped at once"
    );

    drop(buffer);
    assert_eq!(
        outputs.now(),
        0,
        "every held output and running future was dropped"
    );
    let dropped: Vec<usize> = states.iter().map(|state| state.drops()).collect();
    assert_eq!(dropped, [1; 6], "and the source with gate 5 in it");
}

#[test]
fn dropping_an_unordered_buffer_mid_stream_drops_running_futures() {
    let outputs = Gauge::default();
    let (source, states) = odd_ones_finish(6, &outputs);
    let mut buffer = source.unordered_buffer(3);
    let yielded: Vec<usize> = settle(&mut buffer).iter().map(|out| out.id).collect();
    assert_eq!(yielded, [1, 3]);
    assert_eq!(outputs.now(), 3, "the outputs of the three running futures");

    drop(buffer);
    assert_eq!(outputs.now(), 0);
    let dropped: Vec<usize> = states.iter().map(|state| state.drops()).collect();
    assert_eq!(dropped, [1; 6]);
}

#[test]
fn size_hint_counts_held_and_running_outputs_and_the_source() {
    let (futures, states) = gates(6);
    let mut buffer = stream::iter(futures).ordered_buffer(2);
    assert_eq!(buffer.size_hint(), (6, Some(6)));
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(
        buffer.size_hint(),
        (6, Some(6)),
        "2 running, 4 in the source"
    );
    states[1].open();
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(
        buffer.size_hint(),
        (6, Some(6)),
        "1 held, 2 running, 3 in the source"
    );
    states[0].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(0)));
    assert_eq!(buffer.size_hint(), (5, Some(5)));

    let (futures, states) = gates(4);
    let mut buffer = stream::iter(futures).unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(buffer.size_hint(), (4, Some(4)));
    states[1].open();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(1)));
    assert_eq!(buffer.size_hint(), (3, Some(3)));
}

#[test]
fn size_hint_has_no_upper_bound_when_the_source_s_has_none() {
    let mut gates = (0..3).map(|id| Gate::new(id).0);
    let mut buffer = stream::poll_fn(move |_| Poll::Ready(gates.next())).ordered_buffer(2);
    assert_eq!(buffer.size_hint(), (0, None));
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(buffer.size_hint(), (2, None), "2 running");

    // Endless: the lower bound saturates.
    let mut buffer = stream::repeat_with(|| Gate::new(0).0).unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(buffer.size_hint(), (usize::MAX, None));
}

/// A future that is ready at once, and panics in its poll or its drop if told to.
struct Faulty {
    id: usize,
    panics_in_poll: bool,
    panics_in_drop: bool,
}

impl Future for Faulty {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<usize> {
        assert!(
            !self.panics_in_poll,
            "future {} panics in its poll",
            self.id
        );
        Poll::Ready(self.id)
    }
}

impl Drop for Faulty {
    fn drop(&mut self) {
        if self.panics_in_drop && !std::thread::panicking() {
            panic!("future {} panics in its drop", self.id);
        }
    }
}

/// Drives `stream` to its end, catching panics; the outputs and how many panics there were.
fn drain_through_panics<S: Stream + Unpin>(stream: &mut S) -> (Vec<S::Item>, usize) {
    let (waker, wakes) = counting_waker();
    let (mut outputs, mut panics) = (Vec::new(), 0);
    loop {
        let before = wakes.count();
        match catch_unwind(AssertUnwindSafe(|| poll_with(stream, &waker))) {
            Ok(Poll::Ready(Some(out))) => outputs.push(out),
            Ok(Poll::Ready(None)) => return (outputs, panics),
            Ok(Poll::Pending) => assert!(wakes.count() > before, "Pending with no wake"),
            Err(_) => panics += 1,
        }
    }
}

fn faulty(n: usize, in_poll: usize, in_drop: usize) -> impl Stream<Item = Faulty> + Unpin {
    stream::iter((0..n).map(move |id| Faulty {
        id,
        panics_in_poll: id == in_poll,
        panics_in_drop: id == in_drop,
    }))
}

#[test]
fn a_panicking_future_is_skipped_and_the_stream_goes_on() {
    let (outputs, panics) = drain_through_panics(&mut faulty(8, 2, 5).ordered_buffer(3));
    assert_eq!(outputs, [0, 1, 3, 4, 6, 7]);
    assert_eq!(panics, 2);

    let (mut outputs, panics) = drain_through_panics(&mut faulty(8, 2, 5).unordered_buffer(3));
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 1, 3, 4, 6, 7]);
    assert_eq!(panics, 2);
}

#[test]
fn debug_shows_the_state() {
    let mut buffer = stream::iter(vec![ready(1), ready(2)])
        .ordered_buffer(2)
        .window(4);
    let debug = format!("{buffer:?}");
    assert!(debug.starts_with("OrderedBuffer { source: Iter"), "{debug}");
    assert!(
        debug.contains("running: 0, held: 0, concurrency: 2, window: Some(4)"),
        "{debug}"
    );
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(1)));

    let buffer = stream::iter(vec![ready(1)]).unordered_buffer(3);
    let debug = format!("{buffer:?}");
    assert!(
        debug.starts_with("UnorderedBuffer { source: Iter"),
        "{debug}"
    );
    assert!(debug.contains("concurrency: 3"), "{debug}");
}

#[test]
fn adapters_are_send_and_unpin_whatever_the_futures() {
    fn send_and_unpin<T: Send + Unpin>(_: &T) {}
    // Async blocks are `!Unpin`; the adapters pin them in their own storage.
    let source = || stream::iter((0..3).map(|id| async move { id }));
    let ordered: OrderedBuffer<_> = source().ordered_buffer(2);
    send_and_unpin(&ordered);
    let unordered: UnorderedBuffer<_> = source().unordered_buffer(2);
    send_and_unpin(&unordered);
}

#[test]
fn get_ref_and_into_inner_give_the_source() {
    let mut buffer = stream::iter(vec![ready(1), ready(2), ready(3)]).ordered_buffer(1);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(Some(1)));
    // Future 2 was pulled to refill the slot future 1 left.
    assert_eq!(buffer.get_ref().size_hint(), (1, Some(1)));
    assert_eq!(buffer.get_mut().size_hint(), (1, Some(1)));
    assert_eq!(settle(&mut buffer.into_inner()).len(), 1);
}

/// Futures that keep a `&mut` into themselves while they wait (`read(&mut buf).await`) are left
/// alone by both buffers' bookkeeping between their polls (Miri checks the borrows survive).
#[test]
fn futures_borrowing_themselves_while_they_wait_finish() {
    use pinfold_testkit::future::{Gate, borrows_itself};
    // Gates for each buffer's futures (a gate wakes one waiter).
    let gates: Vec<[Gate; 2]> = (0..3).map(|_| Default::default()).collect();
    let futures = |buffer: usize| {
        futures_util::stream::iter(
            gates
                .iter()
                .enumerate()
                .map(move |(n, gate)| borrows_itself(gate[buffer].clone(), n as u8)),
        )
    };
    let mut ordered = futures(0).ordered_buffer(3);
    let mut unordered = futures(1).unordered_buffer(3);
    assert!(pinfold_testkit::stream::poll_once(&mut ordered).is_pending());
    assert!(pinfold_testkit::stream::poll_once(&mut unordered).is_pending());
    let (mut in_order, mut in_time) = (Vec::new(), Vec::new());
    for gate in gates.iter().rev() {
        gate.iter().for_each(Gate::open);
        in_order.extend(pinfold_testkit::stream::settle(&mut ordered));
        in_time.extend(pinfold_testkit::stream::settle(&mut unordered));
    }
    assert_eq!(in_order, [0, 1, 2]);
    assert_eq!(in_time, [2, 1, 0]);
}
