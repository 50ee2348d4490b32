//! The differential driver of the sets and stream buffers: one random program of operations
//! (push, complete or wake future i from thread t, run the task, poll once, clear, drop the
//! whole set) run against a pinfold primitive and its `futures-util` counterpart side by side,
//! each [`Side`] polled by its own [`Exec`], their outputs compared by a [`Lockstep`] whenever
//! both have settled, and what must hold of the pinfold side checked after every operation
//! (see `tests/differential.rs`).

use std::fmt;
use std::task::Poll;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::ctl::{CtlHandle, Out, Outcome, Spec, World};
use crate::exec::Exec;
use crate::program::{Pick, Via, WAKE_THREADS, via};
use crate::sizes::program_ops;
use crate::subject::Subject;
use crate::wake_threads::WakeThreads;

/// One operation of a program for a set or a stream buffer.
#[derive(Debug, Clone)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// Push a new future into the set (send it into the buffer's source). `ready`: it is
    /// completed before it is pushed. `yields`: it wakes itself that many times once completed.
    Push { ready: bool, yields: u8 },
    /// Complete the `pick`-th future not yet completed (`ok`: with `Ok`), and wake it.
    Complete { pick: Pick, ok: bool, via: Via },
    /// Wake the `pick`-th future made so far: spurious while it runs, stale once it finished.
    Wake { pick: Pick, via: Via },
    /// Push `count` futures, every `ready_every`-th completed before it is pushed: sets grow
    /// past one bitset word (64 slots) and through several groups.
    PushMany { count: u8, ready_every: u8 },
    /// Complete up to `count` running futures, spread from the `pick`-th on, in one burst of
    /// wakes from one place.
    CompleteMany { pick: Pick, count: u8, via: Via },
    /// Poll the task until it settles (see `Exec::run`), then compare.
    Run,
    /// Poll the task once, woken or not.
    PollOnce,
    /// `clear()` the set; end the buffer's source.
    Clear,
    /// Drop the whole set (buffer and source) and go on with a new one.
    DropAll,
}

/// An [`Op`], pushes and completions most often.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (prop::bool::weighted(0.25), prop_oneof![4 => Just(0u8), 1 => 1..4u8])
            .prop_map(|(ready, yields)| Op::Push { ready, yields }),
        8 => (any::<u64>().prop_map(Pick), prop::bool::weighted(0.9), via())
            .prop_map(|(pick, ok, via)| Op::Complete { pick, ok, via }),
        2 => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| Op::Wake { pick, via }),
        1 => (8..=80u8, 2..=9u8)
            .prop_map(|(count, ready_every)| Op::PushMany { count, ready_every }),
        1 => (any::<u64>().prop_map(Pick), 4..=64u8, via())
            .prop_map(|(pick, count, via)| Op::CompleteMany { pick, count, via }),
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

/// Polls at most this many times in one `Run` before calling it a livelock.
pub fn poll_limit(world: &World) -> usize {
    256 + 16 * world.len()
}

/// How outputs are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// As multisets (unordered sets and buffers).
    Finish,
    /// As sequences, in input order (the ordered buffer).
    Input,
}

/// Bounds the pinfold side must keep, for a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// At most this many futures run at once.
    pub concurrency: usize,
    /// At most this many futures are running or held (pulled, not yet yielded).
    pub window: Option<usize>,
}

/// One implementation, its futures, and what it gave.
pub struct Side {
    name: &'static str,
    world: World,
    exec: Exec,
    make: Box<dyn Fn() -> Box<dyn Subject>>,
    subject: Box<dyn Subject>,
    /// The futures pushed into the current set, in push order.
    members: Vec<u32>,
    /// Outputs of the current set (since the last clear or drop), in the order they came.
    epoch: Vec<u32>,
    /// Futures inserted into the primitive (pushed into a set, pulled by a buffer), in all
    /// sets before the current one.
    inserted_before: usize,
    /// The last poll returned `Ready(None)`.
    ended: bool,
    /// Whether this is pinfold (checked against the bounds and the budget rules).
    pinfold: bool,
}

