//! A `GrowableArena` of two groups (two stores on one hub), woken from two threads while the
//! owner polls it.
//!
//! `GrowableArena::with_capacity(2)` makes a first group of two slots; the third insert adds a
//! second group (of 32), so the four values sit two in each group. Each worker fires a value in
//! one group and then one in the other (in opposite orders), so the two groups' first wakes race
//! to set their hub bits while the owner registers with the hub, takes the ready bits and
//! collects the groups they name, with one fairness budget across both.
//!
//! Asserts, with the owner polling while the wakes arrive: no lost wake, every output comes,
//! each value is polled exactly twice (once on insert, once after its wake: a hub bit never
//! makes the owner poll a value that was not woken). With the owner polling only after both
//! workers are done: the burst of four wakes into two groups woke the parent exactly once, and
//! the next four polls give the four outputs without a `Pending`.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom::sync::Arc;
use loom_tests::{Leaf, Parent, Probe, Workers, check, drive, poll_leaf};
use pinfold_arena::{GrowableArena, Key, Storage};

/// One `poll_next` of the arena, giving the output without its key.
fn poll(arena: &mut GrowableArena<Leaf>, cx: &mut Context<'_>) -> Poll<Option<usize>> {
    arena
        .poll_next(cx, poll_leaf)
        .map(|next| next.map(|(_key, id)| id))
}

/// The arena, all four values polled once (pending) with `task`, and the workers started: the
/// first fires value 0 (group 0) then value 2 (group 1), the second value 3 (group 1) then
/// value 1 (group 0). Value `i` outputs `i`.
fn start(task: &Parent) -> (GrowableArena<Leaf>, Workers, Vec<Arc<Probe>>) {
    let mut arena = GrowableArena::with_capacity(2);
    let mut keys: Vec<Key> = Vec::new();
    let mut probes = Vec::new();
    for id in 0..4 {
        let (leaf, probe) = Leaf::new(id);
        keys.push(arena.insert(leaf));
        probes.push(probe);
        assert_eq!(arena.groups(), if id < 2 { 1 } else { 2 });
    }
    let waker = task.waker();
    assert_eq!(
        poll(&mut arena, &mut Context::from_waker(&waker)),
        Poll::Pending
    );
    assert!(probes.iter().all(|probe| probe.polls() == 1));
    task.take_wakes();

    let fire = |id: usize| {
        let probe = Arc::clone(&probes[id]);
        let waker = arena.waker(keys[id]).unwrap();
        move || {
            probe.fire();
            waker.wake();
        }
    };
    let (a, b) = (fire(0), fire(2));
    let (c, d) = (fire(3), fire(1));
    let mut workers = Workers::new();
    workers.spawn(move || {
        a();
        b();
    });
    workers.spawn(move || {
        c();
        d();
    });
    (arena, workers, probes)
}

#[test]
fn wakes_into_two_groups_of_one_hub_are_not_lost() {
    check("arena_hub_two_arenas (wakes race the owner)", || {
        let task = Parent::new();
        let (mut arena, mut workers, probes) = start(&task);
        let mut outputs = drive(&[&task], &workers, 4, |cx| poll(&mut arena, cx));
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
            poll(&mut arena, &mut Context::from_waker(&waker)),
            Poll::Ready(None)
        );
    });
}

#[test]
fn a_burst_into_two_groups_wakes_the_parent_once() {
    check("arena_hub_two_arenas (burst, then poll)", || {
        let task = Parent::new();
        let (mut arena, mut workers, _probes) = start(&task);
        workers.join();
        assert_eq!(
            task.take_wakes(),
            1,
            "four wakes into two groups: one parent wake"
        );
        let waker = task.waker();
        let mut cx = Context::from_waker(&waker);
        let mut outputs: Vec<usize> = (0..4)
            .map(|_| match poll(&mut arena, &mut cx) {
                Poll::Ready(Some(id)) => id,
                other => panic!("every value was woken, yet the arena gave {other:?}"),
            })
            .collect();
        outputs.sort_unstable();
        assert_eq!(outputs, [0, 1, 2, 3]);
        assert_eq!(poll(&mut arena, &mut cx), Poll::Ready(None));
        assert_eq!(
            task.take_wakes(),
            0,
            "no self-wake: nothing was left to poll"
        );
    });
}
