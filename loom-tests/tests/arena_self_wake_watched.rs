//! A value that wakes itself during its poll while another thread wakes it too.
//!
//! A wake of the value being polled, on the owner's thread, is caught by the poll watch (a
//! thread-local flag, no atomic) and the value queued for the next round after its poll; a
//! wake from another thread goes to the ready set, during the poll or after it. Here the value
//! wakes itself on each of its polls until its third, and a worker holding a clone of its waker
//! wakes it twice while those rounds run, so the ready set's wake and the watch's flag meet in
//! every order: the drain must not queue a slot the watch queued already. Once the value is
//! done, a new value takes its slot, and the worker's clone, a stale waker now, may still be
//! waking.
//!
//! Asserts: no call polls the value twice, no lost wake (every output comes), the value is
//! polled exactly three times; the value that takes the slot is polled once (on insert: never
//! for the stale waker); the table is freed (loom's leak check).
#![cfg(pinfold_loom)]

use std::task::Context;

use loom_tests::{Leaf, Parent, Spinner, Workers, check, drive, poll_leaf};
use pinfold_arena::{Arena, Storage};

/// The self-waking value finishes on this poll.
const SPINS: usize = 3;

#[test]
fn a_watched_self_wake_and_a_wake_from_another_thread_poll_the_value_once_a_call() {
    check("arena_self_wake_watched", || {
        let task = Parent::new();
        let mut arena = Arena::new(1);
        let (spinner, _) = Leaf::new(0);
        let mut spinner = Spinner {
            key: arena.insert(spinner).unwrap(),
            spins: SPINS,
            wakes: 1,
            polled: 0,
        };
        let clone = arena.waker(spinner.key).unwrap();
        let mut workers = Workers::new();
        workers.spawn(move || {
            clone.wake_by_ref();
            clone.wake();
        });
        let outputs = drive(&[&task], &workers, 1, |cx| spinner.poll(&mut arena, cx));
        assert_eq!(outputs, [0]);
        assert_eq!(spinner.polled, SPINS);

        // The slot's next value: the worker's waker, still waking or not, is stale.
        let (leaf, probe) = Leaf::new(1);
        let key = arena.insert(leaf).unwrap();
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        assert!(arena.poll_next(&mut cx, poll_leaf).is_pending());
        workers.join();
        assert!(arena.poll_next(&mut cx, poll_leaf).is_pending());
        assert_eq!(
            probe.polls(),
            1,
            "a stale waker polled the slot's next value"
        );
        assert!(arena.remove(key));
    });
}
