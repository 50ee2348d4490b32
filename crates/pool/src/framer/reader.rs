//! [`FrameReader`]: a [`Framer`] over a `tokio::io::AsyncRead`, as a stream of frames.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::io;

use futures_core::Stream;
use pin_project::pin_project;
use tokio::io::{AsyncRead, ReadBuf};

use super::{FrameError, Framer, Framing, LengthPrefixed};
use crate::acquire::Acquire;
use crate::packet::Packet;
use crate::pool::BufferPool;

/// Why a [`FrameReader`] stopped: its reader failed, or the bytes could not be framed.
#[derive(Debug)]
pub enum FrameReadError<E = core::convert::Infallible> {
    /// The reader's error.
    Io(io::Error),
    /// The bytes read could not be cut into frames.
    Frame(FrameError<E>),
}

impl<E> From<FrameError<E>> for FrameReadError<E> {
    fn from(error: FrameError<E>) -> Self {
        Self::Frame(error)
    }
}

impl<E: fmt::Display> fmt::Display for FrameReadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(error) => write!(f, "reading frames: {error}"),
            Self::Frame(error) => error.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display + 'static> std::error::Error for FrameReadError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(error) => Some(error),
            Self::Frame(error) => Some(error),
        }
    }
}

/// The frames of a `tokio::io::AsyncRead`, as a [`Stream`] of [`Packet`]s of the pool's
/// buffers (the `tokio` feature): a [`Framer`] that reads into its buffer's room with
/// `ReadBuf::uninit` (no zeroing), takes the next buffer with the pool's
/// [`acquire`](BufferPool::acquire) when one is full (waiting, in the pool's order, while none
/// is free), and ends the stream at the end of input.
///
/// It yields each frame as soon as it is complete, reading only when the bytes read hold no
/// complete frame. The end of input between frames ends the stream; inside a frame it yields
/// [`FrameError::Truncated`], then ends. After any error the stream ends. A full buffer is
/// read on in (its unconsumed bytes moved to its start) once every frame of it is dropped,
/// or else replaced by a buffer of the pool, whichever comes first, before the next read,
/// even the one that finds the end of input. Over a pool of one buffer, a frame that crosses
/// the end of the buffer waits for the frames before it to be dropped: a caller that holds
/// every frame it reads waits for ever there, as it does over any pool once it holds every
/// buffer. It borrows the pool (its `acquire` future lives inside it) and is `!Unpin`: pin it
/// to poll it.
///
/// # Example
///
/// ```
/// use std::pin::pin;
/// use futures_util::StreamExt;
/// use pinfold_pool::{BufferPool, FrameReader, LengthPrefixed};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let pool = BufferPool::new(2, 8);
/// let input: &[u8] = b"\x03abc\x04defg\x00";
/// let mut frames = pin!(FrameReader::new(&pool, LengthPrefixed::new(1), input));
/// let mut got = Vec::new();
/// while let Some(frame) = frames.next().await {
///     got.push(frame?.to_vec());
/// }
/// assert_eq!(got, [&b"abc"[..], b"defg", b""]);
/// # Ok::<(), pinfold_pool::FrameReadError>(())
/// # }).unwrap();
/// ```
#[pin_project]
pub struct FrameReader<'a, R, F = LengthPrefixed> {
    #[pin]
    reader: R,
    framer: Framer<F>,
    pool: &'a BufferPool,
    /// The wait for the next buffer, while one is awaited.
    #[pin]
    acquire: Option<Acquire<'a>>,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Reading,
    /// The reader reached its end: only the bytes read are left to frame.
    Eof,
    /// The stream ended (at the end of input or after an error).
    Done,
}

impl<'a, R: AsyncRead, F: Framing> FrameReader<'a, R, F> {
    /// The frames of `reader`, cut by `framing` (a [`LengthPrefixed`], or any [`Framing`]),
    /// in buffers of `pool`.
    pub fn new(pool: &'a BufferPool, framing: F, reader: R) -> Self {
        Self {
            reader,
            framer: Framer::with_framing(pool, framing),
            pool,
            acquire: None,
            state: State::Reading,
        }
    }

    /// The reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }
}

impl<'a, R: AsyncRead, F: Framing> Stream for FrameReader<'a, R, F> {
    type Item = Result<Packet, FrameReadError<F::Error>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            let framed = match this.state {
                State::Done => return Poll::Ready(None),
                State::Reading => this.framer.next_frame(),
                State::Eof => this.framer.finish(),
            };
            match framed {
                Ok(Some(frame)) => return Poll::Ready(Some(Ok(frame))),
                Ok(None) if *this.state == State::Eof => {
                    *this.state = State::Done;
                    return Poll::Ready(None);
                }
                Ok(None) => {}
                Err(error) => {
                    *this.state = State::Done;
                    return Poll::Ready(Some(Err(error.into())));
                }
            }
            if this.framer.needs_buffer() {
                if this.acquire.is_none() {
                    if this.framer.try_refill() {
                        continue;
                    }
                    let pool: &'a BufferPool = this.pool;
                    this.acquire.set(Some(pool.acquire()));
                }
                // The packets of the full buffer may all be dropped before a buffer of the
                // pool comes: then it is read on in, and the acquire is given up.
                if let Poll::Ready(true) = Framer::<F>::poll_reclaim(&mut this.framer.buf, cx) {
                    this.acquire.set(None);
                    continue;
                }
                let waiting = this.acquire.as_mut().as_pin_mut();
                let buf = ready!(waiting.expect("set just above").poll(cx));
                this.acquire.set(None);
                this.framer.put_buffer(buf);
                continue;
            }
            let room = this.framer.spare_capacity_mut();
            let start = room.as_ptr().cast::<u8>();
            let mut read = ReadBuf::uninit(room);
            if let Err(error) = ready!(this.reader.as_mut().poll_read(cx, &mut read)) {
                *this.state = State::Done;
                return Poll::Ready(Some(Err(FrameReadError::Io(error))));
            }
            let filled = read.filled();
            if filled.is_empty() {
                *this.state = State::Eof;
                continue;
            }
            // A reader may put another buffer in the `ReadBuf`; its bytes would not be ours.
            assert!(
                core::ptr::eq(filled.as_ptr(), start),
                "FrameReader: the reader swapped the ReadBuf's buffer"
            );
            let n = filled.len();
            // SAFETY: `filled` is the first `n` bytes of the room (checked above), which a
            // `ReadBuf` counts as filled only once they are initialized.
            unsafe { this.framer.advance(n) };
        }
    }
}

impl<R: fmt::Debug, F: fmt::Debug> fmt::Debug for FrameReader<'_, R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameReader")
            .field("reader", &self.reader)
            .field("framer", &self.framer)
            .field("waiting_for_buffer", &self.acquire.is_some())
            .finish_non_exhaustive()
    }
}
