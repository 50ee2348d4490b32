//! The keyed model of [`FutureMap`] and [`StreamMap`]: random programs of inserts (also over a
//! taken key, and in bursts that make the arena add groups), removes, completions woken from
//! this thread or a waker thread, partial and full drains, `clear` and drops of the map, run
//! against a plain model (a `HashMap` from live key to value id) and checked after every step.
//!
//! The user's code the map runs is all instrumented through one [`Plan`]: the key type
//! [`MapKey`] (its `Clone`, `Hash`, `Eq` and `Drop`) and the value type [`Val`] (its `poll` and
//! `Drop`) count every call, and the plan can make its k-th call panic ([`Injected`]). A run
//! with no fault counts the calls; the fault test then runs the same program once for each k.
//! After a caught panic the model is taken from the map (what `keys()` and `get` say), after
//! checking that this is consistent: every value the map no longer holds was dropped exactly
//! once, every value it holds was live before (or is the one being inserted), and the index
//! and the values agree. Then the program goes on, checked as before.
//!
//! The task's waker is [`panicking_waker`]'s, which counts its wakes (the driver polls only
//! after a wake, or after an output or a change of its own, so a lost wake shows up as an
//! output that never comes) and can be made to panic.
//!
//! A plan may add a second panic to a value's poll's ([`Plan::with_second`]), in the same call:
//! the value's or its key's `Drop` as the map drops the entry, or the task waker's wake. The
//! panic that comes out must be the first, and after it the task is polled only when woken.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::marker::PhantomPinned;
use std::panic;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread;

use futures_core::Stream;
use pinfold_map::{FutureMap, StreamMap};
use pinfold_testkit::panicking_waker::{WakerOps, WakerSwitches, panicking_waker};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::fault::{Payload, catch, panic_message};
use crate::program::{Pick, Via, via};
use crate::wake_threads::WakeThreads;

/// Where a user-code call of the map ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Site {
    /// A key's `Clone`.
    KeyClone,
    /// A key's `Hash`.
    KeyHash,
    /// A key's `Eq`.
    KeyEq,
    /// A key's `Drop`.
    KeyDrop,
    /// A value's `poll` (or `poll_next`).
    Poll,
    /// A value's `Drop`.
    ValueDrop,
    /// The task's waker.
    Waker,
}

/// The payload of a panic the [`Plan`] injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    /// Where.
    pub site: Site,
    /// Which call of the run (1 is the first).
    pub call: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What every key and value of one run share: the count of user-code calls, the call to panic
/// in, the key instances made and dropped, and what must never happen.
#[derive(Debug, Default)]
pub struct Plan {
    calls: AtomicU64,
    /// The site whose calls `panic_at` counts; `None` for every site.
    panic_site: Option<Site>,
    /// Calls at `panic_site` so far.
    site_calls: AtomicU64,
    /// The call (at `panic_site`) to panic in; 0 for none.
    panic_at: AtomicU64,
    /// Set while the driver checks the map: its calls are not counted and never panic.
    paused: AtomicBool,
    keys_made: AtomicUsize,
    keys_dropped: AtomicUsize,
    violations: Mutex<Vec<String>>,
    /// A second panic in the call of the first, once that was a value's poll: at the next
    /// call at this site (a value's or a key's `Drop`, as the map drops the entry; the task
    /// waker's next wake for [`Site::Waker`]).
    second: Option<Site>,
    /// Set when the first panic (a value's poll) armed the second, until that fires.
    second_armed: AtomicBool,
    /// The task waker's switches, which [`Site::Waker`] arms.
    switches: Option<Arc<WakerSwitches>>,
    /// The first injected panic, raised and not yet taken by the driver.
    first: Mutex<Option<Injected>>,
    /// The calls counted at each site.
    site_counts: Mutex<HashMap<Site, u64>>,
}

/// Which user-code call of a run panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// None.
    Never,
    /// The k-th call of the run (1 is the first), at any site.
    Call(u64),
    /// The k-th call at this site.
    At(Site, u64),
}

impl Plan {
    /// A plan whose user code panics at `fault`.
    pub fn new(fault: Fault) -> Arc<Self> {
        let (panic_site, panic_at) = match fault {
            Fault::Never => (None, 0),
            Fault::Call(k) => (None, k),
            Fault::At(site, k) => (Some(site), k),
        };
        Arc::new(Self {
            panic_site,
            panic_at: AtomicU64::new(panic_at),
            ..Self::default()
        })
    }

