//! Stream buffers: pinfold's `ordered_buffer` and `unordered_buffer` against
//! `fast_ordered_buffer`, futures-util's `buffered` and `buffer_unordered`, and
//! futures-buffered's `buffered_ordered` and `buffered_unordered`, on fast_ordered_buffer's
//! own workloads: futures that sleep a random 0–7 ms (the same delays for everyone), 10,000 at
//! concurrency 50 and 1,000 at concurrency 10, on a one-thread tokio runtime with the paused
//! clock. Paused, the runtime skips ahead to the next timer whenever it is idle, so the timed
//! wall time is the CPU cost of the buffering, and the virtual time (recorded once per
//! implementation in `virtual.tsv`) is how long the work would take with real timers.
//!
//! Groups: `ordered_*` (pinfold's unbounded `ordered_buffer` against the other ordered
//! buffers), `ordered_window_*` (pinfold bounded with `window(concurrency)`, `buffered`'s exact
//! contract, against `buffered` and futures-buffered's `buffered_ordered`, whose bound counts
//! only running futures), `unordered_*`.
//!
//! `driven_1k_c10`: a consumer that spends 2 ms on each output while the futures need three
//! polls each to finish; pinfold's buffer driven while it works (`for_each_driven`) against
//! `for_each` over the others.
//!
//! `adaptive_knee_200`: 200 requests to a simulated backend that answers in 10 ms up to 8 in
//! flight and in `10 ms × (in_flight / 8)²` past that knee: pinfold's `unordered_buffer(64)`
//! under an `Adaptive` limit, and at fixed concurrencies of 2 (`pinfold-fixed-2`) and 64
//! (`pinfold-fixed-64`), against futures-util's `buffer_unordered(64)`. The virtual time is
//! the figure: how fast the requests are served.
//!
//! And without timers: `ordered_selfwake_100k_c64` and `unordered_selfwake_100k_c64`, 100,000
//! futures that wake themselves 0 to 4 times, at concurrency 64, under futures-executor's
//! `block_on`: the buffers' own cost per future, with nothing to wait for.
//!
//! `for_each_concurrent_10k_c64`: the consumer `for_each_concurrent(64, f)` over 10,000 items,
//! `f`'s future for each waking itself 0 to 4 times (the self-waking workloads' first 10,000
//! counts) and adding its item to a tally, under `block_on`: pinfold's against futures-util's
//! and futures-buffered's.
//!
//! `future_queue_10k`: 10,000 ready futures with weights 1 to 4, in three groups (max weights
//! 8, 12, 16) or none, under a max weight of 32, under `block_on`: pinfold's
//! `future_queue_grouped` against the `future-queue` crate's.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::{Stream, StreamExt, stream};
use pinfold_benches::{
    FAST_ORDERED_BUFFER, FUTURE_QUEUE, FUTURES_BUFFERED, FUTURES_UTIL, Group, PINFOLD,
    PINFOLD_FIXED_2, PINFOLD_FIXED_64, Tally, Tuning, Xorshift, YieldK, criterion, measure_warm,
    paused_runtime, random_delays, record_virtual, tally_block_on,
};
use tokio::runtime::Runtime;

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// The longest random delay, in milliseconds.
const MAX_DELAY_MS: u64 = 7;
/// The workloads: futures, concurrency, and the group-name suffix.
const WORKLOADS: [(usize, usize, &str); 2] = [(10_000, 50, "10k_c50"), (1_000, 10, "1k_c10")];

/// The source stream: future `i` sleeps `delays[i]` ms, then gives `i`.
fn source(delays: &[u64]) -> impl Stream<Item = impl Future<Output = u64> + '_> + '_ {
    stream::iter(delays.iter().enumerate()).map(|(i, &ms)| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        i as u64
    })
}

/// Runs `consume` (a buffer over [`source`] and what takes its outputs) to the end on
/// `runtime`; gives the outputs and the virtual time it took.
fn run<C: Future<Output = Vec<u64>>>(runtime: &Runtime, consume: C) -> (Vec<u64>, Duration) {
    runtime.block_on(async {
        let started = tokio::time::Instant::now();
        let out = consume.await;
        (out, started.elapsed())
    })
}

