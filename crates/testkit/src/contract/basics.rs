//! The set as a container and a stream: termination, outputs, length, iteration, dropping, and
//! futures staying where they were put.
//!
//! Cases that take sizes run with each set's own; `capacity` is what the case makes the set
//! with (`with_capacity(0)` of a growable set grows group by group, as `collect` does).

use std::future::{Ready, ready};
use std::sync::Arc;
use std::task::Poll;

use futures_core::{FusedStream, Stream};

use super::SetUnderTest;
use crate::probe::{Probe, ProbeState, Spinner, probes};
use crate::stream::poll_once;

/// An empty set of `capacity` yields `None` and is terminated from then on; polling it
/// allocates nothing.
pub fn empty_set_yields_none_then_is_terminated<S: SetUnderTest>(capacity: usize) {
    let mut set = S::with_capacity::<Ready<u8>>(capacity);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    assert_eq!(
        S::capacity(&set),
        capacity,
        "polling an empty set allocates nothing"
    );
}

/// A future added to a terminated set makes it a stream again, until it has yielded `None`.
pub fn push_after_termination_clears_is_terminated<S: SetUnderTest>() {
    let mut set = S::with_capacity(4);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    S::insert(&mut set, ready(7));
    assert!(!set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(7)));
    assert!(!set.is_terminated(), "terminated before yielding None");
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    S::insert(&mut set, ready(8));
    assert!(!set.is_terminated());
}

/// The outputs of `n` futures, some ready at once, others after waking themselves a few times,
/// each come out exactly once.
pub fn every_output_comes_out_exactly_once<S: SetUnderTest>(n: usize) {
    let mut set: S::Set<Spinner> = (0..n).map(|id| Spinner::new(id, id % 5).0).collect();
    assert!(S::capacity(&set) >= n);
    let mut outputs = Vec::new();
    // Spinners wake themselves, so a `Pending` just means "yielded"; keep polling.
    let mut polls = 0;
    loop {
        match poll_once(&mut set) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => break,
            Poll::Pending => {
                polls += 1;
                assert!(polls < 100 * n, "the set stopped making progress");
            }
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..n).collect::<Vec<_>>());
    assert_eq!(S::len(&set), 0);
}

/// The length, and the size hint, of a set of `n` futures drops by one with each output.
pub fn len_drops_by_one_per_output<S: SetUnderTest>(n: usize) {
    let (futures, states) = probes(n);
    let mut set: S::Set<Probe> = futures.into_iter().collect();
    assert_eq!(S::len(&set), n);
    assert!(poll_once(&mut set).is_pending());
    for (done, state) in states.iter().enumerate() {
        state.finish();
        assert!(matches!(poll_once(&mut set), Poll::Ready(Some(_))));
        assert_eq!(S::len(&set), n - done - 1);
        assert_eq!(set.size_hint(), (S::len(&set), Some(S::len(&set))));
    }
    assert_eq!(S::len(&set), 0);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

/// Each of `finished` (ids of `n` futures) is dropped before its output comes out; the others
/// are not dropped.
pub fn finished_future_is_dropped_before_its_output_is_returned<S: SetUnderTest>(
    n: usize,
    finished: &[usize],
) {
    let (futures, states) = probes(n);
    let mut set: S::Set<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    for &id in finished {
        states[id].finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
        assert_eq!(
            states[id].drops(),
            1,
            "probe {id} still alive when its output came out"
        );
    }
    for (id, state) in states.iter().enumerate() {
        assert_eq!(
            state.drops(),
            usize::from(finished.contains(&id)),
            "probe {id}"
        );
    }
}

/// The size hint of a set of `capacity` is the number of futures in it, as `n` are added and
/// their outputs come out.
pub fn size_hint_is_the_number_of_futures<S: SetUnderTest>(capacity: usize, n: usize) {
    let mut set = S::with_capacity(capacity);
    assert_eq!(set.size_hint(), (0, Some(0)));
    for added in 0..n {
        S::insert(&mut set, ready(added));
        assert_eq!(set.size_hint(), (added + 1, Some(added + 1)));
    }
    for left in (0..n).rev() {
        assert!(matches!(poll_once(&mut set), Poll::Ready(Some(_))));
        assert_eq!(set.size_hint(), (left, Some(left)));
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert_eq!(set.size_hint(), (0, Some(0)));
}

/// The set is a stream of its futures' outputs that knows when it has ended.
pub fn set_is_a_fused_stream_of_outputs<S: SetUnderTest>() {
    fn fused_stream_of<St: FusedStream<Item = usize>>(_: &St) {}
    let set = S::with_capacity::<Probe>(1);
    fused_stream_of(&set);
}

/// Dropping a set of `n` futures, one finished, drops each future once.
pub fn dropping_the_set_drops_every_future_once<S: SetUnderTest>(n: usize) {
    let (futures, states) = probes(n);
    let mut set: S::Set<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    states[3].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(3)));
    drop(set);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
}

