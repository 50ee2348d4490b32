//! A lock-free slot for the parent task's waker.

use core::task::Waker;

use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

/// Nobody is registering or waking.
const IDLE: usize = 0;
/// The owner is writing a new waker into the cell.
const REGISTERING: usize = 0b01;
/// A waker thread is taking the waker out of the cell.
const WAKING: usize = 0b10;

/// Holds one [`Waker`] that a single owner registers and any thread may wake.
///
/// Exported for the primitives that wake a task from a handle (the buffers' `Limit`): the
/// owner is whoever polls, one at a time; [`wake`](Self::wake) may come from any thread.
///
/// The protocol is the classic three-state one: the owner sets `REGISTERING` while it writes
/// the cell; a waker sets `WAKING` while it takes the waker out. When a wake arrives during a
/// registration, the registering owner sees `WAKING` on its way out and wakes the new waker
/// itself, so no wake is lost.
pub struct AtomicWaker {
    state: AtomicUsize,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the cell is only touched by the thread that moved `state` from IDLE to REGISTERING
// (the owner) or from IDLE to WAKING (one waker); those transitions are exclusive, and `Waker`
// is `Send + Sync`.
unsafe impl Send for AtomicWaker {}
// SAFETY: as for `Send`: the state machine serialises every access to the cell.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    /// An empty slot.
    pub fn new() -> Self {
        Self {
            state: AtomicUsize::new(IDLE),
            waker: UnsafeCell::new(None),
        }
    }

    /// Stores `waker` to be woken by the next [`wake`](Self::wake). Called by the owner only:
    /// one caller at a time (a second, concurrent call is a bug, asserted in debug builds).
    ///
    /// If `waker`'s `clone` panics, or the `drop` of the waker it replaces, the panic
    /// propagates and the cell is left usable: no state is left stuck, and the next
    /// registration works as usual.
    pub fn register(&self, waker: &Waker) {
        // Acquire pairs with the Release in `wake`, so we see the cell as that waker left it.
        match self
            .state
            .compare_exchange(IDLE, REGISTERING, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => {
                // Until `finish` runs, a panic in the clone below hands the state back.
                let guard = Registering(self);
                let same = self.waker.with_mut(|cell| {
                    // SAFETY: we own the REGISTERING state, so no other thread touches the cell.
                    unsafe { &*cell }
                        .as_ref()
                        .is_some_and(|old| old.will_wake(waker))
                });
                let replaced = if same {
                    None
                } else {
                    let new = waker.clone();
                    self.waker.with_mut(|cell| {
                        // SAFETY: as above.
                        unsafe { (*cell).replace(new) }
                    })
                };
                core::mem::forget(guard);
                let handed_on = self.finish();
                // User code runs only now, with the state back to IDLE: dropping the old waker
                // and waking the new one may panic without leaving the cell stuck.
                drop(replaced);
                if let Some(waker) = handed_on {
                    waker.wake();
                }
            }
            Err(WAKING) => {
                // A wake is being delivered right now, to the previous waker, which may belong to
                // another task: wake ours too, so this task polls again.
                waker.wake_by_ref();
            }
            Err(_) => {
                // REGISTERING | WAKING is only reachable from inside `register`, which has a
                // single caller at a time.
                debug_assert!(false, "AtomicWaker::register called concurrently");
            }
        }
    }

    /// Leaves the REGISTERING state. If a wake arrived meanwhile (it could not take the waker),
    /// takes the waker out for the caller to wake.
    fn finish(&self) -> Option<Waker> {
        // AcqRel: Release publishes the cell to the next waker; Acquire sees its writes.
        match self
            .state
            .compare_exchange(REGISTERING, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => None,
            Err(actual) => {
                debug_assert_eq!(actual, REGISTERING | WAKING);
                let taken = self.waker.with_mut(|cell| {
                    // SAFETY: the state still has REGISTERING set: the cell is ours.
                    unsafe { (*cell).take() }
                });
                // AcqRel: Release publishes the emptied cell; Acquire as above.
                self.state.swap(IDLE, Ordering::AcqRel);
                taken
            }
        }
    }

    /// Wakes the registered waker, if any, and forgets it.
    pub fn wake(&self) {
        if let Some(waker) = self.take() {
            waker.wake();
        }
    }

    /// Takes the registered waker out, if no other thread holds the cell.
    pub(crate) fn take(&self) -> Option<Waker> {
        // AcqRel: Acquire sees the owner's write of the cell; Release orders our take before the
        // owner's next registration.
        match self.state.fetch_or(WAKING, Ordering::AcqRel) {
            IDLE => {
                let waker = self.waker.with_mut(|cell| {
                    // SAFETY: we moved the state from IDLE to WAKING: the cell is ours.
                    unsafe { (*cell).take() }
                });
                // Release pairs with the Acquire in `register`.
                self.state.fetch_and(!WAKING, Ordering::Release);
                waker
            }
            // The owner is registering (it will see WAKING and wake the new waker itself), or
            // another thread is already waking.
            _ => None,
        }
    }
}

/// Hands the REGISTERING state back if a registration unwinds (the user's `clone` panicked).
struct Registering<'a>(&'a AtomicWaker);

impl Drop for Registering<'_> {
    fn drop(&mut self) {
        // The cell still holds the old waker, or none; it stays there, so no user code runs
        // while unwinding. A wake that came meanwhile has set its bit in the arena's ready set, which
        // the owner collects on its next poll (its poll is what is unwinding now).
        // Release: publishes the cell, as `finish` does.
        self.0.state.swap(IDLE, Ordering::Release);
    }
}

impl Default for AtomicWaker {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for AtomicWaker {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicWaker").finish_non_exhaustive()
    }
}
