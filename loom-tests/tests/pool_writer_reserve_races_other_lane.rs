//! A lock-free reservation racing the reopening of the slot it read by another lane.
//!
//! A reservation reads its lane's current slot, then that slot's word, then CASes the word.
//! Here (lanes stand for 2 buffers under loom) a pool of 4 buffers of 8 bytes gives 2 lanes.
//! The main thread's handle (lane 0) holds `aa` open in the lane's buffer while a worker's
//! handle (lane 0 too) writes `x`, then `y`. Meanwhile the main thread asks for a flush (the
//! buffer is sealed, its reservation being open), commits `aa`, takes the buffer (its slot
//! goes free), and a handle of lane 1 reserves `bb`, which reopens that slot with the very
//! word it had while `aa` was open. A reservation of `x` that read the word before must then
//! fail its CAS, not land in lane 1's buffer, which `bb` keeps open (and so back from the
//! flusher) while the main thread asks for a flush again and takes what is ready, `y` among it.
//!
//! Only one worker: the race needs the main thread's steps in this order, and the reopening
//! by another lane, which no second worker could bring about without more preemptions.
//!
//! Asserts: each message is delivered once and whole, `x` before `y` (the worker's handle's
//! commit order), the flusher finishes, and every buffer is back in the pool at the end.
#![cfg(pinfold_loom)]

use loom::thread;
use loom_tests::{assert_delivered, check, drain, write};
use pinfold_pool::{BufferPool, Flusher, writer};

/// Everything the flusher has ready now.
fn take(flusher: &mut Flusher, sent: &mut Vec<u8>) {
    while let Some(batch) = flusher.try_next_batch() {
        for packet in batch.iter() {
            sent.extend_from_slice(packet);
        }
    }
}

#[test]
fn pool_writer_reserve_races_other_lane() {
    check("pool_writer_reserve_races_other_lane", || {
        let pool = BufferPool::new(4, 8);
        let (mut main, mut flusher) = writer::channel(&pool);
        let mut other_lane = main.clone();
        let mut worker = main.clone();
        let mut open = main.try_reserve(2).expect("a free buffer");
        open.copy_from_slice(b"aa");
        let writing = thread::spawn(move || {
            write(&mut worker, b"x");
            write(&mut worker, b"y");
        });

        let mut sent = Vec::new();
        flusher.flush_open();
        take(&mut flusher, &mut sent); // seals the buffer of `aa`
        open.commit();
        take(&mut flusher, &mut sent); // and takes it, unless `x` is open in it
        let mut late = other_lane.try_reserve(2).expect("a free buffer");
        late.copy_from_slice(b"bb");
        writing.join().unwrap();
        flusher.flush_open();
        take(&mut flusher, &mut sent);
        late.commit();
        drop((main, other_lane));
        sent.extend(drain(&mut flusher));

        assert_delivered(&sent, &[b"aa", b"bb", b"x", b"y"], &[(b'x', b'y')]);
        drop(flusher);
        assert_eq!(pool.available(), 4);
    });
}
