//! Ordered sets of futures: pinfold's `FuturesOrdered` and `FuturesOrderedBounded` against
//! futures-util's `FuturesOrdered` (one `Arc` per future, a binary heap of waiting outputs) and
//! futures-buffered's `FuturesOrdered` and `FuturesOrderedBounded` (its unordered sets, and a
//! binary heap). Measured in process CPU time: every run is on one thread.
//!
//! - `futures_ordered_sleep_100k` (growable) and `futures_ordered_bounded_sleep_100k`: 100,000
//!   futures that sleep a random 0–7 ms (the same delays for everyone), all pushed, then
//!   drained in order, on a one-thread tokio runtime with the paused clock (the runtime skips
//!   ahead to the next timer when idle, so the time is the CPU cost of the set and the timers).
//! - `futures_ordered_ready_512k` and `futures_ordered_bounded_ready_512k`: 512,000 ready
//!   futures, 256 at a time, under futures-executor's `block_on`.
//!
//! futures-util has no bounded ordered set: its `FuturesOrdered` stands in the bounded groups
//! too.

use core::future::ready;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::{Stream, StreamExt};
use pinfold_benches::{
    CpuTime, FUTURES_BUFFERED, FUTURES_UTIL, Group, PINFOLD, Tuning, criterion, keep_full_block_on,
    measure_warm, paused_runtime, random_delays, sleeper,
};
use tokio::runtime::Runtime;

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// Futures of the sleep workload.
const SLEEPERS: usize = 100_000;
/// The longest random delay, in milliseconds.
const MAX_DELAY_MS: u64 = 7;

/// Pushes a sleep of `delays[i]` ms giving `i` for every `i`, drains `set` on `runtime`, and
/// checks that the outputs came in push order. Returns how many there were.
fn sleep_in_order<S, F>(
    runtime: &Runtime,
    delays: &[u64],
    mut set: S,
    push: impl Fn(&mut S, F),
    make: impl Fn(u64, u64) -> F,
) -> usize
where
    S: Stream<Item = u64> + Unpin,
{
    for (i, &millis) in delays.iter().enumerate() {
        push(&mut set, make(i as u64, millis));
    }
    runtime.block_on(async {
        let mut expected = 0;
        while let Some(out) = set.next().await {
            assert_eq!(out, expected, "outputs in push order");
            expected += 1;
        }
        expected as usize
    })
}

/// A sleep group: for each `id => set` (an expression making the empty set), times
/// [`sleep_in_order`] on it, after one untimed run that counts its allocations.
macro_rules! sleep_group {
    ($c:expr, $name:literal, $runtime:expr, $delays:expr, $($id:expr => $make:expr),+ $(,)?) => {{
        let mut group = Group::new($c, $name, Tuning::SLOW);
        $(
            let work = || sleep_in_order($runtime, $delays, $make, |s, f| s.push_back(f), sleeper);
            group.bench_with(
                $id,
                || {
                    let (allocs, count) = measure_warm(&work);
                    assert_eq!(count, SLEEPERS);
                    (allocs, None)
                },
                work,
            );
        )+
        group.finish();
    }};
}

/// A ready group: for each `id => set`, times 512,000 ready futures through the set, at most
/// 256 at a time, under `block_on`.
macro_rules! ready_group {
    ($c:expr, $name:literal, $($id:expr => $make:expr),+ $(,)?) => {{
        let n = READY_TOTAL as u64;
        let expected = n * (n - 1) / 2;
        let mut group = Group::new($c, $name, Tuning::MEDIUM);
        $(
            group.bench($id, || {
                let mut set = $make;
                let make = |i: usize| ready(i as u64);
                let sum = keep_full_block_on(&mut set, READY_TOTAL, READY_IN_FLIGHT, make, |s, f| {
                    s.push_back(f)
                });
                assert_eq!(sum, expected);
            });
        )+
        group.finish();
    }};
}

fn futures_ordered_sleep(c: &mut Criterion<CpuTime>) {
    let runtime = paused_runtime();
    let delays = random_delays(SLEEPERS, MAX_DELAY_MS, 0x0DE2_ED5E);
    let delays = delays.as_slice();
    sleep_group!(c, "futures_ordered_sleep_100k", &runtime, delays,
        PINFOLD => pinfold_buffer::FuturesOrdered::new(),
        FUTURES_BUFFERED => futures_buffered::FuturesOrdered::new(),
        FUTURES_UTIL => futures_util::stream::FuturesOrdered::new(),
    );
    sleep_group!(c, "futures_ordered_bounded_sleep_100k", &runtime, delays,
        PINFOLD => pinfold_buffer::FuturesOrderedBounded::new(SLEEPERS),
        FUTURES_BUFFERED => futures_buffered::FuturesOrderedBounded::new(SLEEPERS),
        FUTURES_UTIL => futures_util::stream::FuturesOrdered::new(),
    );
}

/// 512,000 ready futures, at most 256 in the set, under `block_on`.
const READY_TOTAL: usize = 512_000;
const READY_IN_FLIGHT: usize = 256;

fn futures_ordered_ready(c: &mut Criterion<CpuTime>) {
    ready_group!(c, "futures_ordered_ready_512k",
        PINFOLD => pinfold_buffer::FuturesOrdered::new(),
        FUTURES_BUFFERED => futures_buffered::FuturesOrdered::new(),
        FUTURES_UTIL => futures_util::stream::FuturesOrdered::new(),
    );
    ready_group!(c, "futures_ordered_bounded_ready_512k",
        PINFOLD => pinfold_buffer::FuturesOrderedBounded::new(READY_IN_FLIGHT),
        FUTURES_BUFFERED => futures_buffered::FuturesOrderedBounded::new(READY_IN_FLIGHT),
        FUTURES_UTIL => futures_util::stream::FuturesOrdered::new(),
    );
}

criterion_group! {
    name = benches;
    config = criterion(CpuTime);
    targets = futures_ordered_sleep, futures_ordered_ready
}
criterion_main!(benches);
