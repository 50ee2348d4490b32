//! The order model: when each value of a primitive is polled, stated as a reference and
//! checked at every poll.
//!
//! A program pushes values with a scripted behaviour per poll ([`Act`]: `Pending`, `Pending`
//! having woken itself or another value, `Ready`, a stream's item or end, a panic), wakes them
//! from outside (from this thread or a waker thread), and calls the primitive (`poll_next`, a
//! join's `poll`, a buffer's `poll_progress`). The calls are numbered; the *epoch* is the
//! number of the current or last call. The model keeps, for each value, whether it is *due*
//! and since which epoch:
//!
//! - a value becomes due when it is pushed, when one of its wakers is woken (from outside
//!   between calls, or during a call by itself or by another value's poll), and a stream when
//!   it gave an item; it keeps the epoch it first became due with until it is polled (waking
//!   it again changes nothing). A wake or push during call `c`, or between calls `c` and
//!   `c + 1`, has epoch `c`: one batch.
//!
//! At each poll of value `v` in call `c` the model checks that (a) `v` is due, (b) `v` was not
//! polled before in call `c`, and (c) no value due since an earlier epoch than `v` is still
//! waiting, not yet polled in call `c`: a woken value is never passed over by values pushed or
//! woken in a later batch. When a call returns `Pending` it checks that the call polled every
//! value due that it had not polled, or spent its budget (as many polls as the primitive held
//! values when the call started, or [`MAX_VAIN_REPOLLS`] values polled in an earlier call and
//! `Pending` again without waking themselves) and woke the task; that the task was woken if
//! anything is due, and was not woken by the primitive if nothing is. Between calls, after a
//! `Pending` or a panic, every wake of a live value from outside must reach the task. When a
//! call gives an output, no value still due has waited behind more outputs than the primitive
//! held values since it became due.
//!
//! A join polls every future in its first `P + 1` polls whether woken or not (`P` = 2 up to
//! 32 futures, 1 above: the crate's *Wakes*), and a future that keeps the waker of its first
//! poll on every poll of the join: those polls are exempt from (a) and (c). For the buffers
//! the order differs (an ordered buffer yields in input order) and (c) and the budget rule are
//! not checked; instead at most `concurrency` futures run at once, an ordered buffer's outputs
//! come in input order, and a future of an ordered buffer starts only while its running futures
//! and held outputs are under its window (without a window, under its concurrency if it is
//! driven through `poll_progress`).
//!
//! The task's waker is the test kit's [`panicking_waker`], which counts its wakes and can
//! panic at the next one ([`Op::WakerPanics`]).
//!
//! Faults come one at a time or two in one call: a value's poll panics and then its `Drop`
//! ([`OnDrop`]) as the primitive drops it, or the task's waker as the primitive wakes it for
//! the values still queued; `clear` ([`Op::Clear`]) and the primitive's drop meet several
//! values whose `Drop` panics. Whatever came out of a call, `clear` or the drop must be the
//! first panic raised in it (later ones are the primitive's to drop), and after a value's
//! panic the task's waker is registered all the same: every later wake from outside reaches
//! it, as after a call that returned `Pending`. A value whose `Drop` panics even while a panic
//! unwinds ([`OnDrop::PanicUnwinding`]) aborts the process if the primitive drops it there
//! without catching it: the programs that have one run in a child process
//! ([`isolated`](crate::isolated)).
//!
//! Besides the sets, merges, maps, buffers and joins, the model runs a set taken ahead of its
//! consumer ([`Target::Driven`]: `poll_progress` is several of the set's rounds, a call that
//! gives an output it holds is none, and a due value may wait behind the outputs it held when
//! it became due too)
//! and `concurrent_for_each` ([`Target::ConcurrentForEach`], checked as an unordered buffer).

use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, panic_any};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread;

use futures_core::Stream;
use futures_core::future::FusedFuture;
use futures_util::stream::poll_fn;
use pinfold_arena::MAX_VAIN_REPOLLS;
use pinfold_buffer::{BufferExt, ConcurrentForEach, ConcurrentForEachExt, Driven, ProgressStream};
use pinfold_testkit::panicking_waker::{CLONE_PANIC, WakerOps, WakerSwitches, panicking_waker};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::fault::{FaultPanic, Payload, Site, as_fault, expecting_panics, quiet_fault_panics};
use crate::program::{JoinOp, Pick, Via, WAKE_THREADS, join_op, via};
use crate::sizes::env_number;
use crate::source::{SourceHandle, source};
use crate::wake_threads::WakeThreads;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A value's poll never panics with the model locked, but a failing check might.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a value does in one poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// `Pending`, keeping the poll's waker.
    Pending,
    /// Wakes its own waker, then `Pending`.
    WakeSelf,
    /// Wakes the latest waker of the `pick`-th value that has one (itself, maybe), then
    /// `Pending`.
    Wake(Pick),
    /// A future's `Ready(Ok(id))`; a stream's `Ready(Some(id))`.
    Ready,
    /// A future's `Ready(Err(id))` (the first error of a `try_join_all`); a stream's item.
    Fail,
    /// A stream's `Ready(None)`; a future's `Ready(Ok(id))`.
    End,
    /// Panics.
    Panic,
}

/// How a value behaves: its acts in its first polls, then one act for ever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// What its first polls do, in order.
    pub first: Vec<Act>,
    /// What every later poll does (`Ready` for a stream: an always-ready stream).
    pub then: Act,
    /// Keeps the waker of its first poll and never takes another (joins only: the contract
    /// does not allow it, but a join must not spin its task on it).
    pub keeps_first: bool,
    /// What its `Drop` does.
    pub on_drop: OnDrop,
}

/// What a value does when it is dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnDrop {
    /// Nothing.
    #[default]
    Quiet,
    /// Panics, unless its thread is unwinding already (where a second panic that leaves the
    /// `Drop` aborts the process, whatever the primitive does about it).
    Panic,
    /// Panics, even while its thread unwinds: a primitive that drops it there without catching
    /// the panic aborts the process (so the cases that use it run in a child process).
    PanicUnwinding,
}

impl Script {
    /// A value that is `Pending` until woken, and `Ready` at its `n + 1`-th poll.
    pub fn pending_then_ready(n: usize) -> Self {
        let mut first = vec![Act::Pending; n];
        first.push(Act::Ready);
        Self {
            first,
            then: Act::Pending,
            keeps_first: false,
            on_drop: OnDrop::Quiet,
        }
    }

    /// A value that is `Ready` at its first poll.
    pub fn ready() -> Self {
        Self::pending_then_ready(0)
    }

    /// A value that is always `Pending`.
    pub fn pending() -> Self {
        Self {
            first: Vec::new(),
            then: Act::Pending,
            keeps_first: false,
            on_drop: OnDrop::Quiet,
        }
    }

    /// A value that wakes itself at every poll, for ever.
    pub fn spinner() -> Self {
        Self {
            first: Vec::new(),
            then: Act::WakeSelf,
            keeps_first: false,
            on_drop: OnDrop::Quiet,
        }
    }

    /// A value that wakes itself `n` times, then is always `Pending`.
    pub fn wakes_self(n: usize) -> Self {
        Self {
            first: vec![Act::WakeSelf; n],
            then: Act::Pending,
            keeps_first: false,
            on_drop: OnDrop::Quiet,
        }
    }

    /// A future that keeps the waker of its first poll and is `Pending` until finished.
    pub fn keeper() -> Self {
        Self {
            first: Vec::new(),
            then: Act::Pending,
            keeps_first: true,
            on_drop: OnDrop::Quiet,
        }
    }

    /// The same script, with a `Drop` that does `on_drop`.
    pub fn dropping(self, on_drop: OnDrop) -> Self {
        Self { on_drop, ..self }
    }

    /// A value that panics at its first poll.
    pub fn panics() -> Self {
        Self {
            first: vec![Act::Panic],
            ..Self::pending()
        }
    }

    fn act(&self, poll: usize) -> Act {
        self.first.get(poll).copied().unwrap_or(self.then)
    }
}

/// Where a value is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Pushed and not finished.
    Live,
    /// Gave its output (a future) or its end (a stream); `true` once the primitive yielded
    /// the output.
    Finished { yielded: bool },
    /// Dropped before it finished (refused by a full set, or its poll panicked).
    Gone,
    /// A future that finished, whose `Drop` panicked as the primitive dropped it: its output
    /// went with it (a join keeps it: [`Finished`](Life::Finished) still).
    Lost,
}

/// The model of one value.
#[derive(Debug)]
struct Value {
    script: Script,
    /// What its next poll does instead of its script ([`Op::Finish`]).
    finish: Option<Act>,
    life: Life,
    polls: usize,
    /// The epoch it became due with, while it is due.
    due: Option<u64>,
    /// Whether it is due by a wake (not by its push or an item).
    by_wake: bool,
    /// The call it was last polled in (0: never).
    last_call: u64,
    /// The waker of its latest poll (of its first, for a `keeps_first` value).
    waker: Option<Waker>,
    /// Outputs the primitive gave while it was due, the most values it held meanwhile, and
    /// the outputs it held, taken ahead, when the value became due.
    waited: usize,
    slots: usize,
    ahead: usize,
    dropped: bool,
    /// Pushed (into a buffer's source) before the buffer was first driven: it may have been
    /// pulled by an undriven `poll_next`, which runs ahead of a slow head, so the driven bound
    /// is not checked when it starts.
    before_driven: bool,
}

