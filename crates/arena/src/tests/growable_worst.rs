//! A growable arena's groups under the worst orders of calls from safe code: the groups' vector
//! growing while values wait, pinned, in the groups it had; the top group released while its
//! values and the others' are queued; `clear` and the arena's drop with two panicking drops in
//! different groups; the iterators after groups were released and added again; and keys of
//! released groups, refused by whichever group takes their slots' numbers.

use std::future::{Future, Ready, ready};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::probe::{Probe, ProbeState, probes};
use pinfold_testkit::waker::counting_waker;

use super::{DropCounter, next_growable};
use crate::{GrowableArena, Key, Step, Storage};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::vec::Vec;

/// The group of each key, in the keys' order.
fn groups_of<T>(arena: &GrowableArena<T>, keys: &[Key]) -> Vec<usize> {
    keys.iter().map(|&k| arena.group_of(k).unwrap()).collect()
}

/// Polls `arena` until it is pending, every output's key and value.
fn drain<F: Future>(arena: &mut GrowableArena<F>, waker: &Waker) -> Vec<(Key, F::Output)> {
    let mut outputs = Vec::new();
    while let Poll::Ready(Some(output)) = next_growable(arena, waker) {
        outputs.push(output);
    }
    outputs
}

#[test]
fn growable_values_stay_put_and_wakes_arrive_while_the_groups_vector_grows_past_several_groups() {
    // The vector of groups moves each time it grows (room for one group, then four, eight):
    // the stores move with it, the values and the wake tables (on the heap) must not.
    // Under Miri, five groups: the vector still grows from room for four to eight.
    let (n, groups, capacity) = if cfg!(miri) {
        (300, 5, 320)
    } else {
        (500, 7, 500)
    };
    let mut arena = GrowableArena::new();
    let (values, states) = probes(n);
    let mut values = values.into_iter();
    let mut keys: Vec<Key> = values.by_ref().take(33).map(|v| arena.insert(v)).collect();
    assert_eq!(arena.groups(), 2);
    let (task, woken) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    assert!(states[..33].iter().all(|s| s.polls() == 1));
    // Wakers taken before the vector grows; values of both groups woken before, during and
    // after the growth.
    let early: Vec<Waker> = [0, 31, 32].iter().map(|&i| states[i].waker()).collect();
    states[0].open();
    early[0].wake_by_ref();
    keys.extend(values.by_ref().take(200).map(|v| arena.insert(v)));
    states[31].open();
    early[1].wake_by_ref();
    keys.extend(values.map(|v| arena.insert(v)));
    states[32].open();
    early[2].wake_by_ref();
    assert_eq!(
        (arena.groups(), arena.capacity(), arena.len()),
        (groups, capacity, n),
        "32, 32, 64, 128, then a quarter of what is below: 64 (then 80, 100)"
    );
    assert!(woken.count() >= 1);
    let of_keys = groups_of(&arena, &keys);
    assert!(of_keys.windows(2).all(|w| w[0] <= w[1]), "{of_keys:?}");
    assert_eq!(of_keys[n - 1], groups - 1);
    // The three woken, then every inserted value once; a probe panics if it moved.
    let outputs = drain(&mut arena, &task);
    let mut ids: Vec<usize> = outputs.iter().map(|&(_, id)| id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 31, 32]);
    assert!(
        outputs.iter().all(|&(key, id)| key == keys[id]),
        "keys are those the inserts gave"
    );
    assert!(states[33..].iter().all(|s| s.polls() == 1));
    assert!(states[1..31].iter().all(|s| s.polls() == 1), "not woken");
    // Every value finished in reverse order, its key and group still its own.
    for state in states.iter().rev() {
        state.finish();
    }
    let mut all: Vec<usize> = drain(&mut arena, &task)
        .into_iter()
        .map(|(key, id)| {
            assert_eq!(key, keys[id]);
            id
        })
        .collect();
    all.sort_unstable();
    assert_eq!(all.len(), n - 3);
    assert!(arena.is_empty());
    assert!(states.iter().all(|s| s.drops() == 1));
    assert_eq!(arena.groups(), 1, "every group but the first released");
}

