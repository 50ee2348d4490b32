//! Faults: futures that panic in `poll`, in `Drop` and in their output's `Drop` at random
//! points (property tests, `PROPTEST_CASES` cases, default 128, of up to
//! `PINFOLD_PROGRAM_OPS` operations, default 120); a future that panics in its poll panics in
//! its `Drop` too, one time in three. After every operation: the panic that reached the caller
//! is the first injected one raised during that operation (never a panic of the primitive's
//! own, such as a failed assertion or a borrow error, nor a later one), and no injected panic
//! was swallowed without one reaching the caller; no value was dropped twice. What the docs
//! promise after a panic holds:
//!
//! - the sets and the stream buffers stay usable: once the task settles, every future that was
//!   completed and did not panic has given its output (the ordered buffer in input order,
//!   skipping the futures that panicked), and a set's `len` counts the futures not yet dropped;
//!   after a panic of a future's poll, a wake of a future still running reaches the task;
//! - `join_all` and `try_join_all` are terminated: every future and kept output is dropped
//!   before the panic reaches the caller, and polling again panics with "polled after
//!   completion".
//!
//! Once the primitive is dropped, every future and every output was dropped exactly once.
//! Re-entrant parent wakers are in `reentrance.rs`, a future that always wakes itself in
//! `starvation.rs`.
//!
//! The drivers and the strategies are the crate's ([`faulty`](pinfold_reliability::faulty),
//! [`faulty_join`](pinfold_reliability::faulty_join)); this file holds the cases.

use std::time::Duration;

use pinfold_reliability::ctl::{Faults, Spec};
use pinfold_reliability::fault::quiet_fault_panics;
use pinfold_reliability::faulty::{Faulty, Kind, Op, program};
use pinfold_reliability::faulty_join::{join_all_of, join_case, join_program, try_join_all_of};
use pinfold_reliability::program::{JoinOp, Pick, Via};
use pinfold_reliability::sizes::proptest_cases;
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: proptest_cases(128),
        // Relative to the package root, where `cargo test` runs the tests.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/faults.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// A watchdog for one property test (a program that hangs fails the run), with the
/// injected panics kept quiet.
fn watchdog(name: &str) -> Watchdog {
    quiet_fault_panics();
    Watchdog::arm(name, Duration::from_secs(600))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn bounded_set_survives_panics(capacity in 0..=10usize, program in program()) {
        let _watchdog = watchdog("bounded_set_survives_panics");
        Faulty::new(Kind::Bounded(capacity)).run(&program)?;
    }

    #[test]
    fn growable_set_survives_panics(program in program()) {
        let _watchdog = watchdog("growable_set_survives_panics");
        Faulty::new(Kind::Growable).run(&program)?;
    }

    #[test]
    fn unordered_buffer_survives_panics(concurrency in 1..=5usize, program in program()) {
        let _watchdog = watchdog("unordered_buffer_survives_panics");
        Faulty::new(Kind::UnorderedBuffer(concurrency)).run(&program)?;
    }

    #[test]
    fn ordered_buffer_survives_panics(
        concurrency in 1..=5usize,
        window in prop::option::of(1..=8usize),
        program in program(),
    ) {
        let _watchdog = watchdog("ordered_buffer_survives_panics");
        Faulty::new(Kind::OrderedBuffer(concurrency, window)).run(&program)?;
    }

    #[test]
    fn join_all_terminates_cleanly_on_panics((specs, program) in join_program()) {
        let _watchdog = watchdog("join_all_terminates_cleanly_on_panics");
        join_case(join_all_of, &specs, &program)?;
    }

    #[test]
    fn try_join_all_terminates_cleanly_on_panics((specs, program) in join_program()) {
        let _watchdog = watchdog("try_join_all_terminates_cleanly_on_panics");
        join_case(try_join_all_of, &specs, &program)?;
    }
}

/// Shrunk counterexamples of the properties above, kept as fixed cases. The properties found
/// them against deliberately broken copies of the library (mutants of the panic handling: an
/// arena that frees a slot only after the value's `Drop` returned, an arena `clear` that stops
/// at the first panicking `Drop`, a join that does not drop the others when one panics, an
/// ordered buffer that does not skip the place of a future that panicked). Beside them, fixed
/// programs of two panics in one call: a future's poll and `Drop`, and the drop of a primitive
/// holding two outputs whose `Drop` panics.
mod regressions {
    use std::task::{Context, Waker};

    use pinfold_buffer::ProgressStream;
    use pinfold_reliability::ctl::{Outcome, World};
    use pinfold_reliability::fault::{as_fault, catch, expecting_panics};
    use pinfold_reliability::isolated::in_child_process;
    use pinfold_unordered::FuturesUnordered;

    use super::*;

    fn panics_in_drop() -> Spec {
        Spec {
            faults: Faults {
                drop_panics: true,
                ..Faults::default()
            },
            ..Spec::default()
        }
    }

    fn push(spec: Spec) -> Op {
        Op::Push { spec, ready: false }
    }

    fn complete_first() -> Op {
        Op::Complete {
            pick: Pick(0),
            via: Via::Here,
        }
    }

    #[test]
    fn bounded_set_frees_the_slot_of_a_finished_future_whose_drop_panics()
    -> Result<(), TestCaseError> {
        quiet_fault_panics();
        Faulty::new(Kind::Bounded(2)).run(&[push(panics_in_drop()), complete_first()])
    }

