//! Keys: `insert` names a future, `poll_next_keyed` names the future of each output, `remove`
//! drops a future at once, and stale keys and stale wakers touch nothing (the contract is
//! `pinfold_testkit::contract::keys`). `with_capacity(1)` makes a first group of one slot, so
//! a future inserted after another finished takes its slot. A full bounded set refuses
//! `insert` and `try_insert`. A key of a set of the other kind is refused too.

use pinfold_unordered::{FuturesUnordered, Key};

pinfold_testkit::set_under_test!(Unordered: FuturesUnordered::with_capacity, Key);
pinfold_testkit::contract_tests!(Unordered: keys);

/// A key names its group by number, and a group added while the set grows back takes the
/// number of one released before, larger or smaller: a key of the released one is refused.
#[test]
fn a_key_of_a_released_group_is_refused_after_the_set_grows_back_over_it() {
    use std::future::{Pending, pending};

    let mut set: FuturesUnordered<Pending<()>> = FuturesUnordered::new();
    let mut below: Vec<Key> = (0..64).map(|_| set.insert(pending())).collect();
    // Group 2 appears; its first slot ages by two stays.
    let mut aged = set.insert(pending());
    for _ in 0..2 {
        assert!(set.remove(aged));
        aged = set.insert(pending());
    }
    assert!(set.remove(aged));
    for key in below.drain(..) {
        assert!(set.remove(key));
    }
    assert!(set.is_empty());
    let capacity = set.capacity();
    // Groups 1 (96 slots, where the first had 32) and 2 come back.
    below.extend((0..128).map(|_| set.insert(pending())));
    let regrown = set.insert(pending());
    assert!(
        set.capacity() > capacity + 96,
        "the set grew back past its second group"
    );
    assert_ne!(regrown, aged);
    assert!(!set.contains_key(aged), "a departed key is refused");
    assert!(set.get(aged).is_none());
    assert!(!set.remove(aged), "a departed key removes nothing");
    assert!(set.contains_key(regrown), "the new future is still there");
    assert_eq!(set.len(), 129);
}

/// The same contract on the bounded set.
mod bounded {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::task::Poll;

    use pinfold_testkit::contract::{panic_message, poll_keyed};
    use pinfold_testkit::probe::probes;
    use pinfold_unordered::{FuturesUnorderedBounded, Key};

    pinfold_testkit::set_under_test!(Bounded: FuturesUnorderedBounded::new, Key);
    pinfold_testkit::contract_tests!(Bounded: keys);

    #[test]
    fn insert_into_a_full_set_panics_with_its_capacity() {
        let (futures, states) = probes(3);
        let mut futures = futures.into_iter();
        let mut set = FuturesUnorderedBounded::new(2);
        set.insert(futures.next().unwrap());
        set.insert(futures.next().unwrap());
        let extra = futures.next().unwrap();
        let refused = catch_unwind(AssertUnwindSafe(|| set.insert(extra)));
        let panic = refused.expect_err("insert into a full set did not panic");
        assert_eq!(
            panic_message(&*panic),
            "FuturesUnorderedBounded is full (capacity 2)"
        );
        assert_eq!(set.len(), 2);
        assert_eq!(states[2].drops(), 1, "the refused future was leaked");
        assert!(states[..2].iter().all(|state| state.drops() == 0));
    }

    #[test]
    fn try_insert_into_a_full_set_gives_the_future_back() {
        let (futures, states) = probes(2);
        let mut futures = futures.into_iter();
        let mut set = FuturesUnorderedBounded::new(1);
        let first = set.insert(futures.next().unwrap());
        let Err(back) = set.try_insert(futures.next().unwrap()) else {
            panic!("a full set took a future");
        };
        assert_eq!(back.id(), 1);
        assert_eq!(states[1].drops(), 0);
        assert_eq!(set.len(), 1);

        // Once there is room, the same future goes in.
        states[0].open();
        assert_eq!(
            poll_keyed::<Bounded, _>(&mut set),
            Poll::Ready(Some((first, 0)))
        );
        let Ok(second) = set.try_insert(back) else {
            panic!("a set with room refused a future");
        };
        assert!(set.contains_key(second));
        states[1].open();
        assert_eq!(
            poll_keyed::<Bounded, _>(&mut set),
            Poll::Ready(Some((second, 1)))
        );
    }
}

