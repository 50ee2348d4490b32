//! The driven model: [`Driven`] over each set of futures, merge and map, made as a user makes
//! it (`set.driven(limit)`), run through random programs and checked after every step against
//! a plain reference of what each value owes.
//!
//! A program pushes [`Val`]s through `get_mut` or `get_pin_mut` between calls, fires their
//! items and ends them from outside (from this thread or a waker thread), drives the stream
//! (`poll_progress`), takes items (`poll_next`), empties it and refills it, and has a
//! consumer wait on one of its values ([`Op::Wait`]): the value is given what it needs to
//! finish (an item) and woken, and it finishes only once it is polled again, as a future of the
//! set holding a lock the consumer waits for lets it go only at its next poll. The reference
//! keeps, for each value pushed, the items fired at it and not yet given by the `Driven`, and
//! whether the test finished it (a future fired, a stream ended). After every step:
//!
//! - every item comes out once, in its value's order, and only items owed come out;
//! - `None` comes only when every value pushed has given everything and left, with nothing
//!   held; the `Driven` is terminated after it until something is pushed, and while it is
//!   terminated nothing more can come;
//! - what is held is never more than the items owed (so a set of futures holds at most one
//!   output per future), and a merge or a stream map never holds more than its limit;
//! - driving makes progress: `poll_progress` over a set of futures returns `Ready` only once
//!   the set is empty, and `Pending` (over any stream) only when every value that is due (with
//!   an item or an end not taken, or pushed and never polled) was polled, or the task was
//!   woken to poll it; a merge or a stream map may return `Ready` at its limit instead, with
//!   exactly `limit` items held (what `Driven`'s *At the limit* documents), and a consumer
//!   waiting there on one of its streams waits until an item is taken;
//! - a consumer waiting on a value of a set of futures is released within a few drives, and
//!   each drive it is not released in has woken the task;
//! - no value is polled after it finished, and each is dropped once (checked at the end).

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures_core::{FusedStream, Stream};
use pinfold_buffer::{BufferExt, Driven, ProgressStream};
use pinfold_testkit::fault_clock::FaultClock;
use pinfold_testkit::waker::{WakeCounter, counting_waker};
use proptest::prelude::*;

use crate::keyed_model::{Val, ValState};
use crate::program::{Pick, Via, via};
use crate::wake_threads::WakeThreads;

/// The capacity of the bounded sets and merges: small enough that pushes fill them.
pub const CAPACITY: usize = 24;

/// The drives a consumer waiting on a value may take before it is released.
const WAIT_DRIVES: usize = 8;

/// A stream of [`Val`]s as the model drives it, and how a user makes it a [`Driven`].
// The model compares `len` with its own count; `is_empty` would add nothing.
#[allow(clippy::len_without_is_empty)]
pub trait DrivenSubject: FusedStream + Unpin + Sized {
    /// For messages.
    const NAME: &'static str;
    /// Whether its values are streams, which may give items without end (a merge, a stream
    /// map: driven, it keeps to its limit), rather than futures, which give one output each
    /// (a set: driven, it is polled past its limit).
    const STREAMS: bool;
    /// A new, empty one; a bounded one holds [`CAPACITY`].
    fn make() -> Self;
    /// `self.driven(limit)`, as a user writes it: a set's own method, or `BufferExt`'s.
    fn drive(self, limit: usize) -> Driven<Self>;
    /// Pushes `val`; gives it back if a bounded one is full.
    fn try_push(&mut self, val: Val) -> Result<(), Val>;
    /// How many values it holds.
    fn len(&self) -> usize;
    /// The value's id and the item of an output.
    fn output(item: Self::Item) -> (u32, u32);
}

macro_rules! driven_subject {
    ($ty:ty, $name:literal, $streams:literal, $make:expr, $push:expr, $len:expr, $output:expr) => {
        impl DrivenSubject for $ty {
            const NAME: &'static str = $name;
            const STREAMS: bool = $streams;
            fn make() -> Self {
                $make
            }
            fn drive(self, limit: usize) -> Driven<Self> {
                self.driven(limit)
            }
            fn try_push(&mut self, val: Val) -> Result<(), Val> {
                ($push)(self, val)
            }
            fn len(&self) -> usize {
                ($len)(self)
            }
            fn output(item: Self::Item) -> (u32, u32) {
                ($output)(item)
            }
        }
    };
}

