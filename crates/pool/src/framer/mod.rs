//! [`Framer`]: bytes read from a stream, cut into frames, each a [`Packet`] of a pooled buffer.

use core::convert::Infallible;
use core::fmt;
use core::future::poll_fn;
use core::mem::MaybeUninit;
use core::pin::pin;
use core::task::{Context, Poll, ready};

use crate::buf::Buf;
use crate::packet::Packet;
use crate::pool::BufferPool;

#[cfg(feature = "tokio")]
mod reader;
#[cfg(feature = "tokio")]
pub use reader::{FrameReadError, FrameReader};

/// Where a frame lies at the start of the unconsumed bytes, as a [`Framing`] reports it: a
/// header of `header` bytes (dropped), then the frame's `len` bytes (the [`Packet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpan {
    /// How many bytes come before the frame's own (a length prefix), not part of its packet.
    pub header: usize,
    /// How many bytes the frame has.
    pub len: usize,
}

/// How a byte stream is cut into frames: [`LengthPrefixed`], or a function
/// ([`FnFraming`], made by [`Framer::with_fn`]).
pub trait Framing {
    /// What the framing reports when the bytes cannot be framed.
    type Error;

    /// Given the unconsumed bytes, where the first frame lies, once that is known: the span
    /// may reach past the bytes given (a length prefix read before its frame came), then the
    /// [`Framer`] waits for more. `None`: not known yet, more bytes are needed.
    ///
    /// Called again, on the same bytes and more, until the frame is complete.
    fn frame(&mut self, bytes: &[u8]) -> Result<Option<FrameSpan>, Self::Error>;
}

/// Frames that start with their length: a big-endian (or, if asked, little-endian) unsigned
/// integer of 1, 2, 4 or 8 bytes, followed by that many bytes. The frame's packet holds the
/// bytes after the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthPrefixed {
    width: usize,
    little_endian: bool,
}

impl LengthPrefixed {
    /// A big-endian prefix of `width` bytes.
    ///
    /// # Panics
    /// If `width` is not 1, 2, 4 or 8.
    pub fn new(width: usize) -> Self {
        assert!(
            matches!(width, 1 | 2 | 4 | 8),
            "LengthPrefixed: a prefix has 1, 2, 4 or 8 bytes, not {width}"
        );
        Self {
            width,
            little_endian: false,
        }
    }

    /// The same prefix, read little-endian.
    pub fn little_endian(self) -> Self {
        Self {
            little_endian: true,
            ..self
        }
    }
}

impl Framing for LengthPrefixed {
    type Error = Infallible;

    fn frame(&mut self, bytes: &[u8]) -> Result<Option<FrameSpan>, Infallible> {
        let Some(prefix) = bytes.get(..self.width) else {
            return Ok(None);
        };
        let mut word = [0; 8];
        let len = if self.little_endian {
            word[..self.width].copy_from_slice(prefix);
            u64::from_le_bytes(word)
        } else {
            word[8 - self.width..].copy_from_slice(prefix);
            u64::from_be_bytes(word)
        };
        // A length past `usize` is past any buffer: report the largest, which is too large.
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        Ok(Some(FrameSpan {
            header: self.width,
            len,
        }))
    }
}

/// A framing by a function: given the unconsumed bytes, `Ok(Some(n))` if a complete frame
/// of `n` bytes starts them (`0 < n <= bytes.len()`), `Ok(None)` if more bytes are needed,
/// or an error. Made by [`Framer::with_fn`].
pub struct FnFraming<G>(G);

impl<G, E> Framing for FnFraming<G>
where
    G: FnMut(&[u8]) -> Result<Option<usize>, E>,
{
    type Error = E;

    fn frame(&mut self, bytes: &[u8]) -> Result<Option<FrameSpan>, E> {
        let Some(len) = (self.0)(bytes)? else {
            return Ok(None);
        };
        assert!(
            0 < len && len <= bytes.len(),
            "Framer: the framing function reported a frame of {len} bytes in {} bytes; a frame \
             has at least 1 and at most all of them",
            bytes.len()
        );
        Ok(Some(FrameSpan { header: 0, len }))
    }
}

impl<G> fmt::Debug for FnFraming<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnFraming").finish_non_exhaustive()
    }
}

/// Why bytes could not be cut into frames. After it, the [`Framer`] is as it was: the stream
/// cannot go on, and the same call fails again.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError<E = Infallible> {
    /// A frame does not fit in one buffer of the pool.
    TooLarge {
        /// How many bytes the frame takes in a buffer (its header included, `usize::MAX` if
        /// more), when the framing told; `None` when it found no end of the frame in a full
        /// buffer.
        len: Option<usize>,
        /// How many bytes a buffer of the pool has.
        buffer_size: usize,
    },
    /// The input ended inside a frame.
    Truncated {
        /// How many bytes of the unfinished frame were read.
        left: usize,
    },
    /// The framing function's error.
    Framing(E),
}

