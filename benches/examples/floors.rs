//! Floors under the speed targets pinfold misses (see `benches/README.md`, *Targets* and
//! *Floors*), in eight sections: what no set with these rules could beat, timed side by side
//! with the peers on the machine it runs on. Section 4 also times what the waking threads cost
//! alone, which turns out not to be a floor, and what pinfold's merge costs with no keys, a
//! floor under any map built on it; sections 5 and 6 time what pinfold's arena costs with no
//! order kept, a floor under any ordered set built on it but not under one built otherwise;
//! section 7 times the sparse wakes, where only the woken streams need polling.
//! Run with `cargo run --release -p pinfold-benches --example floors`.
//!
//! 1. `yield_16_block_on`: the fairness rule (a future that woke itself is polled again in
//!    the next call, so a call polls each future at most once) fixes how many times `block_on` must poll the set:
//!    counted here for each set (deterministic), and multiplied by the cost of one `block_on`
//!    round trip (a future that wakes itself and returns `Pending`), timed here; plus, for each
//!    of the 4,096 self-wakes, one atomic read-modify-write (a wake from a waker that may be on
//!    any thread must be one), timed here uncontended.
//! 2. `ready_512k_block_on`: a `VecDeque` of futures with no waker at all (push, pop, poll
//!    once) under the same driver, timed side by side with futures-buffered's bounded set.
//! 3. `merge_hot_16` (and `merge_ready_1k`, 1,000 streams of 100 ready items, the same way):
//!    the merge's target is 0.8x the best peer, tokio-stream's `StreamMap`,
//!    which polls its streams with the task's own waker from a random start and keeps no
//!    queue. A `VecDeque` of the streams with no waker of their own (pop one, poll it once with
//!    the task's waker, push it back: one item per stream per turn, the fairness rule alone)
//!    is timed side by side with `StreamMap` and pinfold's `MergeBounded` on the same
//!    streams.
//! 4. `merge_wakes_10k` (and `map_streams_10k`, the same wakes under user keys): 10,000
//!    streams of 10 items, each item's cell fired by one of 4 threads in random order. Every
//!    merge makes the threads fire the 100,000 cells (set a flag, take the registered waker,
//!    wake it); here the registered wakers are no-ops, the cheapest wake there is. The threads'
//!    CPU time in their fire loops alone (the owner asleep) is a floor under the CPU metric;
//!    an owner that takes the items in cell order, yielding its thread while a cell has not
//!    fired, and polls nothing else, gives the wall time of the round with no merge at all.
//!    Both side by side with tokio-stream's `StreamMap` and pinfold's `MergeBounded` on the
//!    same rounds. Then `map_streams_10k` itself (the bench's seed, every tenth key's stream
//!    replaced half-way) through tokio-stream's and pinfold's `StreamMap`, next to
//!    `MergeBounded` and a growable `Merge` of one group on the same wakes with no keys and
//!    nothing replaced (the merge the map is built on, with nothing on top: what any map on it
//!    costs at least) and `StreamMap` with nothing replaced; the five take turns round by
//!    round, and the median is compared.
//!
//! 5. `futures_ordered_ready_512k` (the ordered sets' target is 0.8x the best peer,
//!    futures-buffered's ordered sets): the same 512,000 ready futures, 256 at a time, through
//!    pinfold's *unordered* sets, which run on the same arena as its ordered ones and keep no
//!    order at all, and through a `VecDeque` polled front to back with no waker (what a design
//!    without the arena could get down to), side by side with both ordered sets of pinfold and
//!    of futures-buffered.
//! 6. `futures_ordered_sleep_100k`: the same 100,000 sleeps on tokio's paused clock through
//!    pinfold's unordered set, and through a queue that polls every sleep once (registering
//!    the task's waker) and then only the one at the front, keeping no record of wakes (its
//!    sleeps are boxed, which it needs and the others do not: it overstates that floor), side
//!    by side with pinfold's and futures-buffered's `FuturesOrdered`.
//! 7. `merge_sparse_10k`: 10,000 streams, 1,000 batches of 10 fired on the draining thread
//!    (the bench's batches, [`SparseWakes::merge_sparse_10k`]). The floor: the same batches'
//!    indexes pushed to a `Vec` and read back, with no stream, no waker and no poll at all;
//!    side by side with tokio-stream's `StreamMap` and pinfold's `MergeBounded` on the same
//!    batches, timed as the bench times them (the batches only, setup left out).
//! 8. `pool_acquire_release` (the pool's target is 1.0x bab): what keeping every free buffer
//!    within reach of every thread costs. A pool whose free lists any thread may pop changes a
//!    shared word to take a buffer and again to give one back: timed here as two uncontended
//!    CASes of one word per cycle, side by side with bab's `try_acquire` and `release` (a
//!    thread-local stock that no other thread can take from: no atomic operation) and
//!    pinfold's `try_acquire` and drop (a stock its owner alone uses, with plain loads and
//!    stores, which a task about to wait sweeps behind a heavy barrier). On Linux, the heavy
//!    barrier is timed too: one `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, paid once per
//!    spell of the pool being short of buffers.
//!
//! Timings are the best of several runs (a floor, on a shared machine); the ratios are what
//! to compare with the targets. Sections 5 and 6 run on one thread, so their wall time is the
//! CPU time the benchmarks measure, give or take the machine's noise.

