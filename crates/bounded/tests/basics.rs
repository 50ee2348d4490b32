//! The set as a container and a stream: termination, outputs, capacity, iteration, clearing,
//! collecting, and futures staying where they were pushed.

mod probe;

use std::future::{Ready, ready};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use pinfold_bounded::FuturesUnorderedBounded;
use probe::{Probe, ProbeState, Spinner, poll_once, probes, settle};

/// Finishes every probe, in the order given, through the wakers the set lent them.
fn finish_all(states: &[Arc<ProbeState>]) {
    for state in states {
        state.finish();
    }
}

/// Polls `set` until it yields `None`; the outputs in the order they came. Panics if it ever
/// returns `Pending` (nothing in these sets waits for anything outside).
fn drain<F: std::future::Future>(set: &mut FuturesUnorderedBounded<F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    loop {
        match poll_once(set) {
            Poll::Ready(Some(out)) => outputs.push(out),
            Poll::Ready(None) => return outputs,
            Poll::Pending => panic!("set returned Pending with {} ready futures", set.len()),
        }
    }
}

#[test]
fn new_set_is_empty_and_not_terminated() {
    let set = FuturesUnorderedBounded::<Ready<u8>>::new(4);
    assert_eq!(set.len(), 0);
    assert!(set.is_empty());
    assert!(!set.is_full());
    assert_eq!(set.capacity(), 4);
    assert!(!set.is_terminated());
}

#[test]
fn empty_set_yields_none_then_is_terminated() {
    let mut set = FuturesUnorderedBounded::<Ready<u8>>::new(4);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
}

#[test]
fn push_after_termination_clears_is_terminated() {
    let mut set = FuturesUnorderedBounded::new(4);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    set.push(ready(7));
    assert!(!set.is_terminated());
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(7)));
    assert!(!set.is_terminated(), "terminated before yielding None");
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());

    assert!(set.try_push(ready(8)).is_ok());
    assert!(!set.is_terminated());
}

#[test]
fn every_output_comes_out_exactly_once() {
    let n = if cfg!(miri) { 40 } else { 1_000 };
    let mut set = FuturesUnorderedBounded::new(n);
    for id in 0..n {
        // Some finish at once, others after waking themselves a few times.
        set.push(Spinner::new(id, id % 5).0);
    }
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
    assert!(set.is_empty());
}

#[test]
fn len_drops_by_one_per_output() {
    let (futures, states) = probes(5);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert_eq!(set.len(), 5);
    assert!(poll_once(&mut set).is_pending());
    for (done, state) in states.iter().enumerate() {
        state.finish();
        assert!(matches!(poll_once(&mut set), Poll::Ready(Some(_))));
        assert_eq!(set.len(), 5 - done - 1);
        assert_eq!(set.size_hint(), (set.len(), Some(set.len())));
    }
    assert!(set.is_empty());
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

#[test]
fn finished_future_is_dropped_before_its_output_is_returned() {
    let (futures, states) = probes(3);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    for id in [1, 0, 2] {
        states[id].finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
        assert_eq!(
            states[id].drops(),
            1,
            "probe {id} still alive when its output came out"
        );
    }
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
}

#[test]
fn full_set_refuses_try_push_and_gives_the_future_back() {
    let (futures, _states) = probes(3);
    let mut futures = futures.into_iter();
    let mut set = FuturesUnorderedBounded::new(2);
    assert!(set.try_push(futures.next().unwrap()).is_ok());
    assert!(!set.is_full());
    assert!(set.try_push(futures.next().unwrap()).is_ok());
    assert!(set.is_full());

    let refused = set.try_push(futures.next().unwrap()).unwrap_err();
    assert_eq!(refused.id(), 2);
    assert_eq!(set.len(), 2);
    let mut ids: Vec<usize> = set.iter().map(Probe::id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1]);
}

#[test]
fn refused_future_is_not_dropped_or_polled() {
    let mut set = FuturesUnorderedBounded::new(1);
    set.push(Probe::new(0).0);
    let (third, state) = Probe::new(1);
    let third = set.try_push(third).unwrap_err();
    assert!(poll_once(&mut set).is_pending());
    assert_eq!(state.drops(), 0);
    assert_eq!(state.polls(), 0);
    drop(third);
    assert_eq!(state.drops(), 1);
}

#[test]
#[should_panic(expected = "FuturesUnorderedBounded is full (capacity 2)")]
fn push_on_full_set_panics_naming_the_capacity() {
    let mut set = FuturesUnorderedBounded::new(2);
    set.push(ready(1));
    set.push(ready(2));
    set.push(ready(3));
}

#[test]
fn zero_capacity_set_refuses_every_push_and_yields_none() {
    let mut set = FuturesUnorderedBounded::new(0);
    assert_eq!(set.capacity(), 0);
    assert!(set.is_empty());
    assert!(set.is_full());
    assert_eq!(set.try_push(ready(5)).unwrap_err().into_inner(), 5);
    assert_eq!(set.len(), 0);
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    assert_eq!(set.try_push(ready(6)).unwrap_err().into_inner(), 6);
    set.clear();
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
}

#[test]
#[should_panic(expected = "FuturesUnorderedBounded is full (capacity 0)")]
fn push_on_zero_capacity_set_panics() {
    FuturesUnorderedBounded::new(0).push(ready(1));
}

