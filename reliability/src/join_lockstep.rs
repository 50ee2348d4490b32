//! The differential driver of the joins: a random program of operations (complete or wake
//! future i from thread t, poll the join until it settles or once, cancel it) run against
//! pinfold's `join_all` and `futures-util`'s side by side, and against a model of
//! `try_join_all`'s documented semantics (see `tests/differential.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::ctl::{Ctl, Out, Outcome, Spec, World};
use crate::exec::Exec;
use crate::lockstep::poll_limit;
use crate::program::{JoinOp, WAKE_THREADS, join_op};
use crate::sizes::program_ops;
use crate::wake_threads::WakeThreads;

/// How a join's inputs are handed to pinfold: the iterator's size hint decides how it stores
/// them.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// A `Vec`: an exact size hint.
    Exact,
    /// `filter`: no exact size hint (collected first).
    Unsized,
    /// An iterator whose exact size hint claims half the futures it yields (a buggy iterator:
    /// the rest go to a second arena).
    Lying,
}

/// An iterator that claims, in an exact size hint, `claim` items, whatever it yields.
#[derive(Debug)]
struct Lying<I> {
    inner: I,
    claim: usize,
}

impl<I: Iterator> Iterator for Lying<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claim, Some(self.claim))
    }
}

fn pinfold_join_all<F: Future>(futures: Vec<F>, input: Input) -> pinfold_join::JoinAll<F> {
    match input {
        Input::Exact => pinfold_join::join_all(futures),
        Input::Unsized => pinfold_join::join_all(futures.into_iter().filter(|_| true)),
        Input::Lying => pinfold_join::join_all(Lying {
            claim: futures.len() / 2,
            inner: futures.into_iter(),
        }),
    }
}

fn pinfold_try_join_all<F, T, E>(futures: Vec<F>, input: Input) -> pinfold_join::TryJoinAll<F>
where
    F: Future<Output = Result<T, E>>,
{
    match input {
        Input::Exact => pinfold_join::try_join_all(futures),
        Input::Unsized => pinfold_join::try_join_all(futures.into_iter().filter(|_| true)),
        Input::Lying => pinfold_join::try_join_all(Lying {
            claim: futures.len() / 2,
            inner: futures.into_iter(),
        }),
    }
}

/// A join of futures: the inputs (0..n futures, some of which wake themselves), how they are
/// handed over, and a program.
pub fn join_program(errors: f64) -> impl Strategy<Value = (Vec<u8>, Input, Vec<JoinOp>)> {
    (
        prop::collection::vec(prop_oneof![4 => Just(0u8), 1 => 1..4u8], 0..=40),
        prop_oneof![
            3 => Just(Input::Exact),
            1 => Just(Input::Unsized),
            1 => Just(Input::Lying),
        ],
        prop::collection::vec(join_op(1.0 - errors, 2), 1..=program_ops()),
    )
}

/// A join in progress on one side, polled by its own executor.
struct JoinSide<J: Future> {
    name: &'static str,
    world: World,
    exec: Exec,
    join: Option<Pin<Box<J>>>,
    /// The join's output, once it completed.
    output: Option<J::Output>,
    pinfold: bool,
}

impl<J: Future> JoinSide<J> {
    /// Polls the join, once or until it settles; records its output if it completes.
    fn poll(&mut self, once: bool) -> Result<(), TestCaseError> {
        let limit = poll_limit(&self.world);
        let Some(join) = self.join.as_mut() else {
            return Ok(());
        };
        if self.output.is_some() {
            return Ok(());
        }
        let world = &self.world;
        let pinfold = self.pinfold;
        let mut poll = once_ready(|cx: &mut Context<'_>| {
            if pinfold {
                world.begin_poll_call();
            }
            join.as_mut().poll(cx)
        });
        let output = if once {
            match self.exec.poll_once(&mut poll) {
                Poll::Ready(output) => output,
                Poll::Pending => None,
            }
        } else {
            let run = self.exec.run(limit, poll).map_err(|livelock| {
                TestCaseError::fail(format!(
                    "{}: the join never settles: {livelock:?}",
                    self.name
                ))
            })?;
            run.outputs.into_iter().next()
        };
        self.output = output;
        Ok(())
    }

    fn check_always(&self, inputs: usize) -> Result<(), TestCaseError> {
        self.world.check_violations().map_err(TestCaseError::fail)?;
        if self.pinfold {
            prop_assert!(
                self.world.polls() <= join_poll_bound(inputs, self.world.wakes()),
                "{}: {} polls of futures for {} inputs and {} wakes",
                self.name,
                self.world.polls(),
                inputs,
                self.world.wakes()
            );
        }
        Ok(())
    }
}

