//! A wake racing a push into the same slot (futures-buffered's double enqueue: 100% CPU).
//!
//! Slot 0's first value finishes and frees the slot; a worker still holds that slot's waker and
//! wakes it (by reference, then by value) while the owner pushes a new value, which lands in
//! slot 0 and is queued by the owner-local path of `insert`. The other worker fires the value in
//! slot 1. The stale wake and the insert both want slot 0 queued: it must be queued once.
//!
//! In the first model the new value is pending on its first poll and done on its second, so it
//! finishes only if the stale wake (which names its slot) reaches it; it always does, since the
//! owner collects no wake between the free and the push. `Arena::poll_next` collects wakes only
//! into an empty queue, so the second model also calls the public `mark_ready` and
//! `collect_woken` right after the push, while the pushed value is still queued: the stale
//! wake is collected into a queue that already holds its slot.
//!
//! Asserts: no poll call polls slot 0 twice (a slot queued twice would be), no livelock (the
//! drive gives up after a fixed number of polls), no lost wake, every output comes; the new
//! value is polled exactly twice in the first model, at most once per stale wake more than
//! its first poll in the second.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom::sync::Arc;
use loom_tests::{Leaf, Parent, Probe, Workers, check, drive, poll_arena, poll_leaf};
use pinfold_arena::{Arena, Step};

/// Frees slot 0 (its value finishes) and starts the workers: one wakes slot 0's stale waker
/// twice, the other fires and wakes slot 1. Returns the arena and slot 1's probe.
fn start(task: &Parent, workers: &mut Workers) -> (Arena<Leaf>, Arc<Probe>) {
    let mut arena = Arena::new(2);
    let (first, first_probe) = Leaf::new(0);
    let (other, other_probe) = Leaf::new(1);
    first_probe.fire();
    assert_eq!(arena.insert(first).ok(), Some(0));
    assert_eq!(arena.insert(other).ok(), Some(1));
    let stale = arena.waker(0);
    let waker = task.waker();
    assert_eq!(
        poll_arena(&mut arena, &mut Context::from_waker(&waker)),
        Poll::Ready(Some(0))
    );
    assert_eq!(first_probe.drops(), 1, "slot 0 is free");

    workers.spawn(move || {
        stale.wake_by_ref();
        stale.wake();
    });
    let (fire, wake_other) = (other_probe.clone(), arena.waker(1));
    workers.spawn(move || {
        fire.fire();
        wake_other.wake();
    });
    (arena, other_probe)
}

/// One poll of the arena in which slot 0's value is pending until its `done_at`th poll (never,
/// if `None`), counting its polls; fails if the call polls slot 0 twice.
fn poll_once(
    arena: &mut Arena<Leaf>,
    cx: &mut Context<'_>,
    slot0_polls: &mut usize,
    done_at: Option<usize>,
) -> Poll<Option<usize>> {
    let mut polled_now = 0;
    let next = arena.poll_next(cx, |slot, leaf, cx| {
        if slot != 0 {
            return poll_leaf(slot, leaf, cx);
        }
        polled_now += 1;
        *slot0_polls += 1;
        if Some(*slot0_polls) == done_at {
            Step::Done(leaf.id())
        } else {
            Step::Pending
        }
    });
    assert!(
        polled_now <= 1,
        "one poll call polled slot 0 {polled_now} times"
    );
    next.map(|next| next.map(|(_, id)| id))
}

#[test]
fn a_stale_wake_racing_a_push_queues_the_slot_once() {
    check("arena_wake_races_insert", || {
        let task = Parent::new();
        let mut workers = Workers::new();
        let (mut arena, other_probe) = start(&task, &mut workers);

        let (new, _) = Leaf::new(2);
        assert_eq!(arena.insert(new).ok(), Some(0), "the freed slot is reused");
        let mut polls = 0;
        let mut outputs = drive(&[&task], &workers, 2, |cx| {
            poll_once(&mut arena, cx, &mut polls, Some(2))
        });
        outputs.sort_unstable();
        assert_eq!(outputs, [1, 2]);
        assert_eq!(
            polls, 2,
            "the new value: once queued by the push, once woken"
        );
        assert!(other_probe.polls() <= 2);
        workers.join();
        let waker = task.waker();
        assert_eq!(
            poll_arena(&mut arena, &mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
    });
}

#[test]
fn a_stale_wake_collected_while_its_slot_is_queued_queues_it_once() {
    check("arena_wake_races_insert (collect while queued)", || {
        let task = Parent::new();
        let mut workers = Workers::new();
        let (mut arena, _) = start(&task, &mut workers);

        let (new, _) = Leaf::new(2);
        assert_eq!(arena.insert(new).ok(), Some(0), "the freed slot is reused");
        arena.mark_ready(0);
        arena.collect_woken();
        let mut polls = 0;
        let outputs = drive(&[&task], &workers, 1, |cx| {
            poll_once(&mut arena, cx, &mut polls, None)
        });
        assert_eq!(outputs, [1]);
        workers.join();
        // Poll until nothing is left to collect.
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        for _ in 0..3 {
            task.take_wakes();
            assert_eq!(
                poll_once(&mut arena, &mut cx, &mut polls, None),
                Poll::Pending
            );
            if task.wakes() == 0 {
                break;
            }
        }
        assert!(
            polls <= 3,
            "slot 0 polled {polls} times: once queued, at most once a wake"
        );
    });
}
