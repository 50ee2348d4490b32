//! Unit tests of the arena, mostly through its public API.

use std::future::{Future, poll_fn, ready};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::alloc::{CountingAlloc, measure};
use pinfold_testkit::future::block_on;
use pinfold_testkit::probe::{Probe, ProbeState, Spinner, probes};
use pinfold_testkit::waker::counting_waker;

use crate::MAX_VAIN_REPOLLS;
use crate::storage::store::RETIRED_GENERATION as LAST_GENERATION;

use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// One `poll_next` of an arena of futures (of either kind), with `waker` as the task's waker;
/// the output without its key.
fn next<F: Future, S: Storage<F>>(arena: &mut S, waker: &Waker) -> Poll<Option<F::Output>> {
    let mut cx = Context::from_waker(waker);
    arena
        .poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
        .map(|next| next.map(|(_, out)| out))
}

/// [`next`] for a growable arena, with the output's key.
fn next_growable<F: Future>(
    arena: &mut GrowableArena<F>,
    waker: &Waker,
) -> Poll<Option<(Key, F::Output)>> {
    let mut cx = Context::from_waker(waker);
    arena.poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
}

/// Counts drops of its instances.
#[derive(Debug)]
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn new_allocates_twice_and_use_allocates_nothing() {
    let (mut arena, n) = measure(|| Arena::new(256));
    assert!(n <= 2, "Arena::new(256) made {n} allocations");
    let rounds = if cfg!(miri) { 600 } else { 100_000 };
    let ((), n) = measure(|| {
        let waker = Waker::noop();
        for i in 0..rounds {
            if arena.is_full() {
                assert!(matches!(next(&mut arena, waker), Poll::Ready(Some(_))));
            }
            arena.insert(ready(i)).unwrap();
        }
        while let Poll::Ready(Some(_)) = next(&mut arena, waker) {}
        arena.clear();
    });
    assert_eq!(n, 0, "inserting and polling allocated");
    assert!(arena.is_empty());
}

#[test]
fn a_fixed_arena_counts_its_values_and_shows_them_in_debug() {
    let mut arena = Arena::new(3);
    assert!(arena.is_empty() && !arena.is_full());
    let key = arena.insert(ready(1)).unwrap();
    assert!(!arena.is_empty(), "it holds a value");
    assert_eq!((arena.len(), arena.capacity()), (1, 3));
    assert_eq!(
        alloc::format!("{arena:?}"),
        "Arena { len: 1, capacity: 3, .. }"
    );
    assert!(arena.remove(key));
    assert!(arena.is_empty());
}

#[test]
fn a_fixed_arenas_iterators_count_down_to_the_last_value() {
    let mut arena = Arena::new(4);
    for value in [1, 2, 3] {
        arena.insert(value).unwrap();
    }
    let mut iter = arena.iter();
    for left in (0..3).rev() {
        assert!(iter.next().is_some());
        assert_eq!((iter.len(), iter.size_hint()), (left, (left, Some(left))));
    }
    assert!(iter.next().is_none());
    let mut iter = arena.iter_pin_mut();
    for left in (0..3).rev() {
        assert!(iter.next().is_some());
        assert_eq!((iter.len(), iter.size_hint()), (left, (left, Some(left))));
    }
    assert!(iter.next().is_none());
    let mut values = arena.into_values();
    assert_eq!(values.next(), Some(1));
    assert_eq!(values.len(), 2);
    assert_eq!(alloc::format!("{values:?}"), "IntoValues { len: 2, .. }");
}

#[test]
fn a_keyed_set_counts_its_values() {
    let mut set = crate::KeyedSet::<_, Arena<_>, crate::Futures>::new(2);
    assert!(set.is_empty() && !set.is_full());
    set.push(ready(1u8));
    assert!(!set.is_empty(), "it holds a future");
    assert!(!set.is_full());
    set.push(ready(2));
    assert!(set.is_full());
    assert_eq!(set.len(), 2);
}

#[test]
fn a_round_polls_each_value_once_though_every_one_gives_an_item() {
    // Three streams that are always ready: each item queues its stream again, and one budget
    // still polls each once, then yields.
    use futures_util::StreamExt;

    let mut arena = Arena::new(3);
    for id in 0..3u8 {
        assert!(arena.insert(futures_util::stream::repeat(id)).is_ok());
    }
    let (waker, wakes) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let mut budget = arena.budget();
    let mut poll = |_: Key, stream: Pin<&mut _>, cx: &mut Context<'_>| {
        let stream: Pin<&mut futures_util::stream::Repeat<u8>> = stream;
        Step::of_stream(stream.get_mut().poll_next_unpin(cx))
    };
    let mut ids = Vec::new();
    for _ in 0..3 {
        match arena.poll_with_budget(&mut cx, &mut budget, &mut poll) {
            Poll::Ready(Some((_, Some(id)))) => ids.push(id),
            other => panic!("an item of each stream, yet {other:?}"),
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2]);
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut poll)
            .is_pending(),
        "the budget of three polls is spent"
    );
    assert_eq!(wakes.count(), 1, "a yield wakes the task to poll again");
}

