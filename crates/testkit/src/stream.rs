//! Driving a stream (a set of futures, a buffer adapter) by hand, one `poll_next` at a time,
//! and checking what a merge of numbered streams gave.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use crate::probe::ProbeState;
use crate::waker::counting_waker;

/// One `poll_next` of `stream` with `waker`.
pub fn poll_with<S: Stream + Unpin>(stream: &mut S, waker: &Waker) -> Poll<Option<S::Item>> {
    Pin::new(stream).poll_next(&mut Context::from_waker(waker))
}

/// One `poll_next` of `stream` with a waker that does nothing.
pub fn poll_once<S: Stream + Unpin>(stream: &mut S) -> Poll<Option<S::Item>> {
    poll_with(stream, Waker::noop())
}

/// Polls `stream` until it returns `Pending` or `Ready(None)`; the items it gave.
pub fn take_ready<S: Stream + Unpin>(stream: &mut S) -> Vec<S::Item> {
    let mut outputs = Vec::new();
    while let Poll::Ready(Some(out)) = poll_once(stream) {
        outputs.push(out);
    }
    outputs
}

/// Polls `stream` until it ends; the items in the order they came. Panics if it ever returns
/// `Pending`: for streams whose every item is ready (sets of finished or ready futures), where
/// a `Pending` would be a poll that gave nothing; and if it gives more items than its
/// `size_hint` said it had left when the drain began (a set that never ends fails, not hangs).
pub fn drain_ready<S: Stream + Unpin>(stream: &mut S) -> Vec<S::Item> {
    let (_, at_most) = stream.size_hint();
    let mut outputs = Vec::new();
    loop {
        match poll_once(stream) {
            Poll::Ready(Some(out)) => {
                outputs.push(out);
                if let Some(at_most) = at_most {
                    assert!(
                        outputs.len() <= at_most,
                        "more than the {at_most} outputs its size_hint promised"
                    );
                }
            }
            Poll::Ready(None) => return outputs,
            Poll::Pending => panic!(
                "Pending after {} outputs, with none left to wait for",
                outputs.len()
            ),
        }
    }
}

/// Finishes the probes `ids` of `stream` (a set of probes whose states are `states`, by id),
/// in that order, `batch` at a time, through the wakers they were polled with, taking the
/// items ready after each batch; the items, in the order they came.
pub fn finish_in_batches<S: Stream + Unpin>(
    stream: &mut S,
    states: &[Arc<ProbeState>],
    ids: &[usize],
    batch: usize,
) -> Vec<S::Item> {
    let mut outputs = Vec::new();
    for chunk in ids.chunks(batch) {
        for &id in chunk {
            states[id].finish();
        }
        outputs.extend(take_ready(stream));
    }
    outputs
}

/// Polls `stream` to its end with a counting waker, the way an executor would: after
/// `Pending`, it polls again only if the waker was woken. Panics if the stream is `Pending`
/// without a wake (it would hang).
pub fn drain<S: Stream + Unpin>(stream: &mut S) -> Vec<S::Item> {
    let (waker, wakes) = counting_waker();
    let mut outputs = Vec::new();
    loop {
        let before = wakes.count();
        match poll_with(stream, &waker) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => return outputs,
            Poll::Pending => assert!(
                wakes.count() > before,
                "Pending with no wake after {} outputs: the stream would hang",
                outputs.len()
            ),
        }
    }
}

/// Polls `stream` until it is `Pending` with no wake of its own (every future that can make
/// progress has), and returns the items it gave on the way.
pub fn settle<S: Stream + Unpin>(stream: &mut S) -> Vec<S::Item> {
    let (waker, wakes) = counting_waker();
    let mut outputs = Vec::new();
    loop {
        let before = wakes.count();
        match poll_with(stream, &waker) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => return outputs,
            Poll::Pending if wakes.count() == before => return outputs,
            Poll::Pending => {}
        }
    }
}

/// Asserts that `items`, `(stream, seq)` pairs, hold items `0..lengths[stream]` of each stream
/// exactly once and each stream's in order.
pub fn assert_each_stream_whole_and_in_order(items: &[(usize, usize)], lengths: &[usize]) {
    let mut next = vec![0; lengths.len()];
    for &(stream, seq) in items {
        assert_eq!(
            seq, next[stream],
            "stream {stream} gave item {seq} where item {} was due",
            next[stream]
        );
        next[stream] += 1;
    }
    assert_eq!(next, lengths, "items missing");
}
