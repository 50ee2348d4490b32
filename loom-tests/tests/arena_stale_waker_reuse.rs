//! A stale waker woken and dropped on other threads while its slot takes a new value.
//!
//! In an arena of one slot, a value clones the waker it is polled with and finishes, so its
//! slot is free while owned wakers of it are alive. Two workers hold them: one wakes its clone
//! by reference and drops it, the other wakes its clone by value. Meanwhile the owner inserts a
//! new value, which takes the same slot, and polls it. The slot's values take its two entries
//! in turn, so the new value is bound to the other entry: the stale wakes mark the departed
//! value's entry, which the slot's value does not have, and the last drop of a stale waker
//! lets that entry be reused later.
//!
//! Asserts: the new value is polled exactly once (its first poll), never because of a stale
//! wake, however the wakes and drops interleave with the insert and the polls; the departed
//! value was polled once and dropped once, and its key is refused; the new value's key holds.
//! Loom's leak check finds the wake table freed once the arena and every waker are gone.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, finish_keeping_a_waker};
use pinfold_arena::{Arena, Key, Step, Storage};

/// One poll of the arena, in which the value of `new` is pending for good, counting its polls.
fn poll(arena: &mut Arena<Leaf>, new: Key, cx: &mut Context<'_>, polls: &mut usize) {
    let next = arena.poll_next(cx, |key, _, _| -> Step<()> {
        assert_eq!(key, new, "a departed value was polled");
        *polls += 1;
        Step::Pending
    });
    assert_eq!(next, Poll::Pending, "the new value never finishes");
}

#[test]
fn a_stale_wake_never_polls_the_value_that_took_its_slot() {
    check("arena_stale_waker_reuse", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(1);

        // The first value clones its waker and finishes in the same poll.
        let (first, first_probe, by_ref) = finish_keeping_a_waker(&mut arena, &mut cx, 0);
        let by_value = by_ref.clone();

        let mut workers = Workers::new();
        workers.spawn(move || {
            by_ref.wake_by_ref();
            drop(by_ref);
        });
        workers.spawn(move || by_value.wake());

        let (second, second_probe) = Leaf::new(1);
        let second = arena.insert(second).unwrap();
        assert_ne!(second, first, "one slot, two values: two keys");
        let mut polls = 0;
        // Polls while the stale wakes may arrive, then after they all have.
        poll(&mut arena, second, &mut cx, &mut polls);
        poll(&mut arena, second, &mut cx, &mut polls);
        workers.join();
        for _ in 0..2 {
            poll(&mut arena, second, &mut cx, &mut polls);
        }
        assert_eq!(
            polls, 1,
            "the new value was polled for a stale wake of the value before it"
        );

        assert!(
            !arena.contains_key(first),
            "the departed value's key is refused"
        );
        assert!(!arena.remove(first));
        assert!(arena.remove(second));
        assert_eq!(second_probe.drops(), 1);
        assert_eq!(first_probe.polls(), 1);
        drop(arena);
        drop(waker);
        assert_eq!(task.wakers_alive(), 0, "a parent waker outlived the arena");
    });
}
