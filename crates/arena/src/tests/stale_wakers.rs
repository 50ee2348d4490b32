//! Stale wakers: a waker that outlives its value (or the arena) polls none of the values
//! that take its slot, whichever of the slot's two wake entries they are given.

use core::future::Future;
use core::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::probe::{Probe, ProbeState};
use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

#[test]
fn waker_outliving_its_value_and_the_arena_does_nothing() {
    let mut arena = Arena::new(2);
    let (doomed, doomed_state) = Probe::new(0);
    let (other, other_state) = Probe::new(1);
    let key = arena.insert(doomed).unwrap();
    arena.insert(other).unwrap();
    let stale = arena.waker(key).unwrap();
    let (parent_waker, _) = counting_waker();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert!(arena.remove(key));
    assert_eq!(doomed_state.drops(), 1);
    assert!(!arena.remove(key));
    // Waking the departed value polls nothing: not it, and not the value left.
    stale.wake_by_ref();
    let mut cx = Context::from_waker(&parent_waker);
    let polled = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        unreachable!("a value was polled for a wake of a departed value")
    });
    assert_eq!(polled, Poll::Pending);
    assert_eq!((doomed_state.polls(), other_state.polls()), (1, 1));
    let clone = stale.clone();
    drop(arena);
    assert_eq!(other_state.drops(), 1);
    stale.wake();
    clone.wake_by_ref();
    drop(clone);
    assert_eq!((doomed_state.drops(), other_state.drops()), (1, 1));
}

#[test]
fn a_stale_waker_does_not_poll_the_value_that_takes_its_slot() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    let (first, first_state) = Probe::new(0);
    arena.insert(first).unwrap();
    assert!(next(&mut arena, &parent_waker).is_pending());
    // The value keeps a clone of its waker (in its state) after it finished.
    first_state.finish();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(0)));
    assert_eq!(first_state.drops(), 1);
    let stale = first_state.waker();

    let (second, second_state) = Probe::new(1);
    arena.insert(second).unwrap();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(second_state.polls(), 1, "polled once, on insert");
    stale.wake_by_ref();
    stale.wake();
    for _ in 0..2 {
        assert!(next(&mut arena, &parent_waker).is_pending());
    }
    assert_eq!(
        second_state.polls(),
        1,
        "the new value was polled for a wake of the value before it"
    );
    second_state.finish();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(1)));
    assert_eq!(second_state.polls(), 2);
}

/// Inserts a probe of each of `ids` into `arena`; their states.
fn insert_probes(arena: &mut Arena<Probe>, ids: core::ops::Range<usize>) -> Vec<Arc<ProbeState>> {
    ids.map(|id| {
        let (probe, state) = Probe::new(id);
        arena.insert(probe).unwrap();
        state
    })
    .collect()
}

#[test]
fn stale_wakers_of_every_slot_poll_none_of_the_values_that_take_the_slots() {
    // Each slot has a spare entry: a full arena's values can all leave wakers behind, and the
    // values that take their slots still get entries of their own.
    const SLOTS: usize = 4;
    let mut arena = Arena::new(SLOTS);
    let (parent_waker, _) = counting_waker();
    let firsts = insert_probes(&mut arena, 0..SLOTS);
    assert!(next(&mut arena, &parent_waker).is_pending());
    for state in &firsts {
        state.finish();
    }
    let mut outputs: Vec<usize> = (0..SLOTS)
        .map(|_| match next(&mut arena, &parent_waker) {
            Poll::Ready(Some(id)) => id,
            other => panic!("every value gives its output, not {other:?}"),
        })
        .collect();
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 1, 2, 3]);
    let stale: Vec<Waker> = firsts.iter().map(|state| state.waker()).collect();

    let seconds = insert_probes(&mut arena, SLOTS..2 * SLOTS);
    assert!(next(&mut arena, &parent_waker).is_pending());
    for waker in &stale {
        waker.wake_by_ref();
    }
    for _ in 0..2 {
        assert!(next(&mut arena, &parent_waker).is_pending());
    }
    for state in &seconds {
        assert_eq!(
            state.polls(),
            1,
            "a new value was polled for a wake of the value before it"
        );
    }
}

