//! The poll watch: a value that wakes itself during its poll is polled again in the next call,
//! also when its poll polls another arena (nested sets) before or after the wake, and when that
//! inner arena's value panics.

use alloc::boxed::Box;
use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use pinfold_testkit::waker::counting_waker;

use super::next;
use crate::{Arena, GrowableArena, Storage};

/// A future that wakes itself `wakes` times in each of its first `rounds` polls, then is ready;
/// `polls` counts its polls.
fn self_waking(rounds: usize, wakes: usize, polls: Rc<Cell<usize>>) -> impl Future<Output = usize> {
    poll_fn(move |cx| {
        polls.set(polls.get() + 1);
        if polls.get() > rounds {
            return Poll::Ready(polls.get());
        }
        for _ in 0..wakes {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    })
}

#[test]
fn a_value_that_wakes_itself_is_polled_once_a_call_and_the_task_woken_each_call() {
    let polls = Rc::new(Cell::new(0));
    let mut arena = Arena::new(4);
    arena
        .insert(self_waking(3, 2, polls.clone()))
        .unwrap_or_else(|_| panic!("no room"));
    let (task, woken) = counting_waker();
    for call in 1..=3 {
        assert!(next(&mut arena, &task).is_pending());
        // Two wakes in its poll: polled once in the call, and the call woke the task.
        assert_eq!(polls.get(), call);
        assert_eq!(woken.count(), call);
    }
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(4)));
    assert_eq!(next(&mut arena, &task), Poll::Ready(None));
}

#[test]
fn a_clone_of_the_waker_woken_during_the_poll_is_a_self_wake() {
    let polls = Rc::new(Cell::new(0));
    let counted = polls.clone();
    let mut arena = Arena::new(2);
    arena
        .insert(poll_fn(move |cx: &mut Context<'_>| {
            counted.set(counted.get() + 1);
            if counted.get() == 2 {
                return Poll::Ready(());
            }
            // An owned waker, woken by value.
            let clone = cx.waker().clone();
            clone.wake();
            Poll::Pending
        }))
        .unwrap_or_else(|_| panic!("no room"));
    let (task, woken) = counting_waker();
    assert!(next(&mut arena, &task).is_pending());
    assert_eq!(woken.count(), 1);
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(())));
    assert_eq!(polls.get(), 2);
}

type Inner = Pin<Box<dyn Future<Output = usize>>>;

/// The outer value of the nesting tests: each poll, it puts a value made by `make` into a set
/// of its own and polls that set once in its own context (the inner set watches its value's
/// poll in turn, and its watch ends before the outer one's), and wakes itself before that
/// (`wake_first`) or after it, until it has been polled `rounds` times.
fn outer(
    make: fn() -> Inner,
    wake_first: bool,
    rounds: usize,
    polls: Rc<Cell<usize>>,
) -> impl Future<Output = usize> {
    let mut inner = Arena::new(1);
    poll_fn(move |cx| {
        polls.set(polls.get() + 1);
        if polls.get() > rounds {
            return Poll::Ready(polls.get());
        }
        if wake_first {
            cx.waker().wake_by_ref();
        }
        inner.insert(make()).unwrap_or_else(|_| panic!("no room"));
        let _ = catch_unwind(AssertUnwindSafe(|| next(&mut inner, cx.waker())));
        if !wake_first {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    })
}

/// Runs [`outer`] in a set: polled once each call, the task woken each call, never lost.
fn nested(make: fn() -> Inner) {
    for wake_first in [true, false] {
        let polls = Rc::new(Cell::new(0));
        let mut arena = Arena::new(2);
        arena
            .insert(outer(make, wake_first, 3, polls.clone()))
            .unwrap_or_else(|_| panic!("no room"));
        let (task, woken) = counting_waker();
        for call in 1..=3 {
            assert!(next(&mut arena, &task).is_pending());
            let lost = std::format!("the self-wake was lost (woken first: {wake_first})");
            assert_eq!(polls.get(), call, "{lost}");
            assert_eq!(woken.count(), call, "{lost}");
        }
        assert_eq!(next(&mut arena, &task), Poll::Ready(Some(4)));
    }
}

#[test]
fn a_self_wake_around_an_inner_sets_poll_is_kept() {
    // The inner value is ready at once: the inner set returns it and wakes nobody.
    nested(|| Box::pin(async { 1 }));
}

#[test]
fn a_self_wake_around_an_inner_value_that_panics_is_kept() {
    // The inner value panics in its poll: the inner set drops it and lets the panic go on.
    nested(|| {
        Box::pin(poll_fn(|_| -> Poll<usize> {
            panic!("the inner value panics")
        }))
    });
}

#[test]
fn a_growable_arenas_value_that_wakes_itself_is_polled_once_a_call() {
    let polls = Rc::new(Cell::new(0));
    let mut arena = GrowableArena::with_capacity(1);
    // A second group: the value sits in a group above the first.
    arena.insert(self_waking(0, 0, Rc::new(Cell::new(0))));
    arena.insert(self_waking(3, 1, polls.clone()));
    let (task, woken) = counting_waker();
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(1)));
    for call in 1..=3 {
        assert!(next(&mut arena, &task).is_pending());
        assert_eq!(polls.get(), call);
        assert_eq!(woken.count(), call);
    }
    assert_eq!(next(&mut arena, &task), Poll::Ready(Some(4)));
}
