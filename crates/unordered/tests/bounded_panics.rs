//! Panics: a future that panics in `poll` is dropped and its panic reaches the caller; a
//! future whose `Drop` panics is not undefined behaviour; either way the set stays usable.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use pinfold_testkit::contract::panic_message;
use pinfold_testkit::stream::{poll_once, settle};
use pinfold_unordered::FuturesUnorderedBounded;

/// What the tests push: a future that finishes, one that panics in `poll`, one that panics in
/// `Drop`, or one that never finishes (and that nothing wakes). Each counts its drops.
enum Task {
    Ready(usize),
    PanicInPoll,
    PanicInDrop(usize),
    Wait(usize),
}

struct Tracked {
    task: Task,
    drops: Arc<AtomicUsize>,
}

impl Tracked {
    fn new(task: Task) -> (Self, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        (
            Self {
                task,
                drops: drops.clone(),
            },
            drops,
        )
    }
}

impl Future for Tracked {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<usize> {
        match &self.task {
            Task::Ready(id) | Task::PanicInDrop(id) => Poll::Ready(*id),
            Task::PanicInPoll => panic!("panic in poll"),
            Task::Wait(_) => Poll::Pending,
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if let Task::PanicInDrop(_) = self.task {
            panic!("panic in drop");
        }
    }
}

fn catch_poll(set: &mut FuturesUnorderedBounded<Tracked>) -> Result<Poll<Option<usize>>, String> {
    catch_unwind(AssertUnwindSafe(|| poll_once(set)))
        .map_err(|panic| panic_message(&*panic).to_owned())
}

#[test]
fn panic_in_poll_reaches_the_caller_and_drops_the_future() {
    let mut set = FuturesUnorderedBounded::new(3);
    let (bomb, bomb_drops) = Tracked::new(Task::PanicInPoll);
    let (waiter, waiter_drops) = Tracked::new(Task::Wait(1));
    set.push(waiter);
    set.push(bomb);
    settle_until_panic(&mut set, "panic in poll");
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 1);
    assert!(!set.is_full());
    assert_eq!(waiter_drops.load(Ordering::SeqCst), 0);

    // Still usable: a new future is polled and finishes, the survivor (which nothing wakes)
    // stays in place.
    let (more, more_drops) = Tracked::new(Task::Ready(2));
    set.push(more);
    assert_eq!(drain_woken(&mut set, 1), [2]);
    assert_eq!(more_drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 1);
    assert!(matches!(set.iter().next().unwrap().task, Task::Wait(1)));
    drop(set);
    assert_eq!(waiter_drops.load(Ordering::SeqCst), 1);
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
}

/// Polls until one call panics with `expected`.
fn settle_until_panic(set: &mut FuturesUnorderedBounded<Tracked>, expected: &str) {
    for _ in 0..=set.len() {
        match catch_poll(set) {
            Err(message) => {
                assert_eq!(message, expected);
                return;
            }
            Ok(Poll::Pending) => {}
            Ok(other) => panic!("expected a panic, got {other:?}"),
        }
    }
    panic!("no panic reached the caller");
}

/// Polls until `Pending`, collecting `outputs` outputs; panics on a caught panic.
fn drain_woken(set: &mut FuturesUnorderedBounded<Tracked>, outputs: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for _ in 0..outputs + 2 {
        match catch_poll(set).expect("unexpected panic") {
            Poll::Ready(Some(id)) => out.push(id),
            Poll::Ready(None) | Poll::Pending => break,
        }
    }
    assert_eq!(out.len(), outputs);
    out
}

#[test]
fn set_keeps_working_after_many_poll_panics() {
    let rounds = if cfg!(miri) { 3 } else { 50 };
    let mut set = FuturesUnorderedBounded::new(4);
    let mut drops = Vec::new();
    for round in 0..rounds {
        let (bomb, bomb_drops) = Tracked::new(Task::PanicInPoll);
        let (ok, ok_drops) = Tracked::new(Task::Ready(round));
        set.push(bomb);
        set.push(ok);
        drops.push(bomb_drops);
        drops.push(ok_drops);
        let mut outputs = Vec::new();
        let mut panics = 0;
        for _ in 0..4 {
            match catch_poll(&mut set) {
                Ok(Poll::Ready(Some(out))) => outputs.push(out),
                Ok(Poll::Ready(None)) => break,
                Ok(Poll::Pending) => {}
                Err(message) => {
                    assert_eq!(message, "panic in poll");
                    panics += 1;
                }
            }
        }
        assert_eq!(panics, 1, "round {round}");
        assert_eq!(outputs, [round], "round {round}");
        assert!(set.is_empty(), "round {round}");
    }
    for (i, count) in drops.iter().enumerate() {
        assert_eq!(count.load(Ordering::SeqCst), 1, "future {i}");
    }
}

