//! Stress: four threads acquire (blocking on `acquire`), write, freeze, clone, slice and drop
//! buffers of one small pool, many times, while a fifth reads and drops packets sent to it.
//! Every packet reads back exactly what its writer wrote (no buffer has two owners at once),
//! nothing waits for ever, and every buffer is back at the end.
// They write through `std::io::Write`.
#![cfg(feature = "std")]

mod support;

use std::io::Write;
use std::sync::mpsc;
use std::thread;

use pinfold_pool::{BufferPool, Packet};
use support::{XorShift, block_on, pattern, pattern_byte};

const WRITERS: u64 = 4;
const BUFFER_SIZE: usize = 64;

#[test]
fn four_threads_share_a_pool_of_two() {
    stress(2, 1);
}

#[test]
fn four_threads_share_a_pool_of_five() {
    stress(5, 2);
}

#[test]
fn four_threads_share_a_pool_of_sixteen() {
    stress(16, 3);
}

/// A packet sent to the reader thread: whose it is, and which of its writer's rounds.
struct Sent {
    writer: u64,
    round: u64,
    packet: Packet,
}

fn stress(capacity: usize, seed: u64) {
    let rounds: u64 = if cfg!(miri) { 12 } else { 4_000 };
    let pool = BufferPool::new(capacity, BUFFER_SIZE);
    let (to_reader, inbox) = mpsc::channel::<Sent>();
    let reader = thread::spawn(move || {
        let mut read = 0;
        for Sent {
            writer,
            round,
            packet,
        } in inbox
        {
            assert_eq!(packet[..], pattern(writer, round, packet.len()));
            read += 1;
        }
        read
    });
    thread::scope(|scope| {
        for writer in 0..WRITERS {
            let (pool, to_reader) = (&pool, to_reader.clone());
            scope.spawn(move || {
                let mut rng = XorShift::new(seed * 100 + writer);
                for round in 0..rounds {
                    write_round(pool, writer, round, &mut rng, &to_reader);
                }
            });
        }
    });
    drop(to_reader);
    let read = reader.join().unwrap();
    assert!(read > 0, "no packet was sent to the reader");
    assert_eq!(pool.available(), capacity, "a buffer was lost");
}

/// One round of one writer: acquire, write its pattern, check it, freeze, share it (with the
/// reader, sometimes), check every packet and slice, and drop them in a random order.
fn write_round(
    pool: &BufferPool,
    writer: u64,
    round: u64,
    rng: &mut XorShift,
    to_reader: &mpsc::Sender<Sent>,
) {
    let mut buf = if rng.below(4) == 0 {
        match pool.try_acquire() {
            Some(buf) => buf,
            None => block_on(pool.acquire()),
        }
    } else {
        block_on(pool.acquire())
    };
    assert!(buf.is_empty(), "a buffer came with bytes in it");
    let len = 1 + rng.below(BUFFER_SIZE);
    for at in 0..len {
        buf.write_all(&[pattern_byte(writer, round, at)]).unwrap();
    }
    thread::yield_now(); // a second owner, if any, would write meanwhile
    assert_eq!(buf[..], pattern(writer, round, len));
    let packet = buf.freeze();
    let mut packets = vec![packet.clone(), packet.slice(len / 2..)];
    packets.push(packet);
    if rng.below(2) == 0 {
        let packet = packets[0].clone();
        to_reader
            .send(Sent {
                writer,
                round,
                packet,
            })
            .unwrap();
    }
    thread::yield_now();
    let expected = pattern(writer, round, len);
    assert_eq!(packets[0][..], expected);
    assert_eq!(packets[1][..], expected[len / 2..]);
    assert_eq!(packets[2][..], expected);
    rng.shuffle(&mut packets);
    drop(packets);
}
