//! A wake racing the removal of its value.
//!
//! A worker fires slot 0's value and wakes it while the owner removes that value and pushes a
//! new one into the freed slot; the other worker fires and wakes slot 1. The removed value may
//! be woken before, during or after its removal: it must never be polled again, it is dropped
//! exactly once, in place, by the owner; its slot's next occupant is not polled for that wake
//! (the removed value's waker names an entry that the new value is not bound to), and its key
//! is refused.
//!
//! Asserts: the removed value is dropped once, by `remove`, and not polled after; its key is
//! refused once the slot is reused; slot 1's output comes with no lost wake; the new value is
//! polled exactly once (on insert); every value is dropped once in the end, and the wake table
//! is freed (loom's leak check).
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_arena};
use pinfold_arena::{Arena, Storage};

#[test]
fn a_wake_racing_the_removal_of_its_value_polls_nothing_removed() {
    check("arena_wake_races_remove", || {
        let task = Parent::new();
        let mut arena = Arena::new(2);
        let (removed, removed_probe) = Leaf::new(0);
        let (other, other_probe) = Leaf::new(1);
        let removed = arena.insert(removed).unwrap();
        let other = arena.insert(other).unwrap();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(poll_arena(&mut arena, &mut cx), Poll::Pending);

        let mut workers = Workers::new();
        for (probe, waker) in [
            (removed_probe.clone(), arena.waker(removed).unwrap()),
            (other_probe.clone(), arena.waker(other).unwrap()),
        ] {
            workers.spawn(move || {
                probe.fire();
                waker.wake();
            });
        }

        assert!(arena.remove(removed));
        assert_eq!(removed_probe.drops(), 1, "dropped in place by `remove`");
        let (next, next_probe) = Leaf::new(2);
        let next = arena.insert(next).unwrap();
        assert_ne!(next, removed, "the freed slot is reused, under a new key");
        assert!(!arena.remove(removed), "the removed value's key is refused");

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
        assert_eq!(
            next_probe.polls(),
            1,
            "the new value was polled for the removed value's wake"
        );
        assert_eq!(arena.len(), 1);
        assert!(arena.contains_key(next));
        drop(arena);
        assert_eq!(next_probe.drops(), 1);
        assert_eq!((removed_probe.drops(), other_probe.drops()), (1, 1));
    });
}
