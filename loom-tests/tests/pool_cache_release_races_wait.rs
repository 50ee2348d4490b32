//! A release into a thread's cache racing an acquire that has to wait.
//!
//! A pool of two buffers: the main thread holds one for the whole model, one worker holds
//! the other and drops it, the other worker awaits `acquire()`. Under loom the pool has two
//! caches, handed to threads in the order of their first use, so the releasing worker's
//! cache is sometimes the waiter's and sometimes another. The waiter either finds the buffer
//! (in its cache, in the other, or in the shared list) or flags every list and queues, and
//! then the release finds the flag on its push into the cache and hands the buffer over.
//!
//! Asserts: the waiter always gets the buffer (a buffer left in a cache while the waiter
//! sleeps is a deadlock, which loom reports) and finds it empty; afterwards both buffers are
//! free, no list is left flagged (two `try_acquire`s succeed), and loom's leak check finds
//! the pool's memory freed.
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_cache_release_races_wait() {
    check("pool_cache_release_races_wait", || {
        let pool = BufferPool::new(2, 4);
        let kept = pool.try_acquire().expect("the first buffer");
        let mut released = pool.try_acquire().expect("the second buffer");
        released.write_all(b"old").unwrap();

        let releaser = thread::spawn(move || drop(released));
        let waiter = {
            let pool = pool.clone();
            thread::spawn(move || {
                let mut buf = block_on(pool.acquire());
                assert!(buf.is_empty(), "a new owner starts with nothing written");
                buf.write_all(b"new").unwrap();
            })
        };
        releaser.join().unwrap();
        waiter.join().unwrap();
        drop(kept);

        assert_eq!(pool.available(), 2, "both buffers are back");
        let again = (pool.try_acquire(), pool.try_acquire());
        assert!(
            again.0.is_some() && again.1.is_some(),
            "no list is left flagged"
        );
    });
}
