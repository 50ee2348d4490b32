//! The keyed model: random programs of inserts (in bursts that add groups), removes,
//! re-inserts, uses of departed keys, wakes from this and other threads, partial and full
//! drains, `clear` and drop, run against a keyed set or merge and checked after every step
//! against a plain model: the live keys and their values, the outputs still owed, the departed
//! keys (refused for good), and each value dropped exactly once.
//!
//! The same programs run with a fault: a [`FaultClock`] counts every call into user code (a
//! value's poll and drop, the task waker's clone, wake, wake_by_ref and drop) and makes the
//! k-th panic; [`sweep_faults`] runs a program once per k. After each panic the set must still
//! agree with the model, reconciled with what the values saw: a value whose poll or drop
//! panicked has left (dropped once, its key refused); every other value is still there under
//! its key; no output or item a value gave is lost; nothing is polled after it left.
//!
//! [`sweep_two_faults`] makes each of those panics two in one call ([`Second`]): a value's
//! poll panics and then its `Drop` as the set drops it, or the task's waker as the set wakes
//! the task for the values still queued; or a value's `Drop` panics and then the next one's
//! (in `clear`, or the set's drop). The first panic must come out, and after a value's poll
//! panicked the task is polled only when woken, so a wake the panic lost leaves an item owed.
//!
//! The ordered sets have no keys: [`run_ordered`] checks them against a model of the order
//! they promise.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;
use pinfold_testkit::contract::panic_message;
use pinfold_testkit::fault_clock::{CLOCK_PANIC, FaultClock};
use pinfold_testkit::panicking_waker::{
    CLONE_PANIC, DROP_PANIC, WAKE_BY_REF_PANIC, WAKE_PANIC, WakerOps, WakerSwitches,
    panicking_waker_on,
};
use proptest::prelude::*;

use crate::program::{Pick, Via, via};
use crate::wake_threads::WakeThreads;

pub use pinfold_unordered::Key;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a [`Val`] shares with the test.
#[derive(Default)]
pub struct ValState {
    id: u32,
    /// Items fired and not yet taken by a poll.
    items: Mutex<VecDeque<u32>>,
    /// Whether the test ended the stream (a future ignores it).
    ended: AtomicBool,
    /// Whether it finished: a future gave its output, a stream gave `None`.
    finished: AtomicBool,
    /// Items (or the future's output) given by a poll, in order.
    given: Mutex<Vec<u32>>,
    waker: Mutex<Option<Waker>>,
    polls: AtomicUsize,
    drops: AtomicUsize,
    violations: Mutex<Vec<String>>,
}

impl ValState {
    fn violation(&self, what: String) {
        lock(&self.violations).push(what);
    }

    /// How many times the value was dropped.
    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }

    /// How many times the value was polled.
    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Whether it finished: a future gave its output, a stream its end.
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Items fired and not yet taken by a poll.
    pub fn waiting(&self) -> usize {
        lock(&self.items).len()
    }

    /// The first thing the value saw done to it that must not be (a poll after it finished, a
    /// second drop).
    pub fn violation_seen(&self) -> Option<String> {
        lock(&self.violations).first().cloned()
    }

    /// Fires `item` and returns the value's latest waker, to wake it with.
    pub fn fire(&self, item: u32) -> Option<Waker> {
        lock(&self.items).push_back(item);
        lock(&self.waker).clone()
    }

    /// Ends the stream and returns the value's latest waker, to wake it with.
    pub fn end(&self) -> Option<Waker> {
        self.ended.store(true, Ordering::SeqCst);
        lock(&self.waker).clone()
    }
}

impl fmt::Debug for ValState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValState").field("id", &self.id).finish()
    }
}

/// A second panic in the call the [`FaultClock`]'s panic fell in: two faults at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Second {
    /// The value whose poll panicked panics in its `Drop` too, as the set drops it.
    ValueDrop,
    /// The task waker's next wake panics: the set's, as it wakes the task for the values still
    /// queued after a value's poll panicked.
    TaskWake,
    /// The next value dropped after one whose `Drop` panicked panics in its `Drop` too: two
    /// panicking drops in `clear`, or in the set's drop.
    NextDrop,
}

/// The message of the second panic of a [`Second`] fault in a value's `Drop`.
pub const SECOND_PANIC: &str = "keyed model: second panic";

/// The faults of a run: the clock's panic, and what follows it.
#[derive(Debug)]
pub struct Faults {
    clock: Arc<FaultClock>,
    second: Option<Second>,
    /// The task waker's switches, which [`Second::TaskWake`] arms.
    switches: Option<Arc<WakerSwitches>>,
    /// Whether the clock's panic fell in a value's poll.
    poll_fired: AtomicBool,
    /// Whether the clock's panic fell in a value's poll or drop (else, if it fired, in a call
    /// of the task's waker, whose message it has).
    value_fired: AtomicBool,
    /// The value whose `Drop` panics next ([`Second::ValueDrop`]), or any value's
    /// ([`Second::NextDrop`]): its id, `u32::MAX` for any, or none.
    drop_armed: Mutex<Option<u32>>,
}

