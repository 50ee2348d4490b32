//! [`KeyedSet`]: a set of futures or a merge of streams, keyed, written once over either arena
//! kind and either value kind.

use core::fmt;
use core::future::Future;
use core::iter::ExactSizeIterator;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::vec::Vec;
use futures_core::{FusedStream, Stream};

use crate::key::Key;
use crate::poll::Step;
use crate::storage::Storage;
use crate::storage::growable::GrowableArena;
use crate::storage::sealed::Token;
use crate::storage::store::Arena;
use crate::unwind::QuietDrop;

mod sealed {
    pub trait Sealed {}
}

/// What the values of a [`KeyedSet`] are: [`Futures`] or [`Streams`]. Sealed: implemented by
/// those two only.
pub trait Kind: sealed::Sealed {
    /// The name of the set on an [`Arena`] (`FuturesUnorderedBounded`, `MergeBounded`): in
    /// `Debug`, and in the panic of a push into a full one.
    const BOUNDED: &'static str;
    /// The name of the set on a [`GrowableArena`], in `Debug`.
    const GROWABLE: &'static str;
}

/// How a [`KeyedSet`] of kind `Self` polls its values `V`: a future once, a stream for each
/// item.
pub trait PollKind<V>: Kind {
    /// What a value gives: a future's output, or a stream's items.
    type Output;

    /// One call of [`poll_next_keyed`](KeyedSet::poll_next_keyed): a round of `arena`.
    fn poll_arena<A: Storage<V>>(
        arena: &mut A,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Key, Self::Output)>>;

    /// The bounds on the outputs still to come from `values`, `len` of them.
    fn size_hint<'a>(len: usize, values: impl Iterator<Item = &'a V>) -> (usize, Option<usize>)
    where
        V: 'a;
}

/// The values are futures (pinfold-unordered's sets, pinfold-map's `FutureMap`): each gives
/// one output and leaves.
#[derive(Debug)]
pub enum Futures {}

/// The values are streams (pinfold-merge's merges, pinfold-map's `StreamMap`): each gives
/// items until it ends, polled again after each without a wake.
#[derive(Debug)]
pub enum Streams {}

impl sealed::Sealed for Futures {}
impl sealed::Sealed for Streams {}

impl Kind for Futures {
    const BOUNDED: &'static str = "FuturesUnorderedBounded";
    const GROWABLE: &'static str = "FuturesUnordered";
}

impl Kind for Streams {
    const BOUNDED: &'static str = "MergeBounded";
    const GROWABLE: &'static str = "Merge";
}

impl<F: Future> PollKind<F> for Futures {
    type Output = F::Output;

    // Always inlined, down to the loop (`Rounds::next_output`). Guarded by `ready_512k`
    // (instructions).
    #[inline(always)]
    fn poll_arena<A: Storage<F>>(
        arena: &mut A,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Key, F::Output)>> {
        let (rounds, slots) = arena.engine(Token::new());
        rounds.next_output(slots, cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
    }

    /// One output per future.
    fn size_hint<'a>(len: usize, _: impl Iterator<Item = &'a F>) -> (usize, Option<usize>)
    where
        F: 'a,
    {
        (len, Some(len))
    }
}

impl<S: Stream> PollKind<S> for Streams {
    type Output = S::Item;

    #[inline]
    fn poll_arena<A: Storage<S>>(
        arena: &mut A,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Key, S::Item)>> {
        let (rounds, slots) = arena.engine(Token::new());
        rounds.next_output_some(slots, cx, |_, stream, cx| {
            Step::of_stream(stream.poll_next(cx))
        })
    }

    /// The sum of the streams' hints (this looks at every stream).
    fn size_hint<'a>(_: usize, values: impl Iterator<Item = &'a S>) -> (usize, Option<usize>)
    where
        S: 'a,
    {
        values.fold((0, Some(0)), |(low, high), stream| {
            let (stream_low, stream_high) = stream.size_hint();
            let high = match (high, stream_high) {
                (Some(high), Some(stream_high)) => high.checked_add(stream_high),
                _ => None,
            };
            (low.saturating_add(stream_low), high)
        })
    }
}

