//! `TryBufferExt`: the buffers over a fallible source of fallible futures. An `Err`, from a
//! future or from the source, is an item like any other and the stream goes on; in ordered
//! mode a source error comes out in its input position (futures-util's `try_buffered` yields
//! it as soon as it is pulled). The concurrency and the window bound what runs and what is
//! held, errors included; the accessors, the end of the stream and the construction panics.
//! The behaviour cases of futures-util's and futures-buffered's try buffers are ported at the
//! end, each naming where it came from.

mod support;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures_channel::{mpsc, oneshot};
use futures_core::{FusedStream, Stream};
use futures_util::future::Map;
use futures_util::{FutureExt, StreamExt, TryFutureExt, stream};
use pinfold_buffer::TryBufferExt;
use pinfold_testkit::future::block_on;
use support::{
    Counted, CountingSource, Gate, GateState, Gauge, Spinner, counting_waker, drain, poll_once,
    poll_with, random, settle,
};

/// Which input failed, and where: the source gave an `Err` item, or a future gave an `Err`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    Source(usize),
    Future(usize),
}

/// What the buffers yield: the id of a future that succeeded, or a failure.
type Outcome = Result<usize, Fail>;

/// What an input of the source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    /// A future that succeeds with its id.
    Succeeds,
    /// A future that fails with `Fail::Future(id)`.
    Fails,
    /// An `Err(Fail::Source(id))` item of the source.
    SourceError,
}

impl Input {
    /// The item input `id` gives.
    fn outcome(self, id: usize) -> Outcome {
        match self {
            Self::Succeeds => Ok(id),
            Self::Fails => Err(Fail::Future(id)),
            Self::SourceError => Err(Fail::Source(id)),
        }
    }
}

/// What the ordered buffer yields for `inputs`: each input's outcome, in input order.
fn outcomes(inputs: &[Input]) -> Vec<Outcome> {
    inputs
        .iter()
        .enumerate()
        .map(|(id, input)| input.outcome(id))
        .collect()
}

/// `n` inputs, the same for the same seed: 3 in 5 succeed, 1 in 5 fails, 1 in 5 is a source
/// error.
fn random_inputs(n: usize, seed: u64) -> Vec<Input> {
    random(n, 4, seed)
        .into_iter()
        .map(|kind| match kind {
            0..=2 => Input::Succeeds,
            3 => Input::Fails,
            _ => Input::SourceError,
        })
        .collect()
}

/// A gate whose output is made an [`Outcome`].
type FallibleGate = Map<Gate, fn(usize) -> Outcome>;

fn fallible(gate: Gate, fails: bool) -> FallibleGate {
    let outcome: fn(usize) -> Outcome = if fails {
        |id| Err(Fail::Future(id))
    } else {
        Ok
    };
    gate.map(outcome)
}

/// The source items for `inputs`, futures being closed gates (open if `open`), and the states
/// of the gates by input id (a source error's gate is never pulled).
fn gated(inputs: &[Input], open: bool) -> (Vec<Result<FallibleGate, Fail>>, Vec<Arc<GateState>>) {
    inputs
        .iter()
        .enumerate()
        .map(|(id, &input)| {
            let (gate, state) = if open { Gate::ready(id) } else { Gate::new(id) };
            let item = match input {
                Input::SourceError => Err(Fail::Source(id)),
                _ => Ok(fallible(gate, input == Input::Fails)),
            };
            (item, state)
        })
        .unzip()
}

/// The source items for `inputs`, futures that wake themselves `spins[id]` times and hold a
/// `gauge` guard from the moment they are pulled until they finish or are dropped.
fn spinning(
    inputs: Vec<Input>,
    gauge: &Gauge,
) -> impl Stream<Item = Result<impl Future<Output = Outcome>, Fail>> + Unpin {
    let gauge = gauge.clone();
    let spins = random(inputs.len(), 5, 0xab);
    stream::iter(inputs.into_iter().zip(spins).enumerate()).map(move |(id, (input, spins))| {
        if input == Input::SourceError {
            return Err(Fail::Source(id));
        }
        let guard = gauge.enter();
        Ok(async move {
            Spinner::new(id, spins as usize).0.await;
            drop(guard);
            input.outcome(id)
        })
    })
}

