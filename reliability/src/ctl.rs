//! [`Ctl`]: a future the test controls, and the [`World`] that keeps count of every one of them.
//!
//! A `Ctl` is `Pending` until the test [completes](CtlHandle::complete) it; then (after
//! waking itself `yields` times, if asked to) it is `Ready` with an [`Out`]. It keeps the waker
//! of its latest poll in its shared state, so the test can wake it from any thread, also after
//! it finished or was dropped (a stale wake). It counts its polls and drops, its outputs made and
//! dropped, remembers where it was first polled (a pinned future must never move), and notices
//! being polled twice within one poll of the primitive, or after `Ready`.
//!
//! It can be told to panic in `poll` (at its n-th poll), in `Drop`, or in its output's `Drop`
//! ([`Faults`]). It never panics in a drop that runs during unwinding (that would abort the
//! process, unless the primitive catches it), unless told to.
//!
//! What must never happen but is seen where a panic would be wrong (in `Drop`) is recorded as a
//! violation in the [`World`], which tests check after every operation.

use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::panic;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::thread;

use crate::fault::{FaultPanic, Site};

/// How a [`Ctl`] finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// With a successful output (`Ok` for a fallible `Ctl`).
    Ok,
    /// With a failed output (`Err` for a fallible `Ctl`).
    Err,
}

/// Faults a [`Ctl`] injects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Panic in the n-th poll (1 is the first), if the future is still running then.
    pub poll_panic_at: Option<u32>,
    /// Panic in `Drop` (unless already unwinding).
    pub drop_panics: bool,
    /// The output panics in its `Drop` (unless already unwinding).
    pub output_drop_panics: bool,
    /// Its `Drop` and its output's panic even while the thread unwinds: a primitive that drops
    /// them there without catching the panic aborts the process (so the cases that use it run
    /// in a child process).
    pub panics_while_unwinding: bool,
}

/// How a [`Ctl`] behaves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spec {
    /// How many times it wakes itself and returns `Pending` once completed, before `Ready`.
    pub yields: u32,
    /// Faults it injects.
    pub faults: Faults,
}

/// What every `Ctl` of a world shares: counters and records.
#[derive(Debug, Default)]
struct Stats {
    /// The current poll of the primitive, bumped by the test before each; 0 turns the
    /// once-per-poll check off (for the reference implementation).
    poll_call: AtomicU64,
    wakes: AtomicUsize,
    polls: AtomicUsize,
    fired: Mutex<Vec<FaultPanic>>,
    violations: Mutex<Vec<String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // An injected panic never happens with a lock held, but a failing assertion might.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Stats {
    fn violation(&self, what: String) {
        lock(&self.violations).push(what);
    }
}

/// The state a [`Ctl`], its [`Out`] and its [`CtlHandle`]s share.
struct CtlState {
    id: u32,
    spec: Spec,
    stats: Arc<Stats>,
    inner: Mutex<Inner>,
    polls: AtomicUsize,
    drops: AtomicUsize,
    made: AtomicUsize,
    output_drops: AtomicUsize,
    /// The poll of the primitive this future was last polled in.
    last_call: AtomicU64,
    /// Where it was first polled; 0 before.
    address: AtomicUsize,
    /// The sites where it raised a panic.
    fired: Mutex<Vec<Site>>,
}

struct Inner {
    outcome: Option<Outcome>,
    waker: Option<Waker>,
    yields_left: u32,
}

impl CtlState {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Raises the injected panic at `site`.
    fn fire(&self, site: Site) -> ! {
        let fault = FaultPanic { id: self.id, site };
        lock(&self.fired).push(site);
        lock(&self.stats.fired).push(fault);
        panic::panic_any(fault)
    }

