//! A batch refill racing a batch return.
//!
//! A pool of 16 buffers, which under loom moves them between a cache and the shared list two
//! at a time, and lets a cache hold four before a release returns a batch. The main thread
//! (cache 0, its first user) takes every buffer, then releases five: four stay in its cache
//! and the fifth release returns a batch of two to the shared list, leaving three. One
//! worker acquires once: with a cache of its own (the other of the two) it is empty, and the
//! acquire takes the shared list's batch, keeps one buffer and pushes the other into its
//! cache. The other worker releases two buffers: into cache 0, where the second makes five
//! and returns a batch to the shared list while the refill takes one from it. (Which worker
//! gets which cache depends on which first touches the pool; loom runs both orders.)
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
