//! Wakes that arrive before the parent task has registered a waker, and while it registers
//! another task's waker.
//!
//! Two values, each fired and woken by its own thread. The threads start before the owner's
//! first poll, so a wake can land before any waker is registered (the parent cell is empty:
//! the wake must stay in the ready set for the collection after registration), between the
//! register and the collection, or during the registration itself. Every poll registers a
//! different task than the one before, so a wake delivered to the old task does not count.
//!
//! Asserts: no lost wake (each `Pending` is followed by a wake of the task that was
//! registered by that poll), both outputs come, each value is polled at most twice (on insert,
//! then after its one wake), the set ends, and the wake table and parent wakers are freed.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_arena};
use pinfold_arena::{Arena, Storage};

#[test]
fn wakes_before_the_parent_registers_are_not_lost() {
    check("arena_wake_before_register", || {
        let mut arena = Arena::new(2);
        let mut workers = Workers::new();
        let mut probes = Vec::new();
        for id in 0..2 {
            let (leaf, probe) = Leaf::new(id);
            let key = arena.insert(leaf).unwrap();
            let waker = arena.waker(key).unwrap();
            let fire = probe.clone();
            workers.spawn(move || {
                fire.fire();
                waker.wake();
            });
            probes.push(probe);
        }

        let tasks = [Parent::new(), Parent::new()];
        let mut outputs = drive(&[&tasks[0], &tasks[1]], &workers, 2, |cx| {
            poll_arena(&mut arena, cx)
        });
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1]);
        for probe in &probes {
            assert!(
                probe.polls() <= 2,
                "a value was polled {} times",
                probe.polls()
            );
            assert_eq!(probe.drops(), 1);
        }
        let waker = tasks[0].waker();
        assert_eq!(
            poll_arena(&mut arena, &mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
        workers.join();
        drop(arena);
        drop(waker);
        for task in &tasks {
            assert_eq!(task.wakers_alive(), 0, "a parent waker outlived the arena");
        }
    });
}
