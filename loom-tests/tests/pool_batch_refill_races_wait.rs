//! A batch refill racing an acquire that has to wait.
//!
//! A pool of 16 buffers, which under loom moves them between a stock and the shared list two
//! at a time. The main thread holds 14 and leaves the other two in the shared list. One worker
//! takes a buffer: if it owns a stock (the second of loom's two), the stock is empty, so it
//! takes the shared list's batch of two, keeps one and puts the other in its stock; if it owns
//! none, it takes one. The other worker awaits `acquire()`: it finds the second buffer in a
//! list, or it finds every list empty while the batch is on its way, sets the flags, sweeps
//! the stocks and queues; then the refill finds the flag on entering its stock, and hands the
//! buffer to the waiter and wakes it.
//!
//! Asserts: the waiter always gets a buffer (a lost hand-off is a deadlock, which loom
//! reports); afterwards all 16 are free and no list is left flagged (16 `try_acquire`s
//! succeed).
#![cfg(pinfold_loom)]

use loom::future::block_on;
use loom::thread;
use loom_tests::check_with_branches;
use pinfold_pool::{Buf, BufferPool};

const COUNT: usize = 16;

#[test]
fn pool_batch_refill_races_wait() {
    // Taking and giving back 16 buffers takes more than loom's 1,000 steps.
    check_with_branches("pool_batch_refill_races_wait", 20_000, || {
        let pool = BufferPool::new(COUNT, 1);
        let mut held: Vec<Buf> = (0..COUNT).map(|_| pool.try_acquire().unwrap()).collect();
        // Five back: the fifth release returns a batch of two to the shared list. Then three
        // again, from the main thread's stock, leaving the two in the shared list.
        held.truncate(COUNT - 5);
        held.extend((0..3).map(|_| pool.try_acquire().unwrap()));
        assert_eq!(pool.available(), 2);

        let refiller = {
            let pool = pool.clone();
            thread::spawn(move || pool.try_acquire())
        };
        let waiter = {
            let pool = pool.clone();
            thread::spawn(move || drop(block_on(pool.acquire())))
        };
        // The refill may come after the waiter's acquire took the last free buffer.
        let refilled = refiller.join().unwrap();
        waiter.join().unwrap();
        drop((refilled, held));

        assert_eq!(pool.available(), COUNT, "every buffer is back");
        let all: Vec<Buf> = (0..COUNT).filter_map(|_| pool.try_acquire()).collect();
        assert_eq!(all.len(), COUNT, "no list is left flagged");
    });
}
