//! Faults: futures that panic in `poll`, in `Drop` and in their output's `Drop` at random
//! points; parent wakers that re-enter the primitive from inside `wake`; a future that always
//! wakes itself.
//!
//! **Panics** (property tests, `PROPTEST_CASES` cases, default 128, of up to
//! `PINFOLD_PROGRAM_OPS` operations, default 120). After every operation: a panic that reached
//! the caller is an injected one that was raised during that operation (never a panic of the
//! primitive's own, such as a failed assertion or a borrow error), and no injected panic was
//! swallowed without one reaching the caller; no value was dropped twice. What the docs promise
//! after a panic holds:
//!
//! - the sets and the stream buffers stay usable: once the task settles, every future that was
//!   completed and did not panic has given its output (the ordered buffer in input order,
//!   skipping the futures that panicked), and a set's `len` counts the futures not yet dropped;
//! - `join_all` and `try_join_all` are terminated: every future and kept output is dropped
//!   before the panic reaches the caller, and polling again panics with "polled after
//!   completion".
//!
//! Once the primitive is dropped, every future and every output was dropped exactly once.
//!
//! **Re-entrance.** A parent waker whose `wake` polls the primitive: through `Mutex::try_lock`
//! from any thread (futures-buffered deadlocked here), or through `RefCell::try_borrow_mut` on
//! the owning thread. It must not deadlock (a watchdog aborts the run), no borrow error may
//! come out of pinfold, and every output must arrive. And a parent waker that drops the
//! primitive from inside `wake`, with the primitive's wake path still on the stack: nothing
//! may be used after it is freed (run it under `cargo xtask valgrind` to see that), every
//! future is dropped once, and the parent waker is released.
//!
//! **Starvation** (futures-rs #2047). A future that always wakes itself must not keep the
//! primitive from returning `Pending`, so other tasks on a one-thread runtime still run.
//!
//! The drivers, the parent wakers and the strategies are the crate's
//! ([`faulty`](pinfold_reliability::faulty), [`faulty_join`](pinfold_reliability::faulty_join),
//! [`reentrance`](pinfold_reliability::reentrance)); this file holds the cases.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::thread;
use std::time::{Duration, Instant};

use pinfold_reliability::ctl::{Faults, Out, Outcome, Spec, World};
use pinfold_reliability::fault::quiet_fault_panics;
use pinfold_reliability::faulty::{Faulty, Kind, Op, program};
use pinfold_reliability::faulty_join::{join_all_of, join_case, join_program, try_join_all_of};
use pinfold_reliability::program::{JoinOp, Pick, Via};
use pinfold_reliability::reentrance::{
    DOOMED, DroppingParent, HOOK, KINDS, LockingParent, RefCellParent, futures, primitive,
};
use pinfold_reliability::sizes::{proptest_cases, time_limit};
use pinfold_reliability::wake_threads::WakeThreads;
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

// ---------------------------------------------------------------------------------------------
// Re-entrant parent wakers
// ---------------------------------------------------------------------------------------------

