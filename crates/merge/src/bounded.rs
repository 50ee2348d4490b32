//! [`MergeBounded`]: the merge on a fixed-capacity [`Arena`].

use core::fmt;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::Arena;

use crate::StreamMerge;

/// A merge of at most `capacity` streams, whose items come out as the streams give them; its
/// methods are those of [`StreamMerge`], which it dereferences to.
///
/// Its storage is allocated by [`new`](StreamMerge::new) and never again: adding, polling,
/// waking, ending and removing streams allocate nothing. It keeps the rules every pinfold
/// primitive keeps ([the shared rules](crate#the-shared-rules)): it is the bounded merge of
/// [*Memory*](pinfold_arena::contract#memory).
///
/// # Capacity
///
/// A merge of capacity `n` holds at most `n` streams. Adding a stream to a full merge is
/// refused: [`try_push`](StreamMerge::try_push) and [`try_insert`](StreamMerge::try_insert)
/// give the stream back, [`push`](StreamMerge::push) and [`insert`](StreamMerge::insert)
/// panic. A slot is free again as soon as its stream ended (within the call that saw its
/// end), was removed, or the merge was cleared.
#[must_use = "streams do nothing unless polled"]
pub struct MergeBounded<S>(StreamMerge<S, Arena<S>>);

impl<S> MergeBounded<S> {
    /// A merge of at most `capacity` streams, allocated now (twice: the slots and the wake
    /// table) and never again.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self(StreamMerge::<S, Arena<S>>::new(capacity))
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
