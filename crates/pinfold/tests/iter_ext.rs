//! `IterExt` on iterators of futures (`join_all`, `try_join_all`, `ordered_buffer`,
//! `unordered_buffer`) and `iter_stream`: outputs and their order, the buffers pulling the
//! iterator lazily (a future is made only when fewer than `concurrency` run), the end of the
//! stream, and the panics of a concurrency of 0.

use std::cell::{Cell, RefCell};
use std::future::ready;
use std::iter::FusedIterator;
use std::marker::PhantomPinned;
use std::sync::Arc;
use std::task::Poll;

use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use pinfold::{BufferExt, IterExt, iter_stream};
use pinfold_testkit::future::{self, block_on};
use pinfold_testkit::probe::{ProbeState, Spinner, probes};
use pinfold_testkit::rng::XorShift;
use pinfold_testkit::stream::{drain, poll_once, settle};
use pinfold_testkit::tracked::{Counts, Tracked};

/// The futures an iterator made, each tracked, and the most that ever ran at once.
#[derive(Default)]
struct Made {
    futures: RefCell<Vec<Arc<Counts>>>,
    most_running: Cell<usize>,
}

impl Made {
    /// How many of the futures made have neither finished nor been dropped.
    fn running(&self) -> usize {
        self.futures
            .borrow()
            .iter()
            .filter(|counts| !counts.ended() && counts.drops() == 0)
            .count()
    }

    fn count(&self) -> usize {
        self.futures.borrow().len()
    }
}

/// `n` futures with ids `0..n` that wake themselves a few times and give their id, made
/// lazily: making one asserts that fewer than `concurrency` of those made before run.
fn spinners(n: usize, concurrency: usize, made: &Made) -> impl Iterator<Item = Tracked<Spinner>> {
    let mut rng = XorShift::new(0x5eed);
    (0..n).map(move |id| {
        let running = made.running();
        assert!(
            running < concurrency,
            "future {id} made while {running} futures run (concurrency {concurrency})"
        );
        made.most_running
            .set(made.most_running.get().max(running + 1));
        let (tracked, counts) = Tracked::new(id, Spinner::new(id, rng.below(6)).0);
        made.futures.borrow_mut().push(counts);
        tracked
    })
}

/// How many of the probes of `states` were dropped (a buffer drops a probe when it finishes).
fn dropped(states: &[Arc<ProbeState>]) -> usize {
    states.iter().filter(|state| state.drops() > 0).count()
}

#[test]
fn join_all_gives_every_output_in_input_order() {
    let n = if cfg!(miri) { 50 } else { 1_000 };
    let outputs = block_on((0..n).map(|id| Spinner::new(id, id % 4).0).join_all());
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());

    // Any `IntoIterator` of futures: an array, a `Vec`, an empty one.
    assert_eq!(block_on([ready(1), ready(2)].join_all()), [1, 2]);
    assert_eq!(
        block_on(vec![ready('a'), ready('b')].join_all()),
        ['a', 'b']
    );
    assert_eq!(
        block_on(Vec::<std::future::Ready<u8>>::new().join_all()),
        []
    );
}

#[test]
fn try_join_all_gives_every_value_in_input_order_or_the_first_error_in_time() {
    let n = if cfg!(miri) { 50 } else { 1_000 };
    let values = block_on(
        (0..n)
            .map(|id| async move { Ok::<_, String>(Spinner::new(id, id % 4).0.await) })
            .try_join_all(),
    );
    assert_eq!(values, Ok((0..n).collect::<Vec<_>>()));

    // Inputs 5 and 20 fail; 20 fails first.
    let result = block_on(
        (0..30)
            .map(|id| async move {
                let spins = if id == 20 { 0 } else { 10 };
                let id = Spinner::new(id, spins).0.await;
                if id == 5 || id == 20 { Err(id) } else { Ok(id) }
            })
            .try_join_all(),
    );
    assert_eq!(result, Err(20));
}