/// Runs a probe to its output in `arena` (of capacity 1, empty): polls it once, finishes it,
/// polls it to its output. Returns its state, which keeps a clone of its waker.
fn run_keeping_a_waker(arena: &mut Arena<Probe>, waker: &Waker, id: usize) -> Arc<ProbeState> {
    let (probe, state) = Probe::new(id);
    arena.insert(probe).unwrap();
    assert!(next(arena, waker).is_pending());
    state.finish();
    assert_eq!(next(arena, waker), Poll::Ready(Some(id)));
    state
}

#[test]
fn more_stale_wakers_than_slots_still_leave_the_arena_working() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    // Two departed values, each with an owned waker alive: both entries of the one slot are
    // retired.
    let departed: Vec<Arc<ProbeState>> = (0..2)
        .map(|id| run_keeping_a_waker(&mut arena, &parent_waker, id))
        .collect();

    // The third value shares an entry with stale wakers: it works, though their wakes may
    // poll it once spuriously.
    let (third, third_state) = Probe::new(2);
    let key = arena.insert(third).unwrap();
    assert!(next(&mut arena, &parent_waker).is_pending());
    for state in &departed {
        state.waker().wake();
    }
    for _ in 0..2 {
        assert!(next(&mut arena, &parent_waker).is_pending());
    }
    assert!(
        third_state.polls() <= 2,
        "polled {} times: more than one spurious poll",
        third_state.polls()
    );
    let before = third_state.polls();
    arena.waker(key).unwrap().wake();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(third_state.polls(), before + 1, "its own waker polls it");
    third_state.finish();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(2)));

    // Once the stale wakers are gone, their entries are free again.
    drop(departed);
    let last = run_keeping_a_waker(&mut arena, &parent_waker, 3);
    assert_eq!(last.polls(), 2);
    assert!(arena.is_empty());
}

#[test]
fn a_value_whose_turn_entry_has_a_stale_waker_takes_the_other_and_a_later_key() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    // The first value leaves a waker alive; the second's is gone (with its probe's state).
    let first = run_keeping_a_waker(&mut arena, &parent_waker, 0);
    let (second, second_state) = Probe::new(1);
    let second_key = arena.insert(second).unwrap();
    assert!(next(&mut arena, &parent_waker).is_pending());
    second_state.finish();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(1)));
    drop(second_state);
    // The third value's turn is the first's entry, still woken by a live waker: it takes the
    // second's, under a later generation.
    let (third, third_state) = Probe::new(2);
    let third_key = arena.insert(third).unwrap();
    assert!(third_key > second_key, "keys only ever grow");
    assert!(!arena.contains_key(second_key));
    assert!(next(&mut arena, &parent_waker).is_pending());
    first.waker().wake();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(
        third_state.polls(),
        1,
        "polled for a wake of a departed value"
    );
    arena.waker(third_key).unwrap().wake();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(third_state.polls(), 2, "its own waker polls it");
}

#[test]
fn a_value_whose_turn_entry_has_a_stale_waker_takes_the_other_left_clean() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    // The first value leaves a waker alive; the second finishes at its first poll, keeping
    // none, so its entry is left with no waker at all.
    let first = run_keeping_a_waker(&mut arena, &parent_waker, 0);
    let (second, second_state) = Probe::new(1);
    arena.insert(second).unwrap();
    second_state.open();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(1)));
    assert_a_stale_wake_polls_nothing(
        &mut arena,
        &parent_waker,
        &first,
        "the value took the entry of a departed value with a live waker",
    );
}

#[test]
fn an_entry_whose_stale_wakers_are_gone_is_taken_before_one_shared_with_a_live_one() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    // Both entries of the one slot retired, each with a departed value's waker alive.
    let first = run_keeping_a_waker(&mut arena, &parent_waker, 0);
    let second = run_keeping_a_waker(&mut arena, &parent_waker, 1);
    drop(first);
    // The first entry's waker is gone: the next value takes that entry, not the second's.
    assert_a_stale_wake_polls_nothing(
        &mut arena,
        &parent_waker,
        &second,
        "polled for a wake of the value before it, though an entry without wakers was free",
    );
}