    /// The user-code calls counted so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// The user-code calls at `site` counted so far.
    pub fn calls_at(&self, site: Site) -> u64 {
        lock(&self.site_counts).get(&site).copied().unwrap_or(0)
    }

    /// A plan whose user code panics at `fault` (a value's poll) and then, in the same call, at
    /// the next call at `second` (see [`Site`]); `switches` are the task waker's.
    pub fn with_second(fault: Fault, second: Site, switches: Arc<WakerSwitches>) -> Arc<Self> {
        let mut plan = Arc::into_inner(Self::new(fault)).expect("a new plan");
        plan.second = Some(second);
        plan.switches = Some(switches);
        Arc::new(plan)
    }

    /// The first injected panic, if it was raised since the last call.
    fn take_first(&self) -> Option<Injected> {
        lock(&self.first).take()
    }

    /// Counts a call at `site`; panics if it is the chosen one, or the second panic armed for
    /// it (never while unwinding).
    fn tick(&self, site: Site) {
        if self.paused.load(Ordering::SeqCst) {
            return;
        }
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        *lock(&self.site_counts).entry(site).or_default() += 1;
        if self.second == Some(site)
            && !thread::panicking()
            && self.second_armed.swap(false, Ordering::SeqCst)
        {
            panic::panic_any(Injected { site, call });
        }
        let counted = match self.panic_site {
            None => call,
            Some(panic_site) if panic_site == site => {
                self.site_calls.fetch_add(1, Ordering::SeqCst) + 1
            }
            Some(_) => return,
        };
        if counted == self.panic_at.load(Ordering::SeqCst) && !thread::panicking() {
            let first = Injected { site, call };
            *lock(&self.first) = Some(first);
            if site == Site::Poll {
                match (self.second, &self.switches) {
                    (Some(Site::Waker), Some(switches)) => switches.panic_once(WakerOps::ANY_WAKE),
                    (Some(_), _) => self.second_armed.store(true, Ordering::SeqCst),
                    (None, _) => {}
                }
            }
            panic::panic_any(first);
        }
    }

    /// Runs `f` with the counting paused.
    fn paused<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Resume<'a>(&'a AtomicBool);
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::SeqCst);
            }
        }
        self.paused.store(true, Ordering::SeqCst);
        let _resume = Resume(&self.paused);
        f()
    }

    fn violation(&self, what: String) {
        lock(&self.violations).push(what);
    }

    /// A new key instance with id `id`.
    pub fn key(self: &Arc<Self>, id: u32) -> MapKey {
        self.keys_made.fetch_add(1, Ordering::SeqCst);
        MapKey {
            id,
            plan: self.clone(),
        }
    }

    /// Key instances alive: made (by [`key`](Self::key) or a clone) and not dropped.
    pub fn keys_alive(&self) -> isize {
        self.keys_made.load(Ordering::SeqCst) as isize
            - self.keys_dropped.load(Ordering::SeqCst) as isize
    }
}

/// A key whose `Clone`, `Hash`, `Eq` and `Drop` are counted by its [`Plan`], and panic when the
/// plan says so.
pub struct MapKey {
    id: u32,
    plan: Arc<Plan>,
}

impl MapKey {
    /// The key's id: keys with the same id are equal.
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl fmt::Debug for MapKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MapKey({})", self.id)
    }
}

impl Clone for MapKey {
    fn clone(&self) -> Self {
        self.plan.tick(Site::KeyClone);
        self.plan.key(self.id)
    }
}

impl Hash for MapKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.plan.tick(Site::KeyHash);
        self.id.hash(state);
    }
}

impl PartialEq for MapKey {
    fn eq(&self, other: &Self) -> bool {
        self.plan.tick(Site::KeyEq);
        self.id == other.id
    }
}

impl Eq for MapKey {}

impl Drop for MapKey {
    fn drop(&mut self) {
        // Counted first: a drop that panics still ends the instance.
        self.plan.keys_dropped.fetch_add(1, Ordering::SeqCst);
        self.plan.tick(Site::KeyDrop);
    }
}