/// Times one implementation: `make` builds its buffer over the source stream, collected.
fn bench_buffer<'r, S, F>(
    group: &mut Group<'_, 'r>,
    id: &str,
    runtime: &'r Runtime,
    ordered: bool,
    make: F,
) where
    S: Stream<Item = u64>,
    F: Fn() -> S + Clone + 'r,
{
    bench_consumer(group, id, runtime, ordered, move || {
        make().collect::<Vec<u64>>()
    });
}

/// Times one implementation: `make` builds its buffer over the source stream and the future
/// that consumes it. The untimed run checks the outputs (in input order if `ordered`, else
/// all of them in any order) and records the allocations and the virtual time.
fn bench_consumer<'r, C, F>(
    group: &mut Group<'_, 'r>,
    id: &str,
    runtime: &'r Runtime,
    ordered: bool,
    make: F,
) where
    C: Future<Output = Vec<u64>>,
    F: Fn() -> C + Clone + 'r,
{
    let (name, id_owned) = (group.name().to_string(), id.to_string());
    let make_counted = make.clone();
    let count = move || {
        let id = id_owned;
        let (allocs, (mut out, elapsed)) = measure_warm(|| run(runtime, make_counted()));
        if !ordered {
            out.sort_unstable();
        }
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u64),
            "{name}/{id}: every output once{}",
            if ordered { ", in input order" } else { "" }
        );
        record_virtual(&name, &id, elapsed);
        (allocs, None)
    };
    group.bench_with(id, count, move || run(runtime, make()).0.len());
}

fn ordered(c: &mut Criterion) {
    let runtime = paused_runtime();
    for (total, concurrency, suffix) in WORKLOADS {
        let delays = random_delays(total, MAX_DELAY_MS, 0xB0FF_E7ED);
        let delays = delays.as_slice();
        let mut group = Group::new(c, &format!("ordered_{suffix}"), Tuning::MEDIUM);
        bench_buffer(&mut group, PINFOLD, &runtime, true, || {
            pinfold_buffer::BufferExt::ordered_buffer(source(delays), concurrency)
        });
        bench_buffer(&mut group, FAST_ORDERED_BUFFER, &runtime, true, || {
            fast_ordered_buffer::FobStreamExt::fast_ordered_buffer(source(delays), concurrency)
        });
        bench_buffer(&mut group, FUTURES_UTIL, &runtime, true, || {
            source(delays).buffered(concurrency)
        });
        bench_buffer(&mut group, FUTURES_BUFFERED, &runtime, true, || {
            futures_buffered::BufferedStreamExt::buffered_ordered(source(delays), concurrency)
        });
        group.finish();
    }
}

/// The bounded form: `ordered_buffer(c).window(c)` holds at most `c` futures running or
/// finished-but-waiting, which is exactly `buffered(c)`'s contract; against futures-util's
/// `buffered`, and futures-buffered's `buffered_ordered`, which bounds only the running futures
/// (its finished outputs wait in a heap of any size, as in `ordered_buffer(c)` without a
/// window): it keeps more futures running, so it waits less (its virtual time is shorter).
fn ordered_window(c: &mut Criterion) {
    let runtime = paused_runtime();
    for (total, concurrency, suffix) in WORKLOADS {
        let delays = random_delays(total, MAX_DELAY_MS, 0xB0FF_E7ED);
        let delays = delays.as_slice();
        let mut group = Group::new(c, &format!("ordered_window_{suffix}"), Tuning::MEDIUM);
        bench_buffer(&mut group, PINFOLD, &runtime, true, || {
            pinfold_buffer::BufferExt::ordered_buffer(source(delays), concurrency)
                .window(concurrency)
        });
        bench_buffer(&mut group, FUTURES_UTIL, &runtime, true, || {
            source(delays).buffered(concurrency)
        });
        bench_buffer(&mut group, FUTURES_BUFFERED, &runtime, true, || {
            futures_buffered::BufferedStreamExt::buffered_ordered(source(delays), concurrency)
        });
        group.finish();
    }
}

