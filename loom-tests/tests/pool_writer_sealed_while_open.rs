//! A buffer sealed by one writer while another's reservation in it is open.
//!
//! Two workers each write one message; the two do not fit in one buffer, so the second to
//! reserve seals the first's buffer, maybe while the first is still writing, and opens
//! another. The main thread awaits the flusher's first batch while both handles live.
//!
//! Asserts: the sealed buffer reaches the flusher without any other event (the last commit
//! in it, or the seal if it came last, wakes the flusher: no lost wake), holding the first
//! reserved message whole; the other comes once both handles are dropped; both buffers are
//! back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::future::block_on;
use loom::thread;
use loom_tests::{check, write_now};
use pinfold_pool::{BufferPool, writer};

#[test]
fn pool_writer_sealed_while_open() {
    check("pool_writer_sealed_while_open", || {
        let pool = BufferPool::new(2, 4);
        let (writer, mut flusher) = writer::channel(&pool);
        let first = writer.clone();
        let second = writer;
        let a = thread::spawn(move || write_now(first, b"aaa"));
        let b = thread::spawn(move || write_now(second, b"bb"));

        let batch: Vec<u8> = {
            let batch = block_on(flusher.next_batch()).expect("the handles live");
            batch.iter().flat_map(|packet| packet.to_vec()).collect()
        };
        let handles = (a.join().unwrap(), b.join().unwrap());
        drop(handles);
        let mut rest = Vec::new();
        while let Some(batch) = block_on(flusher.next_batch()) {
            for packet in batch.iter() {
                rest.extend_from_slice(packet);
            }
        }
        assert!(
            (batch == b"aaa" && rest == b"bb") || (batch == b"bb" && rest == b"aaa"),
            "{batch:?} then {rest:?}"
        );
        drop(flusher);
        assert_eq!(pool.available(), 2);
    });
}