fn sorted(mut items: Vec<Outcome>) -> Vec<Outcome> {
    items.sort_unstable_by_key(|item| match *item {
        Ok(id) | Err(Fail::Future(id) | Fail::Source(id)) => id,
    });
    items
}

#[test]
fn ordered_future_errors_come_out_in_their_place_and_the_stream_goes_on() {
    use Input::{Fails, Succeeds};
    let inputs = [Succeeds, Fails, Succeeds, Fails, Succeeds];
    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_ordered_buffer(5);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    // Last first: nothing comes out before the head.
    for state in states[1..].iter().rev() {
        state.open();
        assert_eq!(settle(&mut buffer), []);
    }
    states[0].open();
    assert_eq!(settle(&mut buffer), outcomes(&inputs));
    assert!(buffer.is_terminated());
}

#[test]
fn ordered_source_errors_come_out_in_their_input_position() {
    use Input::{SourceError, Succeeds};
    let inputs = [Succeeds, SourceError, Succeeds, SourceError];
    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_ordered_buffer(4);
    // futures-util's `try_buffered` would yield `Err(Source(1))` here, ahead of future 0.
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    states[2].open();
    assert_eq!(settle(&mut buffer), [], "the head runs");
    states[0].open();
    assert_eq!(settle(&mut buffer), outcomes(&inputs));
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn ordered_source_error_at_the_head_comes_out_at_once() {
    use Input::{SourceError, Succeeds};
    let inputs = [SourceError, SourceError, Succeeds, SourceError];
    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_ordered_buffer(2);
    assert_eq!(
        settle(&mut buffer),
        [Err(Fail::Source(0)), Err(Fail::Source(1))]
    );
    states[2].open();
    assert_eq!(settle(&mut buffer), [Ok(2), Err(Fail::Source(3))]);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn unordered_errors_come_out_as_they_happen_and_the_stream_goes_on() {
    use Input::{Fails, SourceError, Succeeds};
    let inputs = [Succeeds, SourceError, Fails, Succeeds];
    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_unordered_buffer(4);
    assert_eq!(settle(&mut buffer), [Err(Fail::Source(1))]);
    states[2].open();
    assert_eq!(settle(&mut buffer), [Err(Fail::Future(2))]);
    states[3].open();
    assert_eq!(settle(&mut buffer), [Ok(3)]);
    states[0].open();
    assert_eq!(settle(&mut buffer), [Ok(0)]);
    assert!(buffer.is_terminated());
}

#[test]
fn a_source_error_gives_its_slot_to_the_next_future_in_the_same_poll() {
    use Input::{SourceError, Succeeds};
    let inputs = [Succeeds, SourceError, Succeeds, Succeeds];

    let (items, states) = gated(&inputs, false);
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_ordered_buffer(2);
    let (waker, wakes) = counting_waker();
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(counts.pulled(), 3, "the error's slot was refilled");
    // The poll had polled as many as it started with: future 2 waits for the next one.
    assert_eq!(wakes.count(), 1, "the task was woken to start future 2");
    assert_eq!(poll_with(&mut buffer, &waker), Poll::Pending);
    assert_eq!(states[2].polls(), 1, "future 2 started");
    assert_eq!(counts.pulled(), 3, "two futures run at most");

    let (items, states) = gated(&inputs, false);
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_unordered_buffer(2);
    assert_eq!(
        poll_once(&mut buffer),
        Poll::Ready(Some(Err(Fail::Source(1))))
    );
    assert_eq!(
        counts.pulled(),
        3,
        "refilled before the error was handed on"
    );
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(states[2].polls(), 1, "future 2 started");
    assert_eq!(counts.pulled(), 3, "two futures run at most");
}

#[test]
fn ordered_keeps_input_order_with_errors_when_futures_wake_themselves() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let inputs = random_inputs(n, 0x5eed);
    let gauge = Gauge::default();
    let mut buffer = spinning(inputs.clone(), &gauge).try_ordered_buffer(8);
    assert_eq!(drain(&mut buffer), outcomes(&inputs));
    assert_eq!(gauge.max(), 8, "at most 8 futures running, and 8 were");
    assert_eq!(gauge.now(), 0);
    let futures = inputs
        .iter()
        .filter(|&&input| input != Input::SourceError)
        .count();
    assert_eq!(gauge.total(), futures);
}

#[test]
fn unordered_yields_every_item_once_with_errors_when_futures_wake_themselves() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let inputs = random_inputs(n, 0xfeed);
    let gauge = Gauge::default();
    let mut buffer = spinning(inputs.clone(), &gauge).try_unordered_buffer(8);
    let items = drain(&mut buffer);
    assert_ne!(items, outcomes(&inputs), "finish order, not input order");
    assert_eq!(sorted(items), outcomes(&inputs));
    assert_eq!(gauge.max(), 8, "at most 8 futures running, and 8 were");
    assert_eq!(gauge.now(), 0);
}

