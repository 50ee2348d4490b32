//! A batch refill racing releases to the shared list.
//!
//! A pool of 16 buffers, which under loom moves them between a stock and the shared list two
//! at a time, and lets a stock hold four before a release returns a batch. Under loom a pool
//! has two stocks, handed out in the order of first use: the main thread owns the first, and
//! whichever worker touches the pool first owns the second; the other owns none. The main
//! thread takes every buffer, then releases five: four stay in its stock and the fifth
//! release returns a batch of two to the shared list, leaving three. One worker acquires
//! once: owning the second stock, it finds it empty and takes the shared list's batch, keeps
//! one buffer and puts the other in its stock; owning none, it takes one buffer from the
//! shared list. The other worker releases two buffers: into its stock, or, owning none, to the
//! shared list, one CAS each, while the refill takes from it. (Which worker owns the second
//! stock depends on which first touches the pool; loom runs both orders.)
//!
//! Asserts: afterwards every buffer is free exactly once: `available` counts 16, 16
//! `try_acquire`s succeed and a 17th fails, and the 16 buffers are distinct (each holds the
//! byte written into it).
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::thread;
use loom_tests::check_with_branches;
use pinfold_pool::{Buf, BufferPool};

const COUNT: usize = 16;

#[test]
fn pool_batch_refill_races_return() {
    // Taking and giving back 16 buffers takes more than loom's 1,000 steps.
    check_with_branches("pool_batch_refill_races_return", 20_000, || {
        let pool = BufferPool::new(COUNT, 1);
        let mut held: Vec<Buf> = (0..COUNT).map(|_| pool.try_acquire().unwrap()).collect();
        held.truncate(COUNT - 5);
        assert_eq!(pool.available(), 5);
        let released: Vec<Buf> = held.drain(..2).collect();

        let refiller = {
            let pool = pool.clone();
            thread::spawn(move || pool.try_acquire().expect("five buffers are free"))
        };
        let returner = thread::spawn(move || drop(released));
        let refilled = refiller.join().unwrap();
        returner.join().unwrap();
        drop((refilled, held));

        assert_eq!(pool.available(), COUNT, "every buffer is free once");
        let mut all: Vec<Buf> = (0..COUNT)
            .map(|_| pool.try_acquire().expect("a free buffer"))
            .collect();
        assert!(pool.try_acquire().is_none(), "no buffer is free twice");
        for (byte, buf) in (0u8..).zip(&mut all) {
            buf.write_all(&[byte]).unwrap();
        }
        for (byte, buf) in (0u8..).zip(&all) {
            assert_eq!(buf[..], [byte], "two of the buffers are one");
        }
    });
}
