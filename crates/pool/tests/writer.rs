//! The batching writer: delivery once and in order, abandoned messages, waiting for buffers,
//! flushes of a partly filled buffer, and the errors of a message too large and of a dropped
//! flusher.

mod support;

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::thread;

use pinfold_pool::{Batch, BufferPool, Flusher, ReserveError, Writer, writer};
use pinfold_testkit::panicking_waker::{WAKE_BY_REF_PANIC, WAKE_PANIC, WakerOps, panicking_waker};
use support::{XorShift, block_on, counting_waker, panic_message, poll_once, poll_with};

/// A task that writes `bytes` as one message on `writer`, then gives the handle back.
fn send(mut writer: Writer, bytes: &'static [u8]) -> Pin<Box<dyn Future<Output = Writer>>> {
    Box::pin(async move {
        let mut room = writer.reserve(bytes.len()).await.unwrap();
        room.copy_from_slice(bytes);
        room.commit();
        writer
    })
}

/// Everything the flusher delivers until it is finished, as one byte string.
fn drain(flusher: &mut Flusher) -> Vec<u8> {
    let mut sent = Vec::new();
    while let Some(batch) = block_on(flusher.next_batch()) {
        append(&mut sent, &batch);
    }
    sent
}

/// What the flusher has ready now.
fn ready(flusher: &mut Flusher) -> Vec<u8> {
    let mut sent = Vec::new();
    while let Some(batch) = flusher.try_next_batch() {
        append(&mut sent, &batch);
    }
    sent
}

/// Appends the bytes of `batch` to `sent`, checking that it holds no empty packet (a run of
/// abandoned rooms gives none).
fn append(sent: &mut Vec<u8>, batch: &Batch<'_>) {
    for packet in batch.iter() {
        assert!(!packet.is_empty(), "an empty packet in a batch");
        sent.extend_from_slice(packet);
    }
}

/// Writes `bytes` as one message, without waiting.
fn put(writer: &mut Writer, bytes: &[u8]) {
    let mut message = writer.try_reserve(bytes.len()).expect("room");
    message.copy_from_slice(bytes);
    message.commit();
}

/// Message `seq` of writer `id`: a length byte, the id, the sequence number, then filler, in
/// all 6 to 21 bytes.
fn message(id: u8, seq: u32) -> Vec<u8> {
    let len = 6 + (seq as usize * 7 + id as usize) % 16;
    let mut bytes = vec![len as u8, id];
    bytes.extend_from_slice(&seq.to_le_bytes());
    bytes.extend((6..len).map(|at| (at as u8) ^ id));
    bytes
}

/// Cuts a stream of [`message`]s back into `(id, seq)`, checking each one's bytes.
fn parse(mut stream: &[u8]) -> Vec<(u8, u32)> {
    let mut out = Vec::new();
    while !stream.is_empty() {
        let len = stream[0] as usize;
        let id = stream[1];
        let seq = u32::from_le_bytes(stream[2..6].try_into().unwrap());
        assert_eq!(&stream[..len], &message(id, seq)[..], "a message was torn");
        out.push((id, seq));
        stream = &stream[len..];
    }
    out
}

#[test]
fn many_writers_on_many_threads_deliver_every_message_once_in_order() {
    // One lane: every handle writes in the same buffer.
    many_writers_on_many_threads(4);
}

#[test]
fn many_writers_in_lanes_of_their_own_deliver_every_message_once_in_order() {
    // Eight lanes: the four handles write in buffers of their own.
    many_writers_on_many_threads(64);
}

/// Four handles on four threads each write numbered messages through one writer over a pool of
/// `buffers` buffers of 128 bytes; the flusher gets each once, each handle's in order.
fn many_writers_on_many_threads(buffers: usize) {
    let writers = 4;
    let per_writer: u32 = if cfg!(miri) { 40 } else { 5_000 };
    let pool = BufferPool::new(buffers, 128);
    let (writer, mut flusher) = writer::channel(&pool);
    let handles: Vec<_> = (0..writers)
        .map(|id| {
            let mut writer = writer.clone();
            thread::spawn(move || {
                block_on(async {
                    for seq in 0..per_writer {
                        let bytes = message(id, seq);
                        let mut room = writer.reserve(bytes.len()).await.unwrap();
                        room.copy_from_slice(&bytes);
                        room.commit();
                    }
                })
            })
        })
        .collect();
    drop(writer);
    let sent = drain(&mut flusher);
    for handle in handles {
        handle.join().unwrap();
    }
    let mut next = vec![0; writers as usize];
    for (id, seq) in parse(&sent) {
        assert_eq!(
            seq, next[id as usize],
            "writer {id}'s messages out of order"
        );
        next[id as usize] += 1;
    }
    assert!(next.iter().all(|&count| count == per_writer), "{next:?}");
    assert_eq!(pool.available(), pool.capacity());
}

