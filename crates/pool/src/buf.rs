//! [`Buf`]: one buffer of the pool, owned and written.

use core::fmt;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use core::task::{Context, Poll, Waker};
#[cfg(feature = "std")]
use std::io;

use crate::block::Meta;
use crate::packet::Packet;
use crate::reclaim::{Watched, too_many};
use crate::shared::{Inner, InnerRef};
use crate::sync::{AtomicU32, Ordering};

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
/// use pinfold_pool::BufferPool;
///
/// let pool = BufferPool::new(1, 8);
/// let mut buf = pool.try_acquire().unwrap();
/// assert!(buf.try_extend_from_slice(b"abcde"));
/// assert_eq!(&buf[..], b"abcde");
/// assert_eq!(buf.remaining(), 3);
///
/// // Too long: nothing is written.
/// assert!(!buf.try_extend_from_slice(b"fghi"));
/// assert_eq!(&buf[..], b"abcde");
///
/// buf[0] = b'A'; // the bytes written can be changed in place
/// assert_eq!(&buf[..], b"Abcde");
/// ```
pub struct Buf {
    /// The pool; this `Buf` holds its buffer's count of the pool's state.
    inner: InnerRef,
    /// The buffer's index (low 32 bits), and [`SHARED`] once this `Buf` split a packet off:
    /// one 8-byte field, as a `Buf` is moved by whole words, and a 4-byte field beside
    /// padding makes each move read a word that was written in two parts.
    tag: u64,
    /// The first byte of this `Buf`'s part of the buffer (the buffer's first byte until a
    /// [`split_to`](Buf::split_to)), kept here so that a write touches nothing but this `Buf`.
    start: NonNull<u8>,
    /// One past the last byte written: a write checks it against `end`, copies there and
    /// moves it, and touches no other field.
    written: NonNull<u8>,
    /// One past the buffer's last byte.
    end: NonNull<u8>,
}

// SAFETY: a `Buf` owns its buffer: nothing else reads or writes those bytes while it lives, so
// it may move to another thread; the rest is a pointer to the `Sync` pool.
unsafe impl Send for Buf {}
// SAFETY: `&Buf` only reads the bytes written so far, which nothing else writes.
unsafe impl Sync for Buf {}

/// [`Buf`]'s tag bit: it split a packet off, and holds one of the buffer's packet counts.
const SHARED: u64 = 1 << 32;
/// [`Buf`]'s tag bit: it waits for the packets split off it to be dropped (see `reclaim`).
const WATCHING: u64 = 1 << 33;

impl Buf {
    #[inline]
    /// A `Buf` of buffer `index`, which holds a count of `inner` that passes to the `Buf`.
    pub(crate) fn new(inner: InnerRef, index: u32) -> Self {
        let start = inner.block.bytes(index).cast::<u8>();
        // SAFETY: the buffer's bytes run from `start` for `size` bytes, in one allocation.
        let end = unsafe { start.add(inner.block.size()) };
        Self {
            inner,
            tag: u64::from(index),
            start,
            written: start,
            end,
        }
    }

