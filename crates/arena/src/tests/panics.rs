//! Panics: a value that panics in `poll` or `drop` is gone afterwards, every other value is
//! dropped once, and the arena (and a growable arena's groups) stays usable.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::probe::{Probe, probes};
use pinfold_testkit::waker::counting_waker;

use super::{DropCounter, next_growable};
use crate::{Arena, GrowableArena, Key, Step, Storage};
use alloc::vec::Vec;

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

/// Drops an arena of `Loud`s armed as given, its last slot never taken (4 of 5): the drop
/// panics with the first value's panic, and every value is dropped once.
#[cfg(feature = "std")]
#[test]
fn dropping_an_arena_drops_every_value_even_when_two_drops_panic() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new(5);
    for armed in [false, true, false, true] {
        arena.insert(Loud(armed, drops.clone())).unwrap();
    }
    // A slot freed, then taken again: the values are not in insertion order of slots.
    let key = arena.insert(Loud(false, drops.clone())).unwrap();
    assert!(arena.remove(key));
    assert!(catch_unwind(AssertUnwindSafe(|| drop(arena))).is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}

/// An arena dropped while a panic unwinds, two of its values panicking in their `Drop`: every
/// value is dropped once, and nothing aborts (a panic escaping a drop then would).
#[cfg(feature = "std")]
#[test]
fn an_arena_dropped_while_a_panic_unwinds_drops_every_value_despite_two_panicking_drops() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let drops = Arc::new(AtomicUsize::new(0));
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        let mut arena = Arena::new(4);
        let mut growable = GrowableArena::with_capacity(1);
        for armed in [true, false, true] {
            arena.insert(Loud(armed, drops.clone())).unwrap();
            growable.insert(Loud(armed, drops.clone()));
        }
        panic!("the first panic");
    }));
    let panic = unwound.expect_err("the first panic goes on");
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"the first panic"));
    assert_eq!(drops.load(Ordering::SeqCst), 6);
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
fn a_top_group_emptied_by_a_panic_in_poll_is_released_as_the_panic_leaves() {
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
    assert_eq!(
        (arena.groups(), arena.capacity()),
        (1, 2),
        "the empty top group is released"
    );
    assert!(matches!(
        next_growable(&mut arena, &parent_waker),
        Poll::Ready(None)
    ));
}

#[test]
fn a_head_stream_of_the_top_group_panicking_in_place_wakes_the_task_for_the_stream_behind_it() {
    // Group 0 (2 slots): a removed value, then an always-ready stream; group 1: a stream that
    // panics. The merge's common call polls the head of its queue in place: there the top
    // group's only value panics, the group is released, and the ready stream behind it is
    // still due, so the task must be woken.
    let mut arena = GrowableArena::with_capacity(2);
    let removed = arena.insert(false);
    let ready = arena.insert(false);
    arena.insert(true);
    assert_eq!(arena.groups(), 2);
    assert!(arena.remove(removed));
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let poll = |arena: &mut GrowableArena<bool>, cx: &mut Context<'_>| {
        arena.poll_next_some(cx, |key, panics, _| {
            assert!(!*panics, "boom");
            Step::of_stream(Poll::Ready(Some(key)))
        })
    };
    assert_eq!(poll(&mut arena, &mut cx), Poll::Ready(Some((ready, ready))));
    let panicked = catch_unwind(AssertUnwindSafe(|| poll(&mut arena, &mut cx)));
    assert!(panicked.is_err());
    assert_eq!((arena.len(), arena.groups()), (1, 1), "the top group went");
    assert_eq!(
        wakes.count(),
        1,
        "the ready stream is due: the task is woken"
    );
    assert_eq!(poll(&mut arena, &mut cx), Poll::Ready(Some((ready, ready))));
}

/// Counts its drops; panics in `Drop` if `panics`.
struct Counted<'a> {
    drops: &'a core::cell::Cell<usize>,
    panics: bool,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
        if self.panics {
            panic!("the value's drop panics");
        }
    }
}

/// What a quiet holder (`new` and `into_inner` are its) promises: it dereferences to its value,
/// gives it back undropped, drops it once, lets a panic of its `Drop` go on, and drops that
/// panic when the value is dropped as another panic unwinds, which goes on.
fn holds_its_value_quietly<'a, H>(
    drops: &'a core::cell::Cell<usize>,
    new: impl Fn(Counted<'a>) -> H,
    into_inner: impl Fn(H) -> Counted<'a>,
) where
    H: core::ops::DerefMut<Target = Counted<'a>>,
{
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let counted = |panics| Counted { drops, panics };
    let mut held = new(counted(false));
    assert!(!held.panics, "it dereferences to the value");
    held.panics = true;
    assert!(held.panics, "it dereferences mutably to the value");
    held.panics = false;
    let value = into_inner(held);
    assert_eq!(drops.get(), 0, "given back, not dropped");
    drop(new(value));
    assert_eq!(drops.get(), 1, "dropped once");
    // Without a panic unwinding, a panic of the value's drop goes on.
    let panicked = catch_unwind(AssertUnwindSafe(|| drop(new(counted(true)))));
    assert!(panicked.is_err());
    assert_eq!(drops.get(), 2);
    // Dropped as another panic unwinds: that panic goes on, the value's is dropped.
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let _held = new(counted(true));
        panic!("the first panic");
    }));
    let panic = panicked.expect_err("the first panic goes on");
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"the first panic"));
    assert_eq!(drops.get(), 3);
}

