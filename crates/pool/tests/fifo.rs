//! First come, first served: waiting tasks get buffers in the order they started waiting
//! (their first poll of `acquire`), however often and in whatever order they are polled, and
//! neither `try_acquire` nor a newly polled `acquire` goes ahead of them.

mod support;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use pinfold_pool::{Acquire, BufferPool};
use support::{XorShift, counting_waker, paused_runtime, poll_once, poll_with};

#[test]
fn tasks_waiting_on_a_pool_of_one_get_it_in_the_order_they_started_waiting() {
    // Under Miri, 30: fifteen waiting before the buffer circulates, fifteen arriving after.
    const TASKS: usize = if cfg!(miri) { 30 } else { 100 };
    paused_runtime().block_on(async {
        let pool = BufferPool::new(1, 8);
        let started = Arc::new(Mutex::new(Vec::new()));
        let served = Arc::new(Mutex::new(Vec::new()));
        let held = pool.try_acquire().unwrap();
        let mut rng = XorShift::new(7);
        let spawn = |id: usize, holds_for: u64| {
            let (pool, started, served) = (pool.clone(), started.clone(), served.clone());
            tokio::spawn(async move {
                // Recorded in the same poll as `acquire`'s first: the order they started.
                started.lock().unwrap().push(id);
                let buf = pool.acquire().await;
                assert!(buf.is_empty());
                served.lock().unwrap().push(id);
                for _ in 0..holds_for {
                    tokio::task::yield_now().await;
                }
            })
        };
        // Half start waiting while the buffer is held; the rest arrive while it circulates.
        let mut tasks: Vec<_> = (0..TASKS / 2).map(|id| spawn(id, rng.up_to(3))).collect();
        while started.lock().unwrap().len() < TASKS / 2 {
            tokio::task::yield_now().await;
        }
        drop(held);
        for id in TASKS / 2..TASKS {
            tasks.push(spawn(id, rng.up_to(3)));
            for _ in 0..rng.up_to(2) {
                tokio::task::yield_now().await;
            }
        }
        // Every arrival came while some of the first half still waited.
        let served_then = served.lock().unwrap().len();
        assert!(
            served_then < TASKS / 2,
            "{served_then} served before the last arrival"
        );
        for task in tasks {
            tokio::time::timeout(support::lost_wake(), task)
                .await
                .expect("a task waited for ever")
                .unwrap();
        }
        let started = started.lock().unwrap().clone();
        assert_eq!(started.len(), TASKS);
        assert_eq!(*served.lock().unwrap(), started);
        assert_eq!(pool.available(), 1);
    });
}

#[test]
fn waiters_polled_in_any_order_are_served_in_the_order_of_their_first_poll() {
    let waiters = if cfg!(miri) { 12 } else { 100 };
    let mut rng = XorShift::new(11);
    let pool = BufferPool::new(1, 8);
    let mut held = pool.try_acquire();
    let wakers: Vec<_> = (0..waiters).map(|_| counting_waker()).collect();
    let mut futures: Vec<Option<Pin<Box<Acquire<'_>>>>> = (0..waiters)
        .map(|_| Some(Box::pin(pool.acquire())))
        .collect();
    let first_polls = rng.permutation(waiters);
    for &i in &first_polls {
        let future = futures[i].as_mut().unwrap();
        assert!(poll_with(future, &wakers[i].0).is_pending());
    }
    for &expected in &first_polls {
        drop(held.take()); // hands the buffer to the oldest waiter
        // Each waiter is woken once, when its turn comes (the served ones have no future left).
        for (i, (_, wakes)) in wakers.iter().enumerate() {
            let woken = usize::from(i == expected || futures[i].is_none());
            assert_eq!(
                wakes.count(),
                woken,
                "waiter {i} woken when {expected} was due"
            );
        }
        // Every waiter still waiting is polled, in a new random order: only the due one is
        // ready.
        for i in rng.permutation(waiters) {
            let Some(future) = futures[i].as_mut() else {
                continue;
            };
            match poll_with(future, &wakers[i].0) {
                Poll::Ready(buf) => {
                    assert_eq!(i, expected, "waiter {i} served when {expected} was due");
                    held = Some(buf);
                    futures[i] = None;
                }
                Poll::Pending => assert_ne!(i, expected, "the due waiter {i} was not served"),
            }
        }
        assert!(held.is_some());
        assert_eq!(wakers[expected].1.count(), 1);
    }
    assert!(futures.iter().all(Option::is_none));
    drop(held);
    assert_eq!(pool.available(), 1);
}