#[test]
fn several_messages_share_a_buffer_and_a_batch() {
    let pool = BufferPool::new(2, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    for word in [&b"ab"[..], b"cd", b"ef"] {
        put(&mut writer, word);
    }
    assert_eq!(pool.available(), 1, "three messages, one buffer");
    writer.flush();
    let batch = flusher.try_next_batch().expect("a flush was asked for");
    assert_eq!(batch.len(), 1, "one run of one buffer");
    assert_eq!(&batch[0][..], b"abcdef");
}

#[test]
fn a_full_buffer_goes_to_the_flusher_without_a_flush() {
    let pool = BufferPool::new(3, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    put(&mut writer, b"12345");
    assert!(flusher.try_next_batch().is_none(), "not full, not asked");
    put(&mut writer, b"6789"); // does not fit: the first buffer is sealed
    assert_eq!(ready(&mut flusher), b"12345");
    assert_eq!(pool.available(), 2, "the flushed buffer went back");
    drop(writer);
    assert_eq!(drain(&mut flusher), b"6789");
    assert!(flusher.is_finished());
}

#[test]
fn an_abandoned_reservation_loses_only_its_message() {
    let pool = BufferPool::new(2, 64);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"<a>");
    let mut lost = first.try_reserve(4).unwrap();
    lost.copy_from_slice(b"LOST");
    put(&mut second, b"<b>"); // after the abandoned room
    drop(lost);
    put(&mut first, b"<c>");
    let mut tail = second.try_reserve(5).unwrap(); // the last room: handed out again
    tail.copy_from_slice(b"GONE!");
    drop(tail);
    put(&mut second, b"<d>");
    drop((first, second));
    assert_eq!(drain(&mut flusher), b"<a><b><c><d>");
    assert_eq!(pool.available(), 2);
}

#[test]
fn room_given_back_by_an_abandoned_reservation_is_zeroed_again() {
    let pool = BufferPool::new(1, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut lost = writer.try_reserve(16).unwrap();
    lost.fill(0xAB);
    drop(lost);
    let room = writer.try_reserve(16).unwrap();
    assert_eq!(
        &room[..],
        [0; 16],
        "an abandoned message's bytes in new room"
    );
    room.commit();
    writer.flush();
    assert_eq!(ready(&mut flusher), [0; 16]);
}

#[test]
fn the_room_of_an_abandoned_last_reservation_is_handed_out_again() {
    let pool = BufferPool::new(2, 16);
    let (mut writer, mut flusher) = writer::channel(&pool);
    put(&mut writer, b"1234");
    drop(writer.try_reserve(8).unwrap());
    let available = pool.available();
    put(&mut writer, b"56789012");
    assert_eq!(
        pool.available(),
        available,
        "the 8 bytes given back hold the next message"
    );
    drop(writer);
    assert_eq!(drain(&mut flusher), b"123456789012");
}

#[test]
fn commits_and_abandons_in_a_buffer_being_filled_do_not_wake_the_flusher() {
    let pool = BufferPool::new(2, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let (waker, wakes) = counting_waker();
    let mut next = pin!(flusher.next_batch());
    assert!(poll_with(&mut next, &waker).is_pending());
    put(&mut writer, b"a");
    let mut kept = writer.try_reserve(1).unwrap();
    kept[0] = b'b';
    let packet = kept.commit_packet();
    drop(writer.try_reserve(1).unwrap());
    assert_eq!(wakes.count(), 0, "nothing for the flusher yet");
    writer.flush();
    assert_eq!(wakes.count(), 1, "the flush woke it");
    let Poll::Ready(Some(batch)) = poll_with(&mut next, &waker) else {
        panic!("the flushed messages");
    };
    assert_eq!(batch.bytes(), 2);
    assert_eq!(&packet[..], b"b");
}

#[test]
fn abandoned_rooms_of_any_length_and_place_are_skipped() {
    let rounds = if cfg!(miri) { 200 } else { 20_000 };
    let pool = BufferPool::new(3, 256);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    let mut rng = XorShift::new(7);
    let mut expected = Vec::new();
    let mut sent = Vec::new();
    for round in 0..rounds {
        let byte = (round % 251) as u8;
        let (len, lost_len) = (1 + rng.below(90), 1 + rng.below(90));
        // The abandoned room comes before or after the kept one, and ends before or after it.
        let (mut kept, mut lost) = if rng.below(2) == 0 {
            let kept = first.try_reserve(len).unwrap();
            (kept, second.try_reserve(lost_len).unwrap())
        } else {
            let lost = second.try_reserve(lost_len).unwrap();
            (first.try_reserve(len).unwrap(), lost)
        };
        kept.fill(byte);
        lost.fill(0xFF);
        if rng.below(2) == 0 {
            drop(lost);
            kept.commit();
        } else {
            kept.commit();
            drop(lost);
        }
        expected.extend(std::iter::repeat_n(byte, len));
        sent.extend(ready(&mut flusher));
    }
    drop((first, second));
    sent.extend(drain(&mut flusher));
    assert!(!sent.contains(&0xFF), "an abandoned room was delivered");
    assert_eq!(sent, expected);
    assert_eq!(pool.available(), pool.capacity());
}

#[test]
fn a_writer_task_dropped_mid_message_loses_only_that_message() {
    let pool = BufferPool::new(2, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut other = writer.clone();
    put(&mut writer, b"kept|");
    let mut task = Box::pin(async move {
        let mut room = writer.reserve(6).await.unwrap();
        room.copy_from_slice(b"torn..");
        std::future::pending::<()>().await;
        room.commit();
    });
    assert!(poll_once(&mut task).is_pending());
    put(&mut other, b"after|");
    assert!(ready(&mut flusher).is_empty());
    drop(task); // mid-message
    drop(other);
    assert_eq!(drain(&mut flusher), b"kept|after|");
}

#[test]
fn reservations_of_two_handles_end_in_any_order() {
    let pool = BufferPool::new(1, 64);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    let mut a = first.try_reserve(1).unwrap();
    let mut b = second.try_reserve(1).unwrap();
    a[0] = b'a';
    b[0] = b'b';
    b.commit();
    second.flush();
    assert!(ready(&mut flusher).is_empty(), "`a` is still open");
    a.commit();
    assert_eq!(ready(&mut flusher), b"ab", "in reservation order");
}

#[test]
fn a_flush_with_a_reservation_open_waits_for_it_and_moves_writers_on() {
    let pool = BufferPool::new(3, 64);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"1");
    let mut open = first.try_reserve(1).unwrap();
    second.flush();
    assert!(flusher.try_next_batch().is_none());
    put(&mut second, b"3"); // into a new buffer: the first takes no more
    assert_eq!(pool.available(), 1);
    open[0] = b'2';
    open.commit();
    assert_eq!(ready(&mut flusher), b"12");
    second.flush();
    assert_eq!(ready(&mut flusher), b"3");
}

#[test]
fn the_commit_that_ends_a_sealed_buffers_last_reservation_wakes_the_flusher() {
    let pool = BufferPool::new(2, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut open = writer.try_reserve(1).unwrap();
    flusher.flush_open();
    let (waker, wakes) = counting_waker();
    {
        let mut next = pin!(flusher.next_batch());
        assert!(
            poll_with(&mut next, &waker).is_pending(),
            "the buffer, sealed for the flush, waits for its reservation"
        );
        open[0] = b'x';
        open.commit();
        assert_eq!(wakes.count(), 1, "the commit woke the flusher");
        let Poll::Ready(Some(batch)) = poll_with(&mut next, &waker) else {
            panic!("the flushed buffer is ready");
        };
        assert_eq!(batch.bytes(), 1);
    }
    // The sealed buffer is no longer the one being filled: the next message opens another,
    // and wakes nobody.
    let mut next = pin!(flusher.next_batch());
    assert!(poll_with(&mut next, &waker).is_pending());
    put(&mut writer, b"y");
    assert_eq!(
        wakes.count(),
        1,
        "a message in a new buffer wakes no flusher"
    );
    writer.flush();
    assert_eq!(wakes.count(), 2);
    let Poll::Ready(Some(batch)) = poll_with(&mut next, &waker) else {
        panic!("the flushed message");
    };
    assert_eq!(&batch[0][..], b"y");
}

#[test]
fn a_flush_reaches_a_buffer_behind_one_with_a_reservation_open() {
    // Four buffers: one lane.
    let pool = BufferPool::new(4, 16);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    let mut open = first.try_reserve(10).unwrap();
    open.fill(b'a');
    put(&mut second, b"bbbbbbbbbb"); // does not fit: the first buffer is sealed
    second.flush();
    assert!(ready(&mut flusher).is_empty(), "the first buffer is open");
    open.commit();
    assert_eq!(
        ready(&mut flusher),
        b"aaaaaaaaaabbbbbbbbbb",
        "the flush asked for covers the second buffer"
    );
    put(&mut second, b"c");
    assert!(
        ready(&mut flusher).is_empty(),
        "nothing asked for a flush since"
    );
    second.flush();
    assert_eq!(ready(&mut flusher), b"c");
}

#[test]
fn a_flushed_buffer_that_is_not_full_takes_more_messages() {
    let pool = BufferPool::new(1, 64);
    let (mut writer, mut flusher) = writer::channel(&pool);
    put(&mut writer, b"one");
    writer.flush();
    assert_eq!(ready(&mut flusher), b"one");
    put(&mut writer, b"two");
    flusher.flush_open();
    assert_eq!(ready(&mut flusher), b"two");
    assert_eq!(pool.available(), 0, "still the buffer being filled");
    drop(writer);
    assert!(drain(&mut flusher).is_empty());
    assert_eq!(pool.available(), 1);
}

#[test]
fn clones_take_lanes_in_turn_and_a_lane_keeps_its_own_buffer() {
    // 16 buffers: two lanes.
    let pool = BufferPool::new(16, 8);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    let mut third = first.clone();
    put(&mut first, b"a");
    put(&mut second, b"b");
    assert_eq!(
        pool.available(),
        14,
        "the second handle writes in a lane of its own"
    );
    put(&mut third, b"c");
    assert_eq!(
        pool.available(),
        14,
        "the third shares the first one's lane"
    );
    first.flush();
    let sent = ready(&mut flusher);
    assert_eq!(sent.len(), 3);
    let at = |byte: u8| sent.iter().position(|&b| b == byte).unwrap();
    assert!(
        at(b'a') < at(b'c'),
        "one lane's messages in order: {sent:?}"
    );
}

#[test]
fn a_writer_short_of_buffers_seals_the_other_lanes_buffers() {
    // 16 buffers of 4 bytes: two lanes. The first handle's buffer is half full; the second
    // fills the other 15; its next reservation finds the pool exhausted.
    let pool = BufferPool::new(16, 4);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"aa");
    for _ in 0..15 {
        put(&mut second, b"bbbb");
    }
    assert_eq!(second.try_reserve(4).unwrap_err(), ReserveError::WouldWait);
    let sent = ready(&mut flusher);
    assert!(
        sent.starts_with(b"aa"),
        "the half-full buffer was sealed for the flusher: {sent:?}"
    );
    assert_eq!(sent.len(), 2 + 15 * 4, "every buffer was sealed");
    assert!(pool.available() > 0, "flushed buffers are back");
    put(&mut second, b"cccc");
}

#[test]
fn a_writer_that_finds_a_free_buffer_leaves_the_other_lanes_buffers_open() {
    // 16 buffers of 4 bytes: two lanes. The first handle's buffer is half full; the second
    // fills three, finding each next one free in the pool.
    let pool = BufferPool::new(16, 4);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"aa");
    for _ in 0..3 {
        let mut room = block_on(second.reserve(4)).unwrap();
        room.copy_from_slice(b"bbbb");
        room.commit();
    }
    let sent = ready(&mut flusher);
    assert!(
        !sent.contains(&b'a'),
        "the half-full buffer stays open: {sent:?}"
    );
    let available = pool.available();
    put(&mut first, b"cc");
    assert_eq!(pool.available(), available, "it takes more messages");
    first.flush();
    assert!(ready(&mut flusher).starts_with(b"aacc"));
}

#[test]
fn a_buffer_a_writer_waited_for_takes_more_messages() {
    // Its wait sealed the lanes' buffers, but not the one it is handed after; and so at every
    // wait, not only the first.
    let pool = BufferPool::new(2, 4);
    let (mut writer, mut flusher) = writer::channel(&pool);
    for wait in 1..=2 {
        while let Ok(mut room) = writer.try_reserve(4) {
            room.copy_from_slice(b"full");
            room.commit();
        }
        {
            let mut waiting = pin!(writer.reserve(1));
            assert!(poll_once(&mut waiting).is_pending(), "every buffer is full");
            assert!(ready(&mut flusher).ends_with(b"full"));
            let mut room = block_on(waiting).unwrap();
            room[0] = b'x';
            room.commit();
        }
        assert_eq!(
            ready(&mut flusher),
            b"",
            "wait {wait}: nothing to flush yet"
        );
        let available = pool.available();
        put(&mut writer, b"y");
        assert_eq!(pool.available(), available, "wait {wait}: the same buffer");
        writer.flush();
        assert_eq!(ready(&mut flusher), b"xy");
    }
}

#[test]
fn a_buffer_another_lane_opens_after_a_writer_began_waiting_reaches_the_flusher() {
    // 16 buffers: two lanes, one per handle.
    a_buffer_opened_after_a_writer_began_waiting_reaches_the_flusher(16);
}

#[test]
fn a_buffer_the_same_lane_opens_after_a_writer_began_waiting_reaches_the_flusher() {
    // 4 buffers: one lane, both handles in it.
    a_buffer_opened_after_a_writer_began_waiting_reaches_the_flusher(4);
}

/// Over a pool of `buffers` buffers of 4 bytes, the second handle fills all but one and waits
/// for another. The caller keeps the packets of all but one of the buffers the flusher then
/// takes (as one that holds them until they are sent would), so the one that goes back is
/// handed to the second handle. The first handle, short of a buffer, waits too, and seals the
/// lanes; only after that does the second open its buffer, write a message and idle. The
/// flusher gets that buffer, and the first handle gets it back, with no flush asked for.
fn a_buffer_opened_after_a_writer_began_waiting_reaches_the_flusher(buffers: usize) {
    let pool = BufferPool::new(buffers, 4);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"aa");
    for _ in 1..buffers {
        put(&mut second, b"bbbb");
    }
    let (waker, _) = counting_waker();
    let mut served = send(second, b"cc");
    assert!(
        poll_with(&mut served, &waker).is_pending(),
        "the pool is exhausted"
    );
    let kept = {
        let batch = flusher.try_next_batch().expect("every buffer was sealed");
        assert_eq!(batch.len(), buffers);
        batch[1..].to_vec()
    };
    assert_eq!(pool.available(), 0, "the buffer went to the waiting handle");

    let (first_waker, first_wakes) = counting_waker();
    let mut waiting = send(first, b"dd");
    assert!(
        poll_with(&mut waiting, &first_waker).is_pending(),
        "the pool is empty"
    );
    let Poll::Ready(second) = poll_with(&mut served, &waker) else {
        panic!("handed a buffer, yet pending");
    };
    let sent = ready(&mut flusher);
    let Poll::Ready(first) = poll_with(&mut waiting, &first_waker) else {
        panic!("the waiting handle got no buffer, with no flush asked for");
    };
    assert_eq!(first_wakes.count(), 1, "the waiting handle was woken");
    assert_eq!(
        sent, b"cc",
        "the second handle's buffer reached the flusher"
    );

    drop(kept);
    drop((first, second));
    assert_eq!(drain(&mut flusher), b"dd");
    assert_eq!(pool.available(), buffers);
}

/// A handle that waited for a buffer opens it after another handle sealed the lanes, so it
/// wakes the flusher to seal it; that wake (the flusher task's waker) panics. The panic
/// reaches the reserving task, and the room it had opened is abandoned, not left open: the
/// flusher still gets the buffer, ends once the handles are gone, and every buffer comes back.
#[test]
fn a_flusher_wake_that_panics_as_a_new_buffer_opens_abandons_the_room() {
    let pool = BufferPool::new(2, 4);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    put(&mut first, b"aaaa");
    put(&mut first, b"bbbb");
    let (waker, wakes) = counting_waker();
    let mut waiting = send(first, b"cc");
    assert!(
        poll_with(&mut waiting, &waker).is_pending(),
        "the pool is exhausted"
    );
    // The second handle waits too, sealing the lanes, and gives up.
    let mut sealing = Box::pin(async move { drop(second.reserve(2).await) });
    assert!(poll_with(&mut sealing, &waker).is_pending());
    drop(sealing);
    let sent = ready(&mut flusher);
    assert_eq!(sent, b"aaaabbbb");
    let (flusher_waker, switches) = panicking_waker();
    switches.panic_once(WakerOps::WAKE);
    assert!(poll_with(&mut pin!(flusher.next_batch()), &flusher_waker).is_pending());
    assert_eq!(
        wakes.count(),
        1,
        "the buffers came back to the waiting handle"
    );
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiting, &waker)))
        .expect_err("the flusher's wake panicked in the reservation");
    assert_eq!(panic_message(&*panic), WAKE_PANIC);
    drop(waiting);
    assert_eq!(drain(&mut flusher), b"", "the abandoned room is skipped");
    assert_eq!(pool.available(), 2);
}

