//! The set as a container and a stream: termination, outputs, length, capacity, iteration,
//! clearing, collecting and extending. The cases both sets share (those of
//! `pinfold_testkit::contract::basics`, and `cases` below) run over each with its own sizes, a
//! growable set's over several groups; how a growable set makes its groups, and a bounded
//! set's refusals when full or of capacity zero, are each set's own.

use std::future::{Ready, ready};
use std::task::Poll;

use futures_core::{FusedStream, Stream};
use pinfold_arena::GrowableArena;
use pinfold_testkit::contract::basics;
use pinfold_testkit::probe::Probe;
use pinfold_testkit::stream::{drain_ready, poll_once};
use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: basics);

/// The cases below that are not in the contract, written once for both sets.
mod cases {
    use std::fmt::Debug;
    use std::future::Future;
    use std::task::Poll;
    use std::time::Duration;

    use futures_util::StreamExt;
    use pinfold_arena::Storage;
    use pinfold_testkit::contract::SetUnderTest;
    use pinfold_testkit::probe::{Probe, probes};
    use pinfold_testkit::stream::{drain_ready, poll_once, settle};
    use pinfold_unordered::UnorderedSet;

    /// `clear` on a set (stored in `A`) of `n` probes (at least 3), one of which gave its
    /// output: every probe is dropped once, `kept` slots stay, wakers from before the clear
    /// poll nothing, and `n` fresh probes pushed afterwards are each polled and give their
    /// outputs.
    pub(super) fn clear_drops_every_future_once_and_keeps_the_set_usable<A>(n: usize, kept: usize)
    where
        A: Storage<Probe>,
        UnorderedSet<Probe, A>: FromIterator<Probe>,
    {
        let (futures, states) = probes(n);
        let mut set: UnorderedSet<Probe, A> = futures.into_iter().collect();
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
            kept,
            "clear releases every group but the first"
        );
        for state in &states {
            assert_eq!(state.drops(), 1);
        }
        for waker in &stale {
            waker.wake_by_ref();
        }
        assert_eq!(poll_once(&mut set), Poll::Ready(None));

        let (fresh, fresh_states) = probes(n);
        for probe in fresh {
            set.push(probe);
        }
        assert_eq!(set.len(), n);
        // The stale wakes marked slots that fresh probes now occupy: they may cause a spurious
        // poll of the new occupants, or make the set yield early; either way every new probe
        // gets polled.
        assert!(settle(&mut set).is_empty());
        assert!(fresh_states.iter().all(|state| state.polls() > 0));
        for state in &fresh_states {
            state.finish();
        }
        let mut outputs = drain_ready(&mut set);
        outputs.sort_unstable();
        assert_eq!(outputs, (0..n).collect::<Vec<_>>());
        for state in states.iter().chain(&fresh_states) {
            assert_eq!(state.drops(), 1);
        }
        drop(stale);
    }

    /// The `Debug` of `set` (empty) once it holds `fut` holds each of `expected`; it must not
    /// need `F: Debug`: an async block has none.
    pub(super) fn debug_names_the_type_and_counts<F: Future, A: Storage<F>, S>(
        mut set: S,
        fut: F,
        expected: &[&str],
    ) where
        S: core::ops::DerefMut<Target = UnorderedSet<F, A>> + Debug,
    {
        set.push(fut);
        let text = format!("{set:?}");
        for part in expected {
            assert!(text.contains(part), "{text}");
        }
    }

    /// Five futures sleeping different times, in a set made with `capacity`, give their outputs
    /// in the order they wake, all in the time of the longest sleep (virtual time).
    pub(super) async fn outputs_come_in_the_order_futures_finish<S: SetUnderTest>(capacity: usize) {
        let delays = [50u64, 10, 40, 20, 30];
        let mut set = S::with_capacity(capacity);
        for delay in delays {
            S::insert(&mut set, async move {
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
}

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
fn clear_drops_every_future_once_and_keeps_the_set_usable() {
    // 100 probes: groups of 32, 32 and 64; the fresh ones grow the set again.
    cases::clear_drops_every_future_once_and_keeps_the_set_usable::<GrowableArena<Probe>>(100, 32);
}

#[test]
fn debug_names_the_type_and_counts() {
    cases::debug_names_the_type_and_counts(
        FuturesUnordered::new(),
        async { 1 },
        &["FuturesUnordered", "len: 1", "capacity: 32", "groups: 1"],
    );
}

#[cfg_attr(miri, ignore)] // tokio's timer does not run under Miri
#[tokio::test(start_paused = true)]
async fn outputs_come_in_the_order_futures_finish() {
    cases::outputs_come_in_the_order_futures_finish::<Unordered>(0).await;
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

/// The same contract and cases on the bounded set, with its sizes, and a full set's and a
/// zero-capacity set's refusals.
mod bounded {
    use std::future::{Ready, ready};
    use std::task::Poll;

    use futures_core::FusedStream;
    use pinfold_arena::Arena;
    use pinfold_testkit::contract::basics;
    use pinfold_testkit::probe::{Probe, probes};
    use pinfold_testkit::stream::{drain_ready, poll_once};
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
    fn clear_drops_every_future_once_and_keeps_the_set_usable() {
        // Six probes in six slots: the fresh ones fill the set again.
        super::cases::clear_drops_every_future_once_and_keeps_the_set_usable::<Arena<Probe>>(6, 6);
    }

    #[test]
    fn debug_names_the_type_and_counts() {
        super::cases::debug_names_the_type_and_counts(
            FuturesUnorderedBounded::new(3),
            async { 1 },
            &["FuturesUnorderedBounded", "len: 1", "capacity: 3"],
        );
    }

    #[cfg_attr(miri, ignore)] // tokio's timer does not run under Miri
    #[tokio::test(start_paused = true)]
    async fn outputs_come_in_the_order_futures_finish() {
        super::cases::outputs_come_in_the_order_futures_finish::<Bounded>(5).await;
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
}