impl fmt::Debug for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Side")
            .field("name", &self.name)
            .field("pinfold", &self.pinfold)
            .field("members", &self.members)
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl Side {
    /// The side of implementation `name` (`pinfold`: the one checked against the bounds and
    /// the budget rules), whose sets `make` makes: one now, a new one after each drop.
    pub fn new(name: &'static str, pinfold: bool, make: Box<dyn Fn() -> Box<dyn Subject>>) -> Self {
        let subject = make();
        let mut exec = Exec::new();
        // A task polls what it just made.
        exec.mark_dirty();
        Self {
            name,
            world: World::new(name),
            exec,
            make,
            subject,
            members: Vec::new(),
            epoch: Vec::new(),
            inserted_before: 0,
            ended: false,
            pinfold,
        }
    }

    /// Futures inserted into the current primitive.
    fn inserted_now(&self) -> usize {
        match self.subject.source() {
            Some(source) => source.pulled(),
            None => self.members.len(),
        }
    }

    fn record(&mut self, outputs: Vec<Out>) -> Result<(), TestCaseError> {
        for out in outputs {
            let id = out.id();
            prop_assert!(
                self.members.contains(&id),
                "{}: output of future {id}, which is not in the set",
                self.name
            );
            prop_assert!(
                !self.epoch.contains(&id),
                "{}: output of future {id} delivered twice",
                self.name
            );
            self.epoch.push(id);
        }
        Ok(())
    }

    fn poll(&mut self, once: bool) -> Result<(), TestCaseError> {
        let limit = poll_limit(&self.world);
        let Self {
            world,
            exec,
            subject,
            ..
        } = self;
        let outputs = if once {
            if self.pinfold {
                world.begin_poll_call();
            }
            match exec.poll_once(|cx| subject.poll_next(cx)) {
                Poll::Ready(Some(out)) => {
                    self.ended = false;
                    vec![out]
                }
                Poll::Ready(None) => {
                    self.ended = true;
                    Vec::new()
                }
                Poll::Pending => Vec::new(),
            }
        } else {
            let pinfold = self.pinfold;
            let run = exec
                .run(limit, |cx| {
                    if pinfold {
                        world.begin_poll_call();
                    }
                    subject.poll_next(cx)
                })
                .map_err(|livelock| {
                    TestCaseError::fail(format!(
                        "{}: the task never settles ({} polls): {livelock:?}",
                        self.name, limit
                    ))
                })?;
            if !run.outputs.is_empty() {
                self.ended = false;
            }
            if run.ended {
                self.ended = true;
            }
            run.outputs
        };
        self.record(outputs)
    }

    /// Drops the current set and makes a new one.
    fn replace(&mut self) -> Result<(), TestCaseError> {
        let inserted = self.inserted_now();
        let old = std::mem::replace(&mut self.subject, (self.make)());
        drop(old);
        self.inserted_before += inserted;
        let members = std::mem::take(&mut self.members);
        self.world
            .check_dropped_once(members)
            .map_err(TestCaseError::fail)?;
        self.epoch.clear();
        self.ended = false;
        self.exec.mark_dirty();
        Ok(())
    }

    /// What must hold after every operation.
    fn check_always(&self, bounds: Option<Bounds>) -> Result<(), TestCaseError> {
        self.world.check_violations().map_err(TestCaseError::fail)?;
        if let Some(len) = self.subject.len() {
            let live = self.world.alive(&self.members);
            prop_assert_eq!(
                len,
                live,
                "{}: len() is not the number of futures not yet dropped",
                self.name
            );
        }
        if !self.pinfold {
            return Ok(());
        }
        // No quadratic polling: each poll of a future answers its insertion or a wake.
        let inserted = self.inserted_before + self.inserted_now();
        prop_assert!(
            self.world.polls() <= inserted + self.world.wakes(),
            "{}: {} polls of futures for {} insertions and {} wakes",
            self.name,
            self.world.polls(),
            inserted,
            self.world.wakes()
        );
        if let (Some(bounds), Some(source)) = (bounds, self.subject.source()) {
            let pulled = &self.members[..source.pulled()];
            let running = self.world.alive(pulled);
            prop_assert!(
                running <= bounds.concurrency,
                "{}: {running} futures run at once, concurrency {}",
                self.name,
                bounds.concurrency
            );
            if let Some(window) = bounds.window {
                let in_window = pulled.len() - self.epoch.len();
                prop_assert!(
                    in_window <= window,
                    "{}: {in_window} futures running or held, window {window}",
                    self.name
                );
            }
        }
        Ok(())
    }

    /// What must hold once the task has settled.
    fn check_settled(&self, order: Order, bounds: Option<Bounds>) -> Result<(), TestCaseError> {
        let completed = |id: &u32| self.world.handle(*id).outcome().is_some();
        let expected: Vec<u32> = match (order, bounds) {
            (Order::Finish, None) => self.members.iter().copied().filter(completed).collect(),
            (Order::Finish, Some(bounds)) => {
                // Futures are pulled in order while fewer than `concurrency` run; a completed
                // future still in the source is not delivered.
                let mut running = Vec::new();
                let mut delivered = Vec::new();
                let mut next = 0;
                loop {
                    let before = (next, delivered.len());
                    while running.len() < bounds.concurrency && next < self.members.len() {
                        running.push(self.members[next]);
                        next += 1;
                    }
                    running.retain(|id| {
                        let done = completed(id);
                        if done {
                            delivered.push(*id);
                        }
                        !done
                    });
                    if before == (next, delivered.len()) {
                        break delivered;
                    }
                }
            }
            // Every future before a completed one completed too, so it was pulled.
            (Order::Input, _) => self.members.iter().copied().take_while(completed).collect(),
        };
        let mut got = self.epoch.clone();
        let mut expected_sorted = expected.clone();
        if order == Order::Finish {
            got.sort_unstable();
            expected_sorted.sort_unstable();
        }
        prop_assert_eq!(
            &got,
            &expected_sorted,
            "{}: outputs once settled (members {:?})",
            self.name,
            self.members
        );
        for id in &expected {
            let ctl = self.world.handle(*id);
            prop_assert_eq!(
                (ctl.drops(), ctl.made(), ctl.output_drops()),
                (1, 1, 1),
                "{}: future {} delivered but not dropped once (drops, made, output drops)",
                self.name,
                id
            );
        }
        if let Some(source) = self.subject.source() {
            let all_out = source.is_ended() && self.epoch.len() == self.members.len();
            prop_assert_eq!(
                self.ended,
                all_out,
                "{}: the stream ended (left) while the source ended and every output was \
                 yielded (right)",
                self.name
            );
            if let (true, Some(bounds)) = (self.pinfold, bounds) {
                // Work-conserving: with futures waiting in the source, every slot is busy or
                // the window is full.
                let pulled = &self.members[..source.pulled()];
                let running = self.world.alive(pulled);
                let concurrency = bounds
                    .window
                    .map_or(bounds.concurrency, |window| window.min(bounds.concurrency));
                let window_full = bounds
                    .window
                    .is_some_and(|window| pulled.len() - self.epoch.len() == window);
                prop_assert!(
                    source.waiting() == 0 || running == concurrency || window_full,
                    "{}: {} futures wait in the source while {running} of {concurrency} run",
                    self.name,
                    source.waiting()
                );
            }
        }
        Ok(())
    }
}

