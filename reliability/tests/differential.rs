//! Differential property tests: random programs of operations (push, complete or wake future i
//! from thread t, run the task, poll once, clear, drop the whole set) run against a pinfold
//! primitive and against its `futures-util` counterpart, side by side.
//!
//! | pinfold | reference | compared |
//! |---|---|---|
//! | `FuturesUnorderedBounded` | `futures_util::stream::FuturesUnordered` | multiset of outputs |
//! | `FuturesUnordered` | `futures_util::stream::FuturesUnordered` | multiset of outputs |
//! | `unordered_buffer(c)` | `buffer_unordered(c)` | multiset of outputs |
//! | `ordered_buffer(c)`, `.window(w)` | `buffered(c)` | sequence of outputs |
//! | `join_all` | `futures_util::future::join_all` | the output `Vec` |
//! | `try_join_all` | a model of its documented semantics; `futures_util`'s for `Ok` | result |
//!
//! Each side is polled by an [`Exec`](pinfold_reliability::exec::Exec) that polls only when
//! its waker fired (or the task itself pushed, or just got an output), so a lost wake shows as
//! a missing output. Outputs are compared whenever both sides have settled (after a `Run`), per
//! *epoch* (between two clears or drops of the set): a single `PollOnce` may legitimately give
//! different outputs on the two sides (their fairness budgets differ), and a clear right after
//! it drops different futures.
//!
//! On every side, after every operation: no future was dropped twice, polled after `Ready`, or
//! moved; on the pinfold side also: no future was polled twice in one poll of the primitive,
//! the futures polled no more often than they were inserted and woken (no quadratic polling),
//! at most `concurrency` run at once, and at most `window` are running or held. After a clear
//! or a drop of the whole set, and at the end of the program, every future and every output was
//! dropped exactly once.
//!
//! Sizes: `PROPTEST_CASES` cases (default 256) of up to `PINFOLD_PROGRAM_OPS` operations
//! (default 120; the length is uniform, so 60 on average) for each primitive.
//!
//! The drivers are the crate's: [`lockstep`](pinfold_reliability::lockstep) for the sets and
//! buffers, [`join_lockstep`](pinfold_reliability::join_lockstep) for the joins. This file
//! holds which primitive runs against which reference, and the properties.

use std::time::Duration;

use futures_util::StreamExt;
use pinfold_buffer::BufferExt;
use pinfold_reliability::ctl::{Ctl, Out};
use pinfold_reliability::join_lockstep::{Input, join_all_case, join_program, try_join_all_case};
use pinfold_reliability::lockstep::{Bounds, Lockstep, Op, Order, Side, program};
use pinfold_reliability::program::{JoinOp, Pick, Via};
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::subject::{Buffer, Subject};
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: proptest_cases(256),
        // Relative to the package root, where `cargo test` runs the tests.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/differential.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// A watchdog for one property test: a program that hangs fails the run.
fn watchdog(name: &str) -> Watchdog {
    Watchdog::arm(name, Duration::from_secs(600))
}

/// The reference of both sets: `futures-util`'s `FuturesUnordered`.
fn reference_set() -> Box<dyn Subject> {
    Box::new(futures_util::stream::FuturesUnordered::<Ctl<Out>>::new())
}

fn bounded_case(capacity: usize, program: &[Op]) -> Result<(), TestCaseError> {
    let pinfold = Side::new(
        "FuturesUnorderedBounded",
        true,
        Box::new(move || Box::new(pinfold_unordered::FuturesUnorderedBounded::new(capacity))),
    );
    let reference = Side::new("futures-util", false, Box::new(reference_set));
    Lockstep::new(Order::Finish, None, pinfold, reference).run(program)
}

fn unordered_case(capacity: usize, program: &[Op]) -> Result<(), TestCaseError> {
    let pinfold = Side::new(
        "FuturesUnordered",
        true,
        Box::new(move || Box::new(pinfold_unordered::FuturesUnordered::with_capacity(capacity))),
    );
    let reference = Side::new("futures-util", false, Box::new(reference_set));
    Lockstep::new(Order::Finish, None, pinfold, reference).run(program)
}

fn unordered_buffer_case(concurrency: usize, program: &[Op]) -> Result<(), TestCaseError> {
    let pinfold = Side::new(
        "unordered_buffer",
        true,
        Box::new(move || Buffer::boxed(|source| source.unordered_buffer(concurrency))),
    );
    let reference = Side::new(
        "buffer_unordered",
        false,
        Box::new(move || Buffer::boxed(|source| source.buffer_unordered(concurrency))),
    );
    let bounds = Bounds {
        concurrency,
        window: None,
    };
    Lockstep::new(Order::Finish, Some(bounds), pinfold, reference).run(program)
}