impl Faults {
    /// The faults of a run whose task waker has `switches` (on `clock`).
    fn new(
        clock: Arc<FaultClock>,
        second: Option<Second>,
        switches: Option<Arc<WakerSwitches>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            clock,
            second,
            switches,
            poll_fired: AtomicBool::new(false),
            value_fired: AtomicBool::new(false),
            drop_armed: Mutex::new(None),
        })
    }

    /// Counts a call of value `id`'s poll; panics if the clock picks it.
    fn polled(&self, id: u32) {
        if self.clock.tick() {
            self.poll_fired.store(true, Ordering::SeqCst);
            self.value_fired.store(true, Ordering::SeqCst);
            match self.second {
                Some(Second::ValueDrop) => *lock(&self.drop_armed) = Some(id),
                Some(Second::TaskWake) => {
                    if let Some(switches) = &self.switches {
                        switches.panic_once(WakerOps::ANY_WAKE);
                    }
                }
                _ => {}
            }
            panic!("{CLOCK_PANIC}");
        }
    }

    /// Counts a call of value `id`'s drop; panics if the clock picks it, or if a second panic
    /// is armed for it (and the thread is not unwinding already).
    fn dropped(&self, id: u32) {
        let armed = {
            let mut armed = lock(&self.drop_armed);
            let this = armed.is_some_and(|for_id| for_id == id || for_id == u32::MAX);
            if this && !std::thread::panicking() {
                *armed = None;
            }
            this
        };
        if armed && !std::thread::panicking() {
            panic!("{SECOND_PANIC}");
        }
        if self.clock.tick() {
            self.value_fired.store(true, Ordering::SeqCst);
            if self.second == Some(Second::NextDrop) {
                *lock(&self.drop_armed) = Some(u32::MAX);
            }
            panic!("{CLOCK_PANIC}");
        }
    }
}

/// A value the test controls: as a future, ready with the first item fired at it; as a
/// stream, the items fired at it in order, then the end once the test ends it. Its poll and
/// drop count on the run's [`FaultClock`] and panic when it picks them (and when a [`Second`]
/// fault picks its drop).
pub struct Val {
    state: Arc<ValState>,
    faults: Arc<Faults>,
}

impl fmt::Debug for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Val").field(&self.state.id).finish()
    }
}

impl Val {
    /// Value `id`, whose poll and drop count on `clock`, and what it shares with the test.
    pub fn new(id: u32, clock: Arc<FaultClock>) -> (Self, Arc<ValState>) {
        Self::with_faults(id, Faults::new(clock, None, None))
    }

    /// Value `id`, whose poll and drop count on the run's `faults`.
    fn with_faults(id: u32, faults: Arc<Faults>) -> (Self, Arc<ValState>) {
        let state = Arc::new(ValState {
            id,
            ..ValState::default()
        });
        (
            Self {
                state: state.clone(),
                faults,
            },
            state,
        )
    }

    /// The value's id.
    pub fn id(&self) -> u32 {
        self.state.id
    }

    fn polled(&self, cx: &Context<'_>) {
        self.state.polls.fetch_add(1, Ordering::SeqCst);
        if self.state.finished.load(Ordering::SeqCst) {
            self.state
                .violation(format!("value {} polled after it finished", self.state.id));
        }
        let mut waker = lock(&self.state.waker);
        if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waker = Some(cx.waker().clone());
        }
        drop(waker);
        self.faults.polled(self.state.id);
    }

    fn take_item(&self) -> Option<u32> {
        let item = lock(&self.state.items).pop_front()?;
        lock(&self.state.given).push(item);
        Some(item)
    }
}

impl Future for Val {
    type Output = (u32, u32);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(u32, u32)> {
        self.polled(cx);
        match self.take_item() {
            Some(item) => {
                self.state.finished.store(true, Ordering::SeqCst);
                Poll::Ready((self.state.id, item))
            }
            None => Poll::Pending,
        }
    }
}

