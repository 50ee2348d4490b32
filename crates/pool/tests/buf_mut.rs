//! `bytes::BufMut` for `Buf` (the `bytes` feature): `put_*` append, `chunk_mut` is the unwritten
//! rest of the buffer and `advance_mut` counts what was written there, and writing past the
//! capacity panics without writing.
#![cfg(feature = "bytes")]

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};

use bytes::BufMut;
use pinfold_pool::{Buf, BufferPool};
use support::panic_message;

#[test]
fn puts_append_in_order() {
    let pool = BufferPool::new(1, 16);
    let mut buf = pool.try_acquire().unwrap();
    assert_eq!(buf.remaining_mut(), 16);
    buf.put_slice(b"ab");
    buf.put_u32(0x0102_0304);
    buf.put_u16_le(0x0506);
    buf.put_u8(7);
    buf.put_bytes(0xff, 2);
    assert_eq!(&buf[..], b"ab\x01\x02\x03\x04\x06\x05\x07\xff\xff");
    assert_eq!(buf.remaining_mut(), 5);
    assert_eq!(buf.remaining_mut(), buf.remaining());
}

#[test]
fn chunk_mut_is_the_unwritten_rest_and_advance_mut_counts_it_written() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.put_slice(b"ab");
    let chunk = buf.chunk_mut();
    assert_eq!(chunk.len(), 6);
    chunk[..3].copy_from_slice(b"cde");
    // SAFETY: the 3 bytes were just written.
    unsafe { buf.advance_mut(3) };
    assert_eq!(&buf[..], b"abcde");
    assert_eq!(buf.chunk_mut().len(), 3);
    let chunk = buf.chunk_mut();
    chunk.copy_from_slice(b"fgh");
    // SAFETY: the whole chunk was just written.
    unsafe { buf.advance_mut(3) };
    assert_eq!(&buf[..], b"abcdefgh");
    assert_eq!(buf.chunk_mut().len(), 0);
    assert!(!buf.has_remaining_mut());
}

#[test]
fn putting_past_the_capacity_panics_and_writes_nothing() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.put_slice(b"12345");
    type Put = fn(&mut Buf);
    let cases: [(&str, Put); 3] = [
        ("put_slice", |buf| buf.put_slice(b"6789")),
        ("put_u32", |buf| buf.put_u32(0)),
        ("put_u64_le", |buf| buf.put_u64_le(0)),
    ];
    for (what, put) in cases {
        let panic = catch_unwind(AssertUnwindSafe(|| put(&mut buf)))
            .expect_err(&format!("{what} past the capacity did not panic"));
        let message = panic_message(&*panic);
        assert!(
            message.contains("advance out of bounds"),
            "{what}: {message:?}"
        );
        assert_eq!(&buf[..], b"12345", "{what} wrote something");
    }
    drop(buf);
    assert_eq!(pool.available(), 1);
}

#[test]
#[should_panic(expected = "Buf::advance_mut: 4 bytes past the 3 left")]
fn advance_mut_past_the_capacity_panics() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.put_slice(b"12345");
    // SAFETY: it panics before counting anything as written (what the test checks).
    unsafe { buf.advance_mut(4) };
}

#[test]
fn a_buf_writes_through_bufmut_generic_code() {
    fn encode(out: &mut impl BufMut, items: &[u16]) {
        out.put_u8(items.len() as u8);
        for &item in items {
            out.put_u16(item);
        }
    }
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    encode(&mut buf, &[1, 0x0203]);
    let packet = buf.freeze();
    assert_eq!(&packet[..], b"\x02\x00\x01\x02\x03");
}
