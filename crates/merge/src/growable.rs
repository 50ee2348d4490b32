//! [`Merge`]: the merge on a [`GrowableArena`].

use core::fmt;

use pinfold_arena::GrowableArena;

use crate::StreamMerge;

/// A growable merge of streams, whose items come out as the streams give them; its methods
/// are those of [`StreamMerge`]. [`merge`](crate::merge) makes one from an iterator.
///
/// It has no capacity limit: it grows a group of slots at a time and gives the empty groups
/// back after a burst ([*Memory*](crate#memory)); a merge that stays within its capacity
/// allocates nothing. Its order, fairness, wakes and panics are those of the crate
/// documentation.
///
/// # Example
///
/// ```
/// use futures_util::{StreamExt, stream};
/// use pinfold_merge::Merge;
///
/// # futures_executor::block_on(async {
/// let mut merged = Merge::new();
/// merged.extend((0..40).map(|n| stream::iter(vec![n; 2])));
/// assert_eq!(merged.capacity(), 64); // two groups of 32
///
/// let items: Vec<u32> = merged.by_ref().collect().await;
/// assert_eq!(items.len(), 80);
/// assert_eq!(merged.capacity(), 32); // the empty second group was given back
/// # });
/// ```
pub type Merge<S> = StreamMerge<S, GrowableArena<S>>;

impl<S> StreamMerge<S, GrowableArena<S>> {
    /// An empty merge. Allocates nothing: the first push allocates the first group.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream;
    /// use pinfold_merge::Merge;
    ///
    /// let mut merged = Merge::new();
    /// assert_eq!(merged.capacity(), 0);
    /// merged.push(stream::iter(vec![1]));
    /// assert_eq!(merged.capacity(), 32); // the first group
    /// ```
    pub const fn new() -> Self {
        Self::with_arena(GrowableArena::new())
    }

    /// An empty merge whose first group has `capacity` slots, allocated now and kept as long
    /// as the merge. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream;
    /// use pinfold_merge::Merge;
    ///
    /// let mut merged = Merge::with_capacity(10);
    /// merged.extend((0..10).map(|n| stream::iter(vec![n]))); // no allocation
    /// assert_eq!(merged.capacity(), 10);
    /// ```
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
