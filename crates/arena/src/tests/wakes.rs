//! Wakes: a burst of wakes polls a value once and wakes the task once, wakes from other
//! threads are not lost, and a value waking itself while polled wakes no task.

use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use pinfold_testkit::future::block_on;
use pinfold_testkit::probe::{Probe, Spinner, probes};
use pinfold_testkit::waker::counting_waker;

use super::{DropCounter, next};
use crate::{Arena, Step, Storage};
use alloc::vec::Vec;

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
