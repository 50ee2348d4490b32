//! Allocations of the batching writer: `channel` allocates its bookkeeping, and nothing is
//! allocated after it, by reserving, committing, abandoning, keeping packets, waiting for a
//! buffer, flushing, or dropping handles.
//!
//! The counting allocator counts per thread, and every test here runs on one thread.

mod support;

use std::pin::pin;
use std::task::Poll;

use pinfold_pool::{BufferPool, writer};
use pinfold_testkit::alloc::{CountingAlloc, measure};
use support::poll_once;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

#[test]
fn writing_and_flushing_allocate_nothing_after_the_channel() {
    let (_, seen) = measure(|| Vec::<u8>::with_capacity(1));
    assert_eq!(seen, 1, "the counting allocator does not count");
    let rounds: u32 = if cfg!(miri) { 300 } else { 100_000 };
    let pool = BufferPool::new(2, 64);
    let (writer, mut flusher) = writer::channel(&pool);
    let ((bytes, kept), made) = measure(|| {
        let mut first = writer.clone();
        let mut second = writer;
        let mut bytes = 0;
        let mut kept = 0;
        for round in 0..rounds {
            let message = round.to_le_bytes();
            // Waits (pending) when both buffers are full, until the flusher frees one.
            let mut room = loop {
                match poll_once(&mut pin!(first.reserve(4))) {
                    Poll::Ready(room) => break room.unwrap(),
                    Poll::Pending => {
                        while let Some(batch) = flusher.try_next_batch() {
                            bytes += batch.bytes();
                        }
                    }
                }
            };
            room.copy_from_slice(&message);
            match round % 4 {
                0 => kept += room.commit_packet().len(),
                1 => drop(room),
                _ => room.commit(),
            }
            if let Ok(mut other) = second.try_reserve(3) {
                other.copy_from_slice(&message[..3]);
                other.commit();
            }
            if round % 64 == 0 {
                first.flush();
                while let Some(batch) = flusher.try_next_batch() {
                    bytes += batch.bytes();
                }
            }
        }
        drop((first, second));
        while let Some(batch) = flusher.try_next_batch() {
            bytes += batch.bytes();
        }
        (bytes, kept)
    });
    assert_eq!(
        made, 0,
        "{rounds} rounds of writing made {made} allocations"
    );
    assert!(bytes > 0 && kept > 0);
    assert!(flusher.is_finished());
    assert_eq!(pool.available(), pool.capacity());
}