#[test]
fn growable_reserve_and_with_capacity_add_many_groups_and_values_stay_pinned() {
    let mut arena = GrowableArena::with_capacity(3);
    let (values, states) = probes(40);
    let mut values = values.into_iter();
    let first: Vec<Key> = values.by_ref().take(3).map(|v| arena.insert(v)).collect();
    let (task, _) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    let addresses: Vec<usize> = states[..3].iter().map(|s| s.address()).collect();
    arena.reserve(2000);
    assert!(arena.groups() >= 6, "{arena:?}");
    assert!(arena.capacity() >= 2003);
    let rest: Vec<Key> = values.map(|v| arena.insert(v)).collect();
    assert!(next_growable(&mut arena, &task).is_pending());
    for state in &states {
        state.finish();
    }
    assert_eq!(drain(&mut arena, &task).len(), 40);
    assert_eq!(
        addresses,
        states[..3].iter().map(|s| s.address()).collect::<Vec<_>>()
    );
    assert!(first.iter().chain(&rest).all(|&k| !arena.contains_key(k)));
}

#[test]
fn growable_top_group_released_while_its_values_and_others_are_queued() {
    // Inserted values are queued, unpolled. The top group's one value leaves (by `remove`)
    // while 12 values of the first group wait in the queue: the group goes, its slot leaves
    // the queue, and the next call polls the 12 once each.
    let mut arena = GrowableArena::new();
    let (values, states) = probes(33);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    assert_eq!(groups_of(&arena, &keys[31..]), [0, 1]);
    for &key in &keys[..20] {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.groups(), 2, "13 values fill more than half of 32");
    assert!(arena.remove(keys[32]));
    assert_eq!(
        (arena.groups(), arena.capacity(), arena.len()),
        (1, 32, 12),
        "the empty top group is released"
    );
    // A new second group while the 12 are still queued; its values queued behind them.
    let (more, more_states) = probes(30);
    let more_keys: Vec<Key> = more.into_iter().map(|v| arena.insert(v)).collect();
    assert_eq!(arena.groups(), 2);
    assert!(more_keys.iter().any(|&k| arena.group_of(k) == Some(1)));
    let (task, _) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    assert!(states[20..32].iter().all(|s| s.polls() == 1));
    assert!(
        states[..20]
            .iter()
            .chain([&states[32]])
            .all(|s| !s.was_polled() && s.drops() == 1)
    );
    assert!(more_states.iter().all(|s| s.polls() == 1));
    assert!(!arena.contains_key(keys[32]));
}

/// Pending, waking itself, until the gate passes its number, then ready with it; counts its
/// polls. `Unpin`, so that it can be taken out.
struct Gated {
    n: usize,
    gate: Arc<AtomicUsize>,
    polls: Arc<AtomicUsize>,
}

