//! Batching writers: pinfold-pool's `Writer` and `Flusher` against bab's `Writer` (a
//! thread-local cursor per writer thread, its `WriterFlushReceiver`) and a tokio `mpsc`
//! channel of `Vec<u8>` messages written into a `BufWriter`, with the dimensions of bab's
//! `writer_benchmark`: 32-byte messages, a flush every 1,000 messages per writer, buffers of
//! 8 KiB.
//!
//! Groups: `writer_1x1000` (one thread writes 1,000 messages, asks for a flush, and drains
//! the batches itself) and `writer_4x1000` (4 threads each write 1,000 messages and ask for a
//! flush; then the main thread drains: the wall time of both). `bench-table` shows them in a
//! table of their own (`WRITER_WORKLOADS`).

use std::hint::black_box;
use std::io::{BufWriter, Sink, Write, sink};

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_executor::block_on;
use pinfold_benches::{BAB, Crew, Group, PINFOLD, TOKIO_MPSC, Tuning, criterion, timed};
use pinfold_pool::{BufferPool, Flusher, writer};
use tokio::sync::mpsc;

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// Bytes per message.
const MESSAGE: usize = 32;
/// Messages per writer between flushes.
const BATCH: usize = 1000;
/// Bytes per buffer.
const BUFFER: usize = 8192;
/// Buffers per pool: room for every message of a round of 4 writers, so that no writer waits
/// for the flusher within a round.
const BUFFERS: usize = 64;

fn payload() -> [u8; MESSAGE] {
    core::array::from_fn(|at| (at % 200) as u8)
}

/// Everything the flusher has ready: how many bytes.
fn drain(flusher: &mut Flusher) -> usize {
    let mut bytes = 0;
    while let Some(batch) = flusher.try_next_batch() {
        for packet in batch.iter() {
            bytes += black_box(&packet[..]).len();
        }
    }
    bytes
}

/// Writes `BATCH` messages through a pinfold writer, then asks for a flush.
fn write_pinfold(writer: &mut writer::Writer, message: &[u8; MESSAGE]) {
    for _ in 0..BATCH {
        let mut room = writer.try_reserve(MESSAGE).expect("room in the pool");
        room.copy_from_slice(message);
        room.commit();
    }
    writer.flush();
}

/// Sends `BATCH` messages, each a `Vec`, then none: the receiver flushes once it has them.
fn send_mpsc(sender: &mpsc::Sender<Vec<u8>>, message: &[u8; MESSAGE]) {
    for _ in 0..BATCH {
        sender
            .try_send(message.to_vec())
            .expect("room in the channel");
    }
}

/// Receives `count` messages into `out`, then flushes it.
fn receive_mpsc(receiver: &mut mpsc::Receiver<Vec<u8>>, out: &mut BufWriter<Sink>, count: usize) {
    for _ in 0..count {
        let message = receiver.try_recv().expect("a message sent");
        out.write_all(&message).unwrap();
    }
    out.flush().unwrap();
}

