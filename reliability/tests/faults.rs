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

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use futures_core::Stream;
use futures_core::future::FusedFuture;
use futures_util::stream;
use pinfold_buffer::BufferExt;
use pinfold_join::{JoinAll, TryJoinAll};
use pinfold_reliability::ctl::{Ctl, CtlHandle, Faults, Out, Outcome, Spec, World};
use pinfold_reliability::exec::Exec;
use pinfold_reliability::fault::{
    FaultPanic, Site, as_fault, expecting_panics, panic_message, quiet_fault_panics,
};
use pinfold_reliability::program::{Pick, Via};
use pinfold_reliability::sizes::{program_ops, proptest_cases, time_limit};
use pinfold_reliability::subject::{Buffer, Subject};
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};

/// Threads a program may wake from.
const WAKE_THREADS: usize = 3;

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

type Payload = Box<dyn Any + Send>;

fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Payload> {
    panic::catch_unwind(AssertUnwindSafe(f))
}

fn via() -> impl Strategy<Value = Via> {
    prop_oneof![
        2 => Just(Via::Here),
        1 => (0..WAKE_THREADS as u8).prop_map(Via::Thread),
    ]
}

fn on(threads: &WakeThreads, via: Via, job: impl FnOnce() + Send + 'static) {
    match via {
        Via::Here => job(),
        Via::Thread(t) => threads.run_on(usize::from(t), job),
    }
}

/// Faults at random points: a panic in the first, second or third poll; in `Drop`; in the
/// output's `Drop`.
fn faults() -> impl Strategy<Value = Faults> {
    (
        prop::option::weighted(0.2, 1..=3u32),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(poll_panic_at, drop_panics, output_drop_panics)| Faults {
            poll_panic_at,
            drop_panics,
            output_drop_panics,
        })
}

fn spec() -> impl Strategy<Value = Spec> {
    (faults(), prop_oneof![4 => Just(0u32), 1 => 1..3u32])
        .prop_map(|(faults, yields)| Spec { yields, faults })
}

/// Checks what reached the caller of one operation against the injected panics raised during
/// it (`fired`, less those the test raised itself dropping outputs).
fn check_panic(
    what: &str,
    caught: Option<&Payload>,
    fired: &[FaultPanic],
) -> Result<(), TestCaseError> {
    match caught {
        Some(payload) => {
            let fault = as_fault(&**payload).map_err(|message| {
                TestCaseError::fail(format!(
                    "{what}: a panic that is not an injected one reached the caller: {message}"
                ))
            })?;
            prop_assert!(
                fired.contains(&fault),
                "{what}: the panic {fault:?} reached the caller, but the panics raised were \
                 {fired:?}"
            );
        }
        None => prop_assert!(
            fired.is_empty(),
            "{what}: injected panics {fired:?} were swallowed"
        ),
    }
    Ok(())
}

/// Drops outputs one by one, catching the injected panics of their `Drop`; returns those.
fn drop_outputs(outputs: impl IntoIterator<Item = Out>) -> Result<Vec<FaultPanic>, TestCaseError> {
    let mut raised = Vec::new();
    for out in outputs {
        let id = out.id();
        if let Err(payload) = catch(move || drop(out)) {
            let fault = as_fault(&*payload).map_err(TestCaseError::fail)?;
            prop_assert_eq!(
                fault,
                FaultPanic {
                    id,
                    site: Site::OutputDrop
                }
            );
            raised.push(fault);
        }
    }
    Ok(raised)
}

/// `fired` less one occurrence of each of `expected`.
fn less(mut fired: Vec<FaultPanic>, expected: &[FaultPanic]) -> Vec<FaultPanic> {
    for fault in expected {
        if let Some(i) = fired.iter().position(|f| f == fault) {
            fired.remove(i);
        }
    }
    fired
}

// ---------------------------------------------------------------------------------------------
// Sets and stream buffers
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    /// Push a future with these faults (send it into the buffer's source).
    Push { spec: Spec, ready: bool },
    /// Complete the `pick`-th future not yet completed, and wake it.
    Complete { pick: Pick, via: Via },
    /// Wake the `pick`-th future made so far.
    Wake { pick: Pick, via: Via },
    /// Poll until settled (or a panic).
    Run,
    /// Poll once.
    PollOnce,
    /// `clear()` a set; end a buffer's source.
    Clear,
    /// Drop the whole set (buffer and source), then go on with a new one.
    DropAll,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (spec(), prop::bool::weighted(0.25)).prop_map(|(spec, ready)| Op::Push { spec, ready }),
        8 => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| Op::Complete { pick, via }),
        1 => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| Op::Wake { pick, via }),
        5 => Just(Op::Run),
        2 => Just(Op::PollOnce),
        1 => Just(Op::Clear),
        1 => Just(Op::DropAll),
    ]
}