    /// How many bytes this `Buf` holds in all: the pool's buffer size, less what
    /// [`split_to`](Buf::split_to) split off.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.end.addr().get() - self.start.addr().get()
    }

    /// How many bytes were written.
    #[inline]
    pub fn len(&self) -> usize {
        self.written.addr().get() - self.start.addr().get()
    }

    /// Whether nothing was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.written == self.start
    }

    /// How many more bytes fit.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end.addr().get() - self.written.addr().get()
    }

    /// Forgets what was written: the buffer is empty again.
    #[inline]
    pub fn clear(&mut self) {
        self.written = self.start;
    }

    /// Appends `bytes` if they fit; `false` (and nothing written) if not.
    #[inline]
    pub fn try_extend_from_slice(&mut self, bytes: &[u8]) -> bool {
        let at = self.written;
        if bytes.len() > self.end.addr().get() - at.addr().get() {
            return false;
        }
        // SAFETY: this `Buf` owns the buffer from `start` on, so nothing else touches those
        // bytes; `at + bytes.len() <= end`, so the copy stays inside it; `bytes` cannot
        // overlap it (nothing else may borrow the buffer while `&mut self` is held).
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), at.as_ptr(), bytes.len());
            self.written = at.add(bytes.len());
        }
        true
    }

    /// Shares the bytes written as a read-only [`Packet`], which can be cloned and sliced
    /// without allocating; the buffer goes back to the pool when the last packet of it is
    /// dropped.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let mut buf = pool.try_acquire().unwrap();
    /// assert!(buf.try_extend_from_slice(b"frame"));
    /// let packet = buf.freeze();
    /// assert_eq!(&packet[..], b"frame");
    /// assert_eq!(pool.available(), 0); // the packet keeps the buffer
    /// drop(packet);
    /// assert_eq!(pool.available(), 1);
    /// ```
    ///
    /// After a [`split_to`](Buf::split_to) the packet holds this `Buf`'s bytes only (those
    /// after the split), and the buffer goes back when it and every packet split off are
    /// dropped.
    pub fn freeze(self) -> Packet {
        let mut this = ManuallyDrop::new(self);
        // Dropped once the packet holds the count, as in `split_to`.
        let waker = this.stop_watching();
        if !this.shared() {
            // Relaxed: no packet of this buffer exists, so nothing else reads the count.
            this.packets().store(1, Ordering::Relaxed);
        }
        // A shared `Buf` already holds a count, which passes to the packet (and so does the
        // buffer's count of the pool's state: `this` is never dropped).
        let packet = Packet::new(this.inner, this.index(), this.offset(), this.len());
        drop(waker);
        packet
    }

    /// Splits the first `at` bytes written off as a read-only [`Packet`]; this `Buf` keeps
    /// the bytes after them, and its room, and writes on after them. The packet's bytes never
    /// change: nothing writes before this `Buf`'s first byte. Allocates nothing.
    ///
    /// The buffer goes back to the pool when this `Buf` and every packet split off it (and
    /// their clones and slices) are dropped, in any order, on any threads. Afterwards
    /// [`capacity`](Buf::capacity) and [`len`](Buf::len) count from the split.
    ///
    /// # Panics
    /// If `at > len()`, with a message that says so.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 16);
    /// let mut buf = pool.try_acquire().unwrap();
    /// assert!(buf.try_extend_from_slice(b"one|tw"));
    /// let one = buf.split_to(4);
    /// assert!(buf.try_extend_from_slice(b"o|"));
    /// assert_eq!(&one[..], b"one|");
    /// assert_eq!(&buf[..], b"two|");
    /// assert_eq!(buf.capacity(), 12);
    ///
    /// drop(buf);
    /// assert_eq!(pool.available(), 0); // `one` still holds the buffer
    /// drop(one);
    /// assert_eq!(pool.available(), 1);
    /// ```
    pub fn split_to(&mut self, at: usize) -> Packet {
        assert!(
            at <= self.len(),
            "Buf::split_to: at {at} is past the {} bytes written",
            self.len()
        );
        // The waker kept while waiting is dropped once the packet holds its count: its drop
        // may panic, and the packet's drop then gives the count up.
        let waker = self.stop_watching();
        if self.shared() {
            // Relaxed: this `Buf` holds a count, so it cannot reach 0 meanwhile (as
            // `Arc::clone`).
            let before = self.packets().fetch_add(1, Ordering::Relaxed);
            if too_many(before) {
                pinfold_sync::abort();
            }
        } else {
            // One count for the packet, one for this `Buf`. Relaxed: no packet of this
            // buffer exists, so nothing else reads the count.
            self.packets().store(2, Ordering::Relaxed);
        }
        self.tag |= SHARED;
        // The packets and this `Buf` share the buffer's one count of the pool's state.
        let packet = Packet::new(self.inner, self.index(), self.offset(), at);
        // SAFETY: `at <= len`: the pointer stays at or before `written`, inside the buffer.
        self.start = unsafe { self.start.add(at) };
        drop(waker);
        packet
    }

    /// Takes back the bytes split off this `Buf` (by [`split_to`](Buf::split_to)) once no
    /// packet of them is left: the bytes written move to the buffer's start, and the whole
    /// buffer is this `Buf`'s again, its room after them. `false`, and nothing changed, while
    /// a packet split off it (or a clone or slice of one) lives. Allocates nothing; copies the
    /// bytes written.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 8);
    /// let mut buf = pool.try_acquire().unwrap();
    /// assert!(buf.try_extend_from_slice(b"one|tw"));
    /// let one = buf.split_to(4);
    /// assert_eq!(buf.capacity(), 4);
    /// assert!(!buf.try_reclaim(), "`one` still holds its bytes");
    /// drop(one);
    /// assert!(buf.try_reclaim());
    /// assert_eq!(&buf[..], b"tw");
    /// assert_eq!(buf.capacity(), 8);
    /// ```
    pub fn try_reclaim(&mut self) -> bool {
        if self.shared() {
            let _waker = self.stop_watching();
            // Acquire pairs with the Release of each packet's drop: their reads of the bytes
            // split off happen before the writes below (as `Arc::get_mut`).
            if self.packets().load(Ordering::Acquire) != 1 {
                return false;
            }
            // Only this `Buf`'s count is left, and only it could split another packet off: it
            // owns the buffer as one that never split. Relaxed: nothing else reads the count.
            self.packets().store(0, Ordering::Relaxed);
            self.tag &= !SHARED;
        }
        let first = self.inner.block.bytes(self.index()).cast::<u8>();
        let len = self.len();
        // SAFETY: this `Buf` owns the whole buffer (no packet of it is left), whose first
        // byte is `first`; the `len` bytes written from `start` lie inside it, and
        // `ptr::copy` allows the two ranges to overlap.
        unsafe { ptr::copy(self.start.as_ptr(), first.as_ptr(), len) };
        self.start = first;
        // SAFETY: `len` is at most the buffer's size: inside it or one past.
        self.written = unsafe { first.add(len) };
        true
    }

    /// Waits until no packet split off this `Buf` is left, then takes their bytes back as
    /// [`try_reclaim`](Buf::try_reclaim) does. `Ready` at once if none is left (or none was
    /// split off); else `Pending`, and the task is woken when the last is dropped, on
    /// whatever thread. Only the last poll's waker is kept; a `Buf` that is split, frozen,
    /// reclaimed or dropped stops waiting. Allocates nothing.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use pinfold_pool::BufferPool;
    ///
    /// # futures_executor::block_on(async {
    /// let pool = BufferPool::new(1, 8);
    /// let mut buf = pool.try_acquire().unwrap();
    /// assert!(buf.try_extend_from_slice(b"one|tw"));
    /// let one = buf.split_to(4);
    /// let reader = std::thread::spawn(move || assert_eq!(&one[..], b"one|"));
    /// poll_fn(|cx| buf.poll_reclaim(cx)).await; // woken when `one` is dropped
    /// reader.join().unwrap();
    /// assert_eq!(&buf[..], b"tw");
    /// assert_eq!(buf.capacity(), 8);
    /// # });
    /// ```
    pub fn poll_reclaim(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.shared() {
            let _waker = self.stop_watching();
            let meta = self.meta();
            if let Watched::Waiting = meta.waker.watch(&meta.packets, cx.waker()) {
                self.tag |= WATCHING;
                return Poll::Pending;
            }
        }
        let reclaimed = self.try_reclaim();
        debug_assert!(reclaimed, "no packet is left");
        Poll::Ready(())
    }

    /// The room after the bytes written, uninitialized as far as the caller knows: fill a
    /// prefix of it, then count those bytes as written with [`set_len`](Buf::set_len). A
    /// place to read into from a socket or file without zeroing first.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 8);
    /// let mut buf = pool.try_acquire().unwrap();
    /// let room = buf.spare_capacity_mut();
    /// assert_eq!(room.len(), 8);
    /// room[0].write(b'h');
    /// room[1].write(b'i');
    /// // SAFETY: the first two bytes of the room were written just above.
    /// unsafe { buf.set_len(2) };
    /// assert_eq!(&buf[..], b"hi");
    /// ```
    #[inline]
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: `written..end` is inside the buffer, which this `Buf` owns from `start` on
        // (packets split off lie before `start`), so nothing else touches those bytes while
        // `&mut self` is held; `MaybeUninit` asks nothing of them.
        unsafe {
            core::slice::from_raw_parts_mut(
                self.written.as_ptr().cast::<MaybeUninit<u8>>(),
                self.remaining(),
            )
        }
    }

    /// Sets how many bytes are written, as [`Vec::set_len`](alloc::vec::Vec::set_len):
    /// usually after filling a prefix of [`spare_capacity_mut`](Buf::spare_capacity_mut).
    ///
    /// # Safety
    /// `new_len <= capacity()`, and the first `new_len` bytes are initialized: those below
    /// `len()` were, and any above it were written through `spare_capacity_mut` since.
    #[inline]
    pub unsafe fn set_len(&mut self, new_len: usize) {
        debug_assert!(new_len <= self.capacity());
        // SAFETY: `new_len <= capacity` (the caller's promise): inside the buffer or one past.
        self.written = unsafe { self.start.add(new_len) };
    }

    /// Drops the first `n` bytes written: this `Buf` starts after them from now on (as a
    /// [`split_to`](Buf::split_to) whose packet is dropped at once, without touching the
    /// count).
    pub(crate) fn discard(&mut self, n: usize) {
        assert!(n <= self.len(), "Buf::discard: past the bytes written");
        // SAFETY: `n <= len`: the pointer stays at or before `written`, inside the buffer.
        self.start = unsafe { self.start.add(n) };
    }

    /// The buffer's index in the pool.
    fn index(&self) -> u32 {
        self.tag as u32
    }

    /// Whether this `Buf` holds one of the buffer's packet counts (once it has split off a
    /// packet): then its drop gives the buffer back only if it drops the last count. The
    /// count is 0 while a `Buf` that never split owns the buffer (the last packet of its
    /// previous owner took it to 0 before the buffer went back, and the acquire that handed
    /// it over reads after that), and at least this `Buf`'s 1 once it split; the `Buf` keeps
    /// which in itself, so that dropping one that never split reads nothing of the buffer's.
    #[inline]
    fn shared(&self) -> bool {
        self.tag & SHARED != 0
    }

    /// The buffer's packet count.
    fn packets(&self) -> &AtomicU32 {
        &self.meta().packets
    }

    /// The buffer's meta.
    fn meta(&self) -> &Meta {
        self.inner.block.meta(self.index())
    }

    /// Stops waiting for the packets split off (see [`poll_reclaim`](Buf::poll_reclaim)), if
    /// it waits: before anything else reads or changes the packet count. Gives the waker back,
    /// for the caller to drop once its own work is done (a waker's drop may panic).
    #[inline]
    fn stop_watching(&mut self) -> Option<Waker> {
        if self.tag & WATCHING != 0 {
            return self.unwatch();
        }
        None
    }

    #[cold]
    #[inline(never)]
    fn unwatch(&mut self) -> Option<Waker> {
        let meta = self.meta();
        let waker = meta.waker.unwatch(&meta.packets);
        self.tag &= !WATCHING;
        waker
    }

    /// Where this `Buf`'s bytes start in the buffer: how many were split off.
    fn offset(&self) -> usize {
        self.inner.block.size() - self.capacity()
    }
}

