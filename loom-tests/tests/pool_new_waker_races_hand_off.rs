//! A waiter re-polled with another task's waker while the buffers it waits for come back.
//!
//! The main thread holds both buffers of a pool of two, and polls `acquire()` once with the
//! first task's waker (it queues). One worker drops a `Buf`, the other the only packet of the
//! other buffer, while the main thread polls the waiter again with the second task's waker:
//! the hand-off may come before that poll takes the lock, while it clones the new waker (then
//! the poll drops the clone and takes the buffer), or after the new waker is stored.
//!
//! Asserts: the waiter gets a buffer, either from that poll or, after `Pending`, from a poll
//! made once the second task is woken (a wake sent to the first task's waker after the poll
//! stored the second is a lost wake, which the model reports); the other buffer goes back to
//! the pool, and no task's waker is leaked.
#![cfg(pinfold_loom)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};

use loom_tests::{Parent, Workers, check};
use pinfold_pool::BufferPool;

#[test]
fn pool_new_waker_races_hand_off() {
    check("pool_new_waker_races_hand_off", || {
        let pool = BufferPool::new(2, 4);
        let buf = pool.try_acquire().expect("a buffer");
        let packet = pool.try_acquire().expect("a buffer").freeze();
        let (first, second) = (Parent::new(), Parent::new());

        let mut acquire = pin!(pool.acquire());
        let first_waker = first.waker();
        let mut cx = Context::from_waker(&first_waker);
        assert!(acquire.as_mut().poll(&mut cx).is_pending());

        let mut workers = Workers::new();
        workers.spawn(move || drop(buf));
        workers.spawn(move || drop(packet));

        let second_waker = second.waker();
        let mut cx = Context::from_waker(&second_waker);
        let got = match acquire.as_mut().poll(&mut cx) {
            Poll::Ready(buf) => buf,
            Poll::Pending => {
                second.wait(&workers);
                match acquire.as_mut().poll(&mut cx) {
                    Poll::Ready(buf) => buf,
                    Poll::Pending => panic!("woken, the waiter still had no buffer"),
                }
            }
        };
        workers.join();
        assert!(got.is_empty());
        assert_eq!(pool.available(), 1, "the other buffer is back in the pool");
        drop(got);
        assert_eq!(pool.available(), 2);
        drop((first_waker, second_waker));
        assert_eq!(
            first.wakers_alive() + second.wakers_alive(),
            0,
            "a waker leaked"
        );
    });
}