    #[test]
    fn bounded_set_clear_drops_every_future_when_one_drop_panics() -> Result<(), TestCaseError> {
        quiet_fault_panics();
        Faulty::new(Kind::Bounded(2)).run(&[
            push(panics_in_drop()),
            push(Spec::default()),
            Op::Clear,
        ])
    }

    #[test]
    fn ordered_buffer_skips_the_place_of_a_future_that_panicked() -> Result<(), TestCaseError> {
        quiet_fault_panics();
        let panics_in_first_poll = Spec {
            faults: Faults {
                poll_panic_at: Some(1),
                ..Faults::default()
            },
            ..Spec::default()
        };
        Faulty::new(Kind::OrderedBuffer(1, None)).run(&[
            push(panics_in_first_poll),
            push(Spec::default()),
            push(Spec::default()),
            complete_first(),
            complete_first(),
            Op::Run,
        ])
    }

    /// Two panics in one call: the future's poll, then its `Drop` as the primitive drops it.
    /// The poll's panic comes out, and a wake of the future still running reaches the task.
    #[test]
    fn a_future_that_panics_in_poll_and_in_drop_lets_the_poll_s_panic_out()
    -> Result<(), TestCaseError> {
        quiet_fault_panics();
        let panics_in_poll_and_drop = Spec {
            faults: Faults {
                poll_panic_at: Some(1),
                drop_panics: true,
                ..Faults::default()
            },
            ..Spec::default()
        };
        let program = [
            push(Spec::default()),
            Op::Run,
            push(panics_in_poll_and_drop),
            Op::Run,
            complete_first(),
        ];
        for kind in [
            Kind::Bounded(4),
            Kind::Growable,
            Kind::UnorderedBuffer(2),
            Kind::OrderedBuffer(2, None),
            Kind::OrderedBuffer(2, Some(2)),
        ] {
            Faulty::new(kind).run(&program)?;
        }
        Ok(())
    }

    /// Futures whose output's `Drop` panics, even while a panic unwinds.
    fn loud_outputs() -> Spec {
        Spec {
            faults: Faults {
                output_drop_panics: true,
                panics_while_unwinding: true,
                ..Faults::default()
            },
            ..Spec::default()
        }
    }

    /// Dropping a primitive that holds two outputs whose `Drop` panics (an ordered buffer
    /// behind a head still running, a join, a set driven ahead of its consumer) drops every
    /// output once, lets the first panic out, and does not abort the process: each in a child
    /// process.
    #[test]
    fn dropping_a_primitive_that_holds_outputs_whose_drop_panics_does_not_abort() {
        const TEST: &str =
            "regressions::dropping_a_primitive_that_holds_outputs_whose_drop_panics_does_not_abort";
        quiet_fault_panics();
        let behind_a_head = [
            push(Spec::default()),
            push(loud_outputs()),
            push(loud_outputs()),
            Op::Run,
            Op::Complete {
                pick: Pick(u64::MAX),
                via: Via::Here,
            },
            Op::Complete {
                pick: Pick(u64::MAX),
                via: Via::Here,
            },
            Op::Run,
            Op::DropAll,
        ];
        let mut failures = Vec::new();
        for kind in [
            Kind::OrderedBuffer(3, None),
            Kind::OrderedBuffer(3, Some(3)),
        ] {
            let ran = in_child_process(TEST, &format!("{kind:?}"), || {
                Faulty::new(kind)
                    .run(&behind_a_head)
                    .map_err(|e| e.to_string())
            });
            failures.extend(ran.err());
        }
        let complete = |pick| JoinOp::Complete {
            pick,
            ok: true,
            via: Via::Here,
        };
        let kept = [complete(Pick(0)), complete(Pick(0)), JoinOp::Run];
        let specs = [loud_outputs(), loud_outputs(), Spec::default()];
        let ran = in_child_process(TEST, "JoinAll", || {
            join_case(join_all_of, &specs, &kept).map_err(|e| e.to_string())
        });
        failures.extend(ran.err());
        let ran = in_child_process(TEST, "Driven", || {
            expecting_panics(driven_set_holding_loud_outputs)
        });
        failures.extend(ran.err());
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// A set of three finished futures with loud outputs, driven (all three outputs held),
    /// then dropped.
    fn driven_set_holding_loud_outputs() -> Result<(), String> {
        let mut world = World::new("driven");
        let mut set = FuturesUnordered::new();
        for _ in 0..3 {
            let (fut, handle) = world.ctl(loud_outputs());
            handle.complete(Outcome::Ok);
            set.push(fut);
        }
        let mut driven = Box::pin(set.driven(3));
        let progress = driven
            .as_mut()
            .poll_progress(&mut Context::from_waker(Waker::noop()));
        if progress.is_pending() || driven.held() != 3 {
            return Err(format!("driven: {progress:?}, {} held", driven.held()));
        }
        let caught = catch(move || drop(driven)).err();
        let fired = world.take_fired();
        let first = caught.map(|payload| as_fault(&*payload));
        if first != fired.first().map(|&fault| Ok(fault)) {
            return Err(format!(
                "driven: {first:?} came out, the panics raised were {fired:?}"
            ));
        }
        world.check_all_dropped_once()
    }

    #[test]
    fn join_all_drops_the_others_when_a_finished_futures_drop_panics() -> Result<(), TestCaseError>
    {
        quiet_fault_panics();
        let complete = |ok| JoinOp::Complete {
            pick: Pick(0),
            ok,
            via: Via::Here,
        };
        join_case(
            join_all_of,
            &[panics_in_drop(), Spec::default()],
            &[complete(false), complete(true)],
        )
    }
}