    fn record_poll(&self, address: usize) {
        self.polls.fetch_add(1, Ordering::SeqCst);
        self.stats.polls.fetch_add(1, Ordering::SeqCst);
        let first = self
            .address
            .compare_exchange(0, address, Ordering::SeqCst, Ordering::SeqCst);
        if let Err(first) = first
            && first != address
        {
            self.stats.violation(format!(
                "future {} moved after its first poll ({first:#x} -> {address:#x})",
                self.id
            ));
        }
        let call = self.stats.poll_call.load(Ordering::SeqCst);
        if call != 0 && self.last_call.swap(call, Ordering::SeqCst) == call {
            self.stats.violation(format!(
                "future {} polled twice in one poll of the primitive (poll #{call})",
                self.id
            ));
        }
        if self.made.load(Ordering::SeqCst) > 0 {
            self.stats
                .violation(format!("future {} polled after it returned Ready", self.id));
        }
    }
}

/// A future the test controls. See the [module documentation](self).
///
/// `!Unpin`: it checks that it is never moved once polled.
pub struct Ctl<T> {
    state: Arc<CtlState>,
    make: fn(Out) -> T,
    _pinned: PhantomPinned,
}

impl<T> fmt::Debug for Ctl<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctl").field("id", &self.state.id).finish()
    }
}

impl<T> Future for Ctl<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.into_ref().get_ref();
        let state = &*this.state;
        state.record_poll(ptr::from_ref(this).addr());
        let polls = state.polls.load(Ordering::SeqCst);
        if state.spec.faults.poll_panic_at == u32::try_from(polls).ok() {
            state.fire(Site::Poll);
        }
        let mut inner = state.inner();
        if !inner
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            inner.waker = Some(cx.waker().clone());
        }
        let Some(outcome) = inner.outcome else {
            return Poll::Pending;
        };
        if inner.yields_left > 0 {
            inner.yields_left -= 1;
            drop(inner);
            state.stats.wakes.fetch_add(1, Ordering::SeqCst);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        drop(inner);
        state.made.fetch_add(1, Ordering::SeqCst);
        Poll::Ready((this.make)(Out {
            state: this.state.clone(),
            failed: outcome == Outcome::Err,
        }))
    }
}

impl<T> Drop for Ctl<T> {
    fn drop(&mut self) {
        let state = &self.state;
        if state.drops.fetch_add(1, Ordering::SeqCst) > 0 {
            state
                .stats
                .violation(format!("future {} dropped twice", state.id));
        }
        let unwinding = thread::panicking() && !state.spec.faults.panics_while_unwinding;
        if state.spec.faults.drop_panics && !unwinding {
            state.fire(Site::Drop);
        }
    }
}

/// The output of a [`Ctl`]: its id and whether it failed. Counts its drops.
pub struct Out {
    state: Arc<CtlState>,
    failed: bool,
}

impl Out {
    /// The id of the `Ctl` that made it.
    pub fn id(&self) -> u32 {
        self.state.id
    }

    /// Whether it was made by a `Ctl` completed with [`Outcome::Err`].
    pub fn failed(&self) -> bool {
        self.failed
    }
}

impl fmt::Debug for Out {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = if self.failed { "Err" } else { "Out" };
        write!(f, "{tag}({})", self.state.id)
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let state = &self.state;
        let drops = state.output_drops.fetch_add(1, Ordering::SeqCst) + 1;
        if drops > state.made.load(Ordering::SeqCst) {
            state
                .stats
                .violation(format!("output of future {} dropped twice", state.id));
        }
        let unwinding = thread::panicking() && !state.spec.faults.panics_while_unwinding;
        if state.spec.faults.output_drop_panics && !unwinding {
            state.fire(Site::OutputDrop);
        }
    }
}

/// The test's hold on a [`Ctl`]: complete it, wake it, read its counters. Cheap to clone and
/// `Send`, so it can go to a waker thread.
#[derive(Clone)]
pub struct CtlHandle {
    state: Arc<CtlState>,
}

impl fmt::Debug for CtlHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CtlHandle")
            .field("id", &self.state.id)
            .field("outcome", &self.outcome())
            .field("polls", &self.polls())
            .field("drops", &self.drops())
            .field("made", &self.made())
            .field("output_drops", &self.output_drops())
            .finish()
    }
}