/// What a value gives: its id and, for a stream, the item's place in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Out {
    /// The value's id.
    pub val: u32,
    /// 0 for a future; the item's number (from 0) for a stream.
    pub seq: u32,
}

/// What the test has a value do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    /// An output (a future's only one, or a stream's next item).
    Item,
    /// A stream's end.
    End,
}

#[derive(Debug, Default)]
struct ValInner {
    events: VecDeque<Event>,
    /// No more events are taken (a future completed, or a stream's end pushed).
    closed: bool,
    waker: Option<Waker>,
}

/// The state a [`Val`] and its [`ValHandle`]s share.
#[derive(Debug)]
struct ValState {
    id: u32,
    plan: Arc<Plan>,
    inner: Mutex<ValInner>,
    items: AtomicU64,
    /// It returned its last poll (a future's `Ready`, a stream's `None`).
    finished: AtomicBool,
    drops: AtomicUsize,
}

/// A future and a stream the test drives through its [`ValHandle`]: `Pending` until an event
/// is pushed. Counts its drops; its poll and drop are counted by the [`Plan`].
#[derive(Debug)]
pub struct Val {
    state: Arc<ValState>,
    _pinned: PhantomPinned,
}

impl Val {
    /// The value's id.
    pub fn id(&self) -> u32 {
        self.state.id
    }