/// What the model checks of the primitive under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// A set, merge or map: (a), (b), (c), the budget, the wakes.
    Set,
    /// A join: as a set, but its first `eager_calls` calls poll every future.
    Join {
        /// The calls that poll every future (`P + 1`).
        eager_calls: u64,
    },
    /// A stream buffer: (a), (b), the wakes, and the bound on running and held futures.
    Buffer {
        /// Futures running at most.
        concurrency: usize,
        /// Whether it yields in input order.
        ordered: bool,
        /// Its window, if any.
        window: Option<usize>,
        /// Whether it has been driven (`poll_progress` called): from then on an ordered buffer
        /// without a window keeps what runs and is held to its concurrency, in `poll_next` too;
        /// before, it may run ahead of a slow head.
        driven: bool,
    },
}

/// How the last call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// No call yet, or the last one gave something: the consumer calls again unasked.
    Ready,
    /// `Pending`: the task waits for a wake.
    Pending,
    /// A panic reached the caller.
    Panic,
    /// The task's waker could not be reached for good: a wake from outside a call reached it
    /// and its `wake` panicked in the code that woke the value (the one notification of that
    /// burst of wakes is spent, the task was not woken, and later wakes of the burst reach
    /// nobody until the next call, which finds them all; `futures-util`'s sets do the same),
    /// or a call could not register it because its `clone` panicked. The consumer, which saw
    /// the panic, calls again unasked (as after [`Ready`](After::Ready)).
    WakePanic,
}

/// The reference: every value's state, the call, and what was seen wrong.
struct Model {
    rules: Rules,
    streams: bool,
    values: Vec<Value>,
    /// Calls started; the epoch.
    call: u64,
    in_call: bool,
    /// Values the primitive held when the call started.
    held_at_start: usize,
    polled_in_call: usize,
    vain_in_call: usize,
    /// Whether a value's poll panicked in this call.
    value_panicked: bool,
    /// Whether this call may be several of the primitive's rounds (a `Driven` set's
    /// `poll_progress`), each polling a value at most once.
    rounds: bool,
    /// Whether a value woke a value (itself or another) in this call.
    woke_in_call: bool,
    /// Whether the primitive takes outputs ahead of its consumer (`Driven`): those it holds
    /// when a value becomes due come before that value's, and add to how long it waits.
    takes_ahead: bool,
    /// Task wakes made by values themselves through a clone of the task's waker (a join's
    /// futures polled with it) in this call.
    user_task_wakes: usize,
    task_waker: Waker,
    /// Task wakes counted when the last call started.
    task_wakes_at_start: usize,
    after: After,
    /// The operation being run, for messages.
    op: usize,
    /// Ids the ordered buffer yielded, in order.
    yielded: Vec<u32>,
    /// Whether to print every event (`PINFOLD_ORDER_TRACE=1`).
    trace: bool,
    violations: Vec<String>,
    /// The task waker's switches: how many panics it had raised when a value raised one.
    switches: Arc<WakerSwitches>,
    /// The panics values raised since the driver last took them, in order.
    raised: Vec<Raised>,
    /// The first panic a value raised in the last call, `clear` or drop, if one did.
    first_raised: Option<FaultPanic>,
}

/// A panic a value raised, and how many the task's waker had raised before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Raised {
    fault: FaultPanic,
    waker_panics_before: usize,
}

impl Model {
    fn violation(&mut self, what: String) {
        let call = self.call;
        let op = self.op;
        self.violations
            .push(format!("op {op}, call {call}: {what}"));
    }

    /// Notes that value `id` raises a panic at `site`: the payload to raise.
    fn raise(&mut self, id: usize, site: Site) -> FaultPanic {
        let fault = FaultPanic {
            id: id as u32,
            site,
        };
        let waker_panics_before = self.switches.panics();
        self.raised.push(Raised {
            fault,
            waker_panics_before,
        });
        fault
    }

    /// Checks what reached the caller of `what` (`caught`, a panic's payload) against the
    /// panics raised meanwhile (`raised`, with the task waker's panics counted at its start,
    /// `waker_panics`): a panic comes out if and only if one was raised, and it is the first
    /// raised. A primitive that drops or wakes after a value panicked (the value itself, the
    /// others in `clear` or its drop, the task) drops the later panics.
    fn check_first_panic(
        &mut self,
        what: &str,
        caught: Option<&Payload>,
        raised: &[Raised],
        waker_panics: usize,
    ) {
        let waker_panicked = self.switches.panics() > waker_panics;
        let waker_first = match raised.first() {
            Some(first) => first.waker_panics_before > waker_panics,
            None => waker_panicked,
        };
        let Some(payload) = caught else {
            if !raised.is_empty() {
                let faults: Vec<FaultPanic> = raised.iter().map(|r| r.fault).collect();
                self.violation(format!("{what}: the panics {faults:?} were swallowed"));
            }
            return;
        };
        let message = match as_fault(&**payload) {
            Ok(fault) => format!("{fault:?}"),
            Err(message) => message,
        };
        if waker_first {
            if !message.starts_with("panicking waker") {
                self.violation(format!(
                    "{what}: the task's waker panicked first, but {message} came out"
                ));
            }
        } else if let Some(first) = raised.first() {
            if as_fault(&**payload) != Ok(first.fault) {
                let faults: Vec<FaultPanic> = raised.iter().map(|r| r.fault).collect();
                self.violation(format!(
                    "{what}: {message} came out, not the first panic raised (of {faults:?})"
                ));
            }
        } else {
            self.violation(format!(
                "{what}: a panic nothing raised came out: {message}"
            ));
        }
    }

    fn is_join(&self) -> bool {
        matches!(self.rules, Rules::Join { .. })
    }

    fn is_buffer(&self) -> bool {
        matches!(self.rules, Rules::Buffer { .. })
    }

    /// Whether `id` is exempt from (a) and (c): a join's eager calls, and a join's future that
    /// keeps its first waker.
    fn exempt(&self, id: usize) -> bool {
        match self.rules {
            Rules::Join { eager_calls } => {
                self.call <= eager_calls || self.values[id].script.keeps_first
            }
            _ => false,
        }
    }

