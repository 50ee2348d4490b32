//! Two writers reserving and committing in one shared buffer, racing the flusher's take.
//!
//! Two workers each reserve room in the writer's buffer (the first to find none opens it; a
//! buffer acquired by the other meanwhile goes back to the pool), write their message, commit
//! it and ask for a flush; the main thread takes a batch meanwhile, then everything that is
//! left once both are done.
//!
//! Asserts: each message is delivered exactly once and whole (a take that races a commit
//! never sees a reserved room before its commit, nor skips a committed one), the flusher
//! finishes once every handle is dropped, and every buffer is back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::{check, write_now};
use pinfold_pool::{BufferPool, Flusher, Writer, writer};

fn write(writer: Writer, message: &'static [u8]) {
    write_now(writer, message).flush();
}

fn take(flusher: &mut Flusher, sent: &mut Vec<u8>) {
    while let Some(batch) = flusher.try_next_batch() {
        for packet in batch.iter() {
            sent.extend_from_slice(packet);
        }
    }
}

#[test]
fn pool_writer_shared_buffer() {
    check("pool_writer_shared_buffer", || {
        let pool = BufferPool::new(2, 8);
        let (writer, mut flusher) = writer::channel(&pool);
        let first = writer.clone();
        let second = writer;
        let a = thread::spawn(move || write(first, b"aaa"));
        let b = thread::spawn(move || write(second, b"bb"));

        let mut sent = Vec::new();
        take(&mut flusher, &mut sent);
        a.join().unwrap();
        b.join().unwrap();
        take(&mut flusher, &mut sent);

        assert!(flusher.is_finished());
        assert!(
            sent == b"aaabb" || sent == b"bbaaa",
            "each message once and whole: {sent:?}"
        );
        drop(flusher);
        assert_eq!(pool.available(), 2);
    });
}
