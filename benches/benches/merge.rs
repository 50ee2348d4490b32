//! Streams merged into one: pinfold's `MergeBounded` (id `pinfold`) and growable `Merge` (id
//! `pinfold-growable`, a row of its own) against futures-util's `select_all`,
//! futures-buffered's `MergeBounded`, futures-concurrency's `StreamGroup` and tokio-stream's
//! `StreamMap` (items mapped to their value), on four workloads: many
//! streams of ready items, many streams woken from other threads, a few streams that are
//! always ready (items of `u64`, and of `u32` and 24 bytes: `merge_hot_16_u32`,
//! `merge_hot_16_24b`; and `!Unpin` streams of `u32` polled with a no-op waker,
//! `merge_hot_16_noop`), and many streams of which a few at a time are woken from the thread that
//! drains the merge (`merge_sparse_10k`: setup untimed, under futures-executor's `block_on`).
//! And the memory a merge takes per stream it holds: 10,000 streams that never give an item,
//! merged, each polled once and dropped (`merge_held_10k`). Every stream here is `Unpin`, so every
//! peer takes it as it is.

use std::cell::Cell;
use std::hint::black_box;
use std::iter::Map;
use std::marker::PhantomPinned;
use std::ops::Range;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::measurement::{Measurement, WallTime};
use criterion::{Criterion, criterion_group, criterion_main};
use futures_core::Stream;
use futures_util::StreamExt;
use futures_util::stream::{self, Iter};
use pinfold_benches::{
    CpuTime, FUTURES_BUFFERED, FUTURES_CONCURRENCY, FUTURES_UTIL, FireOrder, Group, IdleStream,
    PINFOLD, PINFOLD_GROWABLE, RoundTimes, SignalStream, SparseWakes, TOKIO_STREAM, Tuning,
    WakerThreads, criterion, poll_each_once_pending, tally_block_on, tally_block_on_by,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

type Bounded<S> = pinfold_merge::MergeBounded<S>;
type Growable<S> = pinfold_merge::Merge<S>;
type Buffered<S> = futures_buffered::MergeBounded<S>;
type StreamGroup<S> = futures_concurrency::stream::StreamGroup<S>;
type StreamMap<S> = tokio_stream::StreamMap<usize, S>;

/// Items per stream in `merge_ready_1k`, and its streams.
const READY_ITEMS: u64 = 100;
const READY_STREAMS: u64 = 1_000;
/// Streams in `merge_hot_16`, and items in all.
const HOT_STREAMS: u64 = 16;
const HOT_ITEMS: u64 = 1_000_000;
/// Streams in `merge_wakes_10k`, and items per stream.
const WAKE_STREAMS: usize = 10_000;
const WAKE_ITEMS: usize = 10;

/// `streams` streams of `per_stream` ready items, stream `j` giving `j * per_stream ..`: the
/// items of all are `0 .. streams * per_stream`, each once.
fn ready_streams(streams: u64, per_stream: u64) -> impl Iterator<Item = Iter<Range<u64>>> {
    (0..streams).map(move |j| stream::iter(j * per_stream..(j + 1) * per_stream))
}

/// `streams` streams of `per_stream` ready items, as [`ready_streams`], each index `i` given as
/// `item(i)`.
fn ready_streams_of<T, F>(
    streams: u64,
    per_stream: u64,
    item: F,
) -> impl Iterator<Item = Iter<Map<Range<u64>, F>>>
where
    F: Fn(u64) -> T + Copy,
{
    (0..streams).map(move |j| stream::iter((j * per_stream..(j + 1) * per_stream).map(item)))
}

/// An item of 24 bytes: index `i` as three words, `i`, `2i` and `3i`, which the consumer adds
/// up (so it reads all three).
#[derive(Debug, Clone, Copy)]
struct Item24 {
    index: u64,
    double: u64,
    triple: u64,
}

const _: () = assert!(size_of::<Item24>() == 24);

impl Item24 {
    fn new(index: u64) -> Self {
        Self {
            index,
            double: 2 * index,
            triple: 3 * index,
        }
    }

    /// What the consumer reads: the sum of the three words, `6i`.
    fn read(self) -> u64 {
        self.index + self.double + self.triple
    }
}

/// An always-ready stream that is `!Unpin` (as an `async` stream is): its items are
/// `next .. end`, as `u32`. Its state is in cells, read and written through the `&Self` a
/// `Pin<&mut Self>` gives, so it needs no projection.
struct PinnedCount {
    next: Cell<u64>,
    end: u64,
    _pinned: PhantomPinned,
}

impl PinnedCount {
    fn new(items: Range<u64>) -> Self {
        Self {
            next: Cell::new(items.start),
            end: items.end,
            _pinned: PhantomPinned,
        }
    }
}

impl Stream for PinnedCount {
    type Item = u32;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u32>> {
        let next = self.next.get();
        if next == self.end {
            return Poll::Ready(None);
        }
        self.next.set(next + 1);
        Poll::Ready(Some(next as u32))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.end - self.next.get()) as usize;
        (left, Some(left))
    }
}