/// The flusher takes a batch and gives back a buffer it is done with, which goes to a writer
/// waiting for one; that writer's wake panics. The panic reaches the flusher's caller, and the
/// batch it took is the next one: no message is lost.
#[test]
fn a_writer_wake_that_panics_as_the_flusher_gives_a_buffer_back_loses_no_message() {
    let pool = BufferPool::new(2, 8);
    let (mut first, mut flusher) = writer::channel(&pool);
    put(&mut first, b"aaaa");
    first.flush();
    let kept = ready(&mut flusher);
    assert_eq!(kept, b"aaaa");
    // The first buffer has no room for this: sealed, it waits for the flusher to let it go.
    put(&mut first, b"bbbbbb");
    put(&mut first, b"cc");
    let (waker, switches) = panicking_waker();
    let mut waiting = send(first, b"dddddddd");
    assert!(
        poll_with(&mut waiting, &waker).is_pending(),
        "both buffers are out"
    );
    switches.panic_once(WakerOps::WAKE | WakerOps::WAKE_BY_REF);
    let panic = catch_unwind(AssertUnwindSafe(|| flusher.try_next_batch().map(|_| ())))
        .expect_err("the waiting writer's wake panicked in the flusher's call");
    assert!([WAKE_PANIC, WAKE_BY_REF_PANIC].contains(&panic_message(&*panic)));
    assert_eq!(
        ready(&mut flusher),
        b"bbbbbbcc",
        "the batch taken comes next"
    );
    assert!(
        poll_with(&mut waiting, &waker).is_ready(),
        "the writer got its buffer"
    );
    drop(waiting);
    assert_eq!(drain(&mut flusher), b"dddddddd");
    assert_eq!(pool.available(), 2);
}