impl CtlHandle {
    /// The id of the `Ctl`: its index in its [`World`].
    pub fn id(&self) -> u32 {
        self.state.id
    }

    /// How it behaves.
    pub fn spec(&self) -> Spec {
        self.state.spec
    }

    /// Lets the future finish with `outcome` and wakes it with the waker of its latest poll (if
    /// it was polled). `false` if it was completed already (then nothing happens).
    pub fn complete(&self, outcome: Outcome) -> bool {
        let waker = {
            let mut inner = self.state.inner();
            if inner.outcome.is_some() {
                return false;
            }
            inner.outcome = Some(outcome);
            inner.yields_left = self.state.spec.yields;
            inner.waker.clone()
        };
        if let Some(waker) = waker {
            self.state.stats.wakes.fetch_add(1, Ordering::SeqCst);
            waker.wake();
        }
        true
    }

    /// Wakes the future with the waker of its latest poll, if it was polled, whether or not it
    /// is still running (a spurious or stale wake).
    pub fn wake(&self) {
        let waker = self.state.inner().waker.clone();
        if let Some(waker) = waker {
            self.state.stats.wakes.fetch_add(1, Ordering::SeqCst);
            waker.wake_by_ref();
        }
    }

    /// A clone of the waker of its latest poll, if it was polled.
    pub fn waker(&self) -> Option<Waker> {
        self.state.inner().waker.clone()
    }

    /// How it was completed, if it was.
    pub fn outcome(&self) -> Option<Outcome> {
        self.state.inner().outcome
    }

    /// How many times it was polled.
    pub fn polls(&self) -> usize {
        self.state.polls.load(Ordering::SeqCst)
    }

    /// How many times it was dropped.
    pub fn drops(&self) -> usize {
        self.state.drops.load(Ordering::SeqCst)
    }

    /// How many outputs it made (returned `Ready`): 0 or 1.
    pub fn made(&self) -> usize {
        self.state.made.load(Ordering::SeqCst)
    }

    /// How many times its output was dropped.
    pub fn output_drops(&self) -> usize {
        self.state.output_drops.load(Ordering::SeqCst)
    }

    /// Whether it raised its injected panic at `site`.
    pub fn fired(&self, site: Site) -> bool {
        lock(&self.state.fired).contains(&site)
    }

    /// Whether it raised an injected panic in `poll`, or in `Drop` (at its completion, in a set
    /// that drops a finished future at once): either way it has no output to deliver.
    pub fn lost(&self) -> bool {
        let fired = lock(&self.state.fired);
        fired.contains(&Site::Poll) || fired.contains(&Site::Drop)
    }
}

/// Every [`Ctl`] of one run against one implementation, and what they recorded.
#[derive(Debug)]
pub struct World {
    name: &'static str,
    stats: Arc<Stats>,
    ctls: Vec<CtlHandle>,
}

