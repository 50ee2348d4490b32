//! [`MergeBounded`]: the merge on a fixed-capacity [`Arena`].

use core::fmt;

use alloc::vec::Vec;
use pinfold_arena::{Arena, Key};

use crate::StreamMerge;

/// A merge of at most `capacity` streams, whose items come out as the streams give them; its
/// methods are those of [`StreamMerge`].
///
/// Its storage is allocated by [`new`](StreamMerge::new) and never again: adding, polling,
/// waking, ending and removing streams allocate nothing ([*Memory*](crate#memory)). Its order,
/// fairness, wakes and panics are those of the crate documentation.
///
/// # Capacity
///
/// A merge of capacity `n` holds at most `n` streams. Adding a stream to a full merge is
/// refused: [`try_push`](StreamMerge::try_push) and [`try_insert`](StreamMerge::try_insert)
/// give the stream back, [`push`](StreamMerge::push) and [`insert`](StreamMerge::insert)
/// panic. A slot is free again as soon as its stream ended (within the call that saw its
/// end), was removed, or the merge was cleared.
pub type MergeBounded<S> = StreamMerge<S, Arena<S>>;

impl<S> StreamMerge<S, Arena<S>> {
    /// An empty merge that can hold `capacity` streams. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::Iter;
    /// use pinfold_merge::MergeBounded;
    ///
    /// let merged: MergeBounded<Iter<std::vec::IntoIter<u8>>> = MergeBounded::new(8);
    /// assert_eq!(merged.capacity(), 8);
    /// assert!(merged.is_empty());
    /// ```
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self::with_arena(Arena::new(capacity))
    }

    /// Adds a stream, or gives it back in `Err` if the merge is full.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, StreamExt};
    /// use pinfold_merge::MergeBounded;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = MergeBounded::new(1);
    /// assert!(merged.try_push(stream::iter(vec![1])).is_ok());
    ///
    /// let refused = merged.try_push(stream::iter(vec![2, 3])).unwrap_err(); // full
    /// assert_eq!(refused.collect::<Vec<_>>().await, [2, 3]);
    /// # });
    /// ```
    pub fn try_push(&mut self, stream: S) -> Result<(), S> {
        self.try_insert(stream).map(drop)
    }

    /// Adds a stream and returns its key, or gives the stream back in `Err` if the merge is
    /// full.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream;
    /// use pinfold_merge::MergeBounded;
    ///
    /// let mut merged = MergeBounded::new(1);
    /// let key = merged.try_insert(stream::iter(vec![1])).unwrap();
    /// assert!(merged.try_insert(stream::iter(vec![2])).is_err());
    ///
    /// assert!(merged.remove(key)); // frees the slot
    /// assert!(merged.try_insert(stream::iter(vec![2])).is_ok());
    /// ```
    pub fn try_insert(&mut self, stream: S) -> Result<Key, S> {
        let key = self.arena.insert(stream)?;
        self.terminated = false;
        Ok(key)
    }

    /// Whether the merge holds `capacity` streams, so that a push would be refused.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream;
    /// use pinfold_merge::MergeBounded;
    ///
    /// let mut merged = MergeBounded::new(1);
    /// assert!(!merged.is_full());
    /// merged.push(stream::iter(vec![1]));
    /// assert!(merged.is_full());
    /// ```
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
