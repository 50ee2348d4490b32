//! Joining many futures: pinfold's `join_all` / `try_join_all` against futures-util's (every
//! future polled on every wake below 30 futures, a `FuturesOrdered` above) and
//! futures-buffered's, at 10, 1,000 and 100,000 futures that are each ready after one yield,
//! polled with a no-op waker, and under futures-executor's `block_on` (`*_block_on`).

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use pinfold_benches::{
    Driver, FUTURES_BUFFERED, FUTURES_UTIL, Group, PINFOLD, Tuning, YieldK, criterion,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// The sizes, with each one's group-name suffix and sampling.
const SIZES: [(usize, &str, Tuning); 3] = [
    (10, "10", Tuning::FAST),
    (1_000, "1k", Tuning::FAST),
    (100_000, "100k", Tuning::MEDIUM),
];

fn inputs(n: usize) -> impl ExactSizeIterator<Item = YieldK<u64>> {
    (0..n).map(|i| YieldK::new(1, i as u64))
}

fn try_inputs(n: usize) -> impl ExactSizeIterator<Item = YieldK<Result<u64, ()>>> {
    (0..n).map(|i| YieldK::new(1, Ok(i as u64)))
}

/// Checks the outputs are the inputs' values in input order.
fn check(out: &[u64], n: usize) {
    assert_eq!(out.len(), n);
    assert!(
        out.iter().enumerate().all(|(i, &v)| v == i as u64),
        "outputs in input order"
    );
}

/// `join_all` of `n` futures that are each ready after one yield, for `n` in [`SIZES`]: run
/// with a no-op waker (`join_all_<n>`) and under futures-executor's `block_on`
/// (`join_all_<n>_block_on`).
fn join_all(c: &mut Criterion) {
    for (n, suffix, tuning) in SIZES {
        for driver in Driver::BOTH {
            let name = driver.group(&format!("join_all_{suffix}"));
            let mut group = Group::new(c, &name, tuning);
            group.bench(PINFOLD, || {
                check(&driver.run(pinfold_join::join_all(inputs(n))), n)
            });
            group.bench(FUTURES_BUFFERED, || {
                check(&driver.run(futures_buffered::join_all(inputs(n))), n)
            });
            group.bench(FUTURES_UTIL, || {
                check(&driver.run(futures_util::future::join_all(inputs(n))), n)
            });
            group.finish();
        }
    }
}

/// `try_join_all` of `n` futures that each give `Ok` after one yield: with a no-op waker
/// (`try_join_all_<n>`) and under futures-executor's `block_on` (`try_join_all_<n>_block_on`).
fn try_join_all(c: &mut Criterion) {
    for (n, suffix, tuning) in SIZES {
        for driver in Driver::BOTH {
            let name = driver.group(&format!("try_join_all_{suffix}"));
            let mut group = Group::new(c, &name, tuning);
            group.bench(PINFOLD, || {
                check(
                    &driver
                        .run(pinfold_join::try_join_all(try_inputs(n)))
                        .unwrap(),
                    n,
                )
            });
            group.bench(FUTURES_BUFFERED, || {
                check(
                    &driver
                        .run(futures_buffered::try_join_all(try_inputs(n)))
                        .unwrap(),
                    n,
                )
            });
            group.bench(FUTURES_UTIL, || {
                check(
                    &driver
                        .run(futures_util::future::try_join_all(try_inputs(n)))
                        .unwrap(),
                    n,
                )
            });
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = join_all, try_join_all
}
criterion_main!(benches);
