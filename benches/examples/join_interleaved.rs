//! The small joins of the join benchmarks (`benches/join.rs`: 2, 10 and 30 ready futures, and
//! 10 that yield once, under both drivers), pinfold's against futures-util's, timed
//! interleaved in one process: each round times a batch of pinfold's joins and a batch of
//! futures-util's of the same futures, one right after the other (which goes first alternates
//! from round to round), and gives the ratio of the two. A change in the machine's speed (a
//! noisy neighbour, the clock) that lasts longer than a round moves both sides of a ratio
//! alike, where criterion times one implementation for seconds, then the other. Prints, for
//! each workload, the median of the rounds' ratios, their quartiles and range, and how many
//! rounds were at or under the joins' target, 0.8x (see `benches/README.md`). Run with
//! `cargo run --release -p pinfold-benches --example join_interleaved [rounds]` (31 rounds
//! by default, a few seconds in all).

use core::hint::black_box;
use std::time::Instant;

use pinfold_benches::{Driver, join_inputs, try_join_inputs};

/// The benchmarks' allocator, so that an allocation costs what it costs there.
#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// Joins per batch: a batch takes 0.5 to 5 ms, long against the clock's resolution, short
/// against most of the machine's changes of speed.
const BATCH: usize = 10_000;

/// One workload: its name (the benchmark's group) and the two joins, each run once per call.
struct Workload {
    name: String,
    pinfold: Box<dyn Fn()>,
    futures_util: Box<dyn Fn()>,
}

/// The joins of the benchmark groups `join_all_10`, `join_all_10_block_on` and
/// `join_all_ready_{2,10,30}_block_on`, and the same of `try_join_all`.
fn workloads() -> Vec<Workload> {
    let mut cases = Vec::new();
    for driver in Driver::BOTH {
        cases.push((driver.group("_10"), 10, 1, driver));
    }
    for n in [2, 10, 30] {
        let driver = Driver::BlockOn;
        cases.push((driver.group(&format!("_ready_{n}")), n, 0, driver));
    }
    let mut workloads = Vec::new();
    for &(ref suffix, n, yields, driver) in &cases {
        workloads.push(Workload {
            name: format!("join_all{suffix}"),
            pinfold: Box::new(move || {
                let out = driver.run(pinfold_join::join_all(join_inputs(n, yields)));
                assert_eq!(black_box(out).len(), n);
            }),
            futures_util: Box::new(move || {
                let out = driver.run(futures_util::future::join_all(join_inputs(n, yields)));
                assert_eq!(black_box(out).len(), n);
            }),
        });
    }
    for &(ref suffix, n, yields, driver) in &cases {
        workloads.push(Workload {
            name: format!("try_join_all{suffix}"),
            pinfold: Box::new(move || {
                let out = driver.run(pinfold_join::try_join_all(try_join_inputs(n, yields)));
                assert_eq!(black_box(out).map(|v| v.len()), Ok(n));
            }),
            futures_util: Box::new(move || {
                let out = driver.run(futures_util::future::try_join_all(try_join_inputs(
                    n, yields,
                )));
                assert_eq!(black_box(out).map(|v| v.len()), Ok(n));
            }),
        });
    }
    workloads
}

/// Nanoseconds per call of `f`, over one batch.
fn batch(f: &dyn Fn()) -> f64 {
    let start = Instant::now();
    for _ in 0..BATCH {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / BATCH as f64
}

/// The value at quantile `q` of `sorted` (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    pinfold_benches::pin_malloc_thresholds();
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("rounds: a number"))
        .unwrap_or(31);
    assert!(rounds > 0, "rounds: at least 1");
    println!(
        "{:<32} {:>9} {:>9} {:>7} {:>15} {:>15} {:>8}",
        "workload", "pinfold", "f-util", "median", "quartiles", "range", "<= 0.8x"
    );
    for workload in workloads() {
        // Warm up both (caches, the allocator's free lists, the branch predictors).
        batch(&*workload.pinfold);
        batch(&*workload.futures_util);
        let mut ratios = Vec::with_capacity(rounds);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let (p, f) = if round % 2 == 0 {
                let p = batch(&*workload.pinfold);
                (p, batch(&*workload.futures_util))
            } else {
                let f = batch(&*workload.futures_util);
                (batch(&*workload.pinfold), f)
            };
            ratios.push(p / f);
            ours.push(p);
            theirs.push(f);
        }
        for values in [&mut ratios, &mut ours, &mut theirs] {
            values.sort_by(f64::total_cmp);
        }
        let met = ratios.iter().filter(|&&r| r <= 0.8).count();
        println!(
            "{:<32} {:>6.1} ns {:>6.1} ns {:>6.2}x {:>6.2}x-{:.2}x {:>6.2}x-{:.2}x {:>4}/{}",
            workload.name,
            quantile(&ours, 0.5),
            quantile(&theirs, 0.5),
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            ratios[0],
            ratios[rounds - 1],
            met,
            rounds
        );
    }
}
