//! Keys and generations: a key of a departed value is refused once its slot or group is
//! reused, a slot whose generation runs out is retired, a key names nothing before a growable
//! arena's first group, and a key of one arena names nothing in another.

use std::future::{Ready, ready};
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

/// Asserts that `arena`, holding one value under `own`, refuses `foreign` (a key another arena
/// gave) through every keyed method of [`Storage`], and still holds its value.
fn assert_foreign_refused<A: Storage<Ready<u32>>>(arena: &mut A, foreign: Key, own: Key) {
    assert!(!arena.contains_key(foreign), "contains_key({foreign:?})");
    assert!(arena.get(foreign).is_none(), "get({foreign:?})");
    assert!(
        arena.get_pin_mut(foreign).is_none(),
        "get_pin_mut({foreign:?})"
    );
    assert!(!arena.remove(foreign), "remove({foreign:?})");
    assert_eq!(arena.len(), 1, "a foreign key removed a value");
    assert!(arena.contains_key(own));
    assert_ne!(foreign, own, "two arenas gave the same key");
}

/// [`assert_foreign_refused`] on an [`Arena`], with its own keyed methods (`waker`, `take`);
/// then its value gives its output.
fn assert_arena_refuses(arena: &mut Arena<Ready<u32>>, foreign: Key, own: Key, output: u32) {
    assert_foreign_refused(arena, foreign, own);
    assert!(arena.waker(foreign).is_none(), "waker({foreign:?})");
    assert!(arena.take(foreign).is_none(), "take({foreign:?})");
    assert_eq!(arena.len(), 1);
    assert_eq!(next(arena, Waker::noop()), Poll::Ready(Some(output)));
    assert_eq!(next(arena, Waker::noop()), Poll::Ready(None));
}

/// [`assert_arena_refuses`] for a [`GrowableArena`].
fn assert_growable_refuses(
    arena: &mut GrowableArena<Ready<u32>>,
    foreign: Key,
    own: Key,
    output: u32,
) {
    assert_foreign_refused(arena, foreign, own);
    assert!(arena.waker(foreign).is_none(), "waker({foreign:?})");
    assert!(arena.take(foreign).is_none(), "take({foreign:?})");
    assert_eq!(arena.len(), 1);
    assert_eq!(next(arena, Waker::noop()), Poll::Ready(Some(output)));
    assert_eq!(next(arena, Waker::noop()), Poll::Ready(None));
}

/// Two fresh arenas of the same kind and capacity, one value each in the same slot, after the
/// same history: the key of one is refused by the other, of either kind, and the other's value
/// stays and gives its output.
#[test]
fn a_key_of_another_arena_is_refused_by_every_keyed_method() {
    let mut a = Arena::new(1);
    let mut b = Arena::new(1);
    let in_a = a.insert(ready(1)).unwrap();
    let in_b = b.insert(ready(2)).unwrap();
    assert_arena_refuses(&mut b, in_a, in_b, 2);
    assert_arena_refuses(&mut a, in_b, in_a, 1);

    let mut a = GrowableArena::new();
    let mut b = GrowableArena::new();
    let in_a = a.insert(ready(1));
    let in_b = b.insert(ready(2));
    assert_growable_refuses(&mut b, in_a, in_b, 2);
    assert_growable_refuses(&mut a, in_b, in_a, 1);

    // Across kinds: a growable arena's first group of one slot is an arena of one slot.
    let mut bounded = Arena::new(1);
    let mut growable = GrowableArena::with_capacity(1);
    let in_bounded = bounded.insert(ready(1)).unwrap();
    let in_growable = growable.insert(ready(2));
    assert_growable_refuses(&mut growable, in_bounded, in_growable, 2);
    assert_arena_refuses(&mut bounded, in_growable, in_bounded, 1);
}

/// The key of an arena that was dropped is refused by an arena made after it, which may take
/// its memory.
#[test]
fn a_key_of_a_dropped_arena_is_refused_by_a_new_one() {
    let mut dropped = Arena::new(1);
    let gone = dropped.insert(ready(1)).unwrap();
    drop(dropped);
    let mut arena = Arena::new(1);
    let own = arena.insert(ready(2)).unwrap();
    assert_arena_refuses(&mut arena, gone, own, 2);

    let mut dropped = GrowableArena::new();
    let gone = dropped.insert(ready(1));
    drop(dropped);
    let mut arena = GrowableArena::new();
    let own = arena.insert(ready(2));
    assert_growable_refuses(&mut arena, gone, own, 2);
}

/// A growable arena keeps its own keys apart from another's after it gave its groups back
/// and grew again over the same slots.
#[test]
fn a_key_of_another_growable_arena_is_refused_after_both_regrow() {
    let mut a = GrowableArena::with_capacity(1);
    let mut b = GrowableArena::with_capacity(1);
    for arena in [&mut a, &mut b] {
        // A second group, emptied and given back.
        let first = arena.insert(ready(0));
        let top = arena.insert(ready(0));
        assert_eq!(arena.groups(), 2);
        assert!(arena.remove(top));
        assert!(arena.remove(first));
        assert_eq!(arena.groups(), 1);
    }
    let (kept_a, kept_b) = (a.insert(ready(0)), b.insert(ready(0)));
    let (in_a, in_b) = (a.insert(ready(1)), b.insert(ready(2)));
    assert_eq!((a.group_of(in_a), b.group_of(in_b)), (Some(1), Some(1)));
    assert!(a.remove(kept_a) && b.remove(kept_b));
    assert_growable_refuses(&mut b, in_a, in_b, 2);
    assert_growable_refuses(&mut a, in_b, in_a, 1);
}

/// A waker of a departed value that is kept alive holds its entry: each later value of the slot
/// skips that entry's generation, so the slot counts two generations per value and retires
/// after half as many values as it has generations.
#[test]
fn a_slot_whose_entry_keeps_a_stale_waker_counts_two_generations_per_value() {
    let mut arena = Arena::starting_at_generation(1, LAST_GENERATION - 8);
    let first = arena.insert(ready(0)).unwrap();
    let kept = arena.waker(first).unwrap();
    assert!(arena.remove(first));
    let mut keys = Vec::from([first]);
    while let Ok(key) = arena.insert(ready(0)) {
        assert!(arena.remove(key));
        keys.push(key);
    }
    let generations: Vec<u64> = keys.iter().map(|key| key.generation()).collect();
    let last = LAST_GENERATION;
    assert_eq!(
        generations,
        [last - 7, last - 6, last - 4, last - 2, last],
        "four values after the first take the last seven generations"
    );
    drop(kept);
}
