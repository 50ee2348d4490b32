//! [`Buf`]: one buffer of the pool, owned and written.

use core::fmt;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
#[cfg(feature = "std")]
use std::io;

use crate::packet::Packet;
use crate::pool::Inner;
use crate::sync::{Arc, Ordering};

/// One buffer of a [`BufferPool`](crate::BufferPool), owned until dropped (then it goes back
/// to the pool, to the first waiting task if any) or [frozen](Buf::freeze).
///
/// It is written like a slice: [`std::io::Write`] appends (with the `std` feature), and with
/// the `bytes` feature `bytes::BufMut` does too. It dereferences to the bytes written so far.
/// A write that does not fit fails with [`io::ErrorKind::WriteZero`] and writes nothing. No
/// write allocates, and a `Buf` never grows: its capacity is the pool's buffer size.
///
/// `Send + Sync`: a `Buf` may be written on one thread and dropped on another, where its
/// buffer goes back to the pool (see [*Order*](crate#order) and [*Wakes*](crate#wakes)).
///
/// # Example
///
/// ```
/// use std::io::{ErrorKind, Write};
/// use pinfold_pool::BufferPool;
///
/// let pool = BufferPool::new(1, 8);
/// let mut buf = pool.try_acquire().unwrap();
/// buf.write_all(b"abc").unwrap();
/// assert!(buf.try_extend_from_slice(b"de"));
/// assert_eq!(&buf[..], b"abcde");
/// assert_eq!(buf.remaining(), 3);
///
/// // Too long: nothing is written.
/// let error = buf.write_all(b"fghi").unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::WriteZero);
/// assert!(!buf.try_extend_from_slice(b"fghi"));
/// assert_eq!(&buf[..], b"abcde");
///
/// buf[0] = b'A'; // the bytes written can be changed in place
/// assert_eq!(&buf[..], b"Abcde");
/// ```
pub struct Buf {
    inner: Arc<Inner>,
    index: u32,
    /// The buffer's first byte, kept here so that a write touches nothing but this `Buf`.
    start: NonNull<u8>,
    capacity: usize,
    len: usize,
}

// SAFETY: a `Buf` owns its buffer: nothing else reads or writes those bytes while it lives, so
// it may move to another thread; the rest is an `Arc` of the `Sync` pool.
unsafe impl Send for Buf {}
// SAFETY: `&Buf` only reads the bytes written so far, which nothing else writes.
unsafe impl Sync for Buf {}

impl Buf {
    #[inline]
    pub(crate) fn new(inner: Arc<Inner>, index: u32) -> Self {
        let start = inner.block.bytes(index).cast::<u8>();
        let capacity = inner.block.size();
        Self {
            inner,
            index,
            start,
            capacity,
            len: 0,
        }
    }

    /// How many bytes the buffer holds in all: the pool's buffer size.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many bytes were written.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many more bytes fit.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.capacity() - self.len
    }

    /// Forgets what was written: the buffer is empty again.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `bytes` if they fit; `false` (and nothing written) if not.
    #[inline]
    pub fn try_extend_from_slice(&mut self, bytes: &[u8]) -> bool {
        let len = self.len;
        if bytes.len() > self.capacity - len {
            return false;
        }
        // SAFETY: this `Buf` owns the buffer, so nothing else touches its bytes; `len +
        // bytes.len() <= capacity`, so the copy stays inside it; `bytes` cannot overlap it
        // (nothing else may borrow the buffer while `&mut self` is held).
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), self.start.as_ptr().add(len), bytes.len());
        }
        self.len = len + bytes.len();
        true
    }

    /// Shares the bytes written as a read-only [`Packet`], which can be cloned and sliced
    /// without allocating; the buffer goes back to the pool when the last packet of it is
    /// dropped.
    ///
    /// # Example
    ///
    /// ```
    /// use std::io::Write;
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let mut buf = pool.try_acquire().unwrap();
    /// buf.write_all(b"frame").unwrap();
    /// let packet = buf.freeze();
    /// assert_eq!(&packet[..], b"frame");
    /// assert_eq!(pool.available(), 0); // the packet keeps the buffer
    /// drop(packet);
    /// assert_eq!(pool.available(), 1);
    /// ```
    pub fn freeze(self) -> Packet {
        let this = ManuallyDrop::new(self);
        this.inner
            .block
            .meta(this.index)
            .packets
            .store(1, Ordering::Relaxed);
        // SAFETY: `this` is never used or dropped again, so its `Arc` moves out exactly once.
        let inner = unsafe { ptr::read(&this.inner) };
        Packet::new(inner, this.index, this.len)
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn spare(&mut self) -> (*mut u8, usize) {
        // SAFETY: `len <= capacity`: the pointer stays inside the buffer or one past it.
        (
            unsafe { self.start.as_ptr().add(self.len) },
            self.remaining(),
        )
    }

    #[cfg(feature = "bytes")]
    pub(crate) fn set_len(&mut self, len: usize) {
        self.len = len;
    }
}

impl Deref for Buf {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this `Buf` owns the buffer, and its first `len` bytes were written by it.
        unsafe { core::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl DerefMut for Buf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only access.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl io::Write for Buf {
    /// Appends all of `bytes`, or fails with [`io::ErrorKind::WriteZero`] and writes nothing
    /// if they do not fit.
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.try_extend_from_slice(bytes) {
            Ok(bytes.len())
        } else {
            Err(full())
        }
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.try_extend_from_slice(bytes) {
            Ok(())
        } else {
            Err(full())
        }
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "std")]
#[cold]
fn full() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the pool's buffer is full")
}

impl Drop for Buf {
    fn drop(&mut self) {
        self.inner.release(self.index);
    }
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buf")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