driven_subject!(
    pinfold_unordered::FuturesUnorderedBounded<Val>,
    "FuturesUnorderedBounded",
    false,
    pinfold_unordered::FuturesUnorderedBounded::new(CAPACITY),
    |set: &mut pinfold_unordered::FuturesUnorderedBounded<Val>, val| (**set).try_push(val),
    |set: &pinfold_unordered::FuturesUnorderedBounded<Val>| (**set).len(),
    |output| output
);
driven_subject!(
    pinfold_unordered::FuturesUnordered<Val>,
    "FuturesUnordered",
    false,
    pinfold_unordered::FuturesUnordered::new(),
    |set: &mut pinfold_unordered::FuturesUnordered<Val>, val| {
        (**set).push(val);
        Ok(())
    },
    |set: &pinfold_unordered::FuturesUnordered<Val>| (**set).len(),
    |output| output
);
driven_subject!(
    pinfold_merge::MergeBounded<Val>,
    "MergeBounded",
    true,
    pinfold_merge::MergeBounded::new(CAPACITY),
    |merge: &mut pinfold_merge::MergeBounded<Val>, val| (**merge).try_push(val),
    |merge: &pinfold_merge::MergeBounded<Val>| (**merge).len(),
    |item| item
);
driven_subject!(
    pinfold_merge::Merge<Val>,
    "Merge",
    true,
    pinfold_merge::Merge::new(),
    |merge: &mut pinfold_merge::Merge<Val>, val| {
        (**merge).push(val);
        Ok(())
    },
    |merge: &pinfold_merge::Merge<Val>| (**merge).len(),
    |item| item
);

/// A map's output, checked to come under its value's id.
fn keyed((key, (id, item)): (u32, (u32, u32))) -> (u32, u32) {
    assert_eq!(key, id, "an output under another value's key");
    (id, item)
}

/// Pushes `val` under its id, which no value in the map has.
fn insert<P>(map: &mut pinfold_map::KeyedMap<u32, Val, P>, val: Val) -> Result<(), Val> {
    let replaced = map.insert(val.id(), val);
    assert!(!replaced, "each value has an id of its own");
    Ok(())
}

driven_subject!(
    pinfold_map::FutureMap<u32, Val>,
    "FutureMap",
    false,
    pinfold_map::FutureMap::new(),
    insert,
    pinfold_map::FutureMap::len,
    keyed
);
driven_subject!(
    pinfold_map::StreamMap<u32, Val>,
    "StreamMap",
    true,
    pinfold_map::StreamMap::new(),
    insert,
    pinfold_map::StreamMap::len,
    keyed
);

/// One step of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// Push `count` new values (through `get_pin_mut` if `pinned`, else `get_mut`), the first
    /// `ready` of them with an item fired already.
    Push { count: u8, ready: u8, pinned: bool },
    /// Fire an item at the `pick`-th value that can take one (a future not fired yet, a stream
    /// not ended) and wake it from `via`.
    Fire { pick: Pick, via: Via },
    /// End the `pick`-th stream not ended (a future: fire it) and wake it from `via`.
    End { pick: Pick, via: Via },
    /// `poll_progress` once.
    Progress,
    /// `poll_next` once.
    Next,
    /// `poll_next` until it is `Pending` or ends, at most `max` times.
    Take { max: u8 },
    /// Finish every value (fire the futures, end the streams), then `poll_next` until `None`.
    Empty,
    /// A consumer waits on the `pick`-th value that can take an item: the item is fired and
    /// the value woken, and the stream is driven until the value took it.
    Wait { pick: Pick },
}

/// An [`Op`], weighted so that outputs pile up past small limits, the stream is emptied and
/// refilled several times in a program, and consumers wait while outputs are held.
pub fn op() -> impl Strategy<Value = Op> {
    let pick = || any::<u64>().prop_map(Pick);
    prop_oneof![
        4 => (1..8u8, 0..5u8, any::<bool>())
            .prop_map(|(count, ready, pinned)| Op::Push { count, ready, pinned }),
        4 => (pick(), via()).prop_map(|(pick, via)| Op::Fire { pick, via }),
        2 => (pick(), via()).prop_map(|(pick, via)| Op::End { pick, via }),
        4 => Just(Op::Progress),
        3 => Just(Op::Next),
        2 => (1..6u8).prop_map(|max| Op::Take { max }),
        1 => Just(Op::Empty),
        3 => pick().prop_map(|pick| Op::Wait { pick }),
    ]
}

/// A limit and a program of up to `max_ops` operations.
pub fn program(max_ops: usize) -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1..5usize, prop::collection::vec(op(), 1..=max_ops))
}

