//! Joining many futures: pinfold's `join_all` / `try_join_all` against futures-util's (every
//! future polled on every wake below 30 futures, a `FuturesOrdered` above) and
//! futures-buffered's, at 10, 1,000 and 100,000 futures that are each ready after one yield,
//! polled with a no-op waker, and under futures-executor's `block_on` (`*_block_on`); and at
//! 2, 10 and 30 futures that are ready at once (`*_ready_<n>_block_on`), the handful most
//! calls join; and at 2, 10 and 30 `std::future::ready` values polled in place with a no-op
//! waker (`join_all_std_ready_<n>`), the join's own cost with no executor around it, beside
//! the floor under any join of them (`vec`: the values collected into a `Vec`). And the memory
//! a join takes per future it holds: `join_all` of 30 and of 10,000 futures that never finish,
//! built, each polled once and dropped (`join_all_held_<n>`).

use core::future::Ready;

use criterion::measurement::WallTime;
use criterion::{Criterion, criterion_group, criterion_main};
use pinfold_benches::{
    Driver, FUTURES_BUFFERED, FUTURES_UTIL, Group, Idle, PINFOLD, Tuning, VEC, criterion,
    join_inputs, poll_future_each_once_pending, spin_on, try_join_inputs,
};

#[global_allocator]
static ALLOC: pinfold_benches::CountingAlloc = pinfold_benches::CountingAlloc::new();

/// The sizes, with each one's group-name suffix and sampling.
const SIZES: [(usize, &str, Tuning); 3] = [
    (10, "10", Tuning::FAST),
    (1_000, "1k", Tuning::FAST),
    (100_000, "100k", Tuning::MEDIUM),
];

/// The sizes of the joins of ready futures.
const READY_SIZES: [usize; 3] = [2, 10, 30];

/// The groups: `(name, n, yields, driver, sampling)`: each size of [`SIZES`] yielding once
/// under both drivers, and each of [`READY_SIZES`] ready at once under `block_on`.
fn workloads(base: &str) -> Vec<(String, usize, u32, Driver, Tuning)> {
    let mut groups = Vec::new();
    for (n, suffix, tuning) in SIZES {
        for driver in Driver::BOTH {
            groups.push((
                driver.group(&format!("{base}_{suffix}")),
                n,
                1,
                driver,
                tuning,
            ));
        }
    }
    for n in READY_SIZES {
        let driver = Driver::BlockOn;
        groups.push((
            driver.group(&format!("{base}_ready_{n}")),
            n,
            0,
            driver,
            Tuning::FAST,
        ));
    }
    groups
}

/// Checks the outputs are the inputs' values in input order.
fn check(out: &[u64], n: usize) {
    assert_eq!(out.len(), n);
    assert!(
        out.iter().enumerate().all(|(i, &v)| v == i as u64),
        "outputs in input order"
    );
}

/// `join_all` of the [`workloads`].
fn join_all(c: &mut Criterion) {
    for (name, n, yields, driver, tuning) in workloads("join_all") {
        let mut group = Group::new(c, &name, tuning);
        group.bench(PINFOLD, || {
            check(
                &driver.run(pinfold_join::join_all(join_inputs(n, yields))),
                n,
            )
        });
        group.bench(FUTURES_BUFFERED, || {
            check(
                &driver.run(futures_buffered::join_all(join_inputs(n, yields))),
                n,
            )
        });
        group.bench(FUTURES_UTIL, || {
            check(
                &driver.run(futures_util::future::join_all(join_inputs(n, yields))),
                n,
            )
        });
        group.finish();
    }
}

/// `join_all` of 2, 10 and 30 `std::future::ready` values, polled in place with a no-op waker
/// (`join_all_std_ready_<n>`): what a join of values that are there already costs, with
/// nothing of an executor around it.
fn join_all_std_ready(c: &mut Criterion) {
    for n in READY_SIZES {
        let inputs = move || (0..n as u64).map(core::future::ready);
        let mut group = Group::new(c, &format!("join_all_std_ready_{n}"), Tuning::FAST);
        group.bench(PINFOLD, move || {
            check(&spin_on(pinfold_join::join_all(inputs())), n)
        });
        group.bench(FUTURES_BUFFERED, move || {
            check(&spin_on(futures_buffered::join_all(inputs())), n)
        });
        group.bench(FUTURES_UTIL, move || {
            check(&spin_on(futures_util::future::join_all(inputs())), n)
        });
        // The floor under any join of them: the values collected into a `Vec` of outputs, one
        // allocation and one read each, nothing polled.
        group.bench(VEC, move || {
            check(
                &spin_on(async { inputs().map(Ready::into_inner).collect::<Vec<_>>() }),
                n,
            )
        });
        group.finish();
    }
}

/// `join_all` of 30 and of 10,000 futures that never finish and never register a waker ([`Idle`], 8
/// bytes each): a join that cannot finish, so built, polled with a no-op waker until each was
/// polled once, and dropped. The time is that of the three; the peak of live bytes over the futures
/// joined is what the join takes per future, the future's own 8 bytes included (30 is the most
/// futures-util's `join_all` polls all on every wake, without a `FuturesOrdered`).
fn join_all_held(c: &mut Criterion) {
    for (n, name) in [(30, "join_all_held_30"), (10_000, "join_all_held_10k")] {
        let inputs = move || (0..n).map(Idle);
        let mut group = Group::new(c, name, Tuning::FAST);
        group.bench(PINFOLD, move || {
            poll_future_each_once_pending(pinfold_join::join_all(inputs()), n)
        });
        group.bench(FUTURES_BUFFERED, move || {
            poll_future_each_once_pending(futures_buffered::join_all(inputs()), n)
        });
        group.bench(FUTURES_UTIL, move || {
            poll_future_each_once_pending(futures_util::future::join_all(inputs()), n)
        });
        group.finish();
    }
}

/// `try_join_all` of the [`workloads`], every future giving `Ok`.
fn try_join_all(c: &mut Criterion) {
    for (name, n, yields, driver, tuning) in workloads("try_join_all") {
        let mut group = Group::new(c, &name, tuning);
        group.bench(PINFOLD, || {
            let out = driver.run(pinfold_join::try_join_all(try_join_inputs(n, yields)));
            check(&out.unwrap(), n)
        });
        group.bench(FUTURES_BUFFERED, || {
            let out = driver.run(futures_buffered::try_join_all(try_join_inputs(n, yields)));
            check(&out.unwrap(), n)
        });
        group.bench(FUTURES_UTIL, || {
            let out = driver.run(futures_util::future::try_join_all(try_join_inputs(
                n, yields,
            )));
            check(&out.unwrap(), n)
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = criterion(WallTime);
    targets = join_all, join_all_std_ready, try_join_all, join_all_held
}
criterion_main!(benches);
