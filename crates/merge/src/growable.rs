//! [`Merge`]: the merge on a [`GrowableArena`].

use core::fmt;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{GrowableArena, Key, Keyed, Streams};

use crate::StreamMerge;

/// A growable merge of streams, whose items come out as the streams give them; its methods are
/// those of [`StreamMerge`], each its own: a call by path (`Merge::push(set, x)`), as code written
/// for futures-buffered's merges makes, reaches it, never a trait's method of the same name. It
/// also dereferences to that type. [`merge`](crate::merge) makes one from an iterator.
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
    ///
    /// # Panics
    /// If `capacity` is more streams than a growable merge holds (its 63 groups), before
    /// anything is allocated.
    #[track_caller]
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

impl<S> Merge<S> {
    /// Adds a stream, polled by the next `poll_next`: [`StreamMerge::push`], whose panics apply.
    #[track_caller]
    #[inline]
    pub fn push(&mut self, stream: S) {
        self.0.push(stream);
    }

    /// Adds a stream and returns its key: [`StreamMerge::insert`], whose panics apply.
    #[track_caller]
    #[inline]
    pub fn insert(&mut self, stream: S) -> Key {
        self.0.insert(stream)
    }

    /// Drops `key`'s stream in place now; `false` if it was gone already: [`StreamMerge::remove`].
    pub fn remove(&mut self, key: Key) -> bool {
        self.0.remove(key)
    }

    /// Whether `key`'s stream is still in the merge: [`StreamMerge::contains_key`].
    pub fn contains_key(&self, key: Key) -> bool {
        self.0.contains_key(key)
    }

    /// `key`'s stream, if it is still in the merge: [`StreamMerge::get`].
    pub fn get(&self, key: Key) -> Option<&S> {
        self.0.get(key)
    }

    /// `key`'s stream, pinned, if it is still in the merge: [`StreamMerge::get_pin_mut`].
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut S>> {
        self.0.get_pin_mut(key)
    }

    /// How many streams the merge holds: [`StreamMerge::len`].
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the merge holds no stream: [`StreamMerge::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many streams the merge can hold now: [`StreamMerge::capacity`].
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Drops every stream: [`StreamMerge::clear`].
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The streams, in no particular order: [`StreamMerge::iter`].
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &S> + '_ {
        self.0.iter()
    }

    /// The streams with their keys, in no particular order: [`StreamMerge::iter_keyed`].
    pub fn iter_keyed(&self) -> impl ExactSizeIterator<Item = (Key, &S)> + '_ {
        self.0.iter_keyed()
    }

    /// The streams, pinned, in no particular order: [`StreamMerge::iter_pin_mut`].
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut S>> + '_ {
        self.0.iter_pin_mut()
    }

    /// The streams, pinned, with their keys, in no particular order:
    /// [`StreamMerge::iter_pin_mut_keyed`].
    pub fn iter_pin_mut_keyed(&mut self) -> impl ExactSizeIterator<Item = (Key, Pin<&mut S>)> + '_ {
        self.0.iter_pin_mut_keyed()
    }

    /// The streams, mutably, in no particular order: [`StreamMerge::iter_mut`].
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = &mut S> + '_
    where
        S: Unpin,
    {
        self.0.iter_mut()
    }

    /// Adds groups ahead of time, until at least `additional` slots are free:
    /// [`StreamMerge::reserve`], whose panics apply.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }
}
impl<S: Stream> Merge<S> {
    /// `poll_next` that also says which stream gave the output: [`StreamMerge::poll_next_keyed`].
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>> {
        self.0.poll_next_keyed(cx)
    }

    /// The merge as a [`Stream`] of `(key, output)`, borrowing it mutably: [`StreamMerge::keyed`].
    pub fn keyed(&mut self) -> Keyed<'_, S, GrowableArena<S>, Streams> {
        self.0.keyed()
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