#[test]
fn try_acquire_returns_none_when_every_buffer_is_out() {
    let pool = BufferPool::new(3, 8);
    let bufs: Vec<_> = (0..3).map(|_| pool.try_acquire().unwrap()).collect();
    assert_eq!(pool.available(), 0);
    assert!(pool.try_acquire().is_none());
    // A frozen buffer stays out while a packet of it lives.
    let mut bufs = bufs.into_iter();
    let packet = bufs.next().unwrap().freeze();
    assert!(pool.try_acquire().is_none());
    drop(packet);
    let again = pool
        .try_acquire()
        .expect("the last packet gave its buffer back");
    assert!(pool.try_acquire().is_none());
    drop((again, bufs));
    assert_eq!(pool.available(), 3);
}

#[test]
fn try_acquire_never_goes_ahead_of_a_waiting_task() {
    let pool = BufferPool::new(2, 8);
    let first = pool.try_acquire().unwrap();
    let second = pool.try_acquire().unwrap();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_once(&mut waiter).is_pending());
    assert!(pool.try_acquire().is_none(), "went ahead of the waiter");
    drop(first); // handed to the waiter, which has not taken it yet
    assert!(
        pool.try_acquire().is_none(),
        "took the buffer handed to the waiter"
    );
    assert_eq!(pool.available(), 0);
    let Poll::Ready(taken) = poll_once(&mut waiter) else {
        panic!("the waiter was not handed the released buffer");
    };
    // Nobody waits any more: a release goes to the pool, and `try_acquire` gets it.
    drop(second);
    assert_eq!(pool.available(), 1);
    let again = pool.try_acquire().expect("nobody waits");
    drop((again, taken));
    assert_eq!(pool.available(), 2);
}

#[test]
fn a_new_acquire_never_goes_ahead_of_a_waiting_task() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let mut early = Box::pin(pool.acquire());
    assert!(poll_once(&mut early).is_pending());
    drop(held); // handed to `early`, which has not taken it yet
    let mut late = Box::pin(pool.acquire());
    assert!(
        poll_once(&mut late).is_pending(),
        "went ahead of the waiter"
    );
    let Poll::Ready(buf) = poll_once(&mut early) else {
        panic!("the early waiter was not served first");
    };
    assert!(poll_once(&mut late).is_pending());
    drop(buf);
    assert!(poll_once(&mut late).is_ready());
}

#[test]
fn waiting_tasks_are_served_before_later_try_acquires_on_every_release() {
    let pool = BufferPool::new(2, 8);
    let mut held: Vec<_> = (0..2).map(|_| pool.try_acquire().unwrap()).collect();
    let mut waiters: Vec<_> = (0..3).map(|_| Box::pin(pool.acquire())).collect();
    for waiter in &mut waiters {
        assert!(poll_once(waiter).is_pending());
    }
    let mut taken = Vec::new();
    for waiter in &mut waiters {
        // Release one, then try to take it before the waiter does: it is the waiter's.
        drop(held.pop().or_else(|| taken.pop()));
        assert!(pool.try_acquire().is_none());
        let Poll::Ready(buf) = poll_once(waiter) else {
            panic!("the oldest waiter was not served");
        };
        taken.push(buf);
    }
    drop((held, taken));
    assert_eq!(pool.available(), 2);
}