fn program() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=program_ops())
}

/// What the programs run against.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Bounded(usize),
    Growable,
    UnorderedBuffer(usize),
    OrderedBuffer(usize, Option<usize>),
}

impl Kind {
    fn make(self) -> Box<dyn Subject> {
        match self {
            Kind::Bounded(capacity) => {
                Box::new(pinfold_bounded::FuturesUnorderedBounded::new(capacity))
            }
            Kind::Growable => Box::new(pinfold_unordered::FuturesUnordered::new()),
            Kind::UnorderedBuffer(concurrency) => {
                Buffer::boxed(move |source| source.unordered_buffer(concurrency))
            }
            Kind::OrderedBuffer(concurrency, window) => Buffer::boxed(move |source| match window {
                Some(window) => source.ordered_buffer(concurrency).window(window),
                None => source.ordered_buffer(concurrency),
            }),
        }
    }

    fn ordered(self) -> bool {
        matches!(self, Kind::OrderedBuffer(..))
    }

    /// Futures that may run at once, futures that may be running or held.
    fn bounds(self) -> Option<(usize, Option<usize>)> {
        match self {
            Kind::UnorderedBuffer(concurrency) => Some((concurrency, None)),
            Kind::OrderedBuffer(concurrency, window) => Some((concurrency, window)),
            _ => None,
        }
    }
}

/// A program in progress against one primitive.
struct Faulty {
    kind: Kind,
    world: World,
    exec: Exec,
    subject: Box<dyn Subject>,
    /// Futures pushed into the current set, in order.
    members: Vec<u32>,
    /// Outputs of the current set, in the order they came.
    delivered: Vec<u32>,
    /// Outputs taken and not yet dropped.
    taken: Vec<Out>,
    threads: WakeThreads,
}

impl Faulty {
    fn new(kind: Kind) -> Self {
        let mut exec = Exec::new();
        exec.mark_dirty();
        Self {
            kind,
            world: World::new("faults"),
            exec,
            subject: kind.make(),
            members: Vec::new(),
            delivered: Vec::new(),
            taken: Vec::new(),
            threads: WakeThreads::new(WAKE_THREADS),
        }
    }

    fn run(mut self, program: &[Op]) -> Result<(), TestCaseError> {
        for (step, op) in program.iter().chain([&Op::Run, &Op::DropAll]).enumerate() {
            self.apply(op).map_err(|e| {
                TestCaseError::fail(format!("{:?}, at op {step} ({op:?}): {e}", self.kind))
            })?;
        }
        self.world
            .check_all_dropped_once()
            .map_err(TestCaseError::fail)
    }