#[test]
fn a_capacity_past_the_largest_panics_naming_the_largest() {
    let panic = catch_unwind(|| Arena::<u8>::new(usize::MAX)).unwrap_err();
    assert_eq!(
        panic
            .downcast_ref::<alloc::string::String>()
            .map(|s| s.as_str()),
        Some(&*alloc::format!(
            "arena capacity {} is too large (at most 2147483647)",
            usize::MAX
        )),
        "two entries a slot, indexed by `u32` below its largest value"
    );
}

#[test]
fn zero_capacity_refuses_everything() {
    let mut arena = Arena::new(0);
    assert_eq!(
        arena.insert(ready(7)).err().map(|r| r.into_inner()),
        Some(7)
    );
    assert!(arena.is_full());
    assert!(matches!(next(&mut arena, Waker::noop()), Poll::Ready(None)));
}

#[test]
fn pending_value_is_polled_once_per_burst_of_wakes() {
    let (probe, state) = Probe::new(7);
    let mut arena = Arena::new(4);
    arena.insert(probe).unwrap();
    let (parent_waker, parent) = counting_waker();
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(state.polls(), 1);
    // Not woken: not polled.
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(state.polls(), 1);
    // Woken ten times: polled once, and the parent woken once.
    let waker = state.waker();
    for _ in 0..10 {
        waker.wake_by_ref();
    }
    assert_eq!(parent.count(), 1);
    assert!(next(&mut arena, &parent_waker).is_pending());
    assert_eq!(state.polls(), 2);
    state.finish();
    assert_eq!(next(&mut arena, &parent_waker), Poll::Ready(Some(7)));
    assert_eq!(state.polls(), 3);
}

#[test]
fn burst_over_many_slots_wakes_the_parent_once() {
    let capacity = if cfg!(miri) { 200 } else { 5000 };
    let (values, states) = probes(capacity);
    let mut arena = Arena::new(capacity);
    for value in values {
        arena.insert(value).unwrap();
    }
    let (parent_waker, parent) = counting_waker();
    assert!(next(&mut arena, &parent_waker).is_pending());
    for state in &states {
        state.finish();
    }
    assert_eq!(parent.count(), 1);
    let mut outputs = Vec::new();
    loop {
        match next(&mut arena, &parent_waker) {
            Poll::Ready(Some(id)) => outputs.push(id),
            Poll::Ready(None) => break,
            Poll::Pending => panic!("pending with every future done"),
        }
    }
    outputs.sort_unstable();
    assert_eq!(outputs, (0..capacity).collect::<Vec<_>>());
    assert!(states.iter().all(|state| state.polls() == 2));
}