    fn live(&self) -> impl Iterator<Item = (usize, &Value)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.life == Life::Live)
    }

    /// Makes `id` due (with the current epoch) unless it is already.
    fn make_due(&mut self, id: usize, by_wake: bool) {
        let epoch = self.call;
        let held = self.held();
        let ahead = if self.takes_ahead {
            self.outputs_held()
        } else {
            0
        };
        let value = &mut self.values[id];
        if value.life == Life::Live && value.due.is_none() {
            value.due = Some(epoch);
            value.by_wake = by_wake;
            value.waited = 0;
            value.slots = held;
            value.ahead = ahead;
        }
    }

    /// Values the primitive holds (live), as the model counts them.
    fn held(&self) -> usize {
        self.live().count()
    }

    /// The `pick`-th live value with a waker, and a clone of that waker.
    fn wakeable(&self, pick: Pick) -> Option<(usize, Waker)> {
        let candidates: Vec<usize> = self
            .live()
            .filter(|(_, v)| v.waker.is_some())
            .map(|(id, _)| id)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let id = candidates[pick.index(candidates.len())];
        Some((id, self.values[id].waker.clone().expect("a waker")))
    }

    /// The checks of a poll of `id`, and what the poll does.
    fn on_poll(&mut self, id: usize, waker: &Waker) -> Act {
        let call = self.call;
        if !self.in_call {
            self.violation(format!("value {id} polled outside any call"));
        }
        if self.values[id].life != Life::Live {
            let life = self.values[id].life;
            self.violation(format!("value {id} polled when it is {life:?}"));
        }
        if self.values[id].last_call == call && !self.rounds {
            self.violation(format!("value {id} polled twice in one call"));
        }
        let exempt = self.exempt(id);
        match self.values[id].due {
            None if !exempt => self.violation(format!(
                "value {id} polled while not due (not woken since its last poll)"
            )),
            Some(epoch) if !exempt && !self.is_buffer() => {
                let passed: Vec<String> = self
                    .live()
                    .filter(|&(u, v)| {
                        u != id
                            && v.last_call != call
                            && !self.exempt(u)
                            && v.due.is_some_and(|e| e < epoch)
                    })
                    .map(|(u, v)| format!("{u} (due since {})", v.due.unwrap_or_default()))
                    .collect();
                if !passed.is_empty() {
                    self.violation(format!(
                        "value {id} (due since {epoch}) polled before values due earlier: {}",
                        passed.join(", ")
                    ));
                }
            }
            _ => {}
        }
        self.polled_in_call += 1;
        let value = &mut self.values[id];
        value.last_call = call;
        value.due = None;
        value.by_wake = false;
        if !(value.script.keeps_first && value.waker.is_some()) {
            value.waker = Some(waker.clone());
        }
        let act = value
            .finish
            .take()
            .unwrap_or_else(|| value.script.act(value.polls));
        value.polls += 1;
        if self.trace {
            eprintln!("  call {call}: poll {id} -> {act:?}");
        }
        if value.polls == 1 {
            self.check_started(id);
        }
        act
    }

    /// A buffer's bound on what runs and is held, when `id` starts.
    fn check_started(&mut self, id: usize) {
        let Rules::Buffer {
            concurrency,
            ordered,
            window,
            driven,
        } = self.rules
        else {
            return;
        };
        let running = self.live().filter(|(_, v)| v.polls > 0).count();
        if running > concurrency.min(window.unwrap_or(usize::MAX)) {
            self.violation(format!(
                "value {id} started with {running} running, over the concurrency {concurrency}"
            ));
        }
        if self.values[id].before_driven {
            return;
        }
        let held = self
            .values
            .iter()
            .filter(|v| v.life == Life::Finished { yielded: false })
            .count();
        let bound = match window {
            Some(w) => Some(w),
            None if driven => Some(concurrency),
            None => None,
        };
        if ordered
            && let Some(bound) = bound
            && running + held > bound
        {
            self.violation(format!(
                "value {id} started with {running} running and {held} outputs held, over the \
                 bound {bound}"
            ));
        }
    }

    /// What a poll of `id` did: `woke` is the value it woke (itself or another), if any.
    fn on_result(&mut self, id: usize, act: Act, woke: Option<usize>) {
        if let Some(target) = woke {
            self.make_due(target, true);
            self.woke_in_call = true;
        }
        match act {
            Act::Pending | Act::WakeSelf | Act::Wake(_) => {
                let value = &self.values[id];
                if value.polls > 1 && woke != Some(id) {
                    self.vain_in_call += 1;
                }
            }
            Act::Ready | Act::Fail if self.streams => self.make_due(id, false),
            Act::Ready | Act::Fail | Act::End => {
                self.values[id].life = Life::Finished { yielded: false };
                self.values[id].due = None;
            }
            Act::Panic => {
                self.values[id].life = Life::Gone;
                self.values[id].due = None;
                self.value_panicked = true;
            }
        }
    }

    fn begin_call(&mut self, held: usize) {
        self.call += 1;
        self.in_call = true;
        self.held_at_start = held;
        self.polled_in_call = 0;
        self.vain_in_call = 0;
        self.user_task_wakes = 0;
        self.value_panicked = false;
        self.rounds = false;
        self.woke_in_call = false;
    }

    /// Outputs the primitive holds: futures that gave theirs, not yielded yet.
    fn outputs_held(&self) -> usize {
        self.values
            .iter()
            .filter(|v| v.life == Life::Finished { yielded: false })
            .count()
    }

    /// The checks of a call that returned `Pending`; `task_wakes` the wakes of the task during
    /// it.
    fn on_pending(&mut self, task_wakes: usize) {
        let call = self.call;
        let buffer = self.is_buffer();
        let unpolled: Vec<usize> = self
            .live()
            .filter(|(_, v)| v.due.is_some() && v.last_call != call && (!buffer || v.polls > 0))
            .map(|(id, _)| id)
            .collect();
        let spent = self.polled_in_call >= self.held_at_start.max(1)
            || self.vain_in_call >= MAX_VAIN_REPOLLS;
        if !unpolled.is_empty() && !buffer && !spent {
            self.violation(format!(
                "Pending with values due and not polled in the call ({unpolled:?}) after {} \
                 polls of {} values held, {} vain",
                self.polled_in_call, self.held_at_start, self.vain_in_call
            ));
        }
        let due: Vec<usize> = self
            .live()
            .filter(|(_, v)| v.due.is_some() && (!buffer || v.polls > 0))
            .map(|(id, _)| id)
            .collect();
        let anything_due = self.live().any(|(_, v)| v.due.is_some());
        self.check_task_woken("Pending", &due, anything_due, task_wakes);
    }

    /// The task was woken (`task_wakes` times in the call) if a value in `due` is due, and
    /// not by the primitive if nothing is (`anything_due`); `end` says how the call ended.
    fn check_task_woken(
        &mut self,
        end: &str,
        due: &[usize],
        anything_due: bool,
        task_wakes: usize,
    ) {
        if !due.is_empty() && task_wakes == 0 {
            self.violation(format!(
                "{end} with values due ({due:?}) and the task not woken"
            ));
        }
        let own = task_wakes.saturating_sub(self.user_task_wakes);
        if !anything_due && own > 0 {
            self.violation(format!(
                "{end} with nothing due, and the task woken {own} times by the primitive"
            ));
        }
    }

    /// The checks of a set's, merge's or map's call that a value's panic ended (the task's
    /// waker did not panic): as after `Pending`, the task was woken if anything is due (values
    /// the call did not reach, or woken in it), and not by the primitive if nothing is and no
    /// value was woken in the call (the contract lets it wake the task for a value woken in
    /// the call, also one that left since: the value that panicked).
    fn on_value_panic(&mut self, task_wakes: usize) {
        let due: Vec<usize> = self
            .live()
            .filter(|(_, v)| v.due.is_some())
            .map(|(id, _)| id)
            .collect();
        let anything_due = !due.is_empty() || self.woke_in_call;
        self.check_task_woken(
            "a call a value's panic ended",
            &due,
            anything_due,
            task_wakes,
        );
    }

    /// The checks of a call that gave the output or item of `id`.
    fn on_output(&mut self, id: usize) {
        let streams = self.streams;
        let value = &mut self.values[id];
        match value.life {
            Life::Finished { yielded: false } if !streams => {
                value.life = Life::Finished { yielded: true };
            }
            Life::Live if streams && value.last_call == self.call => {}
            life => {
                self.violation(format!("an output of value {id} came when it is {life:?}"));
            }
        }
        if let Rules::Buffer { ordered: true, .. } = self.rules {
            if self.yielded.last().is_some_and(|&last| last > id as u32) {
                let last = self.yielded.last().copied().unwrap_or_default();
                self.violation(format!(
                    "ordered buffer gave value {id}'s output after value {last}'s"
                ));
            }
            self.yielded.push(id as u32);
            return;
        }
        // The value that gave the output held a slot until it did; so do outputs a driven
        // buffer finished and holds in their slots, given ahead of a value woken after them.
        let finished = self
            .values
            .iter()
            .filter(|v| v.life == Life::Finished { yielded: false })
            .count();
        let held = self.held() + finished + 1;
        let mut waited_too_long = Vec::new();
        for (u, value) in self.values.iter_mut().enumerate() {
            if u != id && value.life == Life::Live && value.due.is_some() {
                value.waited += 1;
                value.slots = value.slots.max(held);
                if value.waited > value.slots + value.ahead {
                    waited_too_long.push((u, value.waited, value.slots, value.ahead));
                }
            }
        }
        for (u, waited, slots, ahead) in waited_too_long {
            self.violation(format!(
                "value {u} due and waiting behind {waited} outputs, more than the {slots} values \
                 held and {ahead} outputs taken ahead"
            ));
        }
    }
}

/// A value whose every poll does what its [`Script`] says, and reports to the model. A future
/// (`Ready(Ok(id))`, or `Err(id)` for [`Act::Fail`]) and a stream (items `id`).
pub struct Scripted {
    id: usize,
    model: Arc<Mutex<Model>>,
}

impl fmt::Debug for Scripted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Scripted").field(&self.id).finish()
    }
}

impl Scripted {
    /// One poll: the model's checks, then the act.
    fn step(&self, cx: &Context<'_>) -> Act {
        let (act, wake, fault) = {
            let mut model = lock(&self.model);
            let act = model.on_poll(self.id, cx.waker());
            let wake = match act {
                Act::WakeSelf => Some((self.id, cx.waker().clone())),
                Act::Wake(pick) => model.wakeable(pick),
                _ => None,
            };
            if let Some((_, waker)) = &wake
                && waker.will_wake(&model.task_waker)
            {
                model.user_task_wakes += 1;
            }
            model.on_result(self.id, act, wake.as_ref().map(|(id, _)| *id));
            let fault = (act == Act::Panic).then(|| model.raise(self.id, Site::Poll));
            (act, wake, fault)
        };
        if let Some((_, waker)) = wake {
            waker.wake();
        }
        if let Some(fault) = fault {
            panic_any(fault);
        }
        act
    }
}

impl Future for Scripted {
    type Output = Result<u32, u32>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<u32, u32>> {
        let id = self.id as u32;
        match self.step(cx) {
            Act::Ready | Act::End => Poll::Ready(Ok(id)),
            Act::Fail => Poll::Ready(Err(id)),
            _ => Poll::Pending,
        }
    }
}

