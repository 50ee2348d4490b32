//! Cancellation: dropping a waiting `acquire` gives up its place and loses nothing. A buffer
//! handed to a waiter that is dropped before taking it goes on to the next waiter, or back to
//! the pool; waiters dropped in any order while other threads release buffers leave every
//! buffer back in the pool, and no remaining waiter waits for ever.

mod support;

use std::pin::Pin;
use std::sync::Barrier;
use std::task::Poll;
use std::thread;
use std::time::Duration;

use pinfold_pool::{Acquire, Buf, BufferPool};
use support::{
    XorShift, block_on, counting_waker, lost_wake, paused_runtime, poll_once, poll_with,
};

/// Regression test (Miri, Stacked Borrows): `Acquire::drop` once held a `&mut` to its node
/// while `unlink` made a second one to the same node, invalidating the first, which it then
/// used. Every test that drops a waiter still in the queue hit it.
#[test]
fn dropping_a_waiter_still_in_the_queue_unlinks_it() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_once(&mut waiter).is_pending());
    drop(waiter); // still queued: never handed a buffer
    drop(held);
    assert_eq!(
        pool.available(),
        1,
        "the release went to the dropped waiter"
    );
}

#[test]
fn a_buffer_handed_to_a_dropped_waiter_goes_to_the_next_waiter() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let (first_waker, first_wakes) = counting_waker();
    let (next_waker, next_wakes) = counting_waker();
    let mut first = Box::pin(pool.acquire());
    let mut next = Box::pin(pool.acquire());
    assert!(poll_with(&mut first, &first_waker).is_pending());
    assert!(poll_with(&mut next, &next_waker).is_pending());
    drop(held);
    assert_eq!((first_wakes.count(), next_wakes.count()), (1, 0));
    drop(first); // handed the buffer, never took it
    assert_eq!(next_wakes.count(), 1, "the next waiter was not woken");
    assert_eq!(pool.available(), 0);
    assert!(
        pool.try_acquire().is_none(),
        "the buffer is the next waiter's"
    );
    let Poll::Ready(buf) = poll_with(&mut next, &next_waker) else {
        panic!("the next waiter did not get the buffer the dropped one was handed");
    };
    drop(buf);
    assert_eq!(pool.available(), 1);
}

#[test]
fn a_buffer_handed_to_the_last_waiter_dropped_goes_back_to_the_pool() {
    let pool = BufferPool::new(1, 8);
    let held = pool.try_acquire().unwrap();
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_once(&mut waiter).is_pending());
    drop(held);
    assert_eq!(pool.available(), 0, "the buffer is the waiter's");
    drop(waiter);
    assert_eq!(pool.available(), 1);
    let buf = pool.try_acquire().expect("nobody waits any more");
    assert!(buf.is_empty());
}

#[test]
fn a_waiter_dropped_before_its_turn_leaves_the_others_in_order() {
    let pool = BufferPool::new(1, 8);
    let mut held = pool.try_acquire();
    let wakers: Vec<_> = (0..4).map(|_| counting_waker()).collect();
    let mut waiters: Vec<_> = (0..4).map(|_| Some(Box::pin(pool.acquire()))).collect();
    for (waiter, (waker, _)) in waiters.iter_mut().zip(&wakers) {
        assert!(poll_with(waiter.as_mut().unwrap(), waker).is_pending());
    }
    // The second and the last leave the queue before their turn.
    waiters[1] = None;
    waiters[3] = None;
    for due in [0, 2] {
        drop(held.take());
        let Poll::Ready(buf) = poll_with(waiters[due].as_mut().unwrap(), &wakers[due].0) else {
            panic!("waiter {due} was not served in its turn");
        };
        held = Some(buf);
    }
    let wakes: Vec<_> = wakers.iter().map(|(_, wakes)| wakes.count()).collect();
    assert_eq!(
        wakes,
        [1, 0, 1, 0],
        "only the waiters still waiting were woken"
    );
    drop((held, waiters));
    assert_eq!(pool.available(), 1);
}

