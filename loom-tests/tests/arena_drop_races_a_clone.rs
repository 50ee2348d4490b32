//! The arena's drop against a worker that clones the waker of a value still held (its entry
//! bound, with no reference to the table of its own), drops the original and wakes by value
//! through the clone, while another worker drops the last waker of a retired entry. The
//! arena's drop retires the held value's entry if its count is above zero when it looks, and
//! the count moves under it.
//!
//! The same with the two wakers' slot past the first of five (a value with no waker left in
//! slot 0): the drop reads four pairs' words, the slot's among them, before it retires any.
//!
//! Asserts: the held value is dropped once; the wake table is freed once, by whoever lets go
//! last: loom's leak check fails the model if a reference is never given up, and one given up
//! twice frees the table while the other party still uses its atomics, which loom reports.
#![cfg(pinfold_loom)]

use std::task::Context;

use loom_tests::{Parent, Workers, check, finish_keeping_a_waker, pend_keeping_a_waker};
use pinfold_arena::Arena;

#[test]
fn a_clone_of_a_held_values_waker_races_the_arena_drop() {
    check("arena_drop_races_a_clone", || race(2, false));
}

#[test]
fn a_clone_of_a_held_values_waker_races_the_arena_drop_past_the_first_pair() {
    check("arena_drop_races_a_clone_past_the_first_pair", || {
        race(5, true)
    });
}

/// The model, in an arena of `capacity` slots; if `first_taken`, slot 0 holds a pending value
/// whose waker was dropped, and the two wakers are of slot 1.
fn race(capacity: usize, first_taken: bool) {
    let task = Parent::new();
    let waker = task.waker();
    let mut cx = Context::from_waker(&waker);
    let mut arena = Arena::new(capacity);
    let first = first_taken.then(|| {
        let (_, probe, kept) = pend_keeping_a_waker(&mut arena, &mut cx, 2);
        drop(kept);
        probe
    });
    let (_, _, stale) = finish_keeping_a_waker(&mut arena, &mut cx, 0);
    let (_, probe, kept) = pend_keeping_a_waker(&mut arena, &mut cx, 1);

    let mut workers = Workers::new();
    workers.spawn(move || {
        let clone = kept.clone();
        drop(kept);
        clone.wake();
    });
    workers.spawn(move || {
        stale.wake_by_ref();
        drop(stale);
    });
    drop(arena);
    assert_eq!(
        probe.drops(),
        1,
        "the held value is dropped by the arena's drop"
    );
    if let Some(first) = first {
        assert_eq!(
            first.drops(),
            1,
            "slot 0's value is dropped by the arena's drop"
        );
    }
    workers.join();
}
