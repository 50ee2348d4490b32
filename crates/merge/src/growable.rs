//! [`Merge`]: the merge on a [`GrowableArena`].

use core::fmt;

use pinfold_arena::GrowableArena;

use crate::StreamMerge;

/// A growable merge of streams, whose items come out as the streams give them; its methods
/// are those of [`StreamMerge`]. See the [crate documentation](crate).
///
/// It grows and gives memory back as `pinfold::FuturesUnordered` does (groups of slots, each
/// as large as all below it; see the `pinfold-unordered` crate, *Groups* and *Memory*): a
/// merge that stays within its capacity allocates nothing.
pub type Merge<S> = StreamMerge<S, GrowableArena<S>>;

impl<S> StreamMerge<S, GrowableArena<S>> {
    /// An empty merge. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self::with_arena(GrowableArena::new())
    }

    /// An empty merge whose first group has `capacity` slots, allocated now and kept as long
    /// as the merge. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_arena(GrowableArena::with_capacity(capacity))
    }
}

impl<S> Default for StreamMerge<S, GrowableArena<S>> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> FromIterator<S> for StreamMerge<S, GrowableArena<S>> {
    /// A merge of every stream of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut merged = Self::new();
        merged.extend(iter);
        merged
    }
}

impl<S> Extend<S> for StreamMerge<S, GrowableArena<S>> {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for stream in iter {
            self.push(stream);
        }
    }
}

impl<S> fmt::Debug for StreamMerge<S, GrowableArena<S>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Merge")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("groups", &self.arena.groups())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}