/// What the reference knows of a value pushed and not yet gone.
#[derive(Debug, Default)]
struct Owed {
    /// Items fired and not yet given by the `Driven`, in order.
    items: VecDeque<u32>,
    /// Whether the test finished it: a future fired, a stream ended.
    finished: bool,
}

/// The first disagreement between a `Driven` and the reference.
pub type Mismatch = String;

/// One run of a program against a `Driven<S>`, with its reference.
struct Run<S: DrivenSubject> {
    driven: Driven<S>,
    limit: usize,
    clock: Arc<FaultClock>,
    task: Waker,
    wakes: Arc<WakeCounter>,
    threads: Option<WakeThreads>,
    states: Vec<Arc<ValState>>,
    /// The values pushed that are not gone (a future whose output came out, a stream that
    /// ended with every item out), by id.
    owed: BTreeMap<u32, Owed>,
    next_item: u32,
    /// `poll_next` gave `None` and nothing was pushed since.
    ended: bool,
}

impl<S: DrivenSubject> Run<S> {
    fn new(limit: usize, threads: Option<WakeThreads>) -> Self {
        let (task, wakes) = counting_waker();
        Self {
            driven: S::make().drive(limit),
            limit,
            clock: FaultClock::new(),
            task,
            wakes,
            threads,
            states: Vec::new(),
            owed: BTreeMap::new(),
            next_item: 0,
            ended: false,
        }
    }

    fn state(&self, id: u32) -> &ValState {
        &self.states[id as usize]
    }

    /// The values that can take an item: futures not fired, streams not ended.
    fn open(&self) -> Vec<u32> {
        let open = self.owed.iter().filter(|(_, owed)| !owed.finished);
        open.map(|(&id, _)| id).collect()
    }

    fn pick_open(&self, pick: Pick) -> Option<u32> {
        let open = self.open();
        (!open.is_empty()).then(|| open[pick.index(open.len())])
    }

    /// Fires the next item at `id`: a future is finished by it.
    fn fire(&mut self, id: u32) -> Option<Waker> {
        self.next_item += 1;
        let item = self.next_item;
        let owed = self.owed.get_mut(&id).expect("an open value");
        owed.items.push_back(item);
        owed.finished |= !S::STREAMS;
        self.states[id as usize].fire(item)
    }

    /// Ends `id`: a stream's end, a future's item.
    fn end(&mut self, id: u32) -> Option<Waker> {
        if !S::STREAMS {
            return self.fire(id);
        }
        self.owed.get_mut(&id).expect("an open value").finished = true;
        self.states[id as usize].end()
    }

    fn wake(&self, waker: Option<Waker>, via: Via) {
        let Some(waker) = waker else { return };
        match &self.threads {
            Some(threads) => threads.run_via(via, move || waker.wake()),
            None => waker.wake(),
        }
    }

    fn push(&mut self, count: u8, ready: u8, pinned: bool) -> Result<(), Mismatch> {
        for n in 0..count {
            let id = self.states.len() as u32;
            let (val, state) = Val::new(id, self.clock.clone());
            self.states.push(state);
            let stream = if pinned {
                Pin::new(&mut self.driven).get_pin_mut().get_mut()
            } else {
                self.driven.get_mut()
            };
            // Through `get_mut`: whatever the `Driven` saw before, the stream may go on.
            self.ended = false;
            match stream.try_push(val) {
                Ok(()) => {
                    self.owed.insert(id, Owed::default());
                    if n < ready {
                        let waker = self.fire(id);
                        self.wake(waker, Via::Here);
                    }
                }
                Err(back) => {
                    let len = self.driven.get_ref().len();
                    if back.id() != id || len < CAPACITY {
                        return Err(format!("refused value {id} with {len} values held"));
                    }
                }
            }
        }
        Ok(())
    }

    /// The values due: in the stream, not finished, and with an item or an end not taken, or
    /// never polled.
    fn due(&self) -> Vec<u32> {
        let due = self.owed.iter().filter(|&(&id, owed)| {
            let state = self.state(id);
            !state.finished()
                && (state.waiting() > 0 || (S::STREAMS && owed.finished) || state.polls() == 0)
        });
        due.map(|(&id, _)| id).collect()
    }

