//! The arena as a container: counting, inserting, removing, taking, iterating, clearing and
//! dropping its values.

use std::future::ready;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Poll, Waker};

use super::{DropCounter, next};
use crate::{Arena, GrowableArena, Key, Storage};
use alloc::vec::Vec;

#[test]
fn a_fixed_arena_counts_its_values_and_shows_them_in_debug() {
    let mut arena = Arena::new(3);
    assert!(arena.is_empty() && !arena.is_full());
    let key = arena.insert(ready(1)).unwrap();
    assert!(!arena.is_empty(), "it holds a value");
    assert_eq!((arena.len(), arena.capacity()), (1, 3));
    assert_eq!(
        alloc::format!("{arena:?}"),
        "Arena { len: 1, capacity: 3, .. }"
    );
    assert!(arena.remove(key));
    assert!(arena.is_empty());
}

#[test]
fn a_fixed_arenas_iterators_count_down_to_the_last_value() {
    let mut arena = Arena::new(4);
    for value in [1, 2, 3] {
        arena.insert(value).unwrap();
    }
    let mut iter = arena.iter();
    for left in (0..3).rev() {
        assert!(iter.next().is_some());
        assert_eq!((iter.len(), iter.size_hint()), (left, (left, Some(left))));
    }
    assert!(iter.next().is_none());
    let mut iter = arena.iter_pin_mut();
    for left in (0..3).rev() {
        assert!(iter.next().is_some());
        assert_eq!((iter.len(), iter.size_hint()), (left, (left, Some(left))));
    }
    assert!(iter.next().is_none());
    let mut values = arena.into_values();
    assert_eq!(values.next(), Some(1));
    assert_eq!(values.len(), 2);
    assert_eq!(alloc::format!("{values:?}"), "IntoValues { len: 2, .. }");
}

#[test]
fn a_keyed_set_counts_its_values() {
    let mut set = crate::KeyedSet::<_, Arena<_>, crate::Futures>::new(2);
    assert!(set.is_empty() && !set.is_full());
    set.push(ready(1u8));
    assert!(!set.is_empty(), "it holds a future");
    assert!(!set.is_full());
    set.push(ready(2));
    assert!(set.is_full());
    assert_eq!(set.len(), 2);
}

#[test]
fn zero_capacity_refuses_everything() {
    let mut arena = Arena::new(0);
    assert_eq!(
        arena.insert(ready(7)).err().map(|r| r.into_inner()),
        Some(7)
    );
    assert!(arena.is_full());
    assert!(matches!(next(&mut arena, Waker::noop()), Poll::Ready(None)));
}

#[test]
fn dropping_the_arena_drops_every_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(8);
    let keys: Vec<Key> = (0..5)
        .map(|_| arena.insert(DropCounter(drops.clone())).unwrap())
        .collect();
    assert!(arena.remove(keys[2]));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn clear_drops_everything_and_keeps_the_arena_usable() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = (0..3)
        .map(|_| arena.insert(DropCounter(drops.clone())).unwrap())
        .collect();
    arena.clear();
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    assert!(arena.is_empty());
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
    for _ in 0..3 {
        arena.insert(DropCounter(drops.clone())).unwrap();
    }
    assert!(arena.is_full());
    assert_eq!(arena.iter().count(), 3);
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
}

#[test]
fn iterators_visit_every_value_once() {
    let mut arena = Arena::new(5);
    let keys: Vec<Key> = (0..5u32).map(|v| arena.insert(v).unwrap()).collect();
    arena.remove(keys[1]);
    arena.remove(keys[3]);
    let seen: Vec<_> = arena.iter().map(|(k, v)| (k, *v)).collect();
    assert_eq!(seen, [(keys[0], 0), (keys[2], 2), (keys[4], 4)]);
    assert_eq!(arena.iter().len(), 3);
    for (_, v) in arena.iter_pin_mut() {
        *v.get_mut() += 10;
    }
    let seen: Vec<_> = arena.iter().map(|(_, v)| *v).collect();
    assert_eq!(seen, [10, 12, 14]);
    assert_eq!(arena.take(keys[0]), Some(10));
    assert_eq!(arena.take(keys[0]), None);
    assert_eq!(arena.len(), 2);
}