impl Deref for Buf {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this `Buf` owns the buffer, and its first `len` bytes were written by it.
        unsafe { core::slice::from_raw_parts(self.start.as_ptr(), self.len()) }
    }
}

impl DerefMut for Buf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only access.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.len()) }
    }
}

/// Appends what fits, or fails and writes nothing.
///
/// # Example
///
/// ```
/// use std::io::{ErrorKind, Write};
/// use pinfold_pool::BufferPool;
///
/// let pool = BufferPool::new(1, 8);
/// let mut buf = pool.try_acquire().unwrap();
/// buf.write_all(b"abcde").unwrap();
///
/// // Too long: nothing is written.
/// let error = buf.write_all(b"fghi").unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::WriteZero);
/// assert_eq!(&buf[..], b"abcde");
///
/// // Formatted text too: all of it, or nothing.
/// let (major, minor) = (1, 2345);
/// let error = write!(buf, "{major}.{minor}").unwrap_err();
/// assert_eq!(error.kind(), ErrorKind::WriteZero);
/// assert_eq!(&buf[..], b"abcde");
/// ```
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

    /// Appends all of the formatted text, or fails and writes nothing: with
    /// [`io::ErrorKind::WriteZero`] if it does not fit, or with [`io::ErrorKind::Other`] if
    /// a formatting trait implementation failed.
    fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> io::Result<()> {
        let before = self.written;
        let mut appender = Appender {
            buf: self,
            full: false,
        };
        // A `Display` may ignore a piece that did not fit and go on: the text is whole only if
        // no piece was refused, whatever `fmt::write` says.
        if fmt::write(&mut appender, args).is_ok() && !appender.full {
            return Ok(());
        }
        let no_room = appender.full;
        // Back to the length before the write: the pieces written are forgotten.
        self.written = before;
        if no_room {
            Err(full())
        } else {
            Err(io::Error::other("a formatting trait implementation failed"))
        }
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `fmt::Write` that appends each piece of a formatted text to a `Buf`, and notes whether
/// one did not fit.
#[cfg(feature = "std")]
struct Appender<'a> {
    buf: &'a mut Buf,
    full: bool,
}

