//! The fault sweep of the joins: a panic at every place user code runs in `join_all` and
//! `try_join_all`: a future's poll, a future's drop, an output's (or error's) drop, and the
//! task waker's clone, wake, wake_by_ref and drop.
//!
//! A sweep runs a join of inputs of the given [`Kind`]s once to count those calls (the steps),
//! then once per step with a panic there ([`panic_at_every_call_of_join_all`],
//! [`panic_at_every_call_of_try_join_all`]). After the panic, the contract of the join crate's
//! docs (*Panics*):
//!
//! - a panic out of a future's poll is fatal: every future and every output made is dropped
//!   once before the panic comes out, the join is terminated, and polling it again panics with
//!   "`JoinAll` polled after completion" (or `TryJoinAll`);
//! - any other panic leaves the join as it was: polled again with a good waker (and woken as
//!   a join must be: a poll only follows a wake), it completes with every output in order
//!   (`join_all`'s each `Ok` or `Err` as its input ended), or, for `try_join_all`, with the
//!   first error in time;
//!
//! and in every case no future is polled after it finished, and every future and every output
//! made is dropped exactly once, with no clone of the task's waker left behind.
//!
//! A second sweep makes two panics of each future's poll
//! ([`two_panics_in_a_call_of_join_all`], [`two_panics_in_a_call_of_try_join_all`]): the poll
//! panics, and so does each call into user code in turn that the join makes before that panic
//! is out (the drops of everything as the join ends, the task's waker). The first panic comes
//! out, and the contract after it holds as for one.
//!
//! [`kinds`] makes random inputs for the sweep; up to 40 span the 32 at which a join stops
//! polling its futures a second time with the task's waker.

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::future::FusedFuture;
use pinfold_join::{join_all, try_join_all};
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::fault_clock::FaultClock;
use pinfold_testkit::future::poll_with;
use pinfold_testkit::panicking_waker::{WakerSwitches, panicking_waker_on};
use pinfold_testkit::waker::{WakeCounter, counting_waker};
use proptest::prelude::*;

/// What an input does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `Ok` at its first poll.
    Ready,
    /// `Err` at its first poll.
    ReadyErr,
    /// Wakes itself and is `Pending` this many times, then `Ok`.
    Yield(usize),
    /// `Pending`, keeping its waker, until the sweep fires its event; then `Ok`.
    Wait,
    /// As `Wait`, then `Err`.
    WaitErr,
}

impl Kind {
    /// Whether the input ends in `Err`.
    pub fn fails(self) -> bool {
        matches!(self, Kind::ReadyErr | Kind::WaitErr)
    }
}

/// Inputs that end in `Ok`: ready, yielding 0 to 3 times, or waiting for an event.
fn succeeding() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Ready),
        (0..=3usize).prop_map(Kind::Yield),
        Just(Kind::Wait),
    ]
}

/// 0 to `max` inputs of every kind. Half the cases have no failing input, and in the other
/// half about one input in six fails, so that `try_join_all` both completes and meets its
/// first error at any point of a long join.
pub fn kinds(max: usize) -> impl Strategy<Value = Vec<Kind>> {
    let any_kind = prop_oneof![
        5 => succeeding(),
        1 => prop_oneof![Just(Kind::ReadyErr), Just(Kind::WaitErr)],
    ];
    prop_oneof![
        prop::collection::vec(succeeding(), 0..=max),
        prop::collection::vec(any_kind, 0..=max),
    ]
}

/// Runs `join_all` of inputs of `kinds` once with a panic at each call into user code in turn,
/// and checks the contract after each panic (see the module docs). `Err` outputs are outputs
/// like any other to `join_all`. Under Miri, about 20 of the calls, spread over the run.
///
/// # Errors
/// The first violation, naming the kinds, the step that panicked and what went wrong.
pub fn panic_at_every_call_of_join_all(kinds: &[Kind]) -> Result<(), String> {
    panic_at_every_call::<JoinAllOf>(kinds)
}

/// Runs `try_join_all` of inputs of `kinds` once with a panic at each call into user code in
/// turn, and checks the contract after each panic (see the module docs). Under Miri, about 20
/// of the calls, spread over the run.
///
/// # Errors
/// The first violation, naming the kinds, the step that panicked and what went wrong.
pub fn panic_at_every_call_of_try_join_all(kinds: &[Kind]) -> Result<(), String> {
    panic_at_every_call::<TryJoinAllOf>(kinds)
}

