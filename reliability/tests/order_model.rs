//! The order model (`pinfold_reliability::order_model`): when each value is polled, checked at
//! every poll of every primitive: random programs of scripted values (pending, waking
//! themselves or others, ready, a stream's items and end, panicking), wakes from this and other
//! threads, calls of `poll_next`, `poll_progress` and a join's `poll`; and programs aimed at
//! one promise each: a woken value is not starved by values pushed after its wake, a value
//! woken twice is polled once, a value deferred by its own wake does not pass one left queued,
//! wakes reach the task after its waker or a value panicked, and a join of futures that keep their first
//! waker does not spin its task. Compound faults, two in one call, with programs aimed at each:
//! a value whose poll and then `Drop` panic, a value whose poll panics as the task's waker
//! does, `clear` and the primitive's drop with several values whose `Drop` panics (the drop
//! in a child process: a second panic there that the primitive does not catch aborts it).
//!
//! `PROPTEST_CASES` sets the cases of each property (default 32; 2 under Miri), and
//! `PINFOLD_PROGRAM_OPS` the longest random program (default 120, of which these take half;
//! 8 under Miri).

use pinfold_reliability::isolated::in_child_process;
use pinfold_reliability::order_model::{
    JoinKind, OnDrop, Op, Script, Target, deferred_then_woken, double_wakes, drops_panic_in_clear,
    drops_panic_in_the_primitive_s_drop, first_waker_joins, join_program, program,
    push_before_poll, run, run_join, stuck_head, value_panics_after_a_wake,
    value_panics_then_its_drop, value_panics_then_the_task_waker, waker_panics_at_yield,
};
use pinfold_reliability::program::{JoinOp, Pick, Via};
use pinfold_reliability::sizes::{model_cases, model_config, model_ops, program_ops};
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

/// The sets, merges and maps, and the set taken ahead through `Driven`: the primitives a
/// value's panic leaves running, with the task's waker registered.
const SETS_AND_DRIVEN: [Target; 7] = [
    Target::FuturesUnorderedBounded,
    Target::FuturesUnordered,
    Target::MergeBounded,
    Target::Merge,
    Target::FutureMap,
    Target::StreamMap,
    Target::Driven,
];

/// Every target: the sets, merges, maps, buffers, `Driven` and `concurrent_for_each`.
fn every_target() -> impl Iterator<Item = Target> {
    Target::ALL.into_iter().chain(Target::ADAPTERS)
}

fn cases() -> u32 {
    model_cases(32)
}

fn max_ops() -> usize {
    model_ops(program_ops() / 2)
}