/// The streams of `merge_hot_16_noop`: [`HOT_STREAMS`] of them, `HOT_ITEMS` items in all.
fn pinned_hot_streams() -> impl Iterator<Item = PinnedCount> {
    let per_stream = HOT_ITEMS / HOT_STREAMS;
    (0..HOT_STREAMS).map(move |j| PinnedCount::new(j * per_stream..(j + 1) * per_stream))
}

/// Polls `merged` to its end with a no-op waker, the caller summing the items (widened to
/// `u64`); a `Pending` (a merge that yields to be fair) is polled again at once. Checks it gave
/// `0 .. HOT_ITEMS`, each once.
fn drain_noop<S: Stream<Item = u32>>(merged: S) {
    let mut merged = pin!(merged);
    let mut cx = Context::from_waker(Waker::noop());
    let (mut count, mut sum) = (0u64, 0u64);
    loop {
        match merged.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(item)) => {
                count += 1;
                sum += u64::from(item);
            }
            Poll::Ready(None) => break,
            Poll::Pending => {}
        }
    }
    assert_eq!((count, sum), expected(HOT_ITEMS), "every item once");
}

/// [`merge_hot_16`] as a caller without an executor drives it: 16 always-ready `!Unpin`
/// streams of `u32` ([`PinnedCount`]), polled with a no-op waker and each item summed by the
/// caller. The peers that need `Unpin` streams (`StreamMap`, `select_all`) take each boxed and
/// pinned, as their users must. Without `block_on`'s own work in between, a merge's per-item
/// chain of loads and stores is what the time shows.
fn merge_hot_16_noop(c: &mut Criterion) {
    let mut group = Group::new(c, "merge_hot_16_noop", Tuning::SLOW);
    group.bench(PINFOLD, || {
        let mut merged = Bounded::new(HOT_STREAMS as usize);
        pinned_hot_streams().for_each(|s| merged.push(s));
        drain_noop(merged);
    });
    group.bench(PINFOLD_GROWABLE, || {
        let mut merged = Growable::new();
        merged.extend(pinned_hot_streams());
        drain_noop(merged);
    });
    group.bench(FUTURES_BUFFERED, || {
        drain_noop(pinned_hot_streams().collect::<Buffered<_>>());
    });
    group.bench(FUTURES_UTIL, || {
        drain_noop(futures_util::stream::select_all(
            pinned_hot_streams().map(Box::pin),
        ));
    });
    group.bench(TOKIO_STREAM, || {
        let mut merged = StreamMap::new();
        for (j, stream) in pinned_hot_streams().enumerate() {
            merged.insert(j, Box::pin(stream));
        }
        drain_noop(merged.map(|(_, item)| item));
    });
    group.finish();
}

