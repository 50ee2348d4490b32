//! Two threads waking the same slot at once.
//!
//! Both hold a clone of one slot's waker: one wakes it by value, the other by reference and
//! then drops it. The two wakes must coalesce into one bit of the ready set, one enqueue and one
//! poll, and wake the parent once; a slot queued twice would be polled twice in one call (or,
//! with a corrupted queue, forever).
//!
//! Asserts, when the owner polls after both wakes: the parent was woken exactly once, and the
//! value is polled exactly once. When the owner polls while they race: no poll call polls the
//! value twice, no lost wake (the value sees both wakes: it finishes only once both were sent),
//! and it is polled at most once per wake.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll, Waker};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom_tests::{Leaf, Parent, Workers, check, drive, poll_leaf};
use pinfold_arena::{Arena, Step, Storage};

/// Starts two workers that wake `waker` once each: by value, and by reference then drop.
fn wake_twice(waker: &Waker, before: impl Fn() + Clone + Send + 'static) -> Workers {
    let mut workers = Workers::new();
    let (by_value, by_ref) = (waker.clone(), waker.clone());
    let also = before.clone();
    workers.spawn(move || {
        before();
        by_value.wake();
    });
    workers.spawn(move || {
        also();
        by_ref.wake_by_ref();
        drop(by_ref);
    });
    workers
}

#[test]
fn two_wakes_of_one_slot_cause_one_poll_and_one_parent_wake() {
    check("arena_double_wake_one_poll (wakes, then poll)", || {
        let task = Parent::new();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut arena = Arena::new(2);
        let (leaf, probe) = Leaf::new(0);
        let key = arena.insert(leaf).unwrap();
        assert_eq!(arena.poll_next(&mut cx, poll_leaf), Poll::Pending);
        assert_eq!(probe.polls(), 1);
        task.take_wakes();

        let mut workers = wake_twice(&arena.waker(key).unwrap(), || {});
        workers.join();
        assert_eq!(
            task.take_wakes(),
            1,
            "a burst of wakes wakes the parent once"
        );

        assert_eq!(arena.poll_next(&mut cx, poll_leaf), Poll::Pending);
        assert_eq!(probe.polls(), 2, "two wakes of one slot: one poll");
        assert_eq!(task.take_wakes(), 0, "nothing left to poll: no self-wake");
        assert_eq!(arena.poll_next(&mut cx, poll_leaf), Poll::Pending);
        assert_eq!(probe.polls(), 2, "the slot was queued once");
    });
}

#[test]
fn two_wakes_racing_the_owner_poll_the_slot_at_most_once_per_call() {
    check("arena_double_wake_one_poll (wakes race the poll)", || {
        let task = Parent::new();
        let mut arena = Arena::new(2);
        // The first value is woken twice; it is done once it has seen both wakes. The second is
        // never woken: it keeps the budget of a poll call at 2, so that a value queued twice
        // could be polled twice in one call.
        let sent = Arc::new(AtomicUsize::new(0));
        let (leaf, probe) = Leaf::new(0);
        let (idle, _idle_probe) = Leaf::new(1);
        let woken = arena.insert(leaf).unwrap();
        arena.insert(idle).unwrap();
        let waker = task.waker();
        assert_eq!(
            arena.poll_next(&mut Context::from_waker(&waker), poll_leaf),
            Poll::Pending
        );
        task.take_wakes();

        let count = Arc::clone(&sent);
        let mut workers = wake_twice(&arena.waker(woken).unwrap(), move || {
            // Relaxed: the wake after it must publish it to the owner's poll.
            count.fetch_add(1, Ordering::Relaxed);
        });
        // Polls of the woken value after the first, which happened above.
        let mut polls = 0;
        let outputs = drive(&[&task], &workers, 1, |cx| {
            let mut polled_now = 0;
            let next = arena.poll_next(cx, |key, leaf, cx| {
                if key != woken {
                    return poll_leaf(key, leaf, cx);
                }
                polled_now += 1;
                if sent.load(Ordering::Relaxed) == 2 {
                    Step::Done(leaf.id())
                } else {
                    Step::Pending
                }
            });
            assert!(
                polled_now <= 1,
                "one poll call polled the woken value {polled_now} times"
            );
            polls += polled_now;
            next.map(|next| next.map(|(_, id)| id))
        });
        assert_eq!(outputs, [0]);
        assert_eq!(probe.polls(), 1, "polled on insert, by `poll_leaf`");
        assert!(
            polls <= 2,
            "the woken value was polled {polls} times for two wakes"
        );
        workers.join();
    });
}