    fn poll_event(&self, cx: &mut Context<'_>) -> Poll<Event> {
        let state = &*self.state;
        if state.finished.load(Ordering::SeqCst) {
            state
                .plan
                .violation(format!("value {} polled after it finished", state.id));
        }
        state.plan.tick(Site::Poll);
        let mut inner = lock(&state.inner);
        match inner.events.pop_front() {
            Some(event) => Poll::Ready(event),
            None => {
                inner.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    fn out(&self) -> Out {
        let seq = self.state.items.fetch_add(1, Ordering::SeqCst);
        Out {
            val: self.state.id,
            seq: seq as u32,
        }
    }
}

impl Future for Val {
    type Output = Out;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Out> {
        let event = std::task::ready!(self.poll_event(cx));
        assert_eq!(event, Event::Item, "a future is only ever given an item");
        self.state.finished.store(true, Ordering::SeqCst);
        Poll::Ready(self.out())
    }
}

impl Stream for Val {
    type Item = Out;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        match std::task::ready!(self.poll_event(cx)) {
            Event::Item => Poll::Ready(Some(self.out())),
            Event::End => {
                self.state.finished.store(true, Ordering::SeqCst);
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Val {
    fn drop(&mut self) {
        let state = &*self.state;
        if state.drops.fetch_add(1, Ordering::SeqCst) > 0 {
            state
                .plan
                .violation(format!("value {} dropped twice", state.id));
        }
        state.plan.tick(Site::ValueDrop);
    }
}

/// The test's hold on a [`Val`]. `Send`, so a waker thread can push its event.
#[derive(Debug, Clone)]
pub struct ValHandle {
    state: Arc<ValState>,
}

impl ValHandle {
    /// Pushes `event` (unless closed) and wakes the value with the waker of its latest poll.
    fn push(&self, event: Event, closes: bool) {
        let waker = {
            let mut inner = lock(&self.state.inner);
            if inner.closed {
                return;
            }
            inner.closed = closes;
            inner.events.push_back(event);
            inner.waker.clone()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn drops(&self) -> usize {
        self.state.drops.load(Ordering::SeqCst)
    }

    fn finished(&self) -> bool {
        self.state.finished.load(Ordering::SeqCst)
    }

    fn undelivered(&self) -> usize {
        lock(&self.state.inner).events.len()
    }

    fn items(&self) -> u64 {
        self.state.items.load(Ordering::SeqCst)
    }
}

/// Which map a program drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `FutureMap<MapKey, Val>`.
    Futures,
    /// `StreamMap<MapKey, Val>`.
    Streams,
}

/// The map under test.
#[derive(Debug)]
enum AnyMap {
    Futures(FutureMap<MapKey, Val>),
    Streams(StreamMap<MapKey, Val>),
}

/// Forwards `$call` to whichever map `$map` is, as `$m`.
macro_rules! each_map {
    ($map:expr, |$m:ident| $call:expr) => {
        match $map {
            AnyMap::Futures($m) => $call,
            AnyMap::Streams($m) => $call,
        }
    };
}

impl AnyMap {
    fn new(kind: Kind) -> Self {
        match kind {
            Kind::Futures => Self::Futures(FutureMap::new()),
            Kind::Streams => Self::Streams(StreamMap::new()),
        }
    }

    fn insert(&mut self, key: MapKey, value: Val) -> bool {
        each_map!(self, |m| m.insert(key, value))
    }

    fn remove(&mut self, key: &MapKey) -> bool {
        each_map!(self, |m| m.remove(key))
    }

    fn contains_key(&self, key: &MapKey) -> bool {
        each_map!(self, |m| m.contains_key(key))
    }

    fn get(&self, key: &MapKey) -> Option<u32> {
        each_map!(self, |m| m.get(key).map(Val::id))
    }

    fn has_pin_mut(&mut self, key: &MapKey) -> bool {
        each_map!(self, |m| m.get_pin_mut(key).is_some())
    }

    fn len(&self) -> usize {
        each_map!(self, |m| m.len())
    }

    /// The ids `keys()` gives, sorted, and the length it announced.
    fn keys(&self) -> (usize, Vec<u32>) {
        each_map!(self, |m| {
            let keys = m.keys();
            let len = keys.len();
            let mut ids: Vec<u32> = keys.map(MapKey::id).collect();
            ids.sort_unstable();
            (len, ids)
        })
    }

    /// The `(key id, value id)` pairs `iter()` gives, sorted.
    fn iter(&self) -> Vec<(u32, u32)> {
        let mut pairs: Vec<(u32, u32)> =
            each_map!(self, |m| m.iter().map(|(k, v)| (k.id(), v.id())).collect());
        pairs.sort_unstable();
        pairs
    }

    fn clear(&mut self) {
        each_map!(self, |m| m.clear())
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<(MapKey, Out)>> {
        match self {
            Self::Futures(m) => Pin::new(m).poll_next(cx),
            Self::Streams(m) => Pin::new(m).poll_next(cx),
        }
    }
}

/// The operations of a program.
#[derive(Debug, Clone)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum MapOp {
    /// Insert a new value under key `key` (of a small set of keys: often one that is taken,
    /// which replaces its value).
    Insert { key: u8 },
    /// Insert `n` values under keys never used before.
    Burst { n: u16 },
    /// Remove the `pick`-th live key.
    Remove { pick: Pick },
    /// Remove the `pick`-th live key and insert a new value under the same key.
    Reinsert { pick: Pick },
    /// Push an item (or, for a stream, the end if `end`) to the `pick`-th live value, waking it
    /// from `via`.
    Complete { pick: Pick, end: bool, via: Via },
    /// Push an item (for a stream with `end`: then the end) to every live value, from here.
    CompleteAll { end: bool },
    /// Poll the map `times` times, woken or not.
    Poll { times: u8 },
    /// Poll the map until it settles; every pushed event must then have been taken.
    Drain,
    /// `clear`.
    Clear,
    /// Drop the map (and every value and key in it); go on with a new one.
    DropMap,
}

/// The size of a program's bursts: past each group boundary of the arena (32, 64, 128 values)
/// and in between; small under Miri.
fn burst() -> BoxedStrategy<u16> {
    if cfg!(miri) {
        (1u16..12).boxed()
    } else {
        prop_oneof![Just(33u16), Just(65), Just(129), 1u16..140].boxed()
    }
}

/// One operation of a program.
pub fn map_op() -> impl Strategy<Value = MapOp> {
    let pick = || any::<u64>().prop_map(Pick);
    prop_oneof![
        6 => (0u8..24).prop_map(|key| MapOp::Insert { key }),
        2 => burst().prop_map(|n| MapOp::Burst { n }),
        3 => pick().prop_map(|pick| MapOp::Remove { pick }),
        2 => pick().prop_map(|pick| MapOp::Reinsert { pick }),
        8 => (pick(), any::<bool>(), via())
            .prop_map(|(pick, end, via)| MapOp::Complete { pick, end, via }),
        2 => any::<bool>().prop_map(|end| MapOp::CompleteAll { end }),
        3 => (1u8..4).prop_map(|times| MapOp::Poll { times }),
        4 => Just(MapOp::Drain),
        1 => Just(MapOp::Clear),
        1 => Just(MapOp::DropMap),
    ]
}

/// A site of the key's or the value's code, and which of its calls panics (of the first 60).
pub fn site_fault() -> impl Strategy<Value = Fault> {
    let site = prop_oneof![
        Just(Site::KeyClone),
        Just(Site::KeyHash),
        Just(Site::KeyEq),
        Just(Site::KeyDrop),
        Just(Site::Poll),
        Just(Site::ValueDrop),
    ];
    (site, 1u64..60).prop_map(|(site, k)| Fault::At(site, k))
}

/// A program: its map and its operations.
pub fn program(max_ops: usize) -> impl Strategy<Value = (Kind, Vec<MapOp>)> {
    (
        prop_oneof![Just(Kind::Futures), Just(Kind::Streams)],
        prop::collection::vec(map_op(), 1..max_ops),
    )
}

/// Polls of one drain beyond which the map is taken to spin.
const DRAIN_LIMIT: usize = 10_000;

/// The first key id of the keys of bursts (above the small set of `Insert`).
const FRESH_KEYS: u32 = 1_000;

/// What a step found wrong.
pub type Fail = TestCaseError;

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($fmt)+)));
        }
    };
}

/// A program run against a map and the model. See the [module documentation](self).
#[derive(Debug)]
pub struct Driver {
    kind: Kind,
    plan: Arc<Plan>,
    map: Option<AnyMap>,
    /// Live key id to value id.
    model: HashMap<u32, u32>,
    /// Keys that were live and are no longer.
    departed: BTreeSet<u32>,
    vals: Vec<ValHandle>,
    task: Waker,
    switches: Arc<WakerSwitches>,
    /// The task's wakes seen by the last poll.
    seen_wakes: usize,
    /// The task polls next whether or not it was woken.
    dirty: bool,
    threads: WakeThreads,
    next_fresh: u32,
    /// A value being inserted by the current step: the map may hold it after a panic.
    incoming: Option<u32>,
    /// Outputs taken.
    pub outputs: usize,
    /// The injected panics caught, in order.
    pub injected: Vec<Injected>,
}

impl Driver {
    /// A driver of a new map of `kind`, whose user code panics at `fault`.
    pub fn new(kind: Kind, fault: Fault, threads: WakeThreads) -> Self {
        Self::with_second(kind, fault, None, threads)
    }

