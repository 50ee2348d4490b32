//! Buffer pools: pinfold-pool's `BufferPool` against bab's `BufferPool` (buffers handed out
//! in thread-local batches), a `tokio::sync::Semaphore` with a `Vec` per buffer, and a plain
//! `Vec` per buffer; then the writers a message is serialized into: a pool's `Buf` against
//! `Cursor<Vec<u8>>`, `Cursor<&mut [u8]>`, `BytesMut`, `Vec<u8>` and `&mut [u8]`.
//!
//! Groups: `pool_acquire_release` (one thread, uncontended), `pool_4_threads_16` (4 threads
//! sharing a pool of 16), `pool_16_threads_64` (16 threads sharing a pool of 64),
//! `pool_4_threads_2` (4 threads sharing a pool of 2: in and out of exhaustion),
//! `pool_cursor_2048x16` (2,048 records of 16 bytes serialized with
//! bincode). `bench-table` shows them in tables of their own (`POOL_WORKLOADS`,
//! `CURSOR_WORKLOADS`).

use std::future::Future;
use std::hint::black_box;
use std::io::{Cursor, Write};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::{BufMut, BytesMut};
use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_executor::block_on;
use pinfold_benches::{
    BAB, BYTES_MUT, CURSOR_SLICE, CURSOR_VEC, Crew, Group, PINFOLD, PINFOLD_ASYNC, SLICE,
    TOKIO_SEMAPHORE, Tuning, VEC, criterion,
};
use pinfold_pool::BufferPool;
use serde::Serialize;
use tokio::sync::Semaphore;

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// The size of every buffer of the acquire groups (bab's own benchmark's).
const SIZE: usize = 1033;

/// One buffer acquired and released on one thread, the pool never short of buffers: pinfold's
/// `try_acquire()` (`pinfold`) and its `acquire()` future pinned in place and polled once with
/// a no-op waker (`pinfold-async`; a `block_on` that takes the future by value adds a move of
/// it and of its output, about 13 ns here), from a pool of 64; bab's `try_acquire()` and
/// `release()` on a pool of 8 batches of 8 (after the first acquire, a thread-local stock: no
/// atomics); a permit of a `tokio::sync::Semaphore` of 64 plus a `Vec::with_capacity(1033)`;
/// and the `Vec` alone.
fn pool_acquire_release(c: &mut Criterion) {
    const COUNT: usize = 64;
    let pool = BufferPool::new(COUNT, SIZE);
    let bab = bab::HeapBufferPool::new(SIZE, 8, 8);
    assert_eq!(bab.total_buffer_count(), COUNT);
    let semaphore = Semaphore::new(COUNT);
    let mut group = Group::new(c, "pool_acquire_release", Tuning::FAST);
    group.bench(PINFOLD, || {
        let buf = pool.try_acquire().expect("a free buffer");
        drop(black_box(buf));
    });
    group.bench(PINFOLD_ASYNC, || {
        // Pinned where it is made and polled there, as `.await` in an async fn does.
        let mut acquire = pin!(pool.acquire());
        let Poll::Ready(buf) = acquire
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        else {
            panic!("acquire waited with buffers free");
        };
        drop(black_box(buf));
    });
    group.bench(BAB, || {
        let buffer = bab.try_acquire().expect("a free buffer");
        // SAFETY: `buffer` was just acquired from `bab`, on this thread, and is released once.
        unsafe { bab.release(black_box(buffer)) };
    });

    group.bench(TOKIO_SEMAPHORE, || {
        let permit = semaphore.try_acquire().expect("a free permit");
        let buf = Vec::<u8>::with_capacity(SIZE);
        drop(black_box((permit, buf)));
    });
    group.bench(VEC, || drop(black_box(Vec::<u8>::with_capacity(SIZE))));
    group.finish();
    assert_eq!(pool.available(), COUNT, "every buffer back");
}