fn unordered(c: &mut Criterion) {
    let runtime = paused_runtime();
    for (total, concurrency, suffix) in WORKLOADS {
        let delays = random_delays(total, MAX_DELAY_MS, 0xB0FF_E7ED);
        let delays = delays.as_slice();
        let mut group = Group::new(c, &format!("unordered_{suffix}"), Tuning::MEDIUM);
        bench_buffer(&mut group, PINFOLD, &runtime, false, || {
            pinfold_buffer::BufferExt::unordered_buffer(source(delays), concurrency)
        });
        bench_buffer(&mut group, FUTURES_UTIL, &runtime, false, || {
            source(delays).buffer_unordered(concurrency)
        });
        bench_buffer(&mut group, FUTURES_BUFFERED, &runtime, false, || {
            futures_buffered::BufferedStreamExt::buffered_unordered(source(delays), concurrency)
        });
        group.finish();
    }
}

/// The steps of each future in `driven_1k_c10`, and the consumer's time per output.
const DRIVEN_STEPS: usize = 3;
const CONSUME: Duration = Duration::from_millis(2);

/// The source of `driven_1k_c10`: future `i` sleeps `delays[i]` ms three times in a row (three
/// polls to finish), then gives `i`.
fn source_in_steps(delays: &[u64]) -> impl Stream<Item = impl Future<Output = u64> + '_> + '_ {
    stream::iter(delays.iter().enumerate()).map(|(i, &ms)| async move {
        for _ in 0..DRIVEN_STEPS {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        i as u64
    })
}

/// Consumes `buffered` with `StreamExt::for_each`, 2 ms of (virtual) work per output.
async fn for_each_consume<S: Stream<Item = u64>>(buffered: S, total: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(total);
    buffered
        .for_each(|i| {
            out.push(i);
            tokio::time::sleep(CONSUME)
        })
        .await;
    out
}

/// A consumer that works on each output (2 ms of virtual time) while the buffer's futures
/// need polling to advance: pinfold's `ordered_buffer(10).window(10).for_each_driven` (the
/// buffer driven while the consumer works) against `buffered(10).for_each` and
/// `buffered_ordered(10).for_each`, which poll nothing while it works. The virtual time is
/// the work's; the timed wall time is the CPU cost.
fn driven(c: &mut Criterion) {
    use pinfold_buffer::{BufferExt, ProgressStreamExt};
    let runtime = paused_runtime();
    let (total, concurrency) = (1_000, 10);
    let delays = random_delays(total, MAX_DELAY_MS, 0xB0FF_E7ED);
    let delays = delays.as_slice();
    let mut group = Group::new(c, "driven_1k_c10", Tuning::MEDIUM);
    bench_consumer(&mut group, PINFOLD, &runtime, true, || async move {
        let mut out = Vec::with_capacity(total);
        source_in_steps(delays)
            .ordered_buffer(concurrency)
            .window(concurrency)
            .for_each_driven(|i| {
                out.push(i);
                tokio::time::sleep(CONSUME)
            })
            .await;
        out
    });
    bench_consumer(&mut group, FUTURES_UTIL, &runtime, true, || {
        for_each_consume(source_in_steps(delays).buffered(concurrency), total)
    });
    bench_consumer(&mut group, FUTURES_BUFFERED, &runtime, true, || {
        for_each_consume(
            futures_buffered::BufferedStreamExt::buffered_ordered(
                source_in_steps(delays),
                concurrency,
            ),
            total,
        )
    });
    group.finish();
}

/// Requests in `adaptive_knee_200`.
const KNEE_REQUESTS: usize = 200;
/// The buffer's capacity there: the most the adaptive limit reaches.
const KNEE_CAPACITY: usize = 64;

/// The requests of `adaptive_knee_200` to a backend whose latency is 10 ms up to 8 requests in
/// flight and `10 ms × (in_flight / 8)²` past it (in flight counted as a request arrives,
/// itself included); request `i` gives `i`.
fn knee_requests() -> impl Stream<Item = impl Future<Output = u64>> {
    let in_flight = Rc::new(Cell::new(0u64));
    stream::iter(0..KNEE_REQUESTS as u64).map(move |i| {
        let in_flight = in_flight.clone();
        async move {
            let n = in_flight.get() + 1;
            in_flight.set(n);
            let micros = if n <= 8 { 10_000 } else { 10_000 * n * n / 64 };
            tokio::time::sleep(Duration::from_micros(micros)).await;
            in_flight.set(in_flight.get() - 1);
            i
        }
    })
}

/// The knee workload: pinfold's `unordered_buffer(64)` under an adaptive limit (a new one each
/// run, on tokio's clock), `unordered_buffer(2)` and `unordered_buffer(64)`, and futures-util's
/// `buffer_unordered(64)`.
fn adaptive_knee(c: &mut Criterion) {
    use pinfold_buffer::{Adaptive, AdaptiveSettings, BufferExt};
    let runtime = paused_runtime();
    let mut group = Group::new(c, "adaptive_knee_200", Tuning::MEDIUM);
    bench_consumer(&mut group, PINFOLD, &runtime, false, || async {
        let origin = tokio::time::Instant::now();
        let adaptive = Adaptive::with_clock(AdaptiveSettings::new(KNEE_CAPACITY), move || {
            origin.elapsed()
        });
        knee_requests()
            .map(|request| adaptive.measure(request))
            .unordered_buffer(KNEE_CAPACITY)
            .limit(adaptive.limit())
            .collect()
            .await
    });
    for (id, limit) in [(PINFOLD_FIXED_2, 2), (PINFOLD_FIXED_64, 64)] {
        bench_buffer(&mut group, id, &runtime, false, move || {
            knee_requests().unordered_buffer(limit)
        });
    }
    bench_buffer(&mut group, FUTURES_UTIL, &runtime, false, || {
        knee_requests().buffer_unordered(KNEE_CAPACITY)
    });
    group.finish();
}

/// Futures in the self-waking workloads.
const SELFWAKE_TOTAL: usize = 100_000;
/// Their concurrency.
const SELFWAKE_CONCURRENCY: usize = 64;
/// The most times one of them wakes itself.
const MAX_SELF_WAKES: u64 = 4;

/// How many times each future of the self-waking workloads wakes itself: `0..=4`, from the
/// suite's xorshift with a fixed seed (the same for everyone).
fn self_wakes() -> Vec<u32> {
    self_wakes_of(SELFWAKE_TOTAL)
}

/// The first `total` of [`self_wakes`].
fn self_wakes_of(total: usize) -> Vec<u32> {
    let mut rng = Xorshift::new(0x5E1F_3A4E);
    (0..total)
        .map(|_| rng.up_to(MAX_SELF_WAKES) as u32)
        .collect()
}

/// The self-waking source: future `i` wakes itself `wakes[i]` times, then gives `i`.
fn selfwake_source(wakes: &[u32]) -> impl Stream<Item = YieldK<u64>> + '_ {
    stream::iter(wakes.iter().enumerate()).map(|(i, &k)| YieldK::new(k, i as u64))
}

