//! A buffer filled to its last byte, handed to the flusher as its reservations end.
//!
//! Two workers each write a message of half a buffer, with handles of one lane: the second
//! to reserve fills the buffer the first opened, and seals it as it reserves (in one CAS and
//! then under the lock, or under the lock if it found the slot being opened), maybe while
//! the first's reservation is open. The main thread awaits the flusher's first batch while
//! both handles live.
//!
//! Asserts: the full buffer reaches the flusher with no later message, flush or drop (the
//! last commit in it, or the seal if it came last, wakes the flusher: no lost wake), holding
//! both messages whole; nothing else comes once the handles are dropped; both buffers are
//! back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::future::block_on;
use loom::thread;
use loom_tests::{check, write_now};
use pinfold_pool::{BufferPool, writer};

#[test]
fn pool_writer_filled_buffer() {
    check("pool_writer_filled_buffer", || {
        let pool = BufferPool::new(2, 4);
        let (writer, mut flusher) = writer::channel(&pool);
        let first = writer.clone();
        let second = writer;
        let a = thread::spawn(move || write_now(first, b"ab"));
        let b = thread::spawn(move || write_now(second, b"cd"));

        let batch: Vec<u8> = {
            let batch = block_on(flusher.next_batch()).expect("the handles live");
            batch.iter().flat_map(|packet| packet.to_vec()).collect()
        };
        assert!(batch == b"abcd" || batch == b"cdab", "{batch:?}");
        let handles = (a.join().unwrap(), b.join().unwrap());
        drop(handles);
        assert!(block_on(flusher.next_batch()).is_none(), "nothing else");
        drop(flusher);
        assert_eq!(pool.available(), 2);
    });
}
