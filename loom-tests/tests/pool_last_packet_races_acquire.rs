//! The last packet's drop racing an acquire.
//!
//! The pool's one buffer is frozen into a packet and cloned; the two packets go to two
//! workers, which read them and drop them; the main thread awaits `acquire()` meanwhile. Only
//! the drop that takes the packet count to zero gives the buffer back, after both reads.
//!
//! Asserts: the main thread always gets the buffer (no lost hand-off, no double release: a
//! second release of the same buffer would make the free list hold it twice, and the final
//! count would be 2), both workers read what was written, and the pool holds its one buffer at
//! the end.
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_last_packet_races_acquire() {
    check("pool_last_packet_races_acquire", || {
        let pool = BufferPool::new(1, 4);
        let mut buf = pool.try_acquire().expect("the pool's one buffer");
        buf.write_all(b"data").unwrap();
        let first = buf.freeze();
        let second = first.slice(1..);

        let readers: Vec<_> = [first, second]
            .into_iter()
            .map(|packet| {
                thread::spawn(move || {
                    assert!(b"data".ends_with(&packet[..]));
                    drop(packet);
                })
            })
            .collect();
        let buf = block_on(pool.acquire());
        assert!(buf.is_empty());
        assert_eq!(pool.available(), 0);
        for reader in readers {
            reader.join().unwrap();
        }
        drop(buf);
        assert_eq!(pool.available(), 1, "released exactly once");
    });
}
