//! A stale wake racing a push into the same slot (futures-buffered's double enqueue: 100% CPU).
//!
//! The value in slot 0 finishes and frees the slot while a worker still holds an owned waker
//! of it; the worker wakes it (by reference, then by value) while the owner pushes a new value,
//! which lands in slot 0 and is queued by the owner-local path of `insert`. The other worker
//! fires the value in slot 1. The new value is pending for good, so every poll of it after its
//! first is one a stale wake caused.
//!
//! In the first model the arena has a free entry for the new value, so the stale waker's entry
//! is not bound to it: the stale wake polls nothing. In the second, three values have gone
//! through slot 0, each leaving an owned waker alive (the owner keeps two, the worker the
//! third), so all of the spare entries are retired and the push either reclaims the worker's
//! entry (if its waker is gone by then) or binds it while the worker may still wake it (the
//! documented fallback): the stale wake and the push may then both queue slot 0.
//!
//! Asserts: no poll call polls slot 0 twice (a slot queued twice would be), no livelock (the
//! drive gives up after a fixed number of polls), no lost wake, the other output comes; the new
//! value is polled exactly once in the first model, and in the second at most once per stale
//! wake more than its first poll. Loom's leak check finds the wake table freed.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll, Waker};

use loom_tests::{Leaf, Parent, Workers, check, drive, poll_arena, poll_leaf};
use pinfold_arena::{Arena, Key, Step, Storage};

/// What [`start`] leaves: the arena, the key of the value in slot 1, and the owned wakers of
/// departed values of slot 0 that the owner keeps alive.
struct Started {
    arena: Arena<Leaf>,
    other: Key,
    kept: Vec<Waker>,
}

/// Runs `departed` values through slot 0 of an arena of two slots (each fired, polled to its
/// output, its owned waker kept alive), and starts the workers: one wakes the last departed
/// value's waker twice, the other fires and wakes the value in slot 1.
fn start(task: &Parent, workers: &mut Workers, departed: usize) -> Started {
    let mut arena = Arena::new(2);
    let waker = task.waker();
    let mut cx = Context::from_waker(&waker);
    let (other_leaf, other_probe) = Leaf::new(1);
    let mut other_leaf = Some(other_leaf);
    let mut other = None;
    let mut kept = Vec::new();
    for id in 0..departed {
        let (leaf, probe) = Leaf::new(10 + id);
        probe.fire();
        let key = arena.insert(leaf).unwrap();
        kept.push(arena.waker(key).unwrap());
        if let Some(leaf) = other_leaf.take() {
            // After the first value, so that slot 0 is the one reused.
            other = arena.insert(leaf).ok();
        }
        assert_eq!(poll_arena(&mut arena, &mut cx), Poll::Ready(Some(10 + id)));
        assert_eq!(probe.drops(), 1, "slot 0 is free");
    }
    let other = other.expect("at least one value departed");

    let stale = kept.pop().unwrap();
    workers.spawn(move || {
        stale.wake_by_ref();
        stale.wake();
    });
    let wake_other = arena.waker(other).unwrap();
    workers.spawn(move || {
        other_probe.fire();
        wake_other.wake();
    });
    Started { arena, other, kept }
}

/// One poll of the arena in which the value of `new` is pending for good, counting its polls;
/// fails if the call polls it twice.
fn poll_once(
    arena: &mut Arena<Leaf>,
    new: Key,
    cx: &mut Context<'_>,
    new_polls: &mut usize,
) -> Poll<Option<usize>> {
    let mut polled_now = 0;
    let next = arena.poll_next(cx, |key, leaf, cx| {
        if key != new {
            return poll_leaf(key, leaf, cx);
        }
        polled_now += 1;
        *new_polls += 1;
        Step::Pending
    });
    assert!(
        polled_now <= 1,
        "one poll call polled slot 0 {polled_now} times"
    );
    next.map(|next| next.map(|(_, id)| id))
}

/// Pushes the new value into slot 0, drives the arena to the other value's output, and then
/// polls until no wake is left; returns how often the new value was polled.
fn push_and_drive(task: &Parent, mut workers: Workers, started: Started) -> usize {
    let Started {
        mut arena,
        other,
        kept,
    } = started;
    let (new, _) = Leaf::new(2);
    let new = arena.insert(new).unwrap();
    let mut polls = 0;
    let outputs = drive(&[task], &workers, 1, |cx| {
        poll_once(&mut arena, new, cx, &mut polls)
    });
    assert_eq!(outputs, [1]);
    assert!(!arena.contains_key(other));
    workers.join();
    let waker = task.waker();
    let mut cx = Context::from_waker(&waker);
    for _ in 0..3 {
        task.take_wakes();
        assert_eq!(
            poll_once(&mut arena, new, &mut cx, &mut polls),
            Poll::Pending
        );
        if task.wakes() == 0 {
            break;
        }
    }
    assert_eq!(task.wakes(), 0, "the arena kept waking its task");
    drop(kept);
    polls
}

#[test]
fn a_stale_wake_racing_a_push_polls_nothing() {
    check("arena_wake_races_insert", || {
        let task = Parent::new();
        let mut workers = Workers::new();
        let started = start(&task, &mut workers, 1);
        let polls = push_and_drive(&task, workers, started);
        assert_eq!(polls, 1, "the new value: once, queued by the push");
    });
}

#[test]
fn a_stale_wake_racing_a_push_that_binds_its_entry_queues_the_slot_once() {
    check("arena_wake_races_insert (entry rebound)", || {
        let task = Parent::new();
        let mut workers = Workers::new();
        let started = start(&task, &mut workers, 3);
        let polls = push_and_drive(&task, workers, started);
        assert!(
            (1..=3).contains(&polls),
            "the new value was polled {polls} times: once queued, at most once a stale wake"
        );
    });
}