fn config() -> ProptestConfig {
    model_config(cases())
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

/// Runs `program` against every target; the failures, each naming its target.
fn every_failure(program: &[Op]) -> Vec<String> {
    every_target()
        .filter_map(|target| {
            run(target, program)
                .err()
                .map(|failure| format!("{target:?}: {failure}"))
        })
        .collect()
}

/// Runs `program` against every target, each in a child process (case `test/target`):
/// a primitive that lets a value's panic out of a `Drop` run while another panic unwinds
/// aborts the process, which fails that case alone.
fn each_in_child(test: &str, program: &[Op]) -> Vec<String> {
    every_target()
        .filter_map(|target| {
            in_child_process(test, &format!("{target:?}"), || {
                run(target, program).map_err(|failure| format!("{target:?}: {failure}"))
            })
            .err()
        })
        .collect()
}

/// Runs a join of `scripts` under `program` with each kind, each in a child process.
fn joins_in_child(test: &str, scripts: &[Script], program: &[JoinOp]) -> Vec<String> {
    [JoinKind::JoinAll, JoinKind::TryJoinAll]
        .into_iter()
        .filter_map(|kind| {
            in_child_process(test, &format!("{kind:?}"), || {
                run_join(kind, scripts, program).map_err(|failure| format!("{kind:?}: {failure}"))
            })
            .err()
        })
        .collect()
}

/// Fails with every failure in `failures`, if there is one.
fn all_passed(failures: &[String]) {
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
        each(&[Target::Driven], &ops)?;
    }

    #[test]
    fn merges_and_stream_maps_poll_in_the_model_s_order(ops in program(true, false, max_ops())) {
        each(&[Target::MergeBounded, Target::Merge, Target::StreamMap], &ops)?;
    }

    #[test]
    fn buffers_poll_only_due_futures_within_their_bounds(ops in program(false, false, max_ops())) {
        each(&Target::ALL[6..], &ops)?;
        each(&[Target::ConcurrentForEach], &ops)?;
    }

    #[test]
    fn after_panics_the_order_holds_and_wakes_reach_the_task(
        futures in program(false, true, max_ops()),
        streams in program(true, true, max_ops()),
    ) {
        each(&[Target::FuturesUnorderedBounded, Target::FuturesUnordered, Target::FutureMap], &futures)?;
        each(&[Target::MergeBounded, Target::Merge, Target::StreamMap], &streams)?;
        each(&Target::ALL[6..], &futures)?;
        each(&Target::ADAPTERS, &futures)?;
    }

    #[test]
    fn joins_poll_in_the_model_s_order((scripts, ops) in join_program(max_ops(), false)) {
        joins(&scripts, &ops)?;
    }

    #[test]
    fn after_panics_a_join_ends_with_everything_dropped(
        (scripts, ops) in join_program(max_ops(), true)
    ) {
        joins(&scripts, &ops)?;
    }

    #[test]
    fn after_a_value_panics_in_poll_and_drop_wakes_reach_the_task(
        ops in value_panics_then_its_drop()
    ) {
        each(&Target::ALL, &ops)?;
        each(&Target::ADAPTERS, &ops)?;
    }

    #[test]
    fn after_a_value_and_the_task_waker_panic_wakes_reach_the_task(
        ops in value_panics_then_the_task_waker()
    ) {
        each(&Target::ALL, &ops)?;
        each(&Target::ADAPTERS, &ops)?;
    }

    #[test]
    fn clear_drops_every_value_when_several_drops_panic(ops in drops_panic_in_clear()) {
        each(&SETS_AND_DRIVEN, &ops)?;
    }

    #[test]
    fn a_woken_value_is_not_starved_by_values_pushed_after_its_wake(ops in push_before_poll(12)) {
        each(&SETS, &ops)?;
    }

    #[test]
    fn a_value_woken_twice_before_its_poll_is_polled_once(ops in double_wakes(16)) {
        each(&Target::ALL, &ops)?;
        each(&Target::ADAPTERS, &ops)?;
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

// Fixed programs, one aimed at each compound fault, run whatever the random ones draw.

/// `waiting` values polled, the first woken from outside, then `value` pushed and a call:
/// the call polls `value` first, and the woken value is still queued when it panics.
fn after_a_wake_a_call_of(waiting: u8, value: Script, before_the_call: &[Op]) -> Vec<Op> {
    let mut ops = vec![
        Op::PushMany {
            count: waiting,
            script: Script::pending(),
        },
        Op::Poll,
        Op::Wake {
            pick: Pick(0),
            via: Via::Here,
            times: 1,
        },
        Op::Push(value),
    ];
    ops.extend_from_slice(before_the_call);
    ops.extend([
        Op::Poll,
        // The last waiting value: not woken yet.
        Op::Wake {
            pick: Pick(u64::MAX / 2),
            via: Via::Here,
            times: 1,
        },
        Op::Run,
    ]);
    ops
}

#[test]
fn a_value_that_panics_in_poll_and_in_drop_leaves_the_task_reachable() {
    let ops = after_a_wake_a_call_of(3, Script::panics().dropping(OnDrop::Panic), &[]);
    all_passed(&every_failure(&ops));
}

#[test]
fn a_value_that_panics_while_the_task_waker_panics_leaves_the_task_reachable() {
    let ops = after_a_wake_a_call_of(3, Script::panics(), &[Op::WakerPanics]);
    all_passed(&every_failure(&ops));
}

#[test]
fn a_value_that_panics_in_poll_and_drop_while_the_task_waker_panics_leaves_the_task_reachable() {
    let ops = after_a_wake_a_call_of(
        3,
        Script::panics().dropping(OnDrop::Panic),
        &[Op::WakerPanics],
    );
    all_passed(&every_failure(&ops));
}

/// `waiting` values polled, then `value` pushed, the task's waker armed, and a call: nothing
/// else is queued when `value` panics (in its poll, or in its `Drop` as it finishes), so the
/// only wake of the task that can panic is one the primitive makes after that panic.
fn alone_a_call_of(value: Script) -> Vec<Op> {
    vec![
        Op::PushMany {
            count: 2,
            script: Script::pending(),
        },
        Op::Poll,
        Op::Push(value),
        Op::WakerPanics,
        Op::Poll,
        Op::Wake {
            pick: Pick(0),
            via: Via::Here,
            times: 1,
        },
        Op::Run,
    ]
}

#[test]
fn a_value_that_panics_alone_while_the_task_waker_panics_leaves_the_first_panic_out() {
    let mut failures = every_failure(&alone_a_call_of(Script::panics()));
    let finishes_and_panics_in_drop = Script::ready().dropping(OnDrop::Panic);
    failures.extend(every_failure(&alone_a_call_of(finishes_and_panics_in_drop)));
    all_passed(&failures);
}

#[test]
fn clear_of_values_whose_drops_panic_drops_them_all_and_goes_on() -> Result<(), TestCaseError> {
    let ops = [
        Op::Push(Script::pending()),
        Op::PushMany {
            count: 3,
            script: Script::pending().dropping(OnDrop::Panic),
        },
        Op::Poll,
        Op::Clear,
        Op::Push(Script::ready()),
        Op::Run,
    ];
    each(&SETS_AND_DRIVEN, &ops)
}

#[test]
fn dropping_a_primitive_whose_values_panic_in_drop_drops_them_all_without_aborting() {
    const TEST: &str =
        "dropping_a_primitive_whose_values_panic_in_drop_drops_them_all_without_aborting";
    let mut failures = each_in_child(TEST, &drops_panic_in_the_primitive_s_drop());
    let mut scripts = vec![Script::pending(); 2];
    scripts.extend(vec![Script::pending().dropping(OnDrop::PanicUnwinding); 3]);
    failures.extend(joins_in_child(TEST, &scripts, &[JoinOp::PollOnce]));
    all_passed(&failures);
}

#[test]
fn a_value_that_panics_in_poll_and_in_drop_while_unwinding_does_not_abort() {
    const TEST: &str = "a_value_that_panics_in_poll_and_in_drop_while_unwinding_does_not_abort";
    let ops = after_a_wake_a_call_of(3, Script::panics().dropping(OnDrop::PanicUnwinding), &[]);
    let mut failures = each_in_child(TEST, &ops);
    // A join drops the others as the panic unwinds: two of them panic in their `Drop` too.
    let scripts = [
        Script::pending(),
        Script::pending().dropping(OnDrop::PanicUnwinding),
        Script::panics().dropping(OnDrop::PanicUnwinding),
        Script::pending().dropping(OnDrop::PanicUnwinding),
    ];
    failures.extend(joins_in_child(TEST, &scripts, &[JoinOp::PollOnce]));
    all_passed(&failures);
}
