//! A growable arena's groups: one task wake and one queue across them, groups added and given
//! back, iterators over them, and wakes scattered among them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::probe::probes;
use pinfold_testkit::waker::counting_waker;

use super::{DropCounter, next_growable};
use crate::{GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

#[test]
fn a_growable_arena_of_two_groups_wakes_its_task_once_and_polls_only_the_woken() {
    let mut arena = GrowableArena::with_capacity(2);
    let (values, states) = probes(4);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    assert_eq!(arena.groups(), 2, "two slots, then a second group");
    assert_eq!(
        keys.iter()
            .map(|&k| arena.group_of(k).unwrap())
            .collect::<Vec<_>>(),
        [0, 0, 1, 1]
    );
    let (parent_waker, parent) = counting_waker();
    assert!(next_growable(&mut arena, &parent_waker).is_pending());
    assert!(states.iter().all(|state| state.polls() == 1));

    // Wakes into both groups: the task is woken once.
    for id in [0, 2, 3] {
        states[id].finish();
    }
    assert_eq!(parent.count(), 1);
    let mut outputs: Vec<(Key, usize)> = (0..3)
        .map(|_| match next_growable(&mut arena, &parent_waker) {
            Poll::Ready(Some(output)) => output,
            other => panic!("three values were woken, yet the arena gave {other:?}"),
        })
        .collect();
    outputs.sort_unstable();
    assert_eq!(outputs, [(keys[0], 0), (keys[2], 2), (keys[3], 3)]);
    assert!(next_growable(&mut arena, &parent_waker).is_pending());
    assert_eq!(states[1].polls(), 1, "a value never woken was polled again");
    assert_eq!(parent.count(), 1, "no self-wake: nothing was left to poll");
    assert_eq!(arena.len(), 1);
}

#[test]
fn clearing_a_growable_arena_empties_it_and_gives_back_its_groups() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..100)
        .map(|_| arena.insert(DropCounter(drops.clone())))
        .collect();
    assert_eq!((arena.groups(), arena.capacity()), (3, 128));
    arena.clear();
    assert_eq!(drops.load(Ordering::SeqCst), 100);
    assert_eq!(arena.len(), 0);
    assert!(arena.is_empty());
    assert_eq!(arena.iter().count(), 0);
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 32),
        "clear releases every group but the first"
    );
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
    let key = arena.insert(DropCounter(drops.clone()));
    assert_eq!(arena.len(), 1);
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 32),
        "the first insert after a clear goes to the group kept"
    );
    assert!(arena.remove(key));
    assert!(arena.is_empty());
}

/// The key of the value that gave the next output of `arena`, every value an always-ready
/// stream (`Step::Repoll`) counting its items.
fn next_repolled(arena: &mut GrowableArena<u32>) -> Key {
    let mut cx = Context::from_waker(Waker::noop());
    match arena.poll_next(&mut cx, |key, items, _| {
        *items.get_mut() += 1;
        Step::Repoll(key)
    }) {
        Poll::Ready(Some((key, _))) => key,
        other => panic!("always-ready values gave {other:?}"),
    }
}

#[test]
fn always_ready_values_keep_coming_when_a_growable_arena_gains_a_second_group() {
    // One group, then two: the groups share one queue, so the values take turns as in one
    // arena, whatever their group.
    let mut arena = GrowableArena::with_capacity(2);
    let a = arena.insert(0u32);
    let b = arena.insert(0u32);
    let first: Vec<Key> = (0..4).map(|_| next_repolled(&mut arena)).collect();
    assert_eq!(first, [a, b, a, b], "one group: the two take turns");

    // A second group while both values wait to be polled again: no value waits behind more
    // outputs than the arena holds values.
    let c = arena.insert(0u32);
    assert_eq!(arena.groups(), 2);
    let mut last_seen = [0usize; 3];
    for pull in 1..=200 {
        let key = next_repolled(&mut arena);
        let value = [a, b, c].iter().position(|&k| k == key).unwrap();
        assert!(
            pull - last_seen[value] <= arena.len(),
            "value {value} (a, b, c) waited {} outputs, more than the {} values",
            pull - last_seen[value],
            arena.len()
        );
        last_seen[value] = pull;
    }
    assert!(
        last_seen.iter().all(|&pull| pull > 200 - arena.len()),
        "every value gave an item in the last turns: {last_seen:?}"
    );

    // Without the second group's value, the first group's two take turns again.
    assert!(arena.remove(c));
    let last: Vec<Key> = (0..4).map(|_| next_repolled(&mut arena)).collect();
    assert_eq!(last.iter().filter(|&&k| k == a).count(), 2, "{last:?}");
    assert_eq!(last.iter().filter(|&&k| k == b).count(), 2, "{last:?}");
}

