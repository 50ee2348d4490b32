//! Splitting: `Buf::split_to` cuts the bytes written so far into a read-only packet while the
//! `Buf` writes on after them; the buffer goes back to the pool when the `Buf` and every
//! packet split off it are dropped, in any order, on any thread; `spare_capacity_mut` with
//! `set_len` reads into the room without zeroing it.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread;

use pinfold_pool::{Buf, BufferPool};
use support::panic_message;

fn buf_with(pool: &BufferPool, bytes: &[u8]) -> Buf {
    let mut buf = pool.try_acquire().unwrap();
    put(&mut buf, bytes);
    buf
}

/// Appends `bytes`, which must fit.
fn put(buf: &mut Buf, bytes: &[u8]) {
    assert!(buf.try_extend_from_slice(bytes), "the bytes fit");
}

#[test]
fn packets_keep_their_bytes_while_the_buf_writes_on() {
    let pool = BufferPool::new(1, 16);
    let mut buf = buf_with(&pool, b"abcdef");
    let first = buf.split_to(2);
    put(&mut buf, b"ghij");
    let second = buf.split_to(3);
    buf[0] = b'X';
    put(&mut buf, b"klmnop");
    assert_eq!(&first[..], b"ab");
    assert_eq!(&second[..], b"cde");
    assert_eq!(&buf[..], b"Xghijklmnop");
    assert_eq!(buf.capacity(), 11);
    assert_eq!(buf.remaining(), 0);
    assert!(!buf.try_extend_from_slice(b"q"), "the Buf is full");
}

#[test]
fn clear_after_a_split_leaves_the_packets_alone() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcd");
    let packet = buf.split_to(2);
    buf.clear();
    put(&mut buf, b"wxyz");
    assert_eq!(&packet[..], b"ab");
    assert_eq!(&buf[..], b"wxyz");
}

#[test]
fn the_buffer_goes_back_when_the_buf_drops_last() {
    let pool = BufferPool::new(2, 8);
    let mut buf = buf_with(&pool, b"abcd");
    let first = buf.split_to(1);
    let second = buf.split_to(1);
    let slice = second.slice(..);
    drop((first, second, slice));
    assert_eq!(pool.available(), 1, "the Buf still holds the buffer");
    drop(buf);
    assert_eq!(pool.available(), 2);
}

#[test]
fn the_buffer_goes_back_when_the_last_packet_drops_last() {
    let pool = BufferPool::new(2, 8);
    let mut buf = buf_with(&pool, b"abcd");
    let first = buf.split_to(1);
    let second = buf.split_to(1);
    drop(buf);
    drop(first);
    assert_eq!(pool.available(), 1, "a packet still holds the buffer");
    drop(second);
    assert_eq!(pool.available(), 2);
}

#[test]
fn the_buffer_goes_back_once_across_threads() {
    let rounds = if cfg!(miri) { 4 } else { 200 };
    let pool = BufferPool::new(1, 8);
    for round in 0..rounds {
        let mut buf = buf_with(&pool, b"abcd");
        let packet = buf.split_to(2);
        let reader = thread::spawn(move || {
            assert_eq!(&packet[..], b"ab");
        });
        if round % 2 == 0 {
            put(&mut buf, b"ef");
            assert_eq!(&buf[..], b"cdef");
        }
        let writer = thread::spawn(move || drop(buf));
        reader.join().unwrap();
        writer.join().unwrap();
        assert_eq!(pool.available(), 1, "released exactly once");
    }
}

#[test]
fn freeze_after_a_split_shares_the_bytes_after_it() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcdef");
    let head = buf.split_to(2);
    let tail = buf.freeze();
    assert_eq!(&head[..], b"ab");
    assert_eq!(&tail[..], b"cdef");
    assert_eq!(&tail.slice(1..3)[..], b"de");
    drop(head);
    assert_eq!(
        pool.available(),
        0,
        "the frozen tail still holds the buffer"
    );
    drop(tail);
    assert_eq!(pool.available(), 1);
}

#[test]
fn split_of_nothing_is_an_empty_packet() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abc");
    let empty = buf.split_to(0);
    assert!(empty.is_empty());
    assert_eq!(&buf[..], b"abc");
    assert_eq!(buf.capacity(), 8);
    drop(buf);
    assert_eq!(
        pool.available(),
        0,
        "the empty packet still holds the buffer"
    );
    drop(empty);
    assert_eq!(pool.available(), 1);
}

