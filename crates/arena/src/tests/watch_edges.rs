//! The poll watch at its edges: self-wakes with every `Step`, wakers kept past the value, nested
//! sets three deep, panics two at a time, and a task waker that panics.

use alloc::boxed::Box;
use alloc::vec::Vec;
use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, GrowableArena, Key, Step, Storage};

/// A value for the custom-closure tests: what its poll does is chosen by the closure.
struct Probe {
    polls: usize,
}

fn poll_probes<S: Storage<Probe>>(
    arena: &mut S,
    task: &Waker,
    step: &mut dyn FnMut(usize, &mut Context<'_>) -> Step<usize>,
    polled: &mut Vec<Key>,
) -> Poll<Option<(Key, usize)>> {
    let mut cx = Context::from_waker(task);
    arena.poll_next(&mut cx, |key, probe, cx| {
        polled.push(key);
        let probe = probe.get_mut();
        probe.polls += 1;
        step(probe.polls, cx)
    })
}

fn each_step_after_a_self_wake<S: Storage<Probe>>(mut arena: S, insert: impl Fn(&mut S) -> Key) {
    let key = insert(&mut arena);
    let (task, woken) = counting_waker();
    // Poll 1: wakes itself, keeps an output. Poll 2: wakes itself, settled. Poll 3: wakes itself,
    // an item (repoll). Poll 4: wakes itself, pending. Poll 5: pending, no wake. Then nothing.
    let mut step = |polls: usize, cx: &mut Context<'_>| {
        if polls <= 4 {
            cx.waker().wake_by_ref();
        }
        match polls {
            1 => Step::Keep(1),
            2 => Step::Settled,
            3 => Step::Repoll(3),
            4 => Step::Pending,
            _ => Step::Pending,
        }
    };
    let mut polled = Vec::new();
    assert_eq!(
        poll_probes(&mut arena, &task, &mut step, &mut polled),
        Poll::Ready(Some((key, 1)))
    );
    assert_eq!(polled.len(), 1);
    // Settled after a self-wake: pending, the task woken for the next round.
    polled.clear();
    let before = woken.count();
    assert!(poll_probes(&mut arena, &task, &mut step, &mut polled).is_pending());
    assert_eq!(
        polled.len(),
        1,
        "the self-waking value was polled twice in one call"
    );
    assert_eq!(
        woken.count(),
        before + 1,
        "a Settled value that woke itself: task not woken"
    );
    polled.clear();
    assert_eq!(
        poll_probes(&mut arena, &task, &mut step, &mut polled),
        Poll::Ready(Some((key, 3)))
    );
    assert_eq!(polled.len(), 1);
    polled.clear();
    let before = woken.count();
    assert!(poll_probes(&mut arena, &task, &mut step, &mut polled).is_pending());
    assert_eq!(polled.len(), 1);
    assert_eq!(woken.count(), before + 1);
    polled.clear();
    let before = woken.count();
    assert!(poll_probes(&mut arena, &task, &mut step, &mut polled).is_pending());
    assert_eq!(
        polled.len(),
        1,
        "the pending value woken in its last poll was not polled"
    );
    assert_eq!(woken.count(), before, "nothing woke: no task wake");
    polled.clear();
    assert!(poll_probes(&mut arena, &task, &mut step, &mut polled).is_pending());
    assert!(polled.is_empty(), "a value nobody woke was polled");
}

#[test]
fn each_step_after_a_self_wake_bounded() {
    each_step_after_a_self_wake(Arena::new(4), |arena| {
        arena
            .insert(Probe { polls: 0 })
            .unwrap_or_else(|_| panic!("no room"))
    });
}

#[test]
fn each_step_after_a_self_wake_growable() {
    each_step_after_a_self_wake(GrowableArena::with_capacity(1), |arena| {
        arena.insert(Probe { polls: 0 })
    });
}

/// Keeps its waker and wakes it from its `Drop`.
struct WakesOnDrop {
    kept: Option<Waker>,
    polls: Rc<Cell<usize>>,
    ready_at: usize,
}

impl Future for WakesOnDrop {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls.set(self.polls.get() + 1);
        self.kept = Some(cx.waker().clone());
        cx.waker().wake_by_ref();
        if self.polls.get() >= self.ready_at {
            return Poll::Ready(self.polls.get());
        }
        Poll::Pending
    }
}

impl Drop for WakesOnDrop {
    fn drop(&mut self) {
        if let Some(waker) = self.kept.take() {
            waker.wake_by_ref();
            waker.wake();
        }
    }
}