/// Futures that each hold a `gauge` guard from the moment they are pulled from the source
/// until they finish, after `delays[id]` milliseconds of virtual time.
fn sleeping(
    inputs: Vec<Input>,
    delays: Vec<u64>,
    gauge: &Gauge,
) -> impl Stream<Item = Result<impl Future<Output = Outcome>, Fail>> + Unpin {
    let gauge = gauge.clone();
    stream::iter(inputs.into_iter().zip(delays).enumerate()).map(move |(id, (input, millis))| {
        if input == Input::SourceError {
            return Err(Fail::Source(id));
        }
        let guard = gauge.enter();
        Ok(async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            drop(guard);
            input.outcome(id)
        })
    })
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn ordered_keeps_input_order_with_errors_under_random_delays() {
    let inputs = random_inputs(2_000, 1);
    let gauge = Gauge::default();
    let items: Vec<Outcome> = sleeping(inputs.clone(), random(2_000, 20, 2), &gauge)
        .try_ordered_buffer(16)
        .collect()
        .await;
    assert_eq!(items, outcomes(&inputs));
    assert_eq!(gauge.max(), 16);
}

#[tokio::test(start_paused = true)]
#[cfg_attr(miri, ignore)]
async fn unordered_yields_every_item_once_with_errors_under_random_delays() {
    let inputs = random_inputs(2_000, 3);
    let gauge = Gauge::default();
    let items: Vec<Outcome> = sleeping(inputs.clone(), random(2_000, 20, 4), &gauge)
        .try_unordered_buffer(16)
        .collect()
        .await;
    assert_eq!(sorted(items), outcomes(&inputs));
    assert_eq!(gauge.max(), 16);
}

#[test]
fn running_plus_held_never_exceeds_the_window_errors_included() {
    const WINDOW: usize = 6;
    let n = if cfg!(miri) { 80 } else { 2_000 };
    // Every 10th future is slow to finish, so items pile up behind it.
    let inputs = random_inputs(n, 9);
    let pulled = Arc::new(AtomicUsize::new(0));
    let yielded = Arc::new(AtomicUsize::new(0));
    let most_outstanding = Arc::new(AtomicUsize::new(0));
    let gauge = Gauge::default();
    let source = {
        let (pulled, yielded) = (pulled.clone(), yielded.clone());
        let most_outstanding = most_outstanding.clone();
        let gauge = gauge.clone();
        let mut items = inputs.clone().into_iter().enumerate();
        stream::poll_fn(move |_| {
            // Running plus held is what was pulled and not yet yielded.
            let outstanding = pulled.load(Ordering::SeqCst) - yielded.load(Ordering::SeqCst);
            assert!(outstanding < WINDOW, "source polled with a full window");
            let Some((id, input)) = items.next() else {
                return Poll::Ready(None);
            };
            pulled.fetch_add(1, Ordering::SeqCst);
            most_outstanding.fetch_max(outstanding + 1, Ordering::SeqCst);
            if input == Input::SourceError {
                return Poll::Ready(Some(Err(Fail::Source(id))));
            }
            let guard = gauge.enter();
            let spins = if id % 10 == 0 { 20 } else { id % 3 };
            Poll::Ready(Some(Ok(async move {
                Spinner::new(id, spins).0.await;
                drop(guard);
                input.outcome(id)
            })))
        })
    };
    let mut buffer = source.try_ordered_buffer(3).window(WINDOW);
    let (waker, wakes) = counting_waker();
    let mut items = Vec::new();
    loop {
        let before = wakes.count();
        match poll_with(&mut buffer, &waker) {
            Poll::Ready(Some(item)) => {
                yielded.fetch_add(1, Ordering::SeqCst);
                items.push(item);
            }
            Poll::Ready(None) => break,
            Poll::Pending => assert!(wakes.count() > before, "Pending with no wake"),
        }
    }
    assert_eq!(items, outcomes(&inputs));
    assert_eq!(
        most_outstanding.load(Ordering::SeqCst),
        WINDOW,
        "the window fills behind a slow head"
    );
    assert!(gauge.max() <= 3, "at most 3 running");
    assert_eq!(pulled.load(Ordering::SeqCst), n);
}