/// `threads` threads that each acquire and release one buffer 16,384 times, sharing a pool of
/// `count` (so never short of buffers, but every acquire and release goes through the shared
/// state): the wall time from the threads' release to the last one's end (the threads are
/// spawned once per implementation). pinfold awaits `acquire()` under futures-executor's
/// `block_on`, one `block_on` per thread and round; so do bab (`acquire()`, then `release()`)
/// and the tokio `Semaphore` of `count` (`acquire()`, plus a `Vec::with_capacity(1033)` per
/// permit); the plain `Vec` needs no future.
///
/// bab's `acquire()` future and its packets are `!Send`, but its pool handle is `Send + Sync`
/// and meant for a thread per core, each with its own executor, which is what this does. Its
/// pool is `threads` batches of `count / threads`: each thread takes a batch on its first
/// acquire and keeps it as its thread-local stock (a batch goes back only once a thread holds
/// 1.5 batches), so after the first round bab's threads share nothing; tokio's and malloc's
/// do. pinfold's threads each acquire from and release into a stock of their own (up to its
/// fixed number of stocks, 32) with plain loads and stores, and share nothing else while their
/// stocks hold their buffers; a buffer in one stays within reach of the other threads'
/// waiters (a task about to wait sweeps the stocks), where one in bab's stock is not.
///
/// The exhaustion row ([`pool_4_threads_2`]) keeps a loop of its own: with one driver for
/// both (a flag for the yield, the cycles as a parameter), this row's pinfold time rose from
/// 0.85x to 1.5x bab's on a Zen 5 with fewer instructions per item, a matter of the code the
/// compiler makes of the loop, not of the pool.
fn threads_sharing(c: &mut Criterion, name: &str, threads: usize, count: usize) {
    const CYCLES: usize = 16_384;
    let mut group = Group::new(c, name, Tuning::MEDIUM);
    let mut bench = |id: &str, crew: Crew, check: Box<dyn Fn()>| {
        let mut checked = false;
        group.bench_rounds(id, move || {
            let took = crew.round();
            if !checked {
                checked = true;
                check();
            }
            took
        });
    };

    let pool = BufferPool::new(count, SIZE);
    let shared = pool.clone();
    let crew = Crew::new(threads, move || {
        block_on(async {
            for _ in 0..CYCLES {
                let buf = shared.acquire().await;
                drop(black_box(buf));
            }
        });
    });
    bench(
        PINFOLD,
        crew,
        Box::new(move || assert_eq!(pool.available(), count, "every buffer back")),
    );

    let bab = bab::HeapBufferPool::new(SIZE, threads, count / threads);
    let crew = Crew::new(threads, move || {
        block_on(async {
            for _ in 0..CYCLES {
                let buffer = bab.acquire().await;
                // SAFETY: `buffer` was just acquired from `bab`, on this thread, and is
                // released once.
                unsafe { bab.release(black_box(buffer)) };
            }
        });
    });
    bench(BAB, crew, Box::new(|| {}));

    let semaphore = Arc::new(Semaphore::new(count));
    let shared = semaphore.clone();
    let crew = Crew::new(threads, move || {
        block_on(async {
            for _ in 0..CYCLES {
                let permit = shared
                    .acquire()
                    .await
                    .expect("the semaphore is never closed");
                let buf = Vec::<u8>::with_capacity(SIZE);
                drop(black_box((permit, buf)));
            }
        });
    });
    bench(
        TOKIO_SEMAPHORE,
        crew,
        Box::new(move || {
            assert_eq!(semaphore.available_permits(), count, "every permit back");
        }),
    );

    let crew = Crew::new(threads, || {
        for _ in 0..CYCLES {
            drop(black_box(Vec::<u8>::with_capacity(SIZE)));
        }
    });
    bench(VEC, crew, Box::new(|| {}));
    group.finish();
}

/// 4 threads sharing a pool of 16 (see [`threads_sharing`]).
fn pool_4_threads_16(c: &mut Criterion) {
    threads_sharing(c, "pool_4_threads_16", 4, 16);
}