/// A set of `capacity` holding `n` probes, polled once, of which `finished` finished (in that
/// order) and gave their outputs; the probes' states.
fn polled_with_finished<S: SetUnderTest>(
    capacity: usize,
    n: usize,
    finished: &[usize],
) -> (S::Set<Probe>, Vec<Arc<ProbeState>>) {
    let (futures, states) = probes(n);
    let mut set = S::with_capacity(capacity);
    for probe in futures {
        S::insert(&mut set, probe);
    }
    assert!(poll_once(&mut set).is_pending());
    for &id in finished {
        states[id].finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
    }
    (set, states)
}

/// `iter` of a set of `capacity` holding `n` futures, of which `finished` finished, visits
/// every future left once, each where the set polls it.
pub fn iter_visits_every_live_future_once<S: SetUnderTest>(
    capacity: usize,
    n: usize,
    finished: &[usize],
) {
    let (set, states) = polled_with_finished::<S>(capacity, n, finished);
    let iter = S::iter(&set);
    assert_eq!(iter.len(), n - finished.len());
    let mut ids: Vec<usize> = iter.map(Probe::id).collect();
    ids.sort_unstable();
    let expected: Vec<usize> = (0..n).filter(|id| !finished.contains(id)).collect();
    assert_eq!(ids, expected);
    // Each is the future the set polls, where the set polled it.
    for probe in S::iter(&set) {
        assert_eq!(probe.address(), states[probe.id()].address());
    }
}

/// `iter_pin_mut` of a set of `capacity` holding `n` futures, of which `finished` finished,
/// visits every future left once, each where the set polls it.
pub fn iter_pin_mut_visits_every_live_future_once<S: SetUnderTest>(
    capacity: usize,
    n: usize,
    finished: &[usize],
) {
    let (mut set, states) = polled_with_finished::<S>(capacity, n, finished);
    let iter = S::iter_pin_mut(&mut set);
    assert_eq!(iter.len(), n - finished.len());
    let mut ids = Vec::new();
    for probe in iter {
        assert_eq!(probe.address(), states[probe.id()].address());
        ids.push(probe.id());
    }
    ids.sort_unstable();
    let expected: Vec<usize> = (0..n).filter(|id| !finished.contains(id)).collect();
    assert_eq!(ids, expected);
}

/// Futures are polled where they were first polled, however often and in whatever order they
/// are woken and finish (a probe panics if polled anywhere else).
pub fn futures_never_move_after_push<S: SetUnderTest>() {
    let (futures, states) = probes(12);
    let mut set = S::with_capacity(12);
    for probe in futures {
        S::insert(&mut set, probe);
    }
    assert!(poll_once(&mut set).is_pending());
    let addresses: Vec<usize> = states.iter().map(|state| state.address()).collect();

    // Wake every probe in a mixed order, several times, without finishing it: each is polled
    // again in place.
    for round in 0..3 {
        for id in [5, 0, 11, 3, 8, 1, 10, 2, 7, 4, 9, 6] {
            if (id + round) % 2 == 0 {
                states[id].waker().wake();
            }
        }
        for _ in 0..2 {
            assert!(poll_once(&mut set).is_pending());
        }
        for probe in S::iter(&set) {
            assert_eq!(probe.address(), addresses[probe.id()]);
        }
    }
    // Finish them in a mixed order, pushing nothing, then check every poll found its probe in
    // place (the probe's own assertion) and every probe was polled more than once.
    let mut outputs = Vec::new();
    for id in [9, 2, 4, 11, 0, 7, 1, 10, 3, 6, 8, 5] {
        states[id].finish();
        match poll_once(&mut set) {
            Poll::Ready(Some(out)) => outputs.push(out),
            other => panic!("expected probe {id} to finish, got {other:?}"),
        }
    }
    assert_eq!(outputs, [9, 2, 4, 11, 0, 7, 1, 10, 3, 6, 8, 5]);
    for (id, state) in states.iter().enumerate() {
        assert!(
            state.polls() >= 2,
            "probe {id} polled {} times",
            state.polls()
        );
        assert_eq!(state.address(), addresses[id]);
    }
}