/// Both sides of a program, and the threads it wakes from.
#[derive(Debug)]
pub struct Lockstep {
    sides: [Side; 2],
    order: Order,
    bounds: Option<Bounds>,
    threads: WakeThreads,
}

impl Lockstep {
    /// The pinfold side and the reference, their outputs compared in `order`, the pinfold
    /// side kept within `bounds` (a buffer's).
    pub fn new(order: Order, bounds: Option<Bounds>, pinfold: Side, reference: Side) -> Self {
        Self {
            sides: [pinfold, reference],
            order,
            bounds,
            threads: WakeThreads::new(WAKE_THREADS),
        }
    }

    /// Runs `program` on both sides, then a final run, a drop of both sets, and the check that
    /// every future and output was dropped exactly once.
    pub fn run(mut self, program: &[Op]) -> Result<(), TestCaseError> {
        for (step, op) in program.iter().enumerate() {
            self.apply(op)
                .map_err(|e| TestCaseError::fail(format!("at op {step} ({op:?}): {e}")))?;
        }
        self.apply(&Op::Run)
            .map_err(|e| TestCaseError::fail(format!("at the final run: {e}")))?;
        for side in &mut self.sides {
            side.replace()?;
        }
        for side in &self.sides {
            side.world
                .check_all_dropped_once()
                .map_err(TestCaseError::fail)?;
        }
        Ok(())
    }