    /// After a call that polled the stream and got `Pending`: every value due was polled, or
    /// the call woke the task to poll it.
    fn check_pending(&self, call: &str, wakes_before: usize) -> Result<(), Mismatch> {
        if self.wakes.count() != wakes_before {
            return Ok(());
        }
        match self.due().first() {
            Some(id) => Err(format!(
                "{call} returned Pending with value {id} due and not polled, and did not wake \
                 the task"
            )),
            None => Ok(()),
        }
    }

    fn progress(&mut self) -> Result<Poll<()>, Mismatch> {
        let wakes_before = self.wakes.count();
        let mut cx = Context::from_waker(&self.task);
        let polled = Pin::new(&mut self.driven).poll_progress(&mut cx);
        let (held, len) = (self.driven.held(), self.driven.get_ref().len());
        match polled {
            Poll::Pending => self.check_pending("poll_progress", wakes_before)?,
            Poll::Ready(()) if len == 0 => {}
            Poll::Ready(()) if S::STREAMS => {
                if held != self.limit {
                    return Err(format!(
                        "poll_progress returned Ready with {len} streams left and {held} items \
                         held, under the limit of {}",
                        self.limit
                    ));
                }
            }
            Poll::Ready(()) => {
                return Err(format!(
                    "poll_progress returned Ready with {len} futures left in the set ({held} \
                     outputs held, limit {}): it stopped driving them",
                    self.limit
                ));
            }
        }
        Ok(polled)
    }

    /// An item that came out: the next one owed by its value.
    fn came(&mut self, item: S::Item) -> Result<(), Mismatch> {
        let (id, item) = S::output(item);
        let Some(owed) = self.owed.get_mut(&id) else {
            return Err(format!("item {item} of value {id}, which owes nothing"));
        };
        match owed.items.pop_front() {
            Some(next) if next == item => {}
            next => {
                return Err(format!(
                    "item {item} of value {id} came where {next:?} was owed"
                ));
            }
        }
        if !S::STREAMS {
            self.owed.remove(&id);
        }
        Ok(())
    }

    /// `poll_next` once.
    fn next(&mut self) -> Result<Poll<Option<()>>, Mismatch> {
        let wakes_before = self.wakes.count();
        let held_before = self.driven.held();
        let mut cx = Context::from_waker(&self.task);
        match Pin::new(&mut self.driven).poll_next(&mut cx) {
            Poll::Ready(Some(item)) => {
                self.came(item)?;
                Ok(Poll::Ready(Some(())))
            }
            Poll::Ready(None) => {
                if held_before != 0 {
                    return Err(format!("None with {held_before} items held"));
                }
                for (&id, owed) in &self.owed {
                    let state = self.state(id);
                    if !owed.items.is_empty() || !owed.finished || !state.finished() {
                        return Err(format!(
                            "None while value {id} is in the stream, owing {:?}",
                            owed.items
                        ));
                    }
                }
                let len = self.driven.get_ref().len();
                if len != 0 {
                    return Err(format!("None while the stream holds {len} values"));
                }
                self.owed.clear();
                self.ended = true;
                Ok(Poll::Ready(None))
            }
            Poll::Pending => {
                if held_before != 0 {
                    return Err(format!("Pending with {held_before} items held"));
                }
                self.check_pending("poll_next", wakes_before)?;
                Ok(Poll::Pending)
            }
        }
    }

    /// `poll_next` until `Pending` (with the task not woken since) or `None`, at most `max`
    /// times; `Err` if it neither ends nor settles within them when `must_end`.
    fn take(&mut self, max: usize, must_end: bool) -> Result<(), Mismatch> {
        for _ in 0..max {
            let wakes_before = self.wakes.count();
            match self.next()? {
                Poll::Ready(Some(())) => {}
                Poll::Ready(None) => return Ok(()),
                Poll::Pending if self.wakes.count() != wakes_before => {}
                Poll::Pending if must_end => {
                    return Err("Pending while emptying, with nothing left to wait for".into());
                }
                Poll::Pending => return Ok(()),
            }
        }
        if must_end {
            return Err(format!(
                "no end after {max} calls of poll_next while emptying"
            ));
        }
        Ok(())
    }

    /// Finishes every value, then takes every item, to the end.
    fn empty(&mut self) -> Result<(), Mismatch> {
        for id in self.open() {
            let waker = self.end(id);
            self.wake(waker, Via::Here);
        }
        let owed: usize = self.owed.values().map(|owed| owed.items.len()).sum();
        // Each item, each stream's end, and a call for each yield of a round.
        let calls = 4 * (owed + self.owed.len()) + 16;
        self.take(calls, true)
    }

