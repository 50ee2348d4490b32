//! [`FuturesUnorderedBounded`]: the set on a fixed-capacity [`Arena`].

use core::fmt;
use core::future::Future;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::Arena;
use pinfold_buffer::Driven;

use crate::UnorderedSet;

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures finish; its methods are those of [`UnorderedSet`], which it dereferences to.
///
/// Its storage is allocated by [`new`](UnorderedSet::new) and never again: pushing, polling,
/// waking, finishing and removing a future allocate nothing. A future never moves once pushed.
/// It keeps the rules every pinfold primitive keeps ([the shared rules](crate#the-shared-rules)):
/// it is the bounded set of [*Memory*](pinfold_arena::contract#memory).
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
    /// A set that holds at most `capacity` futures, allocated now (twice: the slots and the wake table) and never again.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
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

    #[inline]
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
