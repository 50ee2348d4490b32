//! Degenerate sizes: a pool of no buffers never gives one (`try_acquire` is `None`, `acquire`
//! stays pending); buffers of no bytes are handed out, take only empty writes and freeze to
//! empty packets; sizes that cannot be allocated panic in `new` with a message.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::io::{ErrorKind, Write};

use pinfold_pool::BufferPool;
use support::{counting_waker, poll_with};

#[test]
fn a_pool_of_no_buffers_never_gives_one() {
    let pool = BufferPool::new(0, 64);
    assert_eq!(
        (pool.capacity(), pool.buffer_size(), pool.available()),
        (0, 64, 0)
    );
    assert!(pool.try_acquire().is_none());
    let (waker, wakes) = counting_waker();
    let mut acquire = Box::pin(pool.acquire());
    assert!(poll_with(&mut acquire, &waker).is_pending());
    assert!(pool.try_acquire().is_none());
    assert!(poll_with(&mut acquire, &waker).is_pending());
    drop(acquire);
    assert_eq!(wakes.count(), 0);
    assert_eq!(pool.available(), 0);
    assert!(pool.try_acquire().is_none());
}

#[test]
fn a_pool_of_no_buffers_of_no_bytes_never_gives_one() {
    let pool = BufferPool::new(0, 0);
    assert!(pool.try_acquire().is_none());
    assert!(poll_with(&mut Box::pin(pool.acquire()), &counting_waker().0).is_pending());
}

#[test]
fn buffers_of_no_bytes_take_only_empty_writes() {
    let pool = BufferPool::new(3, 0);
    let bufs: Vec<_> = (0..3).map(|_| pool.try_acquire().unwrap()).collect();
    assert!(pool.try_acquire().is_none());
    for mut buf in bufs {
        assert_eq!((buf.capacity(), buf.len(), buf.remaining()), (0, 0, 0));
        assert_eq!(buf.write(b"").unwrap(), 0);
        assert_eq!(buf.write(b"x").unwrap_err().kind(), ErrorKind::WriteZero);
        assert!(!buf.try_extend_from_slice(b"x"));
        assert_eq!(&buf[..], b"");
        buf.clear();
        let packet = buf.freeze();
        assert!(packet.is_empty());
        assert!(packet.slice(..).is_empty());
        assert!(packet.clone().slice(0..0).is_empty());
    }
    assert_eq!(pool.available(), 3);
}

#[test]
#[should_panic(expected = "Packet::slice: range 0..1 out of bounds of a packet of 0 bytes")]
fn a_packet_of_no_bytes_has_no_byte_to_slice() {
    let pool = BufferPool::new(1, 0);
    let packet = pool.try_acquire().unwrap().freeze();
    let _ = packet.slice(..1);
}

#[test]
#[should_panic(expected = "BufferPool: count * size overflows")]
fn new_panics_when_count_times_size_overflows() {
    let _ = BufferPool::new(2, usize::MAX);
}

#[test]
#[should_panic(expected = "BufferPool: count must be less than u32::MAX")]
fn new_panics_on_a_count_past_the_index_range() {
    let _ = BufferPool::new(u32::MAX as usize, 0);
}
