//! A value that panics in its poll while another thread wakes it.
//!
//! Slot 0's value panics once it has been fired; its worker fires it, wakes it, and wakes it
//! again, so the second wake may land before, during or after the panic (which drops the value
//! and frees the slot). The other worker fires and wakes slot 1. After the panic the owner
//! fills both slots again; slot 0's new value may take the stale wake.
//!
//! Asserts: the panic comes out of `poll_next` exactly once, with the value's payload; the
//! panicking value is dropped exactly once, by then, and never polled again; the arena stays
//! usable: slot 1's output comes with no lost wake, both slots take new values, which give
//! their outputs, slot 0's polled at most twice (insert, one stale wake); the table is freed.
#![cfg(pinfold_loom)]

use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_leaf};
use pinfold_arena::{Arena, Step};

const PAYLOAD: &str = "slot 0 panics on purpose";

/// Keeps the expected panic out of the test output; every other panic (loom's own reports
/// included) goes to the default hook.
fn quiet_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PAYLOAD) {
                default(info);
            }
        }));
    });
}

#[test]
fn a_value_panicking_while_woken_leaves_the_arena_usable() {
    quiet_expected_panics();
    check("arena_panic_while_woken", || {
        let task = Parent::new();
        let mut arena = Arena::new(2);
        let (doomed, doomed_probe) = Leaf::new(0);
        let (other, other_probe) = Leaf::new(1);
        assert_eq!(arena.insert(doomed).ok(), Some(0));
        assert_eq!(arena.insert(other).ok(), Some(1));
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(
            arena.poll_next(&mut cx, poll_leaf),
            Poll::Pending,
            "nothing fired yet"
        );

        let mut workers = Workers::new();
        let (fire, wake) = (doomed_probe.clone(), arena.waker(0));
        workers.spawn(move || {
            fire.fire();
            wake.wake_by_ref();
            wake.wake();
        });
        let (fire, wake) = (other_probe.clone(), arena.waker(1));
        workers.spawn(move || {
            fire.fire();
            wake.wake();
        });

        // Each output is Ok(id), or Err(()) for the panic.
        let mut panics = 0;
        let mut outputs = drive(&[&task], &workers, 2, |cx| {
            let polled = panic::catch_unwind(AssertUnwindSafe(|| {
                arena.poll_next(cx, |slot, leaf, cx| {
                    if slot == 0 && leaf.is_fired() {
                        leaf.poll();
                        panic::panic_any(PAYLOAD);
                    }
                    poll_leaf(slot, leaf, cx)
                })
            }));
            match polled {
                Ok(next) => next.map(|next| next.map(|(_, id)| Ok(id))),
                Err(payload) => {
                    assert_eq!(payload.downcast_ref::<&str>(), Some(&PAYLOAD));
                    panics += 1;
                    assert_eq!(doomed_probe.drops(), 1, "dropped in place by the panic");
                    Poll::Ready(Some(Err(())))
                }
            }
        });
        outputs.sort_unstable();
        assert_eq!(outputs, [Ok(1), Err(())]);
        assert_eq!(panics, 1);
        assert_eq!(arena.len(), 0);

        // Both slots are free again: refill them with values that give an output and stay
        // (`Keep`), so a stale wake of slot 0 shows as a second poll of its new value.
        let mut polls = [0; 2];
        for id in [2, 3] {
            let (leaf, _probe) = Leaf::new(id);
            assert!(
                arena.insert(leaf).is_ok(),
                "the panicked value's slot is free"
            );
        }
        let mut poll_kept = |cx: &mut Context<'_>| {
            arena.poll_next(cx, |slot, leaf, _| {
                polls[slot] += 1;
                Step::Keep(leaf.id())
            })
        };
        let mut kept: Vec<usize> = (0..2)
            .map(|_| match poll_kept(&mut cx) {
                Poll::Ready(Some((_, id))) => id,
                other => panic!("a fresh value gave {other:?}"),
            })
            .collect();
        kept.sort_unstable();
        assert_eq!(kept, [2, 3]);
        workers.join();
        // Takes the stale second wake of slot 0 if it came after the panic.
        let mut extra = 0;
        while poll_kept(&mut cx).is_ready() {
            extra += 1;
            assert!(extra <= 1, "more than one stale poll");
        }
        assert_eq!(polls[1], 1, "slot 1 was never woken after its refill");
        assert!(
            polls[0] <= 2,
            "slot 0's new value was polled {} times",
            polls[0]
        );
        assert_eq!(
            doomed_probe.polls(),
            2,
            "the panicking value: once pending, once panicking"
        );
        assert_eq!(doomed_probe.drops(), 1);
    });
}
