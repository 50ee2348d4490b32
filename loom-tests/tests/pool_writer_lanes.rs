//! Writer handles in two lanes, racing the flusher.
//!
//! A writer over a pool of enough buffers has several lanes, each with a buffer being filled,
//! and a handle writes in its own (clones take the lanes in turn), so that threads writing
//! side by side do not share one word. Here (lanes stand for 2 buffers under loom) a pool of
//! 4 buffers of 4 bytes gives 2 lanes: the main thread's handle (lane 0) writes `ab` and `cd`,
//! a worker's clone (lane 1) writes `xyz` and `uvw` (a buffer each), another worker's clone
//! (lane 0 again) writes `q`, which may share the main handle's first buffer and still be
//! open when `cd` seals it; the main thread asks for a flush and drains the flusher while the
//! workers may still write.
//!
//! Asserts: each message is delivered once and whole, each handle's messages in the order it
//! committed them (a buffer of one lane that cannot be flushed yet holds back only that
//! lane's later buffers), the flusher finishes once both handles are dropped, and every
//! buffer is back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::{assert_delivered, check, drain, write};
use pinfold_pool::{BufferPool, writer};

#[test]
fn pool_writer_lanes() {
    check("pool_writer_lanes", || {
        let pool = BufferPool::new(4, 4);
        let (mut main, mut flusher) = writer::channel(&pool);
        let mut other = main.clone();
        let mut third = main.clone();
        let worker = thread::spawn(move || {
            write(&mut other, b"xyz");
            write(&mut other, b"uvw");
        });
        let sharer = thread::spawn(move || write(&mut third, b"q"));
        write(&mut main, b"ab");
        write(&mut main, b"cd");
        main.flush();
        drop(main);

        let sent = drain(&mut flusher);
        worker.join().unwrap();
        sharer.join().unwrap();

        assert_delivered(
            &sent,
            &[b"ab", b"cd", b"xyz", b"uvw", b"q"],
            &[(b'a', b'c'), (b'x', b'u')],
        );
        drop(flusher);
        assert_eq!(pool.available(), 4);
    });
}
