//! A `Buf`'s drop racing the drop of the last packet split off it.
//!
//! The pool's one buffer is written, and two packets are split off it; the `Buf` writes on
//! after them and is dropped on one worker while the packets are read and dropped on another;
//! the main thread awaits `acquire()` meanwhile. Only the drop that takes the packet count to
//! zero gives the buffer back.
//!
//! Asserts: the main thread always gets the buffer, empty and whole (no lost release, and no
//! double one: a second release would make the free list hold the buffer twice, and the final
//! count would be 2), the packets read the bytes written before the split, and the pool holds
//! its one buffer at the end.
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::future::block_on;
use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_split_drop() {
    check("pool_split_drop", || {
        let pool = BufferPool::new(1, 4);
        let mut buf = pool.try_acquire().expect("the pool's one buffer");
        buf.write_all(b"abc").unwrap();
        let first = buf.split_to(1);
        let second = buf.split_to(1);

        let writer = thread::spawn(move || {
            buf.write_all(b"d").unwrap();
            assert_eq!(&buf[..], b"cd");
            drop(buf);
        });
        let reader = thread::spawn(move || {
            assert_eq!(&first[..], b"a");
            drop(first);
            assert_eq!(&second[..], b"b");
            drop(second);
        });
        let buf = block_on(pool.acquire());
        assert!(buf.is_empty());
        assert_eq!(buf.capacity(), 4);
        assert_eq!(pool.available(), 0);
        writer.join().unwrap();
        reader.join().unwrap();
        drop(buf);
        assert_eq!(pool.available(), 1, "released exactly once");
    });
}
