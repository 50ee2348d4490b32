//! The round mark of a value that stays `Pending` is written by the kind's `poll_slot`, and by
//! `poll_first` (a merge's first poll of a call, polled in place) after it numbers the round;
//! a join arena's vain repolls are counted from that mark.
use std::cell::RefCell;
use std::task::{Context, Poll, Waker};

use pinfold_testkit::waker::counting_waker;

use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

/// Three values `a`, `b`, `x`, all polled once and `Pending`. `a` and `b` are woken; a call
/// polls `a`, which gives an item (`Repoll`, queued for the next round), leaving `b` queued.
/// The next call takes the merge's fast path (nothing woken since): `b`, at the head of the
/// queue, is polled in place and stays `Pending`; then `a` wakes `b` and stays `Pending`. The
/// budget (3) would allow another poll, but `b` was polled in this round already: it waits
/// for the next (the task is woken), not polled twice in this one.
fn merge_head_pending_is_marked_with_its_round<S: Storage<u32>>(
    arena: &mut S,
    [a, b, x]: [Key; 3],
    [wake_a, wake_b]: [&std::task::Waker; 2],
) {
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polled = RefCell::new(Vec::new());
    // Call 0: every value polled once, all `Pending`.
    let out = arena.poll_next_some(&mut cx, |k, _, _| -> Step<Option<Key>> {
        polled.borrow_mut().push(k);
        Step::Pending
    });
    assert_eq!(out, Poll::Pending);
    assert_eq!(*polled.borrow(), [a, b, x]);
    wake_a.wake_by_ref();
    wake_b.wake_by_ref();
    // Call 1: `a` gives an item and goes to the next round's queue; `b` stays queued.
    let out = arena.poll_next_some(&mut cx, |k, _, _| {
        assert_eq!(k, a, "a is queued first");
        Step::Repoll(Some(k))
    });
    assert_eq!(out, Poll::Ready(Some((a, a))));
    // Call 2: nothing woken: the head of the queue (`b`) is polled in place.
    polled.borrow_mut().clear();
    let before = wakes.count();
    let out = arena.poll_next_some(&mut cx, |k, _, _| -> Step<Option<Key>> {
        polled.borrow_mut().push(k);
        if k == a {
            wake_b.wake_by_ref();
        }
        Step::Pending
    });
    assert_eq!(out, Poll::Pending);
    assert_eq!(
        *polled.borrow(),
        [b, a],
        "b polled once in its round though a woke it after its poll"
    );
    assert!(
        wakes.count() > before,
        "the task is woken for b's next round"
    );
    // Call 3: the next round polls `b` (woken), once.
    polled.borrow_mut().clear();
    let out = arena.poll_next_some(&mut cx, |k, _, _| -> Step<Option<Key>> {
        polled.borrow_mut().push(k);
        Step::Pending
    });
    assert_eq!(out, Poll::Pending);
    assert_eq!(*polled.borrow(), [b], "b polled in the next round");
}

#[test]
fn a_merge_head_pending_in_place_is_marked_with_its_round_fixed() {
    let mut arena = Arena::new(3);
    let a = arena.insert(0u32).unwrap();
    let b = arena.insert(1u32).unwrap();
    let x = arena.insert(2u32).unwrap();
    let (wake_a, wake_b) = (arena.waker(a).unwrap(), arena.waker(b).unwrap());
    merge_head_pending_is_marked_with_its_round(&mut arena, [a, b, x], [&wake_a, &wake_b]);
}

#[test]
fn a_merge_head_pending_in_place_is_marked_with_its_round_growable() {
    let mut arena = GrowableArena::new();
    let a = arena.insert(0u32);
    let b = arena.insert(1u32);
    let x = arena.insert(2u32);
    let (wake_a, wake_b) = (arena.waker(a).unwrap(), arena.waker(b).unwrap());
    merge_head_pending_is_marked_with_its_round(&mut arena, [a, b, x], [&wake_a, &wake_b]);
}

/// Three values `a`, `b`, `c` that give an item on every poll, at the head of a merge's queue
/// in turn (each call polls its head in place and rotates it to the end), until `c`, polled in
/// place, gives `Repoll` with no item: the round goes on from it, as if it had taken `c` out
/// of the queue, and gives `a`'s item. `c` is polled again in the next round, and no value is
/// lost from the queue: the calls after give `b`, `c`, `a` in turn.
fn merge_head_repoll_without_item_keeps_the_queue<S: Storage<u32>>(
    arena: &mut S,
    [a, b, c]: [Key; 3],
) {
    let (task, _) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let mut silent = Some(c);
    let mut call = |arena: &mut S| {
        arena.poll_next_some(&mut cx, |k, _, _| {
            if silent == Some(k) {
                silent = None;
                Step::Repoll(None)
            } else {
                Step::Repoll(Some(k))
            }
        })
    };
    let mut items = Vec::new();
    for _ in 0..9 {
        match call(arena) {
            Poll::Ready(Some((_, k))) => items.push(k),
            other => panic!("every call gives an item, got {other:?}"),
        }
    }
    assert_eq!(
        items,
        [a, b, a, b, c, a, b, c, a],
        "c's call gives a's item, then every value in turn"
    );
}

