//! The set: a growable arena of futures.

use core::fmt;

use pinfold_arena::{GrowableArena, Key};

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish. See the [crate documentation](crate) for how it grows, gives memory back,
/// and stays fair.
///
/// `Unpin` whatever `F` is (futures are pinned in the set's own storage); `Send` if `F` is;
/// `Sync` if `F` is `Send + Sync`.
pub struct FuturesUnordered<F> {
    arena: GrowableArena<F>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push and by `clear`.
    terminated: bool,
}

impl<F> FuturesUnordered<F> {
    /// An empty set. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self {
            arena: GrowableArena::new(),
            terminated: false,
        }
    }

    /// An empty set whose first group has `capacity` slots, allocated now; the first group is
    /// kept as long as the set. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            arena: GrowableArena::with_capacity(capacity),
            terminated: false,
        }
    }

    /// Adds a future to the set; it is polled by the next `poll_next`.
    ///
    /// The future goes into a free slot of the smallest group that has one; only when every
    /// group is full is a group added (see the crate documentation, *Memory*).
    ///
    /// # Panics
    /// If every one of the 63 groups is full (more futures than memory can hold).
    pub fn push(&mut self, fut: F) {
        self.insert(fut);
    }

    /// Adds a future to the set, as [`push`](Self::push), and returns its key.
    pub fn insert(&mut self, fut: F) -> Key {
        self.terminated = false;
        self.arena.insert(fut)
    }

    /// How many slots the set has allocated now: the sum of its groups' capacities.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every future in the set, then releases empty groups as after an output (all but
    /// the first, unless the set retains capacity; see the crate documentation, *Memory*). The
    /// set is no longer terminated, as with futures-util.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set stays consistent and usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }
}

pinfold_arena::unordered_set_common!(FuturesUnordered);

impl<F> Default for FuturesUnordered<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> FromIterator<F> for FuturesUnordered<F> {
    /// A set holding every future of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<F> Extend<F> for FuturesUnordered<F> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for fut in iter {
            self.push(fut);
        }
    }
}

/// The futures of a [`FuturesUnordered`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::growable_iter::IntoValues<F>;

impl<F: Unpin> IntoIterator for FuturesUnordered<F> {
    type Item = F;
    type IntoIter = IntoIter<F>;

    /// Moves the futures out of the set (`F: Unpin`), whether or not they were polled.
    fn into_iter(self) -> IntoIter<F> {
        self.arena.into_values()
    }
}

impl<F> fmt::Debug for FuturesUnordered<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FuturesUnordered")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("groups", &self.arena.groups())
            .finish_non_exhaustive()
    }
}
