//! The held rows' driver: every set polls each value it holds once, however many calls it
//! takes to do it, so the rows time the same work for every set.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pinfold_benches::{Idle, IdleStream, poll_each_once_pending, poll_future_each_once_pending};

#[test]
fn a_set_that_polls_all_it_holds_takes_one_call() {
    let mut set = pinfold_unordered::FuturesUnorderedBounded::new(200);
    (0..200).for_each(|i| set.push(Idle(i)));
    assert_eq!(poll_each_once_pending(set, 200), 1);

    let mut set = pinfold_unordered::FuturesUnordered::new();
    (0..1_000).for_each(|i| set.push(Idle(i)));
    assert_eq!(poll_each_once_pending(set, 1_000), 1);
}

#[test]
fn futures_buffered_takes_a_call_per_61_values() {
    let mut set = futures_buffered::FuturesUnorderedBounded::new(200);
    (0..200).for_each(|i| set.push(Idle(i)));
    assert_eq!(poll_each_once_pending(set, 200), 200_usize.div_ceil(61));

    let merged: futures_buffered::MergeBounded<IdleStream> = (0..122).map(IdleStream).collect();
    assert_eq!(poll_each_once_pending(merged, 122), 2);
}

#[test]
fn futures_util_and_stream_map_poll_all_they_hold_in_one_call() {
    let set = futures_util::stream::FuturesUnordered::new();
    (0..200).for_each(|i| set.push(Idle(i)));
    assert_eq!(poll_each_once_pending(set, 200), 1);

    let mut map = tokio_stream::StreamMap::new();
    (0..200).for_each(|i| {
        map.insert(i, IdleStream(i));
    });
    assert_eq!(poll_each_once_pending(map, 200), 1);
}

#[test]
fn a_join_polls_each_value_once() {
    assert_eq!(
        poll_future_each_once_pending(pinfold_join::join_all((0..100).map(Idle)), 100),
        1
    );
    assert!(poll_future_each_once_pending(futures_buffered::join_all((0..100).map(Idle)), 100) > 1);
}

/// A stream that is pending and polls nothing.
struct Stalled;

impl Stream for Stalled {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<()>> {
        Poll::Pending
    }
}

#[test]
#[should_panic(expected = "a call polled no value")]
fn a_call_that_polls_no_value_fails_the_row() {
    poll_each_once_pending(Stalled, 1);
}

/// A stream that polls the first of its idle streams twice a call and the second never.
struct Lopsided([IdleStream; 2]);

impl Stream for Lopsided {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let first = &mut self.0[0];
        assert!(Pin::new(&mut *first).poll_next(cx).is_pending());
        assert!(Pin::new(first).poll_next(cx).is_pending());
        Poll::Pending
    }
}

#[test]
#[should_panic(expected = "2 polls, but not of each of the values 0 .. 2 once")]
fn a_set_that_polls_one_value_twice_and_another_never_fails_the_row() {
    poll_each_once_pending(Lopsided([IdleStream(0), IdleStream(1)]), 2);
}

#[test]
#[should_panic(expected = "more polls than values")]
fn a_set_that_polls_more_than_it_was_said_to_hold_fails_the_row() {
    poll_each_once_pending(Lopsided([IdleStream(0), IdleStream(1)]), 1);
}