#[test]
fn size_hint_is_the_number_of_futures() {
    let mut set = FuturesUnorderedBounded::new(8);
    assert_eq!(set.size_hint(), (0, Some(0)));
    for n in 0..8 {
        set.push(ready(n));
        assert_eq!(set.size_hint(), (n + 1, Some(n + 1)));
    }
    for left in (0..8).rev() {
        assert!(matches!(poll_once(&mut set), Poll::Ready(Some(_))));
        assert_eq!(set.size_hint(), (left, Some(left)));
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert_eq!(set.size_hint(), (0, Some(0)));
}

#[test]
fn collect_makes_a_set_as_large_as_the_iterator() {
    let mut set: FuturesUnorderedBounded<_> = (0..10).map(ready).collect();
    assert_eq!(set.capacity(), 10);
    assert_eq!(set.len(), 10);
    assert!(set.is_full());
    let mut outputs = drain(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..10).collect::<Vec<_>>());

    let mut empty: FuturesUnorderedBounded<Ready<u8>> = std::iter::empty().collect();
    assert_eq!(empty.capacity(), 0);
    assert_eq!(poll_once(&mut empty), Poll::Ready(None));
}

#[test]
fn debug_names_the_type() {
    // `Probe` has a `Debug` impl, `Spinner` too; the set's must not need one, so use a closure
    // future type that has none.
    let mut set = FuturesUnorderedBounded::new(3);
    set.push(async { 1 });
    let text = format!("{set:?}");
    assert!(text.contains("FuturesUnorderedBounded"), "{text}");
}

#[test]
fn set_is_a_fused_stream_of_outputs() {
    fn fused_stream_of<S: FusedStream<Item = usize>>(_: &S) {}
    let set = FuturesUnorderedBounded::<Probe>::new(1);
    fused_stream_of(&set);
}

#[test]
fn clear_drops_every_future_once_and_keeps_the_set_usable() {
    let (futures, states) = probes(6);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    // Keep wakers from before the clear to wake afterwards.
    let stale: Vec<_> = states.iter().map(|state| state.waker()).collect();
    states[2].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(2)));

    set.clear();
    assert_eq!(set.len(), 0);
    assert!(set.is_empty());
    assert_eq!(set.capacity(), 6);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    for waker in &stale {
        waker.wake_by_ref();
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));

    let (fresh, fresh_states) = probes(6);
    for probe in fresh {
        set.push(probe);
    }
    assert!(set.is_full());
    // The stale wakes may cause a spurious poll of the new occupants, or make the set yield
    // early; either way every new probe gets polled.
    settle(&mut set);
    finish_all(&fresh_states);
    let mut outputs = drain(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..6).collect::<Vec<_>>());
    for state in states.iter().chain(&fresh_states) {
        assert_eq!(state.drops(), 1);
    }
    drop(stale);
}

#[test]
fn dropping_the_set_drops_every_future_once() {
    let (futures, states) = probes(5);
    let mut set: FuturesUnorderedBounded<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    states[3].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(3)));
    drop(set);
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
}

#[test]
fn iter_visits_every_live_future_once() {
    let (futures, states) = probes(8);
    let mut set = FuturesUnorderedBounded::new(10);
    for probe in futures {
        set.push(probe);
    }
    assert!(poll_once(&mut set).is_pending());
    for id in [0, 5, 6] {
        states[id].finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
    }
    let mut ids: Vec<usize> = set.iter().map(Probe::id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4, 7]);
    // Each is the future the set polls, where the set polled it.
    for probe in set.iter() {
        assert_eq!(probe.address(), states[probe.id()].address());
    }
}

#[test]
fn iter_pin_mut_visits_every_live_future_once() {
    let (futures, states) = probes(8);
    let mut set = FuturesUnorderedBounded::new(8);
    for probe in futures {
        set.push(probe);
    }
    assert!(poll_once(&mut set).is_pending());
    for id in [7, 3] {
        states[id].finish();
        assert_eq!(poll_once(&mut set), Poll::Ready(Some(id)));
    }
    let mut ids = Vec::new();
    for probe in set.iter_pin_mut() {
        assert_eq!(probe.address(), states[probe.id()].address());
        ids.push(probe.id());
    }
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 4, 5, 6]);
}

#[test]
fn futures_never_move_after_push() {
    // Probes panic if polled anywhere but where they were first polled.
    let (futures, states) = probes(12);
    let mut set = FuturesUnorderedBounded::new(12);
    for probe in futures {
        set.push(probe);
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
        for probe in set.iter() {
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

#[cfg_attr(miri, ignore)] // tokio's timer does not run under Miri
#[tokio::test(start_paused = true)]
async fn outputs_come_in_the_order_futures_finish() {
    let delays = [50u64, 10, 40, 20, 30];
    let mut set = FuturesUnorderedBounded::new(delays.len());
    for delay in delays {
        set.push(async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            delay
        });
    }
    let start = tokio::time::Instant::now();
    let outputs: Vec<u64> = set.collect().await;
    assert_eq!(outputs, [10, 20, 30, 40, 50]);
    // Virtual time: the sleeps ran together, not one after another.
    assert!(start.elapsed() < Duration::from_millis(100));
}