use core::future::{Future, ready};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::{Stream, StreamExt};
use pinfold_benches::{Driver, FireOrder, RoundTimes, SparseWakes, WakerThreads, YieldK, sleeper};

/// Counts the calls of `poll_next` on the stream it wraps.
struct CountPolls<S> {
    inner: S,
    polls: usize,
}

impl<S: Stream + Unpin> Stream for CountPolls<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.polls += 1;
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

/// How many times `block_on` polls `set` to drain it.
fn set_polls<S: Stream<Item = u64> + Unpin>(set: S) -> usize {
    let mut counted = CountPolls {
        inner: set,
        polls: 0,
    };
    futures_executor::block_on(async { while counted.next().await.is_some() {} });
    counted.polls
}

/// The best of `runs` timings of `f`, in nanoseconds, divided by `per`.
fn best(runs: usize, per: u32, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e9 / f64::from(per)
        })
        .fold(f64::INFINITY, f64::min)
}

/// The futures of `workers`' cells, each polled once so that it registers a no-op waker.
fn registered(workers: &WakerThreads) -> Vec<pinfold_benches::Signal<'_>> {
    let mut signals: Vec<_> = workers.signals().collect();
    let mut cx = Context::from_waker(Waker::noop());
    for signal in &mut signals {
        assert!(Pin::new(signal).poll(&mut cx).is_pending());
    }
    signals
}

/// The best of `runs` rounds, wall and CPU time each taken at its own best.
fn best_round(runs: usize, mut round: impl FnMut() -> RoundTimes) -> RoundTimes {
    (0..runs).map(|_| round()).fold(
        RoundTimes {
            wall: std::time::Duration::MAX,
            cpu: std::time::Duration::MAX,
        },
        |best, took| RoundTimes {
            wall: best.wall.min(took.wall),
            cpu: best.cpu.min(took.cpu),
        },
    )
}

/// The median and the best wall time, in milliseconds, of `runs` rounds of each of `rounds`,
/// run in turn (one of each, then again), so that the machine's slow spells fall on all alike:
/// section 4's map rounds are spread out (their wall time depends on when the scheduler runs
/// the owner among the waker threads), and the bench's figure is their mean, not their best.
fn spread<const N: usize>(
    runs: usize,
    mut rounds: [&mut dyn FnMut() -> RoundTimes; N],
) -> [[f64; 2]; N] {
    let mut walls = [const { Vec::new() }; N];
    for _ in 0..runs {
        for (round, walls) in rounds.iter_mut().zip(&mut walls) {
            walls.push(ms(round().wall));
        }
    }
    walls.map(|mut walls| {
        walls.sort_by(f64::total_cmp);
        [walls[runs / 2], walls[0]]
    })
}