    /// A driver of a new map of `kind`, whose user code panics at `fault` and, if `fault` is
    /// in a value's poll, then at the next call at `second` (see [`Plan::with_second`]): the
    /// first panic must come out, and after it the task is polled only when woken, so a wake
    /// it lost leaves an event not taken when the program drains the map.
    pub fn with_second(
        kind: Kind,
        fault: Fault,
        second: Option<Site>,
        threads: WakeThreads,
    ) -> Self {
        let (task, switches) = panicking_waker();
        let plan = match second {
            Some(second) => Plan::with_second(fault, second, switches.clone()),
            None => Plan::new(fault),
        };
        Self {
            kind,
            plan,
            map: Some(AnyMap::new(kind)),
            model: HashMap::new(),
            departed: BTreeSet::new(),
            vals: Vec::new(),
            task,
            switches,
            seen_wakes: 0,
            dirty: false,
            threads,
            next_fresh: FRESH_KEYS,
            incoming: None,
            outputs: 0,
            injected: Vec::new(),
        }
    }

    /// The run's plan.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// The task waker's switches.
    pub fn switches(&self) -> &Arc<WakerSwitches> {
        &self.switches
    }

    /// Gives the waker threads back.
    pub fn into_threads(self) -> WakeThreads {
        self.threads
    }

    fn map(&mut self) -> &mut AnyMap {
        self.map.as_mut().expect("the driver always has a map")
    }

    fn new_val(&mut self) -> Val {
        let state = Arc::new(ValState {
            id: self.vals.len() as u32,
            plan: self.plan.clone(),
            inner: Mutex::default(),
            items: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            drops: AtomicUsize::new(0),
        });
        self.vals.push(ValHandle {
            state: state.clone(),
        });
        Val {
            state,
            _pinned: PhantomPinned,
        }
    }

    /// The live keys, sorted (so a pick is the same on every run).
    fn live_keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> = self.model.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    fn depart(&mut self, key: u32) {
        self.model.remove(&key);
        self.departed.insert(key);
    }