#[test]
fn a_quiet_drop_gives_its_value_back_or_drops_it_once_also_while_a_panic_unwinds() {
    use crate::unwind::QuietDrop;
    holds_its_value_quietly(
        &core::cell::Cell::new(0),
        QuietDrop::new,
        QuietDrop::into_inner,
    );
    assert_eq!(alloc::format!("{:?}", QuietDrop::new(7)), "QuietDrop(7)");
}

#[test]
fn a_quiet_box_gives_its_value_back_or_drops_it_once_also_while_a_panic_unwinds() {
    use crate::unwind::QuietBox;
    holds_its_value_quietly(
        &core::cell::Cell::new(0),
        QuietBox::new,
        QuietBox::into_inner,
    );
    assert_eq!(alloc::format!("{:?}", QuietBox::new(7)), "QuietBox(7)");
}

/// A value in a `QuietBox` may borrow what is declared after the box's holder, as a `Vec`'s
/// values may: the box has no `Drop` generic over the value.
#[test]
fn a_quiet_box_may_hold_a_borrow_of_what_is_declared_after_it() {
    struct Holder<'a> {
        _kept: Option<crate::unwind::QuietBox<&'a str>>,
    }
    #[expect(
        clippy::needless_late_init,
        reason = "declared before the local it borrows, so dropped after it"
    )]
    let holder;
    let local = alloc::string::String::from("borrowed");
    holder = Holder {
        _kept: Some(crate::unwind::QuietBox::new(local.as_str())),
    };
    assert!(holder._kept.as_deref() == Some(&"borrowed"));
}

#[test]
fn drop_all_over_an_iterator_whose_next_panics_lets_that_panic_go_on() {
    pinfold_testkit::panic_hook::no_forced_backtraces();
    let drops = core::cell::Cell::new(0);
    let nexts = core::cell::Cell::new(0);
    let items = core::iter::from_fn(|| {
        nexts.set(nexts.get() + 1);
        if nexts.get() > 1 {
            panic!("the iterator's next panics");
        }
        Some(Counted {
            drops: &drops,
            panics: false,
        })
    });
    // The items after the panic cannot be had: the drops stop there, and the iterator's first
    // panic goes on (a second call of its `next` while that panic unwound aborted).
    let panicked = catch_unwind(AssertUnwindSafe(|| crate::unwind::drop_all(items)));
    let panic = panicked.expect_err("the iterator's panic goes on");
    assert_eq!(
        panic.downcast_ref::<&str>(),
        Some(&"the iterator's next panics")
    );
    assert_eq!(drops.get(), 1);
    assert_eq!(
        nexts.get(),
        2,
        "no item is asked for after a next that panicked"
    );
}

/// A wake of a departed value's waker, made during another value's poll that then panics, is
/// drained as the panic leaves and answered by nothing: the task is not woken for it (the
/// drain found no value to queue). In an arena and in a growable one.
#[test]
fn a_stale_wake_drained_as_a_panic_leaves_does_not_wake_the_task() {
    stale_wake_drained_as_a_panic_leaves(Arena::new(1));
    stale_wake_drained_as_a_panic_leaves(GrowableArena::new());
}

fn stale_wake_drained_as_a_panic_leaves<S: Storage<u32>>(mut arena: S) {
    let (task, wakes) = counting_waker();
    let mut cx = Context::from_waker(&task);
    let departed = arena.insert(0).unwrap_or_else(|_| panic!("room"));
    let mut kept = None;
    let polled = arena.poll_next(&mut cx, |_, _, cx| -> Step<()> {
        kept = Some(cx.waker().clone());
        Step::Pending
    });
    assert!(polled.is_pending());
    assert!(arena.remove(departed));
    // The departed value's waker is alive: its slot's next value takes the other entry.
    arena.insert(1).unwrap_or_else(|_| panic!("room"));
    let stale = kept.take().unwrap();
    let before = wakes.count();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
            stale.wake_by_ref();
            panic!("boom")
        })
    }));
    assert!(panicked.is_err());
    assert!(arena.is_empty());
    assert_eq!(wakes.count(), before, "a stale wake woke the task");
    // The set is usable: its next value is polled once, and gives its output.
    arena.insert(2).unwrap_or_else(|_| panic!("room"));
    stale.wake_by_ref();
    let mut polls = 0;
    let polled = arena.poll_next(&mut cx, |_, _, _| -> Step<()> {
        polls += 1;
        Step::of_future(Poll::Ready(()))
    });
    assert!(matches!(polled, Poll::Ready(Some(_))));
    assert_eq!(polls, 1);
}