#[test]
fn split_of_everything_leaves_an_empty_buf_with_the_room() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abc");
    let all = buf.split_to(3);
    assert_eq!(&all[..], b"abc");
    assert!(buf.is_empty());
    assert_eq!(buf.capacity(), 5);
    put(&mut buf, b"defgh");
    let rest = buf.split_to(5);
    assert_eq!(buf.capacity(), 0);
    assert_eq!(&rest[..], b"defgh");
    drop((all, rest));
    assert_eq!(pool.available(), 0);
    drop(buf);
    assert_eq!(pool.available(), 1);
}

#[test]
fn split_past_the_bytes_written_panics_and_changes_nothing() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abc");
    let panic = catch_unwind(AssertUnwindSafe(|| buf.split_to(4))).unwrap_err();
    assert_eq!(
        panic_message(&*panic),
        "Buf::split_to: at 4 is past the 3 bytes written"
    );
    assert_eq!(&buf[..], b"abc");
    drop(buf);
    assert_eq!(pool.available(), 1);
}

#[test]
fn a_reused_buffer_starts_whole_and_unshared() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcd");
    drop(buf.split_to(2));
    drop(buf);
    let mut again = pool.try_acquire().unwrap();
    assert_eq!(again.capacity(), 8);
    assert!(again.is_empty());
    put(&mut again, b"xy");
    drop(again);
    assert_eq!(
        pool.available(),
        1,
        "an unsplit Buf gives the buffer back alone"
    );
}

#[test]
fn bytes_read_into_the_room_are_written_after_the_rest() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"ab");
    let head = buf.split_to(1);
    let room = buf.spare_capacity_mut();
    assert_eq!(room.len(), 6);
    for (slot, byte) in room.iter_mut().zip(b"cde") {
        slot.write(*byte);
    }
    // SAFETY: the room's first three bytes were written just above.
    unsafe { buf.set_len(buf.len() + 3) };
    assert_eq!(&buf[..], b"bcde");
    assert_eq!(&head[..], b"a");
}

#[test]
fn a_reclaim_waits_for_every_packet_clone_and_slice_then_takes_the_whole_buffer() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcdef");
    let packet = buf.split_to(2);
    let clone = packet.clone();
    let slice = packet.slice(1..);
    drop(packet);
    assert!(!buf.try_reclaim(), "a clone and a slice hold the bytes");
    drop(clone);
    assert!(!buf.try_reclaim(), "a slice holds the bytes");
    assert_eq!(&slice[..], b"b");
    drop(slice);
    assert!(buf.try_reclaim());
    assert_eq!(&buf[..], b"cdef");
    assert_eq!((buf.capacity(), buf.remaining()), (8, 4));
    put(&mut buf, b"ghij");
    assert_eq!(&buf[..], b"cdefghij");
}

#[test]
fn a_reclaimed_buf_splits_again_and_its_buffer_goes_back_once() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcd");
    drop(buf.split_to(3));
    assert!(buf.try_reclaim());
    assert!(
        buf.try_reclaim(),
        "nothing split off since: the whole buffer already"
    );
    assert_eq!(&buf[..], b"d");
    put(&mut buf, b"efg");
    let packet = buf.split_to(2);
    assert!(!buf.try_reclaim());
    assert_eq!(&packet[..], b"de");
    drop(buf);
    assert_eq!(pool.available(), 0, "the packet holds the buffer");
    drop(packet);
    assert_eq!(pool.available(), 1);
    // A reclaimed `Buf` dropped before any packet goes back alone too.
    let mut buf = buf_with(&pool, b"ab");
    drop(buf.split_to(1));
    assert!(buf.try_reclaim());
    drop(buf);
    let buf = pool.try_acquire().expect("given back once");
    assert!(pool.try_acquire().is_none(), "and not twice");
    assert_eq!(buf.capacity(), 8);
}

#[test]
fn a_packet_dropped_on_another_thread_lets_the_buf_reclaim() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcd");
    let packet = buf.split_to(2);
    thread::spawn(move || assert_eq!(&packet[..], b"ab"))
        .join()
        .unwrap();
    assert!(buf.try_reclaim());
    put(&mut buf, b"efghij");
    assert_eq!(&buf[..], b"cdefghij");
}