/// 16 threads sharing a pool of 64 (see [`threads_sharing`]): more threads than pinfold's
/// caches, and than the machine's cores.
fn pool_16_threads_64(c: &mut Criterion) {
    threads_sharing(c, "pool_16_threads_64", 16, 64);
}

/// 4 threads that each acquire and release one buffer 2,048 times, holding it across a yield
/// of the thread, sharing a pool of 2: the pool runs out and fills again all the time, and
/// half the acquires find it empty and wait (each entry into waiting is where pinfold sweeps
/// the threads' stocks, behind its heavy barrier). Measured as [`threads_sharing`]; against
/// the tokio `Semaphore` of 2 (with a `Vec` per permit). bab is not in the row: with a pool
/// of one batch of 2, a thread's first acquire moves the whole batch into its thread-local
/// stock, where the other threads' waiters never look (see the `stranded` example), so they
/// would wait for ever.
fn pool_4_threads_2(c: &mut Criterion) {
    const THREADS: usize = 4;
    const COUNT: usize = 2;
    const CYCLES: usize = 2_048;
    let mut group = Group::new(c, "pool_4_threads_2", Tuning::MEDIUM);
    let mut bench = |id: &str, crew: Crew| group.bench_rounds(id, move || crew.round());

    let pool = BufferPool::new(COUNT, SIZE);
    let shared = pool.clone();
    bench(
        PINFOLD,
        Crew::new(THREADS, move || {
            block_on(async {
                for _ in 0..CYCLES {
                    let buf = shared.acquire().await;
                    std::thread::yield_now();
                    drop(black_box(buf));
                }
            });
        }),
    );

    let semaphore = Arc::new(Semaphore::new(COUNT));
    let shared = semaphore.clone();
    bench(
        TOKIO_SEMAPHORE,
        Crew::new(THREADS, move || {
            block_on(async {
                for _ in 0..CYCLES {
                    let permit = shared
                        .acquire()
                        .await
                        .expect("the semaphore is never closed");
                    let buf = Vec::<u8>::with_capacity(SIZE);
                    std::thread::yield_now();
                    drop(black_box((permit, buf)));
                }
            });
        }),
    );
    group.finish();
    assert_eq!(pool.available(), COUNT, "every buffer back");
    assert_eq!(semaphore.available_permits(), COUNT, "every permit back");
}

/// A record of the cursor workload: 16 bytes in bincode 1's default (fixed-width) encoding.
#[derive(Debug, Clone, Copy, Serialize)]
struct Record {
    id: u64,
    value: u64,
}

/// Records per message.
const RECORDS: usize = 2048;
/// Bytes per record.
const RECORD_BYTES: usize = 16;
/// The buffer a message is serialized into: exactly its size, 32 KiB.
const CAPACITY: usize = RECORDS * RECORD_BYTES;

/// Serializes `records` into `out`, one after another.
fn serialize(mut out: impl Write, records: &[Record]) {
    for record in records {
        bincode::serialize_into(&mut out, record).expect("the buffer holds every record");
    }
}

/// Each writer of the cursor workload: serializes the records into a fresh buffer, then
/// hands `inspect` the bytes written.
struct Writers {
    /// One buffer of 32 KiB, acquired per message.
    pool: BufferPool,
    /// What the slices borrow.
    borrowed: Box<[u8]>,
}

impl Writers {
    fn new() -> Self {
        Self {
            pool: BufferPool::new(1, CAPACITY),
            borrowed: vec![0; CAPACITY].into_boxed_slice(),
        }
    }

    fn pinfold<R>(&self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut buf = self.pool.try_acquire().expect("the buffer is free");
        serialize(&mut buf, records);
        inspect(&buf)
    }

    fn cursor_vec<R>(&self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut cursor = Cursor::new(Vec::with_capacity(CAPACITY));
        serialize(&mut cursor, records);
        inspect(cursor.get_ref())
    }

