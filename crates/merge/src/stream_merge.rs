//! [`StreamMerge`]: the merge of streams, written once over either arena.

use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Key, Step, Storage};

/// Many streams merged into one, whose items come out as the streams give them, stored in
/// `A`: [`MergeBounded<S>`](crate::MergeBounded) (an [`Arena`](pinfold_arena::Arena), a
/// fixed capacity) or [`Merge<S>`](crate::Merge) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names; the methods here are
/// those of both. See the [crate documentation](crate).
///
/// `Unpin` whatever `S` is (streams are pinned in the merge's own storage); `Send` if `S` is;
/// `Sync` if `S` is `Send + Sync`.
#[must_use = "streams do nothing unless polled"]
pub struct StreamMerge<S, A> {
    pub(crate) arena: A,
    /// Set when `poll_next` returned `Ready(None)`; cleared by adding a stream and by `clear`.
    pub(crate) terminated: bool,
    _streams: core::marker::PhantomData<fn(S) -> S>,
}

impl<S, A: Storage<S>> StreamMerge<S, A> {
    /// A merge stored in `arena`.
    pub(crate) const fn with_arena(arena: A) -> Self {
        Self {
            arena,
            terminated: false,
            _streams: core::marker::PhantomData,
        }
    }

    /// Adds a stream; it is polled by the next `poll_next`.
    ///
    /// # Panics
    /// If the merge is full (a [`MergeBounded`](crate::MergeBounded) holding `capacity`
    /// streams), with the message `MergeBounded is full (capacity N)`; use its `try_push` to
    /// get the stream back instead. A [`Merge`](crate::Merge) panics only if every one of its
    /// 63 groups is full (more streams than memory can hold).
    #[track_caller]
    pub fn push(&mut self, stream: S) {
        self.insert(stream);
    }

    /// Adds a stream, as [`push`](Self::push), and returns its key.
    ///
    /// # Panics
    /// If the merge is full, as [`push`](Self::push).
    #[track_caller]
    pub fn insert(&mut self, stream: S) -> Key {
        match self.arena.insert(stream) {
            Ok(key) => {
                self.terminated = false;
                key
            }
            Err(_) => panic!("MergeBounded is full (capacity {})", self.capacity()),
        }
    }

    /// Drops `key`'s stream in place now; no item of it comes any more. `false` if it was gone
    /// already (ended, removed, or cleared).
    pub fn remove(&mut self, key: Key) -> bool {
        self.arena.remove(key)
    }

    /// Whether `key`'s stream is still merged.
    pub fn contains_key(&self, key: Key) -> bool {
        self.arena.contains_key(key)
    }

    /// `key`'s stream, if it is still merged.
    pub fn get(&self, key: Key) -> Option<&S> {
        self.arena.get(key)
    }

    /// `key`'s stream, pinned, if it is still merged.
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut S>> {
        self.arena.get_pin_mut(key)
    }

    /// How many streams are merged.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether no stream is merged.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// How many streams the merge can hold now: its fixed capacity, or the slots a growable
    /// merge has allocated (the sum of its groups' capacities).
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every stream. A bounded merge keeps its storage; a growable merge then gives back
    /// empty groups as after an item (all but the first, unless it retains capacity). The
    /// merge is no longer terminated.
    ///
    /// If a stream's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the merge stays usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }

    /// The streams, in no particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &S> + '_ {
        self.arena.iter().map(|(_, stream)| stream)
    }

    /// The streams with their keys, in no particular order.
    pub fn iter_keyed(&self) -> impl ExactSizeIterator<Item = (Key, &S)> + '_ {
        self.arena.iter()
    }

    /// The streams, pinned, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut S>> + '_ {
        self.arena.iter_pin_mut().map(|(_, stream)| stream)
    }

    /// The streams, pinned, with their keys, in no particular order.
    pub fn iter_pin_mut_keyed(&mut self) -> impl ExactSizeIterator<Item = (Key, Pin<&mut S>)> + '_ {
        self.arena.iter_pin_mut()
    }
}

impl<S: Stream, A: Storage<S>> StreamMerge<S, A> {
    /// `poll_next` that also says which stream gave the item: the key
    /// [`insert`](Self::insert) returned for it.
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, S::Item)>> {
        pinfold_arena::coop::poll_output(cx, |cx| {
            let polled = self
                .arena
                .poll_next_some(cx, |_, stream, cx| Step::of_stream(stream.poll_next(cx)));
            if let Poll::Ready(None) = polled {
                self.terminated = true;
            }
            polled
        })
    }
}

impl<S: Stream, A: Storage<S>> Stream for StreamMerge<S, A> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut()
            .poll_next_keyed(cx)
            .map(|polled| polled.map(|(_, item)| item))
    }

    /// The sum of the merged streams' hints (this looks at every stream).
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter().fold((0, Some(0)), |(low, high), stream| {
            let (stream_low, stream_high) = stream.size_hint();
            let high = match (high, stream_high) {
                (Some(high), Some(stream_high)) => high.checked_add(stream_high),
                _ => None,
            };
            (low.saturating_add(stream_low), high)
        })
    }
}

impl<S: Stream, A: Storage<S>> FusedStream for StreamMerge<S, A> {
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}