#[test]
fn a_value_that_wakes_itself_then_is_ready_and_wakes_from_drop_leaves_nothing_queued() {
    let polls = Rc::new(Cell::new(0));
    let later = Rc::new(Cell::new(0));
    let mut arena: Arena<Pin<Box<dyn Future<Output = usize>>>> = Arena::new(1);
    let _ = arena.insert(Box::pin(WakesOnDrop {
        kept: None,
        polls: polls.clone(),
        ready_at: 1,
    }));
    let (task, woken) = counting_waker();
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(1)));
    // The slot is reused: the new value must not be polled for the old one's wakes beyond its
    // first poll.
    let counted = later.clone();
    let _ = arena.insert(Box::pin(poll_fn(move |_| {
        counted.set(counted.get() + 1);
        Poll::Pending
    })));
    assert!(next(&mut arena, &task).is_pending());
    assert_eq!(later.get(), 1);
    let before = woken.count();
    assert!(next(&mut arena, &task).is_pending());
    assert_eq!(later.get(), 1, "a stale wake polled the slot's later value");
    assert_eq!(woken.count(), before);
}

/// Three arenas deep, each level's value waking itself: `A(B(C))`, each polled once a call.
fn three_deep<const GROW: bool>() {
    let polls: [Rc<Cell<usize>>; 3] = Default::default();
    let leaf_polls = polls[2].clone();
    let leaf = move || -> Pin<Box<dyn Future<Output = usize>>> {
        let p = leaf_polls.clone();
        Box::pin(poll_fn(move |cx| {
            p.set(p.get() + 1);
            cx.waker().wake_by_ref();
            Poll::<usize>::Pending
        }))
    };
    fn level(
        polls: Rc<Cell<usize>>,
        grow: bool,
        make: Box<dyn Fn() -> Pin<Box<dyn Future<Output = usize>>>>,
    ) -> Pin<Box<dyn Future<Output = usize>>> {
        let mut bounded = Arena::new(1);
        let mut growable = GrowableArena::new();
        let _ = if grow {
            growable.insert(make());
            Ok(())
        } else {
            bounded.insert(make()).map(|_| ())
        };
        Box::pin(poll_fn(move |cx| {
            polls.set(polls.get() + 1);
            cx.waker().wake_by_ref();
            let _ = if grow {
                next(&mut growable, cx.waker())
            } else {
                next(&mut bounded, cx.waker())
            };
            Poll::Pending
        }))
    }
    let p1 = polls[1].clone();
    let middle = move || level(p1.clone(), !GROW, Box::new(leaf.clone()));
    let top = level(polls[0].clone(), GROW, Box::new(middle));
    let mut outer = Arena::new(1);
    let _ = outer.insert(top);
    let (task, woken) = counting_waker();
    for call in 1..=4 {
        assert!(next(&mut outer, &task).is_pending());
        for (depth, p) in polls.iter().enumerate() {
            assert_eq!(p.get(), call, "depth {depth}, call {call}");
        }
        assert_eq!(woken.count(), call);
    }
}

#[test]
fn three_deep_bounded_growable_bounded() {
    three_deep::<true>();
}

#[test]
fn three_deep_growable_bounded_growable() {
    three_deep::<false>();
}

/// A task waker that panics on its `n`th wake (the second field).
struct PanicsOnWakeShared(std::sync::Mutex<(usize, usize)>);
impl Wake for PanicsOnWakeShared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.0 += 1;
        if state.0 == state.1 {
            drop(state);
            panic!("the task's waker panics");
        }
    }
}

#[test]
fn a_panicking_task_wake_for_a_self_woken_value_does_not_lose_it() {
    let shared = Arc::new(PanicsOnWakeShared(std::sync::Mutex::new((0, 1))));
    let task = Waker::from(shared.clone());
    let polls = Rc::new(Cell::new(0));
    let counted = polls.clone();
    let mut arena: Arena<Pin<Box<dyn Future<Output = usize>>>> = Arena::new(2);
    let _ = arena.insert(Box::pin(poll_fn(move |cx| {
        counted.set(counted.get() + 1);
        if counted.get() == 3 {
            return Poll::Ready(3);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })));
    // The round's wake of the task for the self-woken value panics.
    let out = catch_unwind(AssertUnwindSafe(|| next(&mut arena, &task)));
    assert!(out.is_err());
    assert_eq!(polls.get(), 1);
    assert!(next(&mut arena, &task).is_pending());
    assert_eq!(
        polls.get(),
        2,
        "the self-woken value was lost after the task's wake panicked"
    );
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(3)));
}