/// What merging `0 .. n` in any order gives: each item once.
fn expected(n: u64) -> (u64, u64) {
    (n, n * n.saturating_sub(1) / 2)
}

/// Runs one benchmark per implementation in `group`: `$streams` (an expression giving an
/// iterator of `Unpin` streams of `u64`, evaluated afresh in each run) merged by it, then
/// `$drive` (a generic function of the merged stream) run over the merged stream. The peers
/// that grow take the streams one by one (`StreamGroup` and `StreamMap` as their users would;
/// `select_all` and futures-buffered's `MergeBounded` from their `FromIterator`).
macro_rules! each_merge {
    ($group:expr, $streams:expr, $drive:expr) => {{
        let group = &mut $group;
        group.bench(PINFOLD, || {
            let streams: Vec<_> = $streams.collect();
            let mut merged = Bounded::new(streams.len());
            for stream in streams {
                merged.push(stream);
            }
            $drive(merged)
        });
        group.bench(PINFOLD_GROWABLE, || {
            let mut merged = Growable::new();
            merged.extend($streams);
            $drive(merged)
        });
        group.bench(FUTURES_BUFFERED, || {
            $drive($streams.collect::<Buffered<_>>())
        });
        group.bench(FUTURES_UTIL, || {
            $drive(futures_util::stream::select_all($streams))
        });
        group.bench(FUTURES_CONCURRENCY, || {
            let mut merged = StreamGroup::new();
            for stream in $streams {
                merged.insert(stream);
            }
            $drive(merged)
        });
        group.bench(TOKIO_STREAM, || {
            let mut merged = StreamMap::new();
            for (j, stream) in $streams.enumerate() {
                merged.insert(j, stream);
            }
            $drive(merged.map(|(_, item)| item))
        });
    }};
}

/// Runs `merged` to its end under futures-executor's `block_on` and checks it gave the items
/// `0 .. n`, each once (count and sum).
fn drain_checked<S: Stream<Item = u64>>(merged: S, n: u64) {
    let tally = tally_block_on(merged);
    assert_eq!((tally.count, tally.sum), expected(n), "every item once");
}

/// 1,000 streams of 100 ready items each (`stream::iter`), merged, drained under `block_on`:
/// the per-item cost when every stream always has an item.
fn merge_ready_1k(c: &mut Criterion) {
    let mut group = Group::new(c, "merge_ready_1k", Tuning::MEDIUM);
    let n = READY_STREAMS * READY_ITEMS;
    each_merge!(group, ready_streams(READY_STREAMS, READY_ITEMS), |merged| {
        drain_checked(merged, n)
    });
    group.finish();
}

/// 16 always-ready streams of 62,500 items each, 1,000,000 items in all: the per-item cost of
/// a merge of few hot streams (fairness between them included).
fn merge_hot_16(c: &mut Criterion) {
    let mut group = Group::new(c, "merge_hot_16", Tuning::SLOW);
    each_merge!(
        group,
        ready_streams(HOT_STREAMS, HOT_ITEMS / HOT_STREAMS),
        |merged| drain_checked(merged, HOT_ITEMS)
    );
    group.finish();
}

/// [`merge_hot_16`] with items of other sizes than `u64`'s 8 bytes: `u32` (`merge_hot_16_u32`,
/// each item widened to `u64` and summed) and 24 bytes ([`Item24`], `merge_hot_16_24b`, its
/// three words added up and summed). What the size of the item a merge passes through costs.
fn merge_hot_16_sized(c: &mut Criterion) {
    let per_stream = HOT_ITEMS / HOT_STREAMS;
    let (n, sum) = expected(HOT_ITEMS);
    let mut group = Group::new(c, "merge_hot_16_u32", Tuning::SLOW);
    each_merge!(
        group,
        ready_streams_of(HOT_STREAMS, per_stream, |i| i as u32),
        |merged| {
            let tally = tally_block_on_by(merged, u64::from);
            assert_eq!((tally.count, tally.sum), (n, sum), "every item once");
        }
    );
    group.finish();
    let mut group = Group::new(c, "merge_hot_16_24b", Tuning::SLOW);
    each_merge!(
        group,
        ready_streams_of(HOT_STREAMS, per_stream, Item24::new),
        |merged| {
            let tally = tally_block_on_by(merged, Item24::read);
            assert_eq!((tally.count, tally.sum), (n, 6 * sum), "every item once");
        }
    );
    group.finish();
}