/// `iter_keyed` and `iter_pin_mut_keyed` pair each future with the key `insert` returned for
/// it, on either set: one check over the one set type both are.
fn iter_keyed_pairs_each_future_with_its_key<A, S>(mut set: S)
where
    A: pinfold_arena::Storage<pinfold_testkit::probe::Probe>,
    S: core::ops::DerefMut<
            Target = pinfold_unordered::UnorderedSet<pinfold_testkit::probe::Probe, A>,
        >,
{
    let (futures, _states) = pinfold_testkit::probe::probes(40);
    let keys: Vec<Key> = futures.into_iter().map(|fut| set.insert(fut)).collect();
    assert!(set.remove(keys[7]));
    let mut seen: Vec<(Key, usize)> = set.iter_keyed().map(|(key, fut)| (key, fut.id())).collect();
    seen.sort_by_key(|&(_, id)| id);
    let expected: Vec<(Key, usize)> = keys
        .iter()
        .enumerate()
        .filter(|&(id, _)| id != 7)
        .map(|(id, &key)| (key, id))
        .collect();
    assert_eq!(seen, expected);
    let mut pinned: Vec<(Key, usize)> = set
        .iter_pin_mut_keyed()
        .map(|(key, fut)| (key, fut.id()))
        .collect();
    pinned.sort_by_key(|&(_, id)| id);
    assert_eq!(pinned, expected);
    let mut ids: Vec<usize> = set.iter().map(|fut| fut.id()).collect();
    ids.sort();
    assert_eq!(ids, expected.iter().map(|&(_, id)| id).collect::<Vec<_>>());
}

#[test]
fn iter_keyed_pairs_each_future_with_the_key_insert_returned() {
    iter_keyed_pairs_each_future_with_its_key(FuturesUnordered::with_capacity(8));
    iter_keyed_pairs_each_future_with_its_key(pinfold_unordered::FuturesUnorderedBounded::new(40));
}

#[test]
fn keyed_names_each_output_and_ends_with_the_set() {
    use futures_core::{FusedStream, Stream};
    use pinfold_testkit::probe::Probe;
    use pinfold_testkit::stream::poll_once;
    use std::task::Poll;

    let mut set = FuturesUnordered::new();
    let (first, first_state) = Probe::new(1);
    let (second, second_state) = Probe::new(2);
    let first = set.insert(first);
    let second = set.insert(second);
    let mut keyed = set.keyed();
    assert_eq!(keyed.size_hint(), (2, Some(2)));
    assert_eq!(poll_once(&mut keyed), Poll::Pending);
    second_state.finish();
    assert_eq!(poll_once(&mut keyed), Poll::Ready(Some((second, 2))));
    first_state.finish();
    assert_eq!(poll_once(&mut keyed), Poll::Ready(Some((first, 1))));
    assert!(!keyed.is_terminated());
    assert_eq!(poll_once(&mut keyed), Poll::Ready(None));
    assert!(keyed.is_terminated());
    drop(keyed);
    assert!(set.is_terminated(), "the adapter ended the set itself");
    assert!(!set.contains_key(first) && !set.contains_key(second));
}

#[test]
fn keyed_reaches_the_set_so_futures_can_be_added_while_it_streams() {
    use futures_util::StreamExt;
    use std::future::ready;

    let mut set = FuturesUnordered::new();
    let first = set.insert(ready(1));
    let mut keyed = set.keyed();
    let mut outputs = Vec::new();
    futures_executor::block_on(async {
        while let Some((key, n)) = keyed.next().await {
            outputs.push((key, n));
            if n < 3 {
                keyed.push(ready(n + 1));
            }
        }
    });
    assert_eq!(outputs.len(), 3);
    assert_eq!(outputs[0], (first, 1));
    assert_eq!(
        outputs.iter().map(|&(_, n)| n).collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

/// A key of a bounded set is refused by a growable one and the other way round, and the
/// future under the other key stays (a growable set's first group of one slot is a bounded
/// set of one slot).
#[test]
fn a_key_of_a_set_of_the_other_kind_is_refused() {
    use pinfold_testkit::probe::Probe;
    use pinfold_unordered::FuturesUnorderedBounded;

    let mut bounded = FuturesUnorderedBounded::new(1);
    let mut growable = FuturesUnordered::with_capacity(1);
    let (probe, bounded_state) = Probe::new(1);
    let in_bounded = bounded.insert(probe);
    let (probe, growable_state) = Probe::new(2);
    let in_growable = growable.insert(probe);
    assert!(!growable.contains_key(in_bounded));
    assert!(growable.get(in_bounded).is_none());
    assert!(growable.get_pin_mut(in_bounded).is_none());
    assert!(!growable.remove(in_bounded));
    assert!(!bounded.contains_key(in_growable));
    assert!(bounded.get(in_growable).is_none());
    assert!(bounded.get_pin_mut(in_growable).is_none());
    assert!(!bounded.remove(in_growable));
    assert_eq!((bounded.len(), growable.len()), (1, 1));
    assert_eq!(bounded_state.drops() + growable_state.drops(), 0);
    assert_eq!(growable.get(in_growable).map(Probe::id), Some(2));
    assert_eq!(bounded.get(in_bounded).map(Probe::id), Some(1));
}