/// Times one implementation of a self-waking workload: `make` builds its buffer over
/// [`selfwake_source`], which runs to its end under futures-executor's `block_on`. Every run
/// checks the outputs: each index once (count and sum), and in input order if `ordered`.
fn bench_selfwake<'r, S, F>(group: &mut Group<'_, 'r>, id: &str, ordered: bool, make: F)
where
    S: Stream<Item = u64>,
    F: Fn() -> S + 'r,
{
    let (name, id_owned) = (group.name().to_string(), id.to_string());
    let expected = Tally::indexes(SELFWAKE_TOTAL);
    group.bench(id, move || {
        let id = &id_owned;
        let tally = tally_block_on(make());
        assert_eq!(
            (tally.count, tally.sum),
            (expected.count, expected.sum),
            "{name}/{id}: every output once"
        );
        assert!(!ordered || tally.in_order, "{name}/{id}: in input order");
    });
}

/// No timers: 100,000 futures that each wake themselves 0 to 4 times (random, the same for
/// everyone) and then give their index, through ordered buffers of concurrency 64, under
/// futures-executor's `block_on` (a real waker): pinfold's `ordered_buffer(64)` against
/// futures-buffered's `buffered_ordered(64)`, futures-util's `buffered(64)` and
/// `fast_ordered_buffer(64)`. What the buffering and the wake path cost per future, with the
/// order kept.
fn ordered_selfwake(c: &mut Criterion) {
    let wakes = self_wakes();
    let wakes = wakes.as_slice();
    let concurrency = SELFWAKE_CONCURRENCY;
    let mut group = Group::new(c, "ordered_selfwake_100k_c64", Tuning::MEDIUM);
    bench_selfwake(&mut group, PINFOLD, true, || {
        pinfold_buffer::BufferExt::ordered_buffer(selfwake_source(wakes), concurrency)
    });
    bench_selfwake(&mut group, FUTURES_BUFFERED, true, || {
        futures_buffered::BufferedStreamExt::buffered_ordered(selfwake_source(wakes), concurrency)
    });
    bench_selfwake(&mut group, FUTURES_UTIL, true, || {
        selfwake_source(wakes).buffered(concurrency)
    });
    bench_selfwake(&mut group, FAST_ORDERED_BUFFER, true, || {
        fast_ordered_buffer::FobStreamExt::fast_ordered_buffer(selfwake_source(wakes), concurrency)
    });
    group.finish();
}

