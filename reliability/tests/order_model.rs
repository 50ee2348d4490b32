//! The order model (`pinfold_reliability::order_model`): when each value is polled, checked at
//! every poll of every primitive: random programs of scripted values (pending, waking
//! themselves or others, ready, a stream's items and end, panicking), wakes from this and other
//! threads, calls of `poll_next`, `poll_progress` and a join's `poll`; and programs aimed at
//! one promise each: a woken value is not starved by values pushed after its wake, a value
//! woken twice is polled once, a value deferred by its own wake does not pass one left queued,
//! wakes reach the task after its waker or a value panicked, and a join of futures that keep their first
//! waker does not spin its task.
//!
//! `PROPTEST_CASES` sets the cases of each property (default 32; 2 under Miri), and
//! `PINFOLD_PROGRAM_OPS` the longest random program (default 120, of which these take half;
//! 8 under Miri).

use pinfold_reliability::order_model::{
    JoinKind, Script, Target, deferred_then_woken, double_wakes, first_waker_joins, join_program,
    program, push_before_poll, run, run_join, stuck_head, value_panics_after_a_wake,
    waker_panics_at_yield,
};
use pinfold_reliability::program::JoinOp;
use pinfold_reliability::sizes::{env_number, program_ops, proptest_cases};
use proptest::prelude::*;

/// The sets, merges and maps: the primitives the epoch order (c) is checked on.
const SETS: [Target; 6] = [
    Target::FuturesUnorderedBounded,
    Target::FuturesUnordered,
    Target::MergeBounded,
    Target::Merge,
    Target::FutureMap,
    Target::StreamMap,
];

fn cases() -> u32 {
    proptest_cases(if cfg!(miri) { 2 } else { 32 })
}

fn max_ops() -> usize {
    if cfg!(miri) {
        env_number("PINFOLD_PROGRAM_OPS", 8)
    } else {
        program_ops() / 2
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `program` against each of `targets`, naming the one that fails.
fn each(
    targets: &[Target],
    program: &[pinfold_reliability::order_model::Op],
) -> Result<(), TestCaseError> {
    for &target in targets {
        run(target, program)
            .map_err(|failure| TestCaseError::fail(format!("{target:?}: {failure}")))?;
    }
    Ok(())
}

fn joins(scripts: &[Script], program: &[JoinOp]) -> Result<(), TestCaseError> {
    for kind in [JoinKind::JoinAll, JoinKind::TryJoinAll] {
        run_join(kind, scripts, program)
            .map_err(|failure| TestCaseError::fail(format!("{kind:?}: {failure}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn futures_sets_and_maps_poll_in_the_model_s_order(ops in program(false, false, max_ops())) {
        each(&[Target::FuturesUnorderedBounded, Target::FuturesUnordered, Target::FutureMap], &ops)?;
    }

    #[test]
    fn merges_and_stream_maps_poll_in_the_model_s_order(ops in program(true, false, max_ops())) {
        each(&[Target::MergeBounded, Target::Merge, Target::StreamMap], &ops)?;
    }

    #[test]
    fn buffers_poll_only_due_futures_within_their_bounds(ops in program(false, false, max_ops())) {
        each(&Target::ALL[6..], &ops)?;
    }

    #[test]
    fn after_panics_the_order_holds_and_wakes_reach_the_task(
        futures in program(false, true, max_ops()),
        streams in program(true, true, max_ops()),
    ) {
        each(&[Target::FuturesUnorderedBounded, Target::FuturesUnordered, Target::FutureMap], &futures)?;
        each(&[Target::MergeBounded, Target::Merge, Target::StreamMap], &streams)?;
        each(&Target::ALL[6..], &futures)?;
    }

    #[test]
    fn joins_poll_in_the_model_s_order((scripts, ops) in join_program(max_ops())) {
        joins(&scripts, &ops)?;
    }

    #[test]
    fn a_woken_value_is_not_starved_by_values_pushed_after_its_wake(ops in push_before_poll(12)) {
        each(&SETS, &ops)?;
    }

    #[test]
    fn a_value_woken_twice_before_its_poll_is_polled_once(ops in double_wakes(16)) {
        each(&Target::ALL, &ops)?;
    }

    #[test]
    fn a_value_deferred_by_its_own_wake_does_not_pass_one_queued_before(
        ops in deferred_then_woken(16)
    ) {
        each(&SETS, &ops)?;
    }

    #[test]
    fn wakes_reach_the_task_after_its_waker_panicked_at_a_yield(ops in waker_panics_at_yield()) {
        each(&SETS, &ops)?;
    }

    #[test]
    fn wakes_reach_the_task_after_a_value_panicked(ops in value_panics_after_a_wake()) {
        each(&SETS, &ops)?;
    }

    #[test]
    fn a_driven_ordered_buffer_runs_and_holds_within_its_bound(ops in stuck_head(24)) {
        each(&Target::ALL[9..], &ops)?;
    }

    #[test]
    fn a_join_of_futures_keeping_their_first_waker_does_not_spin_its_task(
        (scripts, ops) in first_waker_joins()
    ) {
        joins(&scripts, &ops)?;
    }
}