impl Stream for Scripted {
    type Item = u32;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        let id = self.id as u32;
        match self.step(cx) {
            Act::Ready | Act::Fail => Poll::Ready(Some(id)),
            Act::End => Poll::Ready(None),
            _ => Poll::Pending,
        }
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        let mut model = lock(&self.model);
        let value = &mut model.values[self.id];
        let twice = value.dropped;
        value.dropped = true;
        if value.life == Life::Live {
            value.life = Life::Gone;
            value.due = None;
        }
        if twice {
            let id = self.id;
            model.violation(format!("value {id} dropped twice"));
        }
        let panics = match model.values[self.id].script.on_drop {
            OnDrop::Quiet => false,
            OnDrop::Panic => !thread::panicking(),
            OnDrop::PanicUnwinding => true,
        };
        let output_lost = !model.is_join() && !model.streams;
        let value = &mut model.values[self.id];
        if panics && output_lost && value.life == (Life::Finished { yielded: false }) {
            value.life = Life::Lost;
        }
        if panics {
            let fault = model.raise(self.id, Site::Drop);
            drop(model);
            panic_any(fault);
        }
    }
}

/// A primitive under test, as the driver calls it.
trait Structure {
    /// Adds a value; gives it back if full (or if the primitive takes none: a join).
    fn push(&mut self, value: Scripted) -> Result<(), Scripted>;
    /// One call: `poll_next` (or `poll_progress` if `progress` and the primitive has it; a
    /// join's `poll`). `Ready(Some(id))`: an output of value `id`; `Ready(None)`: it ended, or
    /// `poll_progress` is done.
    fn call(&mut self, progress: bool, cx: &mut Context<'_>) -> Poll<Option<u32>>;
    /// How many values it holds, if it says.
    fn len(&self) -> Option<usize>;
    /// `clear()`: drops every value it holds; `false` if it has no `clear`.
    fn clear(&mut self) -> bool {
        false
    }
    /// What was wrong with its final output (a join's), if anything.
    fn error(&mut self) -> Option<String> {
        None
    }
    /// Whether it is terminated: a join that completed, or that a future's panic ended.
    fn terminated(&self) -> bool {
        false
    }
}

fn id_of(output: Result<u32, u32>) -> u32 {
    output.unwrap_or_else(|id| id)
}

/// `Structure` for a set, merge or map. A set or merge reaches its keyed set's `len` through
/// `Deref` (`deref`); a map has a `len` of its own.
macro_rules! set_structure {
    (deref $set:ty, |$this:ident, $value:ident| $push:expr, $map:expr) => {
        set_structure!(
            @impl $set, |$this, $value| $push, $map,
            |set: &$set| (**set).len(),
            |set: &mut $set| (**set).clear()
        );
    };
    ($set:ty, |$this:ident, $value:ident| $push:expr, $map:expr) => {
        set_structure!(
            @impl $set, |$this, $value| $push, $map,
            |map: &$set| map.len(),
            |map: &mut $set| map.clear()
        );
    };
    (@impl $set:ty, |$this:ident, $value:ident| $push:expr, $map:expr, $len:expr, $clear:expr) => {
        impl Structure for $set {
            fn push(&mut self, $value: Scripted) -> Result<(), Scripted> {
                let $this = self;
                $push
            }
            fn call(&mut self, _: bool, cx: &mut Context<'_>) -> Poll<Option<u32>> {
                Pin::new(self).poll_next(cx).map(|out| out.map($map))
            }
            fn len(&self) -> Option<usize> {
                Some(($len)(self))
            }
            fn clear(&mut self) -> bool {
                ($clear)(self);
                true
            }
        }
    };
}

set_structure!(
    deref pinfold_unordered::FuturesUnorderedBounded<Scripted>,
    |set, value| (**set).try_push(value),
    id_of
);
set_structure!(
    deref pinfold_unordered::FuturesUnordered<Scripted>,
    |set, value| {
        (**set).push(value);
        Ok(())
    },
    id_of
);
set_structure!(
    deref pinfold_merge::MergeBounded<Scripted>,
    |set, value| (**set).try_push(value),
    |id| id
);
set_structure!(
    deref pinfold_merge::Merge<Scripted>,
    |set, value| {
        (**set).push(value);
        Ok(())
    },
    |id| id
);
set_structure!(
    pinfold_map::FutureMap<u32, Scripted>,
    |map, value| {
        map.insert(value.id as u32, value);
        Ok(())
    },
    |(key, out)| {
        assert_eq!(key, id_of(out), "an output under another value's key");
        key
    }
);
set_structure!(
    pinfold_map::StreamMap<u32, Scripted>,
    |map, value| {
        map.insert(value.id as u32, value);
        Ok(())
    },
    |(key, item)| {
        assert_eq!(key, item, "an item under another value's key");
        key
    }
);

/// A stream buffer over a hand-fed source.
struct Buffer<B> {
    source: SourceHandle<Scripted>,
    buffer: Pin<Box<B>>,
}

type Pull = Pin<Box<dyn Stream<Item = Scripted>>>;

fn pull(source: crate::source::Source<Scripted>) -> Pull {
    let mut source = source;
    Box::pin(poll_fn(move |cx| source.poll_pull(cx)))
}

impl<B: ProgressStream<Item = Result<u32, u32>>> Structure for Buffer<B> {
    fn push(&mut self, value: Scripted) -> Result<(), Scripted> {
        self.source.push(value);
        Ok(())
    }
    fn call(&mut self, progress: bool, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        if progress {
            self.buffer.as_mut().poll_progress(cx).map(|()| None)
        } else {
            self.buffer.as_mut().poll_next(cx).map(|out| out.map(id_of))
        }
    }
    fn len(&self) -> Option<usize> {
        None
    }
}

/// A set taken ahead of its consumer: `FuturesUnordered` through `Driven`, whose
/// `poll_progress` is as many of the set's rounds as it takes to be `Pending` or hold its
/// limit.
type DrivenSet = Driven<pinfold_unordered::FuturesUnordered<Scripted>>;

impl Structure for DrivenSet {
    fn push(&mut self, value: Scripted) -> Result<(), Scripted> {
        (**self.get_mut()).push(value);
        Ok(())
    }
    fn call(&mut self, progress: bool, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        if progress {
            Pin::new(self).poll_progress(cx).map(|()| None)
        } else {
            Pin::new(self).poll_next(cx).map(|out| out.map(id_of))
        }
    }
    fn len(&self) -> Option<usize> {
        Some((**self.get_ref()).len())
    }
    fn clear(&mut self) -> bool {
        (**self.get_mut()).clear();
        true
    }
}

/// A future that runs a value and drops its output: the consumer's future of
/// `concurrent_for_each`.
struct Discard(Scripted);

impl Future for Discard {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// `concurrent_for_each` of values pulled from a source, each run as it is.
type RunEach = ConcurrentForEach<Pull, Discard, fn(Scripted) -> Discard>;

/// `concurrent_for_each` over a hand-fed source of values, each run as it is.
struct ForEach {
    source: SourceHandle<Scripted>,
    run: Pin<Box<RunEach>>,
}

impl Structure for ForEach {
    fn push(&mut self, value: Scripted) -> Result<(), Scripted> {
        self.source.push(value);
        Ok(())
    }
    fn call(&mut self, _: bool, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        self.run.as_mut().poll(cx).map(|()| None)
    }
    fn len(&self) -> Option<usize> {
        None
    }
}

/// A join, polled until it completes.
struct Join<J: FusedFuture> {
    join: Option<Pin<Box<J>>>,
    check: fn(J::Output) -> Result<(), String>,
    errors: Vec<String>,
}

impl<J: FusedFuture> Join<J> {
    fn new(join: J, check: fn(J::Output) -> Result<(), String>) -> Self {
        Self {
            join: Some(Box::pin(join)),
            check,
            errors: Vec::new(),
        }
    }
}

impl<J: FusedFuture> Structure for Join<J> {
    fn push(&mut self, value: Scripted) -> Result<(), Scripted> {
        Err(value)
    }
    fn call(&mut self, _: bool, cx: &mut Context<'_>) -> Poll<Option<u32>> {
        let Some(join) = self.join.as_mut() else {
            return Poll::Ready(None);
        };
        let output = std::task::ready!(join.as_mut().poll(cx));
        self.join = None;
        if let Err(error) = (self.check)(output) {
            self.errors.push(error);
        }
        Poll::Ready(None)
    }
    fn len(&self) -> Option<usize> {
        None
    }
    fn error(&mut self) -> Option<String> {
        self.errors.pop()
    }
    fn terminated(&self) -> bool {
        self.join.as_ref().is_none_or(|join| join.is_terminated())
    }
}

/// The primitive a program runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `FuturesUnorderedBounded` of capacity [`CAPACITY`].
    FuturesUnorderedBounded,
    /// `FuturesUnordered`.
    FuturesUnordered,
    /// `MergeBounded` of capacity [`CAPACITY`].
    MergeBounded,
    /// `Merge`.
    Merge,
    /// `FutureMap` keyed by value id.
    FutureMap,
    /// `StreamMap` keyed by value id.
    StreamMap,
    /// `unordered_buffer(CONCURRENCY)`; `driven`: [`Op::Progress`] calls `poll_progress`.
    UnorderedBuffer {
        /// Whether `poll_progress` is called.
        driven: bool,
    },
    /// `ordered_buffer(CONCURRENCY)`, with `window(w)` if given.
    OrderedBuffer {
        /// Its window.
        window: Option<usize>,
        /// Whether `poll_progress` is called.
        driven: bool,
    },
    /// `FuturesUnordered` made a `ProgressStream` by its `driven(DRIVEN_LIMIT)` (which goes on
    /// driving the set at the limit: each future gives one output): [`Op::Progress`] calls its
    /// `poll_progress`.
    Driven,
    /// `concurrent_for_each(CONCURRENCY, f)` over a source of values, `f` running each.
    ConcurrentForEach,
}

/// The capacity of the bounded sets: small enough for programs to fill.
pub const CAPACITY: usize = 48;
/// The concurrency of the buffers.
pub const CONCURRENCY: usize = 4;
/// The limit of [`Target::Driven`].
pub const DRIVEN_LIMIT: usize = 3;

impl Target {
    /// Every target: the sets, merges and maps, and the buffers driven and not, with and
    /// without a window.
    pub const ALL: [Self; 11] = [
        Self::FuturesUnorderedBounded,
        Self::FuturesUnordered,
        Self::MergeBounded,
        Self::Merge,
        Self::FutureMap,
        Self::StreamMap,
        Self::UnorderedBuffer { driven: false },
        Self::UnorderedBuffer { driven: true },
        Self::OrderedBuffer {
            window: None,
            driven: false,
        },
        Self::OrderedBuffer {
            window: None,
            driven: true,
        },
        Self::OrderedBuffer {
            window: Some(3),
            driven: true,
        },
    ];