#[test]
fn ordered_buffer_pulls_the_iterator_only_as_slots_free_up() {
    let n = 10;
    let (futures, states) = probes(n);
    let made = Cell::new(0);
    let mut buffer = futures
        .into_iter()
        .inspect(|_| made.set(made.get() + 1))
        .ordered_buffer(3);
    assert_eq!(made.get(), 0, "nothing is made before the first poll");
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(made.get(), 3);

    // Future 1 finishes behind the head: its slot goes to future 3, and no further.
    states[1].finish();
    assert_eq!(settle(&mut buffer), []);
    assert_eq!(made.get(), 4);
    assert_eq!(states[3].polls(), 1);

    states[0].finish();
    assert_eq!(settle(&mut buffer), [0, 1]);
    assert_eq!(made.get(), 5);

    // The rest, finishing as soon as they are polled; never more than 3 made and running.
    let mut outputs = vec![0, 1];
    while outputs.len() < n {
        for state in states.iter().filter(|state| state.was_polled()) {
            state.finish();
        }
        outputs.extend(settle(&mut buffer));
        assert!(made.get() - dropped(&states) <= 3);
    }
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert_eq!(made.get(), n);
}

#[test]
fn unordered_buffer_pulls_the_iterator_only_as_slots_free_up() {
    let n = 10;
    let (futures, states) = probes(n);
    let made = Cell::new(0);
    let mut buffer = futures
        .into_iter()
        .inspect(|_| made.set(made.get() + 1))
        .unordered_buffer(3);
    assert_eq!(made.get(), 0, "nothing is made before the first poll");
    assert_eq!(poll_once(&mut buffer), Poll::Pending);
    assert_eq!(made.get(), 3);

    states[1].finish();
    assert_eq!(settle(&mut buffer), [1]);
    assert_eq!(
        made.get(),
        4,
        "future 1's slot went to future 3, and no further"
    );

    let mut outputs = vec![1];
    while outputs.len() < n {
        for state in states.iter().filter(|state| state.was_polled()) {
            state.finish();
        }
        outputs.extend(settle(&mut buffer));
        assert!(made.get() - dropped(&states) <= 3);
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
}

#[test]
fn ordered_buffer_keeps_input_order_and_runs_at_most_concurrency_futures() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let made = Made::default();
    let mut buffer = spinners(n, 8, &made).ordered_buffer(8);
    assert_eq!(drain(&mut buffer), (0..n).collect::<Vec<_>>());
    assert_eq!(made.count(), n);
    assert_eq!(made.most_running.get(), 8, "8 ran at once");
    assert_eq!(made.running(), 0);
}

#[test]
fn unordered_buffer_yields_every_output_once_and_runs_at_most_concurrency_futures() {
    let n = if cfg!(miri) { 60 } else { 2_000 };
    let made = Made::default();
    let mut buffer = spinners(n, 8, &made).unordered_buffer(8);
    let mut outputs = drain(&mut buffer);
    assert_ne!(outputs, (0..n).collect::<Vec<_>>(), "finish order");
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(made.most_running.get(), 8, "8 ran at once");
}

#[test]
fn buffers_over_an_endless_iterator_make_only_what_is_taken_and_the_slots() {
    let made = Cell::new(0);
    let futures = (0..).map(|id| {
        made.set(made.get() + 1);
        ready(id)
    });
    let firsts: Vec<u64> = block_on(futures.ordered_buffer(4).take(5).collect());
    assert_eq!(firsts, [0, 1, 2, 3, 4]);
    assert!(made.get() <= 5 + 4, "{} futures made", made.get());

    made.set(0);
    let futures = (0..).map(|id| {
        made.set(made.get() + 1);
        ready(id)
    });
    let firsts: Vec<u64> = block_on(futures.unordered_buffer(4).take(5).collect());
    assert_eq!(firsts.len(), 5);
    assert!(made.get() <= 5 + 4, "{} futures made", made.get());
}

#[test]
fn buffers_of_an_empty_iterator_end_at_once() {
    let mut buffer = Vec::<std::future::Ready<u8>>::new().ordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
    let mut buffer = Vec::<std::future::Ready<u8>>::new().unordered_buffer(2);
    assert_eq!(poll_once(&mut buffer), Poll::Ready(None));
    assert!(buffer.is_terminated());
}

#[test]
#[should_panic(expected = "ordered_buffer: concurrency must be greater than 0")]
fn ordered_buffer_with_concurrency_0_panics() {
    let _ = [ready(1)].ordered_buffer(0);
}

#[test]
#[should_panic(expected = "unordered_buffer: concurrency must be greater than 0")]
fn unordered_buffer_with_concurrency_0_panics() {
    let _ = [ready(1)].unordered_buffer(0);
}

