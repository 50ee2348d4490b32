//! `FrameReader`: the frames of an `AsyncRead`, read in any pieces and with pending reads
//! between them, come out whole and in order; it waits for a buffer while none is free; the
//! end of input inside a frame, a frame larger than a buffer and a read error are yielded,
//! then the stream ends; every buffer goes back once the packets are dropped.
// The reader is the `tokio` feature's.
#![cfg(feature = "tokio")]

mod support;

use std::collections::VecDeque;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use futures_util::StreamExt;
use pinfold_pool::{BufferPool, FrameError, FrameReadError, FrameReader, LengthPrefixed};
use support::{XorShift, block_on, counting_waker, poll_once, poll_with};
use tokio::io::{AsyncRead, ReadBuf};

/// What a scripted reader does at one read.
enum Step {
    Bytes(Vec<u8>),
    /// Returns `Pending` once, having woken the task.
    Pending,
    Fail,
}

/// An `AsyncRead` that follows its script, then reports the end of input.
struct Script(VecDeque<Step>);

impl AsyncRead for Script {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.0.pop_front() {
            None => Poll::Ready(Ok(())),
            Some(Step::Pending) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(Step::Fail) => Poll::Ready(Err(io::Error::other("the peer is gone"))),
            Some(Step::Bytes(mut bytes)) => {
                let n = bytes.len().min(buf.remaining());
                buf.put_slice(&bytes[..n]);
                if n < bytes.len() {
                    self.0.push_front(Step::Bytes(bytes.split_off(n)));
                }
                Poll::Ready(Ok(()))
            }
        }
    }
}

/// `input` in pieces of the sizes `piece` gives, a pending read after each when `pending`.
fn script(input: &[u8], mut piece: impl FnMut() -> usize, pending: bool) -> Script {
    let mut steps = VecDeque::new();
    let mut rest = input;
    while !rest.is_empty() {
        let n = piece().clamp(1, rest.len());
        steps.push_back(Step::Bytes(rest[..n].to_vec()));
        if pending {
            steps.push_back(Step::Pending);
        }
        rest = &rest[n..];
    }
    Script(steps)
}

/// `frames`, each after its length in 2 big-endian bytes.
fn encode(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
        out.extend_from_slice(&(frame.len() as u16).to_be_bytes());
        out.extend_from_slice(frame);
    }
    out
}

/// Everything the reader yields, to its end.
fn collect(reader: FrameReader<'_, Script>) -> Vec<Result<Vec<u8>, FrameReadError>> {
    block_on(async {
        let mut reader = pin!(reader);
        let mut out = Vec::new();
        while let Some(item) = reader.next().await {
            out.push(item.map(|frame| frame.to_vec()));
        }
        out
    })
}

#[test]
fn frames_read_in_any_pieces_come_out_whole() {
    let seeds = if cfg!(miri) { 3 } else { 200 };
    for seed in 0..seeds {
        let mut rng = XorShift::new(seed + 1);
        let frames: Vec<Vec<u8>> = (0..1 + rng.below(8))
            .map(|i| vec![i as u8; rng.below(12)])
            .collect();
        let input = encode(&frames);
        let pool = BufferPool::new(4, 16);
        let piece = move || if seed == 0 { 1 } else { 1 + rng.below(20) };
        let reader = FrameReader::new(
            &pool,
            LengthPrefixed::new(2),
            script(&input, piece, seed % 2 == 1),
        );
        let got: Vec<Vec<u8>> = collect(reader).into_iter().map(Result::unwrap).collect();
        assert_eq!(got, frames, "seed {seed}");
        assert_eq!(pool.available(), 4, "every buffer is back");
    }
}

#[test]
fn the_end_of_input_inside_a_frame_is_yielded_then_the_stream_ends() {
    let pool = BufferPool::new(2, 16);
    let reader = FrameReader::new(
        &pool,
        LengthPrefixed::new(2),
        script(b"\x00\x01a\x00\x05ab", || 3, false),
    );
    let got = collect(reader);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].as_ref().unwrap(), b"a");
    assert!(matches!(
        got[1],
        Err(FrameReadError::Frame(FrameError::Truncated { left: 4 }))
    ));
}

