//! The pool as a handle: what it reports of its buffers, clones that share them, a `Debug`
//! output for every type, and `acquire` used past its output.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::io::Write;

use pinfold_pool::BufferPool;
use support::poll_once;

#[test]
fn the_pool_reports_its_buffers_and_how_many_are_free() {
    let pool = BufferPool::new(3, 100);
    assert_eq!(
        (pool.capacity(), pool.buffer_size(), pool.available()),
        (3, 100, 3)
    );
    let first = pool.try_acquire().unwrap();
    assert_eq!(first.capacity(), 100);
    let second = pool.try_acquire().unwrap();
    assert_eq!(pool.available(), 1);
    drop(first);
    assert_eq!(pool.available(), 2);
    drop(second);
    assert_eq!(pool.available(), 3);
}

/// In a pool of 256 buffers or more an acquire takes a batch from the shared list, one for
/// itself and the rest for its thread's stock (a batch is a 128th of the pool, 1 to 16): the
/// count stays exact through every one.
#[test]
fn the_count_of_free_buffers_stays_exact_in_batches() {
    let counts: &[usize] = if cfg!(miri) {
        &[16, 256]
    } else {
        &[16, 256, 1024]
    };
    for &count in counts {
        let pool = BufferPool::new(count, 8);
        let mut held = Vec::new();
        for taken in 1..=count {
            held.push(pool.try_acquire().unwrap());
            assert_eq!(pool.available(), count - taken, "{taken} of {count} taken");
        }
        assert!(pool.try_acquire().is_none());
        for given in 1..=count {
            drop(held.pop());
            assert_eq!(pool.available(), given, "{given} of {count} given back");
        }
    }
}

#[test]
fn clones_of_a_pool_share_its_buffers() {
    let pool = BufferPool::new(2, 8);
    let clone = pool.clone();
    let buf = clone.try_acquire().unwrap();
    assert_eq!(pool.available(), 1);
    let packet = buf.freeze();
    // The buffers outlive every handle: the packet still reads, and gives its buffer back.
    drop(clone);
    let other = pool.try_acquire().unwrap();
    assert!(pool.try_acquire().is_none());
    assert!(packet.is_empty());
    drop((packet, other));
    assert_eq!(pool.available(), 2);
}

#[test]
fn buffers_and_packets_outlive_every_pool_handle() {
    let pool = BufferPool::new(2, 8);
    let mut buf = pool.try_acquire().unwrap();
    let other = pool.try_acquire().unwrap();
    drop(pool);
    buf.write_all(b"still").unwrap();
    let packet = buf.freeze();
    drop(other);
    assert_eq!(&packet.slice(1..)[..], b"till");
}

#[test]
fn every_type_has_a_debug_output_naming_it() {
    let pool = BufferPool::new(2, 8);
    assert_eq!(
        format!("{pool:?}"),
        "BufferPool { capacity: 2, buffer_size: 8, available: 2 }"
    );
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"abc").unwrap();
    let buf_debug = format!("{buf:?}");
    assert!(buf_debug.starts_with("Buf {"), "{buf_debug}");
    assert!(buf_debug.contains("len: 3"), "{buf_debug}");
    let packet = buf.freeze();
    let packet_debug = format!("{packet:?}");
    assert!(packet_debug.starts_with("Packet {"), "{packet_debug}");
    assert!(packet_debug.contains("len: 3"), "{packet_debug}");
    let _held = pool.try_acquire().unwrap();
    let mut acquire = Box::pin(pool.acquire());
    assert_eq!(format!("{acquire:?}"), "Acquire { waiting: false, .. }");
    assert!(poll_once(&mut acquire).is_pending());
    assert_eq!(format!("{acquire:?}"), "Acquire { waiting: true, .. }");
}

#[test]
#[should_panic(expected = "Acquire polled after it returned its buffer")]
fn acquire_polled_after_its_output_panics() {
    let pool = BufferPool::new(1, 8);
    let mut acquire = Box::pin(pool.acquire());
    assert!(poll_once(&mut acquire).is_ready());
    let _ = poll_once(&mut acquire);
}