/// Values of the poll kind `P` ([`Futures`] or [`Streams`]), polled concurrently, each under a
/// [`Key`], stored in `A`: an [`Arena`] (a fixed capacity) or a [`GrowableArena`]. A stream of
/// their outputs, in the order the values give them.
///
/// Use it under the names of its four forms: pinfold-unordered's `FuturesUnorderedBounded<F>`
/// and `FuturesUnordered<F>` (aliases of `UnorderedSet<F, A>`, this type over [`Futures`]) and
/// pinfold-merge's `MergeBounded<S>` and `Merge<S>` (`StreamMerge<S, A>`, over [`Streams`]).
/// The methods here are those of all four; the examples use whichever shows a method best.
///
/// What it guarantees: each crate's *Order* (and, for sets, *Keys*), and the rules every
/// pinfold primitive keeps ([`contract`](crate::contract)): [fairness](crate::contract#fairness)
/// within one `poll_next`, which values are polled and when its task is woken
/// ([wakes](crate::contract#wakes)), what a panic leaves ([panics](crate::contract#panics)),
/// and what is allocated when ([memory](crate::contract#memory)).
///
/// `Unpin` whatever `V` is (values are pinned in the set's own storage); `Send` if `V` is;
/// `Sync` if `V` is `Send + Sync`.
#[must_use = "streams do nothing unless polled"]
pub struct KeyedSet<V, A, P> {
    arena: A,
    /// Set when `poll_next` returned `Ready(None)`; cleared by adding a value and by `clear`.
    terminated: bool,
    _values: PhantomData<fn(V) -> V>,
    _kind: PhantomData<fn() -> P>,
}

impl<V, A: Storage<V>, P: Kind> KeyedSet<V, A, P> {
    /// A set stored in `arena`.
    const fn with_arena(arena: A) -> Self {
        Self {
            arena,
            terminated: false,
            _values: PhantomData,
            _kind: PhantomData,
        }
    }

    /// Adds a value; it is polled by the next `poll_next`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::StreamExt;
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// async fn double(n: u32) -> u32 {
    ///     n * 2
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let mut set = FuturesUnordered::new();
    /// set.push(double(1));
    /// set.push(double(2));
    /// assert_eq!(set.len(), 2);
    ///
    /// // Ready at their first poll: the outputs come in push order.
    /// assert_eq!(set.next().await, Some(2));
    /// assert_eq!(set.next().await, Some(4));
    /// assert_eq!(set.next().await, None);
    /// # });
    /// ```
    ///
    /// # Panics
    /// If the set is full (a bounded set holding `capacity` values), with the message
    /// `FuturesUnorderedBounded is full (capacity N)` (`MergeBounded is full (capacity N)` for
    /// a merge), dropping the value as the panic unwinds (with `std`, a panic of its `Drop` is
    /// dropped; without, it aborts); use its `try_push` to get the value back instead. A
    /// growable set panics only if every one of its 63 groups is full (more values than memory
    /// can hold), or if every group is full and its generations have run out (more than 2^62
    /// values through one slot of a group it released).
    #[track_caller]
    #[inline]
    pub fn push(&mut self, value: V) {
        self.insert(value);
    }

    /// Adds a value, as [`push`](Self::push), and returns its key: the key
    /// [`poll_next_keyed`](Self::poll_next_keyed) gives with its outputs, and the key to
    /// [`remove`](Self::remove) it or reach it ([`get`](Self::get)). The key is refused once
    /// the value left (a future finished, a stream ended).
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// # use pinfold::arena::{GrowableArena, Streams, KeyedSet};
    /// # type Merge<S> = KeyedSet<S, GrowableArena<S>, Streams>;
    ///
    /// # futures::executor::block_on(async {
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
    /// If the set is full, as [`push`](Self::push).
    #[track_caller]
    #[inline]
    pub fn insert(&mut self, value: V) -> Key {
        match self.arena.insert(value) {
            Ok(key) => {
                self.terminated = false;
                key
            }
            Err(value) => {
                if core::mem::needs_drop::<V>() {
                    refuse(value, P::BOUNDED, self.capacity());
                }
                full(P::BOUNDED, self.capacity())
            }
        }
    }

    /// Drops `key`'s value in place now; no output of it comes any more. `false` if it was
    /// gone already (finished or ended, removed, or cleared).
    ///
    /// If the value's `Drop` panics, it is gone all the same and the panic propagates.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::oneshot;
    /// use futures::StreamExt;
    /// # use pinfold::arena::{Arena, Futures, KeyedSet};
    /// # type FuturesUnorderedBounded<F> = KeyedSet<F, Arena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
    /// let (sender, receiver) = oneshot::channel::<u32>();
    /// let mut set = FuturesUnorderedBounded::new(2);
    /// let waiting = set.insert(receiver);
    /// set.push(oneshot::channel().1); // its sender is dropped: gives `Err(Canceled)`
    ///
    /// assert!(set.remove(waiting));
    /// assert!(sender.is_canceled()); // the receiver was dropped at once
    /// assert!(!set.remove(waiting)); // gone already
    ///
    /// // Only the other future's output comes.
    /// assert!(set.next().await.unwrap().is_err());
    /// assert_eq!(set.next().await, None);
    /// # });
    /// ```
    pub fn remove(&mut self, key: Key) -> bool {
        self.arena.remove(key)
    }