impl Stream for Val {
    type Item = (u32, u32);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<(u32, u32)>> {
        self.polled(cx);
        if let Some(item) = self.take_item() {
            return Poll::Ready(Some((self.state.id, item)));
        }
        if self.state.ended.load(Ordering::SeqCst) {
            self.state.finished.store(true, Ordering::SeqCst);
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

impl Drop for Val {
    fn drop(&mut self) {
        if self.state.drops.fetch_add(1, Ordering::SeqCst) != 0 {
            self.state
                .violation(format!("value {} dropped twice", self.state.id));
        }
        self.faults.dropped(self.state.id);
    }
}

/// A keyed set of [`Val`]s as the model drives it: `FuturesUnorderedBounded`,
/// `FuturesUnordered`, `MergeBounded`, `Merge`.
// The model compares `len` with its own count; `is_empty` would add nothing.
#[allow(clippy::len_without_is_empty)]
pub trait KeyedSubject: Unpin + Sized {
    /// For messages.
    const NAME: &'static str;
    /// Whether its values are streams (which end) rather than futures (which finish).
    const STREAMS: bool;
    /// A new, empty set; a bounded one holds `capacity`.
    fn make(capacity: usize) -> Self;
    /// Inserts `val`; gives it back if the set is full.
    fn try_insert(&mut self, val: Val) -> Result<Key, Val>;
    /// `remove`.
    fn remove(&mut self, key: Key) -> bool;
    /// `contains_key`.
    fn contains_key(&self, key: Key) -> bool;
    /// The id of `key`'s value.
    fn get(&self, key: Key) -> Option<u32>;
    /// The id of `key`'s value, through `get_pin_mut`.
    fn get_pin_mut(&mut self, key: Key) -> Option<u32>;
    /// `len`.
    fn len(&self) -> usize;
    /// `clear`.
    fn clear(&mut self);
    /// `poll_next_keyed`.
    fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, (u32, u32))>>;
}

macro_rules! keyed_subject {
    ($set:ty, $name:literal, $streams:literal, $make:expr, $insert:expr) => {
        impl KeyedSubject for $set {
            const NAME: &'static str = $name;
            const STREAMS: bool = $streams;
            fn make(capacity: usize) -> Self {
                ($make)(capacity)
            }
            fn try_insert(&mut self, val: Val) -> Result<Key, Val> {
                ($insert)(self, val)
            }
            fn remove(&mut self, key: Key) -> bool {
                (**self).remove(key)
            }
            fn contains_key(&self, key: Key) -> bool {
                (**self).contains_key(key)
            }
            fn get(&self, key: Key) -> Option<u32> {
                (**self).get(key).map(Val::id)
            }
            fn get_pin_mut(&mut self, key: Key) -> Option<u32> {
                (**self).get_pin_mut(key).map(|val| val.id())
            }
            fn len(&self) -> usize {
                (**self).len()
            }
            fn clear(&mut self) {
                (**self).clear()
            }
            fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, (u32, u32))>> {
                (**self).poll_next_keyed(cx)
            }
        }
    };
}

keyed_subject!(
    pinfold_unordered::FuturesUnorderedBounded<Val>,
    "FuturesUnorderedBounded",
    false,
    pinfold_unordered::FuturesUnorderedBounded::new,
    |set: &mut pinfold_unordered::FuturesUnorderedBounded<Val>, val| (**set).try_insert(val)
);
keyed_subject!(
    pinfold_unordered::FuturesUnordered<Val>,
    "FuturesUnordered",
    false,
    |_| pinfold_unordered::FuturesUnordered::new(),
    |set: &mut pinfold_unordered::FuturesUnordered<Val>, val| Ok((**set).insert(val))
);
keyed_subject!(
    pinfold_merge::MergeBounded<Val>,
    "MergeBounded",
    true,
    pinfold_merge::MergeBounded::new,
    |set: &mut pinfold_merge::MergeBounded<Val>, val| (**set).try_insert(val)
);
keyed_subject!(
    pinfold_merge::Merge<Val>,
    "Merge",
    true,
    |_| pinfold_merge::Merge::new(),
    |set: &mut pinfold_merge::Merge<Val>, val| Ok((**set).insert(val))
);

/// One step of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum Op {
    /// Insert `count` new values, the first `ready` of them with an item fired already.
    Insert { count: u8, ready: u8 },
    /// Remove the `pick`-th live value.
    Remove { pick: Pick },
    /// Remove the `pick`-th live value and insert a new one (which often takes its slot).
    Reinsert { pick: Pick },
    /// Ask the set about the `pick`-th departed key: it must refuse it everywhere.
    UseDeparted { pick: Pick },
    /// Remove the newest live value and insert a new one, `times` times: each new value takes
    /// the slot just freed, so one slot (of the top group, after a burst) ages by `times`
    /// generations.
    Age { times: u8 },
    /// Remove every live value, newest first: the groups above the first are released
    /// together, while their keys stay departed (and are asked of the set after it regrows).
    RemoveAll,
    /// Grow to `to` live values (three groups of the growable set), [`Age`](Op::Age) the
    /// newest `age` times, [`RemoveAll`](Op::RemoveAll), and insert `to` values again: the
    /// groups regrow over slots whose departed keys have every generation up to the aged one.
    Regrow { to: u8, age: u8 },
    /// Fire an item at the `pick`-th live value and wake it from `via`.
    Fire { pick: Pick, via: Via },
    /// Fire an item at each of `count` live values from `pick` on, from here.
    FireMany { pick: Pick, count: u8 },
    /// End the `pick`-th live stream (futures: a spurious wake) and wake it from `via`.
    End { pick: Pick, via: Via },
    /// Take at most `max` outputs, polling only when woken.
    Drain { max: u8 },
    /// Poll until the set settles: every item owed must have come.
    DrainAll,
    /// `clear`.
    Clear,
    /// Drop the set and start a new one.
    Renew,
}

/// An [`Op`], weighted so that sets fill in bursts, are drained in part and whole, and
/// release and regrow their groups several times in one program.
pub fn op() -> impl Strategy<Value = Op> {
    let pick = || any::<u64>().prop_map(Pick);
    // Under Miri a burst of 80 makes a fault sweep (the program once per call into user code)
    // run for minutes; a few bursts of up to 15 still grow the growable set past its first
    // group of 32.
    let (burst, fires): (u8, u8) = if cfg!(miri) { (16, 36) } else { (80, 100) };
    // Past the growable set's first two groups (32 + 64 slots); under Miri, where a fault
    // sweep runs the program once per call into user code, a cycle of a few values.
    let (regrow, spread): (u8, u8) = if cfg!(miri) { (4, 4) } else { (100, 30) };
    prop_oneof![
        3 => (1..burst, 0..4u8).prop_map(|(count, ready)| Op::Insert { count, ready }),
        3 => pick().prop_map(|pick| Op::Remove { pick }),
        2 => pick().prop_map(|pick| Op::Reinsert { pick }),
        2 => pick().prop_map(|pick| Op::UseDeparted { pick }),
        3 => (1..8u8).prop_map(|times| Op::Age { times }),
        2 => Just(Op::RemoveAll),
        1 => (regrow..=regrow + spread, 1..8u8).prop_map(|(to, age)| Op::Regrow { to, age }),
        4 => (pick(), via()).prop_map(|(pick, via)| Op::Fire { pick, via }),
        2 => (pick(), 1..fires).prop_map(|(pick, count)| Op::FireMany { pick, count }),
        1 => (pick(), via()).prop_map(|(pick, via)| Op::End { pick, via }),
        2 => (1..40u8).prop_map(|max| Op::Drain { max }),
        2 => Just(Op::DrainAll),
        1 => Just(Op::Clear),
        1 => Just(Op::Renew),
    ]
}

/// A program: up to `max_ops` operations.
pub fn program(max_ops: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..=max_ops)
}

/// The capacity of the bounded sets the model makes: small enough that bursts fill them.
pub const BOUNDED_CAPACITY: usize = 100;

/// What the model knows of one live value.
#[derive(Debug)]
struct Live {
    key: Key,
    /// Items fired and not yet seen come out, in order.
    owed: VecDeque<u32>,
    /// Whether the test ended it (streams).
    ended: bool,
}

