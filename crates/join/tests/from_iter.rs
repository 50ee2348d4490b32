//! `FromIterator`: `iter.collect::<JoinAll<_>>()` and `iter.collect::<TryJoinAll<_>>()` are
//! `join_all(iter)` and `try_join_all(iter)`: outputs in input order, the first error in time
//! at once, every future and kept output dropped exactly once. The cases of futures-rs that
//! collect into its `JoinAll` and `TryJoinAll` are ported here, each naming where it came from.

mod probe;

use std::future::{Future, Ready, ready};
use std::task::Poll;

use futures_core::future::FusedFuture;
use pinfold_join::{JoinAll, TryJoinAll};
use pinfold_testkit::future::block_on;
use probe::{DropLog, assert_probes_dropped_once, counting_waker, poll_once, poll_with, probes};

/// The output of `fut`, run to completion on this thread.
#[track_caller]
fn assert_done<T: PartialEq + std::fmt::Debug>(fut: impl Future<Output = T>, expected: T) {
    assert_eq!(block_on(fut), expected);
}

fn ok<T, E>(value: T) -> Ready<Result<T, E>> {
    ready(Ok(value))
}

fn err<T, E>(error: E) -> Ready<Result<T, E>> {
    ready(Err(error))
}

/// futures-rs, `futures/tests/future_join_all.rs`, `join_all_from_iter`; boxed as
/// `dyn Future + Unpin`, as the older version of the case (`futures/tests/join_all.rs`) did.
#[test]
fn join_all_from_iter() {
    assert_done(
        vec![ready(1), ready(2)].into_iter().collect::<JoinAll<_>>(),
        vec![1, 2],
    );
    let boxed: Box<dyn Future<Output = Vec<i32>> + Unpin> =
        Box::new(vec![ready(1), ready(2)].into_iter().collect::<JoinAll<_>>());
    assert_done(boxed, vec![1, 2]);
}

/// futures-rs, `futures/tests/future_try_join_all.rs`, `try_join_all_from_iter`; boxed as
/// `dyn Future + Unpin`, as the older version of the case (`futures/tests/try_join_all.rs`)
/// did.
#[test]
fn try_join_all_from_iter() {
    assert_done(
        vec![ok(1), ok(2)].into_iter().collect::<TryJoinAll<_>>(),
        Ok::<_, usize>(vec![1, 2]),
    );
    let boxed: Box<dyn Future<Output = Result<Vec<i32>, usize>> + Unpin> =
        Box::new(vec![ok(1), ok(2)].into_iter().collect::<TryJoinAll<_>>());
    assert_done(boxed, Ok(vec![1, 2]));
}

/// futures-rs, `futures/tests/future_join_all.rs`, `collect_collects`, through `collect`; the
/// empty case it leaves open ("should this be implemented?") completes with no outputs here.
#[test]
fn join_all_collect_collects() {
    assert_done(
        [ready(1), ready(2)].into_iter().collect::<JoinAll<_>>(),
        vec![1, 2],
    );
    assert_done([ready(1)].into_iter().collect::<JoinAll<_>>(), vec![1]);
    let mut empty = Vec::<Ready<i32>>::new().into_iter().collect::<JoinAll<_>>();
    assert_eq!(poll_once(&mut empty), Poll::Ready(vec![]));
    assert!(empty.is_terminated());
}

/// futures-rs, `futures/tests/future_try_join_all.rs`, `collect_collects`, through `collect`;
/// the empty case it leaves open completes with `Ok` and no values here.
#[test]
fn try_join_all_collect_collects() {
    assert_done(
        [ok(1), ok(2)].into_iter().collect::<TryJoinAll<_>>(),
        Ok::<_, usize>(vec![1, 2]),
    );
    assert_done(
        [ok(1), err(2)].into_iter().collect::<TryJoinAll<_>>(),
        Err(2),
    );
    assert_done(
        [ok(1)].into_iter().collect::<TryJoinAll<_>>(),
        Ok::<_, usize>(vec![1]),
    );
    let mut empty = Vec::<Ready<Result<i32, usize>>>::new()
        .into_iter()
        .collect::<TryJoinAll<_>>();
    assert_eq!(poll_once(&mut empty), Poll::Ready(Ok(vec![])));
    assert!(empty.is_terminated());
}

