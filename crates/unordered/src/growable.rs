//! [`FuturesUnordered`]: the set on a [`GrowableArena`].

use core::fmt;

use pinfold_arena::GrowableArena;

use crate::UnorderedSet;

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish. See the [crate documentation](crate) for how it grows, gives memory back,
/// and stays fair; its methods are those of [`UnorderedSet`].
pub type FuturesUnordered<F> = UnorderedSet<F, GrowableArena<F>>;

/// The futures of a [`FuturesUnordered`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::growable_iter::IntoValues<F>;

impl<F> UnorderedSet<F, GrowableArena<F>> {
    /// An empty set. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self::with_arena(GrowableArena::new())
    }

    /// An empty set whose first group has `capacity` slots, allocated now; the first group is
    /// kept as long as the set. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_arena(GrowableArena::with_capacity(capacity))
    }
}

impl<F> Default for UnorderedSet<F, GrowableArena<F>> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> FromIterator<F> for UnorderedSet<F, GrowableArena<F>> {
    /// A set holding every future of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<F> Extend<F> for UnorderedSet<F, GrowableArena<F>> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for fut in iter {
            self.push(fut);
        }
    }
}

impl<F> fmt::Debug for UnorderedSet<F, GrowableArena<F>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FuturesUnordered")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("groups", &self.arena.groups())
            .finish_non_exhaustive()
    }
}
