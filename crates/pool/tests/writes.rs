//! Writing a `Buf`: `std::io::Write` and `try_extend_from_slice` append what fits; a write that
//! does not fit fails cleanly (`WriteZero`, nothing written, the length unchanged), and so does
//! a formatted write (`write!`) of several pieces, whichever piece fails (also when its `Display`
//! ignores the failure and goes on); exactly
//! the capacity fits; empty writes always succeed; `clear` empties the buffer; a new owner
//! starts empty.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

use std::io::{ErrorKind, Write};

use pinfold_pool::BufferPool;

#[test]
fn writes_append_and_the_buffer_reads_back_what_was_written() {
    let pool = BufferPool::new(1, 16);
    let mut buf = pool.try_acquire().unwrap();
    assert_eq!((buf.capacity(), buf.len(), buf.remaining()), (16, 0, 16));
    assert!(buf.is_empty());
    assert_eq!(buf.write(b"abc").unwrap(), 3);
    buf.write_all(b"de").unwrap();
    assert!(buf.try_extend_from_slice(b"fg"));
    write!(buf, "{}", 42).unwrap();
    buf.flush().unwrap();
    assert_eq!(&buf[..], b"abcdefg42");
    assert_eq!((buf.len(), buf.remaining()), (9, 7));
    assert!(!buf.is_empty());
    buf[..3].copy_from_slice(b"ABC");
    assert_eq!(&buf[..], b"ABCdefg42");
}

#[test]
fn a_write_that_does_not_fit_fails_and_writes_nothing() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"12345").unwrap();
    let error = buf.write(b"6789").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::WriteZero);
    let error = buf.write_all(b"6789").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::WriteZero);
    assert!(!buf.try_extend_from_slice(b"6789"));
    assert_eq!(&buf[..], b"12345", "a failed write wrote something");
    assert_eq!((buf.len(), buf.remaining()), (5, 3));
    // What fits still goes in.
    buf.write_all(b"678").unwrap();
    assert_eq!(&buf[..], b"12345678");
}

#[test]
fn formatted_text_that_does_not_fit_writes_nothing() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"12").unwrap();
    let (name, count) = ("abc", 4567);
    // Four pieces, the first three fit.
    let error = write!(buf, "{name}-{count}").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::WriteZero);
    assert_eq!(&buf[..], b"12", "a failed write wrote part of its text");
    // What fits still goes in.
    write!(buf, "{name}-{}", count % 10).unwrap();
    assert_eq!(&buf[..], b"12abc-7");
}

#[test]
fn formatted_text_whose_display_fails_midway_writes_nothing() {
    struct FailsAfterTwoBytes;
    impl std::fmt::Display for FailsAfterTwoBytes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("ab")?;
            Err(std::fmt::Error)
        }
    }
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"12").unwrap();
    let error = write!(buf, "<{}>", FailsAfterTwoBytes).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Other);
    assert_eq!(&buf[..], b"12", "a failed write wrote part of its text");
}

#[test]
fn formatted_text_whose_display_ignores_a_piece_that_did_not_fit_writes_nothing() {
    // A `Display` that drops the error of a piece that did not fit and goes on: `fmt::write`
    // then reports success, yet the text is not whole.
    struct IgnoresErrors;
    impl std::fmt::Display for IgnoresErrors {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let _ = f.write_str("ab");
            let _ = f.write_str("cdefghijk");
            f.write_str("")
        }
    }
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"12").unwrap();
    let error = write!(buf, "{IgnoresErrors}").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::WriteZero);
    assert_eq!(&buf[..], b"12", "a failed write wrote part of its text");
    assert_eq!((buf.len(), buf.remaining()), (2, 6));
}

#[test]
fn write_all_of_exactly_the_capacity_fills_the_buffer() {
    let pool = BufferPool::new(1, 32);
    let mut buf = pool.try_acquire().unwrap();
    let bytes: Vec<u8> = (0..32).collect();
    buf.write_all(&bytes).unwrap();
    assert_eq!(&buf[..], &bytes[..]);
    assert_eq!((buf.len(), buf.remaining()), (32, 0));
    let error = buf.write(&[0]).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::WriteZero);
    assert_eq!(buf.len(), 32);
}

#[test]
fn a_write_longer_than_the_capacity_fails_on_an_empty_buffer() {
    let pool = BufferPool::new(1, 4);
    let mut buf = pool.try_acquire().unwrap();
    assert_eq!(
        buf.write(b"12345").unwrap_err().kind(),
        ErrorKind::WriteZero
    );
    assert!(buf.is_empty());
}

#[test]
fn empty_writes_succeed_even_on_a_full_buffer() {
    let pool = BufferPool::new(1, 4);
    let mut buf = pool.try_acquire().unwrap();
    assert_eq!(buf.write(b"").unwrap(), 0);
    buf.write_all(b"").unwrap();
    assert!(buf.try_extend_from_slice(b""));
    assert!(buf.is_empty());
    buf.write_all(b"full").unwrap();
    assert_eq!(buf.write(b"").unwrap(), 0);
    buf.write_all(b"").unwrap();
    assert!(buf.try_extend_from_slice(b""));
    assert_eq!(&buf[..], b"full");
}

#[test]
fn clear_empties_the_buffer_for_a_full_new_write() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"old byte").unwrap();
    buf.clear();
    assert!(buf.is_empty());
    assert_eq!((buf.len(), buf.remaining(), &buf[..]), (0, 8, &b""[..]));
    buf.write_all(b"new").unwrap();
    assert_eq!(&buf[..], b"new");
    buf.clear();
    buf.write_all(b"8 bytes!").unwrap();
    assert_eq!(&buf[..], b"8 bytes!");
}

#[test]
fn a_released_buffer_comes_back_empty() {
    let pool = BufferPool::new(1, 8);
    let mut buf = pool.try_acquire().unwrap();
    buf.write_all(b"secret").unwrap();
    drop(buf);
    let buf = pool.try_acquire().unwrap();
    assert!(buf.is_empty());
    assert_eq!(buf.remaining(), 8);
}
