//! [`FuturesUnorderedBounded`]: the set on a fixed-capacity [`Arena`].

use core::fmt;
use core::future::Future;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Futures, Key, Keyed};
use pinfold_buffer::Driven;

use crate::UnorderedSet;

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order the
/// futures finish; its methods are those of [`UnorderedSet`], each its own: a call by path
/// (`FuturesUnorderedBounded::push(set, x)`), as code written for futures-util makes, reaches it,
/// never a trait's method of the same name. It also dereferences to that type.
///
/// Its storage is allocated by [`new`](Self::new) and never again: pushing, polling,
/// waking, finishing and removing a future allocate nothing. A future never moves once pushed.
/// It keeps the rules every pinfold primitive keeps ([the shared rules](crate#the-shared-rules)):
/// it is the bounded set of [*Memory*](pinfold_arena::contract#memory).
///
/// # Capacity
///
/// A set of capacity `n` holds at most `n` futures. Pushing into a full set is refused:
/// [`try_push`](Self::try_push) and [`try_insert`](Self::try_insert) give the
/// future back, [`push`](Self::push) and [`insert`](Self::insert) panic. A
/// slot is free again as soon as its future finished (before its output is returned), was
/// removed, or the set was cleared.
///
/// # Example
///
/// ```
/// use futures::StreamExt;
/// use pinfold::FuturesUnorderedBounded;
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
#[must_use = "streams do nothing unless polled"]
pub struct FuturesUnorderedBounded<F>(UnorderedSet<F, Arena<F>>);

impl<F> FuturesUnorderedBounded<F> {
    /// A set that holds at most `capacity` futures, allocated now (twice: the slots and the
    /// wake table) and never again. A capacity of 0 is allowed and makes a set that holds
    /// nothing: [`try_push`](Self::try_push) gives every future back and
    /// [`push`](Self::push) panics.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Self(UnorderedSet::<F, Arena<F>>::new(capacity))
    }
}

impl<F: Future> FuturesUnorderedBounded<F> {
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
    /// use pinfold::FuturesUnorderedBounded;
    ///
    /// # futures::executor::block_on(async {
    /// let set: FuturesUnorderedBounded<_> = (0..4u32).map(|n| async move { n }).collect();
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

impl<F> FuturesUnorderedBounded<F> {
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

    /// Adds a future, or gives it back in `Err` if the set is full: [`UnorderedSet::try_push`].
    pub fn try_push(&mut self, future: F) -> Result<(), F> {
        self.0.try_push(future)
    }

    /// Adds a future and returns its key, or gives it back in `Err` if the set is full:
    /// [`UnorderedSet::try_insert`].
    pub fn try_insert(&mut self, future: F) -> Result<Key, F> {
        self.0.try_insert(future)
    }

    /// Whether the set holds `capacity` futures, so that a push would be refused:
    /// [`UnorderedSet::is_full`].
    pub fn is_full(&self) -> bool {
        self.0.is_full()
    }
}
impl<F: Future> FuturesUnorderedBounded<F> {
    /// `poll_next` that also says which future gave the output: [`UnorderedSet::poll_next_keyed`].
    #[inline(always)]
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>> {
        self.0.poll_next_keyed(cx)
    }

    /// The set as a [`Stream`] of `(key, output)`, borrowing it mutably: [`UnorderedSet::keyed`].
    pub fn keyed(&mut self) -> Keyed<'_, F, Arena<F>, Futures> {
        self.0.keyed()
    }
}

impl<F> Deref for FuturesUnorderedBounded<F> {
    type Target = UnorderedSet<F, Arena<F>>;

    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<F> DerefMut for FuturesUnorderedBounded<F> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<F> FromIterator<F> for FuturesUnorderedBounded<F> {
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<F: Future> Stream for FuturesUnorderedBounded<F> {
    type Item = F::Output;

    #[inline(always)]
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        Pin::new(&mut self.0).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<F: Future> FusedStream for FuturesUnorderedBounded<F> {
    fn is_terminated(&self) -> bool {
        self.0.is_terminated()
    }
}

impl<F: Unpin> IntoIterator for FuturesUnorderedBounded<F> {
    type Item = F;
    type IntoIter = IntoIterBounded<F>;

    fn into_iter(self) -> IntoIterBounded<F> {
        self.0.into_iter()
    }
}

impl<F> fmt::Debug for FuturesUnorderedBounded<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The futures of a [`FuturesUnorderedBounded`], moved out by its `into_iter`, in no particular
/// order. Dropping it part-way drops the futures it has not given, once each.
pub type IntoIterBounded<F> = pinfold_arena::IntoValues<F>;