/// The same futures as [`ordered_selfwake`] through unordered buffers of concurrency 64,
/// under futures-executor's `block_on`: pinfold's `unordered_buffer(64)` against
/// futures-buffered's `buffered_unordered(64)` and futures-util's `buffer_unordered(64)`.
fn unordered_selfwake(c: &mut Criterion) {
    let wakes = self_wakes();
    let wakes = wakes.as_slice();
    let concurrency = SELFWAKE_CONCURRENCY;
    let mut group = Group::new(c, "unordered_selfwake_100k_c64", Tuning::MEDIUM);
    bench_selfwake(&mut group, PINFOLD, false, || {
        pinfold_buffer::BufferExt::unordered_buffer(selfwake_source(wakes), concurrency)
    });
    bench_selfwake(&mut group, FUTURES_BUFFERED, false, || {
        futures_buffered::BufferedStreamExt::buffered_unordered(selfwake_source(wakes), concurrency)
    });
    bench_selfwake(&mut group, FUTURES_UTIL, false, || {
        selfwake_source(wakes).buffer_unordered(concurrency)
    });
    group.finish();
}

/// Items in `for_each_concurrent_10k_c64`.
const FOR_EACH_TOTAL: usize = 10_000;

/// The source of `for_each_concurrent_10k_c64`: each index with its count of self-wakes.
fn for_each_source(wakes: &[u32]) -> impl Stream<Item = (u64, u32)> + '_ {
    stream::iter(wakes.iter().enumerate()).map(|(i, &k)| (i as u64, k))
}

/// The consumer's future for one item: it wakes itself `k` times, then adds `i` to `tally`.
async fn tally_item(tally: &Cell<(u64, u64)>, (i, k): (u64, u32)) {
    let i = YieldK::new(k, i).await;
    let (count, sum) = tally.get();
    tally.set((count + 1, sum.wrapping_add(i)));
}

/// Times one implementation of `for_each_concurrent_10k_c64`: `run` consumes the source over
/// `wakes` with its `for_each_concurrent(64, f)`, `f` tallying into `tally`, under
/// futures-executor's `block_on`. Every run checks that each item was handled once (count and
/// sum).
fn bench_for_each<'r, C, F>(
    group: &mut Group<'_, 'r>,
    id: &str,
    wakes: &'r [u32],
    tally: &'r Cell<(u64, u64)>,
    run: F,
) where
    C: Future<Output = ()>,
    F: Fn(&'r [u32], &'r Cell<(u64, u64)>) -> C + 'r,
{
    let (name, id_owned) = (group.name().to_string(), id.to_string());
    let expected = Tally::indexes(wakes.len());
    group.bench(id, move || {
        tally.set((0, 0));
        futures_executor::block_on(run(wakes, tally));
        assert_eq!(
            tally.get(),
            (expected.count, expected.sum),
            "{name}/{id_owned}: every item once"
        );
    });
}

