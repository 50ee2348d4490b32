//! A thread that owns a stock goes on using it, or idles, while a task on another thread waits
//! for the buffer it released.
//!
//! Under loom the pool has two stocks, handed out in the order of first use: the main thread
//! takes the first, and whichever worker touches the pool first owns the second. The owner
//! releases a buffer into its stock; then, in the first model, it acquires and releases once
//! more (so it may be inside an operation, `busy`, when the waiter sweeps: the sweep waits it
//! out, or the owner sees the flag after its light barrier and goes to the lock), and in the
//! second it idles on a `Notify` until the waiter has its buffer. The waiter awaits
//! `acquire()`: it finds the buffer in a list, or sets the flags, passes the heavy barrier,
//! sweeps the stocks and takes it from there, or queues and is handed it. The barriers are
//! `fence(SeqCst)` under loom, on both sides, as the protocol needs of `membarrier` and the
//! compiler fence it stands for on Linux.
//!
//! Asserts: the waiter is always served (a buffer stranded in an idle owner's stock is a
//! deadlock, which loom reports), the owner's second acquire gets a buffer or none without
//! harm, every buffer is free at the end, no flag is left set, and loom's leak check finds the
//! pool freed.
#![cfg(pinfold_loom)]

use std::sync::Arc;

use loom::future::block_on;
use loom::sync::Notify;
use loom::thread;
use loom_tests::{check, spawn_waiter};
use pinfold_pool::BufferPool;

#[test]
fn pool_stock_owner_works_while_a_task_waits() {
    check("pool_stock_owner_works_while_a_task_waits", || {
        let pool = BufferPool::new(2, 4);
        let kept = pool.try_acquire().expect("the first buffer");
        let released = pool.try_acquire().expect("the second buffer");

        let owner = {
            let pool = pool.clone();
            thread::spawn(move || {
                drop(released);
                // Takes it back, or finds it gone to the waiter, or finds the waiter queued.
                drop(pool.try_acquire());
            })
        };
        let waiter = spawn_waiter(&pool);
        owner.join().unwrap();
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

#[test]
fn pool_stock_owner_idles_while_a_task_waits() {
    check("pool_stock_owner_idles_while_a_task_waits", || {
        let pool = BufferPool::new(1, 4);
        let released = pool.try_acquire().expect("the buffer");
        let served = Arc::new(Notify::new());

        let owner = {
            let served = served.clone();
            thread::spawn(move || {
                drop(released);
                served.wait();
            })
        };
        let waiter = {
            let pool = pool.clone();
            thread::spawn(move || {
                let buf = block_on(pool.acquire());
                served.notify();
                drop(buf);
            })
        };
        owner.join().unwrap();
        waiter.join().unwrap();

        assert_eq!(pool.available(), 1, "the buffer is back");
        assert!(pool.try_acquire().is_some(), "no flag is left set");
    });
}
