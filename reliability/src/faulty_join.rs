//! The fault driver of the joins: a random program of operations (complete or wake future i
//! from thread t, poll the join until it settles or once, cancel it) run against `join_all` or
//! `try_join_all` of futures that may panic, checking that a panic of a future's poll leaves
//! the join terminated with everything dropped, that a panic of a drop leaves it to go on, and
//! that a result is the model's (see `tests/faults.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use futures_core::future::FusedFuture;
use pinfold_join::{JoinAll, TryJoinAll};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::ctl::{Ctl, Out, Outcome, Spec, World};
use crate::exec::Exec;
use crate::fault::{
    FaultPanic, Payload, Site, as_fault, catch, check_panic, drop_outputs, expecting_panics, less,
    panic_message,
};
use crate::faulty::spec;
use crate::program::{JoinOp, WAKE_THREADS, join_op};
use crate::sizes::program_ops;
use crate::wake_threads::WakeThreads;

/// A join of futures made up front with these specs, and a program.
pub fn join_program() -> impl Strategy<Value = (Vec<Spec>, Vec<JoinOp>)> {
    (
        prop::collection::vec(spec(), 0..=24),
        prop::collection::vec(join_op(0.9, 1), 1..=program_ops()),
    )
}

/// `join_all` or `try_join_all`, as the program drives it.
pub trait Join {
    /// The join's `poll`, its outputs (`join_all`'s always `Ok`).
    fn poll_join(&mut self, cx: &mut Context<'_>) -> Poll<Result<Vec<Out>, Out>>;
    /// Whether it completed or was terminated by a panic.
    fn is_terminated(&self) -> bool;
    /// Whether its futures may fail (`try_join_all`).
    fn fallible(&self) -> bool;
}

impl Join for JoinAll<Ctl<Out>> {
    fn poll_join(&mut self, cx: &mut Context<'_>) -> Poll<Result<Vec<Out>, Out>> {
        Pin::new(self).poll(cx).map(Ok)
    }
    fn is_terminated(&self) -> bool {
        FusedFuture::is_terminated(self)
    }
    fn fallible(&self) -> bool {
        false
    }
}

impl Join for TryJoinAll<Ctl<Result<Out, Out>>> {
    fn poll_join(&mut self, cx: &mut Context<'_>) -> Poll<Result<Vec<Out>, Out>> {
        Pin::new(self).poll(cx)
    }
    fn is_terminated(&self) -> bool {
        FusedFuture::is_terminated(self)
    }
    fn fallible(&self) -> bool {
        true
    }
}

/// Runs `program` against the join `make` makes of futures with `specs`, then a final run and a
/// cancel: after every operation, the panic accounting; after a panic of a future's poll, the
/// join is terminated with every future and kept output dropped, and polling it again panics;
/// after a panic of a drop, it is not terminated and goes on; its result, if any, is checked
/// against the model.
pub fn join_case(
    make: impl FnOnce(&mut World, &[Spec]) -> Box<dyn Join>,
    specs: &[Spec],
    program: &[JoinOp],
) -> Result<(), TestCaseError> {
    let mut world = World::new("join faults");
    let mut join = Some(make(&mut world, specs));
    let fallible = join.as_ref().is_some_and(|join| join.fallible());
    let mut exec = Exec::new();
    exec.mark_dirty();
    let threads = WakeThreads::new(WAKE_THREADS);
    let n = specs.len();
    let all: Vec<u32> = (0..n as u32).collect();
    let mut errors_sent = Vec::new();

    for (step, op) in program
        .iter()
        .chain([&JoinOp::Run, &JoinOp::Cancel])
        .enumerate()
    {
        let at = |e: TestCaseError| TestCaseError::fail(format!("at op {step} ({op:?}): {e}"));
        let mut raised_here = Vec::new();
        let mut finished = false;
        let caught: Option<Payload> = match *op {
            JoinOp::Complete { pick, ok, via } => {
                let running: Vec<u32> = world.running();
                if !running.is_empty() {
                    let ctl = world.handle(running[pick.index(running.len())]).clone();
                    let outcome = if ok || !fallible {
                        Outcome::Ok
                    } else {
                        errors_sent.push(ctl.id());
                        Outcome::Err
                    };
                    threads.run_via(via, move || {
                        ctl.complete(outcome);
                    });
                }
                None
            }
            JoinOp::Wake { pick, via } => {
                if n > 0 {
                    let ctl = world.handle(pick.index(n) as u32).clone();
                    threads.run_via(via, move || ctl.wake());
                }
                None
            }
            JoinOp::Run | JoinOp::PollOnce => match join.as_mut() {
                Some(running) => {
                    let world = &world;
                    let mut output = None;
                    let mut poll = |cx: &mut Context<'_>| {
                        if output.is_some() {
                            return Poll::Ready(None);
                        }
                        world.begin_poll_call();
                        running.poll_join(cx).map(|joined| {
                            output = Some(joined);
                            Some(())
                        })
                    };
                    let caught = if matches!(op, JoinOp::PollOnce) {
                        catch(|| exec.poll_once(&mut poll).is_ready()).err()
                    } else {
                        match catch(|| exec.run(256 + 16 * n, &mut poll)) {
                            Ok(Ok(_)) => None,
                            Ok(Err(livelock)) => {
                                return Err(at(TestCaseError::fail(format!(
                                    "the join never settles: {livelock:?}"
                                ))));
                            }
                            Err(payload) => Some(payload),
                        }
                    };
                    match (output, &caught) {
                        (Some(joined), _) => {
                            finished = true;
                            raised_here = check_joined(world, joined, &errors_sent).map_err(at)?;
                        }
                        (None, Some(payload))
                            if as_fault(&**payload).is_ok_and(|fault| fault.site != Site::Poll) =>
                        {
                            // A drop's panic (a future's or a kept output's): the join is left
                            // as it was, and polling it again goes on.
                            prop_assert!(
                                !running.is_terminated(),
                                "terminated after a panic of a drop"
                            );
                        }
                        (None, Some(_)) => {
                            // A future's poll panicked: everything is dropped already.
                            prop_assert!(running.is_terminated(), "not terminated after a panic");
                            world.check_dropped_once(all.clone()).map_err(|e| {
                                at(TestCaseError::fail(format!("after a panic: {e}")))
                            })?;
                            let again = catch(|| {
                                expecting_panics(|| {
                                    drop(running.poll_join(&mut Context::from_waker(Waker::noop())))
                                })
                            });
                            let message = again.err().map(|p| panic_message(&*p).to_owned());
                            prop_assert!(
                                message
                                    .as_deref()
                                    .is_some_and(|m| m.contains("polled after completion")),
                                "polling again after a panic: {message:?}"
                            );
                            finished = true;
                        }
                        (None, None) if matches!(op, JoinOp::Run) => {
                            // Settled: every completed future finished and keeps its output.
                            for ctl in world.handles() {
                                if ctl.outcome().is_some() {
                                    prop_assert_eq!(
                                        (ctl.drops(), ctl.made(), ctl.output_drops()),
                                        (1, 1, 0),
                                        "completed future {} not finished once settled",
                                        ctl.id()
                                    );
                                }
                            }
                        }
                        (None, None) => {}
                    }
                    caught
                }
                None => None,
            },
            JoinOp::Cancel => {
                let old = join.take();
                let caught = catch(move || drop(old)).err();
                world
                    .check_dropped_once(all.clone())
                    .map_err(|e| at(TestCaseError::fail(e)))?;
                caught
            }
        };
        if finished {
            join = None;
        }
        let fired = less(world.take_fired(), &raised_here);
        check_panic(&format!("{op:?}"), caught.as_ref(), &fired).map_err(at)?;
        world.check_violations().map_err(TestCaseError::fail)?;
    }
    world.check_all_dropped_once().map_err(TestCaseError::fail)
}