#[test]
fn random_writes_splits_clears_and_reclaims_keep_every_packets_bytes() {
    let seeds = if cfg!(miri) { 4 } else { 400 };
    for seed in 1..=seeds {
        let mut rng = support::XorShift::new(seed);
        let pool = BufferPool::new(1, 12);
        let mut buf = pool.try_acquire().unwrap();
        // What the `Buf` holds, and every packet alive with the bytes it must keep.
        let mut model: Vec<u8> = Vec::new();
        let mut packets: Vec<(pinfold_pool::Packet, Vec<u8>)> = Vec::new();
        let mut next = 0u8;
        for _ in 0..60 {
            match rng.below(7) {
                0 | 1 => {
                    let n = rng.below(buf.remaining() + 1);
                    let bytes: Vec<u8> = (0..n).map(|_| next.wrapping_add(1)).collect();
                    next = next.wrapping_add(1);
                    // Half of the writes go through the room and `set_len`.
                    if rng.below(2) == 0 {
                        put(&mut buf, &bytes);
                    } else {
                        let len = buf.len();
                        for (slot, &byte) in buf.spare_capacity_mut().iter_mut().zip(&bytes) {
                            slot.write(byte);
                        }
                        // SAFETY: the `n` bytes of the room after `len` were written above.
                        unsafe { buf.set_len(len + n) };
                    }
                    model.extend_from_slice(&bytes);
                }
                2 => {
                    let at = rng.below(buf.len() + 1);
                    let packet = buf.split_to(at);
                    let bytes: Vec<u8> = model.drain(..at).collect();
                    packets.push((packet.slice(..), bytes.clone()));
                    if rng.below(2) == 0 {
                        packets.push((packet, bytes));
                    }
                }
                3 if !packets.is_empty() => {
                    let (packet, bytes) = packets.swap_remove(rng.below(packets.len()));
                    assert_eq!(packet[..], bytes[..], "seed {seed}");
                }
                4 => {
                    let reclaimed = buf.try_reclaim();
                    assert_eq!(reclaimed, packets.is_empty(), "seed {seed}");
                    if reclaimed {
                        assert_eq!(buf.capacity(), 12, "seed {seed}");
                    }
                }
                5 if rng.below(4) == 0 => {
                    buf.clear();
                    model.clear();
                }
                _ => {}
            }
            assert_eq!(buf[..], model[..], "seed {seed}");
            assert_eq!(buf.len() + buf.remaining(), buf.capacity(), "seed {seed}");
            for (packet, bytes) in &packets {
                assert_eq!(packet[..], bytes[..], "seed {seed}");
            }
        }
        let frozen = buf.freeze();
        assert_eq!(frozen[..], model[..], "seed {seed}");
        drop(frozen);
        assert_eq!(pool.available(), usize::from(packets.is_empty()));
        drop(packets);
        assert_eq!(pool.available(), 1, "seed {seed}: given back once");
        let again = pool.try_acquire().expect("the buffer is back");
        assert!(pool.try_acquire().is_none(), "seed {seed}: and only once");
        assert_eq!(again.capacity(), 12);
    }
}

#[cfg(feature = "bytes")]
#[test]
fn a_bytes_made_of_a_packet_holds_the_bytes_back_from_a_reclaim() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcdef");
    let shared = bytes::Bytes::from_owner(buf.split_to(3));
    let tail = shared.slice(1..);
    drop(shared);
    assert!(!buf.try_reclaim(), "a slice of the Bytes holds the packet");
    put(&mut buf, b"gh");
    assert_eq!(&tail[..], b"bc");
    drop(tail);
    assert!(buf.try_reclaim());
    assert_eq!(&buf[..], b"defgh");
    put(&mut buf, b"ijk");
    let frozen = buf.freeze();
    assert_eq!(&frozen[..], b"defghijk");
}

/// Under Miri, whose race detector sees the buffer's bytes (loom does not model them), a
/// reclaim that did not wait for the packet's reads would race with them.
#[test]
fn a_reclaim_that_succeeds_comes_after_the_reads_of_a_packet_dropped_on_another_thread() {
    let pool = BufferPool::new(1, 8);
    let mut buf = buf_with(&pool, b"abcdef");
    let packet = buf.split_to(4);
    let reader = thread::spawn(move || {
        let read: Vec<u8> = packet.iter().copied().collect();
        assert_eq!(read, b"abcd");
    });
    while !buf.try_reclaim() {
        thread::yield_now();
    }
    // The move of the bytes written overwrote the packet's first two bytes; these the rest.
    put(&mut buf, b"ghijkl");
    assert_eq!(&buf[..], b"efghijkl");
    reader.join().unwrap();
}
