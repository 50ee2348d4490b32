//! The pool models' release racing a waiter: a thread that drops a buffer written by its owner,
//! and a thread that awaits one and checks it starts empty.

use std::io::Write;

use loom::future::block_on;
use loom::thread::{self, JoinHandle};
use pinfold_pool::{Buf, BufferPool};

/// Writes `b"old"` into `buf`, then drops it on a thread of its own: the release.
pub fn spawn_releaser(mut buf: Buf) -> JoinHandle<()> {
    buf.write_all(b"old").unwrap();
    thread::spawn(move || drop(buf))
}

/// Awaits a buffer of `pool` on a thread of its own, and checks that its new owner finds
/// nothing written in it (the releaser's bytes are not handed over) and can write.
pub fn spawn_waiter(pool: &BufferPool) -> JoinHandle<()> {
    let pool = pool.clone();
    thread::spawn(move || {
        let mut buf = block_on(pool.acquire());
        assert!(buf.is_empty(), "a new owner starts with nothing written");
        buf.write_all(b"new").unwrap();
        assert_eq!(&buf[..], b"new");
    })
}
