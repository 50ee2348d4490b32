//! [`MergeBounded`]: the merge on a fixed-capacity [`Arena`].

use core::fmt;

use alloc::vec::Vec;
use pinfold_arena::{Arena, Key};

use crate::StreamMerge;

/// A merge of at most `capacity` streams, whose items come out as the streams give them; its
/// methods are those of [`StreamMerge`]. See the [crate documentation](crate).
///
/// Its storage is allocated when it is made (two allocations) and never again: adding,
/// polling, waking, ending and removing streams allocate nothing.
pub type MergeBounded<S> = StreamMerge<S, Arena<S>>;

impl<S> StreamMerge<S, Arena<S>> {
    /// An empty merge that can hold `capacity` streams. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self::with_arena(Arena::new(capacity))
    }

    /// Adds a stream, or gives it back in `Err` if the merge is full.
    pub fn try_push(&mut self, stream: S) -> Result<(), S> {
        self.try_insert(stream).map(drop)
    }

    /// Adds a stream and returns its key, or gives the stream back in `Err` if the merge is
    /// full.
    pub fn try_insert(&mut self, stream: S) -> Result<Key, S> {
        let key = self.arena.insert(stream)?;
        self.terminated = false;
        Ok(key)
    }

    /// Whether the merge holds `capacity` streams, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }
}

impl<S> FromIterator<S> for StreamMerge<S, Arena<S>> {
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

impl<S> fmt::Debug for StreamMerge<S, Arena<S>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MergeBounded")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("terminated", &self.terminated)
            .finish_non_exhaustive()
    }
}