/// Pending on its first poll, where it hands its waker out through `wakers`; ready with its
/// id on the next.
struct Parked {
    id: usize,
    wakers: Arc<std::sync::Mutex<Vec<Option<Waker>>>>,
    polled: bool,
}

impl Future for Parked {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        if self.polled {
            return Poll::Ready(self.id);
        }
        self.polled = true;
        self.wakers.lock().unwrap()[self.id] = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[test]
fn a_growable_arena_gives_every_value_woken_across_its_groups_once() {
    // In several groups: the first holds 32.
    const VALUES: usize = 100;
    let wakers = Arc::new(std::sync::Mutex::new(alloc::vec![None; VALUES]));
    let mut arena = GrowableArena::new();
    for id in 0..VALUES {
        arena.insert(Parked {
            id,
            wakers: wakers.clone(),
            polled: false,
        });
    }
    assert!(arena.groups() > 1);
    let (task, woken) = counting_waker();
    assert!(next_growable(&mut arena, &task).is_pending());
    // Wake them scattered across the groups, a few at a time, taking what is ready between.
    // 37 is prime to 100: every value once.
    let order: Vec<usize> = (0..VALUES).map(|i| i * 37 % VALUES).collect();
    let mut seen = alloc::vec![false; VALUES];
    for wave in order.chunks(7) {
        let before = woken.count();
        for &id in wave {
            wakers.lock().unwrap()[id].take().unwrap().wake();
        }
        assert!(woken.count() > before, "the pending set's task is woken");
        while let Poll::Ready(Some((_, id))) = next_growable(&mut arena, &task) {
            assert!(!std::mem::replace(&mut seen[id], true), "{id} given twice");
        }
        assert!(
            wave.iter().all(|&id| seen[id]),
            "every woken value is given before the set is pending"
        );
    }
    assert!(seen.iter().all(|&s| s));
    assert!(arena.is_empty());
}

#[test]
fn a_growable_arenas_iterators_give_every_value_once_and_count_down_across_groups() {
    let mut arena = GrowableArena::with_capacity(2);
    let keys: Vec<Key> = (0..40u32).map(|n| arena.insert(n)).collect();
    assert_eq!(arena.groups(), 3);
    let mut iter = arena.iter();
    for left in (0..40).rev() {
        let (key, &n) = iter.next().unwrap();
        assert_eq!(
            (key, iter.len(), iter.size_hint()),
            (keys[n as usize], left, (left, Some(left)))
        );
    }
    assert!(iter.next().is_none());
    let mut pinned = arena.iter_pin_mut();
    for left in (0..40).rev() {
        let (_, mut n) = pinned.next().unwrap();
        *n += 100;
        assert_eq!(
            (pinned.len(), pinned.size_hint()),
            (left, (left, Some(left)))
        );
    }
    assert!(pinned.next().is_none());
    assert_eq!(
        alloc::format!("{arena:?}"),
        "GrowableArena { len: 40, capacity: 68, groups: 3, .. }"
    );
    assert_eq!(arena.take(keys[7]), Some(107));
    assert_eq!(arena.take(keys[7]), None, "taken once");
    let mut values = arena.into_values();
    assert_eq!(alloc::format!("{values:?}"), "IntoValues { len: 39, .. }");
    for left in (0..39).rev() {
        assert!(values.next().unwrap() >= 100);
        assert_eq!(
            (values.len(), values.size_hint()),
            (left, (left, Some(left)))
        );
    }
    assert!(values.next().is_none());
}

#[test]
fn an_insert_that_fills_a_group_keeps_the_room_of_the_groups_above() {
    let mut arena = GrowableArena::with_capacity(2);
    let keys: Vec<Key> = (0..3u32).map(|n| arena.insert(n)).collect();
    assert_eq!((arena.groups(), arena.capacity()), (2, 34));
    assert!(arena.remove(keys[0]));
    arena.insert(3); // fills the first group again
    arena.insert(4); // goes to the second group, which has room
    assert_eq!((arena.groups(), arena.capacity()), (2, 34));
}

#[test]
#[should_panic = "GrowableArena::with_capacity: 18446744073709551615 slots are more than a \
                  growable arena holds"]
fn a_capacity_past_what_an_arena_holds_panics_before_allocating() {
    let _ = GrowableArena::<u32>::with_capacity(usize::MAX);
}

#[test]
#[should_panic = "GrowableArena::reserve: 4294967296 more slots are more than a growable arena \
                  holds"]
fn a_reserve_past_what_an_arena_holds_panics_before_allocating() {
    let mut arena = GrowableArena::new();
    arena.insert(1u32);
    arena.reserve(1 << 32);
}