    /// Whether `key`'s value is still in the set: `false` once it left (a future finished,
    /// before its output was returned; a stream ended), was removed, or the set was cleared,
    /// also after its slot was reused.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use futures::StreamExt;
    /// # use pinfold::arena::{Arena, Futures, KeyedSet};
    /// # type FuturesUnorderedBounded<F> = KeyedSet<F, Arena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set = FuturesUnorderedBounded::new(1);
    /// let first = set.insert(ready(1));
    /// assert_eq!(set.next().await, Some(1));
    ///
    /// // The freed slot takes the next future; the old key is refused all the same.
    /// let second = set.insert(ready(2));
    /// assert!(!set.contains_key(first));
    /// assert!(set.contains_key(second));
    /// # });
    /// ```
    pub fn contains_key(&self, key: Key) -> bool {
        self.arena.contains_key(key)
    }

    /// `key`'s value, if it is still in the set.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::stream::{self, Stream};
    /// # use pinfold::arena::{GrowableArena, Streams, KeyedSet};
    /// # type Merge<S> = KeyedSet<S, GrowableArena<S>, Streams>;
    ///
    /// let mut merged = Merge::new();
    /// let key = merged.insert(stream::iter(vec![1, 2, 3]));
    /// assert_eq!(merged.get(key).map(|s| s.size_hint()), Some((3, Some(3))));
    ///
    /// merged.remove(key);
    /// assert!(merged.get(key).is_none());
    /// ```
    pub fn get(&self, key: Key) -> Option<&V> {
        self.arena.get(key)
    }

    /// `key`'s value, pinned, if it is still in the set.
    ///
    /// # Example
    ///
    /// Closing a channel's receiver in a merge: its buffered items still come, then it ends.
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// # use pinfold::arena::{GrowableArena, Streams, KeyedSet};
    /// # type Merge<S> = KeyedSet<S, GrowableArena<S>, Streams>;
    ///
    /// # futures::executor::block_on(async {
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
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut V>> {
        self.arena.get_pin_mut(key)
    }

