//! A growable arena whose top group empties as a panic leaves a call: of a value's poll (a
//! merge's head polled in place, or a value the round took out of its queue), of a value's
//! `Drop` at an output, at `remove` or with a second panic after its poll's; the task's wake,
//! the values still queued, the drops, the keys and the groups afterwards.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
use pinfold_testkit::waker::counting_waker;

use crate::storage::store::RETIRED_GENERATION as LAST_GENERATION;
use crate::{GrowableArena, Key, Step, Storage};
use alloc::string::String;
use alloc::vec::Vec;

/// A value that counts its drops, and panics in its `Drop` if armed.
#[derive(Debug)]
struct Tagged {
    id: usize,
    loud: bool,
    drops: Arc<AtomicUsize>,
}

impl Drop for Tagged {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.loud {
            panic!("loud drop {}", self.id);
        }
    }
}

/// A growable arena of two groups (2 slots, then 32): `x` and `y` in the first, `s` alone in
/// the top one, none of them armed to panic in its `Drop` but `s` if `loud_s`.
fn three(drops: &Arc<AtomicUsize>, loud_s: bool) -> (GrowableArena<Tagged>, [Key; 3]) {
    let mut arena = GrowableArena::with_capacity(2);
    let keys = [0, 1, 2].map(|id| {
        arena.insert(Tagged {
            id,
            loud: id == 2 && loud_s,
            drops: drops.clone(),
        })
    });
    assert_eq!(arena.groups(), 2);
    assert_eq!(
        keys.map(|k| arena.group_of(k).unwrap()),
        [0, 0, 1],
        "s alone in the top group"
    );
    (arena, keys)
}

/// A merge's call (`poll_next_some`) in which value `id`'s poll is `step(id)`.
fn merge_call(
    arena: &mut GrowableArena<Tagged>,
    task: &Waker,
    step: impl Fn(usize) -> Step<Option<usize>>,
) -> Poll<Option<(Key, usize)>> {
    let mut cx = Context::from_waker(task);
    arena.poll_next_some(&mut cx, |_, value, _| step(value.id))
}

/// Three merge calls that leave `y` out of the queues (it stayed `Pending`) and the queue as
/// `s`, `x`, with nothing woken since, so that the next call polls `s` in place.
fn s_ahead_of_x(arena: &mut GrowableArena<Tagged>, task: &Waker, x: Key, s: Key) {
    // Call 1 (a round in full): `x` gives an item and goes to the next round's queue.
    let out = merge_call(arena, task, |id| match id {
        0 => Step::Repoll(Some(0)),
        _ => Step::Pending,
    });
    assert_eq!(out, Poll::Ready(Some((x, 0))));
    // Call 2: `y` (the head) stays `Pending` and leaves the queues; `s` gives an item.
    let out = merge_call(arena, task, |id| match id {
        1 => Step::Pending,
        _ => Step::Repoll(Some(id)),
    });
    assert_eq!(out, Poll::Ready(Some((s, 2))));
    // Call 3: nothing woken: `x`, at the head, gives an item in place and rotates behind `s`.
    let out = merge_call(arena, task, |id| Step::Repoll(Some(id)));
    assert_eq!(out, Poll::Ready(Some((x, 0))));
}

#[test]
fn a_merge_head_that_empties_the_top_group_by_panicking_in_place_leaves_the_task_woken_for_the_value_queued_behind_it()
 {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, [x, y, s]) = three(&drops, false);
    let (task, wakes) = counting_waker();
    s_ahead_of_x(&mut arena, &task, x, s);
    // `y` leaves from outside the queues: `x` in the first group, `s` alone in the top one,
    // queued as `s`, `x`.
    assert!(arena.remove(y));
    assert_eq!((arena.len(), arena.groups()), (2, 2));
    // Call 4: nothing woken: `s`, at the head, panics in place. It was the top group's last
    // value, and one value is left in the two slots under it: the group is released as the
    // panic leaves. `x` is still queued, so the task must be woken to poll it.
    let before = wakes.count();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        merge_call(&mut arena, &task, |id| {
            assert_eq!(id, 2, "s is at the head");
            panic!("s panics");
        })
    }));
    assert!(panicked.is_err());
    assert_eq!((arena.len(), drops.load(Ordering::SeqCst)), (1, 2));
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 2),
        "the top group is released"
    );
    assert!(
        wakes.count() > before,
        "x waits to be polled: the task is woken for it"
    );
    // Polled again, the arena gives `x`'s item at once.
    let out = merge_call(&mut arena, &task, |id| Step::Repoll(Some(id)));
    assert_eq!(out, Poll::Ready(Some((x, 0))));
}

