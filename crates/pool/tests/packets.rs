//! Packets: a frozen buffer is shared read-only by its packets, whose clones and slices share
//! its bytes; the buffer goes back to the pool when the last packet of it is dropped, on
//! whatever thread, and wakes a task waiting for one; a slice out of bounds panics with a
//! message and changes nothing.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::io::Write;
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use pinfold_pool::{BufferPool, Packet};
use support::{block_on, panic_message, poll_once};

/// A packet of `bytes`, written into a buffer of `pool`.
fn packet_of(pool: &BufferPool, bytes: &[u8]) -> Packet {
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(bytes).unwrap();
    buf.freeze()
}

#[test]
fn freezing_keeps_the_buffer_out_until_the_last_packet_is_dropped() {
    let pool = BufferPool::new(2, 16);
    let packet = packet_of(&pool, b"abc");
    assert_eq!(pool.available(), 1);
    let clone = packet.clone();
    let slice = packet.slice(1..);
    drop(packet);
    assert_eq!(pool.available(), 1);
    drop(clone);
    assert_eq!(pool.available(), 1);
    assert_eq!(&slice[..], b"bc");
    drop(slice);
    assert_eq!(pool.available(), 2);
}

#[test]
fn a_packet_holds_what_was_written_and_changed_in_place() {
    let pool = BufferPool::new(1, 16);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"hello").unwrap();
    buf[0] = b'j';
    buf.write_all(b"!").unwrap();
    let packet = buf.freeze();
    assert_eq!(&packet[..], b"jello!");
    assert_eq!(packet.len(), 6);
    assert!(!packet.is_empty());
}

#[test]
fn clones_and_slices_share_the_bytes() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"0123456789");
    let clone = packet.clone();
    assert_eq!(clone.as_ptr(), packet.as_ptr());
    assert_eq!(&clone[..], b"0123456789");
    let cases: [(Packet, &[u8], usize); 7] = [
        (packet.slice(..), b"0123456789", 0),
        (packet.slice(2..5), b"234", 2),
        (packet.slice(2..=5), b"2345", 2),
        (packet.slice(..3), b"012", 0),
        (packet.slice(7..), b"789", 7),
        (packet.slice((Excluded(1), Included(3))), b"23", 2),
        (packet.slice(10..10), b"", 10),
    ];
    for (slice, bytes, offset) in &cases {
        assert_eq!(&slice[..], *bytes);
        assert_eq!(slice.len(), bytes.len());
        assert_eq!(slice.as_ptr(), packet.as_ptr().wrapping_add(*offset));
    }
    // A slice of a slice is taken from the slice's bytes.
    let inner = packet.slice(2..8).slice(1..4);
    assert_eq!(&inner[..], b"345");
    assert_eq!(inner.as_ptr(), packet.as_ptr().wrapping_add(3));
    assert_eq!(&inner.slice(1..).slice(..1)[..], b"4");
    drop((packet, clone, cases));
    assert_eq!(pool.available(), 0, "the last slice still holds the buffer");
    drop(inner);
    assert_eq!(pool.available(), 1);
}

#[test]
#[should_panic(expected = "Packet::slice: range 2..9 out of bounds of a packet of 8 bytes")]
fn slicing_past_the_end_panics_with_the_range_and_the_length() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"abcdefgh");
    let _ = packet.slice(2..9);
}

#[test]
fn every_out_of_bounds_slice_panics_and_changes_nothing() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"abcdefgh");
    let slice = packet.slice(2..6);
    type Slicer = fn(&Packet) -> Packet;
    let cases: [(&str, Packet, Slicer); 8] = [
        ("end past the length", packet.clone(), |p| p.slice(..9)),
        ("inclusive end at the length", packet.clone(), |p| {
            p.slice(..=8)
        }),
        ("start past the length", packet.clone(), |p| p.slice(9..)),
        ("start after the end", packet.clone(), |p| {
            p.slice((Included(5), Excluded(4)))
        }),
        ("excluded start at the end", packet.clone(), |p| {
            p.slice((Excluded(4), Excluded(4)))
        }),
        ("start overflowing", packet.clone(), |p| {
            p.slice((Excluded(usize::MAX), Unbounded))
        }),
        ("end overflowing", packet.clone(), |p| {
            p.slice(..=usize::MAX)
        }),
        ("past a slice's end", slice.clone(), |p| p.slice(..5)),
    ];
    for (what, packet, slicer) in &cases {
        let panic = catch_unwind(AssertUnwindSafe(|| slicer(packet)))
            .expect_err(&format!("{what}: the slice did not panic"));
        let message = panic_message(&*panic);
        assert!(
            message.starts_with("Packet::slice: "),
            "{what}: {message:?}"
        );
    }
    assert_eq!(&slice[..], b"cdef");
    drop((packet, slice, cases));
    assert_eq!(
        pool.available(),
        1,
        "a panicking slice left a packet counted"
    );
}

