//! The shared parent of a growable arena's groups.

use core::task::Waker;

use crate::sync::Arc;
use crate::wake::atomic_waker::AtomicWaker;
use crate::wake::ready_set::ParentWord;

/// The parent of up to [`Hub::GROUPS`] groups: one waker registration for all of them, and
/// one bit per group that says it has woken slots.
///
/// A growable arena gives each of its groups a bit of one hub when it adds the group
/// ([`Store::with_hub`](crate::storage::store::Store::with_hub)). A wake into any of them
/// sets that group's bit in the hub's [`ParentWord`]; the first bit set since the owner last
/// took them wakes the registered task, once for the whole burst.
///
/// Bit 63 is the owner's `BUSY` bit, as in a group's top word (the same protocol): while it
/// is set, groups that become non-empty set their bits without waking the task, which is
/// polling already.
///
/// Cloning a `Hub` makes another handle to the same hub.
#[derive(Clone)]
pub(crate) struct Hub {
    inner: Arc<HubInner>,
}

struct HubInner {
    ready: ParentWord,
    waker: AtomicWaker,
}

impl Hub {
    /// How many groups one hub can serve (bit 63 is `BUSY`).
    pub(crate) const GROUPS: usize = 63;

    /// A hub with no group's bit set and no waker registered. Allocates once.
    pub(crate) fn new() -> Self {
        Self {
            inner: Arc::new(HubInner {
                ready: ParentWord::new(),
                waker: AtomicWaker::new(),
            }),
        }
    }

    /// Registers the task to wake when a group's ready set becomes non-empty. Call it before
    /// the owner's arming take of the [`word`](Hub::word), so that a wake in between is not
    /// missed. Only the owner of the groups calls it (it is not for concurrent callers).
    pub(crate) fn register(&self, waker: &Waker) {
        self.inner.waker.register(waker);
    }

    /// The hub's word: bit `i` says that the group made with bit `i` has had slots woken since
    /// the owner last took it. The owner must collect every group a take names before waiting
    /// for the next wake: a group whose woken slots are left uncollected stays non-empty, so
    /// its later wakes do not reach the hub again.
    #[inline(always)]
    pub(crate) fn word(&self) -> &ParentWord {
        &self.inner.ready
    }

    /// Forgets the registered waker, so a later wake does not reach a task that is gone.
    pub(crate) fn forget_waker(&self) {
        drop(self.inner.waker.take());
    }

    /// Sets the bit of the group made with bit `bit`, waking the task if the word was empty.
    pub(crate) fn notify(&self, bit: u32) {
        if self.inner.ready.raise(1u64 << bit) {
            self.inner.waker.wake();
        }
    }
}

impl core::fmt::Debug for Hub {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hub")
            .field("ready", &self.inner.ready)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn a_hub_shows_which_groups_were_woken() {
        let hub = Hub::new();
        hub.notify(3);
        assert_eq!(format!("{hub:?}"), "Hub { ready: ParentWord(0x8), .. }");
    }
}