impl World {
    /// An empty world. `name` appears in its failure reports.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            stats: Arc::default(),
            ctls: Vec::new(),
        }
    }

    /// A new `Ctl` whose output is an [`Out`], with id `self.len()`.
    pub fn ctl(&mut self, spec: Spec) -> (Ctl<Out>, CtlHandle) {
        self.make(spec, |out| out)
    }

    /// A new `Ctl` whose output is `Ok(out)`, or `Err(out)` if completed with
    /// [`Outcome::Err`] (for `try_join_all`).
    pub fn fallible_ctl(&mut self, spec: Spec) -> (Ctl<Result<Out, Out>>, CtlHandle) {
        self.make(spec, |out| if out.failed { Err(out) } else { Ok(out) })
    }

    fn make<T>(&mut self, spec: Spec, make: fn(Out) -> T) -> (Ctl<T>, CtlHandle) {
        let state = Arc::new(CtlState {
            id: u32::try_from(self.ctls.len()).expect("fewer than 2^32 futures"),
            spec,
            stats: self.stats.clone(),
            inner: Mutex::new(Inner {
                outcome: None,
                waker: None,
                yields_left: 0,
            }),
            polls: AtomicUsize::new(0),
            drops: AtomicUsize::new(0),
            made: AtomicUsize::new(0),
            output_drops: AtomicUsize::new(0),
            last_call: AtomicU64::new(0),
            address: AtomicUsize::new(0),
            fired: Mutex::new(Vec::new()),
        });
        let handle = CtlHandle {
            state: state.clone(),
        };
        self.ctls.push(handle.clone());
        let ctl = Ctl {
            state,
            make,
            _pinned: PhantomPinned,
        };
        (ctl, handle)
    }

    /// How many `Ctl`s were made.
    pub fn len(&self) -> usize {
        self.ctls.len()
    }

    /// Whether none was made.
    pub fn is_empty(&self) -> bool {
        self.ctls.is_empty()
    }

    /// The handle of `Ctl` `id`.
    pub fn handle(&self, id: u32) -> &CtlHandle {
        &self.ctls[id as usize]
    }

    /// Every handle, by id.
    pub fn handles(&self) -> &[CtlHandle] {
        &self.ctls
    }

    /// How many of the `Ctl`s `ids` were not dropped yet: of a set's members, the futures it
    /// holds; of those a buffer pulled, the ones running.
    pub fn alive(&self, ids: &[u32]) -> usize {
        ids.iter()
            .filter(|&&id| self.handle(id).drops() == 0)
            .count()
    }

    /// The ids of the `Ctl`s not completed yet, in order: what a program's "complete the
    /// `pick`-th running future" picks from.
    pub fn running(&self) -> Vec<u32> {
        self.ctls
            .iter()
            .filter(|ctl| ctl.outcome().is_none())
            .map(CtlHandle::id)
            .collect()
    }

    /// Starts a new poll of the primitive: from now until the next call, a `Ctl` polled twice
    /// is a violation ("one poll polls each value at most once").
    pub fn begin_poll_call(&self) {
        self.stats.poll_call.fetch_add(1, Ordering::SeqCst);
    }

    /// Wakes made by handles and by `Ctl`s waking themselves, in all.
    pub fn wakes(&self) -> usize {
        self.stats.wakes.load(Ordering::SeqCst)
    }

    /// Polls of all the `Ctl`s, in all.
    pub fn polls(&self) -> usize {
        self.stats.polls.load(Ordering::SeqCst)
    }

    /// The injected panics raised since the last call, in order.
    pub fn take_fired(&self) -> Vec<FaultPanic> {
        std::mem::take(&mut *lock(&self.stats.fired))
    }

    /// `Err` with every violation seen so far (a future moved, polled twice in one poll or after
    /// `Ready`, a value dropped twice).
    pub fn check_violations(&self) -> Result<(), String> {
        let violations = lock(&self.stats.violations);
        if violations.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {}", self.name, violations.join("; ")))
        }
    }

    /// `Err` unless every `Ctl` in `ids` was dropped exactly once and each output made was
    /// dropped exactly once: what must hold once they are all gone.
    pub fn check_dropped_once(&self, ids: impl IntoIterator<Item = u32>) -> Result<(), String> {
        self.check_violations()?;
        for id in ids {
            let ctl = self.handle(id);
            if ctl.drops() != 1 || ctl.output_drops() != ctl.made() {
                return Err(format!(
                    "{}: future {id} dropped {} times, its outputs made {} and dropped {} times",
                    self.name,
                    ctl.drops(),
                    ctl.made(),
                    ctl.output_drops()
                ));
            }
        }
        Ok(())
    }

    /// [`check_dropped_once`](Self::check_dropped_once) for every `Ctl` of the world.
    pub fn check_all_dropped_once(&self) -> Result<(), String> {
        self.check_dropped_once(0..self.ctls.len() as u32)
    }
}