/// 10,000 streams of 10 items each; item `k` of a stream comes when one of 4 threads fires its
/// cell, the 100,000 cells dealt to the threads in random order (so a stream is woken by
/// several threads, and its later items may be fired before its earlier ones). Timed as
/// `wakes_4_threads` is: wall time from the threads' release to the last item
/// (`merge_wakes_10k`), and (`_cpu`) the CPU time of the four fire loops plus the owner's
/// drain.
fn wakes<M: Measurement<Value = Duration> + 'static>(
    c: &mut Criterion<M>,
    name: &str,
    growable: bool,
    time: fn(RoundTimes) -> Duration,
) {
    const THREADS: usize = 4;
    let workers = WakerThreads::new(
        THREADS,
        WAKE_STREAMS * WAKE_ITEMS / THREADS,
        FireOrder::Shuffled(0x3E_A6E5),
    );
    let mut group = Group::new(c, name, Tuning::MEDIUM);
    group.bench_rounds(PINFOLD, || {
        time(workers.merge_round(WAKE_ITEMS, |w| {
            let mut merged = Bounded::new(WAKE_STREAMS);
            streams(w).for_each(|s| merged.push(s));
            merged
        }))
    });
    if growable {
        group.bench_rounds(PINFOLD_GROWABLE, || {
            time(workers.merge_round(WAKE_ITEMS, |w| streams(w).collect::<Growable<_>>()))
        });
    }
    group.bench_rounds(FUTURES_BUFFERED, || {
        time(workers.merge_round(WAKE_ITEMS, |w| streams(w).collect::<Buffered<_>>()))
    });
    group.bench_rounds(FUTURES_UTIL, || {
        time(workers.merge_round(WAKE_ITEMS, |w| futures_util::stream::select_all(streams(w))))
    });
    group.bench_rounds(FUTURES_CONCURRENCY, || {
        time(workers.merge_round(WAKE_ITEMS, |w| streams(w).collect::<StreamGroup<_>>()))
    });
    group.bench_rounds(TOKIO_STREAM, || {
        time(workers.merge_round(WAKE_ITEMS, |w| {
            let mut merged = StreamMap::new();
            for (j, stream) in streams(w).enumerate() {
                merged.insert(j, stream);
            }
            merged.map(|(_, item)| item)
        }))
    });
    group.finish();
    black_box(workers);
}

/// 10,000 streams, each pending until its cell fires and then giving its index once per fire
/// ([`SparseWakes::merge_sparse_10k`]); 1,000 batches, each firing 10 distinct streams drawn
/// at random (deterministically; a stream fires in several batches), the merged stream drained
/// after each batch until it gave that batch's 10 items. The cells are fired on the bench's own
/// thread, under futures-executor's `block_on` (each item awaited with `poll_fn`). Untimed:
/// building the merge, inserting the streams and polling it until every stream registered its
/// waker; timed: the 1,000 batches. Checked: each batch's items add up to its streams'
/// indexes, and the round gives 10,000 items with the fired indexes' sum. What a merge costs
/// per item when a few of many streams wake: a merge that polls only the woken streams does
/// 10,000 stream polls, one that polls every stream on each call up to 10,000 per item.
fn merge_sparse_10k(c: &mut Criterion) {
    let wakes = SparseWakes::merge_sparse_10k();
    let mut group = Group::new(c, "merge_sparse_10k", Tuning::MEDIUM);
    wakes.bench(&mut group, PINFOLD, |w| {
        let mut merged = Bounded::new(w.len());
        w.streams().for_each(|s| merged.push(s));
        merged
    });
    wakes.bench(&mut group, PINFOLD_GROWABLE, |w| {
        w.streams().collect::<Growable<_>>()
    });
    wakes.bench(&mut group, FUTURES_BUFFERED, |w| {
        w.streams().collect::<Buffered<_>>()
    });
    wakes.bench(&mut group, FUTURES_UTIL, |w| {
        futures_util::stream::select_all(w.streams())
    });
    wakes.bench(&mut group, FUTURES_CONCURRENCY, |w| {
        w.streams().collect::<StreamGroup<_>>()
    });
    wakes.bench(&mut group, TOKIO_STREAM, |w| {
        let mut merged = StreamMap::new();
        for (j, stream) in w.streams().enumerate() {
            merged.insert(j, stream);
        }
        merged.map(|(_, item)| item)
    });
    group.finish();
}

