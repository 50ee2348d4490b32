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

use loom_tests::{check, spawn_releaser, spawn_waiter};
use pinfold_pool::BufferPool;

#[test]
fn pool_stock_release_races_wait() {
    check("pool_stock_release_races_wait", || {
        let pool = BufferPool::new(2, 4);
        let kept = pool.try_acquire().expect("the first buffer");
        let released = pool.try_acquire().expect("the second buffer");

        let releaser = spawn_releaser(released);
        let waiter = spawn_waiter(&pool);
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
