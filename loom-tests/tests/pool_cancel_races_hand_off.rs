//! A waiter cancelled while the buffer is handed to it.
//!
//! The main thread holds the pool's one buffer. Worker A polls `acquire()` once (it queues
//! first) and then drops the future; worker B awaits `acquire()` (queued behind A, or alone
//! if A already left). The main thread releases the buffer meanwhile: the release may hand it
//! to A, to B, or push it to the free list, in any order with A's cancellation.
//!
//! Asserts: B always gets the buffer (a buffer handed to A and dropped with A's future goes on
//! to B; loom reports a deadlock otherwise), A's cancellation never loses or duplicates it, and
//! at the end the pool holds its one buffer with no waiter flagged.
#![cfg(pinfold_loom)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_cancel_races_hand_off() {
    check("pool_cancel_races_hand_off", || {
        let pool = BufferPool::new(1, 4);
        let held = pool.try_acquire().expect("the pool's one buffer");

        let canceller = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut acquire = pin!(pool.acquire());
                let mut cx = Context::from_waker(Waker::noop());
                if let Poll::Ready(buf) = acquire.as_mut().poll(&mut cx) {
                    // The release came first: take the buffer and give it straight back.
                    drop(buf);
                }
                // Dropping the future gives up its place, and any buffer handed to it.
            })
        };
        let waiter = {
            let pool = pool.clone();
            thread::spawn(move || {
                let buf = block_on(pool.acquire());
                assert!(buf.is_empty());
            })
        };
        drop(held);
        canceller.join().unwrap();
        waiter.join().unwrap();

        assert_eq!(pool.available(), 1, "the buffer is back, once");
        assert!(pool.try_acquire().is_some(), "no waiter is left flagged");
    });
}