/// One run of a program against a set, with its model.
struct Run<S: KeyedSubject> {
    set: Option<S>,
    faults: Arc<Faults>,
    waker: Waker,
    switches: Arc<WakerSwitches>,
    /// Task wakes seen so far (to tell whether the task was woken since).
    wakes_seen: usize,
    /// Whether the task polls next without a wake (after an output, an insert or a panic).
    dirty: bool,
    threads: Option<WakeThreads>,
    states: Vec<Arc<ValState>>,
    live: HashMap<u32, Live>,
    /// Live ids in insertion order, for picks.
    order: Vec<u32>,
    departed: Vec<(u32, Key)>,
    next_item: u32,
    /// Whether panics are expected (a fault run): a panic is caught and reconciled.
    faulty: bool,
}

/// The first disagreement between a set and its model.
pub type Mismatch = String;

impl<S: KeyedSubject> Run<S> {
    fn new(
        clock: Arc<FaultClock>,
        second: Option<Second>,
        threads: Option<WakeThreads>,
        faulty: bool,
    ) -> Self {
        let (waker, switches) = panicking_waker_on(clock.clone());
        let faults = Faults::new(clock, second, Some(switches.clone()));
        Self {
            set: Some(S::make(BOUNDED_CAPACITY)),
            faults,
            waker,
            switches,
            wakes_seen: 0,
            dirty: false,
            threads,
            states: Vec::new(),
            live: HashMap::new(),
            order: Vec::new(),
            departed: Vec::new(),
            next_item: 0,
            faulty,
        }
    }

    fn set(&mut self) -> &mut S {
        self.set.as_mut().expect("a set")
    }

    fn new_val(&mut self) -> Val {
        let (val, state) = Val::with_faults(self.states.len() as u32, self.faults.clone());
        self.states.push(state);
        val
    }

    fn item(&mut self) -> u32 {
        self.next_item += 1;
        self.next_item
    }

    fn pick_live(&self, pick: Pick) -> Option<u32> {
        (!self.order.is_empty()).then(|| self.order[pick.index(self.order.len())])
    }

    /// The model's side of `id` leaving: its key departs.
    fn depart(&mut self, id: u32) {
        if let Some(live) = self.live.remove(&id) {
            self.order.retain(|&other| other != id);
            self.departed.push((id, live.key));
        }
    }

    fn wake(&mut self, waker: Option<Waker>, via: Via) {
        let Some(waker) = waker else { return };
        match (&self.threads, via) {
            (Some(threads), Via::Thread(_)) if !self.faulty => {
                threads.run_via(via, move || waker.wake());
            }
            _ => waker.wake(),
        }
    }

    fn insert(&mut self, ready: bool) -> Result<(), Mismatch> {
        let val = self.new_val();
        let id = val.id();
        let mut owed = VecDeque::new();
        if ready {
            let item = self.item();
            self.states[id as usize].fire(item);
            owed.push_back(item);
        }
        self.dirty = true;
        match self.set().try_insert(val) {
            Ok(key) => {
                if self.departed.iter().any(|&(_, old)| old == key) {
                    return Err(format!("insert gave {key:?}, a key that departed before"));
                }
                self.live.insert(
                    id,
                    Live {
                        key,
                        owed,
                        ended: false,
                    },
                );
                self.order.push(id);
            }
            Err(back) => {
                if back.id() != id || self.live.len() < BOUNDED_CAPACITY {
                    return Err(format!(
                        "a set of {} refused value {id} (gave back {})",
                        self.live.len(),
                        back.id()
                    ));
                }
                drop(back);
            }
        }
        Ok(())
    }

    fn remove(&mut self, id: u32) -> Result<(), Mismatch> {
        let key = self.live[&id].key;
        // The model first: if the value's drop panics, it has left all the same.
        self.depart(id);
        if !self.set().remove(key) {
            return Err(format!("remove({key:?}) of live value {id} returned false"));
        }
        Ok(())
    }

    /// Removes the newest live value and inserts a new one, `times` times.
    fn age(&mut self, times: u8) -> Result<(), Mismatch> {
        for _ in 0..times {
            let Some(&id) = self.order.last() else { break };
            self.remove(id)?;
            self.insert(false)?;
        }
        Ok(())
    }

    /// Removes every live value, newest first.
    fn remove_all(&mut self) -> Result<(), Mismatch> {
        while let Some(&id) = self.order.last() {
            self.remove(id)?;
        }
        Ok(())
    }