/// Two handles wait for buffers; the second gets one and opens it, so the first, handed a
/// buffer too, reserves in that one and gives its own back, to a task waiting in the pool
/// whose wake panics. The first's room was already reserved: it is abandoned, not left open,
/// so the buffer reaches the flusher and the flusher ends.
#[test]
fn a_wake_that_panics_as_a_writer_gives_back_a_buffer_it_did_not_need_abandons_its_room() {
    let pool = BufferPool::new(2, 4);
    let (mut first, mut flusher) = writer::channel(&pool);
    let second = first.clone();
    put(&mut first, b"aaaa");
    put(&mut first, b"bbbb");
    let (waker, _) = counting_waker();
    let mut waiting = send(first, b"cc");
    assert!(
        poll_with(&mut waiting, &waker).is_pending(),
        "the pool is exhausted"
    );
    let mut opening = send(second, b"dd");
    assert!(poll_with(&mut opening, &waker).is_pending());
    assert_eq!(
        ready(&mut flusher),
        b"aaaabbbb",
        "both buffers go back, one to each"
    );
    let (task_waker, switches) = panicking_waker();
    let mut acquire = pin!(pool.acquire());
    assert!(poll_with(&mut acquire, &task_waker).is_pending());
    switches.panic_once(WakerOps::WAKE | WakerOps::WAKE_BY_REF);
    assert!(
        poll_with(&mut opening, &waker).is_ready(),
        "the second opens its buffer"
    );
    let panic = catch_unwind(AssertUnwindSafe(|| poll_with(&mut waiting, &waker)))
        .expect_err("the waiting task's wake panicked as the first gave its buffer back");
    assert!([WAKE_PANIC, WAKE_BY_REF_PANIC].contains(&panic_message(&*panic)));
    drop(waiting);
    drop(opening);
    assert!(
        poll_with(&mut acquire, &task_waker).is_ready(),
        "the buffer went to the task"
    );
    assert_eq!(drain(&mut flusher), b"dd", "the first's room is skipped");
    assert_eq!(pool.available(), 2);
}