/// One thread writes 1,000 messages of 32 bytes, asks for a flush, and drains the batches:
/// pinfold's `Writer` (`try_reserve`, copy, `commit`, then `flush`) and `Flusher`
/// (`try_next_batch`); bab's `LocalWriter` (`reserve` under `block_on`, copy, into a
/// `Packet`, then `flush`) and its receiver's `flush()`; a tokio `mpsc::channel` of
/// `Vec<u8>` (one allocated per message) received into a `BufWriter` of 8 KiB over
/// `io::sink()`, flushed at the end.
fn writer_1x1000(c: &mut Criterion) {
    let message = payload();
    let mut group = Group::new(c, "writer_1x1000", Tuning::FAST);

    let pool = BufferPool::new(BUFFERS, BUFFER);
    let (mut writer, mut flusher) = writer::channel(&pool);
    group.bench(PINFOLD, move || {
        write_pinfold(&mut writer, &message);
        assert_eq!(drain(&mut flusher), BATCH * MESSAGE);
    });

    let bab = bab::HeapBufferPool::new(BUFFER, 16, 16);
    let _registered = bab.register_thread();
    let (sender, mut receiver) = bab::new_writer_flusher();
    let writer = bab::Writer::new_local_flush(bab.clone(), 0, sender, 0);
    group.bench(BAB, move || {
        block_on(async {
            for _ in 0..BATCH {
                let mut room = writer.reserve(MESSAGE).await;
                room.copy_from_slice(&message);
                let _: bab::Packet = room.into();
            }
            writer.flush();
            let mut bytes = 0;
            for flush in receiver.flush().await {
                bytes += black_box(&flush[..]).len();
            }
            assert_eq!(bytes, BATCH * MESSAGE);
        });
    });

    let (sender, mut receiver) = mpsc::channel(BATCH);
    let mut out = BufWriter::with_capacity(BUFFER, sink());
    group.bench(TOKIO_MPSC, move || {
        send_mpsc(&sender, &message);
        receive_mpsc(&mut receiver, &mut out, BATCH);
    });
    group.finish();
}

/// 4 threads (spawned once) each write 1,000 messages of 32 bytes and ask for a flush; then
/// the main thread drains what they wrote: the wall time from the threads' release to the
/// end of the drain. pinfold's writer threads share one `Writer` (a clone each, per round)
/// and one buffer at a time; bab's each make a `LocalWriter` per round (a cursor and a buffer
/// of their own, as in its `writer_benchmark`); tokio's each `try_send` a `Vec` per message
/// into one channel, which the main thread receives into a `BufWriter`.
fn writer_4x1000(c: &mut Criterion) {
    const THREADS: usize = 4;
    let message = payload();
    let mut group = Group::new(c, "writer_4x1000", Tuning::MEDIUM);
    let mut bench = |id: &str, crew: Crew, mut drain: Box<dyn FnMut()>| {
        group.bench_rounds(id, move || crew.round() + timed(&mut *drain).0);
    };

    let pool = BufferPool::new(BUFFERS, BUFFER);
    let (writer, mut flusher) = writer::channel(&pool);
    let crew = Crew::new(THREADS, move || {
        let mut writer = writer.clone();
        write_pinfold(&mut writer, &message);
    });
    bench(
        PINFOLD,
        crew,
        Box::new(move || {
            assert_eq!(drain(&mut flusher), THREADS * BATCH * MESSAGE);
        }),
    );

    let bab = bab::HeapBufferPool::new(BUFFER, 16, 16);
    let (sender, receiver) = bab::new_writer_flusher();
    let shared = bab.clone();
    let crew = Crew::new(THREADS, move || {
        let _registered = shared.register_thread();
        let writer = bab::Writer::new_local_flush(shared.clone(), 0, sender.clone(), 0);
        block_on(async {
            for _ in 0..BATCH {
                let mut room = writer.reserve(MESSAGE).await;
                room.copy_from_slice(&message);
                let _: bab::Packet = room.into();
            }
        });
        writer.flush();
    });
    let _registered = bab.register_thread();
    let mut receiver = receiver;
    bench(
        BAB,
        crew,
        Box::new(move || {
            let mut bytes = 0;
            while bytes < THREADS * BATCH * MESSAGE {
                block_on(async {
                    for flush in receiver.flush().await {
                        bytes += black_box(&flush[..]).len();
                    }
                });
            }
        }),
    );

    let (sender, mut receiver) = mpsc::channel(THREADS * BATCH);
    let crew = Crew::new(THREADS, move || send_mpsc(&sender, &message));
    let mut out = BufWriter::with_capacity(BUFFER, sink());
    bench(
        TOKIO_MPSC,
        crew,
        Box::new(move || receive_mpsc(&mut receiver, &mut out, THREADS * BATCH)),
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = writer_1x1000, writer_4x1000
}
criterion_main!(benches);
