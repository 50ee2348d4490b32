//! The set as a container and a stream: termination, outputs, length, capacity, iteration,
//! clearing, collecting and extending (the cases every set shares are
//! `pinfold_testkit::contract::basics`, run here over several groups; how groups are made is
//! here).

use std::future::{Ready, ready};
use std::task::Poll;
use std::time::Duration;

use futures_core::{FusedStream, Stream};
use futures_util::StreamExt;
use pinfold_testkit::contract::basics;
use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::stream::{drain_ready, poll_once};
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: basics);

#[test]
fn empty_set_yields_none_then_is_terminated() {
    // `with_capacity(0)` is `new()`.
    basics::empty_set_yields_none_then_is_terminated::<Unordered>(0);
}

#[test]
fn every_output_comes_out_exactly_once() {
    let n = if cfg!(miri) { 100 } else { 2_000 };
    basics::every_output_comes_out_exactly_once::<Unordered>(n);
}

#[test]
fn len_drops_by_one_per_output() {
    basics::len_drops_by_one_per_output::<Unordered>(70);
}

#[test]
fn finished_future_is_dropped_before_its_output_is_returned() {
    // 40 probes: two groups, so both are checked.
    basics::finished_future_is_dropped_before_its_output_is_returned::<Unordered>(
        40,
        &[1, 35, 0, 39, 2, 33],
    );
}

#[test]
fn size_hint_is_the_number_of_futures() {
    basics::size_hint_is_the_number_of_futures::<Unordered>(0, 40);
}

#[test]
fn dropping_the_set_drops_every_future_once() {
    basics::dropping_the_set_drops_every_future_once::<Unordered>(50);
}

#[test]
fn iter_visits_every_live_future_once() {
    // Groups of 32, 32 and 64.
    basics::iter_visits_every_live_future_once::<Unordered>(0, 80, &[0, 5, 40, 79]);
}

#[test]
fn iter_pin_mut_visits_every_live_future_once() {
    basics::iter_pin_mut_visits_every_live_future_once::<Unordered>(0, 80, &[77, 3]);
}

#[test]
fn new_set_is_empty_unallocated_and_not_terminated() {
    const SET: FuturesUnordered<Ready<u8>> = FuturesUnordered::new();
    let set = SET;
    assert_eq!(set.len(), 0);
    assert!(set.is_empty());
    assert_eq!(set.capacity(), 0);
    assert!(!set.is_terminated());
    assert_eq!(set.size_hint(), (0, Some(0)));

    let default = FuturesUnordered::<Ready<u8>>::default();
    assert_eq!(default.capacity(), 0);
    assert!(!default.is_terminated());
}

#[test]
fn first_push_allocates_the_first_group() {
    let mut set = FuturesUnordered::new();
    set.push(ready(1));
    assert_eq!(set.capacity(), 32);
    assert_eq!(set.len(), 1);
}

#[test]
fn collect_holds_every_future_of_the_iterator() {
    let mut set: FuturesUnordered<_> = (0..100).map(ready).collect();
    assert_eq!(set.len(), 100);
    assert_eq!(set.capacity(), 128);
    let mut outputs = drain_ready(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());

    let mut empty: FuturesUnordered<Ready<u8>> = std::iter::empty().collect();
    assert_eq!(empty.capacity(), 0);
    assert_eq!(poll_once(&mut empty), Poll::Ready(None));
}

#[test]
fn extend_adds_to_the_set() {
    let mut set = FuturesUnordered::new();
    set.push(ready(0));
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(0)));
    assert_eq!(poll_once(&mut set), Poll::Ready(None));
    assert!(set.is_terminated());
    set.extend((1..50).map(ready));
    assert!(!set.is_terminated());
    assert_eq!(set.len(), 49);
    let mut outputs = drain_ready(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (1..50).collect::<Vec<_>>());
}

#[test]
fn with_capacity_allocates_the_first_group_now() {
    let set = FuturesUnordered::<Ready<u8>>::with_capacity(100);
    assert_eq!(set.capacity(), 100);
    assert!(set.is_empty());
    assert_eq!(
        FuturesUnordered::<Ready<u8>>::with_capacity(0).capacity(),
        0
    );

    // The first group is as large as asked and is kept; later groups hold at least 32.
    let mut small = FuturesUnordered::with_capacity(3);
    assert_eq!(small.capacity(), 3);
    for n in 0..4 {
        small.push(ready(n));
    }
    assert_eq!(small.capacity(), 3 + 32);
    assert_eq!(drain_ready(&mut small).len(), 4);
    assert_eq!(small.capacity(), 3);
}

#[test]
fn debug_names_the_type_and_counts() {
    // The set's `Debug` must not need `F: Debug`: an async block has none.
    let mut set = FuturesUnordered::new();
    set.push(async { 1 });
    let text = format!("{set:?}");
    assert!(text.contains("FuturesUnordered"), "{text}");
    assert!(text.contains("len: 1"), "{text}");
    assert!(text.contains("capacity: 32"), "{text}");
}

#[test]
fn clear_drops_every_future_once_and_keeps_the_set_usable() {
    let (futures, states) = probes(100);
    let mut set: FuturesUnordered<Probe> = futures.into_iter().collect();
    assert!(poll_once(&mut set).is_pending());
    // Keep wakers from before the clear to wake afterwards.
    let stale: Vec<_> = states.iter().map(|state| state.waker()).collect();
    states[2].finish();
    assert_eq!(poll_once(&mut set), Poll::Ready(Some(2)));

    set.clear();
    assert_eq!(set.len(), 0);
    assert!(set.is_empty());
    assert_eq!(
        set.capacity(),
        32,
        "clear releases every group but the first"
    );
    for state in &states {
        assert_eq!(state.drops(), 1);
    }
    for waker in &stale {
        waker.wake_by_ref();
    }
    assert_eq!(poll_once(&mut set), Poll::Ready(None));

    let (fresh, fresh_states) = probes(100);
    set.extend(fresh);
    // The stale wakes marked slots that fresh probes now occupy: a poll may count those as
    // self-wakes and yield early, but a few polls reach every probe.
    for _ in 0..100 {
        assert!(poll_once(&mut set).is_pending());
        if fresh_states.iter().all(|state| state.polls() > 0) {
            break;
        }
    }
    for state in &fresh_states {
        state.finish();
    }
    let mut outputs = drain_ready(&mut set);
    outputs.sort_unstable();
    assert_eq!(outputs, (0..100).collect::<Vec<_>>());
    for state in states.iter().chain(&fresh_states) {
        assert_eq!(state.drops(), 1);
    }
    drop(stale);
}

#[cfg_attr(miri, ignore)] // tokio's timer does not run under Miri
#[tokio::test(start_paused = true)]
async fn outputs_come_in_the_order_futures_finish() {
    let delays = [50u64, 10, 40, 20, 30];
    let mut set = FuturesUnordered::new();
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