#[test]
fn panic_in_drop_of_a_finished_future_reaches_the_caller() {
    let mut set = FuturesUnorderedBounded::new(3);
    let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(0));
    set.push(bomb);
    let result = catch_poll(&mut set);
    assert_eq!(result, Err("panic in drop".to_owned()));
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 0);
    assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(None)));

    // Still usable: fill it and drain it.
    let mut drops = Vec::new();
    for id in 1..4 {
        let (ready, count) = Tracked::new(Task::Ready(id));
        set.push(ready);
        drops.push(count);
    }
    assert!(set.is_full());
    let mut outputs = drain_woken(&mut set, 3);
    outputs.sort_unstable();
    assert_eq!(outputs, [1, 2, 3]);
    assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(None)));
    for count in &drops {
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
}

#[test]
fn panic_in_drop_leaves_the_other_futures_in_place() {
    let mut set = FuturesUnorderedBounded::new(4);
    let mut waiters = Vec::new();
    for id in 0..3 {
        let (waiter, drops) = Tracked::new(Task::Wait(id));
        set.push(waiter);
        waiters.push(drops);
    }
    assert!(settle(&mut set).is_empty());
    let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(9));
    set.push(bomb);
    assert_eq!(catch_poll(&mut set), Err("panic in drop".to_owned()));
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    assert_eq!(set.len(), 3);
    let mut ids: Vec<usize> = set
        .iter()
        .map(|tracked| match tracked.task {
            Task::Wait(id) => id,
            _ => panic!("a finished future is still in the set"),
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2]);
    for drops in &waiters {
        assert_eq!(drops.load(Ordering::SeqCst), 0);
    }
    set.clear();
    for drops in &waiters {
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn panic_in_drop_during_clear_leaves_the_set_usable() {
    let mut set = FuturesUnorderedBounded::new(3);
    let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(0));
    let (waiter, waiter_drops) = Tracked::new(Task::Wait(1));
    set.push(waiter);
    set.push(bomb);
    let cleared = catch_unwind(AssertUnwindSafe(|| set.clear()));
    assert_eq!(
        panic_message(&*cleared.expect_err("the Drop panic did not reach the caller")),
        "panic in drop"
    );
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    // The set is consistent whether or not the clear went on past the panic; clearing again
    // drops whatever is left, once.
    set.clear();
    assert!(set.is_empty());
    assert_eq!(waiter_drops.load(Ordering::SeqCst), 1);
    let (ready, ready_drops) = Tracked::new(Task::Ready(5));
    set.push(ready);
    assert_eq!(catch_poll(&mut set), Ok(Poll::Ready(Some(5))));
    assert_eq!(ready_drops.load(Ordering::SeqCst), 1);
}

#[test]
fn panic_in_drop_while_dropping_the_set_drops_the_rest() {
    let mut set = FuturesUnorderedBounded::new(4);
    let mut waiters = Vec::new();
    let (first, first_drops) = Tracked::new(Task::Wait(0));
    set.push(first);
    waiters.push(first_drops);
    let (bomb, bomb_drops) = Tracked::new(Task::PanicInDrop(1));
    set.push(bomb);
    for id in 2..4 {
        let (waiter, drops) = Tracked::new(Task::Wait(id));
        set.push(waiter);
        waiters.push(drops);
    }
    let dropped = catch_unwind(AssertUnwindSafe(|| drop(set)));
    assert_eq!(
        panic_message(&*dropped.expect_err("the Drop panic did not reach the caller")),
        "panic in drop"
    );
    assert_eq!(bomb_drops.load(Ordering::SeqCst), 1);
    for (i, drops) in waiters.iter().enumerate() {
        assert_eq!(drops.load(Ordering::SeqCst), 1, "waiter {i}");
    }
}