#[test]
fn writers_wait_for_the_flusher_when_the_pool_is_exhausted() {
    let pool = BufferPool::new(2, 4);
    let (mut writer, mut flusher) = writer::channel(&pool);
    put(&mut writer, b"aaaa");
    put(&mut writer, b"bbbb");
    assert_eq!(writer.try_reserve(4).unwrap_err(), ReserveError::WouldWait);
    let (waker, wakes) = counting_waker();
    let mut blocked = Box::pin(async {
        let mut room = writer.reserve(4).await.unwrap();
        room.copy_from_slice(b"cccc");
        room.commit();
        writer
    });
    assert!(poll_with(&mut blocked, &waker).is_pending());
    assert_eq!(ready(&mut flusher), b"aaaabbbb", "both are full");
    assert_eq!(
        wakes.count(),
        1,
        "the buffer flushed went to the waiting writer"
    );
    let Poll::Ready(writer) = poll_with(&mut blocked, &waker) else {
        panic!("woken with a buffer, yet pending");
    };
    drop(writer);
    assert_eq!(drain(&mut flusher), b"cccc");
}

#[test]
fn a_message_larger_than_a_buffer_is_refused() {
    let pool = BufferPool::new(1, 8);
    let (mut writer, _flusher) = writer::channel(&pool);
    let error = writer.try_reserve(9).unwrap_err();
    assert_eq!(
        error,
        ReserveError::TooLarge {
            len: 9,
            buffer_size: 8
        }
    );
    assert!(block_on(writer.reserve(8)).is_ok(), "a whole buffer fits");
}