    /// The adapters that run futures on an arena of their own or take a set's outputs ahead:
    /// `Driven`, `concurrent_for_each`.
    pub const ADAPTERS: [Self; 2] = [Self::Driven, Self::ConcurrentForEach];

    /// Whether its values are streams.
    pub fn streams(self) -> bool {
        matches!(self, Self::MergeBounded | Self::Merge | Self::StreamMap)
    }

    fn rules(self) -> Rules {
        match self {
            Self::UnorderedBuffer { .. } => Rules::Buffer {
                concurrency: CONCURRENCY,
                ordered: false,
                window: None,
                driven: false,
            },
            Self::OrderedBuffer { window, .. } => Rules::Buffer {
                concurrency: CONCURRENCY,
                ordered: true,
                window,
                driven: false,
            },
            Self::ConcurrentForEach => Rules::Buffer {
                concurrency: CONCURRENCY,
                ordered: false,
                window: None,
                driven: false,
            },
            _ => Rules::Set,
        }
    }

    fn driven(self) -> bool {
        matches!(
            self,
            Self::UnorderedBuffer { driven: true }
                | Self::OrderedBuffer { driven: true, .. }
                | Self::Driven
        )
    }

    /// Whether it takes outputs ahead of its consumer.
    fn takes_ahead(self) -> bool {
        self == Self::Driven
    }

    fn make(self) -> Box<dyn Structure> {
        match self {
            Self::FuturesUnorderedBounded => {
                Box::new(pinfold_unordered::FuturesUnorderedBounded::new(CAPACITY))
            }
            Self::FuturesUnordered => Box::new(pinfold_unordered::FuturesUnordered::new()),
            Self::MergeBounded => Box::new(pinfold_merge::MergeBounded::new(CAPACITY)),
            Self::Merge => Box::new(pinfold_merge::Merge::new()),
            Self::FutureMap => Box::new(pinfold_map::FutureMap::<u32, Scripted>::new()),
            Self::StreamMap => Box::new(pinfold_map::StreamMap::<u32, Scripted>::new()),
            Self::UnorderedBuffer { .. } => {
                let (handle, pulled) = source();
                Box::new(Buffer {
                    source: handle,
                    buffer: Box::pin(pull(pulled).unordered_buffer(CONCURRENCY)),
                })
            }
            Self::OrderedBuffer { window, .. } => {
                let (handle, pulled) = source();
                let buffer = pull(pulled).ordered_buffer(CONCURRENCY);
                let buffer = match window {
                    Some(w) => buffer.window(w),
                    None => buffer,
                };
                Box::new(Buffer {
                    source: handle,
                    buffer: Box::pin(buffer),
                })
            }
            Self::Driven => {
                Box::new(pinfold_unordered::FuturesUnordered::new().driven(DRIVEN_LIMIT))
            }
            Self::ConcurrentForEach => {
                let (handle, pulled) = source();
                let run: fn(Scripted) -> Discard = Discard;
                Box::new(ForEach {
                    source: handle,
                    run: Box::pin(pull(pulled).concurrent_for_each(CONCURRENCY, run)),
                })
            }
        }
    }
}

/// One operation of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// Push a value with this script.
    Push(Script),
    /// Push `count` values with this script.
    PushMany { count: u8, script: Script },
    /// Wake the `pick`-th live value that has a waker, `times` times in a row, from `via`.
    Wake { pick: Pick, via: Via, times: u8 },
    /// Make the `pick`-th live value's next poll `Ready` (a stream's: its end), and wake it.
    Finish { pick: Pick, via: Via },
    /// One call (`poll_next`, a join's `poll`), woken or not.
    Poll,
    /// One call of `poll_progress` (a buffer that is driven), else as [`Poll`](Op::Poll).
    Progress,
    /// Call as long as the task was woken or the last call gave something (at most 64).
    Run,
    /// The next wake of the task's waker panics.
    WakerPanics,
    /// `clear()` (a set, merge or map; nothing for the others).
    Clear,
}

/// An act of a script for values that are streams or not, with panics or not.
pub fn act(streams: bool, panics: bool) -> impl Strategy<Value = Act> {
    let pick = any::<u64>().prop_map(|p| Act::Wake(Pick(p)));
    prop_oneof![
        4 => Just(Act::Pending),
        3 => Just(Act::WakeSelf),
        2 => pick,
        2 => Just(Act::Ready),
        u32::from(streams) => Just(Act::End),
        u32::from(panics) => Just(Act::Panic),
    ]
}

/// A script: up to five acts, then `Pending` (mostly), a self-wake or (streams) an item for ever;
/// with panics, one value in four panics in its `Drop` too (so that a value whose poll panics
/// often panics again as it is dropped).
pub fn script(streams: bool, panics: bool) -> impl Strategy<Value = Script> {
    (
        prop::collection::vec(act(streams, panics), 0..5),
        prop_oneof![
            6 => Just(Act::Pending),
            1 => Just(Act::WakeSelf),
            u32::from(streams) => Just(Act::Ready),
        ],
        prop::bool::weighted(if panics { 0.25 } else { 0.0 }),
    )
        .prop_map(|(first, then, drop_panics)| Script {
            first,
            then,
            keeps_first: false,
            on_drop: if drop_panics {
                OnDrop::Panic
            } else {
                OnDrop::Quiet
            },
        })
}

/// An [`Op`] of a random program (with [`Op::WakerPanics`] and panicking values if `panics`).
pub fn op(streams: bool, panics: bool) -> impl Strategy<Value = Op> {
    let pick = || any::<u64>().prop_map(Pick);
    prop_oneof![
        5 => script(streams, panics).prop_map(Op::Push),
        1 => (1..40u8, script(streams, panics))
            .prop_map(|(count, script)| Op::PushMany { count, script }),
        4 => (pick(), via(), 1..=2u8).prop_map(|(pick, via, times)| Op::Wake { pick, via, times }),
        2 => (pick(), via()).prop_map(|(pick, via)| Op::Finish { pick, via }),
        4 => Just(Op::Poll),
        2 => Just(Op::Progress),
        2 => Just(Op::Run),
        u32::from(panics) => Just(Op::WakerPanics),
    ]
}

/// A random program of 1 to `max_ops` operations.
pub fn program(streams: bool, panics: bool, max_ops: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(streams, panics), 1..=max_ops)
}

/// Programs where a consumer pushes a ready value before each call while others are woken:
/// a woken value must not be starved by the values pushed after its wake.
pub fn push_before_poll(max_rounds: usize) -> impl Strategy<Value = Vec<Op>> {
    let round = (any::<u64>(), 0..3u8, 0..3u8).prop_map(|(pick, wakes, pushes)| {
        let mut ops = Vec::new();
        for _ in 0..wakes {
            ops.push(Op::Wake {
                pick: Pick(pick),
                via: Via::Here,
                times: 1,
            });
        }
        for _ in 0..=pushes {
            ops.push(Op::Push(Script::ready()));
        }
        ops.push(Op::Poll);
        ops
    });
    (1..6usize, prop::collection::vec(round, 1..=max_rounds)).prop_map(|(waiting, rounds)| {
        let mut ops = vec![
            Op::PushMany {
                count: waiting as u8,
                script: Script::pending_then_ready(1),
            },
            Op::Run,
        ];
        ops.extend(rounds.into_iter().flatten());
        ops
    })
}

/// Programs of values woken twice (or more) before their next poll, between calls that give
/// outputs and calls that do not.
pub fn double_wakes(max_rounds: usize) -> impl Strategy<Value = Vec<Op>> {
    let round = prop_oneof![
        3 => (any::<u64>(), 2..4u8).prop_map(|(pick, times)| Op::Wake {
            pick: Pick(pick),
            via: Via::Here,
            times,
        }),
        1 => Just(Op::Push(Script::ready())),
        1 => any::<u64>().prop_map(|pick| Op::Finish { pick: Pick(pick), via: Via::Here }),
        2 => Just(Op::Poll),
        1 => Just(Op::Progress),
        1 => Just(Op::Run),
    ];
    (1..8u8, prop::collection::vec(round, 1..=max_rounds)).prop_map(|(count, rounds)| {
        let mut ops = vec![
            Op::PushMany {
                count,
                script: Script::pending(),
            },
            Op::Run,
        ];
        ops.extend(rounds);
        ops
    })
}