/// `for_each_concurrent(64, f)` over 10,000 items whose futures wake themselves 0 to 4 times,
/// under futures-executor's `block_on`: pinfold's (a fixed arena of 64) against futures-util's
/// (a `FuturesUnordered`, one allocation per item) and futures-buffered's (a
/// `FuturesUnorderedBounded` of 64).
fn for_each_concurrent(c: &mut Criterion) {
    const LIMIT: usize = 64;
    let wakes = self_wakes_of(FOR_EACH_TOTAL);
    let wakes = wakes.as_slice();
    let tally = Cell::new((0, 0));
    let tally = &tally;
    let mut group = Group::new(c, "for_each_concurrent_10k_c64", Tuning::MEDIUM);
    bench_for_each(&mut group, PINFOLD, wakes, tally, |wakes, tally| {
        pinfold_buffer::ConcurrentForEachExt::concurrent_for_each(
            for_each_source(wakes),
            LIMIT,
            move |item| tally_item(tally, item),
        )
    });
    bench_for_each(&mut group, FUTURES_UTIL, wakes, tally, |wakes, tally| {
        for_each_source(wakes).for_each_concurrent(LIMIT, move |item| tally_item(tally, item))
    });
    bench_for_each(
        &mut group,
        FUTURES_BUFFERED,
        wakes,
        tally,
        |wakes, tally| {
            futures_buffered::BufferedStreamExt::for_each_concurrent(
                for_each_source(wakes),
                LIMIT,
                move |item| tally_item(tally, item),
            )
        },
    );
    group.finish();
}

/// Futures in `future_queue_10k`.
const QUEUE_TOTAL: usize = 10_000;
/// The max weight of `future_queue_10k`.
const QUEUE_MAX_WEIGHT: usize = 32;
/// The groups of `future_queue_10k`, with their max weights.
const QUEUE_GROUPS: [(&str, usize); 3] = [("a", 8), ("b", 12), ("c", 16)];

/// The weight and group of future `i` of `future_queue_10k`: weights 1 to 4 in turn, and
/// groups `a`, `b`, `c`, none, none in turn (so each group gets every weight).
fn queue_item(i: usize) -> (usize, Option<&'static str>) {
    (
        1 + i % 4,
        [Some("a"), Some("b"), Some("c"), None, None][i % 5],
    )
}

/// `future_queue_10k`: 10,000 ready futures of weights 1 to 4 in three groups of max weights
/// 8, 12 and 16 (and two fifths in none), under a max weight of 32, under futures-executor's
/// `block_on`: pinfold's `future_queue_grouped` against the `future-queue` crate's (whose
/// items are closures given the future's slot numbers; here they ignore them). What the
/// weighing, the group queues and the buffering cost per future.
fn future_queue(c: &mut Criterion) {
    let mut group = Group::new(c, "future_queue_10k", Tuning::MEDIUM);
    let expected = Tally::indexes(QUEUE_TOTAL);
    let check = move |id: &str, tally: Tally| {
        assert_eq!(
            (tally.count, tally.sum),
            (expected.count, expected.sum),
            "future_queue_10k/{id}: every output once"
        );
    };
    group.bench(PINFOLD, move || {
        let source = stream::iter(0..QUEUE_TOTAL).map(|i| {
            let (weight, group) = queue_item(i);
            (weight, group, std::future::ready(i as u64))
        });
        let queue =
            pinfold_buffer::BufferExt::future_queue_grouped(source, QUEUE_MAX_WEIGHT, QUEUE_GROUPS);
        check(PINFOLD, tally_block_on(queue));
    });
    group.bench(FUTURE_QUEUE, move || {
        let source = stream::iter(0..QUEUE_TOTAL).map(|i| {
            let (weight, group) = queue_item(i);
            let start = move |_: future_queue::FutureQueueContext| std::future::ready(i as u64);
            (weight, group, start)
        });
        let queue =
            future_queue::StreamExt::future_queue_grouped(source, QUEUE_MAX_WEIGHT, QUEUE_GROUPS);
        check(FUTURE_QUEUE, tally_block_on(queue));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = ordered, ordered_window, unordered, driven, ordered_selfwake, unordered_selfwake,
        for_each_concurrent, adaptive_knee, future_queue
}
criterion_main!(benches);
