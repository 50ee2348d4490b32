//! A panic at every place user code runs in `join_all` and `try_join_all` (a future's poll and
//! drop, an output's drop, the task waker's clone, wake, wake_by_ref and drop), one run per
//! call, each checked against the contract of the join crate's docs (*Panics*): a panic of a
//! future's poll terminates the join with everything dropped; any other leaves it to complete
//! with every output in order, or the first error in time; nothing is polled after it
//! finished, dropped twice or leaked, no clone of the task's waker included. And two panics in
//! one call: a future's poll, then each later call into user code before that panic is out
//! (the drops as the join ends, the task's waker): the first comes out, the rest as for one.
//!
//! Random inputs (property tests, `PROPTEST_CASES` cases, default 256) of 0 to 40 futures,
//! ready, failing, yielding or waiting for an event; under Miri, 2 cases of up to 8 futures,
//! each sweep taking about 20 of its calls. The driver and the strategy are the crate's
//! ([`join_sweep`](pinfold_reliability::join_sweep)); this file holds the cases.

use std::time::Duration;

use pinfold_reliability::fault::{expecting_panics, quiet_fault_panics};
use pinfold_reliability::join_sweep::{
    Kind, kinds, panic_at_every_call_of_join_all, panic_at_every_call_of_try_join_all,
    two_panics_in_a_call_of_join_all, two_panics_in_a_call_of_try_join_all,
};
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

use Kind::{Ready, ReadyErr, Wait, WaitErr, Yield};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 2 } else { proptest_cases(256) },
        // Relative to the package root, where `cargo test` runs the tests; Miri's isolation
        // has no file system.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/join_sweep.txt",
            )))
        },
        ..ProptestConfig::default()
    }
}

/// The most futures a random join has: past the 32 at which a join stops polling its futures a
/// second time with the task's waker (under Miri, the 34 of the fixed case below cross it).
fn max_inputs() -> usize {
    if cfg!(miri) { 8 } else { 40 }
}

/// A watchdog for one test (a join that hangs fails the run), with the injected panics kept
/// quiet.
fn watchdog(name: &str) -> Watchdog {
    quiet_fault_panics();
    Watchdog::arm(name, Duration::from_secs(600))
}

/// `join_all` of `kinds` survives a panic at each of its calls into user code.
fn join_all_survives(kinds: &[Kind]) -> Result<(), TestCaseError> {
    expecting_panics(|| panic_at_every_call_of_join_all(kinds)).map_err(TestCaseError::fail)
}

/// `try_join_all` of `kinds` survives a panic at each of its calls into user code.
fn try_join_all_survives(kinds: &[Kind]) -> Result<(), TestCaseError> {
    expecting_panics(|| panic_at_every_call_of_try_join_all(kinds)).map_err(TestCaseError::fail)
}

/// Both joins of `kinds` survive two panics in one call: a future's poll, and each call into
/// user code after it in turn until its panic is out.
fn joins_survive_two_panics(kinds: &[Kind]) -> Result<(), TestCaseError> {
    expecting_panics(|| {
        two_panics_in_a_call_of_join_all(kinds)?;
        two_panics_in_a_call_of_try_join_all(kinds)
    })
    .map_err(TestCaseError::fail)
}

/// The most futures a random join of the two-panic sweep has (it runs a join once for each
/// pair of a poll and a call after it: about the square of the futures): past the 32 at which
/// a join stops polling its futures a second time is the fixed case's.
fn max_inputs_of_two_panics() -> usize {
    if cfg!(miri) { 4 } else { 12 }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_join_all_survives_a_panic_at_every_call(kinds in kinds(max_inputs())) {
        let _watchdog = watchdog("random_join_all_survives_a_panic_at_every_call");
        join_all_survives(&kinds)?;
    }

    #[test]
    fn random_try_join_all_survives_a_panic_at_every_call(kinds in kinds(max_inputs())) {
        let _watchdog = watchdog("random_try_join_all_survives_a_panic_at_every_call");
        try_join_all_survives(&kinds)?;
    }
}

