//! A task waker that panics on command: a user's waker whose `clone`, `wake`, `wake_by_ref` or
//! `drop` panics, for tests that a set survives it. It also counts every call of its
//! operations as a *step*, with the calls of the test's own code that the test counts through
//! [`WakerSwitches::step`] (a future's poll, a value's drop), and can make step `k` panic,
//! whichever it is: a test runs once to count the steps, then once per step with the panic
//! there ([`WakerSwitches::panic_at_step`]).
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
//! # let _ = CLONE_PANIC;
//! ```

// A waker whose clone and drop can be intercepted needs its own vtable, which takes unsafe
// code; nothing else here is unsafe.
#![allow(unsafe_code)]

use std::ops::BitOr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{RawWaker, RawWakerVTable, Waker};

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

/// What a [`panicking_waker`] shares with the test: the switch, and counts of what its
/// handles did.
#[derive(Debug, Default)]
pub struct WakerSwitches {
    /// The operations the next of which panics (then all are disarmed).
    armed: AtomicU8,
    /// Handles alive: the first waker and its clones, less those dropped or woken by value.
    live: AtomicUsize,
    /// Wakes, by value or by reference, that did not panic.
    wakes: AtomicUsize,
    /// Panics raised.
    panics: AtomicUsize,
    /// What each step so far was, in order.
    steps: Mutex<Vec<&'static str>>,
    /// The step that panics (counted from 1); 0 for none.
    panic_at: AtomicUsize,
}

impl WakerSwitches {
    /// Makes the next call of any operation in `ops`, on any handle, panic; that panic turns
    /// every switch off again. A `wake` that panics still consumes its handle, and a `drop`
    /// that panics still releases it, so a panic leaks nothing.
    pub fn panic_once(&self, ops: WakerOps) {
        self.armed.store(ops.0, Ordering::SeqCst);
    }

    /// Whether a panic is armed and has not happened yet.
    pub fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst) != 0
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

    /// Makes step `step` (counted from 1, from the waker's creation) panic, whichever it is: a
    /// call of one of the waker's operations (with that operation's message) or of
    /// [`step`](Self::step) (with its label).
    pub fn panic_at_step(&self, step: usize) {
        self.panic_at.store(step, Ordering::SeqCst);
    }

    /// Counts a step of the test's own code (a future's poll, a value's drop) labelled
    /// `label`, and panics with `label` as the message if it is the step
    /// [`panic_at_step`](Self::panic_at_step) chose.
    pub fn step(&self, label: &'static str) {
        self.count_step(label);
    }

    /// How many steps there were so far.
    pub fn steps(&self) -> usize {
        self.steps.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// What each step so far was, in order: the label of [`step`](Self::step), or the message
    /// of the waker operation's panic ([`CLONE_PANIC`] and so on).
    pub fn step_labels(&self) -> Vec<&'static str> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Counts a step, and panics with `label` if it is the chosen one.
    fn count_step(&self, label: &'static str) {
        let step = {
            let mut steps = self.steps.lock().unwrap_or_else(|e| e.into_inner());
            steps.push(label);
            steps.len()
        };
        if self.panic_at.load(Ordering::SeqCst) == step {
            self.panics.fetch_add(1, Ordering::SeqCst);
            panic!("{label}");
        }
    }

    /// Counts the step, then panics with `message` if `op` is armed, disarming every operation
    /// first.
    fn trip(&self, op: WakerOps, message: &'static str) {
        self.count_step(message);
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

/// A waker that does nothing but count, unless a switch is on (see
/// [`WakerSwitches::panic_once`]), and its switches.
pub fn panicking_waker() -> (Waker, Arc<WakerSwitches>) {
    let switches = Arc::new(WakerSwitches::default());
    switches.live.fetch_add(1, Ordering::SeqCst);
    let raw = RawWaker::new(Arc::into_raw(switches.clone()).cast(), &VTABLE);
    // SAFETY: the data is a strong reference to `WakerSwitches`, which is `Send + Sync`, and
    // every function of `VTABLE` treats it as one (see each function's safety section).
    let waker = unsafe { Waker::from_raw(raw) };
    (waker, switches)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// The switches behind a handle's data, borrowed.
///
/// # Safety
/// `data` must come from `Arc::into_raw` of an `Arc<WakerSwitches>` whose strong reference the
/// caller's handle still owns.
unsafe fn switches<'a>(data: *const ()) -> &'a WakerSwitches {
    // SAFETY: the handle owns a strong reference, so the allocation outlives the borrow.
    unsafe { &*data.cast::<WakerSwitches>() }
}

/// # Safety
/// As for [`switches`].
unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: called through a live handle, as the vtable contract requires.
    let switches = unsafe { switches(data) };
    // Before anything changes: a clone that panics makes no handle.
    switches.trip(WakerOps::CLONE, CLONE_PANIC);
    // SAFETY: `data` came from `Arc::into_raw` and the calling handle keeps it alive; the new
    // strong reference is owned by the new handle.
    unsafe { Arc::increment_strong_count(data.cast::<WakerSwitches>()) };
    switches.live.fetch_add(1, Ordering::SeqCst);
    RawWaker::new(data, &VTABLE)
}

/// # Safety
/// As for [`switches`]; the handle's reference is consumed.
unsafe fn wake(data: *const ()) {
    // SAFETY: the consumed handle owned this strong reference; it is released when `owned`
    // drops, also while unwinding from a panic.
    let owned = unsafe { Arc::from_raw(data.cast::<WakerSwitches>()) };
    owned.live.fetch_sub(1, Ordering::SeqCst);
    owned.trip(WakerOps::WAKE, WAKE_PANIC);
    owned.wakes.fetch_add(1, Ordering::SeqCst);
}

/// # Safety
/// As for [`switches`].
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: called through a live handle, as the vtable contract requires.
    let switches = unsafe { switches(data) };
    switches.trip(WakerOps::WAKE_BY_REF, WAKE_BY_REF_PANIC);
    switches.wakes.fetch_add(1, Ordering::SeqCst);
}

/// # Safety
/// As for [`switches`]; the handle's reference is released.
unsafe fn drop_waker(data: *const ()) {
    // SAFETY: the dropped handle owned this strong reference; it is released when `owned`
    // drops, also while unwinding from a panic.
    let owned = unsafe { Arc::from_raw(data.cast::<WakerSwitches>()) };
    owned.live.fetch_sub(1, Ordering::SeqCst);
    owned.trip(WakerOps::DROP, DROP_PANIC);
}
