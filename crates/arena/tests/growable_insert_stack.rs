//! A growable arena's insert into full groups takes the same stack however the values came
//! and went: finding every group full adds a group at once, with the value moved once.

// Miri's stack is its own, and ThreadSanitizer's instrumentation (`cargo xtask tsan` sets
// `pinfold_tsan`) takes stack of its own: the checks are about an uninstrumented thread's.
#![cfg(not(any(miri, pinfold_tsan)))]

use pinfold_arena::{GrowableArena, Key, Storage};

/// A large value, so that every copy of it on the stack shows.
#[expect(dead_code, reason = "only its size matters: the stack its copies take")]
struct Big([u64; 2048]); // 16 KiB

const GROUPS: usize = 10;

/// An arena of `GROUPS` full groups; if `churned`, a value of each group (top one first) was
/// removed and another inserted, so every group filled again by an insert.
fn full_arena(churned: bool) -> GrowableArena<Big> {
    let (mut arena, mut by_group) = (GrowableArena::new(), Vec::<Vec<Key>>::new());
    while !(arena.groups() == GROUPS && arena.len() == arena.capacity()) {
        let key = arena.insert(Big([7; 2048]));
        by_group.resize_with(arena.groups(), Vec::new);
        by_group[arena.groups() - 1].push(key);
    }
    for group in (0..GROUPS).rev().filter(|_| churned) {
        assert!(Storage::remove(&mut arena, by_group[group][0]));
        arena.insert(Big([7; 2048]));
        assert_eq!(arena.groups(), GROUPS, "the free slot was taken");
    }
    arena
}

/// Inserts one more value into `arena` on a thread of a small stack (room for a few copies of
/// a `Big` in an optimised build, for the more a debug build makes); returns the groups then.
fn insert_on_small_stack(mut arena: GrowableArena<Big>) -> usize {
    let stack = if cfg!(debug_assertions) { 1024 } else { 96 } << 10;
    let run = move || {
        arena.insert(Big([7; 2048]));
        arena.groups()
    };
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn an_insert_into_full_groups_fits_a_small_stack() {
    assert_eq!(insert_on_small_stack(full_arena(false)), GROUPS + 1);
}

#[test]
fn an_insert_into_groups_that_filled_again_fits_the_same_stack() {
    assert_eq!(insert_on_small_stack(full_arena(true)), GROUPS + 1);
}
