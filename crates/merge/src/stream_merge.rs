//! [`StreamMerge`]: the merge of streams, written once over either arena.

use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Key, Step, Storage};

/// Many streams merged into one, whose items come out as the streams give them, stored in
/// `A`: [`MergeBounded<S>`](crate::MergeBounded) (an [`Arena`](pinfold_arena::Arena), a
/// fixed capacity) or [`Merge<S>`](crate::Merge) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names; the methods here are
/// those of both.
///
/// What a merge guarantees is in the crate documentation: the [order](crate#order) of its
/// items and its keys, [fairness](crate#fairness) within one `poll_next`, which streams are
/// polled and when its task is woken ([wakes](crate#wakes)), what a panic leaves
/// ([panics](crate#panics)), and what is allocated when ([memory](crate#memory)).
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
    /// # Example
    ///
    /// ```
    /// use futures_util::{StreamExt, stream};
    /// use pinfold_merge::Merge;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = Merge::new();
    /// merged.push(stream::iter(vec![1, 2]));
    /// merged.push(stream::iter(vec![3]));
    /// assert_eq!(merged.len(), 2);
    ///
    /// let mut items: Vec<i32> = merged.collect().await;
    /// items.sort();
    /// assert_eq!(items, [1, 2, 3]);
    /// # });
    /// ```
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

    /// Adds a stream, as [`push`](Self::push), and returns its key: the key
    /// [`poll_next_keyed`](Self::poll_next_keyed) gives with each of its items, and the key to
    /// [`remove`](Self::remove) it or reach it ([`get`](Self::get)). The key is refused once the
    /// stream ended.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::{StreamExt, stream};
    /// use pinfold_merge::Merge;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = Merge::new();
    /// let key = merged.insert(stream::iter(vec!["only"]));
    /// assert!(merged.contains_key(key));
    ///
    /// assert_eq!(merged.next().await, Some("only"));
    /// assert_eq!(merged.next().await, None); // the stream ended and was dropped
    /// assert!(!merged.contains_key(key));
    /// # });
    /// ```
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
    ///
    /// If the stream's `Drop` panics, it is gone all the same and the panic propagates.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_channel::mpsc;
    /// use futures_util::StreamExt;
    /// use pinfold_merge::MergeBounded;
    ///
    /// # futures_executor::block_on(async {
    /// let (news_tx, news) = mpsc::unbounded();
    /// let (ads_tx, ads) = mpsc::unbounded();
    /// let mut merged = MergeBounded::new(2);
    /// merged.push(news);
    /// let ads_key = merged.insert(ads);
    ///
    /// ads_tx.unbounded_send("buy").unwrap();
    /// assert!(merged.remove(ads_key));
    /// assert!(ads_tx.unbounded_send("now").is_err()); // the receiver was dropped at once
    /// assert!(!merged.remove(ads_key)); // gone already
    ///
    /// news_tx.unbounded_send("hello").unwrap();
    /// drop(news_tx);
    /// let items: Vec<&str> = merged.collect().await;
    /// assert_eq!(items, ["hello"]); // "buy" never comes
    /// # });
    /// ```
    pub fn remove(&mut self, key: Key) -> bool {
        self.arena.remove(key)
    }

    /// Whether `key`'s stream is still merged: `false` once it ended, was removed, or the
    /// merge was cleared, also after its slot was reused.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::{StreamExt, stream};
    /// use pinfold_merge::MergeBounded;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = MergeBounded::new(1);
    /// let first = merged.insert(stream::iter(vec![1]));
    /// assert_eq!(merged.next().await, Some(1));
    /// assert_eq!(merged.next().await, None); // ended: its slot is free
    ///
    /// let second = merged.insert(stream::iter(vec![2]));
    /// assert!(!merged.contains_key(first));
    /// assert!(merged.contains_key(second));
    /// # });
    /// ```
    pub fn contains_key(&self, key: Key) -> bool {
        self.arena.contains_key(key)
    }

    /// `key`'s stream, if it is still merged.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, Stream};
    /// use pinfold_merge::Merge;
    ///
    /// let mut merged = Merge::new();
    /// let key = merged.insert(stream::iter(vec![1, 2, 3]));
    /// assert_eq!(merged.get(key).map(|s| s.size_hint()), Some((3, Some(3))));
    ///
    /// merged.remove(key);
    /// assert!(merged.get(key).is_none());
    /// ```
    pub fn get(&self, key: Key) -> Option<&S> {
        self.arena.get(key)
    }

    /// `key`'s stream, pinned, if it is still merged.
    ///
    /// # Example
    ///
    /// Closing a channel's receiver in the merge: its buffered items still come, then it ends.
    ///
    /// ```
    /// use futures_channel::mpsc;
    /// use futures_util::StreamExt;
    /// use pinfold_merge::Merge;
    ///
    /// # futures_executor::block_on(async {
    /// let (sender, receiver) = mpsc::unbounded();
    /// let mut merged = Merge::new();
    /// let key = merged.insert(receiver);
    ///
    /// sender.unbounded_send(1).unwrap();
    /// merged.get_pin_mut(key).unwrap().close();
    /// assert!(sender.unbounded_send(2).is_err());
    /// assert_eq!(merged.next().await, Some(1));
    /// assert_eq!(merged.next().await, None);
    /// # });
    /// ```
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

    /// Drops every stream; no item of them comes any more, and their keys are refused from now
    /// on. A bounded merge keeps its storage; a growable merge then gives back empty groups as
    /// after an item (all but the first, unless it retains capacity). The merge is no longer
    /// [terminated](FusedStream::is_terminated).
    ///
    /// If a stream's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the merge stays usable.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, FusedStream, StreamExt};
    /// use pinfold_merge::MergeBounded;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = MergeBounded::new(4);
    /// assert_eq!(merged.next().await, None::<u32>);
    /// assert!(merged.is_terminated());
    ///
    /// merged.push(stream::iter(vec![1, 2]));
    /// merged.push(stream::iter(vec![3]));
    /// merged.clear();
    /// assert!(merged.is_empty());
    /// assert!(!merged.is_terminated());
    /// assert_eq!(merged.capacity(), 4); // the storage stays
    /// # });
    /// ```
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }

    /// The streams, in no particular order.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, Stream};
    /// use pinfold_merge::merge;
    ///
    /// let merged = merge([stream::iter(vec![1, 2]), stream::iter(vec![3])]);
    /// let hinted: usize = merged.iter().map(|s| s.size_hint().0).sum();
    /// assert_eq!(hinted, 3);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &S> + '_ {
        self.arena.iter().map(|(_, stream)| stream)
    }

    /// The streams with their keys, in no particular order.
    ///
    /// # Example
    ///
    /// Removing the streams that have nothing more to give:
    ///
    /// ```
    /// use futures_util::stream::{self, Stream};
    /// use pinfold_merge::Merge;
    ///
    /// let mut merged = Merge::new();
    /// let short = merged.insert(stream::iter(vec![1]));
    /// let empty = merged.insert(stream::iter(vec![]));
    ///
    /// let done: Vec<_> = merged
    ///     .iter_keyed()
    ///     .filter(|(_, s)| s.size_hint() == (0, Some(0)))
    ///     .map(|(key, _)| key)
    ///     .collect();
    /// assert_eq!(done, [empty]);
    /// for key in done {
    ///     merged.remove(key);
    /// }
    /// assert!(merged.contains_key(short));
    /// assert_eq!(merged.len(), 1);
    /// ```
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
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use futures_util::stream;
    /// use pinfold_merge::Merge;
    ///
    /// # futures_executor::block_on(async {
    /// let mut merged = Merge::new();
    /// let key = merged.insert(stream::iter(vec!['x', 'y']));
    ///
    /// let mut items = Vec::new();
    /// while let Some(keyed) = poll_fn(|cx| merged.poll_next_keyed(cx)).await {
    ///     items.push(keyed);
    /// }
    /// assert_eq!(items, [(key, 'x'), (key, 'y')]);
    /// # });
    /// ```
    #[inline]
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

    #[inline]
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