    /// How many values the set holds.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the set holds no value.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// How many values the set can hold now: its fixed capacity, or the slots a growable set
    /// has allocated (the sum of its groups' capacities).
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every value; no output of them comes any more, and their keys are refused from
    /// now on. A bounded set keeps its storage; a growable set then gives back empty groups as
    /// after an output ([*Memory*](crate::contract#memory)). The set is no longer terminated
    /// ([`is_terminated`](FusedStream::is_terminated) is `false`), as with futures-util.
    ///
    /// If a value's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set stays consistent and usable.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::StreamExt;
    /// use futures::stream::FusedStream;
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set = FuturesUnordered::with_capacity(64);
    /// assert_eq!(set.next().await, None::<u32>);
    /// assert!(set.is_terminated());
    ///
    /// for n in 0..100 {
    ///     set.push(async move { n });
    /// }
    /// assert_eq!(set.capacity(), 128); // a second group of 64 slots
    ///
    /// set.clear();
    /// assert!(set.is_empty());
    /// assert!(!set.is_terminated());
    /// assert_eq!(set.capacity(), 64); // the empty group is given back, the first is kept
    /// # });
    /// ```
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }

    /// The values, in no particular order.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::stream::{self, Stream};
    /// # use pinfold::arena::{GrowableArena, Streams, KeyedSet};
    /// # fn merge<S: futures::Stream>(s: impl IntoIterator<Item = S>) -> KeyedSet<S, GrowableArena<S>, Streams> {
    /// # s.into_iter().collect()
    /// # }
    ///
    /// let merged = merge([stream::iter(vec![1, 2]), stream::iter(vec![3])]);
    /// let hinted: usize = merged.iter().map(|s| s.size_hint().0).sum();
    /// assert_eq!(hinted, 3);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &V> + '_ {
        self.arena.iter().map(|(_, value)| value)
    }

    /// The values with their keys, in no particular order.
    ///
    /// # Example
    ///
    /// Removing the streams of a merge that have nothing more to give:
    ///
    /// ```
    /// use futures::stream::{self, Stream};
    /// # use pinfold::arena::{GrowableArena, Streams, KeyedSet};
    /// # type Merge<S> = KeyedSet<S, GrowableArena<S>, Streams>;
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
    pub fn iter_keyed(&self) -> impl ExactSizeIterator<Item = (Key, &V)> + '_ {
        self.arena.iter()
    }

    /// The values, pinned, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut V>> + '_ {
        self.arena.iter_pin_mut().map(|(_, value)| value)
    }

    /// The values, pinned, with their keys, in no particular order.
    pub fn iter_pin_mut_keyed(&mut self) -> impl ExactSizeIterator<Item = (Key, Pin<&mut V>)> + '_ {
        self.arena.iter_pin_mut()
    }

    /// The values, mutably, in no particular order. For `V: Unpin`; use
    /// [`iter_pin_mut`](Self::iter_pin_mut) otherwise.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = &mut V> + '_
    where
        V: Unpin,
    {
        self.arena
            .iter_pin_mut()
            .map(|(_, value)| Pin::into_inner(value))
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> KeyedSet<V, A, P> {
    /// `poll_next` that also says which value gave the output: the key
    /// [`insert`](Self::insert) returned for it. A future is gone once it gave its output, so
    /// its key is refused from then on; a stream stays until it ends.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use futures::channel::oneshot;
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set = FuturesUnordered::new();
    /// let (first_tx, first_rx) = oneshot::channel();
    /// let (second_tx, second_rx) = oneshot::channel();
    /// let first = set.insert(first_rx);
    /// let second = set.insert(second_rx);
    ///
    /// second_tx.send("second").unwrap();
    /// let (key, output) = poll_fn(|cx| set.poll_next_keyed(cx)).await.unwrap();
    /// assert_eq!((key, output), (second, Ok("second")));
    ///
    /// first_tx.send("first").unwrap();
    /// let (key, output) = poll_fn(|cx| set.poll_next_keyed(cx)).await.unwrap();
    /// assert_eq!((key, output), (first, Ok("first")));
    /// # });
    /// ```
    #[inline(always)]
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, P::Output)>> {
        crate::coop::poll_output(
            cx,
            #[inline(always)]
            |cx| {
                let polled = P::poll_arena(&mut self.arena, cx);
                if let Poll::Ready(None) = polled {
                    self.terminated = true;
                }
                polled
            },
        )
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> Stream for KeyedSet<V, A, P> {
    type Item = P::Output;

    #[inline(always)]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<P::Output>> {
        self.get_mut()
            .poll_next_keyed(cx)
            .map(|polled| polled.map(|(_, out)| out))
    }

    /// A set's: one output per future. A merge's: the sum of its streams' hints (this looks at
    /// every stream).
    fn size_hint(&self) -> (usize, Option<usize>) {
        P::size_hint(self.len(), self.iter())
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> FusedStream for KeyedSet<V, A, P> {
    /// `true` once `poll_next` returned `Ready(None)`, until a value is added or the set is
    /// cleared.
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl<V: Unpin, A: Storage<V>, P: Kind> IntoIterator for KeyedSet<V, A, P>
where
    A::IntoValues: ExactSizeIterator<Item = V>,
{
    type Item = V;
    type IntoIter = A::IntoValues;

    /// Moves the values out of the set (`V: Unpin`), whether or not they were polled, in no
    /// particular order. Dropping the iterator part-way drops the values it has not given,
    /// once each.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// let set: FuturesUnordered<Ready<u32>> = (1..=3).map(ready).collect();
    /// let mut values: Vec<u32> = set.into_iter().map(Ready::into_inner).collect();
    /// values.sort();
    /// assert_eq!(values, [1, 2, 3]);
    /// ```
    fn into_iter(self) -> A::IntoValues {
        self.arena.into_values()
    }
}

/// The panic of a push into a full bounded set, out of the push's inlined path.
#[cold]
#[inline(never)]
#[track_caller]
fn full(name: &str, capacity: usize) -> ! {
    panic!("{name} is full (capacity {capacity})")
}

/// [`full`], for a refused value with a `Drop`: the value is dropped as the panic unwinds,
/// quietly (a panic of its `Drop` then is dropped, with `std`, where drop glue would abort).
/// Apart from `full`, so that a value without a `Drop` adds nothing to the push's path.
/// Guarded by `keyed_churn_100k` (instructions).
#[cold]
#[inline(never)]
#[track_caller]
fn refuse<V>(value: V, name: &str, capacity: usize) -> ! {
    let _refused = QuietDrop::new(value);
    full(name, capacity)
}

impl<V, P: Kind> KeyedSet<V, Arena<V>, P> {
    /// An empty set that can hold `capacity` values. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::Ready;
    /// # use pinfold::arena::{Arena, Futures, KeyedSet};
    /// # type FuturesUnorderedBounded<F> = KeyedSet<F, Arena<F>, Futures>;
    ///
    /// let set: FuturesUnorderedBounded<Ready<u32>> = FuturesUnorderedBounded::new(16);
    /// assert_eq!(set.capacity(), 16);
    /// assert!(set.is_empty());
    /// ```
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Self::with_arena(Arena::new(capacity))
    }

    /// Adds a value, or gives it back in `Err` if the set is full.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use futures::StreamExt;
    /// # use pinfold::arena::{Arena, Futures, KeyedSet};
    /// # type FuturesUnorderedBounded<F> = KeyedSet<F, Arena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
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
    pub fn try_push(&mut self, value: V) -> Result<(), V> {
        self.try_insert(value).map(drop)
    }

    /// Adds a value and returns its key, or gives it back in `Err` if the set is full.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::stream::{self, Iter};
    /// # use pinfold::arena::{Arena, Streams, KeyedSet};
    /// # type MergeBounded<S> = KeyedSet<S, Arena<S>, Streams>;
    ///
    /// let mut merged: MergeBounded<Iter<std::vec::IntoIter<u32>>> = MergeBounded::new(1);
    /// let key = merged.try_insert(stream::iter(vec![1])).unwrap();
    /// assert!(merged.try_insert(stream::iter(vec![2])).is_err());
    ///
    /// assert!(merged.remove(key)); // frees the slot
    /// assert!(merged.try_insert(stream::iter(vec![2])).is_ok());
    /// ```
    pub fn try_insert(&mut self, value: V) -> Result<Key, V> {
        let key = self.arena.insert(value)?;
        self.terminated = false;
        Ok(key)
    }

    /// Whether the set holds `capacity` values, so that a push would be refused.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// # use pinfold::arena::{Arena, Futures, KeyedSet};
    /// # type FuturesUnorderedBounded<F> = KeyedSet<F, Arena<F>, Futures>;
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

impl<V, P: Kind> FromIterator<V> for KeyedSet<V, Arena<V>, P> {
    /// A set holding every value of the iterator, with a capacity equal to their count (the
    /// values are collected into a `Vec` first, to count them).
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        let values: Vec<V> = iter.into_iter().collect();
        let mut set = Self::new(values.len());
        for value in values {
            set.push(value);
        }
        set
    }
}

impl<V, P: Kind> fmt::Debug for KeyedSet<V, Arena<V>, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(P::BOUNDED)
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

impl<V, P: Kind> KeyedSet<V, GrowableArena<V>, P> {
    /// An empty set. Allocates nothing: the first value allocates the first group. A
    /// `const fn`, so a set can be made in a `static` or `const` context.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::new();
    /// assert_eq!(set.capacity(), 0);
    /// set.push(ready(1));
    /// assert_eq!(set.capacity(), 32); // the first group
    /// ```
    pub const fn new() -> Self {
        Self::with_arena(GrowableArena::new())
    }

    /// An empty set whose first group has `capacity` slots, allocated now; the first group is
    /// kept as long as the set. `with_capacity(0)` is [`new`](Self::new) and allocates nothing.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::with_capacity(100);
    /// assert_eq!(set.capacity(), 100);
    /// set.extend((0..100).map(ready)); // no allocation: the first group has room
    /// assert_eq!(set.capacity(), 100);
    /// set.push(ready(100)); // a second group, as large as the first
    /// assert_eq!(set.capacity(), 200);
    /// ```
    ///
    /// # Panics
    /// If `capacity` is more values than a growable set holds (its 63 groups), before anything
    /// is allocated.
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_arena(GrowableArena::with_capacity(capacity))
    }
}

impl<V, P: Kind> Default for KeyedSet<V, GrowableArena<V>, P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V, P: Kind> FromIterator<V> for KeyedSet<V, GrowableArena<V>, P> {
    /// A set holding every value of the iterator, grown group by group as by `push`.
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<V, P: Kind> Extend<V> for KeyedSet<V, GrowableArena<V>, P> {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        for value in iter {
            self.push(value);
        }
    }
}

impl<V, P: Kind> fmt::Debug for KeyedSet<V, GrowableArena<V>, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(P::GROWABLE)
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("groups", &self.arena.groups())
            .finish_non_exhaustive()
    }
}