    fn pulled(&self) -> usize {
        match self.subject.source() {
            Some(source) => source.pulled(),
            None => self.members.len(),
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let mut settled = false;
        let caught: Option<Payload> = match *op {
            Op::Push { spec, ready } => {
                let (fut, handle) = self.world.ctl(spec);
                if ready {
                    handle.complete(Outcome::Ok);
                }
                match self.subject.push(fut) {
                    Ok(()) => {
                        self.members.push(handle.id());
                        self.exec.mark_dirty();
                        None
                    }
                    // Refused by a full set: drop it (its `Drop` may panic).
                    Err(fut) => catch(move || drop(fut)).err(),
                }
            }
            Op::Complete { pick, via } => {
                let running: Vec<CtlHandle> = self
                    .world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .cloned()
                    .collect();
                if !running.is_empty() {
                    let ctl = running[pick.index(running.len())].clone();
                    on(&self.threads, via, move || {
                        ctl.complete(Outcome::Ok);
                    });
                }
                None
            }
            Op::Wake { pick, via } => {
                if !self.world.is_empty() {
                    let ctl = self
                        .world
                        .handle(pick.index(self.world.len()) as u32)
                        .clone();
                    on(&self.threads, via, move || ctl.wake());
                }
                None
            }
            Op::Run | Op::PollOnce => {
                let limit = 256 + 16 * self.world.len();
                let Self {
                    world,
                    exec,
                    subject,
                    delivered,
                    taken,
                    ..
                } = self;
                let mut poll = |cx: &mut Context<'_>| {
                    world.begin_poll_call();
                    match subject.poll_next(cx) {
                        Poll::Ready(Some(out)) => {
                            delivered.push(out.id());
                            taken.push(out);
                            Poll::Ready(Some(()))
                        }
                        Poll::Ready(None) => Poll::Ready(None),
                        Poll::Pending => Poll::Pending,
                    }
                };
                if matches!(op, Op::PollOnce) {
                    catch(|| exec.poll_once(&mut poll).is_ready()).err()
                } else {
                    match catch(|| exec.run(limit, &mut poll)) {
                        Ok(Ok(_)) => {
                            settled = true;
                            None
                        }
                        Ok(Err(livelock)) => {
                            return Err(TestCaseError::fail(format!(
                                "the task never settles: {livelock:?}"
                            )));
                        }
                        Err(payload) => Some(payload),
                    }
                }
            }
            Op::Clear => {
                let caught = catch(|| self.subject.clear()).err();
                if let Kind::Bounded(_) = self.kind {
                    // The arena drops every value even when one's `Drop` panics.
                    for &id in &self.members {
                        let drops = self.world.handle(id).drops();
                        prop_assert_eq!(drops, 1, "future {} not dropped by clear()", id);
                    }
                }
                if self.subject.len().is_some() {
                    // The futures not dropped stay in a growable set whose `Drop` panicked;
                    // they are still members.
                    let world = &self.world;
                    self.members.retain(|&id| world.handle(id).drops() == 0);
                    self.delivered.clear();
                }
                caught
            }
            Op::DropAll => {
                let old = std::mem::replace(&mut self.subject, self.kind.make());
                let caught = catch(move || drop(old)).err();
                let members = std::mem::take(&mut self.members);
                self.delivered.clear();
                self.exec.mark_dirty();
                // Checked after the panic accounting below, with the members of the old set.
                self.after(op, caught)?;
                return self
                    .world
                    .check_dropped_once(members)
                    .map_err(TestCaseError::fail);
            }
        };
        self.after(op, caught)?;
        if settled {
            self.check_settled()?;
        }
        Ok(())
    }

    /// The panic accounting and the invariants after every operation.
    fn after(&mut self, op: &Op, caught: Option<Payload>) -> Result<(), TestCaseError> {
        let raised_here = drop_outputs(self.taken.drain(..))?;
        let fired = less(self.world.take_fired(), &raised_here);
        check_panic(&format!("{op:?}"), caught.as_ref(), &fired)?;
        self.world.check_violations().map_err(TestCaseError::fail)?;
        if let Some(len) = self.subject.len() {
            let live = self
                .members
                .iter()
                .filter(|&&id| self.world.handle(id).drops() == 0)
                .count();
            prop_assert_eq!(len, live, "len() is not the number of futures not dropped");
        }
        if let Some((concurrency, window)) = self.kind.bounds() {
            let pulled = &self.members[..self.pulled()];
            let running = pulled
                .iter()
                .filter(|&&id| self.world.handle(id).drops() == 0)
                .count();
            prop_assert!(running <= concurrency, "{running} futures run at once");
            if let Some(window) = window {
                // Pulled and not yielded, less the places of futures lost to a panic.
                let lost = pulled
                    .iter()
                    .filter(|&&id| self.world.handle(id).lost())
                    .count();
                let in_window = pulled.len() - self.delivered.len() - lost;
                prop_assert!(in_window <= window, "{in_window} running or held");
            }
        }
        Ok(())
    }

