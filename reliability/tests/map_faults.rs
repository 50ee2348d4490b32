//! Faults in the user code `FutureMap` and `StreamMap` run: a key's `Clone`, `Hash`, `Eq` and
//! `Drop`, a value's `poll` and `Drop`, and the task's waker. A program runs once to count the
//! user-code calls, then once for every k with its k-th call panicking (the panic caught around
//! the operation that raised it). After the panic the map must be consistent (`len`, `keys()`,
//! `iter()`, `get`, `contains_key` agree; every value it no longer holds was dropped exactly
//! once; it holds no value it did not hold before, bar the one being inserted; departed keys
//! are refused), and the rest of the program runs checked against the model as without a
//! fault: every output comes, no value is polled after it finished, and once the map is
//! dropped every value and key was dropped exactly once.
//!
//! Two panics in one call too: a value's poll, then the next call of the value's or its key's
//! `Drop` or of the task waker's wake; the first comes out, and the map stays consistent and
//! awake (after the panic it is polled only when woken).
//!
//! The hash of the index is randomly keyed, so how often `Eq` runs differs a little between
//! runs: the k-th call is not always the same one, and a few calls near the end may be
//! skipped. Each site must see at least one panic.
//!
//! The driver is the crate's ([`map_model`](pinfold_reliability::map_model)).

use std::collections::BTreeSet;

use pinfold_reliability::fault::{expecting_panics, quiet_fault_panics};
use pinfold_reliability::map_model::{
    Driver, Fault, Kind, MapOp, Site, program, run, run_driver, site_fault,
};
use pinfold_reliability::program::{Pick, Via, WAKE_THREADS};
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_testkit::panicking_waker::WakerOps;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A program through every path of the map: bursts past the arena's first groups, replaces,
/// removes and reinserts, completions from here and from a waker thread, partial and full
/// drains (the groups released and regrown), `clear`, and a drop of the map.
fn schedule() -> Vec<MapOp> {
    let (big, bigger) = if cfg!(miri) { (6, 9) } else { (40, 70) };
    let at = |index, len| Pick::at(index, len);
    vec![
        MapOp::Burst { n: big },
        MapOp::Insert { key: 1 },
        MapOp::Insert { key: 1 },
        MapOp::Insert { key: 2 },
        MapOp::Complete {
            pick: at(0, 4),
            end: false,
            via: Via::Here,
        },
        MapOp::Complete {
            pick: at(2, 4),
            end: true,
            via: Via::Thread(0),
        },
        MapOp::Complete {
            pick: at(3, 4),
            end: false,
            via: Via::Thread(1),
        },
        MapOp::Poll { times: 2 },
        MapOp::Drain,
        MapOp::Reinsert { pick: at(1, 3) },
        MapOp::Remove { pick: at(2, 3) },
        MapOp::CompleteAll { end: false },
        MapOp::Drain,
        MapOp::Burst { n: bigger },
        MapOp::Clear,
        MapOp::Insert { key: 3 },
        MapOp::Insert { key: 4 },
        MapOp::Complete {
            pick: at(0, 2),
            end: true,
            via: Via::Here,
        },
        MapOp::Drain,
        MapOp::CompleteAll { end: true },
        MapOp::Drain,
        MapOp::Burst { n: big / 4 },
        MapOp::DropMap,
        MapOp::Insert { key: 5 },
        MapOp::Complete {
            pick: at(0, 1),
            end: false,
            via: Via::Here,
        },
        MapOp::Drain,
    ]
}

/// Runs `ops` once to count its user-code calls, then once with each of the calls `ks` picks
/// from `1..=calls` panicking; returns the sites that panicked.
fn panic_at_each_call(
    kind: Kind,
    ops: &[MapOp],
    ks: impl Fn(u64) -> Vec<u64>,
) -> Result<BTreeSet<Site>, TestCaseError> {
    let counting = run(kind, ops, Fault::Never, WakeThreads::new(WAKE_THREADS))?;
    let calls = counting.plan().calls();
    let mut threads = counting.into_threads();
    let mut sites = BTreeSet::new();
    for k in ks(calls) {
        let driver = run_with(kind, ops, Fault::Call(k), threads)?;
        sites.extend(driver.injected.iter().map(|injected| injected.site));
        threads = driver.into_threads();
    }
    Ok(sites)
}

/// Runs `ops` with `fault`, its panics kept quiet.
fn run_with(
    kind: Kind,
    ops: &[MapOp],
    fault: Fault,
    threads: WakeThreads,
) -> Result<Driver, TestCaseError> {
    expecting_panics(|| run(kind, ops, fault, threads))
        .map_err(|fail| TestCaseError::fail(format!("{kind:?}, {fault:?}: {fail}")))
}

#[test]
fn a_panic_in_any_user_code_call_leaves_the_map_consistent() {
    quiet_fault_panics();
    for kind in [Kind::Futures, Kind::Streams] {
        let every = |calls: u64| -> Vec<u64> {
            if cfg!(miri) {
                (1..=calls).step_by((calls / 6).max(1) as usize).collect()
            } else {
                (1..=calls).collect()
            }
        };
        let sites = panic_at_each_call(kind, &schedule(), every).unwrap();
        if !cfg!(miri) {
            let all = [
                Site::KeyClone,
                Site::KeyHash,
                Site::KeyEq,
                Site::KeyDrop,
                Site::Poll,
                Site::ValueDrop,
            ];
            assert_eq!(
                sites,
                BTreeSet::from(all),
                "{kind:?}: the sites that panicked"
            );
        }
    }
}

