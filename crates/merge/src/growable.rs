//! `Merge`: a growable merge of streams.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{GrowableArena, Key};

/// A growable merge of streams, whose items come out as the streams give them. See the
/// [crate documentation](crate).
///
/// It grows and gives memory back as `pinfold::FuturesUnordered` does (groups of slots, each
/// as large as all below it; see the `pinfold-unordered` crate, *Groups* and *Memory*): a
/// merge that stays within its capacity allocates nothing.
///
/// `Unpin` whatever `S` is (streams are pinned in the merge's own storage); `Send` if `S` is;
/// `Sync` if `S` is `Send + Sync`.
pub struct Merge<S> {
    arena: GrowableArena<S>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by adding a stream and by `clear`.
    terminated: bool,
}

impl<S> Merge<S> {
    /// An empty merge. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self {
            arena: GrowableArena::new(),
            terminated: false,
        }
    }

    /// An empty merge whose first group has `capacity` slots, allocated now and kept as long
    /// as the merge. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            arena: GrowableArena::with_capacity(capacity),
            terminated: false,
        }
    }

    /// Adds a stream; it is polled by the next `poll_next`.
    ///
    /// # Panics
    /// If every one of the 63 groups is full (more streams than memory can hold).
    pub fn push(&mut self, stream: S) {
        self.insert(stream);
    }

    /// Adds a stream, as [`push`](Self::push), and returns its key.
    pub fn insert(&mut self, stream: S) -> Key {
        self.terminated = false;
        self.arena.insert(stream)
    }

    /// How many slots the merge has allocated now: the sum of its groups' capacities.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every stream, then gives back empty groups as after an item (all but the first,
    /// unless the merge retains capacity). The merge is no longer terminated.
    ///
    /// If a stream's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the merge stays usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }
}

crate::shared!(Merge);

impl<S> Default for Merge<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> FromIterator<S> for Merge<S> {
    /// A merge of every stream of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut merged = Self::new();
        merged.extend(iter);
        merged
    }
}

impl<S> Extend<S> for Merge<S> {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for stream in iter {
            self.push(stream);
        }
    }
}

impl<S> fmt::Debug for Merge<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Merge")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("groups", &self.arena.groups())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}