#[test]
fn a_frame_larger_than_a_buffer_is_yielded_then_the_stream_ends() {
    let pool = BufferPool::new(2, 8);
    let reader = FrameReader::new(
        &pool,
        LengthPrefixed::new(2),
        script(b"\x00\x09abcdefghi\x00\x00", || 4, false),
    );
    let got = collect(reader);
    assert_eq!(got.len(), 1);
    assert!(matches!(
        got[0],
        Err(FrameReadError::Frame(FrameError::TooLarge {
            len: Some(11),
            buffer_size: 8
        }))
    ));
}

#[test]
fn over_one_buffer_a_frame_crossing_its_end_comes_whole_once_the_frames_before_are_dropped() {
    // The third frame starts 6 bytes into the pool's only buffer and ends past it. The frames
    // before it were dropped as they came: the reader moves its start to the buffer's start
    // and reads the rest after it, in the same buffer.
    let pool = BufferPool::new(1, 8);
    let input = script(b"\x00\x01a\x00\x01b\x00\x04cdef\x00\x01g", || 16, false);
    let got = collect(FrameReader::new(&pool, LengthPrefixed::new(2), input));
    let got: Vec<Vec<u8>> = got.into_iter().map(Result::unwrap).collect();
    assert_eq!(got, [&b"a"[..], b"b", b"cdef", b"g"]);
    assert_eq!(pool.available(), 1);
}

#[test]
fn over_one_buffer_a_frame_crossing_its_end_waits_for_the_frames_before_to_be_dropped() {
    // As above, with the frames before it still held: the reader waits, and is woken by the
    // drop of the last of them, not before; then it reads the frame on in the same buffer.
    let pool = BufferPool::new(1, 8);
    let input = script(b"\x00\x01a\x00\x01b\x00\x04cdef", || 16, false);
    let mut reader = pin!(FrameReader::new(&pool, LengthPrefixed::new(2), input));
    let (waker, wakes) = counting_waker();
    let Poll::Ready(Some(Ok(a))) = poll_with(&mut reader.next(), &waker) else {
        panic!("the first frame is read at once");
    };
    let Poll::Ready(Some(Ok(b))) = poll_with(&mut reader.next(), &waker) else {
        panic!("the second frame is read at once");
    };
    assert!(
        poll_with(&mut reader.next(), &waker).is_pending(),
        "the frames before hold the buffer"
    );
    drop(a);
    assert_eq!(wakes.count(), 0, "a frame before is still held");
    drop(b);
    assert_eq!(wakes.count(), 1);
    let Poll::Ready(Some(Ok(cdef))) = poll_with(&mut reader.next(), &waker) else {
        panic!("the crossing frame is read on in the same buffer");
    };
    assert_eq!(&cdef[..], b"cdef");
    drop(cdef);
    assert!(matches!(
        poll_with(&mut reader.next(), &waker),
        Poll::Ready(None)
    ));
}

#[test]
fn a_read_error_is_yielded_then_the_stream_ends() {
    let pool = BufferPool::new(2, 8);
    let mut steps = script(b"\x00\x01a\x00", || 8, false);
    steps.0.push_back(Step::Fail);
    steps.0.push_back(Step::Bytes(b"\x01b".to_vec()));
    let got = collect(FrameReader::new(&pool, LengthPrefixed::new(2), steps));
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].as_ref().unwrap(), b"a");
    let Err(FrameReadError::Io(error)) = &got[1] else {
        panic!("the read error comes out");
    };
    assert_eq!(error.to_string(), "the peer is gone");
}

