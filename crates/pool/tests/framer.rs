//! Framing: bytes read in any pieces come out as the frames they encode, in order, each a
//! packet of a pooled buffer; a frame crossing the end of a buffer is carried into the next;
//! a frame larger than a buffer, the input ending inside a frame, and a framing function's
//! error fail with what went wrong; every buffer goes back once the packets are dropped.

mod support;

use std::convert::Infallible;

use pinfold_pool::{BufferPool, FrameError, Framer, Framing, LengthPrefixed, Packet};
use support::{XorShift, block_on, counting_waker, poll_once, poll_with};

/// `frames`, each after its length in a prefix of `width` bytes.
fn encode(frames: &[Vec<u8>], width: usize, little_endian: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
        let len = frame.len() as u64;
        if little_endian {
            out.extend_from_slice(&len.to_le_bytes()[..width]);
        } else {
            out.extend_from_slice(&len.to_be_bytes()[8 - width..]);
        }
        out.extend_from_slice(frame);
    }
    out
}

/// Frames of the lengths `lens`, each byte telling its frame and place.
fn frames_of(lens: &[usize]) -> Vec<Vec<u8>> {
    lens.iter()
        .enumerate()
        .map(|(i, &len)| (0..len).map(|at| (i * 31 + at) as u8).collect())
        .collect()
}

/// Reads `input` into `framer` in pieces of the sizes `piece` gives (cut to the room), as a
/// socket read does (into the room, then `advance`), taking every frame out after each read
/// and taking a free buffer whenever the framer needs one; then ends the input. The frames
/// are kept as packets.
fn read_all<F: Framing>(
    framer: &mut Framer<F>,
    input: &[u8],
    mut piece: impl FnMut() -> usize,
) -> Result<Vec<Packet>, FrameError<F::Error>> {
    let mut frames = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        if framer.needs_buffer() {
            assert!(framer.try_refill(), "the pool has a free buffer");
        }
        let room = framer.spare_capacity_mut();
        let n = piece().clamp(1, room.len()).min(rest.len());
        for (slot, &byte) in room.iter_mut().zip(&rest[..n]) {
            slot.write(byte);
        }
        // SAFETY: the first `n` bytes of the room were written just above.
        unsafe { framer.advance(n) };
        rest = &rest[n..];
        while let Some(frame) = framer.next_frame()? {
            frames.push(frame);
        }
    }
    while let Some(frame) = framer.finish()? {
        frames.push(frame);
    }
    Ok(frames)
}

fn bytes_of(packets: &[Packet]) -> Vec<Vec<u8>> {
    packets.iter().map(|packet| packet.to_vec()).collect()
}

/// Newline-delimited frames, each with its `\n`.
fn line(bytes: &[u8]) -> Result<Option<usize>, Infallible> {
    Ok(bytes.iter().position(|&b| b == b'\n').map(|at| at + 1))
}

#[test]
fn frames_read_one_byte_at_a_time_come_out_whole() {
    let frames = frames_of(&[0, 1, 5, 13, 2, 0, 7]);
    for width in [1, 2, 4, 8] {
        for little_endian in [false, true] {
            let pool = BufferPool::new(32, 24);
            let mut prefix = LengthPrefixed::new(width);
            if little_endian {
                prefix = prefix.little_endian();
            }
            let mut framer = Framer::new(&pool, prefix);
            let input = encode(&frames, width, little_endian);
            let got = read_all(&mut framer, &input, || 1).unwrap();
            assert_eq!(bytes_of(&got), frames, "width {width}");
        }
    }
}

#[test]
fn frames_read_in_random_pieces_come_out_whole() {
    let seeds = if cfg!(miri) { 3 } else { 300 };
    for seed in 1..=seeds {
        let mut rng = XorShift::new(seed);
        let lens: Vec<usize> = (0..rng.below(12)).map(|_| rng.below(14)).collect();
        let frames = frames_of(&lens);
        let pool = BufferPool::new(32, 16);
        let mut framer = Framer::new(&pool, LengthPrefixed::new(2));
        let input = encode(&frames, 2, false);
        let got = read_all(&mut framer, &input, || 1 + rng.below(20)).unwrap();
        assert_eq!(bytes_of(&got), frames, "seed {seed}");
    }
}

#[test]
fn lines_read_in_any_pieces_come_out_whole() {
    let input = b"one\n\ntwo three\nfour\n";
    let lines: Vec<&[u8]> = vec![b"one\n", b"\n", b"two three\n", b"four\n"];
    let seeds = if cfg!(miri) { 2 } else { 100 };
    for seed in 0..seeds {
        let mut rng = XorShift::new(seed + 1);
        let pool = BufferPool::new(8, 12);
        let mut framer = Framer::with_fn(&pool, line);
        let piece = move || if seed == 0 { 1 } else { 1 + rng.below(8) };
        let got = read_all(&mut framer, input, piece).unwrap();
        assert_eq!(bytes_of(&got), lines, "seed {seed}");
    }
}

