//! Two arenas sharing one `Hub`, woken from two threads while the owner polls them.
//!
//! Stands in for the growable set adding a group while wakers of an older group fire (that set
//! does not exist yet): arenas made with `Arena::with_hub` on one hub (bits 0 and 1), two
//! values in each. Each worker fires a value in one arena and then one in the other (in
//! opposite orders), so the two arenas' first wakes race to set their hub bits, while the owner
//! registers with the hub, takes the ready bits and collects the arenas they name, as a set of
//! several arenas does (`HubSet` below, with one fairness budget through both arenas).
//!
//! Asserts, with the owner polling while the wakes arrive: no lost wake, every output comes,
//! each value is polled exactly twice (once on insert, once after its wake: a hub bit never
//! makes the owner poll a slot that was not woken). With the owner polling only after both
//! workers are done: the burst of four wakes into two arenas woke the parent exactly once, and
//! the next four polls give the four outputs without a `Pending`.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom::sync::Arc;
use loom_tests::{Leaf, Parent, Probe, Workers, check, drive, poll_leaf};
use pinfold_arena::{Arena, Budget, Hub, Queued};

/// A set of two arenas under one hub: what a set that grows by adding arenas does per poll.
struct HubSet {
    hub: Hub,
    arenas: [Arena<Leaf>; 2],
}

impl HubSet {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let len = self.arenas.iter().map(Arena::len).sum();
        if len == 0 {
            return Poll::Ready(None);
        }
        let mut budget = Budget::new(len);
        loop {
            for arena in &mut self.arenas {
                match arena.poll_queued(&mut budget, &mut poll_leaf) {
                    Queued::Ready(_, id) => return Poll::Ready(Some(id)),
                    Queued::Yield => {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    Queued::Empty => {}
                }
            }
            // Register before taking the bits, so a wake after the take wakes the task.
            self.hub.register(cx.waker());
            let ready = self.hub.take_ready();
            let mut collected = false;
            for (bit, arena) in self.arenas.iter_mut().enumerate() {
                if ready & (1 << bit) != 0 {
                    collected |= arena.collect_woken();
                }
            }
            if !collected {
                return Poll::Pending;
            }
            if budget.visited() > 0 {
                // Slots woken during this call: poll them in the next.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

/// The set, all four values polled once (pending) with `task`, and the workers started: the
/// first fires arena 0's slot 0 then arena 1's slot 0, the second arena 1's slot 1 then arena
/// 0's slot 1. Value `2 * arena + slot` outputs its own number.
fn start(task: &Parent) -> (HubSet, Workers, Vec<Arc<Probe>>) {
    let hub = Hub::new();
    let mut arenas = [Arena::with_hub(2, &hub, 0), Arena::with_hub(2, &hub, 1)];
    let mut probes = Vec::new();
    for (index, arena) in arenas.iter_mut().enumerate() {
        for slot in 0..2 {
            let (leaf, probe) = Leaf::new(2 * index + slot);
            assert_eq!(arena.insert(leaf).ok(), Some(slot));
            probes.push(probe);
        }
    }
    let mut set = HubSet { hub, arenas };
    let waker = task.waker();
    assert_eq!(
        set.poll_next(&mut Context::from_waker(&waker)),
        Poll::Pending
    );
    assert!(probes.iter().all(|probe| probe.polls() == 1));
    task.take_wakes();

    let fire = |arena: usize, slot: usize| {
        let probe = Arc::clone(&probes[2 * arena + slot]);
        let waker = set.arenas[arena].waker(slot);
        move || {
            probe.fire();
            waker.wake();
        }
    };
    let (a, b) = (fire(0, 0), fire(1, 0));
    let (c, d) = (fire(1, 1), fire(0, 1));
    let mut workers = Workers::new();
    workers.spawn(move || {
        a();
        b();
    });
    workers.spawn(move || {
        c();
        d();
    });
    (set, workers, probes)
}

#[test]
fn wakes_into_two_arenas_of_one_hub_are_not_lost() {
    check("arena_hub_two_arenas (wakes race the owner)", || {
        let task = Parent::new();
        let (mut set, mut workers, probes) = start(&task);
        let mut outputs = drive(&[&task], &workers, 4, |cx| set.poll_next(cx));
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1, 2, 3]);
        for (id, probe) in probes.iter().enumerate() {
            assert_eq!(
                probe.polls(),
                2,
                "value {id}: polled on insert and once woken"
            );
        }
        workers.join();
        let waker = task.waker();
        assert_eq!(
            set.poll_next(&mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
    });
}

#[test]
fn a_burst_into_two_arenas_wakes_the_parent_once() {
    check("arena_hub_two_arenas (burst, then poll)", || {
        let task = Parent::new();
        let (mut set, mut workers, _probes) = start(&task);
        workers.join();
        assert_eq!(
            task.take_wakes(),
            1,
            "four wakes into two arenas: one parent wake"
        );
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut outputs: Vec<usize> = (0..4)
            .map(|_| match set.poll_next(&mut cx) {
                Poll::Ready(Some(id)) => id,
                other => panic!("every value was woken, yet the set gave {other:?}"),
            })
            .collect();
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1, 2, 3]);
        assert_eq!(set.poll_next(&mut cx), Poll::Ready(None));
        assert_eq!(
            task.take_wakes(),
            0,
            "no self-wake: nothing was left to poll"
        );
    });
}
