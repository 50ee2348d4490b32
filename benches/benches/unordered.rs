//! Growable sets of futures: pinfold's `FuturesUnordered` against futures-buffered's
//! `FuturesUnordered` (triangular groups, kept forever) and futures-util's (one `Arc` per
//! future, freed per future): the steady state, and a burst to 100,000 futures and back;
//! each polled with a no-op waker and under futures-executor's `block_on` (`*_block_on`).
//! And 10,000 pending futures woken 10 at a time from the thread that drains the set
//! (`unordered_sparse_10k`, under `block_on`, setup untimed), where pinfold's bounded set
//! (`pinfold`) and growable set (`pinfold-growable`) meet futures-concurrency's `FutureGroup`
//! too. And the memory a growable set takes per future it holds: 256 and 100,000 futures that
//! never finish, pushed into a set made with `new()`, each polled once and dropped
//! (`unordered_held_256`, `unordered_held_100k`).

use core::future::ready;

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_core::Stream;
use pinfold_benches::{
    Driver, FUTURES_BUFFERED, FUTURES_CONCURRENCY, FUTURES_UTIL, Group, Idle, PINFOLD,
    PINFOLD_GROWABLE, SparseWakes, Tuning, YieldK, criterion, live_bytes, measure_warm,
    poll_each_once_pending,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

type Pinfold<F> = pinfold_unordered::FuturesUnordered<F>;
type Buffered<F> = futures_buffered::FuturesUnordered<F>;
type Util<F> = futures_util::stream::FuturesUnordered<F>;
type Bounded<F> = pinfold_unordered::FuturesUnorderedBounded<F>;
type FutureGroup<F> = futures_concurrency::future::FutureGroup<F>;

/// `0 + 1 + ... + (n - 1)`.
fn sum_below(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) / 2
}