    fn op(&mut self, op: &Op) -> Result<(), Mismatch> {
        match *op {
            Op::Insert { count, ready } => {
                for n in 0..count {
                    self.insert(n < ready)?;
                }
            }
            Op::Remove { pick } => {
                if let Some(id) = self.pick_live(pick) {
                    self.remove(id)?;
                }
            }
            Op::Reinsert { pick } => {
                if let Some(id) = self.pick_live(pick) {
                    self.remove(id)?;
                    self.insert(false)?;
                }
            }
            Op::Age { times } => self.age(times)?,
            Op::RemoveAll => self.remove_all()?,
            Op::Regrow { to, age } => {
                let to = usize::from(to);
                // A bounded set refuses at its capacity: it stops growing there.
                while self.order.len() < to && self.order.len() < BOUNDED_CAPACITY {
                    self.insert(false)?;
                }
                self.age(age)?;
                self.remove_all()?;
                for _ in 0..to.min(BOUNDED_CAPACITY) {
                    self.insert(false)?;
                }
            }
            Op::UseDeparted { pick } => {
                if !self.departed.is_empty() {
                    let (id, key) = self.departed[pick.index(self.departed.len())];
                    refused(self.set(), id, key)?;
                    if self.set().remove(key) {
                        return Err(format!(
                            "remove({key:?}) of departed value {id} returned true"
                        ));
                    }
                }
            }
            Op::Fire { pick, via } => {
                if let Some(id) = self.pick_live(pick) {
                    let item = self.item();
                    self.live.get_mut(&id).expect("live").owed.push_back(item);
                    let waker = self.states[id as usize].fire(item);
                    self.wake(waker, via);
                }
            }
            Op::FireMany { pick, count } => {
                if let Some(first) = self.pick_live(pick) {
                    let from = self.order.iter().position(|&id| id == first).expect("live");
                    let ids: Vec<u32> = self
                        .order
                        .iter()
                        .cycle()
                        .skip(from)
                        .take(count.into())
                        .copied()
                        .collect();
                    for id in ids {
                        if !self.live.contains_key(&id) {
                            continue;
                        }
                        let item = self.item();
                        self.live.get_mut(&id).expect("live").owed.push_back(item);
                        let waker = self.states[id as usize].fire(item);
                        self.wake(waker, Via::Here);
                    }
                }
            }
            Op::End { pick, via } => {
                if let Some(id) = self.pick_live(pick) {
                    if S::STREAMS {
                        self.live.get_mut(&id).expect("live").ended = true;
                    }
                    let waker = self.states[id as usize].end();
                    self.wake(waker, via);
                }
            }
            Op::Drain { max } => self.drain(usize::from(max))?,
            Op::DrainAll => {
                self.drain(usize::MAX)?;
                self.settled()?;
            }
            Op::Clear => {
                for id in self.order.clone() {
                    self.depart(id);
                }
                self.set().clear();
                if self.set().len() != 0 {
                    return Err("clear left values in the set".into());
                }
            }
            Op::Renew => {
                for id in self.order.clone() {
                    self.depart(id);
                }
                // Keys of the set that is dropped are not asked of the new one.
                self.departed.clear();
                self.dirty = true;
                // The new set first: if a value's drop panics, the run goes on with it.
                let old = self.set.replace(S::make(BOUNDED_CAPACITY));
                drop(old);
            }
        }
        Ok(())
    }

    /// Takes up to `max` outputs, polling only when the task was woken or has work of its
    /// own, as an executor does; each output is checked against the model.
    fn drain(&mut self, max: usize) -> Result<(), Mismatch> {
        let mut outputs = 0;
        let mut polls = 0;
        while outputs < max {
            let wakes = self.switches.wakes();
            let woken = wakes != self.wakes_seen;
            self.wakes_seen = wakes;
            if !(woken || self.dirty) {
                return Ok(());
            }
            polls += 1;
            if polls > 100_000 {
                return Err(format!("{} never settles", S::NAME));
            }
            self.dirty = true;
            let set = self.set.as_mut().expect("a set");
            let polled = set.poll_next_keyed(&mut Context::from_waker(&self.waker));
            self.dirty = false;
            match polled {
                Poll::Ready(Some((key, (id, item)))) => {
                    outputs += 1;
                    self.dirty = true;
                    self.output(key, id, item)?;
                }
                Poll::Ready(None) => {
                    self.sync_ended()?;
                    if !self.live.is_empty() {
                        return Err(format!(
                            "the set ended with {} values live",
                            self.live.len()
                        ));
                    }
                    return Ok(());
                }
                Poll::Pending => {}
            }
            self.sync_ended()?;
        }
        Ok(())
    }

    fn output(&mut self, key: Key, id: u32, item: u32) -> Result<(), Mismatch> {
        let Some(live) = self.live.get_mut(&id) else {
            return Err(format!("output {item} of value {id}, which is not live"));
        };
        if live.key != key {
            return Err(format!(
                "output of value {id} under {key:?}, its key is {:?}",
                live.key
            ));
        }
        if live.owed.pop_front() != Some(item) {
            return Err(format!("value {id} gave item {item} out of order"));
        }
        if !S::STREAMS {
            self.depart(id);
        }
        Ok(())
    }

    /// After a full drain: nothing owed is left behind, and ended streams have left.
    fn settled(&mut self) -> Result<(), Mismatch> {
        self.sync_ended()?;
        for (&id, live) in &self.live {
            if !live.owed.is_empty() {
                return Err(format!(
                    "value {id} owes {:?} after the set settled (a lost wake)",
                    live.owed
                ));
            }
        }
        let ended: Vec<u32> = self
            .order
            .iter()
            .copied()
            .filter(|id| self.live[id].ended)
            .collect();
        for id in ended {
            if self.states[id as usize].finished.load(Ordering::SeqCst) {
                self.depart(id);
            } else {
                return Err(format!("stream {id} ended but was not polled to its end"));
            }
        }
        Ok(())
    }

    /// Everything the model knows, compared with the set and the values.
    fn check(&mut self) -> Result<(), Mismatch> {
        self.sync_ended()?;
        if self.set().len() != self.live.len() {
            return Err(format!(
                "len() is {}, the model has {} live values",
                self.set().len(),
                self.live.len()
            ));
        }
        let live: Vec<(u32, Key)> = self.live.iter().map(|(&id, live)| (id, live.key)).collect();
        for (id, key) in live {
            let set = self.set();
            if !set.contains_key(key)
                || set.get(key) != Some(id)
                || set.get_pin_mut(key) != Some(id)
            {
                return Err(format!(
                    "live value {id} is not found under its key {key:?}"
                ));
            }
            if self.states[id as usize].drops() != 0 {
                return Err(format!("live value {id} was dropped"));
            }
        }
        let recent = self.departed.len().saturating_sub(24);
        let set = self.set.as_mut().expect("a set");
        for &(id, key) in &self.departed[recent..] {
            refused(set, id, key)?;
        }
        for state in &self.states {
            let violations = lock(&state.violations);
            if let Some(first) = violations.first() {
                return Err(first.clone());
            }
            let departed = !self.live.contains_key(&state.id);
            if departed && state.drops() != 1 {
                return Err(format!(
                    "departed value {} was dropped {} times",
                    state.id,
                    state.drops()
                ));
            }
        }
        Ok(())
    }

