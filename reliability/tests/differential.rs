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
//! Each side is polled by an [`Exec`] that polls only when its waker fired (or the task itself
//! pushed, or just got an output), so a lost wake shows as a missing output. Outputs are
//! compared whenever both sides have settled (after a `Run`), per *epoch* (between two clears
//! or drops of the set): a single `PollOnce` may legitimately give different outputs on the two
//! sides (their fairness budgets differ), and a clear right after it drops different futures.
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

mod subject;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::StreamExt;
use pinfold_buffer::BufferExt;
use pinfold_reliability::ctl::{Ctl, CtlHandle, Out, Outcome, Spec, World};
use pinfold_reliability::exec::Exec;
use pinfold_reliability::program::{Pick, Via};
use pinfold_reliability::sizes::{program_ops, proptest_cases};
use pinfold_reliability::wake_threads::WakeThreads;
use pinfold_reliability::watchdog::Watchdog;
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};
use subject::{Buffer, Subject};

/// Threads a program may wake from.
const WAKE_THREADS: usize = 3;

/// One operation of a program for a set or a stream buffer.
#[derive(Debug, Clone)]
enum Op {
    /// Push a new future into the set (send it into the buffer's source). `ready`: it is
    /// completed before it is pushed. `yields`: it wakes itself that many times once completed.
    Push { ready: bool, yields: u8 },
    /// Complete the `pick`-th future not yet completed, and wake it.
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

fn via() -> impl Strategy<Value = Via> {
    prop_oneof![
        2 => Just(Via::Here),
        1 => (0..WAKE_THREADS as u8).prop_map(Via::Thread),
    ]
}

fn op() -> impl Strategy<Value = Op> {
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

fn program() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=program_ops())
}

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

/// Runs `job` here or on a waker thread.
fn on(threads: &WakeThreads, via: Via, job: impl FnOnce() + Send + 'static) {
    match via {
        Via::Here => job(),
        Via::Thread(t) => threads.run_on(usize::from(t), job),
    }
}

/// Polls at most this many times in one `Run` before calling it a livelock.
fn poll_limit(world: &World) -> usize {
    256 + 16 * world.len()
}

// ---------------------------------------------------------------------------------------------
// Sets and stream buffers
// ---------------------------------------------------------------------------------------------

/// How outputs are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// As multisets (unordered sets and buffers).
    Finish,
    /// As sequences, in input order (the ordered buffer).
    Input,
}

/// Bounds the pinfold side must keep, for a buffer.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// At most this many futures run at once.
    concurrency: usize,
    /// At most this many futures are running or held (pulled, not yet yielded).
    window: Option<usize>,
}