#[test]
fn dropping_an_acquire_that_never_waited_changes_nothing() {
    let pool = BufferPool::new(1, 8);
    drop(pool.acquire()); // never polled
    let held = pool.try_acquire().unwrap();
    drop(pool.acquire()); // never polled while the buffer is out
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_once(&mut waiter).is_pending());
    drop(held);
    assert!(poll_once(&mut waiter).is_ready());
    drop(waiter); // returned its buffer already
    assert_eq!(pool.available(), 1);
}

#[test]
fn waiters_dropped_in_random_order_while_threads_release_lose_no_buffer() {
    let rounds = if cfg!(miri) { 3 } else { 300 };
    for seed in 1..=rounds {
        cancel_while_releasing(seed);
    }
}

/// One round: every buffer of a pool is out; waiters queue; two threads release the buffers
/// while a third drops a random half of the waiters in a random order, and this thread waits
/// for each of the others in turn (each must be served). Then every buffer is back.
fn cancel_while_releasing(seed: u64) {
    let mut rng = XorShift::new(seed);
    let capacity = 1 + rng.below(4);
    let waiters = if cfg!(miri) { 6 } else { 24 };
    let pool = BufferPool::new(capacity, 16);
    let mut held: Vec<Buf> = (0..capacity).map(|_| pool.try_acquire().unwrap()).collect();
    let mut futures: Vec<Pin<Box<Acquire<'_>>>> =
        (0..waiters).map(|_| Box::pin(pool.acquire())).collect();
    for future in &mut futures {
        assert!(poll_once(future).is_pending());
    }
    let (mut kept, mut cancelled) = (Vec::new(), Vec::new());
    for future in futures {
        if rng.below(2) == 0 {
            kept.push(future);
        } else {
            cancelled.push(future);
        }
    }
    rng.shuffle(&mut cancelled);
    let second_half = held.split_off(capacity / 2);
    let start = Barrier::new(4);
    thread::scope(|scope| {
        for mut bufs in [held, second_half] {
            let (start, mut rng) = (&start, XorShift::new(rng.next_u64()));
            scope.spawn(move || {
                start.wait();
                while let Some(buf) = bufs.pop() {
                    drop(buf);
                    pause(&mut rng);
                }
            });
        }
        let (start, mut canceller_rng) = (&start, XorShift::new(rng.next_u64()));
        scope.spawn(move || {
            start.wait();
            for future in cancelled {
                drop(future);
                pause(&mut canceller_rng);
            }
        });
        start.wait();
        for future in kept {
            // Served in turn: the buffers go round the waiters still waiting.
            let buf = block_on(future);
            assert!(buf.is_empty());
            pause(&mut rng);
        }
    });
    assert_eq!(
        pool.available(),
        pool.capacity(),
        "seed {seed}: a buffer was lost"
    );
}

/// Yields this thread's time slice a random number of times (0 to 2), to vary the
/// interleavings.
fn pause(rng: &mut XorShift) {
    for _ in 0..rng.up_to(2) {
        thread::yield_now();
    }
}

#[test]
fn acquires_cancelled_by_timeouts_lose_no_buffer() {
    const TASKS: u64 = 40;
    paused_runtime().block_on(async {
        let pool = BufferPool::new(3, 8);
        let mut rng = XorShift::new(5);
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let pool = pool.clone();
                let (patience, holds) = (rng.up_to(20), rng.up_to(10));
                tokio::spawn(async move {
                    let acquire = pool.acquire();
                    match tokio::time::timeout(Duration::from_millis(patience), acquire).await {
                        Ok(buf) => {
                            tokio::time::sleep(Duration::from_millis(holds)).await;
                            drop(buf);
                            true
                        }
                        Err(_) => false,
                    }
                })
            })
            .collect();
        let mut served = 0;
        for task in tasks {
            let got = tokio::time::timeout(lost_wake(), task)
                .await
                .expect("a task waited for ever")
                .unwrap();
            served += usize::from(got);
        }
        assert!(served >= 3, "the first three were served at once");
        assert!(
            served < TASKS as usize,
            "some timed out (or the test tests nothing)"
        );
        assert_eq!(pool.available(), pool.capacity());
    });
}