#[test]
fn iter_stream_gives_the_items_in_order_then_ends() {
    let mut stream = iter_stream([3, 1, 2]);
    assert!(!stream.is_terminated());
    assert_eq!(stream.size_hint(), (3, Some(3)));
    assert_eq!(poll_once(&mut stream), Poll::Ready(Some(3)));
    assert_eq!(stream.size_hint(), (2, Some(2)));
    assert_eq!(poll_once(&mut stream), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut stream), Poll::Ready(Some(2)));
    assert!(!stream.is_terminated(), "the end is not seen yet");
    assert_eq!(poll_once(&mut stream), Poll::Ready(None));
    assert!(stream.is_terminated());
    assert_eq!(stream.size_hint(), (0, Some(0)));
}

/// An iterator of `left` items that panics if asked for one after it returned `None`.
struct Strict {
    left: usize,
    ended: bool,
}

impl Iterator for Strict {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        assert!(!self.ended, "next called after the iterator returned None");
        if self.left == 0 {
            self.ended = true;
            return None;
        }
        self.left -= 1;
        Some(self.left)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Wrong after the end, on purpose: the stream must not ask.
        (usize::MAX, None)
    }
}

#[test]
fn iter_stream_does_not_pull_the_iterator_after_its_end() {
    let mut stream = iter_stream(Strict {
        left: 2,
        ended: false,
    });
    assert_eq!(poll_once(&mut stream), Poll::Ready(Some(1)));
    assert_eq!(poll_once(&mut stream), Poll::Ready(Some(0)));
    for _ in 0..3 {
        assert_eq!(poll_once(&mut stream), Poll::Ready(None));
    }
    assert_eq!(stream.size_hint(), (0, Some(0)));
}

/// An iterator that is not `Unpin`.
struct Pinned {
    inner: std::ops::Range<usize>,
    _pinned: PhantomPinned,
}

impl Iterator for Pinned {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        self.inner.next()
    }
}

impl FusedIterator for Pinned {}

#[test]
fn iter_stream_is_unpin_whatever_the_iterator() {
    fn unpin<T: Unpin>(_: &T) {}
    let mut stream = iter_stream(Pinned {
        inner: 0..3,
        _pinned: PhantomPinned,
    });
    unpin(&stream);
    assert_eq!(settle(&mut stream), [0, 1, 2]);
}

#[test]
fn iter_stream_feeds_the_buffers_of_buffer_ext() {
    let n = if cfg!(miri) { 40 } else { 500 };
    let futures = || (0..n).map(|id| Spinner::new(id, id % 3).0);
    assert_eq!(
        drain(&mut iter_stream(futures()).ordered_buffer(4)),
        (0..n).collect::<Vec<_>>()
    );
    let mut outputs = drain(&mut iter_stream(futures()).unordered_buffer(4));
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
}

/// `join_all` of `IterExt` is the join of `pinfold_join`: first poll with the task's waker,
/// outputs once every future is done.
#[test]
fn join_all_polls_like_pinfold_join() {
    let (futures, states) = probes(4);
    let mut join = futures.join_all();
    assert!(future::poll_once(&mut join).is_pending());
    assert!(states.iter().all(|state| state.polls() == 1));
    for state in &states {
        state.finish();
    }
    let polled = future::poll_once(&mut join);
    assert_eq!(polled, Poll::Ready(vec![0, 1, 2, 3]));
    assert!(states.iter().all(|state| state.drops() == 1));
}

/// With both `IterExt` and `BufferExt` in scope (as `use pinfold::*` brings them), a stream
/// of futures that is also iterable (a merge of streams, futures-util's `select_all`) is
/// buffered by `BufferExt`: `IterExt` is only for iterables of futures, so the call is not
/// ambiguous (E0034).
#[test]
fn a_stream_of_futures_that_is_also_iterable_is_buffered_as_a_stream() {
    let streams = || {
        [
            futures_util::stream::iter([ready(1)]),
            futures_util::stream::iter([ready(2)]),
        ]
    };
    let mut merged: Vec<u32> = block_on(pinfold::merge(streams()).unordered_buffer(2).collect());
    merged.sort_unstable();
    assert_eq!(merged, [1, 2]);
    let selected: Vec<u32> = block_on(
        futures_util::stream::select_all(streams())
            .ordered_buffer(2)
            .collect(),
    );
    assert_eq!(selected.len(), 2);
}