#[test]
fn a_stuck_head_with_a_window_stops_the_source_errors_included() {
    use Input::{Fails, SourceError, Succeeds};
    let inputs = [
        Succeeds,
        SourceError,
        Fails,
        Succeeds,
        SourceError,
        Succeeds,
        Succeeds,
    ];
    let (mut items, _) = gated(&inputs, true);
    // The head never opens on its own; everything behind it is ready at once.
    let (head, head_state) = Gate::new(0);
    items[0] = Ok(fallible(head, false));
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_ordered_buffer(2).window(4);
    assert_eq!(settle(&mut buffer), []);
    assert_eq!(
        counts.pulled(),
        4,
        "the window holds 4 items, errors included"
    );
    assert_eq!(buffer.size_hint(), (7, Some(7)));
    head_state.open();
    assert_eq!(settle(&mut buffer), outcomes(&inputs));
    assert_eq!(counts.pulled(), 7);
}

#[test]
fn a_window_smaller_than_the_concurrency_lowers_it() {
    let inputs = [Input::Succeeds; 6];
    let (items, states) = gated(&inputs, false);
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_ordered_buffer(5).window(2);
    assert_eq!(settle(&mut buffer), []);
    assert_eq!(counts.pulled(), 2);
    for state in &states {
        state.open();
    }
    assert_eq!(settle(&mut buffer), outcomes(&inputs));
}

#[test]
fn dropping_mid_stream_drops_running_futures_and_held_items_once() {
    let outputs = Gauge::default();
    let mut gates = Vec::new();
    let mut items = Vec::new();
    for id in 0..6 {
        let (gate, state) = if id == 0 {
            Gate::new(id)
        } else {
            Gate::ready(id)
        };
        let counted = Counted::new(id, &outputs);
        // Odd ones fail; each outcome carries a counted value.
        let fut = gate.map(move |id| {
            if id % 2 == 1 {
                Err(counted)
            } else {
                Ok(counted)
            }
        });
        items.push(Ok::<_, Counted>(fut));
        gates.push(state);
    }
    let mut buffer = stream::iter(items).try_ordered_buffer(3);
    assert_eq!(settle(&mut buffer).len(), 0, "the head runs");
    assert_eq!(outputs.now(), 6, "five held, one running");
    drop(buffer);
    assert_eq!(outputs.now(), 0);
    assert!(gates.iter().all(|state| state.drops() == 1));
}

#[test]
fn terminated_buffers_yield_none_and_poll_nothing() {
    let inputs = [Input::Succeeds, Input::SourceError, Input::Fails];
    let (items, _) = gated(&inputs, true);
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_ordered_buffer(2);
    assert!(!buffer.is_terminated());
    assert_eq!(settle(&mut buffer), outcomes(&inputs));
    assert!(buffer.is_terminated());
    let polls = counts.polls();
    for _ in 0..3 {
        assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    }
    assert_eq!(
        counts.polls(),
        polls,
        "the source is not polled after its end"
    );
    assert_eq!(buffer.size_hint(), (0, Some(0)));

    let (items, _) = gated(&inputs, true);
    let (source, counts) = CountingSource::new(items);
    let mut buffer = source.try_unordered_buffer(2);
    assert!(!buffer.is_terminated());
    assert_eq!(sorted(settle(&mut buffer)), outcomes(&inputs));
    assert!(buffer.is_terminated());
    let polls = counts.polls();
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert_eq!(counts.polls(), polls);
}

#[test]
fn an_empty_source_ends_at_once() {
    let (items, _) = gated(&[], false);
    let mut buffer = stream::iter(items).try_ordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
    let (items, _) = gated(&[], false);
    let mut buffer = stream::iter(items).try_unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
}