#[test]
fn the_reader_waits_for_a_buffer_while_none_is_free() {
    let pool = BufferPool::new(2, 4);
    let input = script(b"\x00\x01a\x00\x02bc", || 8, false);
    let mut reader = pin!(FrameReader::new(&pool, LengthPrefixed::new(2), input));
    let Poll::Ready(Some(Ok(a))) = poll_once(&mut reader.next()) else {
        panic!("the first frame is read at once");
    };
    assert_eq!(&a[..], b"a");
    assert_eq!(pool.available(), 1);
    let held = pool.try_acquire().unwrap();
    assert!(
        poll_once(&mut reader.next()).is_pending(),
        "no buffer is free"
    );
    drop(held);
    let Poll::Ready(Some(Ok(bc))) = poll_once(&mut reader.next()) else {
        panic!("the buffer given back is taken");
    };
    assert_eq!(&bc[..], b"bc");
    assert_eq!(&a[..], b"a");
    // The buffer is full: even the end of input is read into the next one.
    assert!(poll_once(&mut reader.next()).is_pending());
    drop(a);
    assert!(matches!(poll_once(&mut reader.next()), Poll::Ready(None)));
}

#[test]
fn a_reader_waiting_for_a_buffer_is_woken_when_the_frames_of_its_own_are_dropped() {
    // The other buffer is held for good. The reader's buffer is full, its first frame is
    // held, and the second frame crosses its end: the reader waits. Dropping the first frame
    // lets it read on in its own buffer, so it must be woken then, not when a buffer of the
    // pool comes back.
    let pool = BufferPool::new(2, 4);
    let held = pool.try_acquire().unwrap();
    let input = script(b"\x00\x01a\x00\x01b", || 8, false);
    let mut reader = pin!(FrameReader::new(&pool, LengthPrefixed::new(2), input));
    let (waker, wakes) = counting_waker();
    let Poll::Ready(Some(Ok(a))) = poll_with(&mut reader.next(), &waker) else {
        panic!("the first frame is read at once");
    };
    assert!(poll_with(&mut reader.next(), &waker).is_pending());
    assert_eq!(wakes.count(), 0);
    drop(a);
    assert_eq!(wakes.count(), 1, "the drop of the frame wakes the reader");
    let Poll::Ready(Some(Ok(b))) = poll_with(&mut reader.next(), &waker) else {
        panic!("the second frame is read on in the same buffer");
    };
    assert_eq!(&b[..], b"b");
    drop(b);
    assert!(matches!(
        poll_with(&mut reader.next(), &waker),
        Poll::Ready(None)
    ));
    assert_eq!(
        pool.available(),
        0,
        "the ended reader keeps its buffer until dropped"
    );
    drop(held);
    assert_eq!(pool.available(), 1);
}

#[test]
fn a_read_error_says_what_went_wrong_and_gives_its_cause() {
    use std::error::Error;
    let io = FrameReadError::<std::convert::Infallible>::Io(io::Error::other("the peer is gone"));
    assert_eq!(io.to_string(), "reading frames: the peer is gone");
    assert_eq!(io.source().unwrap().to_string(), "the peer is gone");
    let frame = FrameReadError::<std::convert::Infallible>::from(FrameError::Truncated { left: 3 });
    assert_eq!(
        frame.to_string(),
        FrameError::<std::convert::Infallible>::Truncated { left: 3 }.to_string()
    );
    assert_eq!(
        frame.source().unwrap().to_string(),
        frame.to_string(),
        "the frame error is the cause"
    );
}

/// An `AsyncRead` at the end of its input.
#[derive(Debug)]
struct Ended;

impl AsyncRead for Ended {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[test]
fn a_reader_shows_its_reader_its_framer_and_whether_it_waits_in_debug() {
    let pool = BufferPool::new(1, 4);
    let held = pool.try_acquire().unwrap();
    let mut reader = pin!(FrameReader::new(&pool, LengthPrefixed::new(1), Ended));
    let shown = |waiting: bool| {
        format!(
            "FrameReader {{ reader: Ended, framer: Framer {{ framing: LengthPrefixed {{ width: 1, \
             little_endian: false }}, buffered: 0, pool: BufferPool {{ capacity: 1, \
             buffer_size: 4, available: 0 }} }}, waiting_for_buffer: {waiting}, .. }}"
        )
    };
    assert_eq!(format!("{reader:?}"), shown(false));
    assert!(
        poll_once(&mut reader.next()).is_pending(),
        "no buffer is free"
    );
    assert_eq!(format!("{reader:?}"), shown(true));
    drop(held);
    assert!(matches!(poll_once(&mut reader.next()), Poll::Ready(None)));
}
