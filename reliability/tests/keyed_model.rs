//! The keyed model (`pinfold_reliability::keyed_model`) over every keyed set and merge and the
//! ordered sets: random programs checked after every step, the same programs with a panic at
//! every call into user code in turn, and with two in one call (a value's poll and then its
//! `Drop` or the task's waker, or two values' `Drop`s).
//!
//! `PROPTEST_CASES` sets the cases of each property (default 64; 2 under Miri), and
//! `PINFOLD_PROGRAM_OPS` the longest program (default 120; 8 under Miri).

use pinfold_buffer::{FuturesOrdered, FuturesOrderedBounded};
use pinfold_merge::{Merge, MergeBounded};
use pinfold_reliability::fault::quiet_fault_panics;
use pinfold_reliability::keyed_model::{
    KeyedSubject, Op, OrderedSubject, Second, Val, program, run_keyed, run_ordered, sweep_faults,
    sweep_two_faults,
};
use pinfold_reliability::program::{Pick, Via, WAKE_THREADS};
use pinfold_reliability::sizes::{model_cases, model_config, model_ops, program_ops};
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_unordered::FuturesUnordered;
use pinfold_unordered::FuturesUnorderedBounded;
use proptest::prelude::*;

fn cases() -> u32 {
    model_cases(64)
}

fn max_ops() -> usize {
    model_ops(program_ops())
}

fn config(cases: u32) -> ProptestConfig {
    model_config(cases)
}

fn keyed<S: KeyedSubject>(program: &[Op]) -> Result<(), TestCaseError> {
    let threads = (!cfg!(miri)).then(|| WakeThreads::new(WAKE_THREADS));
    run_keyed::<S>(program, threads).map_err(TestCaseError::fail)
}

fn ordered<S: OrderedSubject>(program: &[Op]) -> Result<(), TestCaseError> {
    let threads = (!cfg!(miri)).then(|| WakeThreads::new(WAKE_THREADS));
    run_ordered::<S>(program, threads).map_err(TestCaseError::fail)
}

/// A sweep's programs are shorter: each runs once per call into user code.
fn faults<S: KeyedSubject>(program: &[Op]) -> Result<(), TestCaseError> {
    quiet_fault_panics();
    let sweep = sweep_faults::<S>(program).map_err(TestCaseError::fail)?;
    prop_assert!(sweep.fired <= sweep.calls);
    Ok(())
}

/// A sweep of `program` with a second panic in the call of each, against one keyed set or
/// merge: `set` picks it.
fn two_faults_on(set: usize, program: &[Op], second: Second) -> Result<(), TestCaseError> {
    quiet_fault_panics();
    let swept = match set {
        0 => sweep_two_faults::<FuturesUnorderedBounded<Val>>(program, second),
        1 => sweep_two_faults::<FuturesUnordered<Val>>(program, second),
        2 => sweep_two_faults::<MergeBounded<Val>>(program, second),
        _ => sweep_two_faults::<Merge<Val>>(program, second),
    };
    swept.map_err(TestCaseError::fail)?;
    Ok(())
}

/// The same, against every keyed set and merge; under Miri (a minute a set there), against
/// two, so that the three kinds of second panic together take each set at least once.
fn two_faults(program: &[Op], second: Second) -> Result<(), TestCaseError> {
    let sets: &[usize] = match second {
        _ if !cfg!(miri) => &[0, 1, 2, 3],
        Second::ValueDrop => &[0, 3],
        Second::TaskWake => &[1, 2],
        Second::NextDrop => &[0, 1],
    };
    sets.iter()
        .try_for_each(|&set| two_faults_on(set, program, second))
}

fn second() -> impl Strategy<Value = Second> {
    prop_oneof![
        Just(Second::ValueDrop),
        Just(Second::TaskWake),
        Just(Second::NextDrop),
    ]
}

proptest! {
    #![proptest_config(config(cases()))]

    #[test]
    fn bounded_set_agrees_with_the_model(program in program(max_ops())) {
        keyed::<FuturesUnorderedBounded<Val>>(&program)?;
    }

    #[test]
    fn growable_set_agrees_with_the_model(program in program(max_ops())) {
        keyed::<FuturesUnordered<Val>>(&program)?;
    }

    #[test]
    fn bounded_merge_agrees_with_the_model(program in program(max_ops())) {
        keyed::<MergeBounded<Val>>(&program)?;
    }

    #[test]
    fn growable_merge_agrees_with_the_model(program in program(max_ops())) {
        keyed::<Merge<Val>>(&program)?;
    }

    #[test]
    fn bounded_ordered_set_agrees_with_the_model(program in program(max_ops())) {
        ordered::<FuturesOrderedBounded<Val>>(&program)?;
    }

    #[test]
    fn growable_ordered_set_agrees_with_the_model(program in program(max_ops())) {
        ordered::<FuturesOrdered<Val>>(&program)?;
    }
}