/// Streams in `merge_held_10k`.
const HELD_STREAMS: u64 = 10_000;

/// 10,000 streams that never give an item and never register a waker ([`IdleStream`], 8 bytes
/// each), merged, polled with a no-op waker until each was polled once, and dropped: pinfold's
/// `MergeBounded` made with room for exactly them (id `pinfold`) and growable `Merge`
/// (`pinfold-growable`, a row of its own) against futures-buffered's `MergeBounded` and
/// futures-util's `select_all` (from their `FromIterator`) and tokio-stream's `StreamMap` (one
/// `insert` per stream, under its index). The time is that of the three; the peak of live bytes
/// over the streams held is what the merge takes per stream, the stream's own 8 bytes (and
/// `StreamMap`'s key) included.
fn merge_held_10k(c: &mut Criterion) {
    let streams = || (0..HELD_STREAMS).map(IdleStream);
    let mut group = Group::new(c, "merge_held_10k", Tuning::FAST);
    group.bench(PINFOLD, move || {
        let mut merged = Bounded::new(HELD_STREAMS as usize);
        streams().for_each(|s| merged.push(s));
        poll_each_once_pending(merged, HELD_STREAMS);
    });
    group.bench(PINFOLD_GROWABLE, move || {
        let mut merged = Growable::new();
        merged.extend(streams());
        poll_each_once_pending(merged, HELD_STREAMS);
    });
    group.bench(FUTURES_BUFFERED, move || {
        poll_each_once_pending(streams().collect::<Buffered<_>>(), HELD_STREAMS);
    });
    group.bench(FUTURES_UTIL, move || {
        poll_each_once_pending(futures_util::stream::select_all(streams()), HELD_STREAMS);
    });
    group.bench(TOKIO_STREAM, move || {
        let mut merged = StreamMap::new();
        for (j, stream) in streams().enumerate() {
            merged.insert(j, stream);
        }
        poll_each_once_pending(merged, HELD_STREAMS);
    });
    group.finish();
}

/// The streams of a `merge_wakes_10k` round.
fn streams(workers: &WakerThreads) -> impl Iterator<Item = SignalStream<'_>> + '_ {
    workers.signal_streams(WAKE_ITEMS)
}

fn merge_wakes_10k(c: &mut Criterion<WallTime>) {
    wakes(c, "merge_wakes_10k", true, |t| t.wall);
}

fn merge_wakes_10k_cpu(c: &mut Criterion<CpuTime>) {
    wakes(c, "merge_wakes_10k_cpu", false, |t| t.cpu);
}

criterion_group! {
    name = wall;
    config = criterion(WallTime);
    targets = merge_ready_1k, merge_hot_16, merge_hot_16_sized, merge_hot_16_noop, merge_wakes_10k,
        merge_sparse_10k, merge_held_10k
}
criterion_group! {
    name = cpu;
    config = criterion(CpuTime);
    targets = merge_wakes_10k_cpu
}
criterion_main!(wall, cpu);