impl Future for Gated {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.gate.load(Ordering::SeqCst) > self.n {
            Poll::Ready(self.n)
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[test]
fn growable_top_group_released_by_an_output_in_the_middle_of_a_round() {
    // The top group's one value finishes in the round that polls the first group's queued
    // values, released after that output while the rest of the round waits in the queue.
    let mut arena = GrowableArena::new();
    let (values, states) = probes(33);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    for &key in &keys[..24] {
        assert!(arena.remove(key));
    }
    // Queued: 24..32 of group 0, then 32 of group 1, which finishes on its first poll.
    states[32].open();
    let (task, _) = counting_waker();
    let outputs = drain(&mut arena, &task);
    assert_eq!(outputs, [(keys[32], 32)]);
    assert_eq!(arena.groups(), 1, "released after the output");
    assert!(states[24..32].iter().all(|s| s.polls() == 1));
    // Woken in the opposite order, across the release: each given once.
    for state in states[24..32].iter().rev() {
        state.finish();
    }
    let mut ids: Vec<usize> = drain(&mut arena, &task)
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (24..32).collect::<Vec<_>>());
    assert!(states.iter().all(|s| s.drops() == 1));
}

#[test]
fn growable_release_of_a_queued_self_waking_top_value_skips_it() {
    // Values that wake themselves stay queued call after call; the top group's only one is
    // taken out (`take`) between calls, its group released while its id was queued.
    let gate = Arc::new(AtomicUsize::new(0));
    let polls: Vec<Arc<AtomicUsize>> = (0..33).map(|_| Arc::new(AtomicUsize::new(0))).collect();
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..33)
        .map(|n| {
            arena.insert(Gated {
                n: n + 1000,
                gate: gate.clone(),
                polls: polls[n].clone(),
            })
        })
        .collect();
    let (task, _) = counting_waker();
    for _ in 0..3 {
        assert!(next_growable(&mut arena, &task).is_pending());
    }
    assert!(polls.iter().all(|p| p.load(Ordering::SeqCst) >= 1));
    for &key in &keys[..25] {
        assert!(arena.take(key).is_some());
    }
    assert_eq!(arena.groups(), 2);
    let top = arena.take(keys[32]).unwrap();
    assert_eq!(top.n, 1032);
    assert_eq!(arena.groups(), 1);
    let before: Vec<usize> = polls.iter().map(|p| p.load(Ordering::SeqCst)).collect();
    for _ in 0..3 {
        assert!(next_growable(&mut arena, &task).is_pending());
    }
    for (n, p) in polls.iter().enumerate() {
        let more = p.load(Ordering::SeqCst) - before[n];
        if (25..32).contains(&n) {
            assert!(more >= 1, "{n} was not polled again");
        } else {
            assert_eq!(more, 0, "{n} was polled after it was taken");
        }
    }
    gate.store(2000, Ordering::SeqCst);
    let mut ids: Vec<usize> = drain(&mut arena, &task)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1025..1032).collect::<Vec<_>>());
}

#[cfg(feature = "std")]
/// Counts its drops; panics in its drop if armed.
struct Loud(bool, Arc<AtomicUsize>);

#[cfg(feature = "std")]
impl Drop for Loud {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
        assert!(!self.0, "loud drop");
    }
}

#[cfg(feature = "std")]
/// A growable arena of 100 `Loud`s in three groups, those at `armed` panicking in their drop.
fn loud_arena(armed: &[usize], drops: &Arc<AtomicUsize>) -> (GrowableArena<Loud>, Vec<Key>) {
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..100)
        .map(|n| arena.insert(Loud(armed.contains(&n), drops.clone())))
        .collect();
    assert_eq!(arena.groups(), 3);
    (arena, keys)
}

#[cfg(feature = "std")]
#[test]
fn growable_clear_with_two_panicking_drops_in_two_groups_drops_all_and_releases() {
    let drops = Arc::new(AtomicUsize::new(0));
    // Group 0 (slot 5) and the top group (slot 90).
    let (mut arena, keys) = loud_arena(&[5, 90], &drops);
    let panic = catch_unwind(AssertUnwindSafe(|| arena.clear())).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"loud drop"));
    assert_eq!(drops.load(Ordering::SeqCst), 100, "each once");
    assert!(arena.is_empty());
    assert_eq!((arena.groups(), arena.capacity()), (1, 32));
    assert_eq!(arena.iter().count(), 0);
    assert!(keys.iter().all(|&k| !arena.contains_key(k)));
    // Usable: the groups grow again, and the new keys are new.
    let again: Vec<Key> = (0..70)
        .map(|_| arena.insert(Loud(false, drops.clone())))
        .collect();
    assert!(arena.groups() >= 2, "{arena:?}");
    assert!(again.iter().all(|k| !keys.contains(k)));
    assert_eq!(arena.iter().count(), 70);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 170);
}