#[test]
fn get_ref_get_mut_and_into_inner_give_the_source() {
    let inputs = [Input::Succeeds; 4];

    let (items, _) = gated(&inputs, true);
    let mut buffer = stream::iter(items).try_ordered_buffer(2);
    assert_eq!(buffer.get_ref().size_hint(), (4, Some(4)));
    // An item taken from the source directly is skipped.
    assert!(matches!(
        poll_once(buffer.get_mut()),
        Poll::Ready(Some(Ok(_)))
    ));
    assert_eq!(buffer.get_mut().size_hint(), (3, Some(3)));
    assert_eq!(settle(&mut buffer), [Ok(1), Ok(2), Ok(3)]);

    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_ordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    let mut source = buffer.into_inner();
    assert!(
        states[..2].iter().all(|state| state.drops() == 1),
        "the running futures were dropped"
    );
    assert_eq!(
        source.size_hint(),
        (2, Some(2)),
        "the source holds the rest"
    );
    assert!(matches!(poll_once(&mut source), Poll::Ready(Some(Ok(_)))));

    let (items, states) = gated(&inputs, false);
    let mut buffer = stream::iter(items).try_unordered_buffer(3);
    assert_eq!(buffer.get_ref().size_hint(), (4, Some(4)));
    assert!(matches!(
        poll_once(buffer.get_mut()),
        Poll::Ready(Some(Ok(_)))
    ));
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    let source = buffer.into_inner();
    assert_eq!(source.size_hint(), (0, Some(0)));
    assert!(states.iter().all(|state| state.drops() == 1));
}

#[test]
fn get_pin_mut_gives_the_source() {
    let (items, _) = gated(&[Input::Succeeds; 3], true);
    let mut buffer = Box::pin(stream::iter(items).try_unordered_buffer(2));
    assert_eq!(buffer.as_mut().get_pin_mut().size_hint(), (3, Some(3)));
    let (items, _) = gated(&[Input::Succeeds; 3], true);
    let mut buffer = Box::pin(stream::iter(items).try_ordered_buffer(2));
    assert_eq!(buffer.as_mut().get_pin_mut().size_hint(), (3, Some(3)));
}

#[test]
#[should_panic(expected = "try_ordered_buffer: concurrency must be greater than 0")]
fn try_ordered_buffer_with_concurrency_0_panics() {
    let (items, _) = gated(&[Input::Succeeds], true);
    let _ = stream::iter(items).try_ordered_buffer(0);
}

#[test]
#[should_panic(expected = "try_unordered_buffer: concurrency must be greater than 0")]
fn try_unordered_buffer_with_concurrency_0_panics() {
    let (items, _) = gated(&[Input::Succeeds], true);
    let _ = stream::iter(items).try_unordered_buffer(0);
}

#[test]
#[should_panic(expected = "try_ordered_buffer: window must be greater than 0")]
fn window_0_panics() {
    let (items, _) = gated(&[Input::Succeeds], true);
    let _ = stream::iter(items).try_ordered_buffer(2).window(0);
}

/// futures-util, the first example of `TryStreamExt::try_buffered` ("Results are returned in
/// the order of addition").
#[test]
fn try_buffered_results_in_the_order_of_addition() {
    let (send_one, recv_one) = oneshot::channel::<i32>();
    let (send_two, recv_two) = oneshot::channel::<i32>();
    let mut buffered = stream::iter(vec![Ok(recv_one), Ok(recv_two)]).try_ordered_buffer(10);
    assert_eq!(poll_once(&mut buffered), Poll::Pending);
    send_two.send(2).unwrap();
    assert_eq!(poll_once(&mut buffered), Poll::Pending);
    send_one.send(1).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(1)));
    assert_eq!(block_on(buffered.next()), Some(Ok(2)));
    assert_eq!(block_on(buffered.next()), None);
}

/// futures-util, the first example of `TryStreamExt::try_buffer_unordered` ("Results are
/// returned in the order of completion").
#[test]
fn try_buffer_unordered_results_in_the_order_of_completion() {
    let (send_one, recv_one) = oneshot::channel::<i32>();
    let (send_two, recv_two) = oneshot::channel::<i32>();
    let mut buffered = stream::iter(vec![Ok(recv_one), Ok(recv_two)]).try_unordered_buffer(10);
    send_two.send(2).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(2)));
    send_one.send(1).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(1)));
    assert_eq!(block_on(buffered.next()), None);
}

async fn value(value: i32) -> Result<i32, &'static str> {
    Ok(value)
}

