//! [`MergeBounded`]: the merge on a fixed-capacity [`Arena`].

use core::fmt;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Key, Keyed, Streams};

use crate::StreamMerge;

/// A merge of at most `capacity` streams, whose items come out as the streams give them; its
/// methods are those of [`StreamMerge`], each its own: a call by path
/// (`MergeBounded::push(set, x)`), as code written for futures-buffered's merges makes, reaches
/// it, never a trait's method of the same name. It also dereferences to that type.
///
/// Its storage is allocated by [`new`](Self::new) and never again: adding, polling,
/// waking, ending and removing streams allocate nothing. It keeps the rules every pinfold
/// primitive keeps ([the shared rules](crate#the-shared-rules)): it is the bounded merge of
/// [*Memory*](pinfold_arena::contract#memory).
///
/// # Capacity
///
/// A merge of capacity `n` holds at most `n` streams. Adding a stream to a full merge is
/// refused: [`try_push`](Self::try_push) and [`try_insert`](Self::try_insert)
/// give the stream back, [`push`](Self::push) and [`insert`](Self::insert)
/// panic. A slot is free again as soon as its stream ended (within the call that saw its
/// end), was removed, or the merge was cleared.
#[must_use = "streams do nothing unless polled"]
pub struct MergeBounded<S>(StreamMerge<S, Arena<S>>);

impl<S> MergeBounded<S> {
    /// A merge of at most `capacity` streams, allocated now (twice: the slots and the wake
    /// table) and never again. A capacity of 0 is allowed and makes a merge that holds
    /// nothing: [`try_push`](Self::try_push) gives every stream back and
    /// [`push`](Self::push) panics.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Self(StreamMerge::<S, Arena<S>>::new(capacity))
    }
}

impl<S> MergeBounded<S> {
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

    /// Adds a stream, or gives it back in `Err` if the merge is full: [`StreamMerge::try_push`].
    pub fn try_push(&mut self, stream: S) -> Result<(), S> {
        self.0.try_push(stream)
    }

    /// Adds a stream and returns its key, or gives it back in `Err` if the merge is full:
    /// [`StreamMerge::try_insert`].
    pub fn try_insert(&mut self, stream: S) -> Result<Key, S> {
        self.0.try_insert(stream)
    }

    /// Whether the merge holds `capacity` streams, so that a push would be refused:
    /// [`StreamMerge::is_full`].
    pub fn is_full(&self) -> bool {
        self.0.is_full()
    }
}
impl<S: Stream> MergeBounded<S> {
    /// `poll_next` that also says which stream gave the output: [`StreamMerge::poll_next_keyed`].
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>> {
        self.0.poll_next_keyed(cx)
    }

    /// The merge as a [`Stream`] of `(key, output)`, borrowing it mutably: [`StreamMerge::keyed`].
    pub fn keyed(&mut self) -> Keyed<'_, S, Arena<S>, Streams> {
        self.0.keyed()
    }
}

impl<S> Deref for MergeBounded<S> {
    type Target = StreamMerge<S, Arena<S>>;

    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<S> DerefMut for MergeBounded<S> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<S> FromIterator<S> for MergeBounded<S> {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<S: Stream> Stream for MergeBounded<S> {
    type Item = S::Item;

    #[inline]
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.0).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<S: Stream> FusedStream for MergeBounded<S> {
    fn is_terminated(&self) -> bool {
        self.0.is_terminated()
    }
}

impl<S: Unpin> IntoIterator for MergeBounded<S> {
    type Item = S;
    type IntoIter = pinfold_arena::IntoValues<S>;

    fn into_iter(self) -> pinfold_arena::IntoValues<S> {
        self.0.into_iter()
    }
}

impl<S> fmt::Debug for MergeBounded<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