#[cfg(feature = "std")]
#[test]
fn growable_clear_with_two_panicking_drops_in_one_group_then_in_another_clear() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, _) = loud_arena(&[40, 41], &drops);
    assert!(catch_unwind(AssertUnwindSafe(|| arena.clear())).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 100);
    assert_eq!(arena.groups(), 1);
    // Again, after the groups were released and added again.
    for n in 0..100 {
        arena.insert(Loud(n == 0 || n == 99, drops.clone()));
    }
    assert!(catch_unwind(AssertUnwindSafe(|| arena.clear())).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 200);
    assert!(arena.is_empty());
}

#[cfg(feature = "std")]
#[test]
fn growable_drop_with_two_panicking_drops_in_two_groups_drops_every_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (arena, _) = loud_arena(&[3, 70], &drops);
    let panic = catch_unwind(AssertUnwindSafe(|| drop(arena))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"loud drop"));
    assert_eq!(drops.load(Ordering::SeqCst), 100);
}

#[cfg(feature = "std")]
/// Moves ten values out of an arena of 100 `Loud`s armed at `armed`, then drops the
/// iterator (in the middle of group 0): the drop panics, and every value is dropped once.
fn into_values_dropped_half_way(armed: &[usize]) {
    let drops = Arc::new(AtomicUsize::new(0));
    let (arena, _) = loud_arena(armed, &drops);
    let mut values = arena.into_values();
    for _ in 0..10 {
        drop(values.next().unwrap());
    }
    assert_eq!(values.len(), 90);
    assert!(catch_unwind(AssertUnwindSafe(|| drop(values))).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 100, "armed at {armed:?}");
}

#[cfg(feature = "std")]
#[test]
fn growable_into_values_dropped_half_way_with_two_panicking_drops_drops_the_rest_once() {
    // In two groups not begun; in the group begun and one not begun; both in the group begun.
    into_values_dropped_half_way(&[50, 95]);
    into_values_dropped_half_way(&[20, 95]);
    into_values_dropped_half_way(&[20, 25]);
}

#[test]
fn growable_iterators_after_groups_were_released_and_added_again() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = GrowableArena::new();
    let old: Vec<Key> = (0..130)
        .map(|_| arena.insert(DropCounter(drops.clone())))
        .collect();
    assert_eq!(arena.groups(), 4);
    // Keep 5 in group 0: the three groups above are released one by one.
    for &key in &old[5..] {
        assert!(arena.remove(key));
    }
    assert_eq!((arena.groups(), arena.capacity()), (1, 32));
    let new: Vec<Key> = (0..200)
        .map(|_| arena.insert(DropCounter(drops.clone())))
        .collect();
    // Growing back into released capacity: fewer, larger groups than the first time.
    assert!(arena.groups() >= 2, "{arena:?}");
    assert_eq!(arena.len(), 205);
    let live: Vec<Key> = old[..5].iter().chain(&new).copied().collect();
    let mut seen: Vec<Key> = arena.iter().map(|(k, _)| k).collect();
    assert_eq!(seen.len(), 205);
    assert_eq!(arena.iter().len(), 205);
    let mut sorted = live.clone();
    sorted.sort_unstable();
    seen.sort_unstable();
    assert_eq!(seen, sorted, "iter gives every live key once");
    let pinned: Vec<Key> = arena.iter_pin_mut().map(|(k, _)| k).collect();
    assert_eq!(pinned.len(), 205);
    assert!(pinned.iter().all(|k| live.contains(k)));
    for key in &live {
        assert!(arena.get(*key).is_some());
        assert!(arena.get_pin_mut(*key).is_some());
    }
    assert!(old[5..].iter().all(|&k| arena.get(k).is_none()));
    // Take some out of the top group and group 0, then move the rest out, half way.
    let top = arena.groups() - 1;
    let in_top: Vec<Key> = new
        .iter()
        .copied()
        .filter(|&k| arena.group_of(k) == Some(top))
        .collect();
    assert!(arena.take(in_top[0]).is_some());
    assert!(arena.take(old[0]).is_some());
    assert_eq!(drops.load(Ordering::SeqCst), 127);
    let mut values = arena.into_values();
    assert_eq!(values.len(), 203);
    for _ in 0..100 {
        values.next().unwrap();
    }
    assert_eq!(values.len(), 103);
    drop(values);
    assert_eq!(drops.load(Ordering::SeqCst), 330, "every value once");
}