#[test]
fn wakes_from_other_threads_are_not_lost() {
    let count = if cfg!(miri) { 8 } else { 500 };
    let (values, states) = probes(count);
    let mut arena = Arena::new(count);
    for value in values {
        arena.insert(value).unwrap();
    }
    assert!(next(&mut arena, Waker::noop()).is_pending());
    let openers: Vec<_> = states
        .chunks(count / 4)
        .map(|chunk| {
            let chunk = chunk.to_vec();
            std::thread::spawn(move || chunk.iter().for_each(|state| state.finish()))
        })
        .collect();
    // `block_on` parks between polls: a lost wake hangs the test.
    let mut outputs = Vec::new();
    block_on(poll_fn(|cx| {
        loop {
            match next(&mut arena, cx.waker()) {
                Poll::Ready(Some(id)) => outputs.push(id),
                Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }));
    openers.into_iter().for_each(|t| t.join().unwrap());
    outputs.sort_unstable();
    assert_eq!(outputs, (0..count).collect::<Vec<_>>());
}

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
fn dropping_the_arena_drops_every_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(8);
    let keys: Vec<Key> = (0..5)
        .map(|_| arena.insert(DropCounter(drops.clone())).unwrap())
        .collect();
    assert!(arena.remove(keys[2]));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

#[test]
fn clear_drops_everything_and_keeps_the_arena_usable() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = (0..3)
        .map(|_| arena.insert(DropCounter(drops.clone())).unwrap())
        .collect();
    arena.clear();
    assert_eq!(drops.load(Ordering::SeqCst), 3);
    assert!(arena.is_empty());
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
    for _ in 0..3 {
        arena.insert(DropCounter(drops.clone())).unwrap();
    }
    assert!(arena.is_full());
    assert_eq!(arena.iter().count(), 3);
    assert!(keys.iter().all(|&key| !arena.contains_key(key)));
}

#[test]
fn one_call_polls_each_self_waking_value_once_round_robin_and_yields() {
    // More spinners than `MAX_VAIN_REPOLLS`: self-wakes are not vain polls, and do not cut a
    // call short; each call polls every spinner once, and lets its task yield.
    const SPINNERS: usize = 3 * MAX_VAIN_REPOLLS + 4;
    let mut arena = Arena::new(SPINNERS);
    let counters: Vec<_> = (0..SPINNERS)
        .map(|id| {
            let (spinner, polls) = Spinner::forever(id);
            arena.insert(spinner).unwrap();
            polls
        })
        .collect();
    let (parent_waker, parent) = counting_waker();
    for call in 1..=10 {
        let wakes_before = parent.count();
        assert!(next(&mut arena, &parent_waker).is_pending());
        assert!(
            parent.count() > wakes_before,
            "yielded without waking its task"
        );
        assert!(counters.iter().all(|c| c.load(Ordering::SeqCst) == call));
    }
}

#[test]
fn panic_in_poll_drops_the_value_and_frees_its_slot() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(2);
    let first = arena.insert(DropCounter(drops.clone())).unwrap();
    let second = arena.insert(DropCounter(drops.clone())).unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let result = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_next(&mut cx, |_, _, _| -> Step<()> { panic!("boom") })
    }));
    assert!(result.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(arena.len(), 1);
    assert!(!arena.is_full());
    assert!(
        !arena.contains_key(first),
        "the first value polled panicked"
    );
    assert!(arena.contains_key(second));
    arena.insert(DropCounter(drops.clone())).unwrap();
    assert_eq!(arena.len(), 2);
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn panic_in_drop_leaves_the_arena_consistent() {
    /// Panics when dropped if armed.
    #[derive(Debug)]
    struct PanicOnDrop(bool, Arc<AtomicUsize>);
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            self.1.fetch_add(1, Ordering::SeqCst);
            if self.0 {
                panic!("drop");
            }
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(2);
    let key = arena.insert(PanicOnDrop(true, drops.clone())).unwrap();
    assert!(catch_unwind(AssertUnwindSafe(|| arena.remove(key))).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(arena.is_empty());
    assert!(arena.get(key).is_none());
    arena.insert(PanicOnDrop(false, drops.clone())).unwrap();
    arena.insert(PanicOnDrop(false, drops.clone())).unwrap();
    assert!(arena.is_full());
    drop(arena);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn keep_and_repoll_leave_the_value_in_place() {
    let mut arena = Arena::new(2);
    let a = arena.insert(1u32).unwrap();
    let (parent_waker, parent) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);

    // One round: `Repoll` gives the output and leaves the value for the next round, not this.
    let mut budget = arena.budget();
    let first = arena.poll_with_budget(&mut cx, &mut budget, &mut |k, v, _| Step::Repoll((k, *v)));
    assert_eq!(first, Poll::Ready(Some((a, (a, 1)))));
    assert!(
        arena.has_deferred(),
        "Repoll queues the value for the next round"
    );
    let again = arena.poll_with_budget(&mut cx, &mut budget, &mut |_, _, _| -> Step<()> {
        unreachable!("polled twice in one round")
    });
    assert_eq!(again, Poll::Pending);
    assert_eq!(
        parent.count(),
        1,
        "a value waits for the next round: the task is woken"
    );

    // The next round polls it without a wake; `Keep` leaves it until its waker fires.
    let kept = arena.poll_next(&mut cx, |k, v, _| Step::Keep((k, *v)));
    assert_eq!(kept, Poll::Ready(Some((a, (a, 1)))));
    assert!(
        !arena.has_ready() && !arena.has_deferred(),
        "Keep does not queue it"
    );
    assert_eq!(arena.get(a), Some(&1));
    let idle = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        unreachable!("a kept value was polled without a wake")
    });
    assert_eq!(idle, Poll::Pending);
    arena.waker(a).unwrap().wake();
    let woken = arena.poll_next(&mut cx, |k, v, _| Step::Keep((k, *v)));
    assert_eq!(woken, Poll::Ready(Some((a, (a, 1)))));
    assert_eq!(arena.len(), 1);
}

#[test]
fn a_settled_value_stays_unpolled_until_woken_and_the_round_goes_on() {
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = (0..3u32).map(|v| arena.insert(v).unwrap()).collect();
    let (parent_waker, parent) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let mut polled = Vec::new();
    // Values 0 and 1 settle (no output); value 2 gives one: all three in one call.
    let out = arena.poll_next(&mut cx, |k, v, _| {
        polled.push(k);
        if *v == 2 {
            Step::Keep(*v)
        } else {
            Step::Settled
        }
    });
    assert_eq!(out, Poll::Ready(Some((keys[2], 2))));
    assert_eq!(polled, keys);
    let idle = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        unreachable!("a settled value was polled without a wake")
    });
    assert_eq!(idle, Poll::Pending);
    assert_eq!(parent.count(), 0, "settling does not wake the task");
    assert_eq!(arena.len(), 3, "a settled value stays");
    arena.waker(keys[0]).unwrap().wake();
    let woken = arena.poll_next(&mut cx, |k, _, _| Step::Keep(k));
    assert_eq!(woken, Poll::Ready(Some((keys[0], keys[0]))));
}

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
fn iterators_visit_every_value_once() {
    let mut arena = Arena::new(5);
    let keys: Vec<Key> = (0..5u32).map(|v| arena.insert(v).unwrap()).collect();
    arena.remove(keys[1]);
    arena.remove(keys[3]);
    let seen: Vec<_> = arena.iter().map(|(k, v)| (k, *v)).collect();
    assert_eq!(seen, [(keys[0], 0), (keys[2], 2), (keys[4], 4)]);
    assert_eq!(arena.iter().len(), 3);
    for (_, v) in arena.iter_pin_mut() {
        *v.get_mut() += 10;
    }
    let seen: Vec<_> = arena.iter().map(|(_, v)| *v).collect();
    assert_eq!(seen, [10, 12, 14]);
    assert_eq!(arena.take(keys[0]), Some(10));
    assert_eq!(arena.take(keys[0]), None);
    assert_eq!(arena.len(), 2);
}

