//! A shared parent for several arenas.

use core::task::Waker;

use crate::sync::{Arc, AtomicU64, Ordering};
use crate::wake::atomic_waker::AtomicWaker;
use crate::wake::ready_set::{BUSY, Drain};

/// The parent of up to [`Hub::MAX_ARENAS`] arenas: one waker registration for all of them, and
/// one bit per arena that says it has woken slots.
///
/// A growable arena gives each of its groups a bit of one hub when it adds the group
/// ([`Store::with_hub`](crate::storage::store::Store::with_hub)). A wake into any of them
/// sets that arena's bit; the first bit set since the last [`take_ready`](Hub::take_ready)
/// wakes the registered task, once for the whole burst.
///
/// Bit 63 is the owner's [`BUSY`] bit, as in an arena's top word: while it is set, arenas
/// that become non-empty set their bits without waking the task, which is polling already.
///
/// Cloning a `Hub` makes another handle to the same hub.
#[derive(Clone)]
pub(crate) struct Hub {
    inner: Arc<HubInner>,
}

struct HubInner {
    ready: AtomicU64,
    waker: AtomicWaker,
}

impl Hub {
    /// How many arenas one hub can serve (bit 63 is [`BUSY`]).
    pub(crate) const MAX_ARENAS: usize = 63;

    /// A hub with no arena marked and no waker registered. Allocates once.
    pub(crate) fn new() -> Self {
        Self {
            inner: Arc::new(HubInner {
                ready: AtomicU64::new(0),
                waker: AtomicWaker::new(),
            }),
        }
    }

    /// Registers the task to wake when an arena's ready set becomes non-empty. Call it before
    /// [`take_ready`](Hub::take_ready), so that a wake in between is not missed. Only the owner
    /// of the arenas calls it (it is not for concurrent callers).
    pub(crate) fn register(&self, waker: &Waker) {
        self.inner.waker.register(waker);
    }

    /// Takes the set of arenas (bit `i` for the arena made with bit `i`) that have had slots
    /// woken since the last call, leaving [`BUSY`] as `mode` says.
    ///
    /// The caller must then collect every arena it names before waiting for the next wake: an
    /// arena whose woken slots are left uncollected stays non-empty, so its later wakes do not
    /// notify the hub again.
    pub(crate) fn take_ready(&self, mode: Drain) -> u64 {
        let fill = match mode {
            Drain::KeepBusy => BUSY,
            Drain::Arm => 0,
        };
        // AcqRel: Acquire pairs with the Release in `notify`.
        self.inner.ready.swap(fill, Ordering::AcqRel) & !BUSY
    }

    /// Whether the owner is busy (from an earlier call) and no group was woken since: the word
    /// holds `BUSY` and nothing else.
    #[inline]
    pub(crate) fn nothing_woken(&self) -> bool {
        self.inner.ready.load(Ordering::Relaxed) == BUSY
    }

    /// Whether a [`take_ready`](Self::take_ready) in `mode` has anything to take or change: a
    /// group's bit, or (arming) `BUSY` to clear.
    #[inline]
    pub(crate) fn has_wakes(&self, mode: Drain) -> bool {
        let word = self.inner.ready.load(Ordering::Relaxed);
        match mode {
            Drain::KeepBusy => word & !BUSY != 0,
            Drain::Arm => word != 0,
        }
    }

    /// Clears [`BUSY`] if nothing else is set, as an arming [`take_ready`](Self::take_ready)
    /// would (see [`try_arm`](crate::wake::ready_set::try_arm)).
    #[cfg_attr(feature = "std", allow(dead_code))]
    pub(crate) fn try_arm(&self) -> bool {
        crate::wake::ready_set::try_arm(&self.inner.ready)
    }

    /// Sets [`BUSY`]: the owner starts polling. A plain load when it is set already.
    #[inline]
    pub(crate) fn set_busy(&self) {
        if self.inner.ready.load(Ordering::Relaxed) & BUSY == 0 {
            // Relaxed: as in `ready_set::set_busy`.
            self.inner.ready.fetch_or(BUSY, Ordering::Relaxed);
        }
    }

    /// Forgets the registered waker, so a later wake does not reach a task that is gone.
    pub(crate) fn forget_waker(&self) {
        drop(self.inner.waker.take());
    }

    pub(crate) fn notify(&self, bit: u32) {
        let bit = 1u64 << bit;
        // AcqRel: Release publishes the arena's marked slot to `take_ready`'s Acquire.
        if self.inner.ready.fetch_or(bit, Ordering::AcqRel) == 0 {
            self.inner.waker.wake();
        }
    }
}

impl core::fmt::Debug for Hub {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hub")
            .field(
                "ready",
                &format_args!("{:#x}", self.inner.ready.load(Ordering::Relaxed)),
            )
            .finish_non_exhaustive()
    }
}
