//! The two entries of a slot share one state word: wakers of both change it at once.
//!
//! In an arena of one slot, a first value clones its waker and finishes, leaving a stale
//! waker of the slot's first entry. A second value, bound to the slot's other entry (the same
//! state word), clones its waker and stays pending. One worker drops the stale waker; the
//! other wakes the second value's clone by value (a wake and a drop). Meanwhile the owner polls
//! the second value, removes it (its entry retired or freed, depending on whether the clone is
//! gone yet), inserts a third value and polls it.
//!
//! Asserts: the third value is polled exactly once (its first poll), never for a wake of
//! either departed value, however the two workers' changes to the shared word interleave with
//! the owner's; a fourth value, once both workers are done, is polled once too (both entries
//! were given back whole). Loom's leak check finds the wake table freed.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, finish_keeping_a_waker, pend_keeping_a_waker};
use pinfold_arena::{Arena, Key, Step, Storage};

/// One poll of the arena, in which the value of `only` is pending for good, counting its
/// polls.
fn poll(arena: &mut Arena<Leaf>, only: Key, cx: &mut Context<'_>, polls: &mut usize) {
    let next = arena.poll_next(cx, |key, _, _| -> Step<()> {
        assert_eq!(key, only, "a departed value was polled");
        *polls += 1;
        Step::Pending
    });
    assert_eq!(next, Poll::Pending, "the value never finishes");
}

/// Inserts a pending value and polls it twice: it must be polled only by its first poll.
fn assert_polled_once(arena: &mut Arena<Leaf>, id: usize, cx: &mut Context<'_>, why: &str) {
    let (value, _probe) = Leaf::new(id);
    let key = arena.insert(value).unwrap();
    let mut polls = 0;
    poll(arena, key, cx, &mut polls);
    poll(arena, key, cx, &mut polls);
    assert_eq!(polls, 1, "{why}");
    assert!(arena.remove(key));
}

#[test]
fn wakers_of_both_entries_of_a_slot_race_the_owner() {
    check("arena_pair_word_races", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(1);

        // The first value clones its waker and finishes in the same poll.
        let (_, _, stale) = finish_keeping_a_waker(&mut arena, &mut cx, 0);

        // The second value, on the slot's other entry, keeps a clone of its waker.
        let (second, _second_probe, kept) = pend_keeping_a_waker(&mut arena, &mut cx, 1);

        let mut workers = Workers::new();
        workers.spawn(move || drop(stale));
        workers.spawn(move || kept.wake());

        let mut polls = 0;
        poll(&mut arena, second, &mut cx, &mut polls);
        assert!(arena.remove(second));
        assert_polled_once(
            &mut arena,
            2,
            &mut cx,
            "a value was polled for a wake of a departed one",
        );
        workers.join();
        assert_polled_once(
            &mut arena,
            3,
            &mut cx,
            "an entry's state was not given back whole",
        );
        drop(arena);
        drop(waker);
        assert_eq!(task.wakers_alive(), 0, "a parent waker outlived the arena");
    });
}
