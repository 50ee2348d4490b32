//! The set as a container and a stream: termination, outputs, capacity, iteration, clearing,
//! collecting, and futures staying where they were pushed (the cases every set shares are
//! `pinfold_testkit::contract::basics`; a full set's and a zero-capacity set's are here).

use std::future::{Ready, ready};
use std::task::Poll;
use std::time::Duration;

use futures_core::FusedStream;
use futures_util::StreamExt;
use pinfold_testkit::contract::basics;
use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::stream::{drain_ready, poll_once, settle};
use pinfold_unordered::{FuturesUnorderedBounded, Key};

pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
pinfold_testkit::contract_tests!(Bounded: basics);

#[test]
fn empty_set_yields_none_then_is_terminated() {
    basics::empty_set_yields_none_then_is_terminated::<Bounded>(4);
}

#[test]
fn every_output_comes_out_exactly_once() {
    let n = if cfg!(miri) { 40 } else { 1_000 };
    basics::every_output_comes_out_exactly_once::<Bounded>(n);
}

#[test]
fn len_drops_by_one_per_output() {
    basics::len_drops_by_one_per_output::<Bounded>(5);
}

#[test]
fn finished_future_is_dropped_before_its_output_is_returned() {
    basics::finished_future_is_dropped_before_its_output_is_returned::<Bounded>(3, &[1, 0, 2]);
}

#[test]
fn size_hint_is_the_number_of_futures() {
    basics::size_hint_is_the_number_of_futures::<Bounded>(8, 8);
}

#[test]
fn dropping_the_set_drops_every_future_once() {
    basics::dropping_the_set_drops_every_future_once::<Bounded>(5);
}

#[test]
fn iter_visits_every_live_future_once() {
    // Two slots never used.
    basics::iter_visits_every_live_future_once::<Bounded>(10, 8, &[0, 5, 6]);
}

#[test]
fn iter_pin_mut_visits_every_live_future_once() {
    basics::iter_pin_mut_visits_every_live_future_once::<Bounded>(8, 8, &[7, 3]);
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
fn collect_makes_a_set_as_large_as_the_iterator() {
    let mut set: FuturesUnorderedBounded<_> = (0..10).map(ready).collect();
    assert_eq!(set.capacity(), 10);
    assert_eq!(set.len(), 10);
    assert!(set.is_full());
    let mut outputs = drain_ready(&mut set);
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
    assert!(settle(&mut set).is_empty());
    for state in &fresh_states {
        state.finish();
    }
    let mut outputs = drain_ready(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..6).collect::<Vec<_>>());
    for state in states.iter().chain(&fresh_states) {
        assert_eq!(state.drops(), 1);
    }
    drop(stale);
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