    fn insert(&mut self, key: u32) -> Result<(), Fail> {
        let val = self.new_val();
        let id = val.id();
        self.incoming = Some(id);
        let map_key = self.plan.key(key);
        let replaced = self.map().insert(map_key, val);
        self.incoming = None;
        check!(
            replaced == self.model.contains_key(&key),
            "insert under key {key} said replaced = {replaced}"
        );
        self.model.insert(key, id);
        self.departed.remove(&key);
        self.dirty = true;
        Ok(())
    }

    fn remove(&mut self, key: u32) -> Result<(), Fail> {
        let map_key = self.plan.key(key);
        let removed = self.map().remove(&map_key);
        drop(map_key);
        check!(removed, "remove refused live key {key}");
        self.depart(key);
        Ok(())
    }

    /// Runs one operation; a panic it raises propagates.
    fn apply(&mut self, op: &MapOp) -> Result<(), Fail> {
        match *op {
            MapOp::Insert { key } => self.insert(u32::from(key))?,
            MapOp::Burst { n } => {
                for _ in 0..n {
                    let key = self.next_fresh;
                    self.next_fresh += 1;
                    self.insert(key)?;
                }
            }
            MapOp::Remove { pick } | MapOp::Reinsert { pick } => {
                let keys = self.live_keys();
                if keys.is_empty() {
                    return Ok(());
                }
                let key = keys[pick.index(keys.len())];
                self.remove(key)?;
                if let MapOp::Reinsert { .. } = op {
                    self.insert(key)?;
                }
            }
            MapOp::Complete { pick, end, via } => {
                let keys = self.live_keys();
                if keys.is_empty() {
                    return Ok(());
                }
                let val = self.model[&keys[pick.index(keys.len())]];
                let handle = self.vals[val as usize].clone();
                let (event, closes) = self.event(end);
                self.threads
                    .run_via(via, move || handle.push(event, closes));
            }
            MapOp::CompleteAll { end } => {
                for key in self.live_keys() {
                    let handle = &self.vals[self.model[&key] as usize];
                    handle.push(Event::Item, self.kind == Kind::Futures);
                    if end {
                        handle.push(Event::End, true);
                    }
                }
            }
            MapOp::Poll { times } => {
                for _ in 0..times {
                    let _ = self.poll_once()?;
                }
            }
            MapOp::Drain => self.drain()?,
            MapOp::Clear => {
                self.map().clear();
                self.clear_model();
            }
            MapOp::DropMap => {
                let map = self.map.take();
                self.clear_model();
                // A new map before the old one drops: if a drop panics, the driver has a map.
                self.map = Some(AnyMap::new(self.kind));
                drop(map);
            }
        }
        Ok(())
    }

    /// The event a completion pushes: a future's output; a stream's item, or its end.
    fn event(&self, end: bool) -> (Event, bool) {
        match (self.kind, end) {
            (Kind::Futures, _) => (Event::Item, true),
            (Kind::Streams, false) => (Event::Item, false),
            (Kind::Streams, true) => (Event::End, true),
        }
    }

    fn clear_model(&mut self) {
        for key in self.live_keys() {
            self.depart(key);
        }
    }

