//! A value that panics in its poll while another thread wakes it.
//!
//! The first value panics once it has been fired; its worker fires it, wakes it, and wakes it
//! again, so the second wake may land before, during or after the panic (which drops the value
//! and frees its slot). The other worker fires and wakes the second value. After the panic the
//! owner fills both slots again, while the stale second wake may still be on its way.
//!
//! Asserts: the panic comes out of `poll_next` exactly once, with the value's payload; the
//! panicking value is dropped exactly once, by then, and never polled again; the arena stays
//! usable: the second value's output comes with no lost wake, both slots take new values, which
//! give their outputs, each polled exactly once (a wake of the panicked value never polls the
//! value that takes its slot); the table is freed.
#![cfg(pinfold_loom)]

use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_leaf};
use pinfold_arena::{Arena, Step, Storage};

const PAYLOAD: &str = "the first value panics on purpose";

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
        let doomed_key = arena.insert(doomed).unwrap();
        let other_key = arena.insert(other).unwrap();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(
            arena.poll_next(&mut cx, poll_leaf),
            Poll::Pending,
            "nothing fired yet"
        );

        let mut workers = Workers::new();
        let (fire, wake) = (doomed_probe.clone(), arena.waker(doomed_key).unwrap());
        workers.spawn(move || {
            fire.fire();
            wake.wake_by_ref();
            wake.wake();
        });
        let (fire, wake) = (other_probe.clone(), arena.waker(other_key).unwrap());
        workers.spawn(move || {
            fire.fire();
            wake.wake();
        });

        // Each output is Ok(id), or Err(()) for the panic.
        let mut panics = 0;
        let mut outputs = drive(&[&task], &workers, 2, |cx| {
            let polled = panic::catch_unwind(AssertUnwindSafe(|| {
                arena.poll_next(cx, |key, leaf, cx| {
                    if key == doomed_key && leaf.is_fired() {
                        leaf.poll();
                        panic::panic_any(PAYLOAD);
                    }
                    poll_leaf(key, leaf, cx)
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
        // (`Keep`), so a stale wake reaching a new value would show as a second poll of it.
        let mut polls = [0; 2];
        for id in [2, 3] {
            let (leaf, _probe) = Leaf::new(id);
            assert!(
                arena.insert(leaf).is_ok(),
                "the panicked value's slot is free"
            );
        }
        let mut poll_kept = |cx: &mut Context<'_>| {
            arena.poll_next(cx, |_, leaf, _| {
                polls[leaf.id() - 2] += 1;
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
        // Collects the stale second wake of the panicked value if it came after the panic: it
        // polls nothing.
        for _ in 0..2 {
            assert_eq!(
                poll_kept(&mut cx),
                Poll::Pending,
                "a stale wake polled a new value"
            );
        }
        assert_eq!(polls, [1, 1], "the new values were never woken");
        assert_eq!(
            doomed_probe.polls(),
            2,
            "the panicking value: once pending, once panicking"
        );
        assert_eq!(doomed_probe.drops(), 1);
    });
}
