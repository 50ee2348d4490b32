//! The driven model (`pinfold_reliability::driven_model`): `Driven` over every set of futures,
//! merge and map, made as a user makes it (`set.driven(limit)`), through random programs of
//! pushes through `get_mut` between calls, drives, takes, empties and refills, values finished
//! from this and other threads, and consumers waiting on a value of the stream; and a program
//! aimed at each of two promises: a set of futures driven at its limit still polls a future
//! the consumer waits on, and a stream driven while empty runs what is pushed after.
//!
//! `PROPTEST_CASES` sets the cases of each property (default 16; 2 under Miri), and
//! `PINFOLD_PROGRAM_OPS` the longest random program (default 120, of which these take half;
//! 8 under Miri).

use pinfold_map::{FutureMap, StreamMap};
use pinfold_merge::{Merge, MergeBounded};
use pinfold_reliability::driven_model::{DrivenSubject, Op, program, run};
use pinfold_reliability::keyed_model::Val;
use pinfold_reliability::program::{Pick, Via, WAKE_THREADS};
use pinfold_reliability::sizes::{model_cases, model_config, model_ops, program_ops};
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};
use proptest::prelude::*;

fn cases() -> u32 {
    model_cases(16)
}

fn max_ops() -> usize {
    model_ops(program_ops() / 2)
}

fn config() -> ProptestConfig {
    model_config(cases())
}

fn driven<S: DrivenSubject>(limit: usize, program: &[Op]) -> Result<(), TestCaseError> {
    let threads = (!cfg!(miri)).then(|| WakeThreads::new(WAKE_THREADS));
    run::<S>(limit, program, threads).map_err(TestCaseError::fail)
}

/// The same program against every set, merge and map.
fn each(limit: usize, program: &[Op]) -> Result<(), TestCaseError> {
    driven::<FuturesUnorderedBounded<Val>>(limit, program)?;
    driven::<FuturesUnordered<Val>>(limit, program)?;
    driven::<MergeBounded<Val>>(limit, program)?;
    driven::<Merge<Val>>(limit, program)?;
    driven::<FutureMap<u32, Val>>(limit, program)?;
    driven::<StreamMap<u32, Val>>(limit, program)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn driven_sets_merges_and_maps_keep_to_the_reference((limit, ops) in program(max_ops())) {
        each(limit, &ops)?;
    }
}

/// Three outputs ready and one future pending, driven with a limit of 1: a consumer waiting
/// on the pending one is released (a set of futures polls past its limit; a merge or a stream
/// map, at its limit, holds exactly it).
#[test]
fn a_consumer_waits_on_a_value_with_more_outputs_ready_than_the_limit() {
    let program = [
        Op::Push {
            count: 4,
            ready: 3,
            pinned: false,
        },
        Op::Progress,
        Op::Wait {
            pick: Pick::at(3, 4),
        },
        Op::Empty,
    ];
    each(1, &program).unwrap();
}

/// Driven while empty, then refilled through `get_mut` and `get_pin_mut`, then emptied, three
/// times: every output comes, and each end once.
#[test]
fn a_stream_driven_while_empty_runs_what_is_pushed_after() {
    let mut program = Vec::new();
    for pinned in [false, true, false] {
        program.extend([
            Op::Progress,
            Op::Push {
                count: 2,
                ready: 1,
                pinned,
            },
            Op::Next,
            Op::Fire {
                pick: Pick(0),
                via: Via::Thread(0),
            },
            Op::Progress,
            Op::Empty,
        ]);
    }
    each(2, &program).unwrap();
}