#[test]
fn a_merge_head_in_the_top_group_that_panics_in_place_wakes_the_task_also_when_the_group_stays() {
    // As above, but `y` stays: the values fill the slots under the top group, the group is
    // not released, and the head that panicked stays in the queue (to be skipped).
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, [x, _, s]) = three(&drops, false);
    let (task, wakes) = counting_waker();
    s_ahead_of_x(&mut arena, &task, x, s);
    let before = wakes.count();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        merge_call(&mut arena, &task, |_| panic!("s panics"))
    }));
    assert!(panicked.is_err());
    assert_eq!((arena.len(), arena.groups()), (2, 2));
    assert!(wakes.count() > before, "x waits to be polled");
    let out = merge_call(&mut arena, &task, |id| Step::Repoll(Some(id)));
    assert_eq!(out, Poll::Ready(Some((x, 0))));
}

/// A call (`poll_next`) in which value `id`'s poll is `step(id, cx)`.
fn call(
    arena: &mut GrowableArena<Tagged>,
    task: &Waker,
    step: impl Fn(usize, &mut Context<'_>) -> Step<usize>,
) -> Poll<Option<(Key, usize)>> {
    let mut cx = Context::from_waker(task);
    arena.poll_next(&mut cx, |_, value, cx| step(value.id, cx))
}

#[test]
fn a_value_whose_poll_and_drop_both_panic_as_the_top_groups_last_is_dropped_once_and_its_group_released()
 {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, [x, y, s]) = three(&drops, true);
    let stale = arena.waker(s).unwrap();
    assert!(arena.remove(y));
    let (task, _) = counting_waker();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        call(&mut arena, &task, |id, _| match id {
            2 => panic!("s panics"),
            _ => Step::Pending,
        })
    }))
    .unwrap_err();
    assert_eq!(
        panicked.downcast_ref::<&str>(),
        Some(&"s panics"),
        "the poll's panic goes on, the drop's is dropped"
    );
    assert_eq!((drops.load(Ordering::SeqCst), arena.len()), (2, 1));
    assert_eq!((arena.groups(), arena.capacity()), (1, 2));
    // Grown again: the first group's free slot, then a new top group.
    let quiet = |id| Tagged {
        id,
        loud: false,
        drops: drops.clone(),
    };
    let (a, b) = (arena.insert(quiet(3)), arena.insert(quiet(4)));
    assert_eq!((arena.groups(), arena.group_of(b)), (2, Some(1)));
    assert!(![a, b].contains(&s) && !arena.contains_key(s) && arena.get(s).is_none());
    assert!(!arena.remove(s), "a released group's key is refused");
    let polled = std::cell::RefCell::new(Vec::new());
    let out = call(&mut arena, &task, |id, _| {
        polled.borrow_mut().push(id);
        Step::Pending
    });
    assert!(out.is_pending());
    assert_eq!(*polled.borrow(), [3, 4], "each new value polled once");
    // The waker of the value that panicked reaches no value of the group now in its place.
    stale.wake();
    polled.borrow_mut().clear();
    let out = call(&mut arena, &task, |id, _| {
        polled.borrow_mut().push(id);
        Step::Pending
    });
    assert!(out.is_pending());
    assert!(polled.borrow().is_empty(), "{:?}", polled.borrow());
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 5, "each value dropped once");
    let _ = x;
}

