//! The table reference of a retired entry: taken when the arena retires the entry of a value
//! that leaves with owned wakers alive, given up by the drop of the entry's last waker, or by
//! the arena if it binds the entry to a new value first. Counted wakers take no reference of
//! their own, so the table lives on after the arena only through these.
//!
//! `last_waker_of_a_retired_entry_races_the_arena_drop`: in an arena of one slot, a first
//! value keeps a clone of its waker and finishes (its entry retired); a second value, on the
//! slot's other entry, keeps a clone and stays pending. One worker drops the first clone,
//! another wakes the second by value, while the owner drops the arena, which retires the second
//! value's entry if its waker is still alive.
//!
//! `a_shared_entry_gives_its_reference_back_once`: both of the slot's entries are retired with
//! a waker each; one worker drops the older one's waker while the owner inserts a third value,
//! which takes that entry back (free, or shared with the waker still alive), polls it and drops
//! the arena; the other worker drops the newer one's waker.
//!
//! Asserts: every value is dropped once; the wake table is freed, by whoever lets go last:
//! loom's leak check fails the model if a reference is never given up, and one given up twice
//! frees the table while the other party still uses its atomics, which loom reports. A table
//! freed while a waker the arena did not retire can still reach it is not always loud here:
//! the arena's memory tests find it under Miri.
#![cfg(pinfold_loom)]

use std::task::Context;

use loom_tests::{Parent, Workers, check, finish_keeping_a_waker, pend_keeping_a_waker};
use pinfold_arena::Arena;

#[test]
fn last_waker_of_a_retired_entry_races_the_arena_drop() {
    check("arena_retired_entry_reference/drop", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(1);
        let (_, _, stale) = finish_keeping_a_waker(&mut arena, &mut cx, 0);
        let (_, probe, kept) = pend_keeping_a_waker(&mut arena, &mut cx, 1);

        let mut workers = Workers::new();
        workers.spawn(move || drop(stale));
        workers.spawn(move || kept.wake());
        drop(arena);
        assert_eq!(
            probe.drops(),
            1,
            "the pending value is dropped by the arena's drop"
        );
        workers.join();
    });
}

#[test]
fn a_shared_entry_gives_its_reference_back_once() {
    check("arena_retired_entry_reference/share", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(1);
        let (_, _, older) = finish_keeping_a_waker(&mut arena, &mut cx, 0);
        let (_, _, newer) = finish_keeping_a_waker(&mut arena, &mut cx, 1);

        let mut workers = Workers::new();
        workers.spawn(move || drop(older));
        let (_, probe, third) = pend_keeping_a_waker(&mut arena, &mut cx, 2);
        workers.spawn(move || drop(newer));
        drop(third);
        drop(arena);
        assert_eq!(
            probe.drops(),
            1,
            "the third value is dropped by the arena's drop"
        );
        workers.join();
    });
}