/// futures-util, the second example of `TryStreamExt::try_buffered` ("Errors from the
/// underlying stream itself are propagated"), carried on: after the error the stream goes on,
/// and ends when the source does.
#[test]
fn try_buffered_source_errors_are_propagated() {
    let (sink, stream_of_futures) = mpsc::unbounded();
    let mut buffered = stream_of_futures.try_ordered_buffer(10);
    sink.unbounded_send(Ok(value(7))).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(7)));
    sink.unbounded_send(Err("error in the stream")).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Err("error in the stream")));
    sink.unbounded_send(Ok(value(8))).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(8)));
    drop(sink);
    assert_eq!(block_on(buffered.next()), None);
}

/// futures-util, the second example of `TryStreamExt::try_buffer_unordered`, carried on as
/// [`try_buffered_source_errors_are_propagated`].
#[test]
fn try_buffer_unordered_source_errors_are_propagated() {
    let (sink, stream_of_futures) = mpsc::unbounded();
    let mut buffered = stream_of_futures.try_unordered_buffer(10);
    sink.unbounded_send(Ok(value(7))).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(7)));
    sink.unbounded_send(Err("error in the stream")).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Err("error in the stream")));
    sink.unbounded_send(Ok(value(8))).unwrap();
    assert_eq!(block_on(buffered.next()), Some(Ok(8)));
    drop(sink);
    assert_eq!(block_on(buffered.next()), None);
}

/// A canceled receiver's output, as futures-buffered's tests map it.
fn canceled(_: oneshot::Canceled) -> Result<i32, i32> {
    Ok(0)
}

/// futures-buffered, `src/try_buffered.rs`, `buffered_ordered`, with the difference pinfold
/// documents: the source's `Err(0)`, pulled second, comes out second, not first.
#[test]
fn futures_buffered_buffered_ordered() {
    let (send_one, recv_one) = oneshot::channel();
    let (send_two, recv_two) = oneshot::channel();
    let mut buffered = stream::iter(vec![
        Ok(recv_one.unwrap_or_else(canceled)),
        Err(0),
        Ok(recv_two.unwrap_or_else(canceled)),
    ])
    .try_ordered_buffer(10);

    assert_eq!(buffered.size_hint(), (3, Some(3)));
    // futures-buffered yields `Err(0)` here; it waits for the first future instead.
    assert_eq!(poll_once(&mut buffered), Poll::Pending);
    send_two.send(Ok(2)).unwrap();
    assert_eq!(poll_once(&mut buffered), Poll::Pending);
    send_one.send(Err(1)).unwrap();
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Err(1))));
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Err(0))));
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Ok(2))));
    assert_eq!(poll_once(&mut buffered), Poll::Ready(None));
}

/// futures-buffered, `src/try_buffered.rs`, `buffered_unordered`.
#[test]
fn futures_buffered_buffered_unordered() {
    let (send_one, recv_one) = oneshot::channel();
    let (send_two, recv_two) = oneshot::channel();
    let mut buffered = stream::iter(vec![
        Ok(recv_one.unwrap_or_else(canceled)),
        Err(0),
        Ok(recv_two.unwrap_or_else(canceled)),
    ])
    .try_unordered_buffer(10);

    assert_eq!(buffered.size_hint(), (3, Some(3)));
    // The source's error upfront.
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Err(0))));
    assert_eq!(poll_once(&mut buffered), Poll::Pending);
    // In any order.
    send_two.send(Ok(2)).unwrap();
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Ok(2))));
    send_one.send(Ok(1)).unwrap();
    assert_eq!(poll_once(&mut buffered), Poll::Ready(Some(Ok(1))));
    assert_eq!(poll_once(&mut buffered), Poll::Ready(None));
}

/// The try buffers are `Debug` once a limit steers them, as the ordered and unordered buffers
/// are: a struct that holds one derives `Debug`.
#[test]
fn steered_try_buffers_are_debug() {
    let source = || stream::iter([Ok::<_, ()>(std::future::ready(Ok::<u8, ()>(1)))]);
    let ordered = source()
        .try_ordered_buffer(2)
        .limit(pinfold_buffer::Limit::new(1));
    let unordered = source()
        .try_unordered_buffer(2)
        .limit(pinfold_buffer::Limit::new(1));
    assert!(format!("{ordered:?}").starts_with("TryOrderedBuffer"));
    assert!(format!("{unordered:?}").starts_with("TryUnorderedBuffer"));
}