#[test]
fn a_task_waker_that_panics_while_a_round_repairs_after_a_panic_that_released_the_top_group_leaves_the_poll_panic_going_on()
 {
    for ops in [WakerOps::CLONE, WakerOps::ANY_WAKE] {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut arena, [x, y, s]) = three(&drops, false);
        assert!(arena.remove(y));
        let (task, switches) = panicking_waker();
        switches.panic_once(ops);
        // `x` wakes itself (queued for the next round, so the repair wakes the task); `s`, the
        // top group's last value, panics.
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            call(&mut arena, &task, |id, cx| match id {
                2 => panic!("s panics"),
                _ => {
                    cx.waker().wake_by_ref();
                    Step::Pending
                }
            })
        }))
        .unwrap_err();
        assert_eq!(
            panicked.downcast_ref::<&str>(),
            Some(&"s panics"),
            "{ops:?}"
        );
        assert_eq!(switches.panics(), 1, "{ops:?}");
        assert_eq!((arena.groups(), arena.len()), (1, 1), "{ops:?}");
        assert!(!arena.contains_key(s) && arena.contains_key(x));
        // Usable: `x` is polled again, and gives its output.
        let (plain, _) = counting_waker();
        let out = call(&mut arena, &plain, |id, _| Step::Done(id));
        assert_eq!(out, Poll::Ready(Some((x, 0))), "{ops:?}");
        assert_eq!(drops.load(Ordering::SeqCst), 3, "{ops:?}");
    }
}

#[test]
fn a_panicking_drop_of_the_top_groups_last_value_at_a_merge_heads_end_releases_the_group() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (mut arena, [x, y, s]) = three(&drops, true);
    assert!(arena.remove(y));
    let (task, _) = counting_waker();
    // `x` stays `Pending`, `s` ends (a stream's `None`), its `Drop` panics.
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        merge_call(&mut arena, &task, |id| match id {
            2 => Step::Done(None),
            _ => Step::Pending,
        })
    }))
    .unwrap_err();
    assert_eq!(
        panicked.downcast_ref::<String>().map(String::as_str),
        Some("loud drop 2")
    );
    assert_eq!((drops.load(Ordering::SeqCst), arena.len()), (2, 1));
    assert_eq!((arena.groups(), arena.capacity()), (1, 2));
    assert!(!arena.contains_key(s) && arena.contains_key(x));
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    // A value taken out of the top group's last slot releases it too.
    let (mut arena, [x, y, s]) = three(&drops, false);
    assert!(arena.remove(y));
    let taken = arena.take(s).unwrap();
    assert_eq!(taken.id, 2);
    assert_eq!((arena.groups(), arena.capacity(), arena.len()), (1, 2, 1));
    assert!(arena.contains_key(x) && !arena.contains_key(s));
    drop(taken);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

#[test]
fn an_insert_passes_over_a_retired_slot_to_a_group_with_room_without_adding_one() {
    let mut arena = GrowableArena::starting_at_generation(1, LAST_GENERATION - 1);
    let a = arena.insert(0u32);
    let b = arena.insert(1);
    assert_eq!((arena.groups(), arena.group_of(b)), (2, Some(1)));
    // `a`'s slot reaches the last generation as `a` leaves: retired, though its group is
    // marked as having room again.
    assert!(arena.remove(a));
    let c = arena.insert(2);
    assert_eq!(arena.group_of(c), Some(1));
    assert_eq!(
        arena.groups(),
        2,
        "no group added while the second has room"
    );
    // The second group's 30 free slots, then a third group.
    let more: Vec<Key> = (3..33).map(|n| arena.insert(n)).collect();
    assert_eq!(arena.groups(), 2);
    let last = arena.insert(33);
    assert_eq!((arena.groups(), arena.group_of(last)), (3, Some(2)));
    assert_eq!(arena.len(), 33);
    assert!(more.iter().all(|&k| arena.contains_key(k)) && !arena.contains_key(a));
}