/// Panics when dropped if armed; counts its drops.
#[derive(Debug)]
struct Loud(bool, Arc<AtomicUsize>);

impl Drop for Loud {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
        assert!(!self.0, "drop");
    }
}

/// Clears an arena of `Loud`s armed as given: the clear panics, every value is dropped once,
/// the arena is empty and usable.
fn clear_with_panicking_drops(armed: [bool; 4]) {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(4);
    for armed in armed {
        arena.insert(Loud(armed, drops.clone())).unwrap();
    }
    assert!(catch_unwind(AssertUnwindSafe(|| arena.clear())).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 4);
    assert!(arena.is_empty());
    arena.insert(Loud(false, drops.clone())).unwrap();
    assert_eq!(arena.len(), 1);
}

#[test]
fn clear_drops_every_value_even_when_one_drop_panics() {
    clear_with_panicking_drops([false, true, false, false]);
}

/// Without `std` a second panicking drop aborts, as in a `Vec` (see `unwind`).
#[cfg(feature = "std")]
#[test]
fn clear_drops_every_value_even_when_two_drops_panic() {
    clear_with_panicking_drops([false, true, false, true]);
}

#[test]
fn streams_are_polled_again_after_each_item_and_dropped_when_they_end() {
    /// A stream of `0..end` that is pending before every item, waking itself.
    #[derive(Debug)]
    struct Count {
        next: u32,
        end: u32,
        ready: bool,
    }
    impl Count {
        fn poll_item(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
            if self.next == self.end {
                return Poll::Ready(None);
            }
            if !std::mem::replace(&mut self.ready, false) {
                self.ready = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.next += 1;
            Poll::Ready(Some(self.next - 1))
        }
    }
    let mut arena = Arena::new(3);
    let keys: Vec<Key> = [2, 0, 3]
        .into_iter()
        .map(|end| {
            let stream = Count {
                next: 0,
                end,
                ready: false,
            };
            arena.insert(stream).unwrap()
        })
        .collect();
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let mut items = Vec::new();
    for _ in 0..100 {
        let polled = arena.poll_next(&mut cx, |_, stream, cx| {
            Step::of_stream(stream.poll_item(cx))
        });
        match polled {
            Poll::Ready(Some((key, Some(item)))) => items.push((key, item)),
            Poll::Ready(Some((key, None))) => assert!(!arena.contains_key(key)),
            Poll::Ready(None) => break,
            Poll::Pending => {}
        }
    }
    assert!(arena.is_empty(), "every stream ended and was dropped");
    items.sort_unstable();
    let expected = [
        (keys[0], 0),
        (keys[0], 1),
        (keys[2], 0),
        (keys[2], 1),
        (keys[2], 2),
    ];
    assert_eq!(items, expected);
}

#[test]
fn a_key_of_a_departed_value_is_refused_after_its_slot_is_reused() {
    let mut arena = Arena::new(1);
    let removed = arena.insert(ready(1)).unwrap();
    assert!(arena.remove(removed));
    let finished = arena.insert(ready(2)).unwrap();
    assert_ne!(finished, removed, "one slot, two stays: two keys");
    assert_eq!(next(&mut arena, Waker::noop()), Poll::Ready(Some(2)));
    let current = arena.insert(ready(3)).unwrap();
    for stale in [removed, finished] {
        assert_ne!(stale, current);
        assert!(!arena.contains_key(stale));
        assert!(arena.get(stale).is_none());
        assert!(arena.get_pin_mut(stale).is_none());
        assert!(arena.waker(stale).is_none());
        assert!(arena.take(stale).is_none());
        assert!(!arena.remove(stale));
    }
    assert!(
        arena.contains_key(current),
        "a stale key removed the current value"
    );
    assert_eq!(arena.take(current).map(|r| r.into_inner()), Some(3));
}

#[test]
fn a_slot_whose_generation_runs_out_is_retired_and_its_keys_stay_refused() {
    let mut arena = Arena::starting_at_generation(1, LAST_GENERATION - 2);
    let before_last = arena.insert(1).unwrap();
    assert!(arena.remove(before_last));
    let last = arena.insert(2).unwrap();
    assert_eq!(
        arena.get(last),
        Some(&2),
        "the last generation holds a value like any other"
    );
    assert!(arena.remove(last));
    assert_eq!(arena.insert(3), Err(3), "a retired slot takes no value");
    assert!(arena.is_full() && arena.is_empty());
    for stale in [before_last, last] {
        assert!(!arena.contains_key(stale));
        assert!(arena.get(stale).is_none());
        assert!(!arena.remove(stale));
    }

    let mut arena = Arena::starting_at_generation(2, LAST_GENERATION - 1);
    let retiring = arena.insert(1).unwrap();
    assert!(arena.remove(retiring));
    let kept = arena.insert(2).unwrap();
    assert_eq!(
        arena.get(kept),
        Some(&2),
        "the other slot still takes values"
    );
    assert!(!arena.contains_key(retiring));
    assert_eq!(arena.insert(4), Err(4));

    // A new group of a growable arena starts past every generation its released groups gave:
    // when that is the last, its slots are retired from the start.
    let mut arena = Arena::starting_at_generation(2, LAST_GENERATION);
    assert_eq!(arena.insert(5), Err(5), "every slot is retired");
    assert!(arena.is_full() && arena.is_empty());
}

#[test]
fn a_growable_arena_whose_last_free_slot_is_retired_adds_a_group() {
    let mut arena = GrowableArena::starting_at_generation(1, LAST_GENERATION - 1);
    let last = arena.insert(1);
    assert!(arena.remove(last));
    let next = arena.insert(2);
    assert_eq!(arena.groups(), 2, "the retired slot is passed over");
    assert_ne!(next, last);
    assert!(!arena.contains_key(last));
    assert!(!arena.remove(last));
    assert_eq!(arena.get(next), Some(&2));
    assert_eq!(arena.len(), 1);
    let more: Vec<Key> = (0..40).map(|value| arena.insert(value)).collect();
    assert!(more.iter().all(|&key| arena.contains_key(key)));
    assert_eq!(arena.len(), 41);
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

#[test]
fn a_growable_arena_with_no_group_yet_has_no_key() {
    let mut arena: GrowableArena<u8> = GrowableArena::new();
    let key = Key::new(0, 0);
    assert!(!arena.contains_key(key));
    assert_eq!(arena.get(key), None);
    assert!(arena.waker(key).is_none());
    assert!(!arena.remove(key));
    assert_eq!(arena.groups(), 0);
    let mut arena: GrowableArena<u8> = GrowableArena::with_capacity(0);
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (0, 0),
        "with_capacity(0) is new"
    );
    assert!(arena.is_empty());
    arena.insert(1);
    assert!(!arena.is_empty());
}

#[test]
fn a_key_of_a_released_group_is_refused_by_the_group_that_replaces_it() {
    let mut arena = GrowableArena::with_capacity(2);
    let first = arena.insert(1);
    arena.insert(2);
    let top = arena.insert(3);
    assert_eq!((arena.groups(), arena.group_of(top)), (2, Some(1)));
    assert!(arena.remove(first));
    // The top group is empty and one value is left in the two slots below: it is released.
    assert!(arena.remove(top));
    assert_eq!(arena.groups(), 1);
    let fourth = arena.insert(4);
    assert_eq!(
        arena.group_of(fourth),
        Some(0),
        "the free slot below is taken first"
    );
    let replacing = arena.insert(5);
    assert_eq!((arena.groups(), arena.group_of(replacing)), (2, Some(1)));
    assert_ne!(replacing, top);
    assert!(!arena.contains_key(top));
    assert!(arena.get(top).is_none());
    assert!(arena.waker(top).is_none());
    assert!(!arena.remove(top));
    assert!(!arena.contains_key(first));
    assert_eq!(arena.get(replacing), Some(&5));
    assert_eq!(arena.len(), 3);
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
fn a_slot_adds_sixteen_bytes_to_a_value_of_eight() {
    // The value (or, free, the next free slot), the generation with the occupied bit, and the
    // queue mark; the slot's two wake entries are in the wake table.
    assert_eq!(size_of::<crate::storage::store::Slot<u64>>(), 24);
    assert_eq!(size_of::<crate::storage::store::Slot<[u8; 24]>>(), 40);
    assert_eq!(size_of::<crate::storage::store::Slot<()>>(), 24);
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

// A round sets `BUSY` before it polls anything: a value waking itself while the arena polls
// wakes no task, and a panic of the task's waker is never mistaken for the value's.

#[test]
fn a_value_waking_itself_while_polled_wakes_no_task() {
    let mut arena = Arena::new(1);
    let (spinner, _) = Spinner::forever(0);
    arena.insert(spinner).unwrap();
    let (parent_waker, parent) = counting_waker();
    for call in 1..=4 {
        assert!(next(&mut arena, &parent_waker).is_pending());
        // One wake per call: the round's own, as it yields with the spinner deferred.
        assert_eq!(
            parent.count(),
            call,
            "the spinner's self-wake woke the task"
        );
    }
}

#[test]
fn a_task_waker_panic_during_a_self_wake_drops_no_value() {
    use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};

    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(2);
    for id in 0..2 {
        let (spinner, _) = Spinner::forever(id);
        arena.insert((spinner, DropCounter(drops.clone()))).unwrap();
    }
    let (task, switches) = panicking_waker();
    let mut cx = Context::from_waker(&task);
    let mut poll = |arena: &mut Arena<(Spinner, DropCounter)>| {
        arena.poll_next(&mut cx, |_, value, cx| {
            Step::of_future(Pin::new(&mut value.get_mut().0).poll(cx))
        })
    };
    assert!(poll(&mut arena).is_pending());
    // The task is registered; the next call polls the spinners the last one deferred.
    switches.panic_once(WakerOps::ANY_WAKE);
    let polled = catch_unwind(AssertUnwindSafe(|| poll(&mut arena)));
    assert!(polled.is_err(), "the round wakes its task as it yields");
    assert_eq!(switches.panics(), 1);
    assert_eq!(
        (drops.load(Ordering::SeqCst), arena.len()),
        (0, 2),
        "a spinner was dropped for the task waker's panic"
    );
}

/// A value for the starvation tests: `Repoll`ed on every poll when `always`, else pending
/// until woken (then it counts the poll).
#[derive(Debug)]
struct Source {
    always: bool,
    polls: usize,
}

impl Source {
    fn new(always: bool) -> Self {
        Self { always, polls: 0 }
    }
}

fn poll_source(source: Pin<&mut Source>) -> Step<bool> {
    let source = source.get_mut();
    source.polls += 1;
    if source.always {
        Step::Repoll(true)
    } else if source.polls == 1 {
        Step::Pending
    } else {
        Step::Keep(false)
    }
}

#[test]
fn a_value_polled_again_after_each_output_does_not_hide_a_woken_one() {
    // What a merge risks: an always-ready stream is queued again after every item, so
    // the round's queue never runs empty; wakes must still be collected, and the woken value
    // polled in the very next call.
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);

    let mut arena = Arena::new(2);
    arena.insert(Source::new(true)).unwrap();
    let quiet = arena.insert(Source::new(false)).unwrap();
    let mut outputs = Vec::new();
    for _ in 0..3 {
        if let Poll::Ready(Some((_, out))) = arena.poll_next(&mut cx, |_, v, _| poll_source(v)) {
            outputs.push(out);
        }
    }
    assert_eq!(
        arena.get(quiet).unwrap().polls,
        1,
        "polled once, then waits for a wake"
    );
    arena.waker(quiet).unwrap().wake();
    let next = arena.poll_next(&mut cx, |_, v, _| poll_source(v));
    assert_eq!(
        next,
        Poll::Ready(Some((quiet, false))),
        "the woken value comes first"
    );

    let mut growable = GrowableArena::new();
    growable.insert(Source::new(true));
    let quiet = growable.insert(Source::new(false));
    for _ in 0..3 {
        let _ = growable.poll_next(&mut cx, |_, v, _| poll_source(v));
    }
    assert_eq!(growable.get(quiet).unwrap().polls, 1);
    growable.waker(quiet).unwrap().wake();
    let next = growable.poll_next(&mut cx, |_, v, _| poll_source(v));
    assert_eq!(
        next,
        Poll::Ready(Some((quiet, false))),
        "the woken value comes first"
    );
}

/// Wakes a value of either kind of arena by its key, through an owned waker.
trait Wake {
    fn wake(&self, key: Key);
}

impl<T> Wake for Arena<T> {
    fn wake(&self, key: Key) {
        self.waker(key).unwrap().wake();
    }
}

impl<T> Wake for GrowableArena<T> {
    fn wake(&self, key: Key) {
        self.waker(key).unwrap().wake();
    }
}

/// [`poll_source`] as a merge's stream: its outputs are items.
fn poll_stream(source: Pin<&mut Source>) -> Step<Option<bool>> {
    match poll_source(source) {
        Step::Repoll(item) => Step::Repoll(Some(item)),
        Step::Keep(item) => Step::Keep(Some(item)),
        Step::Pending => Step::Pending,
        _ => unreachable!("a source only repolls, keeps or waits"),
    }
}

/// A merge's call (`poll_next_some`) of `arena`, holding three streams that give an item at
/// every poll and a quiet one, polls the quiet stream before any of the others gives a second
/// item after its wake: those streams go to the tail of the queue after each item, without a
/// round of their own, so the queue never runs empty; the wake is collected at the next call's
/// start, behind the streams queued then, each of which has one more turn at most.
fn a_woken_stream_goes_ahead_of_streams_queued_again<S: Storage<Source> + Wake>(mut arena: S) {
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let busy: Vec<Key> = (0..3)
        .map(|_| arena.insert(Source::new(true)).unwrap())
        .collect();
    let quiet = arena.insert(Source::new(false)).unwrap();
    for _ in 0..8 {
        let next = arena.poll_next_some(&mut cx, |_, v, _| poll_stream(v));
        assert!(matches!(next, Poll::Ready(Some((_, true)))));
    }
    assert_eq!(
        arena.get(quiet).unwrap().polls,
        1,
        "polled once, then waits"
    );
    arena.wake(quiet);
    let mut items = Vec::new();
    loop {
        let Poll::Ready(Some((key, _))) = arena.poll_next_some(&mut cx, |_, v, _| poll_stream(v))
        else {
            panic!("a merge of always-ready streams always has an item");
        };
        if key == quiet {
            break;
        }
        assert!(
            !items.contains(&key),
            "an always-ready stream had a second turn before the woken one: {items:?} then {key:?}"
        );
        items.push(key);
    }
    assert!(items.iter().all(|key| busy.contains(key)));
}

#[test]
fn a_woken_stream_goes_ahead_of_streams_queued_again_after_their_items() {
    a_woken_stream_goes_ahead_of_streams_queued_again(Arena::new(4));
    a_woken_stream_goes_ahead_of_streams_queued_again(GrowableArena::new());
}

/// In `arena`, a value woken before the last call but not reached by it (the call ended at an
/// earlier value's output) is polled in the next call, ahead of values woken since: values
/// woken one a call cannot pass it over for ever.
fn a_woken_value_is_not_passed_over_by_later_wakes<S: Storage<u32> + Wake>(mut arena: S) {
    let (parent_waker, _) = counting_waker();
    let mut cx = Context::from_waker(&parent_waker);
    let keys: Vec<Key> = (0..6u32).map(|v| arena.insert(v).unwrap()).collect();
    let mut next = |arena: &mut S| arena.poll_next(&mut cx, |_, v, _| Step::Keep(*v));
    for _ in 0..6 {
        assert!(matches!(next(&mut arena), Poll::Ready(Some(_))));
    }
    assert_eq!(
        next(&mut arena),
        Poll::Pending,
        "every value waits for a wake"
    );
    arena.wake(keys[0]);
    arena.wake(keys[1]);
    assert_eq!(next(&mut arena), Poll::Ready(Some((keys[0], 0))));
    let mut outputs = Vec::new();
    for &key in &keys[2..] {
        arena.wake(key);
        let Poll::Ready(Some((_, out))) = next(&mut arena) else {
            panic!("a woken value gives its output");
        };
        outputs.push(out);
    }
    assert_eq!(
        outputs,
        [1, 2, 3, 4],
        "each value in the order of its wake, the one left by the last call first"
    );
}

#[test]
fn a_woken_value_is_not_passed_over_by_values_woken_after_it() {
    a_woken_value_is_not_passed_over_by_later_wakes(Arena::new(6));
    a_woken_value_is_not_passed_over_by_later_wakes(GrowableArena::new());
}

/// A future that holds a `&mut` to its own local across a `Pending` (as `read(&mut buf).await`
/// does), then writes through it: the arena's bookkeeping between its polls (queues, wakes,
/// other values coming and going) must not take that reference's permission away (Miri checks
/// it, under both aliasing models).
async fn self_referential(wake_first: bool) -> u8 {
    let mut buf = [0u8; 16];
    let r = &mut buf;
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            if wake_first {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }
    })
    .await;
    r[3] = 7;
    r[3] + buf[3]
}