#[test]
fn the_last_packet_dropped_on_another_thread_returns_the_buffer() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"abc");
    thread::spawn(move || assert_eq!(&packet[..], b"abc"))
        .join()
        .unwrap();
    assert_eq!(pool.available(), 1);
}

#[test]
fn packets_dropped_on_several_threads_return_the_buffer_after_the_last() {
    let threads = if cfg!(miri) { 2 } else { 8 };
    let pool = BufferPool::new(2, 16);
    let packet = packet_of(&pool, b"shared bytes");
    let readers: Vec<_> = (0..threads)
        .map(|i| {
            let packet = if i % 2 == 0 {
                packet.clone()
            } else {
                packet.slice(7..)
            };
            thread::spawn(move || {
                let expected: &[u8] = if i % 2 == 0 {
                    b"shared bytes"
                } else {
                    b"bytes"
                };
                assert_eq!(&packet[..], expected);
            })
        })
        .collect();
    for reader in readers {
        reader.join().unwrap();
    }
    assert_eq!(
        pool.available(),
        1,
        "this thread's packet still holds the buffer"
    );
    drop(packet);
    assert_eq!(pool.available(), 2);
}

/// Regression test (ThreadSanitizer): `Packet::drop` once ordered the other packets' reads
/// before the buffer's next owner with a standalone `fence(Acquire)`, sound but not modelled by
/// ThreadSanitizer, which reported the next owner's write as racing with another thread's read.
/// It now loads the count with `Acquire` instead (as std's `Arc` does under ThreadSanitizer).
#[test]
fn reads_of_a_packet_on_another_thread_happen_before_the_next_owner_writes() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"abc");
    let clone = packet.clone();
    // Relaxed on purpose: only the packets' own count may order the read before the write.
    let dropped = AtomicBool::new(false);
    thread::scope(|scope| {
        scope.spawn(|| {
            assert_eq!(clone.to_vec(), b"abc");
            drop(clone);
            dropped.store(true, Ordering::Relaxed);
        });
        while !dropped.load(Ordering::Relaxed) {
            thread::yield_now();
        }
        drop(packet); // the last packet: the buffer goes back
        let mut next = pool.try_acquire().expect("the buffer is back");
        next.write_all(b"xyz").unwrap();
        assert_eq!(&next[..], b"xyz");
    });
}

#[test]
fn the_last_packet_dropped_on_another_thread_wakes_a_waiting_task() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"abc");
    let mut waiter = Box::pin(pool.acquire());
    assert!(poll_once(&mut waiter).is_pending());
    let clone = packet.clone();
    let dropper = thread::spawn(move || drop((packet, clone)));
    let mut buf = block_on(waiter);
    dropper.join().unwrap();
    assert!(buf.is_empty(), "a new owner starts with an empty buffer");
    buf.write_all(b"next").unwrap();
    assert_eq!(&buf[..], b"next");
}

#[test]
fn an_empty_buffer_freezes_to_an_empty_packet() {
    let pool = BufferPool::new(1, 16);
    let packet = pool.try_acquire().unwrap().freeze();
    assert!(packet.is_empty());
    assert_eq!(packet.len(), 0);
    assert_eq!(&packet[..], b"");
    assert!(packet.slice(..).is_empty());
    assert!(packet.slice(0..0).is_empty());
    drop(packet);
    assert_eq!(pool.available(), 1);
}

/// A packet is `AsRef<[u8]>`, so that it can own the bytes of a `bytes::Bytes`
/// (`Bytes::from_owner`) with no copy: the buffer goes back once the `Bytes` and its clones
/// are dropped.
#[cfg(feature = "bytes")]
#[test]
fn a_packet_owns_the_bytes_of_a_bytes_without_a_copy() {
    let pool = BufferPool::new(1, 16);
    let packet = packet_of(&pool, b"hello, world");
    let at = packet.as_ref().as_ptr();
    let bytes = bytes::Bytes::from_owner(packet);
    assert_eq!(&bytes[..], b"hello, world");
    assert_eq!(bytes.as_ptr(), at, "the same bytes, not a copy");
    let hello = bytes.slice(..5);
    drop(bytes);
    assert_eq!(pool.available(), 0, "a slice of the bytes keeps the buffer");
    assert_eq!(&hello[..], b"hello");
    drop(hello);
    assert_eq!(pool.available(), 1);
}