/// `ready_512k` on the growable sets: 512,000 ready futures, 256 at a time, into a set made
/// with `new()` (so it grows to 256 on the way). Polled with a no-op waker
/// (`unordered_ready_512k`), and awaited under futures-executor's `block_on`
/// (`unordered_ready_512k_block_on`).
fn unordered_ready_512k(c: &mut Criterion) {
    const TOTAL: usize = 512_000;
    const IN_FLIGHT: usize = 256;
    let expected = sum_below(TOTAL);
    let make = |i: usize| ready(i as u64);
    for driver in Driver::BOTH {
        let mut group = Group::new(c, &driver.group("unordered_ready_512k"), Tuning::MEDIUM);
        group.bench(PINFOLD, || {
            let mut set = Pinfold::new();
            let sum = driver.keep_full(&mut set, TOTAL, IN_FLIGHT, make, |s, f| s.push(f));
            assert_eq!(sum, expected);
        });
        group.bench(FUTURES_BUFFERED, || {
            let mut set = Buffered::new();
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

/// Futures the set holds throughout the burst.
const BASE: usize = 100;
/// Futures at the top of the burst.
const PEAK: usize = 100_000;

/// The burst: `BASE` long-lived futures (pending for good), then `PEAK - BASE` futures that
/// are ready after one yield, all pushed before any is polled; then drained by `driver` (a
/// no-op waker in a loop, or futures-executor's `block_on`) until only the long-lived ones are
/// left. Returns the bytes live at that point, above what was live when the enclosing
/// [`measure`](pinfold_benches::measure) began (0 when timed), so what the set still holds
/// once it is back to `BASE` futures.
fn burst<S>(
    driver: Driver,
    mut set: S,
    push: impl Fn(&mut S, YieldK<u64>),
    len: impl Fn(&S) -> usize,
) -> i64
where
    S: Stream<Item = u64> + Unpin,
{
    for i in 0..BASE {
        push(&mut set, YieldK::forever(i as u64));
    }
    for i in BASE..PEAK {
        push(&mut set, YieldK::new(1, i as u64));
    }
    let sum = driver.drain_while(&mut set, |set| len(set) > BASE);
    assert_eq!(
        sum,
        sum_below(PEAK) - sum_below(BASE),
        "every short future's output"
    );
    let held = live_bytes();
    drop(set);
    held
}

/// Grow to 100,000 futures, drain back to 100: the time, the peak of live bytes, and (as
/// `retained_bytes`) what the set still holds with 100 futures left. Drained with a no-op
/// waker (`burst_100k`) and under futures-executor's `block_on` (`burst_100k_block_on`).
fn burst_100k(c: &mut Criterion) {
    for driver in Driver::BOTH {
        let mut group = Group::new(c, &driver.group("burst_100k"), Tuning::MEDIUM);
        let count = |run: &dyn Fn() -> i64| {
            let (allocs, held) = measure_warm(run);
            (allocs, Some(held.max(0) as u64))
        };
        let pinfold = || burst(driver, Pinfold::new(), |s, f| s.push(f), |s| s.len());
        group.bench_with(PINFOLD, move || count(&pinfold), pinfold);
        let buffered = || burst(driver, Buffered::new(), |s, f| s.push(f), Buffered::len);
        group.bench_with(FUTURES_BUFFERED, move || count(&buffered), buffered);
        let util = || burst(driver, Util::new(), |s, f| s.push(f), Util::len);
        group.bench_with(FUTURES_UTIL, move || count(&util), util);
        group.finish();
    }
}

/// 10,000 futures, each pending until its cell fires, then giving its index
/// ([`SparseWakes::unordered_sparse_10k`]); the cells fired 10 at a time, in an order
/// shuffled once (deterministically), so every future finishes once; after each batch of 10
/// the set is drained until it gave those 10 outputs. The cells are fired on the bench's own
/// thread, under futures-executor's `block_on` (each output awaited with `poll_fn`). Untimed:
/// building the set, pushing the futures and polling it until every future registered its
/// waker; timed: the 1,000 batches. Checked: each batch's outputs add up to its futures'
/// indexes, and the round gives 10,000 outputs with their sum. pinfold's bounded set (id
/// `pinfold`, capacity 10,000) and growable set (`pinfold-growable`, a row of its own) against
/// futures-util's, futures-buffered's growable `FuturesUnordered` and futures-concurrency's
/// `FutureGroup`.
fn unordered_sparse_10k(c: &mut Criterion) {
    let wakes = SparseWakes::unordered_sparse_10k();
    let mut group = Group::new(c, "unordered_sparse_10k", Tuning::MEDIUM);
    wakes.bench(&mut group, PINFOLD, |w| {
        let mut set = Bounded::new(w.len());
        w.signals().for_each(|f| set.push(f));
        set
    });
    wakes.bench(&mut group, PINFOLD_GROWABLE, |w| {
        let mut set = Pinfold::new();
        w.signals().for_each(|f| set.push(f));
        set
    });
    wakes.bench(&mut group, FUTURES_BUFFERED, |w| {
        let mut set = Buffered::new();
        w.signals().for_each(|f| set.push(f));
        set
    });
    wakes.bench(&mut group, FUTURES_UTIL, |w| {
        let set = Util::new();
        w.signals().for_each(|f| set.push(f));
        set
    });
    wakes.bench(&mut group, FUTURES_CONCURRENCY, |w| {
        let mut set = FutureGroup::new();
        w.signals().for_each(|f| {
            set.insert(f);
        });
        set
    });
    group.finish();
}

/// Growable sets, made with `new()`, of 256 and of 100,000 futures that never finish and never
/// register a waker ([`Idle`], 8 bytes each): filled (growing on the way), polled with a no-op
/// waker until each was polled once, and dropped. The time is that of the three; the peak of live
/// bytes over the futures held is what the set takes per future at that size, the future's own 8
/// bytes and the room its growth left unused included.
fn unordered_held(c: &mut Criterion) {
    for (n, name, tuning) in [
        (256, "unordered_held_256", Tuning::FAST),
        (100_000, "unordered_held_100k", Tuning::MEDIUM),
    ] {
        let mut group = Group::new(c, name, tuning);
        group.bench(PINFOLD, move || {
            let mut set = Pinfold::new();
            (0..n as u64).for_each(|i| set.push(Idle(i)));
            poll_each_once_pending(set, n as u64);
        });
        group.bench(FUTURES_BUFFERED, move || {
            let mut set = Buffered::new();
            (0..n as u64).for_each(|i| set.push(Idle(i)));
            poll_each_once_pending(set, n as u64);
        });
        group.bench(FUTURES_UTIL, move || {
            let set = Util::new();
            (0..n as u64).for_each(|i| set.push(Idle(i)));
            poll_each_once_pending(set, n as u64);
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = unordered_ready_512k, burst_100k, unordered_sparse_10k, unordered_held
}
criterion_main!(benches);