#[test]
fn growable_iter_pin_mut_values_are_where_they_were_polled_after_regrowth() {
    let mut arena = GrowableArena::new();
    let (values, states) = probes(70);
    let mut values = values.into_iter();
    let keys: Vec<Key> = values.by_ref().take(40).map(|v| arena.insert(v)).collect();
    let (task, _) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    for &key in &keys[3..] {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.groups(), 1);
    let more: Vec<Key> = values.map(|v| arena.insert(v)).collect();
    assert!(arena.groups() >= 2, "{arena:?}");
    assert!(next_growable(&mut arena, &task).is_pending());
    let by_key: Vec<(Key, usize)> = arena
        .iter_pin_mut()
        .map(|(key, probe): (Key, Pin<&mut Probe>)| (key, probe.as_ref().get_ref().address()))
        .collect();
    assert_eq!(by_key.len(), 33);
    let states_of = |key: Key| -> &Arc<ProbeState> {
        let index = keys
            .iter()
            .chain(&more)
            .position(|&k| k == key)
            .expect("a live key");
        &states[index]
    };
    for &(key, address) in &by_key {
        assert_eq!(states_of(key).address(), address, "{key:?} moved");
    }
}

#[test]
fn growable_keys_of_released_groups_are_refused_by_a_larger_group_in_their_place() {
    // Groups 1 (32 slots) and 2 (64 slots) are released; the group 1 added after is larger
    // than the one it replaces, and a group 2 comes back: each old key is refused.
    let mut arena: GrowableArena<Ready<u32>> = GrowableArena::new();
    let keys: Vec<Key> = (0..100).map(|n| arena.insert(ready(n))).collect();
    assert_eq!(groups_of(&arena, &keys[30..]).last(), Some(&2));
    for &key in &keys[1..] {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.groups(), 1);
    // Of a group the arena no longer has.
    assert_eq!(arena.group_of(keys[99]), None);
    assert!(!arena.contains_key(keys[99]));
    assert!(arena.waker(keys[99]).is_none());
    // Regrow: the retained capacity makes the new group 1 larger than before (96 slots, where
    // the first had 32), and the values past it make a group 2 again.
    let new: Vec<Key> = (0..150).map(|n| arena.insert(ready(1000 + n))).collect();
    // Looked up in sets, not scanned: the test runs under Miri too.
    let new_set: BTreeSet<Key> = new.iter().copied().collect();
    assert_eq!(arena.groups(), 3, "{arena:?}");
    for &old in &keys[1..] {
        assert!(
            arena.group_of(old).is_some(),
            "the slot's group is there again"
        );
        assert!(!arena.contains_key(old), "{old:?}");
        assert!(arena.get(old).is_none());
        assert!(arena.get_pin_mut(old).is_none());
        assert!(arena.waker(old).is_none());
        assert!(!new_set.contains(&old));
    }
    for &old in &keys[1..] {
        assert!(!Storage::remove(&mut arena, old));
    }
    assert_eq!(arena.len(), 151, "a stale key removed a value");
    // Released and refused again, after a second cycle.
    for &key in &new {
        assert!(arena.remove(key));
    }
    let newer: BTreeSet<Key> = (0..150).map(|n| arena.insert(ready(5000 + n))).collect();
    for &stale in keys[1..].iter().chain(&new) {
        assert!(!arena.contains_key(stale));
        assert!(!newer.contains(&stale));
    }
    let (task, _) = counting_waker();
    let outputs = drain(&mut arena, &task);
    assert_eq!(outputs.len(), 151);
    assert!(
        outputs
            .iter()
            .all(|(k, n)| (*n == 0 && *k == keys[0]) || newer.contains(k))
    );
}

