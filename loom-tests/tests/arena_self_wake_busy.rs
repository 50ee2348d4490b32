//! A value waking itself during the owner's round while other threads wake other values.
//!
//! While the owner polls, its drains of the ready set leave `BUSY` in the top word, so a wake
//! that climbs to the top stops there and wakes no task: the owner must collect it itself
//! before it returns `Pending` (the last drain of a round, after registering, arms the set).
//! Here the first value wakes itself (twice: the first wake is answered by the poll watch, the
//! second climbs the ready set) on each of its polls and finishes on its fourth, so every
//! round has a self-wake, and two workers each fire and wake a leaf while those rounds run:
//! their wakes land before, during and after the owner's busy drains, the registration and
//! the arming drain. The value needs more polls than the workers send wakes, so the last of
//! them depend on the round's own wake of its task (a value woken during the round it was
//! polled in waits for the next round, and the round wakes its task for it).
//!
//! Asserts: no lost wake (a wake absorbed by `BUSY` is collected before `Pending`, and a value
//! deferred to the next round gets its task woken), every output comes; no poll call polls the
//! self-waking value twice, and it is polled exactly four times; each leaf is polled exactly
//! twice (on insert, and once after its wake).
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom_tests::{Leaf, Parent, Spinner, Workers, check, drive};
use pinfold_arena::{Arena, Storage};

/// The self-waking value finishes on this poll.
const SPINS: usize = 4;

#[test]
fn wakes_absorbed_by_busy_are_collected_before_pending() {
    check("arena_self_wake_busy", || {
        let task = Parent::new();
        let mut arena = Arena::new(3);
        let (spinner, _) = Leaf::new(0);
        let mut spinner = Spinner {
            key: arena.insert(spinner).unwrap(),
            spins: SPINS,
            wakes: 2,
            polled: 0,
        };
        let mut probes = Vec::new();
        let mut workers = Workers::new();
        let mut keys = Vec::new();
        for id in 1..3 {
            let (leaf, probe) = Leaf::new(id);
            keys.push(arena.insert(leaf).unwrap());
            probes.push(probe);
        }
        let waker = task.waker();
        assert_eq!(
            spinner.poll(&mut arena, &mut Context::from_waker(&waker)),
            Poll::Pending
        );
        assert_eq!(spinner.polled, 1);
        assert!(probes.iter().all(|probe| probe.polls() == 1));

        for (probe, key) in probes.iter().zip(&keys) {
            let (fire, wake) = (probe.clone(), arena.waker(*key).unwrap());
            workers.spawn(move || {
                fire.fire();
                wake.wake();
            });
        }
        let mut outputs = drive(&[&task], &workers, 3, |cx| spinner.poll(&mut arena, cx));
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1, 2]);
        assert_eq!(spinner.polled, SPINS);
        for (id, probe) in probes.iter().enumerate() {
            assert_eq!(
                probe.polls(),
                2,
                "leaf {}: polled on insert and once woken",
                id + 1
            );
        }
        workers.join();
        assert_eq!(
            spinner.poll(&mut arena, &mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
    });
}