impl<V, P: Kind> KeyedSet<V, GrowableArena<V>, P> {
    /// Adds groups ahead of time, until at least `additional` slots are free, so that the next
    /// `additional` pushes allocate nothing; does nothing if that many are free already. The
    /// groups are sized as growth sizes them (a set with no group first gets one of
    /// `additional` slots, at least 32, kept as long as the set as `with_capacity`'s is), and
    /// the capacity reached is *retained*: outputs do not give it back until the set has given
    /// as many outputs as that capacity while holding at most a quarter of it
    /// ([*Memory*](crate::contract#memory)).
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::new();
    /// set.push(ready(0)); // the first group: 32 slots
    /// set.reserve(100);
    /// assert!(set.capacity() - set.len() >= 100);
    ///
    /// let capacity = set.capacity();
    /// set.extend((1..=100).map(ready)); // no group added
    /// assert_eq!(set.capacity(), capacity);
    /// ```
    ///
    /// # Panics
    /// If that many slots would take more than the 63 groups can hold (more values than
    /// memory can hold), or if a group is needed and the set's generations have run out (more
    /// than 2^62 values through one slot of a group it released).
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        self.arena.reserve(additional);
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> KeyedSet<V, A, P> {
    /// The set as a [`Stream`] of `(key, output)`, borrowing it mutably: each output with the
    /// key [`insert`](Self::insert) returned for its value, as
    /// [`poll_next_keyed`](Self::poll_next_keyed) gives them. It ends when the set does, and
    /// is [terminated](FusedStream::is_terminated) when the set is. It dereferences to the
    /// set, so values can be added while it streams; the set is the caller's again once the
    /// adapter is dropped.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::oneshot;
    /// use futures::StreamExt;
    /// # use pinfold::arena::{Futures, GrowableArena, KeyedSet};
    /// # type FuturesUnordered<F> = KeyedSet<F, GrowableArena<F>, Futures>;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set = FuturesUnordered::new();
    /// let (first_tx, first_rx) = oneshot::channel();
    /// let (second_tx, second_rx) = oneshot::channel();
    /// let first = set.insert(first_rx);
    /// let second = set.insert(second_rx);
    ///
    /// second_tx.send("second").unwrap();
    /// first_tx.send("first").unwrap();
    /// let outputs: Vec<_> = set.keyed().collect().await;
    /// assert_eq!(outputs, [(first, Ok("first")), (second, Ok("second"))]);
    /// assert!(set.is_empty());
    /// # });
    /// ```
    pub fn keyed(&mut self) -> Keyed<'_, V, A, P> {
        Keyed { set: self }
    }
}