#[test]
fn growable_keys_of_aged_slots_are_refused_whichever_released_group_held_them() {
    // Groups 0 and 1 full and one value in group 2; a slot aged (its value leaves and comes
    // back twice) in group 2 or in group 1; then every value but the first leaves, group 2's
    // first (the two groups are released by separate outputs) or last (by one). The groups
    // added in their place take both numbers again, and start past the generations of both.
    // Boxed values, so that each one leaves through a drop. Under Miri, two of the four cases:
    // each group aged, and each order, once.
    let cases: &[(usize, bool)] = if cfg!(miri) {
        &[(64, false), (63, true)]
    } else {
        &[(64, false), (64, true), (63, false), (63, true)]
    };
    for &(aged, top_first) in cases {
        let case = format!("slot {aged} aged, group 2 emptied first: {top_first}");
        let mut arena = GrowableArena::new();
        let mut keys: Vec<Key> = (0..65).map(|n| arena.insert(ready(Box::new(n)))).collect();
        assert_eq!(groups_of(&arena, &keys[63..]), [1, 2]);
        let mut departed: Vec<Key> = Vec::new();
        for _ in 0..2 {
            let key = keys[aged];
            assert!(arena.remove(key));
            departed.push(key);
            keys[aged] = arena.insert(ready(Box::new(0)));
            assert_eq!(
                keys[aged].index(),
                key.index(),
                "{case}: the slot is taken again"
            );
        }
        departed.extend(&keys[1..]);
        let (below, top) = keys[1..].split_at(63);
        let order: Vec<Key> = if top_first {
            top.iter().chain(below).copied().collect()
        } else {
            below.iter().chain(top).copied().collect()
        };
        for key in order {
            assert!(arena.remove(key));
        }
        assert_eq!(arena.groups(), 1, "{case}");
        let new: BTreeSet<Key> = (0..160).map(|n| arena.insert(ready(Box::new(n)))).collect();
        assert_eq!(arena.groups(), 3, "{case}");
        assert!(
            arena.group_of(departed[0]).is_some(),
            "{case}: the slot's group is there again"
        );
        for &old in &departed {
            assert!(!arena.contains_key(old), "{case}: {old:?}");
            assert!(!new.contains(&old), "{case}: {old:?}");
        }
    }
}

#[test]
fn growable_stale_waker_of_a_released_group_does_not_poll_the_group_in_its_place() {
    let mut arena = GrowableArena::new();
    let (values, states) = probes(33);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    let (task, _) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    let stale = states[32].waker();
    for &key in keys[1..].iter() {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.groups(), 1);
    let (more, more_states) = probes(40);
    let more_keys: Vec<Key> = more.into_iter().map(|v| arena.insert(v)).collect();
    assert_eq!(arena.groups(), 2);
    assert!(next_growable(&mut arena, &task).is_pending());
    assert!(more_states.iter().all(|s| s.polls() == 1));
    // The released group's waker sets group 1's hub bit: the group there finds nothing.
    stale.wake_by_ref();
    drop(stale);
    assert!(next_growable(&mut arena, &task).is_pending());
    assert!(
        more_states.iter().all(|s| s.polls() == 1),
        "a value polled by a released group's waker"
    );
    assert_eq!(states[0].polls(), 1);
    assert!(!arena.contains_key(keys[32]));
    assert!(more_keys.iter().all(|&k| arena.contains_key(k)));
}