/// An inner value panics after waking itself, the outer value wakes itself and panics too while
/// a second outer value woke itself before: the set stays usable and the second is polled once a
/// call.
#[test]
fn two_panics_in_nested_sets_leave_the_outer_set_awake() {
    let polls = Rc::new(Cell::new(0));
    let mut outer: GrowableArena<Pin<Box<dyn Future<Output = usize>>>> = GrowableArena::new();
    let counted = polls.clone();
    outer.insert(Box::pin(poll_fn(move |cx| {
        counted.set(counted.get() + 1);
        cx.waker().wake_by_ref();
        Poll::<usize>::Pending
    })));
    let dropped = Rc::new(RefCell::new(0));
    struct PanicsOnDrop(Rc<RefCell<usize>>);
    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            *self.0.borrow_mut() += 1;
            panic!("drop panics");
        }
    }
    let guard = PanicsOnDrop(dropped.clone());
    let mut inner: Arena<Pin<Box<dyn Future<Output = usize>>>> = Arena::new(1);
    let _ = inner.insert(Box::pin(poll_fn(|cx| -> Poll<usize> {
        cx.waker().wake_by_ref();
        panic!("inner panics")
    })));
    outer.insert(Box::pin(poll_fn(move |cx| -> Poll<usize> {
        let _keep = &guard;
        cx.waker().wake_by_ref();
        let _ = next(&mut inner, cx.waker());
        Poll::Pending
    })));
    let (task, woken) = counting_waker();
    let first = catch_unwind(AssertUnwindSafe(|| next(&mut outer, &task)));
    assert!(first.is_err());
    assert_eq!(*dropped.borrow(), 1);
    let calls_before = polls.get();
    let _ = woken.count();
    for call in 1..=3 {
        assert!(next(&mut outer, &task).is_pending());
        assert_eq!(polls.get(), calls_before + call);
    }
    assert_eq!(outer.len(), 1);
}

/// A merge round (`poll_next_some`, whose fast path `poll_first` is not watched) inside an outer
/// value's poll: its streams wake themselves and are `Pending`, or give items; the outer value
/// does not wake itself, so only the merge's wake of its task (the outer value's waker, while
/// the outer watch holds the cell) keeps it polled, once a call.
#[test]
fn an_unwatched_merge_fast_path_inside_a_watched_poll_keeps_the_outer_value_awake() {
    type Stream = Box<dyn FnMut(&mut Context<'_>) -> Poll<Option<usize>>>;
    let polls = Rc::new(Cell::new(0));
    let items = Rc::new(Cell::new(0));
    let mut inner: Arena<Stream> = Arena::new(2);
    // A stream that gives an item every other poll and wakes itself when it gives none.
    for _ in 0..2 {
        let mut n = 0;
        let _ = inner.insert(Box::new(move |cx: &mut Context<'_>| {
            n += 1;
            if n % 2 == 0 {
                Poll::Ready(Some(n))
            } else {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }));
    }
    let counted = polls.clone();
    let got = items.clone();
    let mut outer: Arena<Pin<Box<dyn Future<Output = usize>>>> = Arena::new(1);
    let _ = outer.insert(Box::pin(poll_fn(move |cx| {
        counted.set(counted.get() + 1);
        // The merge until it is `Pending` (a call after an item may take the unwatched fast
        // path).
        for _ in 0..8 {
            match inner.poll_next_some(cx, |_, stream, cx| Step::of_stream((stream.get_mut())(cx)))
            {
                Poll::Ready(Some(_)) => got.set(got.get() + 1),
                _ => break,
            }
        }
        Poll::<usize>::Pending
    })));
    let (task, woken) = counting_waker();
    for call in 1..=6 {
        let before = woken.count();
        assert!(next(&mut outer, &task).is_pending());
        assert_eq!(
            polls.get(),
            call,
            "the outer value was polled {} times in call {call}",
            polls.get()
        );
        assert_eq!(
            woken.count(),
            before + 1,
            "call {call}: the outer value waits and the task was not woken"
        );
    }
    assert!(items.get() >= 4);
}

/// A wake of the polled value from another thread during its poll (not watched: that thread's
/// cell is its own), with or without a watched self-wake beside it: polled once a call, the task
/// woken each call; `will_wake` of a clone still holds.
#[test]
fn a_cross_thread_wake_during_the_poll_beside_a_self_wake() {
    for also_self in [false, true] {
        let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = polls.clone();
        let mut arena: GrowableArena<Pin<Box<dyn Future<Output = usize> + Send>>> =
            GrowableArena::new();
        arena.insert(Box::pin(poll_fn(move |cx| {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if n > 3 {
                return Poll::Ready(n);
            }
            let clone = cx.waker().clone();
            assert!(clone.will_wake(cx.waker()));
            if also_self {
                cx.waker().wake_by_ref();
            }
            std::thread::scope(|scope| {
                scope.spawn(move || clone.wake());
            });
            Poll::Pending
        })));
        let (task, woken) = counting_waker();
        for call in 1..=3 {
            assert!(next(&mut arena, &task).is_pending());
            assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), call);
            assert_eq!(woken.count(), call, "also_self {also_self}");
        }
        assert_eq!(next(&mut arena, &task), Poll::Ready(Some(4)));
    }
}