#[test]
fn an_insert_that_needs_a_group_once_a_released_group_ran_out_of_generations_panics() {
    // A released group whose slot counted its last generation leaves the floor of every group
    // added after at the end: such a group could take no value. The insert that needs one
    // says so, where it added ever larger groups that took nothing, until memory ran out.
    let mut arena = GrowableArena::starting_at_generation(32, LAST_GENERATION - 3);
    let mut keys: Vec<Key> = (0..100u32).map(|n| arena.insert(n)).collect();
    assert_eq!(arena.groups(), 3);
    for _ in 0..2 {
        assert!(arena.remove(keys.pop().unwrap()));
        keys.push(arena.insert(7));
    }
    assert_eq!(arena.group_of(*keys.last().unwrap()), Some(2));
    for &key in &keys {
        assert!(arena.remove(key));
    }
    assert_eq!(arena.groups(), 1);
    let again: Vec<Key> = (0..32).map(|n| arena.insert(1000 + n)).collect();
    let panic = catch_unwind(AssertUnwindSafe(|| arena.insert(2000))).unwrap_err();
    let message = panic.downcast_ref::<String>().map_or("", |s| s.as_str());
    assert!(message.contains("generations"), "{message}");
    assert_eq!((arena.groups(), arena.len()), (1, 32), "{arena:?}");
    assert!(again.iter().all(|&key| arena.contains_key(key)));
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
    // A reserve that needs a group says the same, and leaves the arena as it was.
    for &key in &again[..10] {
        assert!(arena.remove(key));
    }
    let panic = catch_unwind(AssertUnwindSafe(|| arena.reserve(11))).unwrap_err();
    let message = panic.downcast_ref::<String>().map_or("", |s| s.as_str());
    assert!(message.contains("generations"), "{message}");
    assert_eq!((arena.groups(), arena.capacity(), arena.len()), (1, 32, 22));
    arena.reserve(10);
    let refill: Vec<Key> = (0..10).map(|n| arena.insert(3000 + n)).collect();
    assert_eq!((arena.groups(), arena.len()), (1, 32));
    assert!(refill.iter().all(|&key| arena.contains_key(key)));
}

#[test]
fn an_insert_into_a_slot_whose_entries_both_have_wakers_of_departed_values_adds_no_group() {
    let mut arena = GrowableArena::with_capacity(1);
    let mut stale = Vec::new();
    let mut keys = Vec::new();
    for n in 0..2u32 {
        let key = arena.insert(n);
        stale.push(arena.waker(key).unwrap());
        keys.push(key);
        assert!(arena.remove(key));
    }
    let key = arena.insert(2);
    assert_eq!(
        (arena.groups(), arena.len()),
        (1, 1),
        "the first group's slot"
    );
    assert!(!keys.contains(&key));
    let (task, _) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polls = std::cell::Cell::new(0);
    let mut poll = |arena: &mut GrowableArena<u32>| {
        arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
            polls.set(polls.get() + 1);
            Step::Pending
        })
    };
    assert!(poll(&mut arena).is_pending());
    assert_eq!(polls.get(), 1);
    // A departed value's waker may cost the new value a spurious poll, never more.
    for waker in stale {
        waker.wake();
    }
    assert!(poll(&mut arena).is_pending());
    assert!(polls.get() <= 2);
    assert_eq!(arena.groups(), 1);
}

/// A value aligned to 256 bytes.
#[repr(align(256))]
#[derive(Debug)]
struct Wide(
    u64,
    #[expect(dead_code, reason = "kept for its drop")] super::DropCounter,
);

#[test]
fn over_aligned_values_stay_aligned_and_whole_across_a_release_and_regrowths() {
    let drops = Arc::new(AtomicUsize::new(0));
    let wide = |n| Wide(n, super::DropCounter(drops.clone()));
    let mut arena = GrowableArena::with_capacity(2);
    for round in 0..3u64 {
        let keys: Vec<Key> = (0..40)
            .map(|n| arena.insert(wide(round * 100 + n)))
            .collect();
        assert!(arena.groups() >= 2);
        for (n, &key) in keys.iter().enumerate() {
            let value = arena.get(key).unwrap();
            assert_eq!(value.0, round * 100 + n as u64);
            assert_eq!(core::ptr::from_ref(value).addr() % 256, 0);
        }
        for &key in &keys[1..] {
            assert!(arena.remove(key));
        }
        if round == 0 {
            assert_eq!(arena.groups(), 1, "released down to the first group");
        }
        assert_eq!(arena.take(keys[0]).map(|v| v.0), Some(round * 100));
    }
    assert_eq!(drops.load(Ordering::SeqCst), 120);
}
