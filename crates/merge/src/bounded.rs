//! `MergeBounded`: a merge of at most `capacity` streams.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::vec::Vec;
use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Key};

/// A merge of at most `capacity` streams, whose items come out as the streams give them. See
/// the [crate documentation](crate).
///
/// Its storage is allocated when it is made (two allocations) and never again: adding,
/// polling, waking, ending and removing streams allocate nothing.
///
/// `Unpin` whatever `S` is (streams are pinned in the merge's own storage); `Send` if `S` is;
/// `Sync` if `S` is `Send + Sync`.
pub struct MergeBounded<S> {
    arena: Arena<S>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by adding a stream and by `clear`.
    terminated: bool,
}

impl<S> MergeBounded<S> {
    /// An empty merge that can hold `capacity` streams. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self {
            arena: Arena::new(capacity),
            terminated: false,
        }
    }

    /// Adds a stream; it is polled by the next `poll_next`.
    ///
    /// # Panics
    /// If the merge is full, with the message `MergeBounded is full (capacity N)`. Use
    /// [`try_push`](Self::try_push) to get the stream back instead.
    #[track_caller]
    pub fn push(&mut self, stream: S) {
        self.insert(stream);
    }

    /// Adds a stream, or gives it back in `Err` if the merge is full.
    pub fn try_push(&mut self, stream: S) -> Result<(), S> {
        self.try_insert(stream).map(drop)
    }

    /// Adds a stream and returns its key.
    ///
    /// # Panics
    /// If the merge is full, as [`push`](Self::push).
    #[track_caller]
    pub fn insert(&mut self, stream: S) -> Key {
        match self.try_insert(stream) {
            Ok(key) => key,
            Err(_) => panic!("MergeBounded is full (capacity {})", self.capacity()),
        }
    }

    /// Adds a stream and returns its key, or gives the stream back in `Err` if the merge is
    /// full.
    pub fn try_insert(&mut self, stream: S) -> Result<Key, S> {
        let key = self.arena.insert(stream)?;
        self.terminated = false;
        Ok(key)
    }

    /// How many streams the merge can hold.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Whether the merge holds `capacity` streams, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }

    /// Drops every stream. The storage is kept. The merge is no longer terminated.
    ///
    /// If a stream's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the merge stays usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }
}

crate::shared!(MergeBounded);

impl<S> FromIterator<S> for MergeBounded<S> {
    /// A merge of every stream of the iterator, with a capacity equal to their count.
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let streams: Vec<S> = iter.into_iter().collect();
        let mut merged = Self::new(streams.len());
        for stream in streams {
            merged.push(stream);
        }
        merged
    }
}

impl<S> fmt::Debug for MergeBounded<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergeBounded")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}