    fn cursor_slice<R>(&mut self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut cursor = Cursor::new(&mut self.borrowed[..]);
        serialize(&mut cursor, records);
        let written = cursor.position() as usize;
        inspect(&self.borrowed[..written])
    }

    fn bytes_mut<R>(&self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut writer = BytesMut::with_capacity(CAPACITY).writer();
        serialize(&mut writer, records);
        inspect(writer.get_ref())
    }

    fn vec<R>(&self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut vec = Vec::with_capacity(CAPACITY);
        serialize(&mut vec, records);
        inspect(&vec)
    }

    fn slice<R>(&mut self, records: &[Record], inspect: impl FnOnce(&[u8]) -> R) -> R {
        let mut rest: &mut [u8] = &mut self.borrowed[..];
        serialize(&mut rest, records);
        let written = CAPACITY - rest.len();
        inspect(&self.borrowed[..written])
    }
}

/// What the timed runs do with the bytes written: hand them to `black_box` (so that writing
/// them cannot be optimized away), and give their length.
fn consume(bytes: &[u8]) -> usize {
    black_box(bytes).len()
}

/// The rust-cursor-bench workload: 2,048 records of 16 bytes (two `u64`) serialized one after
/// another with bincode 1's `serialize_into` into a buffer of 32 KiB: a pinfold `Buf`, acquired
/// from a pool of one 32 KiB buffer inside the timed part (and released at its end);
/// `Cursor<Vec<u8>>`, a plain `Vec<u8>` and a `BytesMut` (through `BufMut::writer`), each
/// allocated with 32 KiB of capacity inside the timed part; `Cursor<&mut [u8]>` and
/// `&mut [u8]` over a 32 KiB buffer allocated once, outside. Before timing, every writer's
/// bytes are checked against bincode's.
fn pool_cursor_2048x16(c: &mut Criterion) {
    let records: Vec<Record> = (0..RECORDS as u64)
        .map(|i| Record {
            id: i,
            value: i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        })
        .collect();
    let expected: Vec<u8> = records
        .iter()
        .flat_map(|record| bincode::serialize(record).expect("a record serializes"))
        .collect();
    assert_eq!(expected.len(), CAPACITY, "16 bytes a record");

    let mut writers = Writers::new();
    let check = |id: &str, bytes: &[u8]| assert!(bytes == expected, "{id} wrote other bytes");
    writers.pinfold(&records, |bytes| check(PINFOLD, bytes));
    writers.cursor_vec(&records, |bytes| check(CURSOR_VEC, bytes));
    writers.cursor_slice(&records, |bytes| check(CURSOR_SLICE, bytes));
    writers.bytes_mut(&records, |bytes| check(BYTES_MUT, bytes));
    writers.vec(&records, |bytes| check(VEC, bytes));
    writers.slice(&records, |bytes| check(SLICE, bytes));

    let records = &records[..];
    let mut group = Group::new(c, "pool_cursor_2048x16", Tuning::FAST);
    // Each benchmark owns its writers: the group times them after this function has queued
    // them all, in an order of its own.
    let w = Writers::new();
    group.bench(PINFOLD, move || w.pinfold(black_box(records), consume));
    let w = Writers::new();
    group.bench(CURSOR_VEC, move || {
        w.cursor_vec(black_box(records), consume)
    });
    let mut w = Writers::new();
    group.bench(CURSOR_SLICE, move || {
        w.cursor_slice(black_box(records), consume)
    });
    let w = Writers::new();
    group.bench(BYTES_MUT, move || w.bytes_mut(black_box(records), consume));
    let w = Writers::new();
    group.bench(VEC, move || w.vec(black_box(records), consume));
    let mut w = Writers::new();
    group.bench(SLICE, move || w.slice(black_box(records), consume));
    group.finish();
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = pool_acquire_release, pool_4_threads_16, pool_16_threads_64, pool_4_threads_2, pool_cursor_2048x16
}
criterion_main!(benches);