fn ordered_buffer_case(
    concurrency: usize,
    window: Option<usize>,
    program: &[Op],
) -> Result<(), TestCaseError> {
    let pinfold = Side::new(
        "ordered_buffer",
        true,
        Box::new(move || {
            Buffer::boxed(|source| match window {
                Some(window) => source.ordered_buffer(concurrency).window(window),
                None => source.ordered_buffer(concurrency),
            })
        }),
    );
    let reference = Side::new(
        "buffered",
        false,
        Box::new(move || Buffer::boxed(|source| source.buffered(concurrency))),
    );
    let bounds = Bounds {
        concurrency,
        window,
    };
    Lockstep::new(Order::Input, Some(bounds), pinfold, reference).run(program)
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bounded_set_matches_futures_unordered(
        capacity in prop_oneof![3 => 0..=12usize, 1 => 60..=140usize],
        program in program(),
    ) {
        let _watchdog = watchdog("bounded_set_matches_futures_unordered");
        bounded_case(capacity, &program)?;
    }

    #[test]
    fn growable_set_matches_futures_unordered(
        capacity in prop_oneof![Just(0usize), 1..=4usize, 1..=40usize],
        program in program(),
    ) {
        let _watchdog = watchdog("growable_set_matches_futures_unordered");
        unordered_case(capacity, &program)?;
    }

    #[test]
    fn unordered_buffer_matches_buffer_unordered(concurrency in 1..=6usize, program in program()) {
        let _watchdog = watchdog("unordered_buffer_matches_buffer_unordered");
        unordered_buffer_case(concurrency, &program)?;
    }

    #[test]
    fn ordered_buffer_matches_buffered(
        concurrency in 1..=6usize,
        window in prop::option::of(1..=10usize),
        program in program(),
    ) {
        let _watchdog = watchdog("ordered_buffer_matches_buffered");
        ordered_buffer_case(concurrency, window, &program)?;
    }

    #[test]
    fn join_all_matches_futures_util((yields, input, program) in join_program(0.0)) {
        let _watchdog = watchdog("join_all_matches_futures_util");
        join_all_case(&yields, input, &program)?;
    }

    #[test]
    fn try_join_all_keeps_its_documented_semantics(
        (yields, input, program) in join_program(0.15),
    ) {
        let _watchdog = watchdog("try_join_all_keeps_its_documented_semantics");
        try_join_all_case(&yields, input, &program)?;
    }
}

/// Shrunk counterexamples of the properties above, kept as fixed cases. The properties found
/// them against deliberately broken copies of the library (mutants that drop the self-wake
/// after a wake collected during a poll, in the arena and in the growable set); they pin down
/// that a future that wakes itself while it is polled is polled again.
mod regressions {
    use super::*;

    #[test]
    fn bounded_set_polls_again_a_future_woken_while_the_set_polls() -> Result<(), TestCaseError> {
        let complete = Op::Complete {
            pick: Pick(0),
            ok: false,
            via: Via::Here,
        };
        bounded_case(
            5,
            &[
                Op::Push {
                    ready: false,
                    yields: 0,
                },
                Op::Run,
                complete,
                Op::PushMany {
                    count: 8,
                    ready_every: 4,
                },
                Op::Run,
            ],
        )
    }

    #[test]
    fn growable_set_polls_again_a_future_that_woke_itself() -> Result<(), TestCaseError> {
        unordered_case(
            0,
            &[Op::Push {
                ready: true,
                yields: 1,
            }],
        )
    }

    #[test]
    fn unordered_buffer_polls_again_a_future_that_woke_itself() -> Result<(), TestCaseError> {
        unordered_buffer_case(
            1,
            &[Op::Push {
                ready: true,
                yields: 1,
            }],
        )
    }

    #[test]
    fn ordered_buffer_polls_again_a_future_that_woke_itself() -> Result<(), TestCaseError> {
        let complete = Op::CompleteMany {
            pick: Pick(0),
            count: 4,
            via: Via::Here,
        };
        ordered_buffer_case(
            3,
            None,
            &[
                Op::Push {
                    ready: false,
                    yields: 1,
                },
                complete.clone(),
                complete,
            ],
        )
    }

    #[test]
    fn join_all_polls_again_a_future_that_woke_itself() -> Result<(), TestCaseError> {
        let complete = JoinOp::Complete {
            pick: Pick(0),
            ok: false,
            via: Via::Here,
        };
        join_all_case(&[1], Input::Exact, &[complete])
    }

    #[test]
    fn try_join_all_polls_again_a_failed_future_that_woke_itself() -> Result<(), TestCaseError> {
        let mut yields = vec![0; 20];
        yields[16] = 1;
        let complete = JoinOp::Complete {
            pick: Pick::at(16, 20),
            ok: false,
            via: Via::Here,
        };
        try_join_all_case(&yields, Input::Exact, &[complete])
    }
}