/// The most polls pinfold's joins make of `inputs` futures that were woken `wakes` times in
/// all (the crate docs, *Polls*): each future once in each of the first `P + 1` polls of the
/// join (`P` = 2 up to 32 futures, 1 above), then once per wake.
fn join_poll_bound(inputs: usize, wakes: usize) -> usize {
    let first_polls = if inputs <= 32 { 3 } else { 2 };
    first_polls * inputs + wakes
}

/// A future's `poll` as a stream's `poll_next` of one item: `Ready(None)` after the output, so
/// that an [`Exec`] stops there and never polls the future after completion.
fn once_ready<T>(
    mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> impl FnMut(&mut Context<'_>) -> Poll<Option<T>> {
    let mut done = false;
    move |cx| {
        if done {
            return Poll::Ready(None);
        }
        let polled = poll(cx);
        done = polled.is_ready();
        polled.map(Some)
    }
}

/// The ids of some outputs, in order.
fn ids<'a>(outs: impl IntoIterator<Item = &'a Out>) -> Vec<u32> {
    outs.into_iter().map(Out::id).collect()
}

/// Runs `program` against pinfold's `join_all` and `futures-util`'s, side by side, over futures
/// that wake themselves `yields` times once completed, handed to pinfold as `input` says:
/// their outputs must be the same `Vec`, in input order, given once every future completed;
/// each future must be dropped once, and pinfold must poll no more than the crate documents.
pub fn join_all_case(yields: &[u8], input: Input, program: &[JoinOp]) -> Result<(), TestCaseError> {
    let mut ours = JoinSide {
        name: "join_all",
        world: World::new("join_all"),
        exec: Exec::new(),
        join: None,
        output: None,
        pinfold: true,
    };
    let mut theirs = JoinSide {
        name: "futures-util join_all",
        world: World::new("futures-util join_all"),
        exec: Exec::new(),
        join: None,
        output: None,
        pinfold: false,
    };
    let spec = |&yields: &u8| Spec {
        yields: u32::from(yields),
        ..Spec::default()
    };
    let our_futures: Vec<Ctl<Out>> = yields.iter().map(|y| ours.world.ctl(spec(y)).0).collect();
    let their_futures: Vec<Ctl<Out>> = yields.iter().map(|y| theirs.world.ctl(spec(y)).0).collect();
    ours.join = Some(Box::pin(pinfold_join_all(our_futures, input)));
    theirs.join = Some(Box::pin(futures_util::future::join_all(their_futures)));
    ours.exec.mark_dirty();
    theirs.exec.mark_dirty();
    let threads = WakeThreads::new(WAKE_THREADS);
    let n = yields.len();

    for (step, op) in program.iter().chain([&JoinOp::Run]).enumerate() {
        let at = |e: String| TestCaseError::fail(format!("at op {step} ({op:?}): {e}"));
        match *op {
            JoinOp::Complete { pick, ok, via } => {
                let running: Vec<u32> = ours.world.running();
                if !running.is_empty() {
                    let id = running[pick.index(running.len())];
                    let (a, b) = (
                        ours.world.handle(id).clone(),
                        theirs.world.handle(id).clone(),
                    );
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    threads.run_via(via, move || {
                        a.complete(outcome);
                        b.complete(outcome);
                    });
                }
            }
            JoinOp::Wake { pick, via } => {
                if n > 0 {
                    let id = pick.index(n) as u32;
                    let (a, b) = (
                        ours.world.handle(id).clone(),
                        theirs.world.handle(id).clone(),
                    );
                    threads.run_via(via, move || {
                        a.wake();
                        b.wake();
                    });
                }
            }
            JoinOp::Run | JoinOp::PollOnce => {
                let once = matches!(op, JoinOp::PollOnce);
                ours.poll(once)?;
                theirs.poll(once)?;
                if matches!(op, JoinOp::Run) && ours.join.is_some() {
                    let all_done = ours
                        .world
                        .handles()
                        .iter()
                        .all(|ctl| ctl.outcome().is_some());
                    prop_assert_eq!(
                        ours.output.is_some(),
                        all_done,
                        "join_all completed (left) when every future had (right)"
                    );
                    prop_assert_eq!(
                        ours.output.as_ref().map(ids),
                        theirs.output.as_ref().map(ids),
                        "pinfold (left) and futures-util (right) differ"
                    );
                    if let Some(outputs) = &ours.output {
                        prop_assert_eq!(ids(outputs), (0..n as u32).collect::<Vec<_>>());
                        // Every future was dropped when it finished; the outputs are ours now.
                        for ctl in ours.world.handles() {
                            prop_assert_eq!((ctl.drops(), ctl.made()), (1, 1));
                        }
                    }
                }
            }
            JoinOp::Cancel => {
                ours.join = None;
                theirs.join = None;
            }
        }
        ours.check_always(n).map_err(|e| at(e.to_string()))?;
        theirs.check_always(n).map_err(|e| at(e.to_string()))?;
    }
    drop((ours.join.take(), ours.output.take()));
    drop((theirs.join.take(), theirs.output.take()));
    ours.world
        .check_all_dropped_once()
        .map_err(TestCaseError::fail)?;
    theirs
        .world
        .check_all_dropped_once()
        .map_err(TestCaseError::fail)?;
    Ok(())
}