/// A value aligned past a cache line, and past the groups' stride.
#[repr(align(256))]
struct Wide(u64);

#[test]
fn growable_values_aligned_past_the_group_alignment_stay_aligned_across_groups() {
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..200).map(|n| arena.insert(Wide(n))).collect();
    assert!(arena.groups() >= 4);
    for (n, &key) in keys.iter().enumerate() {
        let value = arena.get(key).unwrap();
        assert_eq!(value.0, n as u64);
        assert_eq!(core::ptr::from_ref(value).addr() % 256, 0);
    }
    for (_, value) in arena.iter_pin_mut() {
        assert_eq!(core::ptr::from_ref(value.get_mut()).addr() % 256, 0);
    }
    let mut cx = Context::from_waker(Waker::noop());
    let mut outputs = 0;
    while let Poll::Ready(Some(_)) = arena.poll_next(&mut cx, |_, value, _| {
        assert_eq!(core::ptr::from_ref(&*value).addr() % 256, 0);
        Step::Done(())
    }) {
        outputs += 1;
    }
    assert_eq!(outputs, 200);
    assert_eq!(arena.groups(), 1);
}

#[test]
fn growable_zero_sized_values_across_many_groups() {
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..300).map(|_| arena.insert(())).collect();
    assert!(arena.groups() >= 5);
    assert_eq!(arena.iter().count(), 300);
    for &key in keys.iter().step_by(2) {
        assert_eq!(arena.take(key), Some(()));
    }
    assert_eq!(arena.into_values().count(), 150);
}

#[cfg(feature = "std")]
/// A ready future whose drop panics if armed ([`Loud`]).
struct LoudReady(#[expect(dead_code, reason = "kept for its drop")] Loud);

#[cfg(feature = "std")]
impl Future for LoudReady {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

#[cfg(feature = "std")]
/// A growable arena of two groups (2 slots, then 32) whose only value is in the top group, its
/// drop panicking; its key.
fn loud_top(drops: &Arc<AtomicUsize>) -> (GrowableArena<LoudReady>, Key) {
    let mut arena = GrowableArena::with_capacity(2);
    let keys: Vec<Key> = (0..3)
        .map(|n| arena.insert(LoudReady(Loud(n == 2, drops.clone()))))
        .collect();
    assert_eq!(arena.groups(), 2);
    assert!(arena.remove(keys[0]) && arena.remove(keys[1]));
    (arena, keys[2])
}

#[cfg(feature = "std")]
#[test]
fn growable_top_group_emptied_by_a_panicking_drop_at_an_output_is_released_at_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, _) = loud_top(&drops);
    let (waker, _) = counting_waker();
    let panic = catch_unwind(AssertUnwindSafe(|| next_growable(&mut arena, &waker))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"loud drop"));
    assert_eq!((drops.load(Ordering::SeqCst), arena.len()), (3, 0));
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 2),
        "released as the output's drop panics"
    );
    // Usable: a third value adds a group again, and is polled.
    let keys: Vec<Key> = (0..3)
        .map(|_| arena.insert(LoudReady(Loud(false, drops.clone()))))
        .collect();
    assert_eq!(arena.groups(), 2);
    let outputs = drain(&mut arena, &waker);
    assert_eq!(outputs.iter().map(|(k, ())| *k).collect::<Vec<_>>(), keys);
}

#[cfg(feature = "std")]
#[test]
fn growable_top_group_emptied_by_a_remove_whose_drop_panics_is_released_at_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, top) = loud_top(&drops);
    let panic = catch_unwind(AssertUnwindSafe(|| arena.remove(top))).unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"loud drop"));
    assert_eq!((drops.load(Ordering::SeqCst), arena.len()), (3, 0));
    assert!(!arena.contains_key(top));
    assert_eq!((arena.groups(), arena.capacity()), (1, 2));
}
