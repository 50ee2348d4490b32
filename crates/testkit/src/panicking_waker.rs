//! A task waker that panics on command: a user's waker whose `clone`, `wake`, `wake_by_ref` or
//! `drop` panics, for tests that a set survives it.
//!
//! Besides the switch for the next call of an operation ([`WakerSwitches::panic_once`]), the
//! switches count every call ([`WakerSwitches::calls`]) and can make the `n`th one panic
//! ([`WakerSwitches::panic_at_call`]): a test runs its schedule once to count the calls, then
//! once per call with the panic there. [`WakerSwitches::run_once`] gives a call something to
//! do first (a user's waker whose clone gives a resource back), and
//! [`WakerSwitches::another_waker`] a second waker on the same switches that does not
//! [`will_wake`](Waker::will_wake) the first.
//!
//! ```
//! use pinfold_testkit::panicking_waker::{CLONE_PANIC, WakerOps, panicking_waker};
//! use std::panic::{AssertUnwindSafe, catch_unwind};
//!
//! let (waker, switches) = panicking_waker();
//! switches.panic_once(WakerOps::CLONE);
//! assert!(catch_unwind(AssertUnwindSafe(|| waker.clone())).is_err());
//! // Once: the switch is off again.
//! let clone = waker.clone();
//! assert_eq!(switches.live(), 2);
//! clone.wake();
//! assert_eq!((switches.wakes(), switches.live(), switches.panics()), (1, 1, 1));
//!
//! // Three calls so far (two clones, one wake); the fourth, whatever it is, panics.
//! assert_eq!(switches.calls(), 3);
//! switches.panic_at_call(4);
//! let other = switches.another_waker();
//! assert!(!other.will_wake(&waker));
//! assert!(catch_unwind(AssertUnwindSafe(|| drop(other))).is_err());
//! assert_eq!((switches.calls(), switches.live(), switches.panics()), (4, 1, 2));
//! # let _ = CLONE_PANIC;
//! ```

// A waker whose clone and drop can be intercepted needs its own vtable, which takes unsafe
// code; nothing else here is unsafe.
#![allow(unsafe_code)]

use std::fmt;
use std::ops::BitOr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::fault_clock::FaultClock;

/// The message of a panic in `clone`.
pub const CLONE_PANIC: &str = "panicking waker: clone";
/// The message of a panic in `wake` (by value).
pub const WAKE_PANIC: &str = "panicking waker: wake";
/// The message of a panic in `wake_by_ref`.
pub const WAKE_BY_REF_PANIC: &str = "panicking waker: wake_by_ref";
/// The message of a panic in `drop`.
pub const DROP_PANIC: &str = "panicking waker: drop";

/// A set of waker operations, combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakerOps(u8);

impl WakerOps {
    /// `Waker::clone`.
    pub const CLONE: Self = Self(0b0001);
    /// `Waker::wake` (by value).
    pub const WAKE: Self = Self(0b0010);
    /// `Waker::wake_by_ref`.
    pub const WAKE_BY_REF: Self = Self(0b0100);
    /// Dropping a waker (not one consumed by `wake`).
    pub const DROP: Self = Self(0b1000);
    /// Either kind of wake: a set may wake its task by value or by reference.
    pub const ANY_WAKE: Self = Self(Self::WAKE.0 | Self::WAKE_BY_REF.0);
}

impl BitOr for WakerOps {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// Something for the next call of some operations to do before anything else.
type Action = (WakerOps, Box<dyn FnOnce() + Send>);

/// What a [`panicking_waker`] shares with the test: the switch, and counts of what its
/// handles did.
#[derive(Default)]
pub struct WakerSwitches {
    /// The operations the next of which panics (then all are disarmed).
    armed: AtomicU8,
    /// The number (from 1, as [`calls`](Self::calls) counts) of the call that panics, or 0.
    panic_at: AtomicUsize,
    /// Calls of any operation on any handle, and of [`step`](Self::step).
    calls: AtomicUsize,
    /// What each call was, in order: the panic message of its operation, or the label of
    /// [`step`](Self::step).
    labels: Mutex<Vec<&'static str>>,
    /// What the next call of some operations runs first.
    action: Mutex<Option<Action>>,
    /// Handles alive: the first waker and its clones, less those dropped or woken by value.
    live: AtomicUsize,
    /// Wakes, by value or by reference, that did not panic.
    wakes: AtomicUsize,
    /// Panics raised.
    panics: AtomicUsize,
    /// A clock every call also counts on, and that may pick one to panic.
    clock: Option<Arc<FaultClock>>,
}

impl WakerSwitches {
    /// Makes the next call of any operation in `ops`, on any handle, panic; that panic turns
    /// every switch off again. A `wake` that panics still consumes its handle, and a `drop`
    /// that panics still releases it, so a panic leaks nothing.
    pub fn panic_once(&self, ops: WakerOps) {
        self.armed.store(ops.0, Ordering::SeqCst);
    }

