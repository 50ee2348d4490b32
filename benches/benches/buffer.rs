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
//! contract, against the bounded ordered buffers), `unordered_*`.

use std::future::Future;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::{Stream, StreamExt, stream};
use pinfold_benches::{
    FAST_ORDERED_BUFFER, FUTURES_BUFFERED, FUTURES_UTIL, Group, PINFOLD, Tuning, criterion,
    measure_warm, random_delays, record_virtual,
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

/// Runs `buffered` (a buffer over [`source`]) to the end on `runtime`; gives the outputs and
/// the virtual time it took.
fn run<S: Stream<Item = u64>>(runtime: &Runtime, buffered: S) -> (Vec<u64>, Duration) {
    runtime.block_on(async {
        let started = tokio::time::Instant::now();
        let out: Vec<u64> = buffered.collect().await;
        (out, started.elapsed())
    })
}

/// Times one implementation: `make` builds its buffer over the source stream. The untimed
/// run checks the outputs (in input order if `ordered`, else all of them in any order) and
/// records the allocations and the virtual time.
fn bench_buffer<S, F>(group: &mut Group<'_>, id: &str, runtime: &Runtime, ordered: bool, make: F)
where
    S: Stream<Item = u64>,
    F: Fn() -> S,
{
    let name = group.name().to_string();
    let count = || {
        let (allocs, (mut out, elapsed)) = measure_warm(|| run(runtime, make()));
        if !ordered {
            out.sort_unstable();
        }
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u64),
            "{name}/{id}: every output once{}",
            if ordered { ", in input order" } else { "" }
        );
        record_virtual(&name, id, elapsed);
        (allocs, None)
    };
    group.bench_with(id, count, |b| b.iter(|| run(runtime, make()).0.len()));
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
/// `buffered` and futures-buffered's `buffered_ordered`, bounded too.
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

/// A one-thread runtime whose clock is paused: it jumps to the next timer when idle.
fn paused_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread tokio runtime with a paused clock")
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = ordered, ordered_window, unordered
}
criterion_main!(benches);