#[test]
fn a_parent_waker_that_locks_and_polls_from_wake_does_not_deadlock() {
    let _watchdog = Watchdog::arm("locking parent", Duration::from_secs(120));
    const N: usize = 64;
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(LockingParent {
            primitive: Mutex::new(Some(primitive(kind, futures))),
            outputs: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            reentered: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        parent.run(false);
        // Three quarters from other threads at once (their wakes race the polls they cause),
        // the rest from here, each polling the primitive from inside its wake.
        thread::scope(|scope| {
            for t in 0..3 {
                let handles = &handles;
                scope.spawn(move || {
                    for ctl in handles.iter().skip(t).step_by(4) {
                        ctl.complete(Outcome::Ok);
                    }
                });
            }
        });
        for ctl in handles.iter().skip(3).step_by(4) {
            ctl.complete(Outcome::Ok);
        }
        let deadline = Instant::now() + time_limit(Duration::from_secs(30));
        while parent.outputs.lock().unwrap().len() < N {
            assert!(
                Instant::now() < deadline,
                "{kind}: {} of {N} outputs, woken {}: a wake was lost",
                parent.outputs.lock().unwrap().len(),
                parent.woken.load(Ordering::SeqCst)
            );
            thread::sleep(Duration::from_millis(1));
        }
        let mut outputs = parent.outputs.lock().unwrap().clone();
        if kind == "join_all" || kind.starts_with("ordered") {
            assert!(outputs.iter().copied().eq(0..N as u32), "{kind}: order");
        }
        outputs.sort_unstable();
        assert!(outputs.iter().copied().eq(0..N as u32), "{kind}: outputs");
        assert!(
            parent.reentered.load(Ordering::SeqCst) > 0,
            "{kind}: no wake re-entered the primitive"
        );
        let primitive = parent.primitive.lock().unwrap().take();
        drop(primitive);
        assert_eq!(
            Arc::strong_count(&parent),
            1,
            "{kind}: the dropped primitive kept its parent waker"
        );
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn a_parent_waker_that_polls_through_a_refcell_from_wake_gets_every_output() {
    let _watchdog = Watchdog::arm("refcell parent", Duration::from_secs(120));
    const N: usize = 48;
    let threads = WakeThreads::new(1);
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(RefCellParent {
            owner: thread::current().id(),
            woken: AtomicBool::new(true),
            reentered: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        let outputs = Rc::new(RefCell::new(Vec::new()));
        let mut primitive = primitive(kind, futures);
        let waker = Waker::from(parent.clone());
        let hook_parent = parent.clone();
        let hook_outputs = outputs.clone();
        HOOK.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || {
                let mut cx = Context::from_waker(&waker);
                let mut taken = Vec::new();
                loop {
                    hook_parent.woken.store(false, Ordering::SeqCst);
                    if primitive.poll_into(&mut cx, &mut taken).is_ready()
                        || !hook_parent.woken.load(Ordering::SeqCst)
                    {
                        break;
                    }
                }
                hook_outputs.borrow_mut().extend(taken.iter().map(Out::id));
            }));
        });
        let poll_if_woken = || {
            if parent.woken.load(Ordering::SeqCst) {
                HOOK.with(|hook| (hook.borrow_mut().as_mut().expect("hook set"))());
            }
        };
        poll_if_woken();
        for (i, ctl) in handles.iter().enumerate() {
            if i % 5 == 4 {
                // From another thread: only recorded; the owner polls after.
                let ctl = ctl.clone();
                threads.run_on(0, move || {
                    ctl.complete(Outcome::Ok);
                });
                poll_if_woken();
            } else {
                // Here: the wake polls the primitive from inside itself.
                ctl.complete(Outcome::Ok);
            }
        }
        poll_if_woken();
        let got = outputs.borrow().clone();
        assert_eq!(got.len(), N, "{kind}: outputs {got:?}");
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().copied().eq(0..N as u32), "{kind}: outputs");
        if kind == "join_all" || kind.starts_with("ordered") {
            assert!(got.iter().copied().eq(0..N as u32), "{kind}: order");
        }
        assert!(
            parent.reentered.load(Ordering::SeqCst) > 0,
            "{kind}: no wake re-entered the primitive"
        );
        HOOK.with(|hook| drop(hook.borrow_mut().take()));
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn a_parent_waker_that_drops_the_primitive_from_wake_is_safe() {
    let _watchdog = Watchdog::arm("dropping parent", Duration::from_secs(120));
    const N: usize = 40;
    let threads = WakeThreads::new(1);
    for kind in KINDS {
        let mut world = World::new(kind);
        let (futures, handles) = futures(&mut world, N);
        let parent = Arc::new(DroppingParent {
            owner: thread::current().id(),
            dropped: AtomicBool::new(false),
        });
        let waker = Waker::from(parent.clone());
        let mut primitive = primitive(kind, futures);
        let mut taken = Vec::new();
        assert!(
            primitive
                .poll_into(&mut Context::from_waker(&waker), &mut taken)
                .is_pending(),
            "{kind}: nothing was completed yet"
        );
        DOOMED.with(|doomed| *doomed.borrow_mut() = Some(primitive));
        // The first completion wakes the parent, which drops everything; the rest are wakes of
        // futures that are gone, from here and from another thread.
        for (i, ctl) in handles.iter().enumerate() {
            if i % 3 == 2 {
                let ctl = ctl.clone();
                threads.run_on(0, move || {
                    ctl.complete(Outcome::Ok);
                });
            } else {
                ctl.complete(Outcome::Ok);
                ctl.wake();
            }
        }
        assert!(
            parent.dropped.load(Ordering::SeqCst),
            "{kind}: the parent was never woken"
        );
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        // The futures' shared state (the world and the handles) may hold the parent's waker
        // too: a join's first polls hand the task's waker to the futures themselves. Once they
        // are gone, nothing else may.
        drop((world, handles));
        drop(waker);
        assert_eq!(
            Arc::strong_count(&parent),
            1,
            "{kind}: the primitive kept its parent waker after it was dropped"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Starvation
// ---------------------------------------------------------------------------------------------

#[test]
fn a_future_that_always_wakes_itself_starves_neither_the_executor_nor_the_others() {
    let _watchdog = Watchdog::arm("starvation", Duration::from_secs(120));
    const OTHERS: usize = 20;
    for kind in KINDS {
        let mut world = World::new(kind);
        // Completed before the start: the others are ready at their first poll; the last
        // future (last, so that the ordered buffers can yield the others before it) wakes
        // itself on every poll, for ever.
        let mut futures = Vec::new();
        for _ in 0..OTHERS {
            let (fut, ctl) = world.ctl(Spec::default());
            ctl.complete(Outcome::Ok);
            futures.push(fut);
        }
        let (spinner, spinner_ctl) = world.ctl(Spec {
            yields: u32::MAX,
            ..Spec::default()
        });
        spinner_ctl.complete(Outcome::Ok);
        futures.push(spinner);
        let world = Arc::new(world);
        let mut primitive = primitive(kind, futures);
        let outputs = Arc::new(AtomicUsize::new(0));
        let polls = Arc::new(AtomicUsize::new(0));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("build a tokio runtime");
        let ticks = runtime.block_on(async {
            let consumer = {
                let (world, outputs, polls) = (world.clone(), outputs.clone(), polls.clone());
                tokio::spawn(std::future::poll_fn(move |cx| {
                    let mut taken = Vec::new();
                    let polled = primitive.poll_each(cx, &mut taken, &|| {
                        world.begin_poll_call();
                        polls.fetch_add(1, Ordering::SeqCst);
                    });
                    outputs.fetch_add(taken.len(), Ordering::SeqCst);
                    polled
                }))
            };
            let mut ticks = 0;
            for _ in 0..100 {
                tokio::task::yield_now().await;
                ticks += 1;
            }
            consumer.abort();
            ticks
        });
        drop(runtime);
        assert_eq!(ticks, 100, "{kind}: the other task was starved");
        assert!(
            polls.load(Ordering::SeqCst) >= 2,
            "{kind}: the primitive never yielded"
        );
        if kind != "join_all" {
            assert_eq!(
                outputs.load(Ordering::SeqCst),
                OTHERS,
                "{kind}: the other futures were starved"
            );
        }
        world
            .check_violations()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let world = Arc::try_unwrap(world).expect("the consumer is gone");
        world
            .check_all_dropped_once()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

/// Shrunk counterexamples of the properties above, kept as fixed cases. The properties found
/// them against deliberately broken copies of the library (mutants of the panic handling: an
/// arena that frees a slot only after the value's `Drop` returned, an arena `clear` that stops
/// at the first panicking `Drop`, a join that does not drop the others when one panics, an
/// ordered buffer that does not skip the place of a future that panicked).
mod regressions {
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
