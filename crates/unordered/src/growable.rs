//! [`FuturesUnordered`]: the set on a [`GrowableArena`].

use core::fmt;
use core::future::Future;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Futures, GrowableArena, Key, Keyed};
use pinfold_buffer::Driven;

use crate::UnorderedSet;

/// A growable set of futures, polled concurrently, whose outputs come out in the order the futures
/// finish; its methods are those of [`UnorderedSet`], each its own: a call by path
/// (`FuturesUnordered::push(set, x)`), as code written for futures-util makes, reaches it, never a
/// trait's method of the same name. It also dereferences to that type.
///
/// It has no capacity limit: it grows a group of slots at a time (its capacity doubling up to
/// 256 slots, then growing by a quarter up to 262,144) and gives the empty groups back after a
/// burst ([*Memory*](pinfold_arena::contract#memory)). A future never moves once pushed, and
/// growing never reallocates the futures already in the set. It keeps the rules every pinfold
/// primitive keeps ([the shared rules](crate#the-shared-rules)), with one queue for all its
/// groups.
///
/// # Example
///
/// ```
/// use futures::StreamExt;
/// use pinfold::FuturesUnordered;
///
/// # futures::executor::block_on(async {
/// let mut set: FuturesUnordered<_> = (0..40u32).map(|n| async move { n * 2 }).collect();
/// assert_eq!(set.capacity(), 64); // two groups of 32
///
/// let outputs: Vec<u32> = set.by_ref().take(40).collect().await;
/// assert_eq!(outputs.iter().sum::<u32>(), (0..40).map(|n| n * 2).sum());
/// assert_eq!(set.capacity(), 32); // the empty second group was given back
/// # });
/// ```
#[must_use = "streams do nothing unless polled"]
pub struct FuturesUnordered<F>(UnorderedSet<F, GrowableArena<F>>);

impl<F> FuturesUnordered<F> {
    /// An empty set. Allocates nothing: the first push allocates the first group.
    pub const fn new() -> Self {
        Self(UnorderedSet::<F, GrowableArena<F>>::new())
    }

    /// An empty set with room for at least `capacity` futures, allocated now; that first
    /// group is kept as long as the set.
    ///
    /// # Panics
    /// If `capacity` is more futures than a growable set holds (its 63 groups), before
    /// anything is allocated.
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self(UnorderedSet::<F, GrowableArena<F>>::with_capacity(capacity))
    }
}

impl<F: Future> FuturesUnordered<F> {
    /// The set as a [`Driven`]: [`BufferExt::driven`](pinfold_buffer::BufferExt::driven) for a
    /// set of futures, which `set.driven(limit)` calls instead of that one. Driven
    /// ([`poll_progress`](pinfold_buffer::ProgressStream::poll_progress)), the set is polled
    /// and its outputs taken ahead, and once `limit` are held it goes on polling the set: the
    /// futures keep running (one that holds a lock the consumer waits for lets it go), and the
    /// outputs they give are held past the limit, at most one per future
    /// ([*At the limit*](Driven#at-the-limit)).
    ///
    /// # Panics
    /// If `limit` is 0, with the message `driven: limit must be greater than 0`.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold::ProgressStreamExt;
    /// use pinfold::FuturesUnordered;
    ///
    /// # futures::executor::block_on(async {
    /// let set: FuturesUnordered<_> = (0..4u32).map(|n| async move { n }).collect();
    /// let mut sum = 0;
    /// set.driven(1)
    ///     .for_each_driven(|n| {
    ///         sum += n;
    ///         async {}
    ///     })
    ///     .await;
    /// assert_eq!(sum, 6);
    /// # });
    /// ```
    #[track_caller]
    pub fn driven(self, limit: usize) -> Driven<Self> {
        Driven::one_item_per_value(self, limit)
    }
}

impl<F> FuturesUnordered<F> {
    /// Adds a future, polled by the next `poll_next`: [`UnorderedSet::push`], whose panics apply.
    #[track_caller]
    #[inline]
    pub fn push(&mut self, future: F) {
        self.0.push(future);
    }

