//! The fault driver of the sets and stream buffers: a random program of operations (push a
//! future that may panic in `poll`, in `Drop` or in its output's `Drop`; complete or wake
//! future i from thread t; poll until settled or once; clear; drop the whole set) run against
//! one primitive, checking after every operation that a panic that reached the caller is the
//! first injected one raised during it (a future whose poll panics may panic in its `Drop`
//! too), that none was swallowed, that after a panic of a future's poll a wake from outside
//! reaches the task, and that what the docs promise after a panic holds (see
//! `tests/faults.rs`).

use std::cell::Cell;
use std::task::{Context, Poll};

use pinfold_buffer::BufferExt;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::ctl::{Faults, Out, Outcome, Spec, World};
use crate::exec::Exec;
use crate::fault::{Payload, Site, as_fault, catch, check_panic, drop_outputs, less};
use crate::program::{Pick, Via, WAKE_THREADS, via};
use crate::sizes::program_ops;
use crate::subject::{Buffer, Subject};
use crate::wake_threads::WakeThreads;

/// Faults at random points: a panic in the first, second or third poll; in `Drop`; in the
/// output's `Drop`. A future that panics in its poll panics in its `Drop` too one time in
/// three: two panics in one call, the poll's first.
pub fn faults() -> impl Strategy<Value = Faults> {
    (
        prop::option::weighted(0.2, 1..=3u32),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.15),
    )
        .prop_map(
            |(poll_panic_at, drop_panics, drop_panics_too, output_drop_panics)| Faults {
                poll_panic_at,
                drop_panics: drop_panics || poll_panic_at.is_some() && drop_panics_too,
                output_drop_panics,
                panics_while_unwinding: false,
            },
        )
}

/// A future's [`Spec`]: its faults, and whether it wakes itself once completed (one in five
/// does, once or twice).
pub fn spec() -> impl Strategy<Value = Spec> {
    (faults(), prop_oneof![4 => Just(0u32), 1 => 1..3u32])
        .prop_map(|(faults, yields)| Spec { yields, faults })
}

/// One operation of a program for a set or a stream buffer.
#[derive(Debug, Clone)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// Push a future with these faults (send it into the buffer's source); `ready`: completed
    /// before it is pushed.
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

/// An [`Op`], pushes and completions most often.
pub fn op() -> impl Strategy<Value = Op> {
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

/// A program of 1 to `PINFOLD_PROGRAM_OPS` operations.
pub fn program() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=program_ops())
}

/// What the programs run against.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `FuturesUnorderedBounded` of this capacity.
    Bounded(usize),
    /// `FuturesUnordered`.
    Growable,
    /// `unordered_buffer` of this concurrency.
    UnorderedBuffer(usize),
    /// `ordered_buffer` of this concurrency, with this window if any.
    OrderedBuffer(usize, Option<usize>),
}

impl Kind {
    fn make(self) -> Box<dyn Subject> {
        match self {
            Kind::Bounded(capacity) => {
                Box::new(pinfold_unordered::FuturesUnorderedBounded::new(capacity))
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
#[derive(Debug)]
pub struct Faulty {
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
    /// A program about to run against a new primitive of `kind`.
    pub fn new(kind: Kind) -> Self {
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

    /// Runs `program`, then a final run and a drop of the primitive, and checks that every
    /// future and output was dropped exactly once.
    pub fn run(mut self, program: &[Op]) -> Result<(), TestCaseError> {
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
                let running: Vec<u32> = self.world.running();
                if !running.is_empty() {
                    let ctl = self
                        .world
                        .handle(running[pick.index(running.len())])
                        .clone();
                    self.threads.run_via(via, move || {
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
                    self.threads.run_via(via, move || ctl.wake());
                }
                None
            }
            Op::Run | Op::PollOnce => {
                let limit = 256 + 16 * self.world.len();
                let flag = self.exec.flag().clone();
                // The task's wakes when the latest call began.
                let wakes_at_call = Cell::new(flag.wakes());
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
                    wakes_at_call.set(flag.wakes());
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
                let caught = if matches!(op, Op::PollOnce) {
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
                };
                let poll_panicked = caught
                    .as_ref()
                    .is_some_and(|p| as_fault(&**p).is_ok_and(|fault| fault.site == Site::Poll));
                if poll_panicked {
                    self.check_reachable(wakes_at_call.get())?;
                }
                caught
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

    /// After a call that a future's poll panicked in (the future's `Drop` may have panicked
    /// too): the task's waker was registered before the panic left the call, so a wake of
    /// a future still running, from outside, reaches the task (unless the call woke it
    /// already: `task_wakes` is the count when the call began).
    fn check_reachable(&self, task_wakes: usize) -> Result<(), TestCaseError> {
        let running = self
            .world
            .handles()
            .iter()
            .find(|ctl| ctl.drops() == 0 && ctl.waker().is_some());
        if let Some(ctl) = running {
            ctl.wake();
            let wakes = self.exec.flag().wakes();
            prop_assert!(
                wakes > task_wakes,
                "after a panic of a future's poll, a wake of future {} did not reach the task",
                ctl.id()
            );
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
            let live = self.world.alive(&self.members);
            prop_assert_eq!(len, live, "len() is not the number of futures not dropped");
        }
        if let Some((concurrency, window)) = self.kind.bounds() {
            let pulled = &self.members[..self.pulled()];
            let running = self.world.alive(pulled);
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
