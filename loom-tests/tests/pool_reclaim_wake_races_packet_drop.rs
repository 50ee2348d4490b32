//! A `Buf` waiting for the packets split off it (`poll_reclaim`) racing the drops of those
//! packets, and a `Buf` that stops waiting racing the last drop.
//!
//! The pool's one buffer is written, and a packet is split off it and sliced; the packet and
//! its slice are read and dropped on two workers. In the first model the main thread waits
//! for them with `poll_reclaim` under loom's `block_on`; in the second it polls once, then
//! splits again, or drops the `Buf`, while they drop.
//!
//! Asserts: the wait always ends (a lost wake is a deadlock loom reports), the reclaimed
//! `Buf` holds the whole buffer with its bytes at the start, a `Buf` that stops waiting while
//! the last drop takes its waker neither frees nor keeps the buffer wrongly (it goes back
//! exactly once, whichever drops last), and no waker leaks (loom's leak check).
#![cfg(pinfold_loom)]

use std::future::poll_fn;
use std::task::{Context, Poll, Waker};

use loom::future::block_on;
use loom::thread::{self, JoinHandle};
use loom_tests::check;
use pinfold_pool::{Buf, BufferPool};

/// The pool's buffer with `abcdef` written, `abcd` split off, sliced, and both read and
/// dropped on two workers.
fn split_and_drop(pool: &BufferPool) -> (Buf, [JoinHandle<()>; 2]) {
    let mut buf = pool.try_acquire().expect("the pool's one buffer");
    assert!(buf.try_extend_from_slice(b"abcdef"));
    let packet = buf.split_to(4);
    let slice = packet.slice(1..3);
    let first = thread::spawn(move || assert_eq!(&packet[..], b"abcd"));
    let second = thread::spawn(move || assert_eq!(&slice[..], b"bc"));
    (buf, [first, second])
}

#[test]
fn pool_reclaim_wake_races_packet_drop() {
    check("pool_reclaim_wake_races_packet_drop", || {
        let pool = BufferPool::new(1, 8);
        let (mut buf, workers) = split_and_drop(&pool);
        block_on(poll_fn(|cx| buf.poll_reclaim(cx)));
        assert_eq!((&buf[..], buf.capacity()), (&b"ef"[..], 8));
        for worker in workers {
            worker.join().unwrap();
        }
        drop(buf);
        assert_eq!(pool.available(), 1, "released exactly once");
    });
}

#[test]
fn pool_reclaim_unwatch_races_packet_drop() {
    for drop_buf in [false, true] {
        check("pool_reclaim_unwatch_races_packet_drop", move || {
            let pool = BufferPool::new(1, 8);
            let (mut buf, workers) = split_and_drop(&pool);
            let waker = Waker::noop();
            let waited = buf.poll_reclaim(&mut Context::from_waker(waker));
            if drop_buf {
                drop(buf);
                for worker in workers {
                    worker.join().unwrap();
                }
            } else {
                let again = buf.split_to(1);
                for worker in workers {
                    worker.join().unwrap();
                }
                assert_eq!(&again[..], b"e");
                if waited == Poll::Pending {
                    assert!(!buf.try_reclaim(), "the new packet holds its bytes");
                }
                drop(again);
                assert!(buf.try_reclaim());
                assert_eq!((&buf[..], buf.capacity()), (&b"f"[..], 8));
                drop(buf);
            }
            assert_eq!(pool.available(), 1, "released exactly once");
        });
    }
}