/// `try_join_all` against a model of its documented semantics: it completes with `Ok` of every
/// output in input order once all are `Ok`, and with the first error *in time* as soon as one
/// comes, having dropped every other future and every kept output. `futures-util` returns an
/// error only once every earlier future finished (above 30 futures), so it is compared on the
/// `Ok` results only; every error result is checked against the model.
pub fn try_join_all_case(
    yields: &[u8],
    input: Input,
    program: &[JoinOp],
) -> Result<(), TestCaseError> {
    type Joined = Result<Vec<Out>, Out>;
    let mut world = World::new("try_join_all");
    let mut their_world = World::new("futures-util try_join_all");
    let spec = |&yields: &u8| Spec {
        yields: u32::from(yields),
        ..Spec::default()
    };
    let ours: Vec<_> = yields
        .iter()
        .map(|y| world.fallible_ctl(spec(y)).0)
        .collect();
    let theirs: Vec<_> = yields
        .iter()
        .map(|y| their_world.fallible_ctl(spec(y)).0)
        .collect();
    let mut our_join = Some(Box::pin(pinfold_try_join_all(ours, input)));
    let mut their_join = Some(Box::pin(futures_util::future::try_join_all(theirs)));
    let (mut exec, mut their_exec) = (Exec::new(), Exec::new());
    exec.mark_dirty();
    their_exec.mark_dirty();
    let mut our_result: Option<Joined> = None;
    let mut their_result: Option<Joined> = None;
    let threads = WakeThreads::new(WAKE_THREADS);
    let n = yields.len();
    // Errors completed while the join was running and not cancelled, in time order.
    let mut errors_sent: Vec<u32> = Vec::new();

    for (step, op) in program.iter().chain([&JoinOp::Run]).enumerate() {
        let at = |e: String| TestCaseError::fail(format!("at op {step} ({op:?}): {e}"));
        match *op {
            JoinOp::Complete { pick, ok, via } => {
                let running: Vec<u32> = world.running();
                if !running.is_empty() {
                    let id = running[pick.index(running.len())];
                    let (a, b) = (world.handle(id).clone(), their_world.handle(id).clone());
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    if !ok && our_join.is_some() && our_result.is_none() {
                        errors_sent.push(id);
                    }
                    threads.run_via(via, move || {
                        a.complete(outcome);
                        b.complete(outcome);
                    });
                }
            }
            JoinOp::Wake { pick, via } => {
                if n > 0 {
                    let id = pick.index(n) as u32;
                    let (a, b) = (world.handle(id).clone(), their_world.handle(id).clone());
                    threads.run_via(via, move || {
                        a.wake();
                        b.wake();
                    });
                }
            }
            JoinOp::Run | JoinOp::PollOnce => {
                let once = matches!(op, JoinOp::PollOnce);
                if let (Some(join), None) = (our_join.as_mut(), &our_result) {
                    let mut poll = once_ready(|cx: &mut Context<'_>| {
                        world.begin_poll_call();
                        join.as_mut().poll(cx)
                    });
                    our_result = if once {
                        match exec.poll_once(&mut poll) {
                            Poll::Ready(result) => result,
                            Poll::Pending => None,
                        }
                    } else {
                        exec.run(poll_limit(&world), poll)
                            .map_err(|l| at(format!("try_join_all never settles: {l:?}")))?
                            .outputs
                            .pop()
                    };
                    if let Some(Err(err)) = &our_result {
                        // The error came first in time: every other future and every `Ok`
                        // kept so far is dropped already, before the join itself is.
                        prop_assert!(
                            errors_sent.contains(&err.id()),
                            "error of future {} returned, errors sent: {:?}",
                            err.id(),
                            errors_sent
                        );
                        for ctl in world.handles() {
                            let output_held = usize::from(ctl.id() == err.id());
                            prop_assert_eq!(
                                (ctl.drops(), ctl.made() - ctl.output_drops()),
                                (1, output_held),
                                "future {} not dropped (or its output kept) after the error",
                                ctl.id()
                            );
                        }
                    }
                }
                if let (Some(join), None) = (their_join.as_mut(), &their_result) {
                    let mut poll = once_ready(|cx: &mut Context<'_>| join.as_mut().poll(cx));
                    their_result = if once {
                        match their_exec.poll_once(&mut poll) {
                            Poll::Ready(result) => result,
                            Poll::Pending => None,
                        }
                    } else {
                        their_exec
                            .run(poll_limit(&their_world), poll)
                            .map_err(|l| at(format!("futures-util never settles: {l:?}")))?
                            .outputs
                            .pop()
                    };
                }
                if matches!(op, JoinOp::Run) && our_join.is_some() {
                    let all_ok = world
                        .handles()
                        .iter()
                        .all(|ctl| ctl.outcome() == Some(Outcome::Ok));
                    match &our_result {
                        None => {
                            prop_assert!(
                                errors_sent.is_empty() && !all_ok,
                                "try_join_all still pending with errors {errors_sent:?} sent \
                                 (or every future Ok)"
                            );
                        }
                        Some(Ok(outputs)) => {
                            prop_assert!(errors_sent.is_empty() && all_ok);
                            prop_assert_eq!(ids(outputs), (0..n as u32).collect::<Vec<_>>());
                            let theirs = their_result
                                .as_ref()
                                .map(|r| r.as_ref().map(ids).map_err(|err| err.id()));
                            prop_assert_eq!(
                                theirs,
                                Some(Ok::<_, u32>(ids(outputs))),
                                "futures-util (left) differs"
                            );
                        }
                        Some(Err(_)) => {
                            // Checked against the model above.
                        }
                    }
                }
            }
            JoinOp::Cancel => {
                our_join = None;
                their_join = None;
            }
        }
        world.check_violations().map_err(at)?;
        their_world.check_violations().map_err(at)?;
        prop_assert!(
            world.polls() <= join_poll_bound(n, world.wakes()),
            "try_join_all: {} polls of futures for {} inputs and {} wakes",
            world.polls(),
            n,
            world.wakes()
        );
    }
    drop((our_join, our_result));
    drop((their_join, their_result));
    world
        .check_all_dropped_once()
        .map_err(TestCaseError::fail)?;
    their_world
        .check_all_dropped_once()
        .map_err(TestCaseError::fail)?;
    Ok(())
}