impl<E: fmt::Display> fmt::Display for FrameError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge {
                len: Some(len),
                buffer_size,
            } => write!(
                f,
                "a frame of {len} bytes does not fit in a buffer of {buffer_size} bytes"
            ),
            Self::TooLarge {
                len: None,
                buffer_size,
            } => write!(
                f,
                "a frame does not end within a buffer of {buffer_size} bytes"
            ),
            Self::Truncated { left } => {
                write!(f, "the input ended inside a frame, {left} bytes into it")
            }
            Self::Framing(error) => write!(f, "framing: {error}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for FrameError<E> {}

/// Cuts a byte stream into frames, sans I/O: the caller reads the bytes (from a socket, a
/// file, a TLS stream) into the room the framer shows, tells it how many came, and takes the
/// complete frames out, each a read-only [`Packet`] of a buffer of the pool, as soon as it is
/// complete. No frame is copied, except the start of one that crosses the end of a buffer,
/// which is moved to the start of the same buffer or carried into the next.
///
/// The framer reads into one buffer at a time, until it is full. Then
/// [`needs_buffer`](Framer::needs_buffer) says so. If every packet of that buffer was dropped
/// by then, [`try_refill`](Framer::try_refill) and [`refill`](Framer::refill) read on in it:
/// the unconsumed bytes move to its start. Otherwise the framer waits for the caller to get
/// it the next: `try_refill` takes a free one without waiting, `refill` awaits one (in the
/// pool's first come, first served order) or the drop of the last packet of the full buffer,
/// whichever comes first, or [`put_buffer`](Framer::put_buffer) takes one the caller
/// acquired. No call of the framer blocks or waits, but `refill`'s future. The old buffer
/// goes back to the pool when every packet of it is dropped. While a frame's start is carried
/// over, the framer holds the old buffer and the new one at once: over a pool of one buffer,
/// a frame crossing its end cannot be carried over, and `refill` waits for the packets of the
/// buffer to be dropped; a full buffer whose every byte was taken out as frames is dropped
/// before the next is taken.
///
/// The framing sees the unconsumed bytes again as more come, so a frame read in many small
/// pieces is scanned once per piece.
///
/// # Errors
///
/// A frame longer than a buffer fails with [`FrameError::TooLarge`] (as soon as its length is
/// known, for a [`LengthPrefixed`] one); the end of input inside a frame with
/// [`FrameError::Truncated`], from [`finish`](Framer::finish); a framing function's error
/// with [`FrameError::Framing`].
///
/// # Example
///
/// ```
/// use pinfold_pool::{BufferPool, Framer, LengthPrefixed};
///
/// let pool = BufferPool::new(2, 8);
/// let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
/// let mut frames = Vec::new();
/// // Two reads: the second frame crosses the end of the first buffer.
/// for read in [&b"\x03abc\x04de"[..], b"fg\x00"] {
///     let mut read = read;
///     while !read.is_empty() {
///         if framer.needs_buffer() {
///             assert!(framer.try_refill(), "a buffer is free");
///         }
///         let n = framer.extend_from_slice(read);
///         read = &read[n..];
///         while let Some(frame) = framer.next_frame()? {
///             frames.push(frame);
///         }
///     }
/// }
/// assert!(framer.finish()?.is_none()); // the input ended between frames
/// let frames: Vec<&[u8]> = frames.iter().map(|frame| &frame[..]).collect();
/// assert_eq!(frames, [&b"abc"[..], b"defg", b""]);
/// # Ok::<(), pinfold_pool::FrameError>(())
/// ```
pub struct Framer<F> {
    pool: BufferPool,
    /// The buffer read into: its bytes are the unconsumed ones (frames taken out were split
    /// off it). `None` until the first buffer.
    buf: Option<Buf>,
    framing: F,
}

impl Framer<LengthPrefixed> {
    /// A framer of length-prefixed frames, in buffers of `pool`. It holds no buffer yet.
    pub fn new(pool: &BufferPool, framing: LengthPrefixed) -> Self {
        Self::with_framing(pool, framing)
    }
}

impl<G> Framer<FnFraming<G>> {
    /// A framer that cuts where `frame` says: given the unconsumed bytes, `Ok(Some(n))` when
    /// a complete frame of `n` bytes starts them (`0 < n <= bytes.len()`, or the framer
    /// panics), `Ok(None)` when more are needed, or an error, which
    /// [`next_frame`](Framer::next_frame) returns as [`FrameError::Framing`].
    ///
    /// # Example
    ///
    /// Lines, each frame with its `\n`:
    ///
    /// ```
    /// use core::convert::Infallible;
    /// use pinfold_pool::{BufferPool, Framer};
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let mut framer = Framer::with_fn(&pool, |bytes: &[u8]| {
    ///     Ok::<_, Infallible>(bytes.iter().position(|&b| b == b'\n').map(|at| at + 1))
    /// });
    /// assert!(framer.try_refill());
    /// framer.extend_from_slice(b"one\ntw");
    /// assert_eq!(&framer.next_frame()?.unwrap()[..], b"one\n");
    /// assert!(framer.next_frame()?.is_none());
    /// framer.extend_from_slice(b"o\n");
    /// assert_eq!(&framer.next_frame()?.unwrap()[..], b"two\n");
    /// # Ok::<(), pinfold_pool::FrameError>(())
    /// ```
    pub fn with_fn<E>(pool: &BufferPool, frame: G) -> Self
    where
        G: FnMut(&[u8]) -> Result<Option<usize>, E>,
    {
        Self::with_framing(pool, FnFraming(frame))
    }
}

impl<F: Framing> Framer<F> {
    /// A framer cutting by `framing`, in buffers of `pool`. It holds no buffer yet.
    pub fn with_framing(pool: &BufferPool, framing: F) -> Self {
        Self {
            pool: pool.clone(),
            buf: None,
            framing,
        }
    }

    /// The pool the framer's buffers come from.
    pub fn pool(&self) -> &BufferPool {
        &self.pool
    }

    /// How many bytes were read and not yet taken out as frames: the start of the next.
    pub fn buffered(&self) -> usize {
        self.buf.as_ref().map_or(0, |buf| buf.len())
    }

    /// Whether the framer has no room to read into: then it needs the next buffer, from
    /// [`try_refill`](Framer::try_refill), [`refill`](Framer::refill) or
    /// [`put_buffer`](Framer::put_buffer). True before the first buffer.
    pub fn needs_buffer(&self) -> bool {
        self.buf.as_ref().is_none_or(|buf| buf.remaining() == 0)
    }

    /// Makes room to read into once the buffer is full: in the same buffer if no packet of
    /// it is left (the unconsumed bytes move to its start, see [`Buf::try_reclaim`]), or else
    /// in a free buffer of the pool, if there is one now, taken as the next to read into (see
    /// [`put_buffer`](Framer::put_buffer)); `false` if neither. Never waits.
    pub fn try_refill(&mut self) -> bool {
        if self.reclaim() {
            return true;
        }
        self.drop_spent_buffer();
        match self.pool.try_acquire() {
            Some(buf) => {
                self.put_buffer(buf);
                true
            }
            None => false,
        }
    }

    /// Makes room to read into once the buffer is full: in the same buffer if no packet of
    /// it is left (as [`try_refill`](Framer::try_refill)), or else waits for a buffer of the
    /// pool (see [`BufferPool::acquire`]) and takes it as the next to read into (see
    /// [`put_buffer`](Framer::put_buffer)), or for the last packet of the full buffer to be
    /// dropped (see [`Buf::poll_reclaim`]) and reads on in it, whichever comes first.
    /// Cancel-safe: dropped before it completes, it changes nothing.
    pub async fn refill(&mut self) {
        if self.reclaim() {
            return;
        }
        self.drop_spent_buffer();
        let acquired = {
            let Self { pool, buf, .. } = &mut *self;
            let mut acquire = pin!(pool.acquire());
            // The packets of the full buffer may all be dropped before a buffer of the pool
            // comes: then it is read on in, and the acquire is given up.
            poll_fn(|cx| match Self::poll_reclaim(buf, cx) {
                Poll::Ready(true) => Poll::Ready(None),
                _ => acquire.as_mut().poll(cx).map(Some),
            })
            .await
        };
        if let Some(buf) = acquired {
            self.put_buffer(buf);
        }
    }

    /// Takes `buf` as the buffer to read into, emptied, and carries the unconsumed bytes of
    /// the one before into it (the start of the next frame). The one before is dropped: it
    /// goes back to the pool when the packets of it are dropped.
    ///
    /// # Panics
    /// If the unconsumed bytes do not fit in `buf` (only a buffer of another, smaller pool is
    /// that small).
    pub fn put_buffer(&mut self, mut buf: Buf) {
        buf.clear();
        if let Some(old) = self.buf.take() {
            assert!(
                buf.try_extend_from_slice(&old),
                "Framer::put_buffer: {} unconsumed bytes do not fit in a buffer of {}",
                old.len(),
                buf.capacity()
            );
        }
        self.buf = Some(buf);
    }

    /// Makes room in the buffer when it is full and no packet of it is left: the unconsumed
    /// bytes move to its start. `false` if it has room, or none came (a packet holds its
    /// bytes, or the unconsumed bytes fill the whole buffer, which may be one of another,
    /// smaller pool than the framer's: see [`put_buffer`](Framer::put_buffer)).
    fn reclaim(&mut self) -> bool {
        match &mut self.buf {
            Some(buf) if buf.remaining() == 0 => buf.try_reclaim() && buf.remaining() > 0,
            _ => false,
        }
    }

    /// As [`reclaim`](Framer::reclaim), waiting: `Ready(true)` once no packet of the full
    /// buffer is left and its room is made; `Pending` while packets of it live (the task is
    /// woken when the last is dropped); `Ready(false)` if no room can come this way (no
    /// buffer, room left, or the unconsumed bytes fill the whole buffer).
    fn poll_reclaim(buf: &mut Option<Buf>, cx: &mut Context<'_>) -> Poll<bool> {
        match buf {
            Some(buf) if buf.remaining() == 0 => {
                ready!(buf.poll_reclaim(cx));
                Poll::Ready(buf.remaining() > 0)
            }
            _ => Poll::Ready(false),
        }
    }

    /// Drops the buffer if it is full and every byte of it was taken out as frames: it has
    /// nothing to carry over, and may go back to the pool (if no packet holds it) before the
    /// next is taken.
    fn drop_spent_buffer(&mut self) {
        if self.needs_buffer() && self.buffered() == 0 {
            self.buf = None;
        }
    }

    /// The room to read into: empty when [`needs_buffer`](Framer::needs_buffer). Fill a
    /// prefix of it, then count those bytes with [`advance`](Framer::advance).
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        match &mut self.buf {
            Some(buf) => buf.spare_capacity_mut(),
            None => &mut [],
        }
    }

    /// Counts the first `n` bytes of [`spare_capacity_mut`](Framer::spare_capacity_mut) as
    /// read.
    ///
    /// # Panics
    /// If `n` is more than the room (a bound the caller's contract already sets).
    ///
    /// # Safety
    /// `n` is at most the room's length, and its first `n` bytes were written since the room
    /// was borrowed.
    pub unsafe fn advance(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let buf = self
            .buf
            .as_mut()
            .expect("Framer::advance: no room to advance in");
        assert!(
            n <= buf.remaining(),
            "Framer::advance: {n} bytes past the room of {}",
            buf.remaining()
        );
        // SAFETY: `len + n <= capacity` (checked above), and the caller wrote the `n` bytes
        // of the room after `len`.
        unsafe { buf.set_len(buf.len() + n) };
    }

    /// Copies as many of `bytes` as fit into the room, and returns how many: bytes that came
    /// from elsewhere than a read into the room (a decryption, a test).
    pub fn extend_from_slice(&mut self, bytes: &[u8]) -> usize {
        let Some(buf) = &mut self.buf else {
            return 0;
        };
        let n = bytes.len().min(buf.remaining());
        let copied = buf.try_extend_from_slice(&bytes[..n]);
        debug_assert!(copied);
        n
    }

    /// The next complete frame, taken out of the bytes read; `None` if the bytes read hold
    /// none (read more, into the next buffer if [`needs_buffer`](Framer::needs_buffer)).
    /// Frames come in the order of the stream.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] if the frame does not fit in a buffer, and
    /// [`FrameError::Framing`] if the framing fails; the framer is left as it was.
    pub fn next_frame(&mut self) -> Result<Option<Packet>, FrameError<F::Error>> {
        let buffer_size = self.pool.buffer_size();
        let Some(buf) = &mut self.buf else {
            return Ok(None);
        };
        let too_large = |len| FrameError::TooLarge { len, buffer_size };
        let Some(span) = self.framing.frame(buf).map_err(FrameError::Framing)? else {
            return if buf.len() >= buffer_size {
                Err(too_large(None))
            } else {
                Ok(None)
            };
        };
        // A frame whose end is past `usize` is past any buffer: it takes `usize::MAX`.
        let end = span.header.saturating_add(span.len);
        if end > buffer_size {
            return Err(too_large(Some(end)));
        }
        if end > buf.len() {
            return Ok(None);
        }
        buf.discard(span.header);
        Ok(Some(buf.split_to(span.len)))
    }

    /// The next complete frame once the input has ended: as
    /// [`next_frame`](Framer::next_frame), but `None` only when no byte is left (the input
    /// ended between frames).
    ///
    /// # Errors
    /// As `next_frame`, and [`FrameError::Truncated`] if the bytes left are not a whole
    /// frame.
    pub fn finish(&mut self) -> Result<Option<Packet>, FrameError<F::Error>> {
        match self.next_frame()? {
            Some(frame) => Ok(Some(frame)),
            None if self.buffered() == 0 => Ok(None),
            None => Err(FrameError::Truncated {
                left: self.buffered(),
            }),
        }
    }
}

impl<F: fmt::Debug> fmt::Debug for Framer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Framer")
            .field("framing", &self.framing)
            .field("buffered", &self.buf.as_ref().map_or(0, |buf| buf.len()))
            .field("pool", &self.pool)
            .finish()
    }
}
