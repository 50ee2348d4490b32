//! A wake racing the removal of its value.
//!
//! A worker fires slot 0's value and wakes it while the owner removes that value and pushes a
//! new one into the freed slot; the other worker fires and wakes slot 1. The removed value may
//! be woken before, during or after its removal: it must never be polled again, it is dropped
//! exactly once, in place, by the owner; its slot's next occupant may be polled once
//! spuriously (the documented cost of having no generation counter), and no more.
//!
//! Asserts: the removed value is dropped once, by `remove`, and not polled after; slot 1's
//! output comes with no lost wake; the new value is polled at most twice (on insert, and at
//! most once for the stale wake); every value is dropped once in the end, and the wake table
//! is freed (loom's leak check).
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_arena};
use pinfold_arena::Arena;

#[test]
fn a_wake_racing_the_removal_of_its_value_polls_nothing_removed() {
    check("arena_wake_races_remove", || {
        let task = Parent::new();
        let mut arena = Arena::new(2);
        let (removed, removed_probe) = Leaf::new(0);
        let (other, other_probe) = Leaf::new(1);
        assert_eq!(arena.insert(removed).ok(), Some(0));
        assert_eq!(arena.insert(other).ok(), Some(1));
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(poll_arena(&mut arena, &mut cx), Poll::Pending);

        let mut workers = Workers::new();
        for (probe, waker) in [
            (removed_probe.clone(), arena.waker(0)),
            (other_probe.clone(), arena.waker(1)),
        ] {
            workers.spawn(move || {
                probe.fire();
                waker.wake();
            });
        }

        assert!(arena.remove(0));
        assert_eq!(removed_probe.drops(), 1, "dropped in place by `remove`");
        let (next, next_probe) = Leaf::new(2);
        assert_eq!(arena.insert(next).ok(), Some(0), "the freed slot is reused");

        let outputs = drive(&[&task], &workers, 1, |cx| poll_arena(&mut arena, cx));
        assert_eq!(outputs, [1]);
        workers.join();
        // Let any wake still in the set reach the new value.
        for _ in 0..2 {
            assert_eq!(poll_arena(&mut arena, &mut cx), Poll::Pending);
        }
        assert_eq!(
            removed_probe.polls(),
            1,
            "the removed value was polled after removal"
        );
        assert!(
            next_probe.polls() <= 2,
            "the new value was polled {} times: more than one spurious poll",
            next_probe.polls()
        );
        assert_eq!(arena.len(), 1);
        drop(arena);
        assert_eq!(next_probe.drops(), 1);
        assert_eq!((removed_probe.drops(), other_probe.drops()), (1, 1));
    });
}