/// A [`KeyedSet`] as a [`Stream`] of `(key, output)`: what [`KeyedSet::keyed`] returns. It
/// dereferences to the set, so values can be added and removed while it streams.
#[must_use = "streams do nothing unless polled"]
pub struct Keyed<'a, V, A, P> {
    set: &'a mut KeyedSet<V, A, P>,
}

impl<V, A, P> core::ops::Deref for Keyed<'_, V, A, P> {
    type Target = KeyedSet<V, A, P>;

    fn deref(&self) -> &KeyedSet<V, A, P> {
        self.set
    }
}

impl<V, A, P> core::ops::DerefMut for Keyed<'_, V, A, P> {
    fn deref_mut(&mut self) -> &mut KeyedSet<V, A, P> {
        self.set
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> Stream for Keyed<'_, V, A, P> {
    type Item = (Key, P::Output);

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().set.poll_next_keyed(cx)
    }

    /// The set's.
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.set.size_hint()
    }
}

impl<V, A: Storage<V>, P: PollKind<V>> FusedStream for Keyed<'_, V, A, P> {
    /// The set's: `true` once it returned `Ready(None)`, until a value is added or it is
    /// cleared.
    fn is_terminated(&self) -> bool {
        self.set.is_terminated()
    }
}

impl<V, A, P> fmt::Debug for Keyed<'_, V, A, P>
where
    KeyedSet<V, A, P>: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Keyed").field(&self.set).finish()
    }
}
