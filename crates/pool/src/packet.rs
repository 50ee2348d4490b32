//! [`Packet`]: a frozen buffer, shared read-only.

use core::fmt;
use core::ops::{Bound, Deref, RangeBounds};

use crate::reclaim::{WATCH, too_many};
use crate::shared::{Inner, InnerRef};
use crate::sync::Ordering;

/// The bytes of a frozen [`Buf`](crate::Buf) (or a range of them), shared read-only:
/// `Clone + Send + Sync`, and neither [`clone`](Clone::clone) nor [`slice`](Packet::slice)
/// allocates. The buffer goes back to its pool when the last packet of it is dropped, on
/// whatever thread that is, and the packets' reads of it happen before its next owner
/// writes. More than `u32::MAX / 4` packets of one buffer abort the process, as `Arc` does
/// past `isize::MAX`.
///
/// # Example
///
/// ```
/// use pinfold_pool::BufferPool;
///
/// let pool = BufferPool::new(1, 64);
/// let mut buf = pool.try_acquire().unwrap();
/// assert!(buf.try_extend_from_slice(b"header:body"));
/// let packet = buf.freeze();
///
/// let copy = packet.clone();
/// drop(packet);
/// assert_eq!(pool.available(), 0); // `copy` still holds the buffer
///
/// let reader = std::thread::spawn(move || assert_eq!(&copy[..], b"header:body"));
/// reader.join().unwrap();
/// assert_eq!(pool.available(), 1); // the last packet was dropped on that thread
/// ```
pub struct Packet {
    /// The pool; the packets of a buffer share its one count of the pool's state.
    inner: InnerRef,
    /// The buffer's index, widened as in a `Buf`: a packet is moved by whole words.
    index: usize,
    start: usize,
    len: usize,
}

impl Packet {
    /// A packet of bytes `start..start + len` of buffer `index`, for which the caller
    /// counted one more packet.
    pub(crate) fn new(inner: InnerRef, index: u32, start: usize, len: usize) -> Self {
        Self {
            inner,
            index: index as usize,
            start,
            len,
        }
    }

    /// How many bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A packet of `range` of these bytes, sharing the buffer: it keeps the buffer out of the
    /// pool as a clone does. Offsets are relative to this packet.
    ///
    /// # Panics
    /// If `range` is not within `0..len()`, with a message that says so.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let mut buf = pool.try_acquire().unwrap();
    /// assert!(buf.try_extend_from_slice(b"header:body"));
    /// let packet = buf.freeze();
    ///
    /// let header = packet.slice(..6);
    /// let body = packet.slice(7..);
    /// assert_eq!(&header[..], b"header");
    /// assert_eq!(&body[..], b"body");
    /// assert_eq!(&body.slice(1..3)[..], b"od");
    ///
    /// drop((packet, header));
    /// assert_eq!(pool.available(), 0); // `body` still shares the buffer
    /// drop(body);
    /// assert_eq!(pool.available(), 1);
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Packet {
        let start = match range.start_bound() {
            Bound::Included(&start) => start,
            Bound::Excluded(&start) => start
                .checked_add(1)
                .expect("Packet::slice: range start overflows"),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&end) => end
                .checked_add(1)
                .expect("Packet::slice: range end overflows"),
            Bound::Excluded(&end) => end,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "Packet::slice: range {start}..{end} out of bounds of a packet of {} bytes",
            self.len
        );
        let mut packet = self.clone();
        packet.start += start;
        packet.len = end - start;
        packet
    }
}

impl Packet {
    /// The buffer's index in the pool.
    fn index(&self) -> u32 {
        self.index as u32
    }
}

impl Clone for Packet {
    #[inline]
    fn clone(&self) -> Self {
        // Relaxed: a new packet is made from one that is alive, so the count cannot reach 0
        // meanwhile (as `Arc::clone`).
        let before = self
            .inner
            .block
            .meta(self.index())
            .packets
            .fetch_add(1, Ordering::Relaxed);
        if too_many(before) {
            pinfold_sync::abort();
        }
        Self {
            inner: self.inner,
            index: self.index,
            start: self.start,
            len: self.len,
        }
    }
}

impl Deref for Packet {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        let start = self.inner.block.bytes(self.index()).as_ptr().cast::<u8>();
        // SAFETY: the buffer stays out of the pool while a packet of it lives, and nothing
        // writes it once frozen; `start + len` is within the bytes its `Buf` wrote.
        unsafe { core::slice::from_raw_parts(start.add(self.start), self.len) }
    }
}

/// The packet's bytes, as [`Deref`] gives them: for APIs that take any `AsRef<[u8]>` (such as
/// `bytes::Bytes::from_owner`, which then shares the buffer with no copy).
impl AsRef<[u8]> for Packet {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for Packet {
    #[inline]
    fn drop(&mut self) {
        let packets = &self.inner.block.meta(self.index()).packets;
        // Release pairs with the Acquire load of the last packet's drop: every packet's reads
        // of the bytes happen before the buffer goes back (and is written by its next owner).
        let before = packets.fetch_sub(1, Ordering::Release);
        if before != 1 {
            if before == WATCH + 3 {
                // The last packet, while the `Buf` waits for it.
                let meta = self.inner.block.meta(self.index());
                meta.waker.wake_watcher(&meta.packets);
            }
            return;
        }
        // An Acquire load rather than a fence (as `Arc` under ThreadSanitizer, which does not
        // model fences): it reads the last decrement, so it synchronizes with every Release.
        packets.load(Ordering::Acquire);
        Inner::release(self.inner, self.index());
    }
}

impl fmt::Debug for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packet")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