/// Inserts and removes in `arena`, in an order drawn from `seed`, against a list of the values
/// it should hold: an insert succeeds exactly while a slot is free (one a value left, or one no
/// value has taken yet; a growable arena, `capacity` `None`, always has one), every held value
/// is found by its key and by the iterator, no key of a value gone finds one, and every value
/// is dropped once. Returns how many times the arena's capacity grew, how many it shrank, and
/// how many it grew after it had shrunk.
fn fill_and_empty_in_turns<S: Storage<(usize, DropCounter)>>(
    mut arena: S,
    capacity: Option<usize>,
    seed: u64,
    steps: usize,
) -> (usize, usize, usize) {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut held: Vec<(Key, usize)> = Vec::new();
    let mut gone: Vec<Key> = Vec::new();
    let mut state = seed;
    let mut inserted = 0;
    let (mut grew, mut shrank, mut regrew) = (0, 0, 0);
    let mut slots = arena.capacity();
    for step in 0..steps {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let draw = (state >> 33) as usize;
        // Mostly inserts, then mostly removes, in turns of 40 steps, so that a growable arena
        // adds groups and gives them back.
        let filling = step / 40 % 2 == 0;
        if (draw % 4 != 0) == filling || held.is_empty() {
            match arena.insert((inserted, DropCounter(drops.clone()))) {
                Ok(key) => {
                    assert!(Some(held.len()) != capacity, "more values than slots");
                    held.push((key, inserted));
                }
                Err(refused) => {
                    assert_eq!(Some(held.len()), capacity, "a free slot was not found");
                    assert_eq!(refused.0, inserted, "the value comes back");
                }
            }
            inserted += 1;
        } else {
            let (key, _) = held.swap_remove(draw % held.len());
            assert!(arena.remove(key));
            gone.push(key);
        }
        assert_eq!(arena.is_full(), Some(held.len()) == capacity);
        assert_eq!(arena.len(), held.len());
        for &(key, value) in &held {
            assert_eq!(arena.get(key).map(|held| held.0), Some(value));
        }
        assert!(gone.iter().all(|&key| !arena.contains_key(key)));
        let mut seen: Vec<usize> = arena.iter().map(|(_, held)| held.0).collect();
        let mut expected: Vec<usize> = held.iter().map(|&(_, value)| value).collect();
        seen.sort_unstable();
        expected.sort_unstable();
        assert_eq!(seen, expected);
        let now = arena.capacity();
        grew += usize::from(now > slots);
        regrew += usize::from(now > slots && shrank > 0);
        shrank += usize::from(now < slots);
        slots = now;
    }
    drop(arena);
    assert_eq!(
        drops.load(Ordering::Relaxed),
        inserted,
        "every value dropped once"
    );
    (grew, shrank, regrew)
}

#[test]
fn a_fixed_arena_takes_every_slot_freed_or_never_used_in_any_order() {
    // Under Miri, fewer: none, one, and a few slots.
    let (capacities, seeds): (&[usize], u64) = if cfg!(miri) {
        (&[0, 1, 3, 5], 2)
    } else {
        (&[0, 1, 2, 3, 4, 5], 4)
    };
    for &capacity in capacities {
        for seed in 0..seeds {
            let resized = fill_and_empty_in_turns(Arena::new(capacity), Some(capacity), seed, 64);
            assert_eq!(resized, (0, 0, 0), "a fixed arena's capacity changed");
        }
    }
}

#[test]
fn a_growable_arena_takes_every_slot_freed_or_never_used_in_any_order() {
    // First groups of a few slots: the next ones are added within the first turn of inserts
    // (a first group of 32, the default, holds a whole turn's values). Under Miri, one seed
    // whose turns add groups, release one and add one again.
    let (capacities, seeds, steps): (&[usize], &[u64], usize) = if cfg!(miri) {
        (&[1], &[1], 120)
    } else {
        (&[1, 2, 3], &[0, 1, 2, 3], 300)
    };
    for &capacity in capacities {
        let (mut grew, mut shrank, mut regrew) = (0, 0, 0);
        for &seed in seeds {
            let arena = GrowableArena::with_capacity(capacity);
            let resized = fill_and_empty_in_turns(arena, None, seed, steps);
            grew += resized.0;
            shrank += resized.1;
            regrew += resized.2;
        }
        // The turns reach past the first group, and empty the arena enough to release one.
        assert!(grew > 0, "no group added to a first group of {capacity}");
        assert!(
            shrank > 0,
            "no group released over a first group of {capacity}"
        );
        assert!(
            regrew > 0,
            "no group added after a release over a first group of {capacity}"
        );
    }
}