    /// After a caught panic: the model learns from the values what the set did. A value whose
    /// poll or drop panicked, or that the set dropped in the unwinding, has left; a value still
    /// there must not have given an item that never came out of the set.
    fn reconcile(&mut self) -> Result<(), Mismatch> {
        self.dirty = true;
        for id in self.order.clone() {
            let state = &self.states[id as usize];
            if state.drops() > 0 {
                self.depart(id);
                continue;
            }
            let waiting = lock(&state.items).len();
            let owed = self.live[&id].owed.len();
            if owed > waiting {
                return Err(format!(
                    "value {id} gave {} items that never came out of the set",
                    owed - waiting
                ));
            }
        }
        Ok(())
    }

    /// Streams that gave their end have left the set: the model follows.
    fn sync_ended(&mut self) -> Result<(), Mismatch> {
        for id in self.order.clone() {
            if self.states[id as usize].finished.load(Ordering::SeqCst) && S::STREAMS {
                if !self.live[&id].owed.is_empty() {
                    return Err(format!("stream {id} ended before its items came out"));
                }
                self.depart(id);
            }
        }
        Ok(())
    }

    /// Drops the set: every value left must be dropped exactly once.
    fn finish(&mut self) -> Result<(), Mismatch> {
        for id in self.order.clone() {
            self.depart(id);
        }
        self.set = None;
        self.check_drops()
    }

    fn check_drops(&self) -> Result<(), Mismatch> {
        for state in &self.states {
            if let Some(first) = lock(&state.violations).first() {
                return Err(first.clone());
            }
            if state.drops() != 1 {
                return Err(format!(
                    "value {} was dropped {} times in all",
                    state.id,
                    state.drops()
                ));
            }
        }
        Ok(())
    }
}

/// The set refuses `key`, which departed with value `id`.
fn refused<S: KeyedSubject>(set: &mut S, id: u32, key: Key) -> Result<(), Mismatch> {
    if set.contains_key(key) || set.get(key).is_some() || set.get_pin_mut(key).is_some() {
        return Err(format!("departed key {key:?} of value {id} is accepted"));
    }
    Ok(())
}

/// Runs `program` against a new `S` with wakes from `threads` (or from here), checking the
/// model after every step; then drops the set and checks that every value was dropped once.
pub fn run_keyed<S: KeyedSubject>(
    program: &[Op],
    threads: Option<WakeThreads>,
) -> Result<(), Mismatch> {
    let mut run = Run::<S>::new(FaultClock::new(), None, threads, false);
    for (step, op) in program.iter().enumerate() {
        run.op(op)
            .and_then(|()| run.check())
            .map_err(|mismatch| format!("{}: step {step} ({op:?}): {mismatch}", S::NAME))?;
    }
    run.finish()
        .map_err(|mismatch| format!("{}: at the end: {mismatch}", S::NAME))
}

/// The messages of the panics a fault run injects.
const INJECTED: [&str; 6] = [
    CLOCK_PANIC,
    CLONE_PANIC,
    WAKE_PANIC,
    WAKE_BY_REF_PANIC,
    DROP_PANIC,
    SECOND_PANIC,
];

/// What a sweep of faults over a program did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// Calls into user code in the run without a fault: the runs made.
    pub calls: usize,
    /// Runs in which the injected panic fired (the rest fell on a call made while unwinding).
    pub fired: usize,
}

/// Runs `program` once to count its calls into user code, then once per call `k` with a panic
/// at that call; every run is checked against the model after every step, with the panic
/// caught where it surfaced and the model reconciled (see the [module documentation](self)).
/// Wakes come from this thread, so that every run makes the same calls.
pub fn sweep_faults<S: KeyedSubject>(program: &[Op]) -> Result<Sweep, Mismatch> {
    sweep::<S>(program, None)
}

/// [`sweep_faults`] with a second panic in the call of each: the `second` fault, where the
/// first panic makes it possible (after a value's poll panicked, or its drop). The first panic
/// comes out; after a value's poll panicked, the task's waker was registered before it came
/// out, so the task is polled only when woken: a wake lost to it leaves an item owed when the
/// program drains the set, and fails it.
pub fn sweep_two_faults<S: KeyedSubject>(
    program: &[Op],
    second: Second,
) -> Result<Sweep, Mismatch> {
    sweep::<S>(program, Some(second))
}

fn sweep<S: KeyedSubject>(program: &[Op], second: Option<Second>) -> Result<Sweep, Mismatch> {
    let clock = FaultClock::new();
    let calls = {
        let mut run = Run::<S>::new(clock.clone(), None, None, true);
        for op in program {
            run.op(op)?;
        }
        let calls = clock.calls();
        drop(run);
        calls
    };
    let mut sweep = Sweep { calls, fired: 0 };
    for k in 1..=calls {
        clock.arm(k);
        fault_run::<S>(program, &clock, second).map_err(|mismatch| {
            let second = second.map_or(String::new(), |second| format!(" and {second:?}"));
            format!(
                "{}: panic at call {k} of {calls}{second}: {mismatch}",
                S::NAME
            )
        })?;
        if clock.fired() {
            sweep.fired += 1;
        }
        clock.arm(0);
    }
    Ok(sweep)
}

/// The panic that came out of an operation in which the clock's panic fell must be the
/// clock's, the first: [`CLOCK_PANIC`] if it fell in a value's call (`value`), else the task
/// waker's (a second panic follows only one of a value's).
fn check_first(message: &str, fired_in_op: bool, value: bool) -> Result<(), Mismatch> {
    let first = if value {
        message == CLOCK_PANIC
    } else {
        message != CLOCK_PANIC && message != SECOND_PANIC
    };
    if fired_in_op && !first {
        return Err(format!(
            "{message} came out, not the first panic ({})",
            if value {
                CLOCK_PANIC
            } else {
                "the task waker's"
            }
        ));
    }
    Ok(())
}