/// Checks a join's result against the model; drops it. Returns the panics its outputs raised
/// in their drops.
fn check_joined(
    world: &World,
    joined: Result<Vec<Out>, Out>,
    errors_sent: &[u32],
) -> Result<Vec<FaultPanic>, TestCaseError> {
    match joined {
        Ok(outputs) => {
            let ids: Vec<u32> = outputs.iter().map(Out::id).collect();
            prop_assert_eq!(ids, (0..world.len() as u32).collect::<Vec<_>>());
            for ctl in world.handles() {
                prop_assert_eq!((ctl.drops(), ctl.made()), (1, 1));
            }
            drop_outputs(outputs)
        }
        Err(err) => {
            prop_assert!(
                err.failed() && errors_sent.contains(&err.id()),
                "error {err:?} was not sent"
            );
            for ctl in world.handles() {
                let held = usize::from(ctl.id() == err.id());
                prop_assert_eq!(
                    (ctl.drops(), ctl.made() - ctl.output_drops()),
                    (1, held),
                    "future {} or its output not dropped when the error came",
                    ctl.id()
                );
            }
            drop_outputs([err])
        }
    }
}

/// pinfold's `join_all` of futures with `specs`.
pub fn join_all_of(world: &mut World, specs: &[Spec]) -> Box<dyn Join> {
    let futures: Vec<Ctl<Out>> = specs.iter().map(|&spec| world.ctl(spec).0).collect();
    Box::new(pinfold_join::join_all(futures))
}

/// pinfold's `try_join_all` of futures with `specs`.
pub fn try_join_all_of(world: &mut World, specs: &[Spec]) -> Box<dyn Join> {
    let futures: Vec<Ctl<Result<Out, Out>>> = specs
        .iter()
        .map(|&spec| world.fallible_ctl(spec).0)
        .collect();
    Box::new(pinfold_join::try_join_all(futures))
}