proptest! {
    // A quarter of the cases: each runs both joins once per pair of panics.
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { proptest_cases(64) },
        ..config()
    })]

    #[test]
    fn random_joins_survive_a_second_panic_after_a_future_s_poll_panicked(
        kinds in kinds(max_inputs_of_two_panics())
    ) {
        let _watchdog =
            watchdog("random_joins_survive_a_second_panic_after_a_future_s_poll_panicked");
        joins_survive_two_panics(&kinds)?;
    }
}

// The regression cases, fixed inputs run whatever the random ones draw: each way a join ends
// (all ready, a mix that waits, `try_join_all` failing at its first poll and later), and a
// join of 34 futures, past the 32 at which a join stops polling its futures a second time
// with the task's waker.

#[test]
fn join_all_of_ready_futures_survives_a_panic_at_every_step() -> Result<(), TestCaseError> {
    let _watchdog = watchdog("join_all_of_ready_futures_survives_a_panic_at_every_step");
    join_all_survives(&[Ready, Ready, Ready])
}

#[test]
fn join_all_of_a_mix_survives_a_panic_at_every_step() -> Result<(), TestCaseError> {
    let _watchdog = watchdog("join_all_of_a_mix_survives_a_panic_at_every_step");
    join_all_survives(&[Ready, Wait, Yield(1), Ready, Wait, Yield(2)])
}

#[test]
fn a_large_join_all_of_a_mix_survives_a_panic_at_every_step() -> Result<(), TestCaseError> {
    let _watchdog = watchdog("a_large_join_all_of_a_mix_survives_a_panic_at_every_step");
    // Past 32 futures: one poll with the task's waker, not two.
    let kinds: Vec<Kind> = [Ready, Yield(1), Wait, Ready, Yield(2), Wait]
        .into_iter()
        .cycle()
        .take(34)
        .collect();
    join_all_survives(&kinds)
}

#[test]
fn try_join_all_of_a_mix_that_succeeds_survives_a_panic_at_every_step() -> Result<(), TestCaseError>
{
    let _watchdog = watchdog("try_join_all_of_a_mix_that_succeeds_survives_a_panic_at_every_step");
    try_join_all_survives(&[Ready, Yield(1), Wait, Ready, Yield(2)])
}

#[test]
fn try_join_all_failing_in_its_first_poll_survives_a_panic_at_every_step()
-> Result<(), TestCaseError> {
    let _watchdog =
        watchdog("try_join_all_failing_in_its_first_poll_survives_a_panic_at_every_step");
    try_join_all_survives(&[Ready, Yield(1), ReadyErr, Wait, Ready])
}

#[test]
fn try_join_all_failing_later_survives_a_panic_at_every_step() -> Result<(), TestCaseError> {
    let _watchdog = watchdog("try_join_all_failing_later_survives_a_panic_at_every_step");
    try_join_all_survives(&[Ready, Wait, Yield(1), WaitErr, Ready, Wait, Yield(2)])
}

#[test]
fn joins_of_a_mix_survive_a_second_panic_after_a_future_s_poll_panicked()
-> Result<(), TestCaseError> {
    let _watchdog =
        watchdog("joins_of_a_mix_survive_a_second_panic_after_a_future_s_poll_panicked");
    // Outputs kept and futures running when a poll panics, in each of the join's passes, and
    // `try_join_all`'s error kept when a later poll panics.
    joins_survive_two_panics(&[Ready, Wait, Yield(1), Ready, Wait, Yield(2)])?;
    joins_survive_two_panics(&[Ready, Yield(1), Wait, WaitErr, Ready])?;
    if cfg!(miri) {
        return Ok(());
    }
    // Past 32 futures.
    let kinds: Vec<Kind> = [Ready, Yield(1), Wait]
        .into_iter()
        .cycle()
        .take(34)
        .collect();
    joins_survive_two_panics(&kinds)
}