    /// Makes call number `call` panic, whatever its operation: calls are counted from 1 over
    /// every operation of every handle, as [`calls`](Self::calls) counts them. Once.
    pub fn panic_at_call(&self, call: usize) {
        self.panic_at.store(call, Ordering::SeqCst);
    }

    /// Makes the next call of any operation in `ops`, on any handle, run `action` before it
    /// does anything else (before it panics, if it is to panic). Once.
    pub fn run_once(&self, ops: WakerOps, action: impl FnOnce() + Send + 'static) {
        *self.action.lock().unwrap_or_else(PoisonError::into_inner) = Some((ops, Box::new(action)));
    }

    /// Counts a call of the test's own code (a future's poll, a value's drop) labelled `label`
    /// with the waker's calls, and panics with `label` as the message if it is the call
    /// [`panic_at_call`](Self::panic_at_call) or the clock chose: one count for every call into
    /// user code in a run.
    pub fn step(&self, label: &'static str) {
        let call = self.count(label);
        self.panic_if_chosen(call, label);
    }

    /// What each call so far was, in order: the label of [`step`](Self::step), or the message
    /// of the waker operation's panic ([`CLONE_PANIC`] and so on).
    pub fn step_labels(&self) -> Vec<&'static str> {
        self.labels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Counts a call labelled `label`; its number.
    fn count(&self, label: &'static str) -> usize {
        self.labels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(label);
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Panics with `message` if call number `call` is the one chosen, by
    /// [`panic_at_call`](Self::panic_at_call) or by the clock.
    fn panic_if_chosen(&self, call: usize, message: &'static str) {
        let clock_fires = self.clock.as_ref().is_some_and(|clock| clock.tick());
        if clock_fires
            || self
                .panic_at
                .compare_exchange(call, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            self.panics.fetch_add(1, Ordering::SeqCst);
            panic!("{message}");
        }
    }

    /// Whether an action of [`run_once`](Self::run_once) waits for its call.
    pub fn has_action(&self) -> bool {
        self.action
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Whether a panic is armed and has not happened yet.
    pub fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst) != 0 || self.panic_at.load(Ordering::SeqCst) != 0
    }

    /// How many times any handle's `clone`, `wake`, `wake_by_ref` or `drop` was called,
    /// panicking or not.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// A new waker on these switches (counted, armed and panicking with the others) that does
    /// not [`will_wake`](Waker::will_wake) any waker made before: to a future, the task's waker
    /// changed.
    pub fn another_waker(self: &Arc<Self>) -> Waker {
        self.live.fetch_add(1, Ordering::SeqCst);
        let handle = Arc::new(Handle {
            switches: self.clone(),
        });
        let raw = RawWaker::new(Arc::into_raw(handle).cast(), &VTABLE);
        // SAFETY: the data is a strong reference to a `Handle`, which is `Send + Sync`, and
        // every function of `VTABLE` treats it as one (see each function's safety section).
        unsafe { Waker::from_raw(raw) }
    }

    /// How many wakes, by value or by reference, went through without a panic.
    pub fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }

    /// How many panics the handles raised.
    pub fn panics(&self) -> usize {
        self.panics.load(Ordering::SeqCst)
    }

    /// How many handles are alive: the waker [`panicking_waker`] made and its clones, less
    /// those dropped or woken by value. Once everything that got a clone is gone, it is the
    /// test's own handles; anything more was leaked.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// One call of `op`: counts it, runs the action waiting for it, and panics with `message`
    /// if this call or `op` is armed (disarming it first).
    fn enter(&self, op: WakerOps, message: &'static str) {
        let call = self.count(message);
        let action = {
            let mut slot = self.action.lock().unwrap_or_else(PoisonError::into_inner);
            match slot.take() {
                Some((ops, action)) if ops.0 & op.0 != 0 => Some(action),
                other => {
                    *slot = other;
                    None
                }
            }
        };
        // Run with the slot unlocked: the action may call the waker again.
        if let Some(action) = action {
            action();
        }
        self.panic_if_chosen(call, message);
        self.trip(op, message);
    }

