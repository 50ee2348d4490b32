//! Every stock of the process holds buffers of the pool, and a thread that owns none (there are
//! 32 stocks, and more threads) takes them all: `try_acquire` sweeps the stocks once the shared
//! list is empty, however many of them hold buffers. Alone in its test binary, so that no other
//! test's threads own stocks meanwhile.
// It spawns 33 threads; Miri runs the stocks' tests in `tests/stocks.rs`.
#![cfg(all(feature = "std", not(miri)))]

use std::sync::{Arc, Barrier, mpsc};
use std::thread;

use pinfold_pool::BufferPool;

/// How many stocks the process has: one thread more owns none.
const STOCKS: usize = 32;
/// Enough buffers that no owner's first acquire finds the shared list empty.
const BUFFERS: usize = 512;

#[test]
fn a_thread_without_a_stock_takes_the_buffers_of_every_stock() {
    let pool = BufferPool::new(BUFFERS, 8);
    let done = Arc::new(Barrier::new(STOCKS + 1));
    let (stocked_tx, stocked_rx) = mpsc::channel();
    let owners: Vec<_> = (0..STOCKS)
        .map(|_| {
            let (pool, done, stocked_tx) = (pool.clone(), Arc::clone(&done), stocked_tx.clone());
            thread::spawn(move || {
                // Released on this thread, the buffer waits in its stock.
                drop(pool.try_acquire().expect("a free buffer"));
                stocked_tx.send(()).unwrap();
                // Lives on, owning its stock, until the test is done.
                done.wait();
            })
        })
        .collect();
    for _ in 0..STOCKS {
        stocked_rx.recv().unwrap();
    }
    // This thread's first call finds every stock owned: it takes from the shared list, then
    // from the stocks.
    let taken: Vec<_> = std::iter::from_fn(|| pool.try_acquire()).collect();
    assert_eq!(
        taken.len(),
        BUFFERS,
        "try_acquire found every buffer, those in the stocks too"
    );
    drop(taken);
    done.wait();
    for owner in owners {
        owner.join().unwrap();
    }
    assert_eq!(pool.available(), BUFFERS);
}