#[test]
fn a_frame_crossing_the_end_of_a_buffer_is_carried_into_the_next() {
    let pool = BufferPool::new(3, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    // The second frame starts at byte 4 of the first buffer and ends in the second.
    let frames = frames_of(&[3, 6]);
    let got = read_all(&mut framer, &encode(&frames, 1, false), || 8).unwrap();
    assert_eq!(bytes_of(&got), frames);
    drop(framer);
    assert_eq!(pool.available(), 1, "the packets hold two buffers");
    drop(got);
    assert_eq!(pool.available(), 3);
}

#[test]
fn a_frame_of_exactly_a_buffer_fits() {
    let pool = BufferPool::new(8, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    let frames = frames_of(&[7, 7, 0]);
    let got = read_all(&mut framer, &encode(&frames, 1, false), || 3).unwrap();
    assert_eq!(bytes_of(&got), frames);

    let mut framer = Framer::with_fn(&pool, line);
    let got = read_all(&mut framer, b"1234567\nabc\n", || 5).unwrap();
    assert_eq!(bytes_of(&got), [&b"1234567\n"[..], b"abc\n"]);
}

#[test]
fn a_frame_larger_than_a_buffer_fails_once_its_length_is_known() {
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(2));
    assert!(framer.try_refill());
    assert_eq!(framer.extend_from_slice(&[0]), 1);
    assert!(matches!(framer.next_frame(), Ok(None)));
    assert_eq!(framer.extend_from_slice(&[7]), 1);
    let error = framer.next_frame().unwrap_err();
    assert_eq!(
        error,
        FrameError::TooLarge {
            len: Some(9),
            buffer_size: 8
        }
    );
    assert_eq!(
        error.to_string(),
        "a frame of 9 bytes does not fit in a buffer of 8 bytes"
    );
    assert_eq!(framer.next_frame().unwrap_err(), error, "the error stays");
}

#[test]
fn a_prefix_whose_frame_ends_past_usize_is_too_large_with_its_length() {
    // u64::MAX plus the 8-byte prefix: a length that was read, saturated at usize::MAX, not
    // the `None` of a frame whose end was not found.
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(8));
    assert!(framer.try_refill());
    framer.extend_from_slice(&[0xff; 8]);
    assert_eq!(
        framer.next_frame().unwrap_err(),
        FrameError::TooLarge {
            len: Some(usize::MAX),
            buffer_size: 8
        }
    );
}

#[test]
fn a_function_framing_finding_no_end_in_a_full_buffer_fails() {
    let pool = BufferPool::new(4, 8);
    let mut framer = Framer::with_fn(&pool, line);
    let error = read_all(&mut framer, b"ab\n12345678\n", || 4).unwrap_err();
    assert_eq!(
        error,
        FrameError::TooLarge {
            len: None,
            buffer_size: 8
        }
    );
    assert_eq!(
        error.to_string(),
        "a frame does not end within a buffer of 8 bytes"
    );
}

