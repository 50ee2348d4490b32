//! A release racing an acquire on a pool of one buffer.
//!
//! The main thread holds the only buffer and writes to it. One worker releases it (drops the
//! `Buf`); the other awaits `acquire()`, so it either pops the buffer from the free list (the
//! release came first) or queues, sets the waiters flag, and is handed the buffer by the
//! release (which then finds the flag on its CAS and takes the lock).
//!
//! Asserts: the waiting worker always gets the buffer (a lost hand-off is a deadlock, which
//! loom reports), and finds it empty; afterwards the buffer is back in the free list, the
//! waiters flag is clear (a later `try_acquire` succeeds), and loom's leak check finds the
//! pool's memory freed.
#![cfg(pinfold_loom)]

use loom_tests::{check, spawn_releaser, spawn_waiter};
use pinfold_pool::BufferPool;

#[test]
fn pool_release_races_acquire() {
    check("pool_release_races_acquire", || {
        let pool = BufferPool::new(1, 4);
        let held = pool.try_acquire().expect("the pool's one buffer");

        let releaser = spawn_releaser(held);
        let waiter = spawn_waiter(&pool);
        releaser.join().unwrap();
        waiter.join().unwrap();

        assert_eq!(pool.available(), 1, "the buffer is back");
        let again = pool.try_acquire();
        assert!(again.is_some(), "no waiter is left flagged");
    });
}