proptest! {
    #![proptest_config(config(cases() / 8 + 1))]

    #[test]
    fn bounded_set_survives_a_panic_at_every_call(program in program(max_ops() / 4 + 1)) {
        faults::<FuturesUnorderedBounded<Val>>(&program)?;
    }

    #[test]
    fn growable_set_survives_a_panic_at_every_call(program in program(max_ops() / 4 + 1)) {
        faults::<FuturesUnordered<Val>>(&program)?;
    }

    #[test]
    fn bounded_merge_survives_a_panic_at_every_call(program in program(max_ops() / 4 + 1)) {
        faults::<MergeBounded<Val>>(&program)?;
    }

    #[test]
    fn growable_merge_survives_a_panic_at_every_call(program in program(max_ops() / 4 + 1)) {
        faults::<Merge<Val>>(&program)?;
    }
}

proptest! {
    // Half the cases of one set's sweep, of programs a third as long, each against one set.
    #![proptest_config(config(cases() / 16 + 1))]

    #[test]
    fn sets_survive_two_panics_in_one_call(
        set in 0..4usize,
        program in program(max_ops() / 12 + 1),
        second in second(),
    ) {
        two_faults_on(set, &program, second)?;
    }
}

/// Values polled and woken, one at a time and two at once, between drains that poll only
/// when woken, then `clear` and the set's drop: a value's poll with another still queued (the
/// set wakes its task for it), a drop in `clear` and in the set's drop before others.
fn two_faults_program() -> Vec<Op> {
    vec![
        Op::Insert { count: 3, ready: 1 },
        Op::DrainAll,
        Op::FireMany {
            pick: Pick(0),
            count: 2,
        },
        Op::Drain { max: 1 },
        Op::Fire {
            pick: Pick(u64::MAX),
            via: Via::Here,
        },
        Op::DrainAll,
        Op::Insert { count: 3, ready: 0 },
        Op::Clear,
        Op::Insert { count: 3, ready: 0 },
    ]
}

#[test]
fn a_value_whose_poll_and_drop_panic_leaves_every_set_consistent_and_awake() {
    two_faults(&two_faults_program(), Second::ValueDrop).unwrap();
}

#[test]
fn a_value_whose_poll_panics_while_the_task_waker_panics_leaves_every_set_awake() {
    two_faults(&two_faults_program(), Second::TaskWake).unwrap();
}

#[test]
fn two_panicking_drops_in_clear_leave_every_set_consistent() {
    two_faults(&two_faults_program(), Second::NextDrop).unwrap();
}

/// The schedule that took a growable set's stale key for the key of a new value: groups 0 and
/// 1 filled, a value in group 2 removed and re-inserted twice (its slot ages), everything
/// removed (groups 2 and 1 released), 65 values inserted again (one group of 96 covers the slot
/// numbers of both released groups).
fn regrowth_program() -> Vec<Op> {
    let last = Pick(u64::MAX);
    let mut program = vec![Op::Insert {
        count: 65,
        ready: 0,
    }];
    program.extend([Op::Reinsert { pick: last }, Op::Reinsert { pick: last }]);
    program.push(Op::Remove { pick: last });
    program.extend((0..64).map(|_| Op::Remove { pick: Pick(0) }));
    program.push(Op::Insert {
        count: 65,
        ready: 0,
    });
    program.extend((0..8).map(|n| Op::UseDeparted {
        pick: Pick(n << 60),
    }));
    program
}

// Not under Miri, where this schedule, checked against the model after every step, took a
// minute. There the arena's own test of aged slots in released groups (`growable_worst.rs`,
// with both aliasing models) runs it without the model: groups 0 and 1 full and one boxed
// value in group 2, a slot of group 2 or of group 1 aged twice, both groups released (by
// separate outputs or by one), one larger group in their place, every departed key refused.
#[test]
#[cfg_attr(miri, ignore)]
fn departed_keys_stay_refused_after_groups_are_released_and_regrown() {
    keyed::<FuturesUnordered<Val>>(&regrowth_program()).unwrap();
    keyed::<Merge<Val>>(&regrowth_program()).unwrap();
}

// Not under Miri, where the model has no wake threads and would fire these wakes on the test's
// own thread, as the model tests above do. There the tests of wakes from other threads of the
// arena (`ready_edges.rs`, `wakes.rs`), the sets and merges (unordered's and merge's
// `wakes.rs`) and the ordered sets (buffer's `ordered_sets.rs`) stand in.
#[test]
#[cfg_attr(miri, ignore)]
fn wakes_from_other_threads_reach_every_set() {
    let program = [
        Op::Insert {
            count: 40,
            ready: 0,
        },
        Op::Fire {
            pick: Pick(0),
            via: Via::Thread(0),
        },
        Op::Fire {
            pick: Pick(u64::MAX),
            via: Via::Thread(1),
        },
        Op::End {
            pick: Pick(1 << 63),
            via: Via::Thread(2),
        },
        Op::DrainAll,
    ];
    keyed::<FuturesUnorderedBounded<Val>>(&program).unwrap();
    keyed::<FuturesUnordered<Val>>(&program).unwrap();
    keyed::<MergeBounded<Val>>(&program).unwrap();
    keyed::<Merge<Val>>(&program).unwrap();
    ordered::<FuturesOrdered<Val>>(&program).unwrap();
}