#[cfg(feature = "std")]
impl fmt::Write for Appender<'_> {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        if self.buf.try_extend_from_slice(piece.as_bytes()) {
            Ok(())
        } else {
            self.full = true;
            Err(fmt::Error)
        }
    }
}

#[cfg(feature = "std")]
#[cold]
fn full() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the pool's buffer is full")
}

impl Drop for Buf {
    #[inline]
    fn drop(&mut self) {
        if self.tag & WATCHING != 0 {
            return self.drop_watching();
        }
        self.give_up();
    }
}

impl Buf {
    /// The drop of a `Buf` that waits for its packets: it stops, gives the buffer up, then
    /// drops the waker it kept (whose drop may panic).
    #[cold]
    #[inline(never)]
    fn drop_watching(&mut self) {
        let _waker = self.unwatch();
        self.give_up();
    }

    /// The drop's work: gives up this `Buf`'s count, and the buffer if it was the last.
    #[inline(always)]
    fn give_up(&mut self) {
        if self.shared() {
            // Release and Acquire as in a packet's drop (see `Packet::drop`): this `Buf`'s
            // writes and every packet's reads happen before the buffer goes back.
            if self.packets().fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            self.packets().load(Ordering::Acquire);
        }
        Inner::release(self.inner, self.index());
    }
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buf")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