/// Inserts a value into `arena` (of capacity 1, empty) and polls it once, then wakes `stale`'s
/// waker (a departed value's) and polls again: the new value must not be polled for it.
fn assert_a_stale_wake_polls_nothing(
    arena: &mut Arena<Probe>,
    waker: &Waker,
    stale: &ProbeState,
    why: &str,
) {
    let (value, state) = Probe::new(usize::MAX);
    arena.insert(value).unwrap();
    assert!(next(arena, waker).is_pending());
    stale.waker().wake();
    assert!(next(arena, waker).is_pending());
    assert_eq!(state.polls(), 1, "{why}");
}

#[test]
fn a_stale_waker_of_a_shared_entry_still_counts_after_the_value_sharing_it_leaves() {
    let mut arena = Arena::new(1);
    let (parent_waker, _) = counting_waker();
    let first = run_keeping_a_waker(&mut arena, &parent_waker, 0);
    let second = run_keeping_a_waker(&mut arena, &parent_waker, 1);
    // Every entry has a waker alive: the third value shares one (the second's).
    let third = run_keeping_a_waker(&mut arena, &parent_waker, 2);
    drop((first, third));
    // Only the first entry is free of wakers now: the second's waker still holds the other,
    // whichever values shared it, and each value after takes the first.
    let fourth = run_keeping_a_waker(&mut arena, &parent_waker, 3);
    drop(fourth);
    assert_a_stale_wake_polls_nothing(
        &mut arena,
        &parent_waker,
        &second,
        "the second value's waker polled a value given its entry as free",
    );
}

/// A future that counts its polls, keeps no waker and never finishes.
struct CountsPolls(Arc<AtomicUsize>);

impl Future for CountsPolls {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Poll::Pending
    }
}

/// A value woken by value (its last owned waker gone) and removed before the wake is collected:
/// its entry's ready bit is cleared as it leaves, so the slot's value after next, which takes
/// the same entry, is not polled for that wake.
fn a_wake_of_a_removed_value_left_uncollected_polls_nothing<A: Storage<CountsPolls>>(
    mut arena: A,
    waker_of: impl Fn(&A, Key) -> Waker,
) {
    let (task, _) = counting_waker();
    let insert = |arena: &mut A, polls: &Arc<AtomicUsize>| {
        let key = arena.insert(CountsPolls(Arc::clone(polls)));
        key.ok().expect("the arena has room")
    };
    let first = insert(&mut arena, &Arc::default());
    assert!(next(&mut arena, &task).is_pending());
    let waker = waker_of(&arena, first);
    let mut round = arena.start_round();
    waker.wake();
    assert!(arena.remove(first));
    // The next value takes the slot's other entry, the one after it the first's.
    let second = insert(&mut arena, &Arc::default());
    assert!(arena.remove(second));
    let polls = Arc::new(AtomicUsize::new(0));
    insert(&mut arena, &polls);
    // The round started before the wake goes on: its first poll, the new value's, takes no
    // bit, and the collection after it finds whatever bit the entry still has.
    let mut cx = Context::from_waker(&task);
    let mut poll =
        |_, value: Pin<&mut CountsPolls>, cx: &mut Context<'_>| Step::of_future(value.poll(cx));
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut round, &mut poll)
            .is_pending()
    );
    for _ in 0..3 {
        assert!(next(&mut arena, &task).is_pending());
    }
    assert_eq!(
        polls.load(Ordering::Relaxed),
        1,
        "the value was polled for a wake of the value whose entry it took"
    );
}

#[test]
fn a_wake_of_a_removed_value_left_uncollected_polls_nothing_fixed() {
    a_wake_of_a_removed_value_left_uncollected_polls_nothing(Arena::new(1), |arena, key| {
        arena.waker(key).unwrap()
    });
}

#[test]
fn a_wake_of_a_removed_value_left_uncollected_polls_nothing_growable() {
    a_wake_of_a_removed_value_left_uncollected_polls_nothing(GrowableArena::new(), |arena, key| {
        arena.waker(key).unwrap()
    });
}
