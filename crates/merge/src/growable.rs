//! [`Merge`]: the merge on a [`GrowableArena`].

use core::fmt;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::GrowableArena;

use crate::StreamMerge;

/// A growable merge of streams, whose items come out as the streams give them; its methods
/// are those of [`StreamMerge`], which it dereferences to. [`merge`](crate::merge) makes one from an iterator.
///
/// It has no capacity limit: it grows a group of slots at a time and gives the empty groups
/// back after a burst ([*Memory*](pinfold_arena::contract#memory)); a merge that stays within
/// its capacity allocates nothing. It keeps the rules every pinfold primitive keeps
/// ([the shared rules](crate#the-shared-rules)), with one queue for all its groups.
///
/// # Example
///
/// ```
/// use futures::{StreamExt, stream};
/// use pinfold::Merge;
///
/// # futures::executor::block_on(async {
/// let mut merged = Merge::new();
/// merged.extend((0..40).map(|n| stream::iter(vec![n; 2])));
/// assert_eq!(merged.capacity(), 64); // two groups of 32
///
/// let items: Vec<u32> = merged.by_ref().collect().await;
/// assert_eq!(items.len(), 80);
/// assert_eq!(merged.capacity(), 32); // the empty second group was given back
/// # });
/// ```
#[must_use = "streams do nothing unless polled"]
pub struct Merge<S>(StreamMerge<S, GrowableArena<S>>);

impl<S> Merge<S> {
    /// An empty merge. Allocates nothing: the first stream added allocates the first group.
    pub const fn new() -> Self {
        Self(StreamMerge::<S, GrowableArena<S>>::new())
    }

    /// An empty merge with room for at least `capacity` streams, allocated now; that first
    /// group is kept as long as the merge.
    pub fn with_capacity(capacity: usize) -> Self {
        Self(StreamMerge::<S, GrowableArena<S>>::with_capacity(capacity))
    }
}

impl<S> Default for Merge<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Extend<S> for Merge<S> {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl<S> Deref for Merge<S> {
    type Target = StreamMerge<S, GrowableArena<S>>;

    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<S> DerefMut for Merge<S> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<S> FromIterator<S> for Merge<S> {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<S: Stream> Stream for Merge<S> {
    type Item = S::Item;

    #[inline]
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.0).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<S: Stream> FusedStream for Merge<S> {
    fn is_terminated(&self) -> bool {
        self.0.is_terminated()
    }
}

impl<S: Unpin> IntoIterator for Merge<S> {
    type Item = S;
    type IntoIter = pinfold_arena::growable_iter::IntoValues<S>;

    fn into_iter(self) -> pinfold_arena::growable_iter::IntoValues<S> {
        self.0.into_iter()
    }
}

impl<S> fmt::Debug for Merge<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