    /// A consumer waits on value `id`: it is given its item and woken, and the stream is
    /// driven until the value took it.
    fn wait(&mut self, id: u32) -> Result<(), Mismatch> {
        let waker = self.fire(id);
        self.wake(waker, Via::Here);
        for _ in 0..WAIT_DRIVES {
            let wakes_before = self.wakes.count();
            let polled = self.progress()?;
            if self.state(id).waiting() == 0 {
                return Ok(());
            }
            if S::STREAMS && polled.is_ready() {
                // At its limit a merge or stream map polls none of its streams until an item
                // is taken: the documented case, checked by `progress`.
                return Ok(());
            }
            if self.wakes.count() == wakes_before {
                return Err(format!(
                    "a consumer waits on value {id}, due, and driving returned {polled:?} \
                     without polling it or waking the task ({} held, limit {})",
                    self.driven.held(),
                    self.limit
                ));
            }
        }
        Err(format!(
            "a consumer waits on value {id}, due, and {WAIT_DRIVES} drives did not poll it"
        ))
    }

    fn op(&mut self, op: &Op) -> Result<(), Mismatch> {
        match *op {
            Op::Push {
                count,
                ready,
                pinned,
            } => self.push(count, ready, pinned)?,
            Op::Fire { pick, via } => {
                if let Some(id) = self.pick_open(pick) {
                    let waker = self.fire(id);
                    self.wake(waker, via);
                }
            }
            Op::End { pick, via } => {
                if let Some(id) = self.pick_open(pick) {
                    let waker = self.end(id);
                    self.wake(waker, via);
                }
            }
            // What each call returned was checked in it.
            Op::Progress => {
                let _ = self.progress()?;
            }
            Op::Next => {
                let _ = self.next()?;
            }
            Op::Take { max } => self.take(usize::from(max), false)?,
            Op::Empty => self.empty()?,
            Op::Wait { pick } => {
                if let Some(id) = self.pick_open(pick) {
                    self.wait(id)?;
                }
            }
        }
        Ok(())
    }

    /// What must hold between any two steps.
    fn check(&mut self) -> Result<(), Mismatch> {
        // Streams that ended with every item out are gone.
        let states = &self.states;
        self.owed.retain(|&id, owed| {
            !(S::STREAMS
                && owed.finished
                && owed.items.is_empty()
                && states[id as usize].finished())
        });
        let held = self.driven.held();
        let owed: usize = self.owed.values().map(|owed| owed.items.len()).sum();
        if held > owed {
            return Err(format!("{held} items held, {owed} owed"));
        }
        if S::STREAMS && held > self.limit {
            return Err(format!(
                "{held} items held, over the limit of {}",
                self.limit
            ));
        }
        if self.driven.is_terminated() {
            if let Some((id, _)) = self
                .owed
                .iter()
                .find(|&(&id, owed)| !owed.items.is_empty() || !self.state(id).finished())
            {
                return Err(format!("terminated while value {id} has more to give"));
            }
        } else if self.ended {
            return Err("not terminated after None, with nothing pushed since".into());
        }
        for state in &self.states {
            if let Some(violation) = state.violation_seen() {
                return Err(violation);
            }
        }
        Ok(())
    }

    /// Drops the `Driven`: every value is dropped once in all.
    fn finish(self) -> Result<(), Mismatch> {
        let states = self.states;
        drop(self.driven);
        for state in &states {
            if let Some(violation) = state.violation_seen() {
                return Err(violation);
            }
            if state.drops() != 1 {
                return Err(format!(
                    "a value was dropped {} times in all",
                    state.drops()
                ));
            }
        }
        Ok(())
    }
}

/// Runs `program` against `S::make().driven(limit)`, with wakes from `threads` (or from here),
/// checking the reference after every step; then drops it and checks every value was dropped
/// once.
pub fn run<S: DrivenSubject>(
    limit: usize,
    program: &[Op],
    threads: Option<WakeThreads>,
) -> Result<(), Mismatch> {
    let mut run = Run::<S>::new(limit, threads);
    let fail = |step: usize, op: &Op, what: Mismatch| {
        format!("{} driven({limit}): step {step} ({op:?}): {what}", S::NAME)
    };
    for (step, op) in program.iter().enumerate() {
        run.op(op).map_err(|what| fail(step, op, what))?;
        run.check().map_err(|what| fail(step, op, what))?;
    }
    run.finish()
        .map_err(|what| format!("{} driven({limit}): at the drop: {what}", S::NAME))
}