/// What the sweep sees of one input.
#[derive(Default)]
struct Seen {
    finished: AtomicBool,
    polls_after_finishing: AtomicUsize,
    future_drops: AtomicUsize,
    /// Whether its output (or error) was made.
    made: AtomicBool,
    output_drops: AtomicUsize,
    /// Whether the sweep fired its event.
    fired: AtomicBool,
    /// The waker of its latest `Pending` poll, for a `Wait` input; dropped with the future.
    waker: Mutex<Option<Waker>>,
}

/// What a run's inputs and outputs share with the sweep.
struct Run {
    switches: Arc<WakerSwitches>,
    seen: Vec<Seen>,
    /// The inputs that gave an error, in time order.
    errors: Mutex<Vec<usize>>,
    /// Whether a panic unwound out of a future's poll.
    poll_panicked: AtomicBool,
}

impl Run {
    fn seen(&self, id: usize) -> &Seen {
        &self.seen[id]
    }

    /// Checks that each of the `n` futures was dropped once, and each output made dropped
    /// once, but that of `handed_out` (the error the join returned, owned by the sweep).
    fn check_each_dropped_once(
        &self,
        n: usize,
        handed_out: Option<usize>,
        context: impl Fn(&str) -> String,
    ) -> Result<(), String> {
        for id in 0..n {
            let seen = self.seen(id);
            let drops = seen.future_drops.load(Ordering::SeqCst);
            if drops != 1 {
                return Err(context(&format!("future {id} dropped {drops} times")));
            }
            let made = seen.made.load(Ordering::SeqCst) && handed_out != Some(id);
            let drops = seen.output_drops.load(Ordering::SeqCst);
            if drops != usize::from(made) {
                return Err(context(&format!(
                    "output {id} (made: {made}) dropped {drops} times"
                )));
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Run").finish_non_exhaustive()
    }
}

/// An input's output, or error: counts its drops, and its drop is a step.
#[derive(Debug)]
struct Out {
    id: usize,
    run: Arc<Run>,
}

impl Drop for Out {
    fn drop(&mut self) {
        self.run
            .seen(self.id)
            .output_drops
            .fetch_add(1, Ordering::SeqCst);
        self.run.switches.step("output: drop");
    }
}

/// The label of a future's poll.
const POLL_STEP: &str = "future: poll";

/// A future of the given kind whose poll and drop are steps.
struct Input {
    id: usize,
    kind: Kind,
    run: Arc<Run>,
}

/// Notes a panic that unwinds out of a future's poll.
struct PollGuard<'a>(&'a Run);

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poll_panicked.store(true, Ordering::SeqCst);
        }
    }
}