#[test]
fn a_future_borrowing_itself_across_pending_keeps_its_borrow() {
    let (waker, _) = counting_waker();
    let mut arena = Arena::new(4);
    arena.insert(self_referential(true)).ok().unwrap();
    arena.insert(self_referential(false)).ok().unwrap();
    let quiet = arena.insert(self_referential(false)).ok().unwrap();
    let mut outputs = Vec::new();
    for _ in 0..4 {
        if let Poll::Ready(Some(out)) = next(&mut arena, &waker) {
            outputs.push(out);
        }
        // Values come and go meanwhile.
        let extra = arena.insert(self_referential(false)).ok().unwrap();
        assert!(arena.remove(extra));
    }
    arena.waker(quiet).unwrap().wake();
    while let Poll::Ready(Some(out)) = next(&mut arena, &waker) {
        outputs.push(out);
    }
    assert_eq!(
        outputs,
        [14, 14],
        "the self-waking one and the woken one finished"
    );
    assert_eq!(arena.len(), 1);

    let mut growable = GrowableArena::new();
    growable.insert(self_referential(true));
    let quiet = growable.insert(self_referential(false));
    let mut outputs = Vec::new();
    for _ in 0..4 {
        if let Poll::Ready(Some((_, out))) = next_growable(&mut growable, &waker) {
            outputs.push(out);
        }
    }
    growable.waker(quiet).unwrap().wake();
    while let Poll::Ready(Some((_, out))) = next_growable(&mut growable, &waker) {
        outputs.push(out);
    }
    assert_eq!(outputs, [14, 14]);
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
/// id on the next. Its 4 KiB of payload make an arena of a hundred of them large.
struct Parked {
    id: usize,
    payload: [u8; 4096],
    wakers: Arc<std::sync::Mutex<Vec<Option<Waker>>>>,
    polled: bool,
}

impl Future for Parked {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        if self.polled {
            return Poll::Ready(self.id + usize::from(self.payload[self.id % 4096]));
        }
        self.polled = true;
        self.wakers.lock().unwrap()[self.id] = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[test]
fn a_growable_arena_past_the_prefetch_size_gives_every_woken_value_once() {
    // Large enough that its rounds prefetch the next queued slot (`arena::slots_far`).
    const VALUES: usize = 100;
    let wakers = Arc::new(std::sync::Mutex::new(alloc::vec![None; VALUES]));
    let mut arena = GrowableArena::new();
    for id in 0..VALUES {
        arena.insert(Parked {
            id,
            payload: [0; 4096],
            wakers: wakers.clone(),
            polled: false,
        });
    }
    assert!(crate::storage::store::slots_far::<Parked>(arena.capacity()));
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

/// The fairness rules of a call, on `arena` (empty): values that wake themselves are polled
/// once a call and never cut it short; values woken from outside and `Pending` again are
/// strikes, and the call yields at `MAX_VAIN_REPOLLS` of them, the rest polled in the next.
fn fairness<S: Storage<Spinner>, P: Storage<Probe>>(mut spinning: S, mut waiting: P) {
    const SPINNERS: usize = 3 * MAX_VAIN_REPOLLS + 4;
    let counters: Vec<_> = (0..SPINNERS)
        .map(|id| {
            let (spinner, polls) = Spinner::forever(id);
            assert!(spinning.insert(spinner).is_ok());
            polls
        })
        .collect();
    let (parent_waker, parent) = counting_waker();
    for call in 1..=3 {
        let wakes_before = parent.count();
        assert!(next(&mut spinning, &parent_waker).is_pending());
        assert_eq!(
            parent.count(),
            wakes_before + 1,
            "the call yields waking its task once, and the self-wakes during it notify nobody"
        );
        assert!(
            counters.iter().all(|c| c.load(Ordering::SeqCst) == call),
            "call {call}: a self-waking value was not polled once"
        );
    }

    const WAITING: usize = MAX_VAIN_REPOLLS + 8;
    let (values, states) = probes(WAITING);
    for value in values {
        assert!(waiting.insert(value).is_ok());
    }
    assert!(next(&mut waiting, &parent_waker).is_pending());
    assert!(states.iter().all(|state| state.polls() == 1));
    for state in &states {
        state.waker().wake();
    }
    let wakes_before = parent.count();
    assert!(next(&mut waiting, &parent_waker).is_pending());
    let polled = states.iter().filter(|state| state.polls() == 2).count();
    assert_eq!(polled, MAX_VAIN_REPOLLS, "the call yields at its strikes");
    assert!(
        parent.count() > wakes_before,
        "yielded without waking its task"
    );
    assert!(next(&mut waiting, &parent_waker).is_pending());
    assert!(
        states.iter().all(|state| state.polls() == 2),
        "the next call polls the rest"
    );
}

#[test]
fn the_fairness_rules_hold_in_a_fixed_arena() {
    fairness(
        Arena::new(3 * MAX_VAIN_REPOLLS + 4),
        Arena::new(MAX_VAIN_REPOLLS + 8),
    );
}

#[test]
fn the_fairness_rules_hold_across_the_groups_of_a_growable_arena() {
    fairness(GrowableArena::new(), GrowableArena::new());
}

#[test]
fn a_value_of_a_full_group_that_panics_in_poll_leaves_its_slot_to_the_next_insert() {
    let mut arena = GrowableArena::with_capacity(2);
    let (values, states) = probes(2);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    let mut cx = Context::from_waker(Waker::noop());
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_next(&mut cx, |key, fut, cx| {
            assert!(key != keys[0], "boom");
            Step::of_future(fut.poll(cx))
        })
    }));
    assert!(panicked.is_err());
    assert_eq!((states[0].drops(), arena.len()), (1, 1));
    let (value, _) = Probe::new(2);
    arena.insert(value);
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 2),
        "the freed slot takes the insert"
    );
}

