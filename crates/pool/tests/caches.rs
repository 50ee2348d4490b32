//! The threads' caches of free buffers: a buffer released on any thread stays findable by an
//! acquire on any other, reaches a task that waits, and is counted by `available`.
// They spawn threads.
#![cfg(feature = "std")]

mod support;

use std::task::Poll;
use std::thread;

use pinfold_pool::{Buf, BufferPool};
use support::{counting_waker, poll_with};

/// Sizes that cover a batch of one buffer and batches of several.
const COUNTS: [usize; 3] = [1, 16, 200];

/// Drops `bufs` on a thread of its own, so they go into that thread's cache.
fn release_on_another_thread(bufs: Vec<Buf>) {
    thread::spawn(move || drop(bufs)).join().unwrap();
}

#[test]
fn buffers_released_on_other_threads_are_all_found_by_try_acquire() {
    for count in COUNTS {
        let pool = BufferPool::new(count, 8);
        let all: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
        assert!(pool.try_acquire().is_none());
        // Half on one thread, half on another: some into caches, some back to the shared list.
        let mut all = all;
        let half = all.split_off(count / 2);
        release_on_another_thread(all);
        release_on_another_thread(half);
        assert_eq!(pool.available(), count, "available counts every list");

        let again: Vec<Buf> = (0..count)
            .map(|_| pool.try_acquire().expect("a free buffer in some cache"))
            .collect();
        assert_eq!(pool.available(), 0);
        assert!(pool.try_acquire().is_none());
        drop(again);
        assert_eq!(pool.available(), count);
    }
}

#[test]
fn a_waiter_is_handed_a_buffer_released_on_another_thread() {
    for count in COUNTS {
        let pool = BufferPool::new(count, 8);
        let mut held: Vec<Buf> = (0..count).map(|_| pool.try_acquire().unwrap()).collect();
        let (waker, wakes) = counting_waker();
        let mut waiting = Box::pin(pool.acquire());
        assert!(poll_with(&mut waiting, &waker).is_pending());

        let one = held.pop().unwrap();
        release_on_another_thread(vec![one]);
        assert_eq!(wakes.count(), 1, "the release woke the waiter");
        assert_eq!(pool.available(), 0, "handed over, not cached");
        let Poll::Ready(got) = poll_with(&mut waiting, &waker) else {
            panic!("the waiter was not handed the released buffer");
        };

        // With nobody waiting, the rest go into the releasing thread's cache again.
        release_on_another_thread(held);
        assert_eq!(pool.available(), count - 1);
        drop(got);
        assert_eq!(pool.available(), count);
    }
}