/// The task waker's `clone` panics as the round registers it, after the value polled in the
/// call woke itself (and waits for the next round): the contract says later wakes reach the task
/// as after a `Pending` call (through the waker registered before, after a `clone` that
/// panicked), and such a call wakes the task for a value waiting for the next round. Neither
/// the waker registered before nor the new one is ever woken: the value is never polled again
/// by a task that waits for a wake.
#[test]
#[cfg(feature = "std")]
fn a_panicking_task_clone_after_a_self_wake_still_wakes_the_task() {
    use pinfold_testkit::panicking_waker::{WakerOps, panicking_waker};
    let (first, first_woken) = counting_waker();
    let (task, switches) = panicking_waker();
    let polls = Rc::new(Cell::new(0));
    let counted = polls.clone();
    let mut arena: Arena<Pin<Box<dyn Future<Output = usize>>>> = Arena::new(2);
    let key = arena
        .insert(Box::pin(poll_fn(move |cx| {
            counted.set(counted.get() + 1);
            match counted.get() {
                // First poll: waits, no wake.
                1 => Poll::Pending,
                // Second: wakes itself, waits for the next round.
                2 => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
                n => Poll::Ready(n),
            }
        })))
        .unwrap_or_else(|_| panic!("no room"));
    // Call 1 registers `first`.
    assert!(next(&mut arena, &first).is_pending());
    assert_eq!(polls.get(), 1);
    arena.waker(key).expect("held").wake();
    assert_eq!(first_woken.count(), 1);
    // Call 2, with another task waker whose clone panics as the round registers it.
    switches.panic_once(WakerOps::CLONE);
    let out = catch_unwind(AssertUnwindSafe(|| next(&mut arena, &task)));
    assert!(out.is_err(), "the clone did not panic");
    assert_eq!(polls.get(), 2);
    assert!(
        first_woken.count() + switches.wakes() >= 2,
        "the value waits for the next round and no task waker was woken for it: lost"
    );
}

/// Within one round (`start_round`, then `poll_with_budget` after each output): a value leaves
/// keeping a waker, a new value takes its slot in the same round, and the new value's poll wakes
/// the stale waker and its own: the stale wake polls nothing, the new value is polled once in the
/// round and once in the next.
fn stale_waker_in_the_same_round<S: Storage<Probe>>(mut arena: S) {
    let kept: Rc<RefCell<Vec<Waker>>> = Rc::default();
    let (task, _) = counting_waker();
    let mut cx = Context::from_waker(&task);
    // An idle value, polled once and never woken, gives the round a budget of two polls.
    let idle = arena
        .insert(Probe { polls: 0 })
        .unwrap_or_else(|_| panic!("no room"));
    assert!(
        arena
            .poll_next(&mut cx, |_, _, _| Step::<usize>::Pending)
            .is_pending()
    );
    let first = arena
        .insert(Probe { polls: 0 })
        .unwrap_or_else(|_| panic!("no room"));
    assert_ne!(first, idle);
    let mut budget = arena.start_round();
    let mut polled: Vec<Key> = Vec::new();
    let keep = kept.clone();
    let mut f = |key: Key, probe: Pin<&mut Probe>, cx: &mut Context<'_>| {
        polled.push(key);
        let probe = probe.get_mut();
        probe.polls += 1;
        if key == first {
            keep.borrow_mut().push(cx.waker().clone());
            return Step::Done(0);
        }
        for waker in keep.borrow().iter() {
            waker.wake_by_ref();
        }
        cx.waker().wake_by_ref();
        Step::Pending
    };
    assert_eq!(
        arena.poll_with_budget(&mut cx, &mut budget, &mut f),
        Poll::Ready(Some((first, 0)))
    );
    let second = arena
        .insert(Probe { polls: 0 })
        .unwrap_or_else(|_| panic!("no room"));
    assert_eq!(second.index(), first.index(), "the slot is reused");
    assert!(
        arena
            .poll_with_budget(&mut cx, &mut budget, &mut f)
            .is_pending()
    );
    assert_eq!(polled, [first, second], "polled in the round");
    polled.clear();
    let mut g = |key: Key, _: Pin<&mut Probe>, _: &mut Context<'_>| {
        polled.push(key);
        Step::<usize>::Pending
    };
    assert!(arena.poll_next(&mut cx, &mut g).is_pending());
    assert!(arena.poll_next(&mut cx, &mut g).is_pending());
    assert_eq!(
        polled,
        [second],
        "the next calls: polled once for its own wake"
    );
}

#[test]
fn a_stale_waker_woken_by_the_slots_next_value_in_the_same_round_bounded() {
    stale_waker_in_the_same_round(Arena::new(2));
}

#[test]
fn a_stale_waker_woken_by_the_slots_next_value_in_the_same_round_growable() {
    stale_waker_in_the_same_round(GrowableArena::with_capacity(2));
}