    /// Pushes one future on both sides (a set may refuse it: then it is dropped on both).
    fn push(&mut self, ready: bool, yields: u8) -> Result<(), TestCaseError> {
        let spec = Spec {
            yields: u32::from(yields),
            ..Spec::default()
        };
        let [pinfold, reference] = &mut self.sides;
        let (ours, our_handle) = pinfold.world.ctl(spec);
        let (theirs, their_handle) = reference.world.ctl(spec);
        if ready {
            our_handle.complete(Outcome::Ok);
            their_handle.complete(Outcome::Ok);
        }
        match pinfold.subject.push(ours) {
            Ok(()) => {
                pinfold.members.push(our_handle.id());
                pinfold.exec.mark_dirty();
                if let Err(theirs) = reference.subject.push(theirs) {
                    drop(theirs);
                    return Err(TestCaseError::fail("the reference refused a push"));
                }
                reference.members.push(their_handle.id());
                reference.exec.mark_dirty();
            }
            Err(ours) => {
                // Refused (a full bounded set, an ended source): the same future back.
                if let Some(len) = pinfold.subject.len() {
                    prop_assert_eq!(
                        len,
                        pinfold.members.len() - pinfold.epoch.len(),
                        "a push refused by a set that is not full"
                    );
                }
                drop(ours);
                drop(theirs);
                prop_assert_eq!(our_handle.drops(), 1);
            }
        }
        Ok(())
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::Push { ready, yields } => self.push(ready, yields)?,
            Op::PushMany { count, ready_every } => {
                for i in 0..count {
                    self.push(i % ready_every == 0, 0)?;
                }
            }
            Op::CompleteMany { pick, count, via } => {
                let [pinfold, reference] = &self.sides;
                let running: Vec<u32> = pinfold.world.running();
                if !running.is_empty() {
                    let start = pick.index(running.len());
                    let step = (running.len() / usize::from(count)).max(1);
                    let chosen: Vec<(CtlHandle, CtlHandle)> = (0..usize::from(count))
                        .map(|i| running[(start + i * step) % running.len()])
                        .map(|id| {
                            (
                                pinfold.world.handle(id).clone(),
                                reference.world.handle(id).clone(),
                            )
                        })
                        .collect();
                    self.threads.run_via(via, move || {
                        for (ours, theirs) in chosen {
                            ours.complete(Outcome::Ok);
                            theirs.complete(Outcome::Ok);
                        }
                    });
                }
            }
            Op::Complete { pick, ok, via } => {
                let [pinfold, reference] = &self.sides;
                let running: Vec<u32> = pinfold.world.running();
                if !running.is_empty() {
                    let ours = pinfold
                        .world
                        .handle(running[pick.index(running.len())])
                        .clone();
                    let theirs = reference.world.handle(ours.id()).clone();
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    self.threads.run_via(via, move || {
                        ours.complete(outcome);
                        theirs.complete(outcome);
                    });
                }
            }
            Op::Wake { pick, via } => {
                let [pinfold, reference] = &self.sides;
                if !pinfold.world.is_empty() {
                    let id = pick.index(pinfold.world.len()) as u32;
                    let ours = pinfold.world.handle(id).clone();
                    let theirs = reference.world.handle(id).clone();
                    self.threads.run_via(via, move || {
                        ours.wake();
                        theirs.wake();
                    });
                }
            }
            Op::Run => {
                for side in &mut self.sides {
                    side.poll(false)?;
                    side.check_settled(self.order, self.bounds)?;
                }
                let [pinfold, reference] = &self.sides;
                let (mut ours, mut theirs) = (pinfold.epoch.clone(), reference.epoch.clone());
                if self.order == Order::Finish {
                    ours.sort_unstable();
                    theirs.sort_unstable();
                }
                prop_assert_eq!(
                    ours,
                    theirs,
                    "pinfold (left) and futures-util (right) differ"
                );
            }
            Op::PollOnce => {
                for side in &mut self.sides {
                    side.poll(true)?;
                }
            }
            Op::Clear => {
                for side in &mut self.sides {
                    side.subject.clear();
                    if side.subject.len().is_some() {
                        side.inserted_before += side.members.len();
                        let members = std::mem::take(&mut side.members);
                        side.world
                            .check_dropped_once(members)
                            .map_err(TestCaseError::fail)?;
                        side.epoch.clear();
                    }
                }
            }
            Op::DropAll => {
                for side in &mut self.sides {
                    side.replace()?;
                }
            }
        }
        for side in &self.sides {
            side.check_always(self.bounds)?;
        }
        Ok(())
    }
}