    /// Once the task settled: every completed future that did not panic gave its output.
    fn check_settled(&self) -> Result<(), TestCaseError> {
        let handle = |id: &u32| self.world.handle(*id);
        for id in &self.members[..self.pulled()] {
            let ctl = handle(id);
            prop_assert!(
                ctl.drops() == 1 || ctl.outcome().is_none(),
                "future {id} was completed, but is still in the set once it settled \
                 ({ctl:?})"
            );
        }
        let gave = |id: &u32| handle(id).made() == 1 && !handle(id).fired(Site::Drop);
        let expected: Vec<u32> = if self.kind.ordered() {
            self.members
                .iter()
                .copied()
                .take_while(|id| handle(id).drops() == 1)
                .filter(gave)
                .collect()
        } else {
            let mut expected: Vec<u32> = self
                .members
                .iter()
                .copied()
                .filter(|id| handle(id).drops() == 1)
                .filter(gave)
                .collect();
            expected.sort_unstable();
            expected
        };
        let mut got = self.delivered.clone();
        if !self.kind.ordered() {
            got.sort_unstable();
        }
        prop_assert_eq!(got, expected, "outputs once settled");
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Joins
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum JoinOp {
    Complete { pick: Pick, ok: bool, via: Via },
    Wake { pick: Pick, via: Via },
    Run,
    PollOnce,
    Cancel,
}

fn join_op() -> impl Strategy<Value = JoinOp> {
    prop_oneof![
        8 => (any::<u64>().prop_map(Pick), prop::bool::weighted(0.9), via())
            .prop_map(|(pick, ok, via)| JoinOp::Complete { pick, ok, via }),
        1 => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| JoinOp::Wake { pick, via }),
        4 => Just(JoinOp::Run),
        1 => Just(JoinOp::PollOnce),
        1 => Just(JoinOp::Cancel),
    ]
}

fn join_program() -> impl Strategy<Value = (Vec<Spec>, Vec<JoinOp>)> {
    (
        prop::collection::vec(spec(), 0..=24),
        prop::collection::vec(join_op(), 1..=program_ops()),
    )
}

/// `join_all` or `try_join_all`, as the program drives it.
trait Join {
    fn poll_join(&mut self, cx: &mut Context<'_>) -> Poll<Result<Vec<Out>, Out>>;
    fn is_terminated(&self) -> bool;
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

fn join_case(
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
                let running: Vec<u32> = world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .map(CtlHandle::id)
                    .collect();
                if !running.is_empty() {
                    let ctl = world.handle(running[pick.index(running.len())]).clone();
                    let outcome = if ok || !fallible {
                        Outcome::Ok
                    } else {
                        errors_sent.push(ctl.id());
                        Outcome::Err
                    };
                    on(&threads, via, move || {
                        ctl.complete(outcome);
                    });
                }
                None
            }
            JoinOp::Wake { pick, via } => {
                if n > 0 {
                    let ctl = world.handle(pick.index(n) as u32).clone();
                    on(&threads, via, move || ctl.wake());
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
                        (None, Some(_)) => {
                            // A future's panic went through: everything is dropped already.
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

fn join_all_of(world: &mut World, specs: &[Spec]) -> Box<dyn Join> {
    let futures: Vec<Ctl<Out>> = specs.iter().map(|&spec| world.ctl(spec).0).collect();
    Box::new(pinfold_join::join_all(futures))
}

fn try_join_all_of(world: &mut World, specs: &[Spec]) -> Box<dyn Join> {
    let futures: Vec<Ctl<Result<Out, Out>>> = specs
        .iter()
        .map(|&spec| world.fallible_ctl(spec).0)
        .collect();
    Box::new(pinfold_join::try_join_all(futures))
}

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

/// Any primitive, polled for its outputs.
enum Primitive {
    Stream(Pin<Box<dyn Stream<Item = Out> + Send>>),
    Join(Pin<Box<dyn Future<Output = Vec<Out>> + Send>>, bool),
}

impl Primitive {
    /// Takes every output ready now; `Ready` once the stream ended or the join completed.
    fn poll_into(&mut self, cx: &mut Context<'_>, outputs: &mut Vec<Out>) -> Poll<()> {
        self.poll_each(cx, outputs, &|| {})
    }

    /// [`poll_into`](Self::poll_into), calling `before` before each poll of the primitive.
    fn poll_each(
        &mut self,
        cx: &mut Context<'_>,
        outputs: &mut Vec<Out>,
        before: &dyn Fn(),
    ) -> Poll<()> {
        before();
        match self {
            Primitive::Stream(stream) => loop {
                match stream.as_mut().poll_next(cx) {
                    Poll::Ready(Some(out)) => {
                        outputs.push(out);
                        before();
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => return Poll::Pending,
                }
            },
            Primitive::Join(_, true) => Poll::Ready(()),
            Primitive::Join(join, done) => match join.as_mut().poll(cx) {
                Poll::Ready(joined) => {
                    outputs.extend(joined);
                    *done = true;
                    Poll::Ready(())
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// The primitives the re-entrance and starvation tests run, by name.
const KINDS: [&str; 6] = [
    "FuturesUnorderedBounded",
    "FuturesUnordered",
    "join_all",
    "ordered_buffer",
    "ordered_buffer window",
    "unordered_buffer",
];

fn primitive(kind: &str, futures: Vec<Ctl<Out>>) -> Primitive {
    match kind {
        "FuturesUnorderedBounded" => Primitive::Stream(Box::pin(
            pinfold_bounded::FuturesUnorderedBounded::from_iter(futures),
        )),
        "FuturesUnordered" => Primitive::Stream(Box::pin(
            pinfold_unordered::FuturesUnordered::from_iter(futures),
        )),
        "join_all" => Primitive::Join(Box::pin(pinfold_join::join_all(futures)), false),
        "ordered_buffer" => Primitive::Stream(Box::pin(stream::iter(futures).ordered_buffer(8))),
        "ordered_buffer window" => {
            Primitive::Stream(Box::pin(stream::iter(futures).ordered_buffer(8).window(12)))
        }
        "unordered_buffer" => {
            Primitive::Stream(Box::pin(stream::iter(futures).unordered_buffer(8)))
        }
        _ => unreachable!("unknown kind {kind}"),
    }
}

/// `n` futures, every fourth of which wakes itself twice once completed (so that wakes come
/// from inside the primitive's own poll too).
fn futures(world: &mut World, n: usize) -> (Vec<Ctl<Out>>, Vec<CtlHandle>) {
    (0..n)
        .map(|i| {
            world.ctl(Spec {
                yields: if i % 4 == 3 { 2 } else { 0 },
                ..Spec::default()
            })
        })
        .unzip()
}

/// A parent waker that polls the primitive from inside `wake`, if it can lock it.
struct LockingParent {
    /// `None` once the test took it out (the primitive holds this waker: a cycle to break).
    primitive: Mutex<Option<Primitive>>,
    outputs: Mutex<Vec<u32>>,
    woken: AtomicBool,
    finished: AtomicBool,
    /// Polls run from inside a wake.
    reentered: AtomicUsize,
    /// Wakes that found the primitive locked (being polled).
    refused: AtomicUsize,
}

impl LockingParent {
    /// Polls the primitive while woken, unless another thread holds it (it sees the wake flag
    /// after it unlocks).
    fn run(self: &Arc<Self>, from_wake: bool) {
        loop {
            let Ok(mut guard) = self.primitive.try_lock() else {
                self.refused.fetch_add(1, Ordering::SeqCst);
                return;
            };
            let Some(primitive) = guard.as_mut() else {
                return;
            };
            if from_wake {
                self.reentered.fetch_add(1, Ordering::SeqCst);
            }
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            let mut outputs = Vec::new();
            loop {
                self.woken.store(false, Ordering::SeqCst);
                if primitive.poll_into(&mut cx, &mut outputs).is_ready() {
                    self.finished.store(true, Ordering::SeqCst);
                    break;
                }
                if !self.woken.load(Ordering::SeqCst) {
                    break;
                }
            }
            drop(guard);
            self.outputs
                .lock()
                .unwrap()
                .extend(outputs.iter().map(Out::id));
            drop(outputs);
            if self.finished.load(Ordering::SeqCst) || !self.woken.load(Ordering::SeqCst) {
                return;
            }
        }
    }
}

impl Wake for LockingParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.run(true);
    }
}

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

thread_local! {
    /// Polls the primitive of the `RefCell` test; borrowed while it runs.
    static HOOK: RefCell<Option<Box<dyn FnMut()>>> = const { RefCell::new(None) };
}

/// A parent waker that, on the owning thread, polls the primitive from inside `wake` through
/// a `RefCell` (refused while a poll is running); elsewhere it only records the wake.
struct RefCellParent {
    owner: ThreadId,
    woken: AtomicBool,
    reentered: AtomicUsize,
    refused: AtomicUsize,
}

impl Wake for RefCellParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if thread::current().id() != self.owner {
            return;
        }
        HOOK.with(|hook| match hook.try_borrow_mut() {
            Ok(mut hook) => {
                if let Some(poll) = hook.as_mut() {
                    self.reentered.fetch_add(1, Ordering::SeqCst);
                    poll();
                }
            }
            Err(_) => {
                self.refused.fetch_add(1, Ordering::SeqCst);
            }
        });
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

thread_local! {
    /// The primitive of the drop-from-wake test, dropped by its parent waker.
    static DOOMED: RefCell<Option<Primitive>> = const { RefCell::new(None) };
}

/// A parent waker that, on the owning thread, drops the primitive from inside `wake`: the
/// primitive's wake path is still on the stack below it.
struct DroppingParent {
    owner: ThreadId,
    dropped: AtomicBool,
}

impl Wake for DroppingParent {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if thread::current().id() != self.owner {
            return;
        }
        let doomed = DOOMED.with(|doomed| doomed.try_borrow_mut().ok()?.take());
        if let Some(primitive) = doomed {
            drop(primitive);
            self.dropped.store(true, Ordering::SeqCst);
        }
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