#[test]
fn a_merge_head_repolled_without_an_item_keeps_the_queue_fixed() {
    let mut arena = Arena::new(3);
    let keys = [0u32, 1, 2].map(|v| arena.insert(v).unwrap());
    merge_head_repoll_without_item_keeps_the_queue(&mut arena, keys);
}

#[test]
fn a_merge_head_repolled_without_an_item_keeps_the_queue_growable() {
    // Two groups: `c`, at the head when it gives no item, alone in the second.
    let mut arena = GrowableArena::with_capacity(2);
    let keys = [0u32, 1, 2].map(|v| arena.insert(v));
    assert_eq!(arena.groups(), 2);
    merge_head_repoll_without_item_keeps_the_queue(&mut arena, keys);
}

/// More values than a round allows vain repolls.
const ROTATED: usize = crate::MAX_VAIN_REPOLLS + 8;

/// `ROTATED` values, all polled once and `Pending` (each marked with that round), then all
/// woken: each of the next `ROTATED` calls gives one item (`Repoll`), the first from a full
/// round, the others from the head polled in place and rotated to the end of the queue. Then
/// every value stays `Pending`, unwoken. A value queued again after an item was not polled in
/// vain: none of these polls counts against the round's vain repolls, and the round polls
/// them all before it returns `Pending` (rotating the head polled in place clears its round
/// mark).
fn rotated_values_are_not_vain_repolls<S: Storage<u32>>(arena: &mut S, wakers: &[Waker]) {
    let (task, _) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let polled = RefCell::new(Vec::new());
    let mut pending = |arena: &mut S| {
        polled.borrow_mut().clear();
        let out = arena.poll_next_some(&mut cx, |_, v, _| -> Step<Option<u32>> {
            polled.borrow_mut().push(*v);
            Step::Pending
        });
        assert_eq!(out, Poll::Pending);
        polled.borrow().len()
    };
    assert_eq!(pending(arena), ROTATED, "every value polled once");
    wakers.iter().for_each(Waker::wake_by_ref);
    let mut items = Vec::new();
    for _ in 0..ROTATED {
        match arena.poll_next_some(&mut Context::from_waker(&task), |_, v, _| {
            Step::Repoll(Some(*v))
        }) {
            Poll::Ready(Some((_, v))) => items.push(v),
            other => panic!("every call gives an item, got {other:?}"),
        }
    }
    items.sort_unstable();
    assert!(
        items.iter().copied().eq(0..ROTATED as u32),
        "one item of each value: {items:?}"
    );
    assert_eq!(
        pending(arena),
        ROTATED,
        "values queued again after an item are polled, none counted as a vain repoll"
    );
}

#[test]
fn rotated_values_are_not_vain_repolls_fixed() {
    let mut arena = Arena::new(ROTATED);
    let keys: Vec<Key> = (0..ROTATED as u32)
        .map(|v| arena.insert(v).unwrap())
        .collect();
    let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
    rotated_values_are_not_vain_repolls(&mut arena, &wakers);
}

#[test]
fn rotated_values_are_not_vain_repolls_growable() {
    let mut arena = GrowableArena::new();
    let keys: Vec<Key> = (0..ROTATED as u32).map(|v| arena.insert(v)).collect();
    let wakers: Vec<Waker> = keys.iter().map(|&k| arena.waker(k).unwrap()).collect();
    rotated_values_are_not_vain_repolls(&mut arena, &wakers);
}

/// The vain-repoll rule in a join arena, whose `poll_slot` now computes `polled_before` itself
/// (`ArmedSlots::poll_slot`, its own copy of the rule's input): values that keep their own
/// waker, polled once, woken from outside and `Pending` again are strikes; the round yields
/// at `MAX_VAIN_REPOLLS` of them and the next round polls the rest.
#[test]
fn a_join_arena_yields_at_its_vain_repolls() {
    use core::future::Future;
    use pinfold_testkit::probe::probes;

    use crate::{JoinArena, MAX_VAIN_REPOLLS};

    const WAITING: usize = MAX_VAIN_REPOLLS + 8;
    let (values, states) = probes(WAITING);
    let mut arena = JoinArena::new(values);
    arena.arm(|_| true);
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let mut poll = |_: Key,
                    fut: core::pin::Pin<&mut pinfold_testkit::probe::Probe>,
                    cx: &mut Context<'_>| { Step::of_future(fut.poll(cx)) };
    // Round 1: every value polled once, with its own waker (the arena is armed).
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    assert!(states.iter().all(|state| state.polls() == 1));
    for state in &states {
        state.waker().wake();
    }
    // Round 2: each woken value is `Pending` again: a strike; the round yields at its strikes.
    let before = wakes.count();
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    let polled = states.iter().filter(|state| state.polls() == 2).count();
    assert_eq!(polled, MAX_VAIN_REPOLLS, "the round yields at its strikes");
    assert!(wakes.count() > before, "yielded without waking its task");
    // Round 3: the rest.
    let mut budget = arena.start_round();
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending()
    );
    assert!(
        states.iter().all(|state| state.polls() == 2),
        "the next round polls the rest"
    );
}