/// Programs where values wake themselves in one call (and are deferred to the next) while
/// others, left queued by a call that gave an output or woken from outside, wait: the
/// deferred must not pass the queued.
pub fn deferred_then_woken(max_rounds: usize) -> impl Strategy<Value = Vec<Op>> {
    let round = prop_oneof![
        2 => (any::<u64>(), via()).prop_map(|(pick, via)| Op::Wake { pick: Pick(pick), via, times: 1 }),
        1 => (1..4usize).prop_map(|n| Op::Push(Script::wakes_self(n))),
        1 => Just(Op::Push(Script::pending())),
        2 => Just(Op::Push(Script::ready())),
        3 => Just(Op::Poll),
    ];
    (1..4u8, 1..6u8, prop::collection::vec(round, 1..=max_rounds)).prop_map(
        |(spinners, waiting, rounds)| {
            let mut ops = vec![
                Op::PushMany {
                    count: spinners,
                    script: Script::wakes_self(3),
                },
                Op::Push(Script::ready()),
                Op::PushMany {
                    count: waiting,
                    script: Script::pending(),
                },
                Op::Poll,
            ];
            ops.extend(rounds);
            ops
        },
    )
}

/// Programs where the task's waker panics at a call that yields on its budget (values that
/// wake themselves, or more than `MAX_VAIN_REPOLLS` values woken from outside and `Pending`
/// again), then values are woken from outside: the wakes must reach the task.
pub fn waker_panics_at_yield() -> impl Strategy<Value = Vec<Op>> {
    let vain = MAX_VAIN_REPOLLS as u8;
    (
        1..6u8,
        0..4u8,
        vain + 1..vain + 9,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(spinners, waiting, woken, vain_yield, pick)| {
            let mut ops = if vain_yield {
                let mut ops = vec![
                    Op::PushMany {
                        count: woken,
                        script: Script::pending(),
                    },
                    Op::Run,
                ];
                ops.extend((0..usize::from(woken)).map(|i| Op::Wake {
                    pick: Pick::at(i, usize::from(woken)),
                    via: Via::Here,
                    times: 1,
                }));
                ops
            } else {
                vec![
                    Op::PushMany {
                        count: waiting,
                        script: Script::pending(),
                    },
                    Op::PushMany {
                        count: spinners,
                        script: Script::spinner(),
                    },
                    Op::Poll,
                ]
            };
            ops.extend(waker_panics_then_a_wake(pick));
            ops
        })
}

/// Programs where a value's poll panics in a call that the task's last registration did not
/// outlive (a wake spent it): `waiting` values wait, one panics at its second poll, and a few
/// ready ones may be pushed before that call; after the panic, a wake of a waiting value must
/// reach the task (the call registered it again), and nothing due may be left unwoken.
pub fn value_panics_after_a_wake() -> impl Strategy<Value = Vec<Op>> {
    (1..5u8, 0..3u8, any::<u64>(), any::<bool>()).prop_map(|(waiting, ready, pick, twice)| {
        let panics = Script {
            first: vec![Act::Pending, Act::Panic],
            ..Script::pending()
        };
        let mut ops = vec![
            Op::PushMany {
                count: waiting,
                script: Script::pending(),
            },
            Op::Push(panics),
            Op::Poll,
            // The panicking value is the last pushed: its wake spends the registration.
            Op::Wake {
                pick: Pick(u64::MAX),
                via: Via::Here,
                times: 1,
            },
        ];
        ops.extend((0..ready).map(|_| Op::Push(Script::ready())));
        ops.extend([
            Op::Poll,
            Op::Wake {
                pick: Pick(pick),
                via: Via::Here,
                times: if twice { 2 } else { 1 },
            },
            Op::Run,
        ]);
        ops
    })
}

/// The task's waker panics at the call that follows; then value `pick` is woken from outside
/// and the task runs: the wake must reach it.
fn waker_panics_then_a_wake(pick: u64) -> [Op; 4] {
    [
        Op::WakerPanics,
        Op::Poll,
        Op::Wake {
            pick: Pick(pick),
            via: Via::Here,
            times: 1,
        },
        Op::Run,
    ]
}

/// The start of the programs aimed at a compound fault: `waiting` values are polled (the
/// task's waker registered), the first is woken from outside (which spends the registration:
/// the task is woken, and must be registered again for a later wake to reach it), and `value`
/// is pushed. A set polls it first in the next call (it was queued as it was added, the woken
/// value as the call began, behind it), so the woken value is still queued when it panics.
fn woken_then(waiting: u8, value: Script) -> Vec<Op> {
    vec![
        Op::PushMany {
            count: waiting,
            script: Script::pending(),
        },
        Op::Poll,
        Op::Wake {
            pick: Pick(0),
            via: Via::Here,
            times: 1,
        },
        Op::Push(value),
    ]
}

/// Programs where a value's poll panics and then its `Drop` panics too, as the primitive drops
/// it (see `woken_then`): the poll's panic comes out, the task is woken for the value still
/// queued, and a wake of a waiting value after the panic reaches the task.
pub fn value_panics_then_its_drop() -> impl Strategy<Value = Vec<Op>> {
    (2..5u8, any::<u64>()).prop_map(|(waiting, pick)| {
        let mut ops = woken_then(waiting, Script::panics().dropping(OnDrop::Panic));
        ops.extend([
            Op::Poll,
            Op::Wake {
                pick: Pick(pick),
                via: Via::Here,
                times: 1,
            },
            Op::Run,
        ]);
        ops
    })
}

/// Programs where a value's poll panics and the task's waker panics as the primitive wakes it
/// for the value still queued (see `woken_then`); in half of them the value's `Drop` panics
/// too. The value's panic comes out, and a wake of a waiting value after it reaches the task.
pub fn value_panics_then_the_task_waker() -> impl Strategy<Value = Vec<Op>> {
    (2..5u8, any::<u64>(), any::<bool>()).prop_map(|(waiting, pick, drop_too)| {
        let on_drop = if drop_too {
            OnDrop::Panic
        } else {
            OnDrop::Quiet
        };
        let mut ops = woken_then(waiting, Script::panics().dropping(on_drop));
        ops.extend(waker_panics_then_a_wake(pick));
        ops
    })
}

/// Programs that `clear` a primitive holding `panicking` values whose `Drop` panics beside
/// `quiet` ones, then push a ready value and run it: every value is dropped once, the first
/// panic comes out, and the primitive goes on.
pub fn drops_panic_in_clear() -> impl Strategy<Value = Vec<Op>> {
    (2..6u8, 0..3u8, any::<bool>()).prop_map(|(panicking, quiet, polled)| {
        let mut ops = vec![
            Op::PushMany {
                count: quiet,
                script: Script::pending(),
            },
            Op::PushMany {
                count: panicking,
                script: Script::pending().dropping(OnDrop::Panic),
            },
        ];
        if polled {
            ops.push(Op::Poll);
        }
        ops.extend([Op::Clear, Op::Push(Script::ready()), Op::Run]);
        ops
    })
}

/// A program that leaves two values whose `Drop` panics (even while a panic unwinds) between
/// quiet ones running, to be dropped with the primitive: every value is dropped once, the
/// first panic comes out, and the process does not abort. Three values, so that every buffer
/// runs them all: none is left in the source, whose queue is the test's (dropped as the
/// primitive's drop unwinds, it would abort the process whatever the primitive does).
pub fn drops_panic_in_the_primitive_s_drop() -> Vec<Op> {
    let panics = Script::pending().dropping(OnDrop::PanicUnwinding);
    vec![
        Op::Push(panics.clone()),
        Op::Push(Script::pending()),
        Op::Push(panics),
        Op::Poll,
    ]
}

/// Programs of an ordered buffer whose head stays `Pending` while the futures behind it
/// finish at once, driven and polled in turn: what it runs and holds stays within its bound.
pub fn stuck_head(max_rounds: usize) -> impl Strategy<Value = Vec<Op>> {
    let round = prop_oneof![
        3 => Just(Op::Push(Script::ready())),
        1 => Just(Op::Push(Script::pending())),
        1 => any::<u64>().prop_map(|pick| Op::Finish { pick: Pick(pick), via: Via::Here }),
        2 => Just(Op::Progress),
        2 => Just(Op::Poll),
    ];
    prop::collection::vec(round, 1..=max_rounds).prop_map(|rounds| {
        let mut ops = vec![Op::Push(Script::pending()), Op::Progress];
        ops.extend(rounds);
        ops
    })
}