#[test]
fn a_flusher_is_finished_once_every_writer_is_gone_and_every_message_given() {
    let pool = BufferPool::new(2, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    assert!(!flusher.is_finished(), "a writer may still write");
    put(&mut writer, b"abc");
    put(&mut writer, b"de");
    drop(writer);
    assert!(!flusher.is_finished(), "a message is not given yet");
    let batch = block_on(flusher.next_batch()).expect("the messages");
    assert_eq!(
        batch.bytes(),
        5,
        "a batch counts the bytes of all its packets"
    );
    drop(batch);
    assert!(flusher.is_finished());
    assert!(block_on(flusher.next_batch()).is_none());
}

#[test]
fn the_writers_types_show_what_they_hold_in_debug() {
    let pool = BufferPool::new(2, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    assert_eq!(format!("{writer:?}"), "Writer { buffer_size: 8, .. }");
    assert_eq!(format!("{flusher:?}"), "Flusher { .. }");
    let room = writer.try_reserve(3).unwrap();
    assert_eq!(format!("{room:?}"), "Reservation { len: 3, .. }");
    room.commit();
    writer.flush();
    let batch = flusher.try_next_batch().expect("the flushed message");
    assert_eq!(format!("{batch:?}"), "Batch { packets: 1, .. }");
}

#[test]
fn a_reserve_error_says_what_went_wrong() {
    let too_large = ReserveError::TooLarge {
        len: 9,
        buffer_size: 8,
    };
    assert_eq!(
        too_large.to_string(),
        "a message of 9 bytes does not fit in a buffer of 8 bytes"
    );
    assert_eq!(ReserveError::Closed.to_string(), "the flusher was dropped");
    assert_eq!(
        ReserveError::WouldWait.to_string(),
        "no room without waiting for a buffer"
    );
}

#[test]
fn a_dropped_flusher_fails_reservations_and_gives_the_buffers_back() {
    let pool = BufferPool::new(2, 4);
    let (mut writer, flusher) = writer::channel(&pool);
    let mut other = writer.clone();
    put(&mut writer, b"full");
    let open = writer.try_reserve(2).unwrap();
    let mut waiting = pin!(other.reserve(4)); // the pool is exhausted
    assert!(poll_once(&mut waiting).is_pending());
    drop(flusher);
    // The full buffer went back, to the waiting writer, which fails.
    assert_eq!(block_on(waiting).unwrap_err(), ReserveError::Closed);
    assert_eq!(pool.available(), 1, "the open reservation holds its buffer");
    drop(open);
    assert_eq!(pool.available(), 2);
    assert_eq!(writer.try_reserve(1).unwrap_err(), ReserveError::Closed);
}

#[test]
fn a_writer_whose_flusher_is_gone_is_refused_though_every_buffer_is_held() {
    let pool = BufferPool::new(1, 4);
    let (mut writer, flusher) = writer::channel(&pool);
    let kept = writer.try_reserve(4).unwrap().commit_packet();
    drop(flusher);
    assert_eq!(pool.available(), 0, "the packet kept holds the buffer");
    assert_eq!(writer.try_reserve(1).unwrap_err(), ReserveError::Closed);
    assert!(matches!(
        poll_once(&mut pin!(writer.reserve(1))),
        Poll::Ready(Err(ReserveError::Closed))
    ));
    drop(kept);
    assert_eq!(pool.available(), 1);
}

#[test]
fn a_committed_packet_outlives_the_flush() {
    let pool = BufferPool::new(1, 16);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut room = writer.try_reserve(5).unwrap();
    room.copy_from_slice(b"hello");
    let kept = room.commit_packet();
    drop(writer);
    assert_eq!(drain(&mut flusher), b"hello");
    assert_eq!(pool.available(), 0, "the packet holds the buffer");
    assert_eq!(&kept[..], b"hello");
    drop(kept);
    assert_eq!(pool.available(), 1);
}

#[cfg(feature = "std")]
#[test]
fn a_batch_writes_all_its_packets_through_io_write() {
    let pool = BufferPool::new(4, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    for word in [&b"abcdef"[..], b"ghijk", b"lmn", b"o"] {
        put(&mut writer, word);
    }
    drop(writer);
    let mut out = Vec::new();
    while let Some(batch) = block_on(flusher.next_batch()) {
        batch.write_all_to(&mut out).unwrap();
    }
    assert_eq!(out, b"abcdefghijklmno");
}

/// A sink that takes at most `most` bytes a write, and (if `pending`) is not ready at every
/// other write, waking its task first; a write of `Ok(0)` once `left` reaches 0.
#[cfg(feature = "std")]
struct ShortWrites {
    out: Vec<u8>,
    most: usize,
    // An `io::Write` cannot be pending: the async sink's only.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pending: bool,
    calls: usize,
    left: usize,
}

#[cfg(feature = "std")]
impl ShortWrites {
    fn new(most: usize, pending: bool) -> Self {
        Self {
            out: Vec::new(),
            most,
            pending,
            calls: 0,
            left: usize::MAX,
        }
    }

    /// One write of `slices`: what the next call takes of them.
    fn take(&mut self, slices: &[std::io::IoSlice<'_>]) -> usize {
        let mut budget = self.most.min(self.left);
        for slice in slices {
            let n = slice.len().min(budget);
            self.out.extend_from_slice(&slice[..n]);
            budget -= n;
        }
        let taken = self.most.min(self.left) - budget;
        self.left -= taken;
        taken
    }
}

#[cfg(feature = "std")]
impl std::io::Write for ShortWrites {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_vectored(&[std::io::IoSlice::new(bytes)])
    }

    fn write_vectored(&mut self, slices: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        self.calls += 1;
        Ok(self.take(slices))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "tokio")]
impl tokio::io::AsyncWrite for ShortWrites {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_vectored(cx, &[std::io::IoSlice::new(bytes)])
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        slices: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.calls += 1;
        if self.pending && self.calls % 2 == 1 {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Ok(self.take(slices)))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Four messages across two buffers: the batches' packets, several a buffer.
#[cfg(feature = "std")]
fn four_messages(pool: &BufferPool) -> Flusher {
    let (mut writer, flusher) = writer::channel(pool);
    for word in [&b"abcdef"[..], b"ghijk", b"lmn", b"o"] {
        put(&mut writer, word);
    }
    flusher
}

#[cfg(feature = "std")]
#[test]
fn a_batch_written_a_few_bytes_at_a_time_is_written_whole_and_in_order() {
    for most in 1..=4 {
        let pool = BufferPool::new(4, 8);
        let mut flusher = four_messages(&pool);
        let mut out = ShortWrites::new(most, false);
        while let Some(batch) = block_on(flusher.next_batch()) {
            batch.write_all_to(&mut out).unwrap();
        }
        assert_eq!(out.out, b"abcdefghijklmno", "{most} bytes a write");
    }
}

#[cfg(feature = "std")]
#[test]
fn a_sink_that_takes_nothing_fails_the_write_with_write_zero() {
    let pool = BufferPool::new(4, 8);
    let mut flusher = four_messages(&pool);
    let mut out = ShortWrites::new(3, false);
    out.left = 4;
    let batch = block_on(flusher.next_batch()).expect("a batch");
    let error = batch.write_all_to(&mut out).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::WriteZero);
    assert_eq!(out.out, b"abcd", "what the sink took before it stopped");
}

#[cfg(feature = "tokio")]
#[test]
fn a_batch_written_to_an_async_sink_that_is_pending_and_short_is_written_whole() {
    for most in [1, 2, 5] {
        let pool = BufferPool::new(4, 8);
        let mut flusher = four_messages(&pool);
        let mut out = ShortWrites::new(most, true);
        while let Some(batch) = block_on(flusher.next_batch()) {
            block_on(batch.write_all_to_async(&mut out)).unwrap();
        }
        assert_eq!(out.out, b"abcdefghijklmno", "{most} bytes a write");
        assert!(out.calls > 15 / most, "every other write was pending");
    }
    let pool = BufferPool::new(4, 8);
    let mut flusher = four_messages(&pool);
    let mut out = ShortWrites::new(2, true);
    out.left = 3;
    let batch = block_on(flusher.next_batch()).expect("a batch");
    let error = block_on(batch.write_all_to_async(&mut out)).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::WriteZero);
    assert_eq!(out.out, b"abc");
}

#[test]
fn runs_past_a_batchs_room_come_in_the_next_batch() {
    let pool = BufferPool::new(1, 1024);
    let (mut first, mut flusher) = writer::channel(&pool);
    let mut second = first.clone();
    for at in 0..100u8 {
        let lost = second.try_reserve(1).unwrap();
        let mut kept = first.try_reserve(1).unwrap();
        kept[0] = at;
        drop(lost); // a hole before each message: each is a run of its own
        kept.commit();
    }
    first.flush();
    let mut sizes = Vec::new();
    let mut sent = Vec::new();
    while let Some(batch) = flusher.try_next_batch() {
        sizes.push(batch.len());
        for packet in batch.iter() {
            sent.extend_from_slice(packet);
        }
    }
    assert_eq!(sizes, [64, 36]);
    assert_eq!(sent, (0..100).collect::<Vec<u8>>());
}

/// A sink whose first write fails with an error of kind `kind` (`Interrupted`: a signal came,
/// `EINTR`), then takes everything.
#[cfg(feature = "std")]
struct FailsOnce {
    kind: std::io::ErrorKind,
    out: Vec<u8>,
    failed: bool,
}

#[cfg(feature = "std")]
impl FailsOnce {
    fn new(kind: std::io::ErrorKind) -> Self {
        Self {
            kind,
            out: Vec::new(),
            failed: false,
        }
    }
}

#[cfg(feature = "std")]
impl std::io::Write for FailsOnce {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_vectored(&[std::io::IoSlice::new(bytes)])
    }

    fn write_vectored(&mut self, slices: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        if !self.failed {
            self.failed = true;
            return Err(self.kind.into());
        }
        let mut written = 0;
        for slice in slices {
            self.out.extend_from_slice(slice);
            written += slice.len();
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `Batch::write_all_to` retries a write that was interrupted, as `std::io::Write::write_all`
/// does: every byte once.
#[cfg(feature = "std")]
#[test]
fn write_all_to_retries_an_interrupted_write() {
    let pool = BufferPool::new(4, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    for word in [&b"abc"[..], b"def"] {
        let mut room = writer.try_reserve(word.len()).unwrap();
        room.copy_from_slice(word);
        room.commit();
    }
    drop(writer);
    let mut out = FailsOnce::new(std::io::ErrorKind::Interrupted);
    while let Some(batch) = block_on(flusher.next_batch()) {
        batch
            .write_all_to(&mut out)
            .expect("an interrupted write is retried");
    }
    assert!(out.failed);
    assert_eq!(out.out, b"abcdef");
}

/// `Batch::write_all_to` gives back an error of any other kind at once, as
/// `std::io::Write::write_all` does, without writing again.
#[cfg(feature = "std")]
#[test]
fn write_all_to_gives_back_an_error_that_is_not_an_interruption() {
    let pool = BufferPool::new(4, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut room = writer.try_reserve(3).unwrap();
    room.copy_from_slice(b"abc");
    room.commit();
    drop(writer);
    let mut out = FailsOnce::new(std::io::ErrorKind::BrokenPipe);
    let batch = block_on(flusher.next_batch()).expect("a batch");
    let error = batch.write_all_to(&mut out).expect_err("the error");
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    assert!(out.out.is_empty(), "nothing written after the error");
}

/// A buffer filled to its last byte is full, and goes to the flusher at once: by a message
/// that takes a whole buffer, and by one that takes the rest of a buffer begun by another.
#[test]
fn a_buffer_filled_to_its_last_byte_goes_to_the_flusher_at_once() {
    let pool = BufferPool::new(3, 8);
    let (mut writer, mut flusher) = writer::channel(&pool);
    for messages in [&[&b"12345678"[..]][..], &[b"abc", b"defgh"]] {
        for message in messages {
            let mut room = writer.try_reserve(message.len()).unwrap();
            room.copy_from_slice(message);
            room.commit();
        }
        let batch = flusher
            .try_next_batch()
            .expect("a full buffer goes to the flusher without waiting for the next message");
        let bytes: Vec<u8> = batch.iter().flat_map(|packet| packet.to_vec()).collect();
        assert_eq!(bytes, messages.concat());
    }
    drop(writer);
    assert!(block_on(flusher.next_batch()).is_none());
}

/// A reservation that reaches the last byte of its buffer and is abandoned gives its room back,
/// as any abandoned reservation with nothing handed out after it does: the buffer stays open
/// for the next message, and the flusher gets nothing.
#[test]
fn an_abandoned_reservation_up_to_the_last_byte_gives_its_room_back() {
    let pool = BufferPool::new(2, 16);
    let (mut writer, mut flusher) = writer::channel(&pool);
    let mut first = writer.try_reserve(8).unwrap();
    first.copy_from_slice(b"aaaaaaaa");
    let first = first.commit_packet();
    drop(writer.try_reserve(8).unwrap());
    let mut second = writer.try_reserve(8).unwrap();
    second.copy_from_slice(b"bbbbbbbb");
    let second = second.commit_packet();
    assert_eq!(
        second.as_ptr(),
        first.as_ptr().wrapping_add(8),
        "in the room given back"
    );
    // Committed up to the last byte, the buffer is full, and goes.
    let batch = flusher.try_next_batch().expect("a full buffer");
    let bytes: Vec<u8> = batch.iter().flat_map(|packet| packet.to_vec()).collect();
    assert_eq!(bytes, b"aaaaaaaabbbbbbbb");
    drop(batch);

    // A whole buffer abandoned: the next message goes into it, also with a pool of one.
    let pool = BufferPool::new(1, 16);
    let (mut writer, mut flusher) = writer::channel(&pool);
    drop(writer.try_reserve(16).unwrap());
    let mut next = writer.try_reserve(4).expect("the abandoned buffer's room");
    next.copy_from_slice(b"cccc");
    next.commit();
    assert!(flusher.try_next_batch().is_none(), "not full, not asked");
    drop(writer);
    assert_eq!(drain(&mut flusher), b"cccc");
}