#[test]
fn the_end_of_input_inside_a_frame_names_the_bytes_left() {
    let pool = BufferPool::new(4, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    let error = read_all(&mut framer, b"\x01a\x05abc", || 2).unwrap_err();
    assert_eq!(error, FrameError::Truncated { left: 4 });
    assert_eq!(
        error.to_string(),
        "the input ended inside a frame, 4 bytes into it"
    );

    // Inside the prefix.
    let mut framer = Framer::new(&pool, LengthPrefixed::new(4));
    let error = read_all(&mut framer, b"\x00\x00", || 1).unwrap_err();
    assert_eq!(error, FrameError::Truncated { left: 2 });
}

#[test]
fn the_end_of_input_between_frames_gives_none() {
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    assert!(
        matches!(framer.finish(), Ok(None)),
        "before any byte or buffer"
    );
    assert!(framer.try_refill());
    framer.extend_from_slice(b"\x02ab");
    assert_eq!(&framer.finish().unwrap().unwrap()[..], b"ab");
    assert!(matches!(framer.finish(), Ok(None)));
}

#[test]
fn a_framing_function_error_is_returned() {
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::with_fn(&pool, |bytes: &[u8]| {
        if bytes.contains(&0) {
            Err("a zero byte")
        } else {
            Ok(None)
        }
    });
    assert!(framer.try_refill());
    framer.extend_from_slice(b"ab");
    assert!(matches!(framer.next_frame(), Ok(None)));
    framer.extend_from_slice(b"\0");
    let error = framer.next_frame().unwrap_err();
    assert_eq!(error, FrameError::Framing("a zero byte"));
    assert_eq!(error.to_string(), "framing: a zero byte");
}

#[test]
fn every_buffer_goes_back_when_the_framer_and_packets_drop() {
    let pool = BufferPool::new(8, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    let frames = frames_of(&[3, 5, 1, 6, 2, 0, 4, 7, 3]);
    let got = read_all(&mut framer, &encode(&frames, 1, false), || 3).unwrap();
    assert_eq!(bytes_of(&got), frames);
    assert!(pool.available() < 8);
    let (first, rest) = got.split_at(1);
    let first = first.to_vec();
    drop(rest.to_vec());
    drop(got);
    drop(framer);
    assert_eq!(pool.available(), 7, "the first frame holds its buffer");
    drop(first);
    assert_eq!(pool.available(), 8);
}

#[test]
fn refill_waits_for_a_buffer_and_carries_the_frame_start() {
    let pool = BufferPool::new(2, 4);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    assert!(framer.needs_buffer());
    assert!(framer.try_refill());
    assert_eq!(framer.extend_from_slice(b"\x01a\x02b"), 4);
    let a = framer.next_frame().unwrap().unwrap();
    assert!(matches!(framer.next_frame(), Ok(None)));
    assert!(framer.needs_buffer());
    assert_eq!(framer.buffered(), 2);

    let held = pool.try_acquire().unwrap();
    assert!(!framer.try_refill(), "no buffer is free");
    {
        let mut refill = Box::pin(framer.refill());
        assert!(poll_once(&mut refill).is_pending());
        drop(held);
        block_on(refill);
    }
    assert!(!framer.needs_buffer());
    assert_eq!(
        framer.extend_from_slice(b"cde"),
        2,
        "the room after the carried bytes"
    );
    assert_eq!(&framer.next_frame().unwrap().unwrap()[..], b"bc");
    assert_eq!(&a[..], b"a");
}

#[test]
fn reading_without_a_buffer_reads_nothing() {
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    assert!(framer.spare_capacity_mut().is_empty());
    assert_eq!(framer.extend_from_slice(b"abc"), 0);
    assert!(matches!(framer.next_frame(), Ok(None)));
}

#[test]
fn a_spent_buffer_goes_back_before_the_next_is_taken() {
    let pool = BufferPool::new(1, 4);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    for frame in [b"abc", b"def", b"ghi"] {
        if framer.needs_buffer() {
            assert!(framer.try_refill(), "the one buffer came back");
        }
        assert_eq!(framer.extend_from_slice(&[3]), 1);
        assert_eq!(framer.extend_from_slice(frame), 3);
        assert_eq!(&framer.next_frame().unwrap().unwrap()[..], frame);
    }
    assert!(framer.needs_buffer());
    assert!(framer.try_refill());
    drop(framer);
    assert_eq!(pool.available(), 1);
}

#[test]
fn a_framer_shows_its_framing_the_bytes_it_holds_and_its_pool_in_debug() {
    let pool = BufferPool::new(2, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    assert!(framer.try_refill());
    assert_eq!(framer.extend_from_slice(b"\x03ab"), 3);
    assert_eq!(
        format!("{framer:?}"),
        "Framer { framing: LengthPrefixed { width: 1, little_endian: false }, buffered: 3, \
         pool: BufferPool { capacity: 2, buffer_size: 8, available: 1 } }"
    );
    let by_fn = Framer::with_fn(&pool, line);
    assert_eq!(
        format!("{by_fn:?}"),
        "Framer { framing: FnFraming { .. }, buffered: 0, \
         pool: BufferPool { capacity: 2, buffer_size: 8, available: 1 } }",
        "a framer without a buffer holds no bytes"
    );
}

#[test]
fn a_full_buffer_whose_frames_were_dropped_is_read_on_in_place() {
    // A pool of one buffer: no other could come, so the frame crossing the end moves to the
    // buffer's start once the frame before it is dropped, and not before.
    let pool = BufferPool::new(1, 8);
    let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
    assert!(framer.try_refill());
    assert_eq!(framer.extend_from_slice(b"\x02ab\x05cdefg"), 8);
    let first = framer.next_frame().unwrap().unwrap();
    assert!(framer.next_frame().unwrap().is_none());
    assert!(framer.needs_buffer());
    assert!(!framer.try_refill(), "the first frame holds its bytes");
    drop(first);
    assert!(framer.try_refill());
    assert!(!framer.needs_buffer());
    assert_eq!(framer.buffered(), 5);
    assert_eq!(framer.spare_capacity_mut().len(), 3);
    assert_eq!(framer.extend_from_slice(b"g"), 1);
    assert_eq!(&framer.next_frame().unwrap().unwrap()[..], b"cdefg");
    // Before the buffer is full, `try_refill` takes a free buffer of the pool, and there is
    // none: the bytes stay where they are. So does `refill`, which waits for one.
    assert!(!framer.needs_buffer());
    assert!(!framer.try_refill());
    assert_eq!(framer.spare_capacity_mut().len(), 2);
    let mut refill = Box::pin(framer.refill());
    assert!(
        poll_once(&mut refill).is_pending(),
        "no buffer of the pool is free"
    );
    drop(refill);
    assert_eq!(framer.spare_capacity_mut().len(), 2);
}

#[test]
fn refill_reads_on_in_its_buffer_once_its_frames_are_dropped_though_no_buffer_comes() {
    // Over a pool of one (and over two, the other held for good), a refill that waits is
    // woken by the drop of the last frame of its full buffer, and reads on in it.
    for count in [1, 2] {
        let pool = BufferPool::new(count, 4);
        let held = (count == 2).then(|| pool.try_acquire().unwrap());
        let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
        assert!(framer.try_refill());
        assert_eq!(framer.extend_from_slice(b"\x01a\x02b"), 4);
        let a = framer.next_frame().unwrap().unwrap();
        assert!(matches!(framer.next_frame(), Ok(None)));
        let (waker, wakes) = counting_waker();
        {
            let mut refill = Box::pin(framer.refill());
            assert!(poll_with(&mut refill, &waker).is_pending());
            assert_eq!(&a[..], b"a");
            drop(a);
            assert_eq!(wakes.count(), 1, "the frame's drop wakes the refill");
            assert!(poll_with(&mut refill, &waker).is_ready());
        }
        assert_eq!(
            framer.extend_from_slice(b"cde"),
            2,
            "the room before the frame's start"
        );
        assert_eq!(&framer.next_frame().unwrap().unwrap()[..], b"bc");
        assert_eq!(pool.available(), 0);
        drop((framer, held));
        assert_eq!(pool.available(), count);
    }
}

#[test]
fn a_refill_of_a_full_buffer_from_a_smaller_pool_leaves_room_to_read_into() {
    let pool = BufferPool::new(1, 8);
    let small = BufferPool::new(1, 4);
    for awaited in [false, true] {
        let mut framer = Framer::new(&pool, LengthPrefixed::new(1));
        framer.put_buffer(small.try_acquire().unwrap());
        assert_eq!(framer.extend_from_slice(b"\x05abcde"), 4);
        assert!(matches!(framer.next_frame(), Ok(None)));
        assert!(framer.needs_buffer());
        if awaited {
            block_on(framer.refill());
        } else {
            assert!(framer.try_refill(), "the pool's buffer is free");
        }
        assert!(!framer.needs_buffer(), "a refill leaves room");
        assert_eq!(framer.extend_from_slice(b"de"), 2);
        assert_eq!(&framer.next_frame().unwrap().unwrap()[..], b"abcde");
        drop(framer);
        assert_eq!((pool.available(), small.available()), (1, 1));
    }
}

#[test]
fn frames_dropped_as_they_come_are_read_on_in_the_same_buffer() {
    let seeds = if cfg!(miri) { 3 } else { 300 };
    for seed in 1..=seeds {
        let mut rng = XorShift::new(seed);
        let lens: Vec<usize> = (0..rng.below(24)).map(|_| rng.below(15)).collect();
        let frames = frames_of(&lens);
        let input = encode(&frames, 2, false);
        // Over one buffer every frame is dropped before the next read; over three, one frame
        // at a time may be held for a while (its buffer out of reach).
        for count in [1, 3] {
            let pool = BufferPool::new(count, 16);
            let mut framer = Framer::new(&pool, LengthPrefixed::new(2));
            let mut rest = &input[..];
            let mut got = Vec::new();
            // A frame held, and its index: its bytes must not change while it is.
            let mut held: Option<(usize, Packet)> = None;
            let check = |held: Option<(usize, Packet)>| {
                if let Some((at, frame)) = held {
                    assert_eq!(frame[..], frames[at][..], "seed {seed}: frame {at} held");
                }
            };
            while !rest.is_empty() {
                if framer.needs_buffer() {
                    assert!(framer.try_refill(), "seed {seed}: a buffer, or its own");
                }
                let n = framer.extend_from_slice(&rest[..(1 + rng.below(20)).min(rest.len())]);
                rest = &rest[n..];
                while let Some(frame) = framer.next_frame().unwrap() {
                    got.push(frame.to_vec());
                    if count > 1 && rng.below(2) == 0 {
                        check(held.replace((got.len() - 1, frame)));
                    }
                }
                if rng.below(3) == 0 {
                    check(held.take());
                }
            }
            while let Some(frame) = framer.finish().unwrap() {
                got.push(frame.to_vec());
            }
            assert_eq!(got, frames, "seed {seed}, {count} buffers");
            check(held);
            drop(framer);
            assert_eq!(pool.available(), count);
        }
    }
}