/// Runs programs: one structure, its model, the task's waker, and the waker threads.
pub struct Driver {
    model: Arc<Mutex<Model>>,
    structure: Option<Box<dyn Structure>>,
    waker: Waker,
    switches: Arc<WakerSwitches>,
    threads: WakeThreads,
    driven: bool,
    /// Whether the primitive takes outputs ahead of its consumer (`Driven`).
    takes_ahead: bool,
    /// A call of a join after it completed would poll a finished future.
    ended: bool,
    /// A panic reached the caller of the current op.
    panicked: bool,
}

impl Drop for Driver {
    /// A program cut short by a violation drops the primitive here: its values' panics are
    /// the driver's to catch.
    fn drop(&mut self) {
        let structure = self.structure.take();
        let _ = expecting_panics(|| catch_unwind(AssertUnwindSafe(|| drop(structure))));
    }
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("switches", &self.switches)
            .finish_non_exhaustive()
    }
}

impl Driver {
    fn new(
        rules: Rules,
        streams: bool,
        structure: Option<Box<dyn Structure>>,
        driven: bool,
        takes_ahead: bool,
    ) -> Self {
        quiet_fault_panics();
        let (waker, switches) = panicking_waker();
        let model = Model {
            rules,
            streams,
            values: Vec::new(),
            call: 0,
            in_call: false,
            held_at_start: 0,
            polled_in_call: 0,
            vain_in_call: 0,
            value_panicked: false,
            user_task_wakes: 0,
            task_waker: waker.clone(),
            task_wakes_at_start: 0,
            after: After::Ready,
            op: 0,
            yielded: Vec::new(),
            trace: env_number("PINFOLD_ORDER_TRACE", 0) != 0,
            violations: Vec::new(),
            switches: switches.clone(),
            raised: Vec::new(),
            first_raised: None,
            rounds: false,
            woke_in_call: false,
            takes_ahead,
        };
        Self {
            model: Arc::new(Mutex::new(model)),
            structure,
            waker,
            switches,
            threads: WakeThreads::new(WAKE_THREADS),
            driven,
            takes_ahead,
            ended: false,
            panicked: false,
        }
    }

    fn model(&self) -> MutexGuard<'_, Model> {
        lock(&self.model)
    }

    /// A new value with `script`, due from now.
    fn value(&self, script: Script) -> Scripted {
        let mut model = self.model();
        let id = model.values.len();
        let before_driven = matches!(model.rules, Rules::Buffer { driven: false, .. });
        model.values.push(Value {
            script,
            finish: None,
            life: Life::Live,
            polls: 0,
            due: None,
            by_wake: false,
            last_call: 0,
            waker: None,
            waited: 0,
            slots: 0,
            ahead: 0,
            dropped: false,
            before_driven,
        });
        model.make_due(id, false);
        Scripted {
            id,
            model: self.model.clone(),
        }
    }

    fn push(&mut self, script: Script) {
        let value = self.value(script);
        // A buffer's source wakes the task's waker, which may panic: the value is in the
        // source by then.
        let pushed = expecting_panics(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let structure = self.structure.as_mut().expect("a structure");
                // Full: the value never entered; its drop marks it gone.
                structure.push(value).err()
            }))
        });
        // A panic of the source's wake of the task leaves the primitive as it was: what wakes
        // must reach stays as the last call left it.
        if let Ok(Some(refused)) = pushed {
            // Its drop is the test's, and may panic.
            let _ = expecting_panics(|| catch_unwind(AssertUnwindSafe(|| drop(refused))));
        }
        self.model().raised.clear();
    }

    /// Runs `f` (a call, `clear`, the primitive's drop), catching a panic, and checks that
    /// the panic that came out, if any, is the first that was raised in it; `true` if one came.
    fn first_panic_of(&mut self, what: &str, f: impl FnOnce(&mut Self)) -> bool {
        let waker_panics = self.switches.panics();
        self.model().raised.clear();
        let caught = expecting_panics(|| catch_unwind(AssertUnwindSafe(|| f(self)))).err();
        let mut model = self.model();
        let raised = std::mem::take(&mut model.raised);
        model.check_first_panic(what, caught.as_ref(), &raised, waker_panics);
        model.first_raised = raised.first().map(|r| r.fault);
        drop(model);
        if caught.is_some() {
            self.panicked = true;
        }
        caught.is_some()
    }

    /// `clear()`, if the primitive has it: every value dropped, the first panic of their drops
    /// out.
    fn clear(&mut self) {
        let mut cleared = false;
        let panicked = self.first_panic_of("clear", |this| {
            cleared = this.structure.as_mut().expect("a structure").clear();
        });
        let mut model = self.model();
        let kept: Vec<usize> = model.live().map(|(id, _)| id).collect();
        if (cleared || panicked) && !kept.is_empty() {
            model.violation(format!("values {kept:?} were not dropped by clear"));
        }
    }

    /// Wakes the `pick`-th live value with a waker from `via`, `times` times.
    fn wake(&mut self, pick: Pick, via: Via, times: u8) {
        let Some((id, waker)) = self.model().wakeable(pick) else {
            return;
        };
        self.wake_value(id, &waker, via, times);
    }

    /// Wakes value `id` with `waker` from `via`, `times` times: after a `Pending` or a panic,
    /// each wake must reach the task.
    fn wake_value(&mut self, id: usize, waker: &Waker, via: Via, times: u8) {
        // A panicking task waker panics here, on this thread.
        let via = if self.switches.is_armed() {
            Via::Here
        } else {
            via
        };
        for _ in 0..times {
            self.model().make_due(id, true);
            let waker = waker.clone();
            let threads = &self.threads;
            let caught = expecting_panics(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    threads.run_via(via, move || waker.wake())
                }))
            })
            .is_err();
            let mut model = self.model();
            if caught {
                model.after = After::WakePanic;
                continue;
            }
            let woken = self.switches.wakes() > model.task_wakes_at_start;
            let after = model.after;
            if matches!(after, After::Pending | After::Panic) && !woken {
                model.violation(format!(
                    "a wake of value {id} from outside, after {}, did not reach the task",
                    if after == After::Panic {
                        "a panic"
                    } else {
                        "a call that returned Pending"
                    }
                ));
            }
        }
    }

    /// Makes the `pick`-th live value's next poll finish it, and wakes it from `via`.
    fn finish(&mut self, pick: Pick, via: Via) {
        let target = {
            let mut model = self.model();
            let live: Vec<usize> = model.live().map(|(id, _)| id).collect();
            if live.is_empty() {
                return;
            }
            let id = live[pick.index(live.len())];
            model.values[id].finish = Some(Act::End);
            model.values[id].waker.clone().map(|waker| (id, waker))
        };
        if let Some((id, waker)) = target {
            self.wake_value(id, &waker, via, 1);
        }
    }

    /// One call; `Some(true)` if it gave something (an output, or the end).
    fn call(&mut self, progress: bool) -> Option<bool> {
        if self.ended {
            return Some(false);
        }
        let progress = progress && self.driven;
        let held = match self.structure.as_ref()?.len() {
            Some(len) => len,
            None => self.model().held(),
        };
        let wakes_before = self.switches.wakes();
        {
            let mut model = self.model();
            model.begin_call(held);
            model.task_wakes_at_start = wakes_before;
            if let Rules::Buffer { driven, .. } = &mut model.rules {
                *driven |= progress;
            }
            model.rounds = progress && self.takes_ahead;
        }
        // A `Driven` set holding outputs gives one without calling the set: for the set, and
        // for the order of what is pushed and woken meanwhile, that is no call.
        let passes = self.takes_ahead && !progress && self.model().outputs_held() > 0;
        let waker = self.waker.clone();
        let (labels_before, panics_before) =
            (self.switches.step_labels().len(), self.switches.panics());
        let mut polled = None;
        let what = format!("call {}", self.model().call);
        let panicked = self.first_panic_of(&what, |this| {
            let mut cx = Context::from_waker(&waker);
            let structure = this.structure.as_mut().expect("a structure");
            polled = Some(structure.call(progress, &mut cx));
        });
        let task_wakes = self.switches.wakes() - wakes_before;
        if self.model().trace {
            eprintln!(
                "  call ends: {:?}, {task_wakes} task wakes",
                if panicked { None } else { polled }
            );
        }
        let error = self.structure.as_mut().and_then(|s| s.error());
        let terminated = self.structure.as_ref().is_some_and(|s| s.terminated());
        // A join that a future's panic ended is never polled again.
        self.ended |= panicked && terminated;
        let mut model = self.model();
        model.in_call = false;
        if passes && model.polled_in_call == 0 {
            model.call -= 1;
        }
        if let Some(error) = error {
            model.violation(error);
        }
        let call = model.call;
        if let Rules::Join { eager_calls } = &mut model.rules
            && panicked
            && !terminated
            && call <= *eager_calls
        {
            // A drop's panic cut the pass short: the join may poll every future in the next
            // call too.
            *eager_calls += 1;
        }
        if panicked && terminated {
            // Every future was dropped before the panic came out.
            let left: Vec<usize> = model.live().map(|(id, _)| id).collect();
            if !left.is_empty() {
                model.violation(format!("values {left:?} left in a join a panic ended"));
            }
        }
        // The first call of the task waker in this call is the one that panicked, if one did
        // (the switch fires at the first call of an armed operation).
        let waker_panicked = self.switches.panics() > panics_before;
        let clone_panicked =
            waker_panicked && self.switches.step_labels().get(labels_before) == Some(&CLONE_PANIC);
        match polled {
            // Its `clone` panicked, so it could not be registered: no wake can reach the task
            // until a later call.
            _ if panicked && clone_panicked => {
                model.after = After::WakePanic;
                None
            }
            // A value's poll panicked (its drop may have panicked after it), or the task's
            // waker's wake did (at a yield, or as the primitive woke its task after a value's
            // panic, for the values still queued): the task's waker is registered all the same,
            // and every later wake reaches it.
            // A join that a drop's panic (or the task waker's) left running: a wake the panic
            // lost is the caller's to make up (the join crate's docs), by calling again.
            _ if panicked && model.is_join() => {
                model.after = After::WakePanic;
                None
            }
            // The `Drop` of a value that finished or ended panicked: the call ended as if with
            // an output, and the consumer calls again (wakes reach the task once a call has
            // returned `Pending`).
            _ if panicked
                && !model.value_panicked
                && model
                    .first_raised
                    .is_some_and(|first| first.site == Site::Drop) =>
            {
                model.after = After::Ready;
                None
            }
            _ if panicked => {
                if model.value_panicked && !waker_panicked && model.rules == Rules::Set {
                    model.on_value_panic(task_wakes);
                }
                model.after = After::Panic;
                None
            }
            Some(Poll::Pending) => {
                model.on_pending(task_wakes);
                model.after = After::Pending;
                Some(false)
            }
            Some(Poll::Ready(Some(id))) => {
                model.on_output(id as usize);
                model.after = After::Ready;
                Some(true)
            }
            Some(Poll::Ready(None)) => {
                model.after = After::Ready;
                let join = model.is_join();
                drop(model);
                self.ended = join && !progress;
                Some(progress)
            }
            None => None,
        }
    }

    /// Calls as long as the task was woken or the last call gave something, at most 64 times.
    fn run(&mut self) {
        for _ in 0..64 {
            let gave = self.call(false);
            let woken = self.switches.wakes() > self.model().task_wakes_at_start;
            if self.ended || !(gave == Some(true) || woken || gave.is_none()) {
                return;
            }
        }
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::Push(script) => self.push(script.clone()),
            Op::PushMany { count, script } => {
                for _ in 0..*count {
                    self.push(script.clone());
                }
            }
            &Op::Wake { pick, via, times } => self.wake(pick, via, times),
            &Op::Finish { pick, via } => self.finish(pick, via),
            Op::Poll => {
                self.call(false);
            }
            Op::Progress => {
                self.call(true);
            }
            Op::Run => self.run(),
            Op::WakerPanics => self.switches.panic_once(WakerOps::ANY_WAKE),
            Op::Clear => self.clear(),
        }
    }

    /// The violations seen so far, as a test failure.
    fn check(&self, op: usize, ops: &[Op]) -> Result<(), TestCaseError> {
        let model = self.model();
        if model.violations.is_empty() {
            return Ok(());
        }
        Err(TestCaseError::fail(format!(
            "{}\n  at op {op}: {:?}\n  ops 0..={op}: {:?}",
            model.violations.join("\n"),
            ops[op],
            &ops[..=op]
        )))
    }

    /// Drops the structure, and checks that every value was dropped once.
    fn end(mut self) -> Result<(), TestCaseError> {
        self.first_panic_of("the primitive's drop", |this| drop(this.structure.take()));
        let model = self.model();
        prop_assert!(
            model.violations.is_empty(),
            "{}",
            model.violations.join("\n")
        );
        for (id, value) in model.values.iter().enumerate() {
            prop_assert!(value.dropped, "value {} was never dropped", id);
        }
        Ok(())
    }
}

