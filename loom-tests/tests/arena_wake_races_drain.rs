//! Wakes that race the owner's drain of the ready set.
//!
//! The values have been polled once and the parent registered before the workers start, so
//! every wake lands on a registered, drained set, and the owner's next polls (register, swap
//! the ready words, poll what was woken) run while later wakes arrive: a burst from one worker
//! (two slots, one after the other) and a single wake from the other.
//!
//! Asserts: no lost wake, every output comes, and each value is polled exactly twice (once on
//! insert, once after its wake, which it must see fired: the wake publishes what the worker
//! did before it). The second model does the same across the two levels of the bitset (slots
//! 0, 1 and 64 of a 65-slot arena, whose values are bound to entries 0, 1 and 64 of its 130:
//! two level-0 words and the summary word), where a wake that finds its word empty climbs while
//! the owner clears the summary before the words.
#![cfg(pinfold_loom)]

use std::task::{Context, Poll};

use loom::sync::Arc;
use loom_tests::{Leaf, Parent, Probe, Workers, check, drive, poll_arena};
use pinfold_arena::{Arena, Key, Storage};

/// Builds the arena with values in `slots` (of `capacity`; `probes[i]` is `slots[i]`'s), polls
/// it once (all pending) with `task`, and starts the workers: the first fires `slots[0]` then
/// `slots[2]`, the second `slots[1]`.
///
/// An arena fills its slots in order, binding its entries in order, so filling every slot and
/// removing the fillers leaves value `slots[i]` in slot `slots[i]`, bound to the entry of the
/// same number: its bit in the ready set.
fn start(
    capacity: usize,
    slots: [usize; 3],
    task: &Parent,
) -> (Arena<Leaf>, Workers, Vec<Arc<Probe>>) {
    let mut arena = Arena::new(capacity);
    let (filler, _) = Leaf::new(usize::MAX);
    let mut probes = Vec::new();
    let mut keys: Vec<Key> = Vec::new();
    let mut fillers = Vec::new();
    for id in 0..capacity {
        if slots.contains(&id) {
            let (leaf, probe) = Leaf::new(id);
            keys.push(arena.insert(leaf).unwrap());
            probes.push(probe);
        } else {
            // Keeps the slot taken, so that the next value lands in the next slot.
            fillers.push(arena.insert(filler.sharing(id)).unwrap());
        }
    }
    for key in fillers {
        assert!(arena.remove(key));
    }
    drop(filler);
    let waker = task.waker();
    assert_eq!(
        poll_arena(&mut arena, &mut Context::from_waker(&waker)),
        Poll::Pending
    );
    let fire = |i: usize| {
        let probe = Arc::clone(&probes[i]);
        let waker = arena.waker(keys[i]).unwrap();
        move || {
            probe.fire();
            waker.wake();
        }
    };
    let (first, then, other) = (fire(0), fire(2), fire(1));
    let mut workers = Workers::new();
    workers.spawn(move || {
        first();
        then();
    });
    workers.spawn(other);
    (arena, workers, probes)
}

fn finish(
    task: &Parent,
    mut arena: Arena<Leaf>,
    mut workers: Workers,
    probes: &[Arc<Probe>],
    slots: [usize; 3],
) {
    let mut outputs = drive(&[task], &workers, 3, |cx| poll_arena(&mut arena, cx));
    outputs.sort_unstable();
    assert_eq!(outputs, slots);
    for (probe, slot) in probes.iter().zip(slots) {
        assert_eq!(
            probe.polls(),
            2,
            "slot {slot}: polled on insert and once woken"
        );
    }
    workers.join();
    let waker = task.waker();
    assert_eq!(
        poll_arena(&mut arena, &mut Context::from_waker(&waker)),
        Poll::Ready(None)
    );
}

#[test]
fn wakes_racing_the_drain_are_not_lost() {
    check("arena_wake_races_drain", || {
        let slots = [0, 1, 2];
        let task = Parent::new();
        let (arena, workers, probes) = start(3, slots, &task);
        finish(&task, arena, workers, &probes, slots);
    });
}

#[test]
fn wakes_racing_the_drain_of_a_two_level_set_are_not_lost() {
    check("arena_wake_races_drain (two levels)", || {
        let slots = [0, 1, 64];
        let task = Parent::new();
        let (arena, workers, probes) = start(65, slots, &task);
        finish(&task, arena, workers, &probes, slots);
    });
}