/// One implementation, its futures, and what it gave.
struct Side {
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

impl Side {
    fn new(name: &'static str, pinfold: bool, make: Box<dyn Fn() -> Box<dyn Subject>>) -> Self {
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
            let live = self
                .members
                .iter()
                .filter(|&&id| self.world.handle(id).drops() == 0)
                .count();
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
            let running = pulled
                .iter()
                .filter(|&&id| self.world.handle(id).drops() == 0)
                .count();
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
                let running = pulled
                    .iter()
                    .filter(|&&id| self.world.handle(id).drops() == 0)
                    .count();
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
struct Lockstep {
    sides: [Side; 2],
    order: Order,
    bounds: Option<Bounds>,
    threads: WakeThreads,
}

impl Lockstep {
    fn new(order: Order, bounds: Option<Bounds>, pinfold: Side, reference: Side) -> Self {
        Self {
            sides: [pinfold, reference],
            order,
            bounds,
            threads: WakeThreads::new(WAKE_THREADS),
        }
    }

    fn run(mut self, program: &[Op]) -> Result<(), TestCaseError> {
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
                let running: Vec<u32> = pinfold
                    .world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .map(CtlHandle::id)
                    .collect();
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
                    on(&self.threads, via, move || {
                        for (ours, theirs) in chosen {
                            ours.complete(Outcome::Ok);
                            theirs.complete(Outcome::Ok);
                        }
                    });
                }
            }
            Op::Complete { pick, ok, via } => {
                let [pinfold, reference] = &self.sides;
                let running: Vec<&CtlHandle> = pinfold
                    .world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .collect();
                if !running.is_empty() {
                    let ours = running[pick.index(running.len())].clone();
                    let theirs = reference.world.handle(ours.id()).clone();
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    on(&self.threads, via, move || {
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
                    on(&self.threads, via, move || {
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

fn reference_set() -> Box<dyn Subject> {
    Box::new(futures_util::stream::FuturesUnordered::<Ctl<Out>>::new())
}

fn bounded_case(capacity: usize, program: &[Op]) -> Result<(), TestCaseError> {
    let pinfold = Side::new(
        "FuturesUnorderedBounded",
        true,
        Box::new(move || Box::new(pinfold_bounded::FuturesUnorderedBounded::new(capacity))),
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
// Joins
// ---------------------------------------------------------------------------------------------

/// One operation of a program for a join of futures made up front.
#[derive(Debug, Clone)]
enum JoinOp {
    /// Complete the `pick`-th future not yet completed (`ok`: with `Ok`), and wake it.
    Complete { pick: Pick, ok: bool, via: Via },
    /// Wake the `pick`-th future: spurious while it runs, stale once it finished.
    Wake { pick: Pick, via: Via },
    /// Poll the join until it settles, then compare.
    Run,
    /// Poll the join once, woken or not.
    PollOnce,
    /// Drop the join (cancel it) and every future and output it holds.
    Cancel,
}

fn join_op(errors: f64) -> impl Strategy<Value = JoinOp> {
    prop_oneof![
        8 => (any::<u64>().prop_map(Pick), prop::bool::weighted(1.0 - errors), via())
            .prop_map(|(pick, ok, via)| JoinOp::Complete { pick, ok, via }),
        2 => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| JoinOp::Wake { pick, via }),
        4 => Just(JoinOp::Run),
        1 => Just(JoinOp::PollOnce),
        1 => Just(JoinOp::Cancel),
    ]
}

/// How a join's inputs are handed to pinfold: the iterator's size hint decides how it stores
/// them.
#[derive(Debug, Clone, Copy)]
enum Input {
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
fn join_program(errors: f64) -> impl Strategy<Value = (Vec<u8>, Input, Vec<JoinOp>)> {
    (
        prop::collection::vec(prop_oneof![4 => Just(0u8), 1 => 1..4u8], 0..=40),
        prop_oneof![
            3 => Just(Input::Exact),
            1 => Just(Input::Unsized),
            1 => Just(Input::Lying),
        ],
        prop::collection::vec(join_op(errors), 1..=program_ops()),
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

fn join_all_case(yields: &[u8], input: Input, program: &[JoinOp]) -> Result<(), TestCaseError> {
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
                let running: Vec<u32> = ours
                    .world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .map(CtlHandle::id)
                    .collect();
                if !running.is_empty() {
                    let id = running[pick.index(running.len())];
                    let (a, b) = (
                        ours.world.handle(id).clone(),
                        theirs.world.handle(id).clone(),
                    );
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    on(&threads, via, move || {
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
                    on(&threads, via, move || {
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
fn try_join_all_case(yields: &[u8], input: Input, program: &[JoinOp]) -> Result<(), TestCaseError> {
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
                let running: Vec<u32> = world
                    .handles()
                    .iter()
                    .filter(|ctl| ctl.outcome().is_none())
                    .map(CtlHandle::id)
                    .collect();
                if !running.is_empty() {
                    let id = running[pick.index(running.len())];
                    let (a, b) = (world.handle(id).clone(), their_world.handle(id).clone());
                    let outcome = if ok { Outcome::Ok } else { Outcome::Err };
                    if !ok && our_join.is_some() && our_result.is_none() {
                        errors_sent.push(id);
                    }
                    on(&threads, via, move || {
                        a.complete(outcome);
                        b.complete(outcome);
                    });
                }
            }
            JoinOp::Wake { pick, via } => {
                if n > 0 {
                    let id = pick.index(n) as u32;
                    let (a, b) = (world.handle(id).clone(), their_world.handle(id).clone());
                    on(&threads, via, move || {
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
