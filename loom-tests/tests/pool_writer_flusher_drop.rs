//! A dropped flusher racing a writer's reservation.
//!
//! One worker reserves room in the pool's one buffer (unless the flusher is gone, or the main
//! thread has the buffer), writes and commits; another drops the flusher; the main thread
//! awaits `acquire()` on the pool.
//!
//! Asserts: the buffer goes back exactly once, whichever ends last (the flusher's drop, or
//! the reservation's end after it): the main thread always gets it, and the pool holds its
//! one buffer at the end.
#![cfg(pinfold_loom)]

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::{BufferPool, ReserveError, writer};

#[test]
fn pool_writer_flusher_drop() {
    check("pool_writer_flusher_drop", || {
        let pool = BufferPool::new(1, 8);
        let (mut writer, flusher) = writer::channel(&pool);
        let writing = thread::spawn(move || {
            match writer.try_reserve(2) {
                Ok(mut room) => {
                    room.copy_from_slice(b"hi");
                    room.commit();
                }
                // The flusher is gone, or the main thread holds the buffer.
                Err(error) => assert!(
                    matches!(error, ReserveError::Closed | ReserveError::WouldWait),
                    "{error:?}"
                ),
            }
            // Kept alive until the main thread has the buffer: the buffer must not wait for
            // the last handle's drop.
            writer
        });
        let dropping = thread::spawn(move || drop(flusher));
        let buf = block_on(pool.acquire());
        let writer = writing.join().unwrap();
        dropping.join().unwrap();
        drop(writer);
        assert_eq!(pool.available(), 0);
        drop(buf);
        assert_eq!(pool.available(), 1, "given back exactly once");
    });
}