/// Runs `program` against `target`, checking the model at every poll.
pub fn run(target: Target, program: &[Op]) -> Result<(), TestCaseError> {
    let mut driver = Driver::new(
        target.rules(),
        target.streams(),
        Some(target.make()),
        target.driven(),
        target.takes_ahead(),
    );
    for (index, op) in program.iter().enumerate() {
        {
            let mut model = driver.model();
            model.op = index;
            if model.trace {
                eprintln!("op {index}: {op:?}");
            }
        }
        driver.step(op);
        driver.check(index, program)?;
    }
    driver.end()
}

/// Which join a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `join_all`.
    JoinAll,
    /// `try_join_all`.
    TryJoinAll,
}

fn check_join_all(outputs: Vec<Result<u32, u32>>) -> Result<(), String> {
    let ids: Vec<u32> = outputs.into_iter().map(id_of).collect();
    if ids.iter().enumerate().all(|(i, &id)| i as u32 == id) {
        Ok(())
    } else {
        Err(format!("join_all gave {ids:?}, not in input order"))
    }
}

fn check_try_join_all(output: Result<Vec<u32>, u32>) -> Result<(), String> {
    match output {
        Ok(ids) if !ids.iter().enumerate().all(|(i, &id)| i as u32 == id) => {
            Err(format!("try_join_all gave {ids:?}, not in input order"))
        }
        _ => Ok(()),
    }
}

/// The scripts of a join's futures: `Pending`, self-wakes and wakes of others, `Ready`, `Err`
/// (a `try_join_all`'s error, an output of `join_all`), some keeping their first waker; with
/// `panics`, a panic now and then, and one future in four panicking in its `Drop`.
pub fn join_script(panics: bool) -> impl Strategy<Value = Script> {
    let acts = prop_oneof![
        4 => Just(Act::Pending),
        3 => Just(Act::WakeSelf),
        2 => any::<u64>().prop_map(|p| Act::Wake(Pick(p))),
        2 => Just(Act::Ready),
        1 => Just(Act::Fail),
        u32::from(panics) => Just(Act::Panic),
    ];
    (
        prop::collection::vec(acts, 0..4),
        prop_oneof![5 => Just(Act::Pending), 1 => Just(Act::WakeSelf)],
        prop::bool::weighted(0.15),
        prop::bool::weighted(if panics { 0.25 } else { 0.0 }),
    )
        .prop_map(|(first, then, keeps_first, drop_panics)| Script {
            first,
            then,
            keeps_first,
            on_drop: if drop_panics {
                OnDrop::Panic
            } else {
                OnDrop::Quiet
            },
        })
}

/// A join program: 0 to 40 futures (past the 32 at which a join polls differently), and the
/// shared join operations ([`join_op`]); with `panics`, futures that panic (see
/// [`join_script`]).
pub fn join_program(
    max_ops: usize,
    panics: bool,
) -> impl Strategy<Value = (Vec<Script>, Vec<JoinOp>)> {
    (
        prop::collection::vec(join_script(panics), 0..=40),
        prop::collection::vec(join_op(0.9, 3), 1..=max_ops),
    )
}

/// Joins of `count` futures that keep their first waker and stay `Pending`, polled `polls`
/// times, one of them finished from outside now and then.
pub fn first_waker_joins() -> impl Strategy<Value = (Vec<Script>, Vec<JoinOp>)> {
    (33..=40usize, 3..8usize).prop_map(|(count, polls)| {
        let ops = (0..polls)
            .flat_map(|i| {
                let mut ops = vec![JoinOp::PollOnce];
                if i % 3 == 2 {
                    ops.push(JoinOp::Wake {
                        pick: Pick(0),
                        via: Via::Here,
                    });
                }
                ops
            })
            .collect();
        (vec![Script::keeper(); count], ops)
    })
}

/// Runs a join of futures with `scripts` under `program`, checking the model at every poll.
pub fn run_join(
    kind: JoinKind,
    scripts: &[Script],
    program: &[JoinOp],
) -> Result<(), TestCaseError> {
    let eager_calls = if scripts.len() <= 32 { 3 } else { 2 };
    let mut driver = Driver::new(Rules::Join { eager_calls }, false, None, false, false);
    let values: Vec<Scripted> = scripts.iter().map(|s| driver.value(s.clone())).collect();
    driver.structure = Some(match kind {
        JoinKind::JoinAll => Box::new(Join::new(pinfold_join::join_all(values), check_join_all)),
        JoinKind::TryJoinAll => Box::new(Join::new(
            pinfold_join::try_join_all(values),
            check_try_join_all,
        )),
    });
    let ops: Vec<Op> = program.iter().map(join_step).collect();
    for (index, op) in program.iter().enumerate() {
        driver.model().op = index;
        if matches!(op, JoinOp::Cancel) {
            break;
        }
        driver.step(&ops[index]);
        driver.check(index, &ops)?;
    }
    driver.end()
}

/// A join operation as an [`Op`]: a completion is a [`Op::Finish`] (its `ok` aside: a
/// script's `Fail` makes the errors), a run a [`Op::Run`].
fn join_step(op: &JoinOp) -> Op {
    match *op {
        JoinOp::Complete { pick, via, .. } => Op::Finish { pick, via },
        JoinOp::Wake { pick, via } => Op::Wake {
            pick,
            via,
            times: 1,
        },
        JoinOp::Run => Op::Run,
        JoinOp::PollOnce | JoinOp::Cancel => Op::Poll,
    }
}
