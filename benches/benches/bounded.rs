//! Fixed-capacity sets of futures: pinfold's `FuturesUnorderedBounded` against
//! futures-buffered's `FuturesUnorderedBounded` and futures-util's `FuturesUnordered` (the set
//! users reach for, growable, one `Arc` per future), on the workloads of DESIGN.md's targets:
//! ready futures, timers, futures that wake themselves, and wakes from other threads. The
//! workloads polled with a no-op waker also run under futures-executor's `block_on`
//! (`*_block_on`). And the memory a set takes per future it holds: sets of 256 and of 10,000
//! futures that never finish, built, each polled once and dropped (`held_256`, `held_10k`; pinfold
//! against futures-buffered's bounded set).

use core::future::{poll_fn, ready};
use core::task::{Context, Waker};
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, WallTime};
use criterion::{Criterion, criterion_group, criterion_main};
use futures_core::Stream;
use pinfold_benches::{
    CpuTime, Driver, FUTURES_BUFFERED, FUTURES_UTIL, FireOrder, Group, Idle, PINFOLD, RoundTimes,
    Signal, Tuning, WakerThreads, YieldK, block_on_parking, criterion, keep_full_async,
    poll_each_once_pending, poll_next,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

type Pinfold<F> = pinfold_unordered::FuturesUnorderedBounded<F>;
type Buffered<F> = futures_buffered::FuturesUnorderedBounded<F>;
type Util<F> = futures_util::stream::FuturesUnordered<F>;

/// How many futures a set holds at once in the anchors' workloads.
const IN_FLIGHT: usize = 256;

/// `0 + 1 + ... + (n - 1)`: the sum of the outputs when future `i` gives `i`.
fn sum_below(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// 512,000 `std::future::ready` futures through a set of 256, kept full (futures-buffered's
/// memory benchmark): polled with a no-op waker (`ready_512k`), and awaited under
/// futures-executor's `block_on`, a real waker (`ready_512k_block_on`).
fn ready_512k(c: &mut Criterion) {
    const TOTAL: usize = 512_000;
    let expected = sum_below(TOTAL);
    let make = |i: usize| ready(i as u64);
    for driver in Driver::BOTH {
        let mut group = Group::new(c, &driver.group("ready_512k"), Tuning::MEDIUM);
        group.bench(PINFOLD, || {
            let mut set = Pinfold::new(IN_FLIGHT);
            let sum = driver.keep_full(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.bench(FUTURES_BUFFERED, || {
            let mut set = Buffered::new(IN_FLIGHT);
            let sum = driver.keep_full(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.bench(FUTURES_UTIL, || {
            let mut set = Util::new();
            let sum = driver.keep_full(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.finish();
    }
}

/// 65,536 futures that each sleep 100 µs, 256 at a time, on a one-thread tokio runtime with
/// the real clock (futures-buffered's speed benchmark). Timed twice: wall time, which the
/// timer wheel's 1 ms resolution bounds (≈ 256 rounds of ≥ 1 ms), and the process's CPU time,
/// which is what the set costs.
fn sleep_65k<M: Measurement + 'static>(c: &mut Criterion<M>, name: &str) {
    const TOTAL: usize = 65_536;
    let expected = sum_below(TOTAL);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread tokio runtime");
    let make = |i: usize| async move {
        tokio::time::sleep(Duration::from_micros(100)).await;
        i as u64
    };
    let mut group = Group::new(c, name, Tuning::SLOW);
    group.bench(PINFOLD, || {
        let sum = runtime.block_on(async {
            let mut set = Pinfold::new(IN_FLIGHT);
            keep_full_async(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f)).await
        });
        assert_eq!(sum, expected);
    });
    group.bench(FUTURES_BUFFERED, || {
        let sum = runtime.block_on(async {
            let mut set = Buffered::new(IN_FLIGHT);
            keep_full_async(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f)).await
        });
        assert_eq!(sum, expected);
    });
    group.bench(FUTURES_UTIL, || {
        let sum = runtime.block_on(async {
            let mut set = Util::new();
            keep_full_async(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f)).await
        });
        assert_eq!(sum, expected);
    });
    group.finish();
}

fn sleep_65k_wall(c: &mut Criterion<WallTime>) {
    sleep_65k(c, "sleep_65k_wall");
}

fn sleep_65k_cpu(c: &mut Criterion<CpuTime>) {
    sleep_65k(c, "sleep_65k_cpu");
}

/// 256 futures that each wake themselves 16 times before finishing, all in a set of 256:
/// 4,352 polls, 4,096 of them after a self-wake. Polled with a no-op waker (`yield_16`), and
/// awaited under futures-executor's `block_on` (`yield_16_block_on`), where each self-wake
/// must reach the executor through the set's waker for the set to be polled again.
fn yield_16(c: &mut Criterion) {
    const FUTURES: usize = 256;
    const K: u32 = 16;
    let expected = sum_below(FUTURES);
    let make = |i: usize| YieldK::new(K, i as u64);
    for driver in Driver::BOTH {
        let mut group = Group::new(c, &driver.group("yield_16"), Tuning::FAST);
        group.bench(PINFOLD, || {
            let mut set = Pinfold::new(FUTURES);
            let sum = driver.keep_full(&mut set, FUTURES, FUTURES, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.bench(FUTURES_BUFFERED, || {
            let mut set = Buffered::new(FUTURES);
            let sum = driver.keep_full(&mut set, FUTURES, FUTURES, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.bench(FUTURES_UTIL, || {
            let mut set = Util::new();
            let sum = driver.keep_full(&mut set, FUTURES, FUTURES, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.finish();
    }
}

/// One round of `wakes_4_threads` for one set: pushes a future per cell and polls until every
/// one has registered its waker (untimed), then times from the release of the waker threads
/// until the owner, parked whenever the set is pending, has every output.
fn wake_round<'w, S>(
    workers: &'w WakerThreads,
    new_set: impl FnOnce() -> S,
    push: impl Fn(&mut S, Signal<'w>),
) -> RoundTimes
where
    S: Stream<Item = u64> + Unpin,
{
    let expected = sum_below(workers.len());
    let (took, sum) = workers.round(
        || {
            let mut set = new_set();
            for signal in workers.signals() {
                push(&mut set, signal);
            }
            let mut cx = Context::from_waker(Waker::noop());
            while !workers.all_registered() {
                assert!(
                    poll_next(&mut set, &mut cx).is_pending(),
                    "nothing has fired yet"
                );
            }
            set
        },
        |mut set| {
            block_on_parking(async {
                let mut sum = 0u64;
                while let Some(out) = poll_fn(|cx| poll_next(&mut set, cx)).await {
                    sum += out;
                }
                sum
            })
        },
    );
    assert_eq!(sum, expected, "every future's output, once");
    took
}

/// 16,384 futures completed by 4 threads, all in one set; the owner parks while the set is
/// pending. The threads are spawned once. Run with the threads firing random slots
/// (`wakes_4_threads`), and firing adjacent slots at the same moment
/// (`wakes_4_threads_adjacent`: thread `t` fires `t`, `t + 4`, ...). Each is timed twice: wall
/// time from the threads' release to the last output, and (`_cpu`) the CPU time of the four
/// fire loops plus the owner's drain, which a loaded or small machine's scheduling (five
/// busy threads on two cores) disturbs far less.
fn wakes<M: Measurement<Value = Duration> + 'static>(
    c: &mut Criterion<M>,
    name: &str,
    order: FireOrder,
    time: fn(RoundTimes) -> Duration,
) {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 4096;
    const TOTAL: usize = THREADS * PER_THREAD;
    let workers = WakerThreads::new(THREADS, PER_THREAD, order);
    let mut group = Group::new(c, name, Tuning::MEDIUM);

    let pinfold = || wake_round(&workers, || Pinfold::new(TOTAL), |s, f| s.push(f));
    group.bench_rounds(PINFOLD, move || time(pinfold()));
    let buffered = || wake_round(&workers, || Buffered::new(TOTAL), |s, f| s.push(f));
    group.bench_rounds(FUTURES_BUFFERED, move || time(buffered()));
    let util = || wake_round(&workers, Util::new, |s, f| s.push(f));
    group.bench_rounds(FUTURES_UTIL, move || time(util()));
    group.finish();
    black_box(workers);
}

const RANDOM_ORDER: FireOrder = FireOrder::Shuffled(0x05EE_D0F3_A4E5);

fn wakes_4_threads(c: &mut Criterion<WallTime>) {
    wakes(c, "wakes_4_threads", RANDOM_ORDER, |t| t.wall);
}

fn wakes_4_threads_cpu(c: &mut Criterion<CpuTime>) {
    wakes(c, "wakes_4_threads_cpu", RANDOM_ORDER, |t| t.cpu);
}

fn wakes_4_threads_adjacent(c: &mut Criterion<WallTime>) {
    wakes(c, "wakes_4_threads_adjacent", FireOrder::Interleaved, |t| {
        t.wall
    });
}

fn wakes_4_threads_adjacent_cpu(c: &mut Criterion<CpuTime>) {
    wakes(
        c,
        "wakes_4_threads_adjacent_cpu",
        FireOrder::Interleaved,
        |t| t.cpu,
    );
}

/// Sets of 256 and of 10,000 futures that never finish and never register a waker ([`Idle`], 8
/// bytes each): each set made with room for exactly its futures, filled, polled with a no-op waker
/// until each was polled once, and dropped. The time is that of the three; the peak of live bytes
/// over the futures held (the row's bytes per value) is what the set takes per future, the future's
/// own 8 bytes included.
fn held(c: &mut Criterion) {
    for (n, name) in [(256, "held_256"), (10_000, "held_10k")] {
        let mut group = Group::new(c, name, Tuning::FAST);
        group.bench(PINFOLD, move || {
            let mut set = Pinfold::new(n);
            (0..n as u64).for_each(|i| set.push(Idle(i)));
            poll_each_once_pending(set, n as u64);
        });
        group.bench(FUTURES_BUFFERED, move || {
            let mut set = Buffered::new(n);
            (0..n as u64).for_each(|i| set.push(Idle(i)));
            poll_each_once_pending(set, n as u64);
        });
        group.finish();
    }
}

criterion_group! {
    name = wall;
    config = criterion(WallTime);
    targets = ready_512k, sleep_65k_wall, yield_16, wakes_4_threads, wakes_4_threads_adjacent,
        held
}
criterion_group! {
    name = cpu;
    config = criterion(CpuTime);
    targets = sleep_65k_cpu, wakes_4_threads_cpu, wakes_4_threads_adjacent_cpu
}
criterion_main!(wall, cpu);
