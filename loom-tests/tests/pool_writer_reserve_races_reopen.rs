//! Lock-free reservations racing the seal, flush and reopening of the slot they read.
//!
//! A reservation reads which slot is current, then CASes that slot's word, without the lock.
//! Here a pool of 2 buffers of 4 bytes: the main thread writes `abc` and `fg` (the first
//! buffer is sealed, the second current), then two workers write with clones of the writer,
//! one `de` and `xyz`, the other `q`, while the main thread drains the flusher. `xyz` does not
//! fit: it seals the second buffer and waits in the pool until the flusher gives the first
//! back, which reopens a slot; `q` may land in the second buffer, wait too, or find the
//! reopened slot. A reservation that read a slot before it was sealed CASes a sealed word
//! (and fails) or, if the slot was reopened meanwhile, the new word (and writes in the new
//! buffer).
//!
//! Asserts: each message is delivered once and whole, `de` before `xyz` and `abc` before
//! `fg`, the flusher finishes, and both buffers are back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::{assert_delivered, check, drain, write};
use pinfold_pool::{BufferPool, writer};

#[test]
fn pool_writer_reserve_races_reopen() {
    check("pool_writer_reserve_races_reopen", || {
        let pool = BufferPool::new(2, 4);
        let (mut main, mut flusher) = writer::channel(&pool);
        write(&mut main, b"abc");
        write(&mut main, b"fg");
        let mut first = main.clone();
        let mut second = main.clone();
        drop(main);
        let one = thread::spawn(move || {
            write(&mut first, b"de");
            write(&mut first, b"xyz");
        });
        let two = thread::spawn(move || write(&mut second, b"q"));

        let sent = drain(&mut flusher);
        one.join().unwrap();
        two.join().unwrap();

        assert_delivered(
            &sent,
            &[b"abc", b"fg", b"de", b"xyz", b"q"],
            &[(b'a', b'f'), (b'd', b'x')],
        );
        drop(flusher);
        assert_eq!(pool.available(), 2);
    });
}