/// futures-rs, `futures/tests/future_join_all.rs`, `join_all_iter_lifetime`, through
/// `collect`: futures borrowing from the iterator's items type-check.
#[test]
fn join_all_iter_lifetime() {
    fn sizes(bufs: Vec<&[u8]>) -> impl Future<Output = Vec<usize>> {
        bufs.into_iter()
            .map(|buf| ready(buf.len()))
            .collect::<JoinAll<_>>()
    }
    assert_done(sizes(vec![&[1, 2, 3], &[], &[0]]), vec![3, 0, 1]);
}

/// futures-rs, `futures/tests/future_try_join_all.rs`, `try_join_all_iter_lifetime`, through
/// `collect`.
#[test]
fn try_join_all_iter_lifetime() {
    fn sizes(bufs: Vec<&[u8]>) -> impl Future<Output = Result<Vec<usize>, ()>> {
        bufs.into_iter()
            .map(|buf| ok(buf.len()))
            .collect::<TryJoinAll<_>>()
    }
    assert_done(sizes(vec![&[1, 2, 3], &[], &[0]]), Ok(vec![3, 0, 1]));
}

#[test]
fn collected_join_all_gives_outputs_in_input_order_whatever_order_they_finish_in() {
    let n = if cfg!(miri) { 40 } else { 300 };
    let (futures, states) = probes(n, |i| i * 3);
    let mut join: JoinAll<_> = futures.into_iter().collect();
    let (waker, _) = counting_waker();
    assert_eq!(poll_with(&mut join, &waker), Poll::Pending);
    // Last first: only the head's finish completes the join.
    let mut outputs = None;
    for (finished, state) in states.iter().rev().enumerate() {
        state.finish();
        match poll_with(&mut join, &waker) {
            Poll::Ready(out) => outputs = Some(out),
            Poll::Pending => assert!(finished + 1 < n, "every future finished, yet Pending"),
        }
    }
    let outputs = outputs.expect("the join completed");
    assert_eq!(outputs, (0..n).map(|i| i * 3).collect::<Vec<_>>());
    assert!(join.is_terminated());
    assert_probes_dropped_once(&states);
}

#[test]
fn collected_try_join_all_returns_the_first_error_in_time_and_drops_everything_once() {
    let n = 50;
    let log = DropLog::new(n);
    // Futures 10 and 40 fail; 40 finishes first.
    let (futures, states) = probes(n, |i| {
        if i == 10 || i == 40 {
            Err(log.tracked(i))
        } else {
            Ok(log.tracked(i))
        }
    });
    let mut join: TryJoinAll<_> = futures.into_iter().collect();
    assert!(poll_once(&mut join).is_pending());
    for i in (0..n).filter(|&i| i != 10 && i != 40).step_by(2) {
        states[i].finish();
    }
    assert!(poll_once(&mut join).is_pending());
    states[40].finish();
    let error = match poll_once(&mut join) {
        Poll::Ready(Err(error)) => error,
        other => panic!("expected future 40's error, got {other:?}"),
    };
    assert_eq!(error.id(), 40);
    assert!(join.is_terminated());
    // Every other future and every `Ok` value kept went before the error came out.
    assert_probes_dropped_once(&states);
    for i in (0..n).filter(|&i| i != 40) {
        assert_eq!(log.drops(i), 1, "value {i}");
    }
    drop(error);
    log.assert_each_dropped_once("value");
}

#[test]
fn a_collected_join_dropped_part_way_drops_every_future_and_output_once() {
    let n = 40;
    let log = DropLog::new(n);
    let (futures, states) = probes(n, |i| log.tracked(i));
    let mut join: JoinAll<_> = futures.into_iter().collect();
    assert!(poll_once(&mut join).is_pending());
    // Half finish (their outputs kept in the join), half still run.
    for state in states.iter().step_by(2) {
        state.finish();
    }
    assert!(poll_once(&mut join).is_pending());
    drop(join);
    assert_probes_dropped_once(&states);
    log.assert_each_dropped_once("output");
}

#[test]
fn collect_takes_iterators_whose_size_is_unknown() {
    // A filter's size hint is (0, Some(n)): the join must not trust a lower bound of 0.
    let join: JoinAll<_> = (0..100).filter(|i| i % 3 == 0).map(ready).collect();
    assert_done(join, (0..100).filter(|i| i % 3 == 0).collect::<Vec<_>>());
    let join: TryJoinAll<_> = (0..100).filter(|i| i % 3 == 0).map(ok::<_, ()>).collect();
    assert_done(
        join,
        Ok((0..100).filter(|i| i % 3 == 0).collect::<Vec<_>>()),
    );
}