fn fault_run<S: KeyedSubject>(
    program: &[Op],
    clock: &Arc<FaultClock>,
    second: Option<Second>,
) -> Result<(), Mismatch> {
    let mut run = Run::<S>::new(clock.clone(), second, None, true);
    for (step, op) in program.iter().enumerate() {
        let fired_before = clock.fired();
        let waker_panics = run.switches.panics();
        match catch_unwind(AssertUnwindSafe(|| run.op(op))) {
            Ok(result) => result.map_err(|m| format!("step {step} ({op:?}): {m}"))?,
            Err(payload) => {
                let message = panic_message(&*payload);
                if !INJECTED.contains(&message) {
                    return Err(format!("step {step} ({op:?}): unexpected panic: {message}"));
                }
                let fired_here = clock.fired() && !fired_before;
                let value = run.faults.value_fired.load(Ordering::SeqCst);
                check_first(message, fired_here, value)
                    .map_err(|m| format!("step {step} ({op:?}): {m}"))?;
                run.reconcile()
                    .map_err(|m| format!("step {step} ({op:?}), after the panic: {m}"))?;
                if second.is_some()
                    && fired_here
                    && run.faults.poll_fired.load(Ordering::SeqCst)
                    && run.switches.panics() == waker_panics
                {
                    // Wakes reach the task after a value's poll panicked, and the set woke it
                    // if values are still queued: it needs no call unasked (unless the set's
                    // wake panicked, and could not wake it).
                    run.dirty = false;
                }
            }
        }
        run.check().map_err(|m| {
            format!(
                "step {step} ({op:?}){}: {m}",
                if clock.fired() {
                    ", after the panic"
                } else {
                    ""
                }
            )
        })?;
    }
    // Dropping the set may be where the panic falls.
    for id in run.order.clone() {
        run.depart(id);
    }
    let set = run.set.take();
    let fired_before = clock.fired();
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(set))) {
        let message = panic_message(&*payload);
        let value = run.faults.value_fired.load(Ordering::SeqCst);
        check_first(message, clock.fired() && !fired_before, value)
            .map_err(|m| format!("dropping the set: {m}"))?;
    }
    run.check_drops().map_err(|m| format!("at the end: {m}"))?;
    for state in &run.states {
        drop(lock(&state.waker).take());
    }
    if run.switches.live() != 1 {
        return Err(format!(
            "{} clones of the task waker were leaked",
            run.switches.live() - 1
        ));
    }
    Ok(())
}

/// An ordered set of [`Val`]s as the model drives it: `FuturesOrderedBounded`,
/// `FuturesOrdered`. Outputs come in queue order: `push_back` at the end, `push_front` at the
/// front.
// As for `KeyedSubject`.
#[allow(clippy::len_without_is_empty)]
pub trait OrderedSubject: Stream<Item = (u32, u32)> + Unpin + Sized {
    /// For messages.
    const NAME: &'static str;
    /// A new, empty set; a bounded one holds `capacity`.
    fn make(capacity: usize) -> Self;
    /// `push_back`; gives `val` back if the set is full.
    fn try_push_back(&mut self, val: Val) -> Result<(), Val>;
    /// `push_front`; gives `val` back if the set is full.
    fn try_push_front(&mut self, val: Val) -> Result<(), Val>;
    /// `len`.
    fn len(&self) -> usize;
    /// `clear`.
    fn clear(&mut self);
}

impl OrderedSubject for pinfold_buffer::FuturesOrderedBounded<Val> {
    const NAME: &'static str = "FuturesOrderedBounded";
    fn make(capacity: usize) -> Self {
        Self::new(capacity)
    }
    fn try_push_back(&mut self, val: Val) -> Result<(), Val> {
        Self::try_push_back(self, val)
    }
    fn try_push_front(&mut self, val: Val) -> Result<(), Val> {
        Self::try_push_front(self, val)
    }
    fn len(&self) -> usize {
        Self::len(self)
    }
    fn clear(&mut self) {
        Self::clear(self)
    }
}

impl OrderedSubject for pinfold_buffer::FuturesOrdered<Val> {
    const NAME: &'static str = "FuturesOrdered";
    fn make(_: usize) -> Self {
        Self::new()
    }
    fn try_push_back(&mut self, val: Val) -> Result<(), Val> {
        self.push_back(val);
        Ok(())
    }
    fn try_push_front(&mut self, val: Val) -> Result<(), Val> {
        self.push_front(val);
        Ok(())
    }
    fn len(&self) -> usize {
        Self::len(self)
    }
    fn clear(&mut self) {
        Self::clear(self)
    }
}