/// One line of section 4: a metric of the rounds `[floor, StreamMap, MergeBounded]`, and the
/// ratios of the floor and of `MergeBounded` to `StreamMap`.
fn print_rounds(
    metric: &str,
    floor_name: &str,
    [floor, stream_map, merge_bounded]: [RoundTimes; 3],
    pick: fn(RoundTimes) -> std::time::Duration,
) {
    let ratio = |t: RoundTimes| pick(t).as_secs_f64() / pick(stream_map).as_secs_f64();
    println!(
        "  {metric}: {floor_name}: {:.2} ms; StreamMap: {:.2} ms; MergeBounded: {:.2} ms; floor / StreamMap = {:.2}, MergeBounded / StreamMap = {:.2} (target for pinfold 1.0)",
        ms(pick(floor)),
        ms(pick(stream_map)),
        ms(pick(merge_bounded)),
        ratio(floor),
        ratio(merge_bounded)
    );
}

/// A duration in milliseconds.
fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A FIFO of futures, each polled once when popped: ready futures only (a pending one is put
/// back and the task woken, so the driver spins on it).
struct Fifo<F>(VecDeque<F>);

impl<F> Fifo<F> {
    fn push_back(&mut self, fut: F) {
        self.0.push_back(fut);
    }
}

impl<F: Future<Output = u64> + Unpin> Stream for Fifo<F> {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let Some(mut fut) = self.0.pop_front() else {
            return Poll::Ready(None);
        };
        match Pin::new(&mut fut).poll(cx) {
            Poll::Ready(out) => Poll::Ready(Some(out)),
            Poll::Pending => {
                self.0.push_back(fut);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
}

/// Round-robin over streams through a FIFO, each polled with the task's waker: one item per
/// stream per turn, no waker of its own, no record of which stream was woken.
struct FifoMerge<S>(VecDeque<S>);

impl<S: Stream<Item = u64> + Unpin> Stream for FifoMerge<S> {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let mut pending = 0;
        while pending < self.0.len() {
            let Some(mut stream) = self.0.pop_front() else {
                break;
            };
            match Pin::new(&mut stream).poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    self.0.push_back(stream);
                    return Poll::Ready(Some(item));
                }
                Poll::Ready(None) => {}
                Poll::Pending => {
                    self.0.push_back(stream);
                    pending += 1;
                }
            }
        }
        if self.0.is_empty() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
}

/// A future of the sleep workload, or its output once it gave one.
enum Sleeper<F> {
    Running(F),
    Done(u64),
}

/// A queue of futures that polls each once, with the task's waker, the first time it sees it,
/// and after that only the one at the front: outputs in push order, no waker of its own, no
/// record of which future was woken. For futures whose wakes all come from elsewhere (timers):
/// the front is polled at each wake of the task, whichever future was woken.
struct FrontOnly<F> {
    queue: VecDeque<Sleeper<F>>,
    /// How many futures at the front of `queue` have been polled once.
    started: usize,
}

impl<F: Future<Output = u64> + Unpin> Stream for FrontOnly<F> {
    type Item = u64;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u64>> {
        let this = &mut *self;
        while this.started < this.queue.len() {
            if let Sleeper::Running(fut) = &mut this.queue[this.started] {
                if let Poll::Ready(out) = Pin::new(fut).poll(cx) {
                    this.queue[this.started] = Sleeper::Done(out);
                }
            }
            this.started += 1;
        }
        let out = match this.queue.front_mut() {
            None => return Poll::Ready(None),
            Some(Sleeper::Done(out)) => *out,
            Some(Sleeper::Running(fut)) => match Pin::new(fut).poll(cx) {
                Poll::Ready(out) => out,
                Poll::Pending => return Poll::Pending,
            },
        };
        this.queue.pop_front();
        this.started -= 1;
        Poll::Ready(Some(out))
    }
}

/// Drains `set` on `runtime`; the sum of its outputs, and whether they came in push order.
fn drain_on<S: Stream<Item = u64> + Unpin>(
    runtime: &tokio::runtime::Runtime,
    mut set: S,
) -> (u64, bool) {
    runtime.block_on(async {
        let (mut sum, mut in_order, mut expected) = (0, true, 0);
        while let Some(out) = set.next().await {
            in_order &= out == expected;
            expected += 1;
            sum += out;
        }
        (sum, in_order)
    })
}

/// Drains `merged` under `block_on` as the `merge_*` benchmarks do, and checks it gave
/// `0 .. n`, each once.
fn drain_merged<S: Stream<Item = u64>>(merged: S, n: u64) {
    let tally = pinfold_benches::tally_block_on(merged);
    assert_eq!(
        (tally.count, tally.sum),
        (n, n * (n - 1) / 2),
        "every item once"
    );
}

fn main() {
    // As every bench group does: a row's time must not depend on the rows before it.
    pinfold_benches::pin_malloc_thresholds();
    // 1. yield_16: 256 futures that each wake themselves 16 times.
    let make = || (0..256u64).map(|i| YieldK::new(16, i));
    let pinfold = {
        let mut set = pinfold_unordered::FuturesUnorderedBounded::new(256);
        make().for_each(|f| set.push(f));
        set_polls(set)
    };
    let buffered = {
        let mut set = futures_buffered::FuturesUnorderedBounded::new(256);
        make().for_each(|f| set.push(f));
        set_polls(set)
    };
    let util = set_polls(make().collect::<futures_util::stream::FuturesUnordered<_>>());
    let round_trip = best(15, 4_096, || {
        futures_executor::block_on(YieldK::new(4_096, 0u64));
    });
    let fb_yield_16 = best(15, 20, || {
        for _ in 0..20 {
            let mut set = futures_buffered::FuturesUnorderedBounded::new(256);
            let sum = Driver::BlockOn.keep_full(
                &mut set,
                256,
                256,
                |i| YieldK::new(16, i as u64),
                |s, f| s.push(f),
            );
            std::hint::black_box(sum);
        }
    });
    let word = AtomicU64::new(0);
    let atomic = best(15, 4_096, || {
        for i in 0..4_096u64 {
            word.fetch_or(std::hint::black_box(1 << (i % 64)), Ordering::Release);
        }
    });
    let floor = round_trip * pinfold as f64 + atomic * 4_096.0;
    println!("yield_16_block_on");
    println!(
        "  set polls by block_on: pinfold {pinfold}, futures-util {util}, futures-buffered {buffered}"
    );
    println!("  one block_on round trip: {round_trip:.1} ns; one atomic fetch_or: {atomic:.1} ns");
    println!(
        "  floor for pinfold: {pinfold} x {round_trip:.1} ns + 4,096 x {atomic:.1} ns = {:.1} us; futures-buffered's whole run: {:.1} us; floor / futures-buffered = {:.2} (target for pinfold 0.7)",
        floor / 1e3,
        fb_yield_16 / 1e3,
        floor / fb_yield_16
    );

    // 2. ready_512k: 512,000 ready futures through a set of 256.
    const TOTAL: usize = 512_000;
    let fifo = best(7, 1, || {
        let mut fifo = Fifo(VecDeque::with_capacity(256));
        let sum = Driver::BlockOn.keep_full(
            &mut fifo,
            TOTAL,
            256,
            |i| ready(i as u64),
            |s, f| s.push_back(f),
        );
        std::hint::black_box(sum);
    });
    let fb = best(7, 1, || {
        let mut set = futures_buffered::FuturesUnorderedBounded::new(256);
        let sum =
            Driver::BlockOn.keep_full(&mut set, TOTAL, 256, |i| ready(i as u64), |s, f| s.push(f));
        std::hint::black_box(sum);
    });
    println!("ready_512k_block_on");
    println!(
        "  VecDeque, no wakers: {:.2} ms; futures-buffered: {:.2} ms; VecDeque / futures-buffered = {:.2} (target for pinfold 0.6)",
        fifo / 1e6,
        fb / 1e6,
        fifo / fb
    );

    // 3. merge_hot_16: 16 always-ready streams, 1,000,000 items in all; and merge_ready_1k:
    // 1,000 streams of 100 ready items.
    for (name, streams, items) in [
        ("merge_hot_16", 16u64, 1_000_000u64),
        ("merge_ready_1k", 1_000, 100_000),
    ] {
        let per = items / streams;
        let streams = || (0..streams).map(|j| futures_util::stream::iter(j * per..(j + 1) * per));
        let fifo_merge = best(7, 1, || drain_merged(FifoMerge(streams().collect()), items));
        let stream_map = best(7, 1, || {
            let mut map = tokio_stream::StreamMap::new();
            for (key, stream) in streams().enumerate() {
                map.insert(key, stream);
            }
            drain_merged(map.map(|(_, item)| item), items)
        });
        let merge_bounded = best(7, 1, || {
            let mut merged = pinfold_merge::MergeBounded::new(streams().count());
            streams().for_each(|s| merged.push(s));
            drain_merged(merged, items)
        });
        println!("{name}");
        println!(
            "  VecDeque round-robin, task's waker: {:.2} ms; tokio-stream StreamMap: {:.2} ms; pinfold MergeBounded: {:.2} ms; VecDeque / StreamMap = {:.2}, MergeBounded / StreamMap = {:.2} (target for pinfold 0.8)",
            fifo_merge / 1e6,
            stream_map / 1e6,
            merge_bounded / 1e6,
            fifo_merge / stream_map,
            merge_bounded / stream_map
        );
    }

    // 4. merge_wakes_10k: 10,000 streams of 10 items, cells fired by 4 threads.
    const WAKE_ITEMS: usize = 10;
    let workers = WakerThreads::new(4, 25_000, FireOrder::Shuffled(0x3E_A6E5));
    // The cells' futures, each polled once so that it registers a no-op waker.
    let fire_alone = best_round(7, || {
        workers
            .round(
                || registered(&workers),
                |_| std::thread::sleep(std::time::Duration::from_millis(100)),
            )
            .0
    });
    let no_merge = best_round(7, || {
        let (took, sum) = workers.round(
            || registered(&workers),
            |mut signals| {
                let mut cx = Context::from_waker(Waker::noop());
                let mut sum = 0;
                for signal in &mut signals {
                    sum += loop {
                        match Pin::new(&mut *signal).poll(&mut cx) {
                            Poll::Ready(item) => break item,
                            Poll::Pending => std::thread::yield_now(),
                        }
                    };
                }
                sum
            },
        );
        let n = workers.len() as u64;
        assert_eq!(sum, n * (n - 1) / 2, "every item once");
        took
    });
    let stream_map = best_round(7, || {
        workers.merge_round(WAKE_ITEMS, |w| {
            let mut merged = tokio_stream::StreamMap::new();
            for (j, stream) in w.signal_streams(WAKE_ITEMS).enumerate() {
                merged.insert(j, stream);
            }
            merged.map(|(_, item)| item)
        })
    });
    let merge_bounded = best_round(7, || {
        workers.merge_round(WAKE_ITEMS, |w| {
            let mut merged = pinfold_merge::MergeBounded::new(w.len() / WAKE_ITEMS);
            w.signal_streams(WAKE_ITEMS).for_each(|s| merged.push(s));
            merged
        })
    });
    println!("merge_wakes_10k");
    let rounds = [fire_alone, stream_map, merge_bounded];
    print_rounds("CPU", "fire loops alone, no-op wakers", rounds, |t| t.cpu);
    let rounds = [no_merge, stream_map, merge_bounded];
    print_rounds(
        "wall",
        "no merge (items taken in cell order, yielding while unfired)",
        rounds,
        |t| t.wall,
    );

    drop(workers);

    // 4, continued. map_streams_10k: the same wakes (the bench's seed) under user keys, with
    // every tenth key's stream replaced half-way, through tokio-stream's and pinfold's
    // `StreamMap`; through `MergeBounded` and a growable `Merge` of one group with no keys and
    // no replacement, what a map built on pinfold's merge does at least; and `StreamMap`
    // without the replacements.
    let workers = WakerThreads::new(4, 25_000, FireOrder::Shuffled(0x3A9_5EED));
    let keyed = |map, replace_every| {
        let put = |m: &mut tokio_stream::StreamMap<usize, _>, key, s| {
            m.insert(key, s);
        };
        workers.keyed_round(WAKE_ITEMS, replace_every, map, put)
    };
    let pinfold_put = |m: &mut pinfold_map::StreamMap<usize, _>, key, s| {
        m.insert(key, s);
    };
    let [
        tokio_map,
        pinfold_map,
        merge_bounded,
        merge_one_group,
        tokio_kept,
    ] = spread(
        15,
        [
            &mut || keyed(tokio_stream::StreamMap::new(), 10),
            &mut || workers.keyed_round(WAKE_ITEMS, 10, pinfold_map::StreamMap::new(), pinfold_put),
            &mut || {
                workers.merge_round(WAKE_ITEMS, |w| {
                    let mut merged = pinfold_merge::MergeBounded::new(w.len() / WAKE_ITEMS);
                    w.signal_streams(WAKE_ITEMS).for_each(|s| merged.push(s));
                    merged
                })
            },
            &mut || {
                workers.merge_round(WAKE_ITEMS, |w| {
                    let mut merged = pinfold_merge::Merge::with_capacity(w.len() / WAKE_ITEMS);
                    w.signal_streams(WAKE_ITEMS).for_each(|s| merged.push(s));
                    merged
                })
            },
            &mut || keyed(tokio_stream::StreamMap::new(), 0),
        ],
    );
    println!("map_streams_10k (wall, median and best of 15 rounds)");
    let ratio = |[median, best]: [f64; 2]| [median / tokio_map[0], best / tokio_map[1]];
    for (name, took) in [
        ("tokio-stream StreamMap", tokio_map),
        ("pinfold StreamMap", pinfold_map),
        (
            "pinfold MergeBounded, no keys, nothing replaced",
            merge_bounded,
        ),
        (
            "pinfold Merge of one group (with_capacity), no keys, nothing replaced",
            merge_one_group,
        ),
        ("tokio-stream StreamMap, nothing replaced", tokio_kept),
    ] {
        let [r_median, r_best] = ratio(took);
        println!(
            "  {name}: {:.2} ms (best {:.2} ms); {r_median:.2} of tokio-stream StreamMap's (best {r_best:.2}) (target for pinfold StreamMap 1.0)",
            took[0], took[1]
        );
    }

    // 5. futures_ordered_ready_512k: 512,000 ready futures, 256 at a time.
    let ready_through = |push_set: &mut dyn FnMut() -> u64| {
        best(7, 1, || {
            let sum = push_set();
            assert_eq!(
                sum,
                (TOTAL as u64) * (TOTAL as u64 - 1) / 2,
                "every output once"
            );
        })
    };
    macro_rules! ready_512k {
        ($set:expr, $push:ident) => {
            ready_through(&mut || {
                let mut set = $set;
                Driver::BlockOn.keep_full(
                    &mut set,
                    TOTAL,
                    256,
                    |i| ready(i as u64),
                    |s, f| s.$push(f),
                )
            })
        };
    }
    let fb_ordered = ready_512k!(futures_buffered::FuturesOrdered::new(), push_back);
    let fb_ordered_bounded =
        ready_512k!(futures_buffered::FuturesOrderedBounded::new(256), push_back);
    let ordered = ready_512k!(pinfold_buffer::FuturesOrdered::new(), push_back);
    let ordered_bounded = ready_512k!(pinfold_buffer::FuturesOrderedBounded::new(256), push_back);
    let unordered = ready_512k!(pinfold_unordered::FuturesUnordered::new(), push);
    let unordered_bounded = ready_512k!(pinfold_unordered::FuturesUnorderedBounded::new(256), push);
    let fifo_ordered = ready_512k!(Fifo(VecDeque::with_capacity(256)), push_back);
    println!("futures_ordered_ready_512k");
    println!(
        "  growable: futures-buffered FuturesOrdered {:.2} ms; pinfold FuturesOrdered {:.2} ms ({:.2}); pinfold FuturesUnordered, no order kept, {:.2} ms ({:.2}) (target for pinfold 0.8)",
        fb_ordered / 1e6,
        ordered / 1e6,
        ordered / fb_ordered,
        unordered / 1e6,
        unordered / fb_ordered
    );
    println!(
        "  bounded: futures-buffered FuturesOrderedBounded {:.2} ms; pinfold FuturesOrderedBounded {:.2} ms ({:.2}); pinfold FuturesUnorderedBounded, no order kept, {:.2} ms ({:.2}) (target for pinfold 0.8)",
        fb_ordered_bounded / 1e6,
        ordered_bounded / 1e6,
        ordered_bounded / fb_ordered_bounded,
        unordered_bounded / 1e6,
        unordered_bounded / fb_ordered_bounded
    );
    println!(
        "  VecDeque polled front to back, no wakers: {:.2} ms ({:.2} of futures-buffered's FuturesOrderedBounded)",
        fifo_ordered / 1e6,
        fifo_ordered / fb_ordered_bounded
    );

    // 6. futures_ordered_sleep_100k: 100,000 sleeps of 0-7 ms on the paused clock.
    let runtime = pinfold_benches::paused_runtime();
    let delays = pinfold_benches::random_delays(100_000, 7, 0x0DE2_ED5E);
    let n = delays.len() as u64;
    let sleeps = || {
        delays
            .iter()
            .enumerate()
            .map(|(i, &ms)| sleeper(i as u64, ms))
    };
    let sleep_through = |in_order: bool, drain: &mut dyn FnMut() -> (u64, bool)| {
        best(5, 1, || {
            let (sum, ordered) = drain();
            assert_eq!(sum, n * (n - 1) / 2, "every output once");
            assert!(ordered || !in_order, "outputs in push order");
        })
    };
    let fb_sleeps = sleep_through(true, &mut || {
        let mut set = futures_buffered::FuturesOrdered::new();
        sleeps().for_each(|f| set.push_back(f));
        drain_on(&runtime, set)
    });
    let ordered_sleeps = sleep_through(true, &mut || {
        let mut set = pinfold_buffer::FuturesOrdered::new();
        sleeps().for_each(|f| set.push_back(f));
        drain_on(&runtime, set)
    });
    let unordered_sleeps = sleep_through(false, &mut || {
        let mut set = pinfold_unordered::FuturesUnordered::new();
        sleeps().for_each(|f| set.push(f));
        drain_on(&runtime, set)
    });
    let front_only = sleep_through(true, &mut || {
        let queue = sleeps().map(|f| Sleeper::Running(Box::pin(f))).collect();
        drain_on(&runtime, FrontOnly { queue, started: 0 })
    });
    println!("futures_ordered_sleep_100k");
    println!(
        "  futures-buffered FuturesOrdered {:.2} ms; pinfold FuturesOrdered {:.2} ms ({:.2}); pinfold FuturesUnordered, no order kept, {:.2} ms ({:.2}); every sleep polled once, then the front only (boxed) {:.2} ms ({:.2}) (target for pinfold 1.0)",
        fb_sleeps / 1e6,
        ordered_sleeps / 1e6,
        ordered_sleeps / fb_sleeps,
        unordered_sleeps / 1e6,
        unordered_sleeps / fb_sleeps,
        front_only / 1e6,
        front_only / fb_sleeps
    );

    // 7. merge_sparse_10k: 10,000 streams, 1,000 batches of 10 fired on this thread.
    let sparse = SparseWakes::merge_sparse_10k();
    let no_wakers = best(7, 1, || {
        let mut fired = Vec::with_capacity(sparse.batches().map(<[usize]>::len).max().unwrap_or(0));
        let (mut count, mut sum) = (0u64, 0u64);
        for batch in sparse.batches() {
            fired.extend(batch.iter().map(|&i| std::hint::black_box(i as u64)));
            for item in fired.drain(..) {
                count += 1;
                sum += item;
            }
        }
        assert_eq!((count, sum), sparse.expected(), "every fire's item once");
    });
    let sparse_round = |round: &dyn Fn() -> std::time::Duration| {
        (0..7)
            .map(|_| round().as_secs_f64() * 1e9)
            .fold(f64::INFINITY, f64::min)
    };
    let stream_map = sparse_round(&|| {
        sparse.round(|w| {
            let mut merged = tokio_stream::StreamMap::new();
            for (key, stream) in w.streams().enumerate() {
                merged.insert(key, stream);
            }
            merged.map(|(_, item)| item)
        })
    });
    let merge_bounded = sparse_round(&|| {
        sparse.round(|w| {
            let mut merged = pinfold_merge::MergeBounded::new(w.len());
            w.streams().for_each(|s| merged.push(s));
            merged
        })
    });
    println!("merge_sparse_10k");
    println!(
        "  Vec of the fired indexes, no wakers: {:.3} ms; tokio-stream StreamMap: {:.2} ms; pinfold MergeBounded: {:.2} ms; Vec / StreamMap = {:.4}, MergeBounded / StreamMap = {:.3}",
        no_wakers / 1e6,
        stream_map / 1e6,
        merge_bounded / 1e6,
        no_wakers / stream_map,
        merge_bounded / stream_map
    );

    // 8. pool_acquire_release: one buffer acquired and released, one thread.
    const CYCLES: u32 = 1_000_000;
    let list = AtomicU64::new(0);
    let two_cas = best(9, CYCLES, || {
        for _ in 0..CYCLES {
            // A pop and a push: each loads the word and CASes it, as a lock-free list does.
            for _ in 0..2 {
                let now = list.load(Ordering::Acquire);
                let _ = std::hint::black_box(list.compare_exchange_weak(
                    now,
                    now.wrapping_add(1),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ));
            }
        }
    });
    let bab = bab::HeapBufferPool::new(1033, 8, 8);
    let bab_cycle = best(9, CYCLES, || {
        for _ in 0..CYCLES {
            let buffer = bab.try_acquire().expect("a free buffer");
            // SAFETY: `buffer` was just acquired from `bab`, on this thread, and is released
            // once.
            unsafe { bab.release(std::hint::black_box(buffer)) };
        }
    });
    let pool = pinfold_pool::BufferPool::new(64, 1033);
    let pinfold_cycle = best(9, CYCLES, || {
        for _ in 0..CYCLES {
            drop(std::hint::black_box(
                pool.try_acquire().expect("a free buffer"),
            ));
        }
    });
    println!("pool_acquire_release");
    println!(
        "  two uncontended CASes of one word: {two_cas:.1} ns; bab: {bab_cycle:.1} ns; pinfold: {pinfold_cycle:.1} ns; CASes / bab = {:.2}, pinfold / bab = {:.2} (target for pinfold 1.0)",
        two_cas / bab_cycle,
        pinfold_cycle / bab_cycle
    );
    #[cfg(target_os = "linux")]
    println!(
        "  the heavy barrier, membarrier(PRIVATE_EXPEDITED): {:.0} ns",
        membarrier_ns()
    );
}

/// The best time of one `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, in nanoseconds: what a
/// pool's sweep pays for its heavy barrier (see `pinfold_pool`'s *How it works*). `NaN` if the
/// kernel refuses it.
#[cfg(target_os = "linux")]
fn membarrier_ns() -> f64 {
    const PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
    let call = |command: libc::c_int| {
        // SAFETY: `membarrier` reads no memory of the caller; a refused command returns -1.
        unsafe { libc::syscall(libc::SYS_membarrier, command, 0 as libc::c_uint, 0) == 0 }
    };
    if !call(REGISTER_PRIVATE_EXPEDITED) {
        return f64::NAN;
    }
    const CALLS: u32 = 10_000;
    best(9, CALLS, || {
        for _ in 0..CALLS {
            assert!(
                call(PRIVATE_EXPEDITED),
                "membarrier refused after registering"
            );
        }
    })
}