    /// Adds a future and returns its key: [`UnorderedSet::insert`], whose panics apply.
    #[track_caller]
    #[inline]
    pub fn insert(&mut self, future: F) -> Key {
        self.0.insert(future)
    }

    /// Drops `key`'s future in place now; `false` if it was gone already: [`UnorderedSet::remove`].
    pub fn remove(&mut self, key: Key) -> bool {
        self.0.remove(key)
    }

    /// Whether `key`'s future is still in the set: [`UnorderedSet::contains_key`].
    pub fn contains_key(&self, key: Key) -> bool {
        self.0.contains_key(key)
    }

    /// `key`'s future, if it is still in the set: [`UnorderedSet::get`].
    pub fn get(&self, key: Key) -> Option<&F> {
        self.0.get(key)
    }

    /// `key`'s future, pinned, if it is still in the set: [`UnorderedSet::get_pin_mut`].
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut F>> {
        self.0.get_pin_mut(key)
    }

    /// How many futures the set holds: [`UnorderedSet::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set holds no future: [`UnorderedSet::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many futures the set can hold now: [`UnorderedSet::capacity`].
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Drops every future: [`UnorderedSet::clear`].
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The futures, in no particular order: [`UnorderedSet::iter`].
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &F> + '_ {
        self.0.iter()
    }

    /// The futures with their keys, in no particular order: [`UnorderedSet::iter_keyed`].
    pub fn iter_keyed(&self) -> impl ExactSizeIterator<Item = (Key, &F)> + '_ {
        self.0.iter_keyed()
    }

    /// The futures, pinned, in no particular order: [`UnorderedSet::iter_pin_mut`].
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut F>> + '_ {
        self.0.iter_pin_mut()
    }

    /// The futures, pinned, with their keys, in no particular order:
    /// [`UnorderedSet::iter_pin_mut_keyed`].
    pub fn iter_pin_mut_keyed(&mut self) -> impl ExactSizeIterator<Item = (Key, Pin<&mut F>)> + '_ {
        self.0.iter_pin_mut_keyed()
    }

    /// The futures, mutably, in no particular order: [`UnorderedSet::iter_mut`].
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = &mut F> + '_
    where
        F: Unpin,
    {
        self.0.iter_mut()
    }

    /// Adds groups ahead of time, until at least `additional` slots are free:
    /// [`UnorderedSet::reserve`], whose panics apply.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }
}
impl<F: Future> FuturesUnordered<F> {
    /// `poll_next` that also says which future gave the output: [`UnorderedSet::poll_next_keyed`].
    #[inline(always)]
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>> {
        self.0.poll_next_keyed(cx)
    }

    /// The set as a [`Stream`] of `(key, output)`, borrowing it mutably: [`UnorderedSet::keyed`].
    pub fn keyed(&mut self) -> Keyed<'_, F, GrowableArena<F>, Futures> {
        self.0.keyed()
    }
}

impl<F> Deref for FuturesUnordered<F> {
    type Target = UnorderedSet<F, GrowableArena<F>>;

    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<F> DerefMut for FuturesUnordered<F> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<F> Default for FuturesUnordered<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> FromIterator<F> for FuturesUnordered<F> {
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<F> Extend<F> for FuturesUnordered<F> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl<F: Future> Stream for FuturesUnordered<F> {
    type Item = F::Output;

    #[inline(always)]
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        Pin::new(&mut self.0).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<F: Future> FusedStream for FuturesUnordered<F> {
    fn is_terminated(&self) -> bool {
        self.0.is_terminated()
    }
}

impl<F: Unpin> IntoIterator for FuturesUnordered<F> {
    type Item = F;
    type IntoIter = IntoIter<F>;

    fn into_iter(self) -> IntoIter<F> {
        self.0.into_iter()
    }
}

impl<F> fmt::Debug for FuturesUnordered<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The futures of a [`FuturesUnordered`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::growable_iter::IntoValues<F>;
