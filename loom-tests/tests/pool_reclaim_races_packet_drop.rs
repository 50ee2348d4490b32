//! A `Buf`'s `try_reclaim` racing the drop of the last packet split off it.
//!
//! The pool's one buffer is written, and a packet is split off it; the packet is read and
//! dropped on a worker while the `Buf` tries to take its bytes back on the main thread.
//!
//! Asserts: a reclaim that succeeds comes after the packet's drop (the packet read its bytes
//! whole, before they were overwritten), one that fails succeeds once the worker is joined,
//! the reclaimed `Buf` holds the whole buffer with its bytes at the start, and its drop gives
//! the buffer back exactly once. Loom does not model the buffer's bytes, so it cannot see a
//! reclaim whose load of the count does not acquire the packet's reads: the pool's test
//! `a_reclaim_that_succeeds_comes_after_the_reads_of_a_packet_dropped_on_another_thread`,
//! under Miri, does.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_reclaim_races_packet_drop() {
    check("pool_reclaim_races_packet_drop", || {
        let pool = BufferPool::new(1, 4);
        let mut buf = pool.try_acquire().expect("the pool's one buffer");
        assert!(buf.try_extend_from_slice(b"abc"));
        let packet = buf.split_to(2);

        let reader = thread::spawn(move || {
            assert_eq!(&packet[..], b"ab");
            drop(packet);
        });
        if !buf.try_reclaim() {
            reader.join().unwrap();
            assert!(buf.try_reclaim(), "no packet is left");
        } else {
            reader.join().unwrap();
        }
        assert!(buf.try_extend_from_slice(b"def"));
        assert_eq!(&buf[..], b"cdef");
        drop(buf);
        assert_eq!(pool.available(), 1, "released exactly once");
        assert!(pool.try_acquire().is_some());
    });
}
