//! [`FuturesUnordered`]: the set on a [`GrowableArena`].

use core::fmt;

use pinfold_arena::GrowableArena;

use crate::UnorderedSet;

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish; its methods are those of [`UnorderedSet`].
///
/// It has no capacity limit: it grows a group of slots at a time, each group as large as all
/// the groups below it, and gives the empty groups back after a burst
/// ([*Memory*](crate#memory)). A future never moves once pushed, and growing never reallocates
/// the futures already in the set. Its order (groups take turns), fairness, wakes and panics are
/// those of the crate documentation.
///
/// # Example
///
/// ```
/// use futures_util::StreamExt;
/// use pinfold_unordered::FuturesUnordered;
///
/// # futures_executor::block_on(async {
/// let mut set: FuturesUnordered<_> = (0..40u32).map(|n| async move { n * 2 }).collect();
/// assert_eq!(set.capacity(), 64); // two groups of 32
///
/// let outputs: Vec<u32> = set.by_ref().take(40).collect().await;
/// assert_eq!(outputs.iter().sum::<u32>(), (0..40).map(|n| n * 2).sum());
/// assert_eq!(set.capacity(), 32); // the empty second group was given back
/// # });
/// ```
pub type FuturesUnordered<F> = UnorderedSet<F, GrowableArena<F>>;

/// The futures of a [`FuturesUnordered`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::growable_iter::IntoValues<F>;

impl<F> UnorderedSet<F, GrowableArena<F>> {
    /// An empty set. Allocates nothing: the first push allocates the first group. A `const fn`,
    /// so a set can be made in a `static` or `const` context.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::new();
    /// assert_eq!(set.capacity(), 0);
    /// set.push(ready(1));
    /// assert_eq!(set.capacity(), 32); // the first group
    /// ```
    pub const fn new() -> Self {
        Self::with_arena(GrowableArena::new())
    }

    /// An empty set whose first group has `capacity` slots, allocated now; the first group is
    /// kept as long as the set. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::with_capacity(100);
    /// assert_eq!(set.capacity(), 100);
    /// set.extend((0..100).map(ready)); // no allocation: the first group has room
    /// assert_eq!(set.capacity(), 100);
    /// set.push(ready(100)); // a second group, as large as the first
    /// assert_eq!(set.capacity(), 200);
    /// ```
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
