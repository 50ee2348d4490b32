//! [`FaultClock`]: counts the calls into user code that a test makes a structure perform (a
//! value's poll or drop, the task waker's clone, wake or drop, ...) and makes the k-th of them
//! panic, so that a test can put a panic at every point of a run in turn.
//!
//! A run is made once with the clock unarmed, to count its calls; then once for each `k` up to
//! that count, with the clock armed at `k`. The run must make the same calls in the same order
//! up to the panic (one thread, no randomness that differs between runs).
//!
//! ```
//! use pinfold_testkit::fault_clock::FaultClock;
//!
//! let clock = FaultClock::new();
//! assert!(!clock.tick());
//! clock.arm(2);
//! assert!(!clock.tick());
//! assert!(clock.tick(), "the second call from arming panics");
//! assert!(!clock.tick(), "once");
//! assert!(clock.fired());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The message of a panic a [`FaultClock`] calls for (see [`FaultClock::panic_now`]).
pub const CLOCK_PANIC: &str = "fault clock: injected panic";

/// Counts calls into user code and picks the one that panics. See the
/// [module documentation](self).
#[derive(Debug, Default)]
pub struct FaultClock {
    /// Calls since the clock was made or armed.
    calls: AtomicUsize,
    /// The call that panics (1 is the first after arming); 0: none.
    fire_at: AtomicUsize,
    /// Whether that call came and panicked.
    fired: AtomicBool,
}

impl FaultClock {
    /// An unarmed clock: it counts, and nothing panics.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Restarts the count, and makes call `k` from now panic (`k` is 1 for the next call; 0
    /// disarms).
    pub fn arm(&self, k: usize) {
        self.calls.store(0, Ordering::SeqCst);
        self.fired.store(false, Ordering::SeqCst);
        self.fire_at.store(k, Ordering::SeqCst);
    }

    /// How many calls were counted since the clock was made or armed.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// Whether the armed call came and was told to panic.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Counts one call; `true` if it is the armed one and its caller must panic. A call made
    /// while the thread is already unwinding never panics (that would abort the process): the
    /// armed call is then spent without a panic, and [`fired`](Self::fired) stays `false`.
    pub fn tick(&self) -> bool {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call != self.fire_at.load(Ordering::SeqCst) || std::thread::panicking() {
            return false;
        }
        self.fired.store(true, Ordering::SeqCst);
        true
    }

    /// Counts one call and panics with [`CLOCK_PANIC`] if it is the armed one.
    #[track_caller]
    pub fn panic_now(&self) {
        if self.tick() {
            panic!("{CLOCK_PANIC}");
        }
    }
}