/// The schedule with every wake from this thread, and the task waker's `ops` panicking once,
/// armed before step `step`: the next clone, wake (by value or by reference, as the map wakes
/// its task either way) or drop of the task's waker panics.
fn waker_panics_at(kind: Kind, step: usize, ops: WakerOps) -> Result<usize, TestCaseError> {
    let here: Vec<MapOp> = schedule()
        .into_iter()
        .map(|op| match op {
            MapOp::Complete { pick, end, .. } => MapOp::Complete {
                pick,
                end,
                via: Via::Here,
            },
            op => op,
        })
        .collect();
    let mut driver = Driver::new(kind, Fault::Never, WakeThreads::new(1));
    expecting_panics(|| {
        for (i, op) in here.iter().enumerate() {
            if i == step {
                driver.arm_waker(ops);
            }
            driver
                .step(op)
                .map_err(|fail| TestCaseError::fail(format!("step {i} ({op:?}): {fail}")))?;
        }
        driver.finish()
    })?;
    Ok(driver.switches().panics())
}

#[test]
fn a_panicking_task_waker_leaves_the_map_consistent() {
    quiet_fault_panics();
    let steps = schedule().len();
    for kind in [Kind::Futures, Kind::Streams] {
        for ops in [WakerOps::CLONE, WakerOps::ANY_WAKE, WakerOps::DROP] {
            let mut panics = 0;
            for step in (0..steps).step_by(if cfg!(miri) { 5 } else { 1 }) {
                panics += waker_panics_at(kind, step, ops)
                    .unwrap_or_else(|fail| panic!("{kind:?}, {ops:?} at step {step}: {fail}"));
            }
            assert!(
                panics > 0,
                "{kind:?}: the task waker's {ops:?} never panicked"
            );
        }
    }
}

/// Runs `ops` once to count its values' polls, then once with each poll `ks` picks panicking
/// and a second panic after it, in the same call, at `second`.
fn two_panics_at_each_poll(
    kind: Kind,
    ops: &[MapOp],
    second: Site,
    ks: impl Fn(u64) -> Vec<u64>,
) -> Result<(), TestCaseError> {
    let counting = run(kind, ops, Fault::Never, WakeThreads::new(WAKE_THREADS))?;
    let polls = counting.plan().calls_at(Site::Poll);
    let mut threads = counting.into_threads();
    for k in ks(polls) {
        let fault = Fault::At(Site::Poll, k);
        let mut driver = Driver::with_second(kind, fault, Some(second), threads);
        expecting_panics(|| run_driver(&mut driver, ops)).map_err(|fail| {
            TestCaseError::fail(format!("{kind:?}, {fault:?} then {second:?}: {fail}"))
        })?;
        threads = driver.into_threads();
    }
    Ok(())
}

#[test]
fn a_second_panic_after_a_value_s_poll_panicked_leaves_the_map_consistent_and_awake() {
    quiet_fault_panics();
    let mut failures = Vec::new();
    for kind in [Kind::Futures, Kind::Streams] {
        for second in [Site::ValueDrop, Site::KeyDrop, Site::Waker] {
            // About 30 polls spread over the schedule (4 under Miri): each is a run of it.
            let spread = |polls: u64| -> Vec<u64> {
                let stride = (polls / if cfg!(miri) { 4 } else { 30 }).max(1);
                (1..=polls).step_by(stride as usize).collect()
            };
            if let Err(fail) = two_panics_at_each_poll(kind, &schedule(), second, spread) {
                failures.push(fail.to_string());
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 2 } else { proptest_cases(64) },
        // Relative to the package root, where `cargo test` runs the tests; Miri's isolation
        // has no file system.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/map_faults.txt",
            )))
        },
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// A random program whose key's or value's code panics at the k-th call at one site
    /// (shrinking keeps the site, so a failure shrinks to a short program).
    #[test]
    fn a_random_program_survives_a_panic_at_a_random_call(
        (kind, ops) in program(if cfg!(miri) { 8 } else { 30 }),
        fault in site_fault(),
    ) {
        quiet_fault_panics();
        run_with(kind, &ops, fault, WakeThreads::new(WAKE_THREADS))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { proptest_cases(16) },
        ..config()
    })]

    /// A random program whose value's k-th poll panics, and then the next call at a second
    /// site in the same call: the value's or its key's drop, or the task waker's wake.
    #[test]
    fn a_random_program_survives_two_panics_in_a_call(
        (kind, ops) in program(if cfg!(miri) { 8 } else { 30 }),
        k in 1u64..60,
        second in prop_oneof![Just(Site::ValueDrop), Just(Site::KeyDrop), Just(Site::Waker)],
    ) {
        quiet_fault_panics();
        let fault = Fault::At(Site::Poll, k);
        let mut driver = Driver::with_second(kind, fault, Some(second), WakeThreads::new(WAKE_THREADS));
        expecting_panics(|| run_driver(&mut driver, &ops)).map_err(|fail| {
            TestCaseError::fail(format!("{fault:?} then {second:?}: {fail}"))
        })?;
    }
}
