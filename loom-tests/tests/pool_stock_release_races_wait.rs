//! A release into a thread's stock racing an acquire that has to wait.
//!
//! A pool of two buffers: the main thread holds one for the whole model, one worker holds
//! the other and drops it, the other worker awaits `acquire()`. Under loom the pool has two
//! stocks, handed to threads in the order of their first use (the main thread's first), so
//! one worker owns the other stock and the other owns none: the releaser puts the buffer in
//! its stock, or, owning none, in the shared list. The waiter either finds it there, or sets
//! the flags, passes the heavy barrier and sweeps the stocks (waiting out an owner inside an
//! operation), and finds it there, or queues; then the release finds the flag after its
//! light barrier and hands the buffer over. A missing barrier on either side leaves the
//! buffer in the stock while the waiter sleeps.
//!
//! Asserts: the waiter always gets the buffer (a buffer left in a stock while the waiter
//! sleeps is a deadlock, which loom reports) and finds it empty; afterwards both buffers are
//! free, no flag is left set (two `try_acquire`s succeed), and loom's leak check finds the
//! pool's memory freed.
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_stock_release_races_wait() {
    check("pool_stock_release_races_wait", || {
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
            "no flag is left set"
        );
    });
}