    /// Panics with `message` if `op` is armed, disarming every operation first.
    fn trip(&self, op: WakerOps, message: &'static str) {
        let mut armed = self.armed.load(Ordering::SeqCst);
        while armed & op.0 != 0 {
            match self
                .armed
                .compare_exchange(armed, 0, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    self.panics.fetch_add(1, Ordering::SeqCst);
                    panic!("{message}");
                }
                Err(now) => armed = now,
            }
        }
    }
}

impl fmt::Debug for WakerSwitches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WakerSwitches")
            .field("armed", &self.is_armed())
            .field("calls", &self.calls())
            .field("live", &self.live())
            .field("wakes", &self.wakes())
            .field("panics", &self.panics())
            .finish_non_exhaustive()
    }
}

/// A waker that does nothing but count, unless a switch is on (see
/// [`WakerSwitches::panic_once`]), and its switches.
pub fn panicking_waker() -> (Waker, Arc<WakerSwitches>) {
    let switches = Arc::new(WakerSwitches::default());
    (switches.another_waker(), switches)
}

/// A [`panicking_waker`] whose every `clone`, `wake`, `wake_by_ref` and `drop` also counts on
/// `clock`, and panics when the clock picks it: one count for the calls into the waker and
/// into the values of a run.
pub fn panicking_waker_on(clock: Arc<FaultClock>) -> (Waker, Arc<WakerSwitches>) {
    let switches = Arc::new(WakerSwitches {
        clock: Some(clock),
        ..WakerSwitches::default()
    });
    (switches.another_waker(), switches)
}

/// What a waker's data points to: one allocation per waker made by
/// [`WakerSwitches::another_waker`], shared by its clones.
struct Handle {
    switches: Arc<WakerSwitches>,
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// The switches behind a handle's data, borrowed.
///
/// # Safety
/// `data` must come from `Arc::into_raw` of an `Arc<Handle>` whose strong reference the
/// caller's handle still owns.
unsafe fn switches<'a>(data: *const ()) -> &'a WakerSwitches {
    // SAFETY: the handle owns a strong reference, so the allocation outlives the borrow.
    unsafe { &(*data.cast::<Handle>()).switches }
}

/// # Safety
/// As for [`switches`].
unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: called through a live handle, as the vtable contract requires.
    let switches = unsafe { switches(data) };
    // Before anything changes: a clone that panics makes no handle.
    switches.enter(WakerOps::CLONE, CLONE_PANIC);
    // SAFETY: `data` came from `Arc::into_raw` and the calling handle keeps it alive; the new
    // strong reference is owned by the new handle.
    unsafe { Arc::increment_strong_count(data.cast::<Handle>()) };
    switches.live.fetch_add(1, Ordering::SeqCst);
    RawWaker::new(data, &VTABLE)
}

/// # Safety
/// As for [`switches`]; the handle's reference is consumed.
unsafe fn wake(data: *const ()) {
    // SAFETY: the consumed handle owned this strong reference; it is released when `owned`
    // drops, also while unwinding from a panic.
    let owned = unsafe { Arc::from_raw(data.cast::<Handle>()) };
    let switches = &owned.switches;
    switches.live.fetch_sub(1, Ordering::SeqCst);
    switches.enter(WakerOps::WAKE, WAKE_PANIC);
    switches.wakes.fetch_add(1, Ordering::SeqCst);
}

/// # Safety
/// As for [`switches`].
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: called through a live handle, as the vtable contract requires.
    let switches = unsafe { switches(data) };
    switches.enter(WakerOps::WAKE_BY_REF, WAKE_BY_REF_PANIC);
    switches.wakes.fetch_add(1, Ordering::SeqCst);
}

/// # Safety
/// As for [`switches`]; the handle's reference is released.
unsafe fn drop_waker(data: *const ()) {
    // SAFETY: the dropped handle owned this strong reference; it is released when `owned`
    // drops, also while unwinding from a panic.
    let owned = unsafe { Arc::from_raw(data.cast::<Handle>()) };
    owned.switches.live.fetch_sub(1, Ordering::SeqCst);
    owned.switches.enter(WakerOps::DROP, DROP_PANIC);
}
