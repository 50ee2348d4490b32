//! A `JoinArena` (a join's) armed after its values were polled with the task's waker: one
//! value wakes through its own waker from another thread, the other through the task's.
//!
//! Two values. Value 0, polled with its own waker for the first time, hands a clone of it to
//! worker A, which fires the value and wakes it by value (wake and drop) while the owner may
//! be anywhere in its rounds. Value 1 keeps no waker (it holds the task's, from before the
//! arena was armed); worker B fires it and wakes the task directly. The owner drives the arena
//! as an executor would, waiting for a wake after each `Pending`.
//!
//! Asserts: both outputs come (no wake is lost: not A's, which races the owner's rounds and
//! the owner's check of whether value 0 kept a waker; not B's, which reaches the arena only
//! through the task), within the model's poll bound; value 0 is polled at most twice (its
//! first poll, and once after its wake), value 1 by every round until it is fired. Loom's leak
//! check finds the wake table freed once the arena and the waker are gone.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll, Waker};

use loom::sync::{Arc, Mutex};
use loom_tests::{Leaf, Parent, Workers, check, drive};
use pinfold_arena::{JoinArena, Step};

#[test]
fn own_and_task_wakes_both_reach_an_armed_join_arena() {
    check("join_arena_own_and_task_wakes", || {
        let task = Parent::new();
        let (first, first_probe) = Leaf::new(0);
        let (second, second_probe) = Leaf::new(1);
        let mut arena = JoinArena::new([first, second]);
        arena.arm(|_| true);

        let handoff: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let mut workers = Workers::new();
        {
            let handoff = Arc::clone(&handoff);
            let probe = Arc::clone(&first_probe);
            workers.spawn(move || {
                let waker = loop {
                    if let Some(waker) = handoff.lock().unwrap().take() {
                        break waker;
                    }
                    loom::thread::yield_now();
                };
                probe.fire();
                waker.wake();
            });
        }
        {
            let probe = Arc::clone(&second_probe);
            let task_waker = task.waker();
            workers.spawn(move || {
                probe.fire();
                task_waker.wake();
            });
        }

        let mut handed = false;
        // As a join does: a value that gave its output is not polled again (a stale wake of it
        // polls nothing).
        let mut finished = [false; 2];
        let mut outputs = drive(&[&task], &workers, 2, |cx: &mut Context<'_>| {
            let mut budget = arena.start_round();
            let mut poll = |_, leaf: std::pin::Pin<&mut Leaf>, cx: &mut Context<'_>| {
                let id = leaf.id();
                if finished[id] {
                    return Step::Pending;
                }
                if id == 0 && !handed {
                    handed = true;
                    *handoff.lock().unwrap() = Some(cx.waker().clone());
                }
                let step = leaf.poll();
                if matches!(step, Step::Done(_)) {
                    finished[id] = true;
                }
                step
            };
            match arena.poll_with_budget(cx, &mut budget, &mut poll) {
                Poll::Ready(Some((_, id))) => Poll::Ready(Some(id)),
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            }
        });
        workers.join();
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1]);
        assert!(
            first_probe.polls() <= 2,
            "value 0 polled {} times",
            first_probe.polls()
        );
        drop(arena);
        assert_eq!(first_probe.drops(), 1);
        assert_eq!(second_probe.drops(), 1);
    });
}