impl Future for Input {
    type Output = Result<Out, Out>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Out, Out>> {
        let run = self.run.clone();
        let _guard = PollGuard(&run);
        let id = self.id;
        run.switches.step(POLL_STEP);
        let seen = run.seen(id);
        if seen.finished.load(Ordering::SeqCst) {
            seen.polls_after_finishing.fetch_add(1, Ordering::SeqCst);
            return Poll::Pending;
        }
        let failed = match self.kind {
            Kind::Ready => false,
            Kind::ReadyErr => true,
            Kind::Yield(0) => false,
            Kind::Yield(left) => {
                self.kind = Kind::Yield(left - 1);
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Kind::Wait | Kind::WaitErr if !seen.fired.load(Ordering::SeqCst) => {
                let waker = cx.waker().clone();
                let old = lock(&seen.waker).replace(waker);
                drop(old);
                return Poll::Pending;
            }
            Kind::Wait => false,
            Kind::WaitErr => true,
        };
        seen.finished.store(true, Ordering::SeqCst);
        seen.made.store(true, Ordering::SeqCst);
        let out = Out {
            id,
            run: run.clone(),
        };
        if failed {
            lock(&run.errors).push(id);
            Poll::Ready(Err(out))
        } else {
            Poll::Ready(Ok(out))
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        let seen = self.run.seen(self.id);
        seen.future_drops.fetch_add(1, Ordering::SeqCst);
        // The waker it kept goes with it (a step of its own if it is the task's).
        let kept = lock(&seen.waker).take();
        drop(kept);
        self.run.switches.step("future: drop");
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The join under test: `join_all` or `try_join_all` of the inputs, its result as the outputs
/// (each still `Ok` or `Err`) or the error that ended it, and the name its "polled after
/// completion" message gives.
trait Joiner {
    type Join: Future + FusedFuture + Unpin;
    const NAME: &'static str;
    fn join(inputs: Vec<Input>) -> Self::Join;
    fn result(output: <Self::Join as Future>::Output) -> Result<Vec<Result<Out, Out>>, Out>;
}

struct JoinAllOf;

impl Joiner for JoinAllOf {
    type Join = pinfold_join::JoinAll<Input>;
    const NAME: &'static str = "JoinAll";
    fn join(inputs: Vec<Input>) -> Self::Join {
        join_all(inputs)
    }
    fn result(output: Vec<Result<Out, Out>>) -> Result<Vec<Result<Out, Out>>, Out> {
        Ok(output)
    }
}

struct TryJoinAllOf;

impl Joiner for TryJoinAllOf {
    type Join = pinfold_join::TryJoinAll<Input>;
    const NAME: &'static str = "TryJoinAll";
    fn join(inputs: Vec<Input>) -> Self::Join {
        try_join_all(inputs)
    }
    fn result(output: Result<Vec<Out>, Out>) -> Result<Vec<Result<Out, Out>>, Out> {
        output.map(|outputs| outputs.into_iter().map(Ok).collect())
    }
}

/// The waker a run polls with: the panicking one until a panic, then a good one.
enum TaskWaker {
    Panicking(Waker, Arc<WakerSwitches>),
    Good(Waker, Arc<WakeCounter>),
}

impl TaskWaker {
    fn waker(&self) -> &Waker {
        match self {
            TaskWaker::Panicking(waker, _) | TaskWaker::Good(waker, _) => waker,
        }
    }

    fn wakes(&self) -> usize {
        match self {
            TaskWaker::Panicking(_, switches) => switches.wakes(),
            TaskWaker::Good(_, counter) => counter.count(),
        }
    }
}

/// Turns the panics off when dropped: a run cut short by a violation drops its join, outputs
/// and waker without a panic that would hide the violation.
struct Disarm<'a>(&'a WakerSwitches, &'a FaultClock);

impl Drop for Disarm<'_> {
    fn drop(&mut self) {
        // Calls are counted from 1: none is call 0.
        self.0.panic_at_call(0);
        self.1.arm(0);
    }
}

/// The most polls a run takes: far more than any case needs.
const MAX_POLLS: usize = 1_000;

/// A panic at step `step`, whose message is to be `label`.
#[derive(Clone, Copy)]
struct PanicAt {
    step: usize,
    label: &'static str,
}

/// What a run did: every step, and the steps made before the first panic came out of a
/// future's poll, if one did.
struct Steps {
    labels: Vec<&'static str>,
    before_poll_panic_out: Option<usize>,
}

/// Runs `kinds` through `J`'s join with a panic at `panic_at` (none if `None`), and a second
/// at `then` (a later step, before the first panic is out of the call: the join must drop it
/// and let the first out), and checks the contract after them. Returns what every step was:
/// the counting run's labels tell the message of the panic at step `k`.
fn run<J: Joiner>(
    kinds: &[Kind],
    panic_at: Option<PanicAt>,
    then: Option<PanicAt>,
) -> Result<Steps, String> {
    let n = kinds.len();
    // The first panic comes from the clock (never while unwinding: the first is not), the
    // second from the switches (also while the first unwinds).
    let clock = FaultClock::new();
    let (task, switches) = panicking_waker_on(clock.clone());
    match (panic_at, then) {
        (Some(first), Some(second)) => {
            clock.arm(first.step);
            switches.panic_at_call(second.step);
        }
        (Some(at), None) => switches.panic_at_call(at.step),
        _ => {}
    }
    let run = Arc::new(Run {
        switches: switches.clone(),
        seen: (0..n).map(|_| Seen::default()).collect(),
        errors: Mutex::new(Vec::new()),
        poll_panicked: AtomicBool::new(false),
    });
    let inputs = kinds
        .iter()
        .enumerate()
        .map(|(id, &kind)| Input {
            id,
            kind,
            run: run.clone(),
        })
        .collect();
    let context = |what: &str| match (panic_at, then) {
        (Some(at), Some(second)) => format!(
            "{} of {kinds:?}, panic at step {} ({}) and at step {} ({}): {what}",
            J::NAME,
            at.step,
            at.label,
            second.step,
            second.label
        ),
        (Some(at), None) => format!(
            "{} of {kinds:?}, panic at step {} ({}): {what}",
            J::NAME,
            at.step,
            at.label
        ),
        _ => format!("{} of {kinds:?}, no panic: {what}", J::NAME),
    };
    let mut join = J::join(inputs);
    let mut waker = TaskWaker::Panicking(task, switches.clone());
    let mut outcome = None;
    let mut before_poll_panic_out = None;
    let disarm = Disarm(&switches, &clock);
    let mut caught: Option<String> = None;
    let mut catch =
        |panic: Box<dyn std::any::Any + Send>, waker: &mut TaskWaker| -> Result<(), String> {
            let message = panic_message(&*panic).to_string();
            if caught.is_some() {
                return Err(context(&format!("a second panic: {message}")));
            }
            if Some(message.as_str()) != panic_at.map(|at| at.label) {
                return Err(context(&format!("not the injected panic: {message}")));
            }
            caught = Some(message);
            let (good, counter) = counting_waker();
            *waker = TaskWaker::Good(good, counter);
            Ok(())
        };
    let mut woken = true;
    for _ in 0..MAX_POLLS {
        if !woken {
            // Fire the next event; its wake must wake the join.
            let next = (0..n).find(|&id| {
                matches!(kinds[id], Kind::Wait | Kind::WaitErr)
                    && !run.seen(id).fired.load(Ordering::SeqCst)
                    && run.seen(id).future_drops.load(Ordering::SeqCst) == 0
            });
            let Some(id) = next else {
                return Err(context(
                    "the join is pending and nothing is left to wake it",
                ));
            };
            let before = waker.wakes();
            run.seen(id).fired.store(true, Ordering::SeqCst);
            let kept = lock(&run.seen(id).waker).take();
            let kept = kept.ok_or_else(|| context("a waiting input kept no waker"))?;
            match catch_unwind(AssertUnwindSafe(|| kept.wake())) {
                Ok(()) if waker.wakes() > before => {}
                Ok(()) => return Err(context("a wake was lost")),
                // The wake's own panic: nothing of the join's; poll it again all the same.
                Err(panic) => catch(panic, &mut waker)?,
            }
        }
        let before = waker.wakes();
        match catch_unwind(AssertUnwindSafe(|| poll_with(&mut join, waker.waker()))) {
            Ok(Poll::Ready(output)) => {
                outcome = Some(J::result(output));
                break;
            }
            Ok(Poll::Pending) => woken = waker.wakes() > before,
            Err(panic) => {
                let steps = switches.calls();
                catch(panic, &mut waker)?;
                woken = true;
                if run.poll_panicked.load(Ordering::SeqCst) {
                    before_poll_panic_out = Some(steps);
                    break;
                }
            }
        }
    }
    if run.poll_panicked.load(Ordering::SeqCst) {
        // Fatal: everything was dropped before the panic came out.
        if !join.is_terminated() {
            return Err(context("not terminated after a future's panic"));
        }
        run.check_each_dropped_once(n, None, context)?;
        let Err(again) = catch_unwind(AssertUnwindSafe(|| {
            let _ = poll_with(&mut join, Waker::noop());
        })) else {
            return Err(context("a terminated join polled again did not panic"));
        };
        let message = panic_message(&*again);
        if message != format!("{} polled after completion", J::NAME) {
            return Err(context(&format!(
                "polled again, it panicked with {message:?}"
            )));
        }
    } else {
        let outcome = outcome
            .as_ref()
            .ok_or_else(|| context("the join never completed"))?;
        if !join.is_terminated() {
            return Err(context("not terminated once complete"));
        }
        check_outcome(kinds, &run, outcome, context)?;
    }
    // The join's drop is a step too (the task's waker its wake table may hold); the
    // outputs', once they are the sweep's, are not.
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(join))) {
        catch(panic, &mut waker)?;
    }
    let labels = switches.step_labels();
    let panics = switches.panics();
    drop(disarm);
    drop(outcome);
    if panic_at.is_some() && caught.is_none() {
        return Err(context("the injected panic was not seen"));
    }
    if then.is_some() && panics != 2 {
        return Err(context(&format!("{panics} panics raised, not two")));
    }
    for id in 0..n {
        if run.seen(id).polls_after_finishing.load(Ordering::SeqCst) != 0 {
            return Err(context(&format!("future {id} polled after it finished")));
        }
    }
    run.check_each_dropped_once(n, None, context)?;
    drop(waker);
    if switches.live() != 0 {
        return Err(context("a clone of the task's waker was leaked"));
    }
    Ok(Steps {
        labels,
        before_poll_panic_out,
    })
}

/// Checks a completed join's result: every output in input order, each `Ok` or `Err` as its
/// input ended, or (`try_join_all`) the first error in time with everything else dropped.
fn check_outcome(
    kinds: &[Kind],
    run: &Run,
    outcome: &Result<Vec<Result<Out, Out>>, Out>,
    context: impl Fn(&str) -> String,
) -> Result<(), String> {
    let n = kinds.len();
    match outcome {
        Ok(outputs) => {
            let ids: Vec<usize> = outputs
                .iter()
                .map(|out| out.as_ref().map_or_else(|e| e.id, |o| o.id))
                .collect();
            if ids != (0..n).collect::<Vec<_>>() {
                return Err(context(&format!("outputs of inputs {ids:?}")));
            }
            for (id, output) in outputs.iter().enumerate() {
                if output.is_err() != kinds[id].fails() {
                    return Err(context(&format!(
                        "output {id} is {output:?}, of an input of kind {:?}",
                        kinds[id]
                    )));
                }
                if run.seen(id).output_drops.load(Ordering::SeqCst) != 0 {
                    return Err(context(&format!("output {id} dropped before it came out")));
                }
            }
        }
        Err(err) => {
            // The first error in time, the only one made; everything else dropped by now.
            let errors = lock(&run.errors).clone();
            if errors != [err.id] {
                return Err(context(&format!(
                    "error {} returned, errors made {errors:?}",
                    err.id
                )));
            }
            run.check_each_dropped_once(n, Some(err.id), |what: &str| {
                context(&format!("{what} at the error"))
            })?;
        }
    }
    Ok(())
}

/// Counts the steps of `kinds` joined by `J`, then runs it once with a panic at each.
fn panic_at_every_call<J: Joiner>(kinds: &[Kind]) -> Result<(), String> {
    let labels = run::<J>(kinds, None, None)?.labels;
    let steps = labels.len();
    // Under Miri, about 20 steps spread over the run (and the last, if there are any: a join
    // of nothing calls no user code).
    let stride = if cfg!(miri) { (steps / 20).max(1) } else { 1 };
    let last = (steps > 0).then_some(steps);
    for step in (1..=steps).step_by(stride).chain(last) {
        let at = PanicAt {
            step,
            label: labels[step - 1],
        };
        run::<J>(kinds, Some(at), None)?;
    }
    Ok(())
}

/// Runs `join_all` of inputs of `kinds` once with two panics for each future's poll: the poll
/// panics, and so does each call into user code in turn that the join makes before that panic
/// is out (the future's drop, the other futures' and the kept outputs' drops as the join
/// drops everything, the task's waker). The contract after the first panic holds, and the
/// first panic is the one that comes out. Under Miri, about 20 of the pairs after about 6 of
/// the polls.
///
/// # Errors
/// The first violation, naming the kinds, the two steps that panicked and what went wrong.
pub fn two_panics_in_a_call_of_join_all(kinds: &[Kind]) -> Result<(), String> {
    two_panics_in_a_call::<JoinAllOf>(kinds)
}

/// [`two_panics_in_a_call_of_join_all`] for `try_join_all`.
///
/// # Errors
/// The first violation, naming the kinds, the two steps that panicked and what went wrong.
pub fn two_panics_in_a_call_of_try_join_all(kinds: &[Kind]) -> Result<(), String> {
    two_panics_in_a_call::<TryJoinAllOf>(kinds)
}

/// Counts the steps of `kinds` joined by `J`; for each future's poll, runs it once with a
/// panic there to count the steps until that panic is out, then once per such step with a
/// second panic there.
fn two_panics_in_a_call<J: Joiner>(kinds: &[Kind]) -> Result<(), String> {
    let labels = run::<J>(kinds, None, None)?.labels;
    let polls: Vec<usize> = (0..labels.len())
        .filter(|&index| labels[index] == POLL_STEP)
        .collect();
    // Under Miri, about 6 of the polls, spread over the run.
    let stride = if cfg!(miri) {
        (polls.len() / 6).max(1)
    } else {
        1
    };
    let mut pairs = Vec::new();
    for &index in polls.iter().step_by(stride) {
        let label = labels[index];
        let first = PanicAt {
            step: index + 1,
            label,
        };
        let steps = run::<J>(kinds, Some(first), None)?;
        let out = steps.before_poll_panic_out.unwrap_or(first.step);
        for step in first.step + 1..=out {
            let label = steps.labels[step - 1];
            pairs.push((first, PanicAt { step, label }));
        }
    }
    let stride = if cfg!(miri) {
        (pairs.len() / 20).max(1)
    } else {
        1
    };
    for &(first, second) in pairs.iter().step_by(stride) {
        run::<J>(kinds, Some(first), Some(second))?;
    }
    Ok(())
}
