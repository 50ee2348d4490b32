//! [`FuturesUnorderedBounded`]: the set on a fixed-capacity [`Arena`].

use core::fmt;

use alloc::vec::Vec;
use pinfold_arena::{Arena, Key};

use crate::UnorderedSet;

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures finish; its methods are those of [`UnorderedSet`].
///
/// Its storage is allocated by [`new`](UnorderedSet::new) and never again: pushing, polling,
/// waking, finishing and removing a future allocate nothing ([*Memory*](crate#memory)). Only
/// the futures that were woken are polled, each with its own waker, and a future never moves
/// once pushed. Its order, fairness, wakes and panics are those of the crate documentation.
///
/// # Capacity
///
/// A set of capacity `n` holds at most `n` futures. Pushing into a full set is refused:
/// [`try_push`](UnorderedSet::try_push) and [`try_insert`](UnorderedSet::try_insert) give the
/// future back, [`push`](UnorderedSet::push) and [`insert`](UnorderedSet::insert) panic. A
/// slot is free again as soon as its future finished (before its output is returned), was
/// removed, or the set was cleared.
///
/// # Example
///
/// ```
/// use futures_util::StreamExt;
/// use pinfold_unordered::FuturesUnorderedBounded;
///
/// async fn square(n: u64) -> u64 {
///     n * n
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut set = FuturesUnorderedBounded::new(8);
/// for n in 0..8 {
///     set.push(square(n));
/// }
/// assert!(set.try_push(square(100)).is_err()); // full: the future comes back
///
/// let mut squares: Vec<u64> = set.collect().await;
/// squares.sort();
/// assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49]);
/// # });
/// ```
pub type FuturesUnorderedBounded<F> = UnorderedSet<F, Arena<F>>;

/// The futures of a [`FuturesUnorderedBounded`], moved out by its `into_iter`, in no particular
/// order. Dropping it part-way drops the futures it has not given, once each.
pub type IntoIterBounded<F> = pinfold_arena::IntoValues<F>;

impl<F> UnorderedSet<F, Arena<F>> {
    /// An empty set that can hold `capacity` futures. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::Ready;
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// let set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(16);
    /// assert_eq!(set.capacity(), 16);
    /// assert!(set.is_empty());
    /// ```
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self::with_arena(Arena::new(capacity))
    }

    /// Adds a future to the set, or gives it back in `Err` if the set is full.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// # futures_executor::block_on(async {
    /// let mut set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(1);
    /// assert!(set.try_push(ready(1)).is_ok());
    ///
    /// let refused = set.try_push(ready(2)).unwrap_err(); // full
    /// assert_eq!(refused.into_inner(), 2);
    ///
    /// assert_eq!(set.next().await, Some(1)); // the slot is free again
    /// assert!(set.try_push(ready(3)).is_ok());
    /// # });
    /// ```
    pub fn try_push(&mut self, fut: F) -> Result<(), F> {
        self.try_insert(fut).map(drop)
    }

    /// Adds a future to the set and returns its key, or gives it back in `Err` if the set is
    /// full.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// let mut set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(1);
    /// let key = set.try_insert(ready(1)).unwrap();
    /// assert!(set.try_insert(ready(2)).is_err());
    ///
    /// assert!(set.remove(key)); // frees the slot
    /// assert!(set.try_insert(ready(2)).is_ok());
    /// ```
    pub fn try_insert(&mut self, fut: F) -> Result<Key, F> {
        let key = self.arena.insert(fut)?;
        self.terminated = false;
        Ok(key)
    }

    /// Whether the set holds `capacity` futures, so that a push would be refused.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// let mut set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(2);
    /// set.push(ready(1));
    /// assert!(!set.is_full());
    /// set.push(ready(2));
    /// assert!(set.is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }
}

impl<F> FromIterator<F> for UnorderedSet<F, Arena<F>> {
    /// A set holding every future of the iterator, with a capacity equal to their count.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let futures: Vec<F> = iter.into_iter().collect();
        let mut set = Self::new(futures.len());
        for fut in futures {
            set.push(fut);
        }
        set
    }
}

impl<F> fmt::Debug for UnorderedSet<F, Arena<F>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FuturesUnorderedBounded")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
