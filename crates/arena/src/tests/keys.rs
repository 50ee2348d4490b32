//! Keys and generations: a key of a departed value is refused once its slot or group is
//! reused, a slot whose generation runs out is retired, and a key names nothing before a
//! growable arena's first group.

use std::future::ready;
use std::task::{Poll, Waker};

use super::next;
use crate::storage::store::RETIRED_GENERATION as LAST_GENERATION;
use crate::{Arena, GrowableArena, Key, Storage};
use alloc::vec::Vec;

#[test]
fn a_key_of_a_departed_value_is_refused_after_its_slot_is_reused() {
    let mut arena = Arena::new(1);
    let removed = arena.insert(ready(1)).unwrap();
    assert!(arena.remove(removed));
    let finished = arena.insert(ready(2)).unwrap();
    assert_ne!(finished, removed, "one slot, two stays: two keys");
    assert_eq!(next(&mut arena, Waker::noop()), Poll::Ready(Some(2)));
    let current = arena.insert(ready(3)).unwrap();
    for stale in [removed, finished] {
        assert_ne!(stale, current);
        assert!(!arena.contains_key(stale));
        assert!(arena.get(stale).is_none());
        assert!(arena.get_pin_mut(stale).is_none());
        assert!(arena.waker(stale).is_none());
        assert!(arena.take(stale).is_none());
        assert!(!arena.remove(stale));
    }
    assert!(
        arena.contains_key(current),
        "a stale key removed the current value"
    );
    assert_eq!(arena.take(current).map(|r| r.into_inner()), Some(3));
}

#[test]
fn a_slot_whose_generation_runs_out_is_retired_and_its_keys_stay_refused() {
    let mut arena = Arena::starting_at_generation(1, LAST_GENERATION - 2);
    let before_last = arena.insert(1).unwrap();
    assert!(arena.remove(before_last));
    let last = arena.insert(2).unwrap();
    assert_eq!(
        arena.get(last),
        Some(&2),
        "the last generation holds a value like any other"
    );
    assert!(arena.remove(last));
    assert_eq!(arena.insert(3), Err(3), "a retired slot takes no value");
    assert!(arena.is_full() && arena.is_empty());
    for stale in [before_last, last] {
        assert!(!arena.contains_key(stale));
        assert!(arena.get(stale).is_none());
        assert!(!arena.remove(stale));
    }

    let mut arena = Arena::starting_at_generation(2, LAST_GENERATION - 1);
    let retiring = arena.insert(1).unwrap();
    assert!(arena.remove(retiring));
    let kept = arena.insert(2).unwrap();
    assert_eq!(
        arena.get(kept),
        Some(&2),
        "the other slot still takes values"
    );
    assert!(!arena.contains_key(retiring));
    assert_eq!(arena.insert(4), Err(4));

    // A new group of a growable arena starts past every generation its released groups gave:
    // when that is the last, its slots are retired from the start.
    let mut arena = Arena::starting_at_generation(2, LAST_GENERATION);
    assert_eq!(arena.insert(5), Err(5), "every slot is retired");
    assert!(arena.is_full() && arena.is_empty());
}

#[test]
fn a_growable_arena_whose_last_free_slot_is_retired_adds_a_group() {
    let mut arena = GrowableArena::starting_at_generation(1, LAST_GENERATION - 1);
    let last = arena.insert(1);
    assert!(arena.remove(last));
    let next = arena.insert(2);
    assert_eq!(arena.groups(), 2, "the retired slot is passed over");
    assert_ne!(next, last);
    assert!(!arena.contains_key(last));
    assert!(!arena.remove(last));
    assert_eq!(arena.get(next), Some(&2));
    assert_eq!(arena.len(), 1);
    let more: Vec<Key> = (0..40).map(|value| arena.insert(value)).collect();
    assert!(more.iter().all(|&key| arena.contains_key(key)));
    assert_eq!(arena.len(), 41);
}

#[test]
fn a_growable_arena_with_no_group_yet_has_no_key() {
    let mut arena: GrowableArena<u8> = GrowableArena::new();
    let key = Key::new(0, 0);
    assert!(!arena.contains_key(key));
    assert_eq!(arena.get(key), None);
    assert!(arena.waker(key).is_none());
    assert!(!arena.remove(key));
    assert_eq!(arena.groups(), 0);
    let mut arena: GrowableArena<u8> = GrowableArena::with_capacity(0);
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (0, 0),
        "with_capacity(0) is new"
    );
    assert!(arena.is_empty());
    arena.insert(1);
    assert!(!arena.is_empty());
}

#[test]
fn a_key_of_a_released_group_is_refused_by_the_group_that_replaces_it() {
    let mut arena = GrowableArena::with_capacity(2);
    let first = arena.insert(1);
    arena.insert(2);
    let top = arena.insert(3);
    assert_eq!((arena.groups(), arena.group_of(top)), (2, Some(1)));
    assert!(arena.remove(first));
    // The top group is empty and one value is left in the two slots below: it is released.
    assert!(arena.remove(top));
    assert_eq!(arena.groups(), 1);
    let fourth = arena.insert(4);
    assert_eq!(
        arena.group_of(fourth),
        Some(0),
        "the free slot below is taken first"
    );
    let replacing = arena.insert(5);
    assert_eq!((arena.groups(), arena.group_of(replacing)), (2, Some(1)));
    assert_ne!(replacing, top);
    assert!(!arena.contains_key(top));
    assert!(arena.get(top).is_none());
    assert!(arena.waker(top).is_none());
    assert!(!arena.remove(top));
    assert!(!arena.contains_key(first));
    assert_eq!(arena.get(replacing), Some(&5));
    assert_eq!(arena.len(), 3);
}
