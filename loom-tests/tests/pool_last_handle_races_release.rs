//! The last handle's drop racing releases on another thread.
//!
//! A pool's shared state lives while a handle, a `Buf` or a packet of it does: the buffers
//! out of the shared list (held, or in a thread's stock) each hold a count, and the last
//! handle's drop sets `CLOSED`, passes the heavy barrier, sweeps the stocks (waiting out an
//! owner inside an operation) and gives up the counts of the buffers in them; an owner that
//! then finds the flag gives up its buffer's count instead. Here a worker (the owner of the
//! second stock) drops three buffers (under loom a batch is one buffer, so its stock fills at
//! two and the third release moves a batch to the shared list) while the main thread drops the
//! last handle, and, in the second model, the last packet of a buffer races the handle's
//! drop.
//!
//! Asserts: the state is freed exactly once, whatever the order (loom's leak check finds the
//! block freed; a second free or a use after it is a crash of the model), and a packet's
//! bytes are intact until its last clone is dropped.
#![cfg(pinfold_loom)]

use std::io::Write;

use loom::thread;
use loom_tests::check;
use pinfold_pool::BufferPool;

#[test]
fn pool_last_handle_races_releases_into_a_stock() {
    check("pool_last_handle_races_releases_into_a_stock", || {
        let pool = BufferPool::new(4, 4);
        let bufs: Vec<_> = (0..3)
            .map(|_| pool.try_acquire().expect("a free buffer"))
            .collect();
        let worker = thread::spawn(move || drop(bufs));
        drop(pool);
        worker.join().unwrap();
    });
}

#[test]
fn pool_last_handle_races_the_last_packet() {
    check("pool_last_handle_races_the_last_packet", || {
        let pool = BufferPool::new(2, 4);
        let mut buf = pool.try_acquire().expect("a free buffer");
        buf.write_all(b"pkt").unwrap();
        let packet = buf.freeze();
        let copy = packet.clone();
        let worker = thread::spawn(move || {
            assert_eq!(&copy[..], b"pkt");
            drop(copy);
        });
        drop(pool);
        assert_eq!(
            &packet[..],
            b"pkt",
            "the handle's drop left the bytes alone"
        );
        drop(packet);
        worker.join().unwrap();
    });
}