    /// Polls the map once with the task's waker; takes an output into the model.
    fn poll_once(&mut self) -> Result<Poll<Option<()>>, Fail> {
        self.seen_wakes = self.switches.wakes();
        // Left set if the poll panics: a caller that catches the panic polls again.
        self.dirty = true;
        let task = self.task.clone();
        let polled = self.map().poll_next(&mut Context::from_waker(&task));
        self.dirty = false;
        let polled = match polled {
            Poll::Ready(Some((key, out))) => {
                self.dirty = true;
                self.output(key, out)?;
                Poll::Ready(Some(()))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        };
        self.note_ended_streams();
        Ok(polled)
    }

    /// Checks an output against the model and takes it in.
    fn output(&mut self, key: MapKey, out: Out) -> Result<(), Fail> {
        let id = key.id();
        let (expected, val) = (self.model.get(&id).copied(), &self.vals[out.val as usize]);
        check!(
            expected == Some(out.val),
            "output {out:?} under key {id}, which holds {expected:?}"
        );
        check!(
            u64::from(out.seq) + 1 == val.items(),
            "output {out:?} out of order ({} items made)",
            val.items()
        );
        self.outputs += 1;
        if self.kind == Kind::Futures {
            self.depart(id);
        }
        drop(key);
        Ok(())
    }

    /// Streams that returned their end have left the map with their keys.
    fn note_ended_streams(&mut self) {
        if self.kind == Kind::Streams {
            let ended: Vec<u32> = self
                .model
                .iter()
                .filter(|&(_, &val)| self.vals[val as usize].finished())
                .map(|(&key, _)| key)
                .collect();
            for key in ended {
                self.depart(key);
            }
        }
    }

    /// Polls while the task was woken or has work of its own; then every event pushed to a
    /// live value must have been taken.
    fn drain(&mut self) -> Result<(), Fail> {
        let mut polls = 0;
        while self.dirty || self.switches.wakes() != self.seen_wakes {
            polls += 1;
            check!(
                polls <= DRAIN_LIMIT,
                "the map did not settle in {DRAIN_LIMIT} polls"
            );
            if let Poll::Ready(None) = self.poll_once()? {
                break;
            }
        }
        for (&key, &val) in &self.model {
            let undelivered = self.vals[val as usize].undelivered();
            check!(
                undelivered == 0,
                "settled with {undelivered} events of value {val} (key {key}) not taken: a lost wake"
            );
        }
        Ok(())
    }

    /// Checks the map against the model; the user code it runs is not counted.
    pub fn check(&mut self) -> Result<(), Fail> {
        let plan = self.plan.clone();
        plan.paused(|| self.check_unpaused())
    }

    fn check_unpaused(&mut self) -> Result<(), Fail> {
        let violations = lock(&self.plan.violations).clone();
        check!(violations.is_empty(), "violations: {violations:?}");
        let mut expected: Vec<(u32, u32)> = self.model.iter().map(|(&k, &v)| (k, v)).collect();
        expected.sort_unstable();
        let len = self.map().len();
        check!(len == expected.len(), "len {len}, model {expected:?}");
        let keys = self.map().keys();
        let model_keys: Vec<u32> = expected.iter().map(|&(k, _)| k).collect();
        check!(
            keys == (model_keys.len(), model_keys.clone()),
            "keys() {keys:?}, model {model_keys:?}"
        );
        let iter = self.map().iter();
        check!(iter == expected, "iter() {iter:?}, model {expected:?}");
        for &(key, val) in &expected {
            let map_key = self.plan.key(key);
            let got = self.map().get(&map_key);
            check!(got == Some(val), "get({key}) = {got:?}, model {val}");
            check!(self.map().contains_key(&map_key), "contains_key({key})");
            check!(self.map().has_pin_mut(&map_key), "get_pin_mut({key})");
        }
        // The latest departed keys, and a few of the first: refused, and removing them changes
        // nothing.
        let departed: Vec<u32> = self
            .departed
            .iter()
            .rev()
            .take(6)
            .chain(self.departed.iter().take(2))
            .copied()
            .collect();
        for key in departed {
            let map_key = self.plan.key(key);
            check!(
                !self.map().contains_key(&map_key),
                "contains_key(departed {key})"
            );
            check!(
                !self.map().has_pin_mut(&map_key),
                "get_pin_mut(departed {key})"
            );
            check!(!self.map().remove(&map_key), "remove(departed {key})");
        }
        let live: BTreeSet<u32> = self.model.values().copied().collect();
        for (id, val) in self.vals.iter().enumerate() {
            let (drops, want) = (val.drops(), usize::from(!live.contains(&(id as u32))));
            check!(
                drops == want,
                "value {id} dropped {drops} times, expected {want}"
            );
        }
        let made = self.plan.keys_alive();
        check!(made >= 0, "{} more key drops than keys", -made);
        Ok(())
    }

    /// After a caught panic: checks what the map holds is consistent and plausible, and takes
    /// it as the model.
    fn resync(&mut self) -> Result<(), Fail> {
        let plan = self.plan.clone();
        plan.paused(|| {
            let mut now = HashMap::new();
            let (len, keys) = self.map().keys();
            check!(
                len == keys.len(),
                "keys() announced {len}, gave {}",
                keys.len()
            );
            for key in keys {
                let map_key = self.plan.key(key);
                let Some(val) = self.map().get(&map_key) else {
                    return Err(TestCaseError::fail(format!(
                        "keys() gives {key}, get gives nothing"
                    )));
                };
                let known = self.model.get(&key) == Some(&val) || self.incoming == Some(val);
                check!(
                    known,
                    "after a panic key {key} holds value {val}, model {:?}",
                    self.model.get(&key)
                );
                now.insert(key, val);
            }
            for key in self.live_keys() {
                if !now.contains_key(&key) {
                    self.departed.insert(key);
                }
            }
            if let Some(val) = self.incoming.take()
                && let Some((&key, _)) = now.iter().find(|&(_, &v)| v == val)
            {
                self.departed.remove(&key);
            }
            self.model = now;
            // A caller that caught a panic polls again.
            self.dirty = true;
            self.check_unpaused()
        })
    }

    /// Runs `op`, catching an injected panic (any other panic propagates); after a caught
    /// panic the model is taken from the map. Then checks the map against the model. Returns
    /// the injected panic, if one was caught.
    pub fn step(&mut self, op: &MapOp) -> Result<Option<Injected>, Fail> {
        let waker_panics = self.switches.panics();
        let caught = catch(|| self.apply(op));
        let first = self.plan.take_first();
        let injected = match caught {
            Ok(result) => {
                result?;
                check!(first.is_none(), "the panic {first:?} was swallowed");
                None
            }
            Err(payload) => Some(self.injected(payload)?),
        };
        if let Some(injected) = injected {
            if let Some(first) = first {
                check!(
                    injected == first,
                    "{injected:?} came out, not the first panic, {first:?}"
                );
            }
            self.injected.push(injected);
            self.resync()?;
            if self.plan.second.is_some()
                && first.is_some_and(|first| first.site == Site::Poll)
                && self.switches.panics() == waker_panics
            {
                // The task's waker was registered before the panic came out, and woken if
                // values are still queued (unless that wake panicked): the task polls only
                // when woken.
                self.dirty = false;
            }
        }
        self.check()?;
        Ok(injected)
    }

    /// The injected panic `payload` is (a panic of the task's waker counts as one, with call
    /// 0), or the failure that any other panic (of the map, or of a check) is.
    fn injected(&self, payload: Payload) -> Result<Injected, Fail> {
        if let Some(injected) = payload.downcast_ref::<Injected>() {
            return Ok(*injected);
        }
        let message = panic_message(&*payload);
        check!(
            message.starts_with("panicking waker"),
            "a panic that is not an injected one: {message}"
        );
        Ok(Injected {
            site: Site::Waker,
            call: 0,
        })
    }

    /// Ends the run: completes every value, drains, drops the map; then every value and key
    /// must have been dropped exactly once.
    pub fn finish(&mut self) -> Result<(), Fail> {
        for op in [
            MapOp::CompleteAll { end: true },
            MapOp::Drain,
            MapOp::DropMap,
        ] {
            self.step(&op)?;
        }
        let map = self.map.take();
        drop(map);
        for (id, val) in self.vals.iter().enumerate() {
            check!(val.drops() == 1, "value {id} dropped {} times", val.drops());
        }
        let alive = self.plan.keys_alive();
        check!(
            alive == 0,
            "{alive} key instances alive after the map was dropped"
        );
        Ok(())
    }

    /// Arms the task's waker: its next call of one of `ops` panics.
    pub fn arm_waker(&self, ops: WakerOps) {
        self.switches.panic_once(ops);
    }
}

/// Runs `ops` on a new map of `kind` whose user code panics at `fault`, checking after every
/// step; returns the driver (for its counts).
pub fn run(kind: Kind, ops: &[MapOp], fault: Fault, threads: WakeThreads) -> Result<Driver, Fail> {
    let mut driver = Driver::new(kind, fault, threads);
    run_driver(&mut driver, ops)?;
    Ok(driver)
}

/// Runs `ops` with `driver`, checking after every step, and finishes it.
pub fn run_driver(driver: &mut Driver, ops: &[MapOp]) -> Result<(), Fail> {
    for (i, op) in ops.iter().enumerate() {
        driver
            .step(op)
            .map_err(|fail| TestCaseError::fail(format!("step {i} ({op:?}): {fail}")))?;
    }
    driver.finish()
}