/// Runs `program` against a new ordered set `S`, read as: `Insert` pushes at the back,
/// `Reinsert` pushes one at the front, `Fire`, `FireMany` and `End` complete values, `Remove`
/// and `UseDeparted` do nothing (there are no keys). After every step: the length, outputs in
/// queue order and only once the value at the front finished, each value dropped once when it
/// leaves; after a full drain, nothing finished is left at the front.
pub fn run_ordered<S: OrderedSubject>(
    program: &[Op],
    threads: Option<WakeThreads>,
) -> Result<(), Mismatch> {
    let clock = FaultClock::new();
    let (waker, switches) = panicking_waker_on(clock.clone());
    let faults = Faults::new(clock, None, Some(switches.clone()));
    let mut set = S::make(BOUNDED_CAPACITY);
    let mut states: Vec<Arc<ValState>> = Vec::new();
    // The ids in the set, in output order, with the item each will give once fired.
    let mut queue: VecDeque<(u32, Option<u32>)> = VecDeque::new();
    let mut next_item = 0;
    let mut wakes_seen = 0;
    let mut dirty = false;
    let make = |states: &mut Vec<Arc<ValState>>| {
        let (val, state) = Val::with_faults(states.len() as u32, faults.clone());
        states.push(state);
        val
    };
    let fail =
        |step: usize, op: &Op, what: String| format!("{}: step {step} ({op:?}): {what}", S::NAME);
    for (step, op) in program.iter().enumerate() {
        let mut fire = |states: &[Arc<ValState>],
                        queue: &mut VecDeque<(u32, Option<u32>)>,
                        at: usize,
                        via: Via| {
            let Some((id, fired)) = queue.get_mut(at) else {
                return;
            };
            if fired.is_some() {
                return;
            }
            next_item += 1;
            *fired = Some(next_item);
            let waker = states[*id as usize].fire(next_item);
            if let Some(waker) = waker {
                match (&threads, via) {
                    (Some(threads), Via::Thread(_)) => threads.run_via(via, move || waker.wake()),
                    _ => waker.wake(),
                }
            }
        };
        match *op {
            Op::Insert { count, ready } => {
                for n in 0..count {
                    let val = make(&mut states);
                    let id = val.id();
                    dirty = true;
                    match set.try_push_back(val) {
                        Ok(()) => queue.push_back((id, None)),
                        Err(back) if queue.len() >= BOUNDED_CAPACITY && back.id() == id => {}
                        Err(_) => {
                            return Err(fail(
                                step,
                                op,
                                format!("refused with {} queued", queue.len()),
                            ));
                        }
                    }
                    if n < ready {
                        let at = queue.len() - 1;
                        if queue[at].0 == id {
                            fire(&states, &mut queue, at, Via::Here);
                        }
                    }
                }
            }
            Op::Reinsert { .. } => {
                let val = make(&mut states);
                let id = val.id();
                dirty = true;
                match set.try_push_front(val) {
                    Ok(()) => queue.push_front((id, None)),
                    Err(back) if queue.len() >= BOUNDED_CAPACITY && back.id() == id => {}
                    Err(_) => {
                        return Err(fail(
                            step,
                            op,
                            format!("refused with {} queued", queue.len()),
                        ));
                    }
                }
            }
            // The ordered sets have no keys to remove by.
            Op::Remove { .. }
            | Op::UseDeparted { .. }
            | Op::Age { .. }
            | Op::RemoveAll
            | Op::Regrow { .. } => {}
            Op::Fire { pick, via } | Op::End { pick, via } => {
                if !queue.is_empty() {
                    let at = pick.index(queue.len());
                    fire(&states, &mut queue, at, via);
                }
            }
            Op::FireMany { pick, count } => {
                if !queue.is_empty() {
                    let from = pick.index(queue.len());
                    for at in from..(from + usize::from(count)).min(queue.len()) {
                        fire(&states, &mut queue, at, Via::Here);
                    }
                }
            }
            Op::Drain { .. } | Op::DrainAll => {
                let max = max_of(op);
                let mut outputs = 0;
                let mut polls = 0;
                while outputs < max {
                    let wakes = switches.wakes();
                    let woken = wakes != wakes_seen;
                    wakes_seen = wakes;
                    if !(woken || dirty) {
                        break;
                    }
                    polls += 1;
                    if polls > 100_000 {
                        return Err(fail(step, op, "never settles".into()));
                    }
                    let polled = Pin::new(&mut set).poll_next(&mut Context::from_waker(&waker));
                    dirty = false;
                    match polled {
                        Poll::Ready(Some((id, item))) => {
                            outputs += 1;
                            dirty = true;
                            match queue.pop_front() {
                                Some((front, Some(fired))) if front == id && fired == item => {}
                                front => {
                                    return Err(fail(
                                        step,
                                        op,
                                        format!("output ({id}, {item}), the front is {front:?}"),
                                    ));
                                }
                            }
                        }
                        Poll::Ready(None) => {
                            if !queue.is_empty() {
                                return Err(fail(step, op, "ended with values queued".into()));
                            }
                            break;
                        }
                        Poll::Pending => {}
                    }
                }
                if *op == Op::DrainAll && queue.front().is_some_and(|(_, fired)| fired.is_some()) {
                    return Err(fail(
                        step,
                        op,
                        "the front finished but its output did not come (a lost wake)".into(),
                    ));
                }
            }
            Op::Clear => {
                set.clear();
                queue.clear();
            }
            Op::Renew => {
                set = S::make(BOUNDED_CAPACITY);
                queue.clear();
                dirty = true;
            }
        }
        if set.len() != queue.len() {
            return Err(fail(
                step,
                op,
                format!("len() is {}, {} queued", set.len(), queue.len()),
            ));
        }
        for state in &states {
            if let Some(first) = lock(&state.violations).first() {
                return Err(fail(step, op, first.clone()));
            }
            // A finished value whose output waits for the front may be dropped already.
            let queued = queue.iter().any(|&(id, _)| id == state.id);
            let finished = state.finished.load(Ordering::SeqCst);
            let expected = usize::from(!queued);
            if state.drops() != expected && !(queued && finished && state.drops() == 1) {
                return Err(fail(
                    step,
                    op,
                    format!(
                        "value {} dropped {} times, expected {expected}",
                        state.id,
                        state.drops()
                    ),
                ));
            }
        }
    }
    drop(set);
    for state in &states {
        if state.drops() != 1 {
            return Err(format!(
                "{}: value {} dropped {} times in all",
                S::NAME,
                state.id,
                state.drops()
            ));
        }
    }
    Ok(())
}

/// How many outputs a drain step takes.
fn max_of(op: &Op) -> usize {
    match *op {
        Op::Drain { max } => usize::from(max),
        _ => usize::MAX,
    }
}
