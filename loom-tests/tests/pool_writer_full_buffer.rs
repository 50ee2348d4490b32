//! The hand-over of a full buffer to a waiting flusher.
//!
//! One worker writes a message that fills most of a buffer, then one that does not fit in
//! what is left: the first buffer is sealed and handed over, and the second goes into a new
//! buffer. Another worker writes a short message. The main thread awaits batches until the
//! flusher is finished.
//!
//! Asserts: no wake is lost (the main thread's await returns every batch, and `None` once
//! both handles are dropped), each message arrives once and whole, the first worker's two in
//! the order it committed them, and both buffers are back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::{check, drain, write};
use pinfold_pool::{BufferPool, writer};

#[test]
fn pool_writer_full_buffer() {
    check("pool_writer_full_buffer", || {
        let pool = BufferPool::new(3, 4);
        let (mut first, mut flusher) = writer::channel(&pool);
        let mut second = first.clone();
        let a = thread::spawn(move || {
            write(&mut first, b"abc");
            write(&mut first, b"de");
        });
        let b = thread::spawn(move || write(&mut second, b"x"));

        let sent = drain(&mut flusher);
        a.join().unwrap();
        b.join().unwrap();

        let without_x: Vec<u8> = sent.iter().copied().filter(|&b| b != b'x').collect();
        assert_eq!(without_x, b"abcde", "in commit order, once each: {sent:?}");
        assert_eq!(sent.len(), 6, "`x` once: {sent:?}");
        let at = sent.iter().position(|&b| b == b'x').unwrap();
        assert!(
            at == 0 || at == 3 || at == 5,
            "`x` inside a message: {sent:?}"
        );
        drop(flusher);
        assert_eq!(pool.available(), 3);
    });
}