#[test]
fn a_top_group_emptied_by_a_panic_in_poll_is_released_at_the_next_call() {
    let mut arena = GrowableArena::with_capacity(2);
    let (values, states) = probes(3);
    let keys: Vec<Key> = values.into_iter().map(|v| arena.insert(v)).collect();
    assert_eq!(arena.groups(), 2);
    let top = keys[2];
    assert!(arena.remove(keys[0]) && arena.remove(keys[1]));
    let (parent_waker, _) = counting_waker();
    assert!(next_growable(&mut arena, &parent_waker).is_pending());
    states[2].waker().wake();
    let mut cx = Context::from_waker(&parent_waker);
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_next(&mut cx, |key, fut, cx| {
            assert!(key != top, "boom");
            Step::of_future(fut.poll(cx))
        })
    }));
    assert!(panicked.is_err());
    assert_eq!((states[2].drops(), arena.len()), (1, 0));
    assert_eq!(arena.groups(), 2, "released at the next call");
    assert!(matches!(
        next_growable(&mut arena, &parent_waker),
        Poll::Ready(None)
    ));
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 2),
        "the empty top group is released"
    );
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
fn an_arena_and_its_wakers_free_every_byte_once_gone() {
    use pinfold_testkit::alloc::measure_bytes;

    // An arena that polled with a task's waker, dropped while that waker is registered; a
    // value's waker kept past the arena and woken by value.
    let ((), bytes) = measure_bytes(|| {
        let (task, _) = counting_waker();
        let mut arena = Arena::new(4);
        let (values, states) = probes(2);
        for value in values {
            arena.insert(value).unwrap();
        }
        assert!(next(&mut arena, &task).is_pending());
        let kept = states[0].waker();
        drop(arena);
        kept.wake();
        drop((task, states));
    });
    assert_eq!(bytes.change, 0, "bytes left behind");
}
