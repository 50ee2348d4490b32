//! [`UnorderedSet`]: the set of futures, written once over either arena.

use core::future::Future;
use core::iter::ExactSizeIterator;
use core::pin::Pin;
use core::task::{Context, Poll};

#[cfg(doc)]
use futures_core::FusedStream;
use futures_core::Stream;
use pinfold_arena::{Key, Step, Storage};

/// A set of futures, polled concurrently, whose outputs come out in the order the futures
/// finish, stored in `A`: [`FuturesUnorderedBounded<F>`](crate::FuturesUnorderedBounded) (an
/// [`Arena`](pinfold_arena::Arena), a fixed capacity) or
/// [`FuturesUnordered<F>`](crate::FuturesUnordered) (a
/// [`GrowableArena`](pinfold_arena::GrowableArena)). Use those two names; the methods here are
/// those of both.
///
/// What a set guarantees is in the crate documentation: the [order](crate#order) of its
/// outputs, [keys](crate#keys), [fairness](crate#fairness) within one `poll_next`, which
/// futures are polled and when its task is woken ([wakes](crate#wakes)), what a panic leaves
/// ([panics](crate#panics)), and what is allocated when ([memory](crate#memory)).
///
/// `Unpin` whatever `F` is (futures are pinned in the set's own storage); `Send` if `F` is;
/// `Sync` if `F` is `Send + Sync`.
#[must_use = "streams do nothing unless polled"]
pub struct UnorderedSet<F, A> {
    pub(crate) arena: A,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push and by `clear`.
    pub(crate) terminated: bool,
    _futures: core::marker::PhantomData<fn(F) -> F>,
}

impl<F, A: Storage<F>> UnorderedSet<F, A> {
    /// A set stored in `arena`.
    pub(crate) const fn with_arena(arena: A) -> Self {
        Self {
            arena,
            terminated: false,
            _futures: core::marker::PhantomData,
        }
    }

    /// Adds a future to the set; it is polled by the next `poll_next`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// async fn double(n: u32) -> u32 {
    ///     n * 2
    /// }
    ///
    /// # futures_executor::block_on(async {
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
    /// If the set is full (a [`FuturesUnorderedBounded`](crate::FuturesUnorderedBounded)
    /// holding `capacity` futures), with the message `FuturesUnorderedBounded is full
    /// (capacity N)`; use its `try_push` to get the future back instead. A
    /// [`FuturesUnordered`](crate::FuturesUnordered) panics only if every one of its 63 groups
    /// is full (more futures than memory can hold).
    #[track_caller]
    #[inline]
    pub fn push(&mut self, fut: F) {
        self.insert(fut);
    }

    /// Adds a future to the set, as [`push`](Self::push), and returns its key: the key
    /// [`poll_next_keyed`](Self::poll_next_keyed) gives with its output, and the key to
    /// [`remove`](Self::remove) it or reach it ([`get`](Self::get)).
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// # futures_executor::block_on(async {
    /// let mut set = FuturesUnordered::new();
    /// let key = set.insert(async { "done" });
    /// assert!(set.contains_key(key));
    ///
    /// assert_eq!(set.next().await, Some("done"));
    /// assert!(!set.contains_key(key)); // finished: its key is refused from now on
    /// # });
    /// ```
    ///
    /// # Panics
    /// If the set is full, as [`push`](Self::push).
    #[track_caller]
    #[inline]
    pub fn insert(&mut self, fut: F) -> Key {
        match self.arena.insert(fut) {
            Ok(key) => {
                self.terminated = false;
                key
            }
            Err(_) => full(self.capacity()),
        }
    }

    /// Drops `key`'s future in place now; its output never comes. `false` if it was gone
    /// already (finished, removed, or cleared).
    ///
    /// If the future's `Drop` panics, it is gone all the same and the panic propagates.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_channel::oneshot;
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// # futures_executor::block_on(async {
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

    /// Whether `key`'s future is still in the set: `false` once it finished (before its
    /// output was returned), was removed, or the set was cleared.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// # futures_executor::block_on(async {
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

    /// `key`'s future, if it is still in the set.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// let mut set: FuturesUnordered<Ready<u32>> = FuturesUnordered::new();
    /// let key = set.insert(ready(7));
    /// assert!(set.get(key).is_some());
    ///
    /// set.clear();
    /// assert!(set.get(key).is_none());
    /// ```
    pub fn get(&self, key: Key) -> Option<&F> {
        self.arena.get(key)
    }

    /// `key`'s future, pinned, if it is still in the set.
    ///
    /// # Example
    ///
    /// Closing a receiver in the set, so that its sender sees it gone:
    ///
    /// ```
    /// use futures_channel::oneshot;
    /// use futures_util::StreamExt;
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// # futures_executor::block_on(async {
    /// let (sender, receiver) = oneshot::channel::<u32>();
    /// let mut set = FuturesUnordered::new();
    /// let key = set.insert(receiver);
    ///
    /// set.get_pin_mut(key).unwrap().close();
    /// assert!(sender.is_canceled());
    /// assert!(set.next().await.unwrap().is_err()); // the closed receiver's output
    /// # });
    /// ```
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut F>> {
        self.arena.get_pin_mut(key)
    }

    /// How many futures the set holds.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the set holds no future.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// How many futures the set can hold now: its fixed capacity, or the slots a growable set
    /// has allocated (the sum of its groups' capacities).
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every future in the set; their outputs never come, and their keys are refused
    /// from now on. A bounded set keeps its storage; a growable set then releases empty groups
    /// as after an output (see the crate documentation, [*Memory*](crate#memory)). The set is
    /// no longer terminated ([`is_terminated`](FusedStream::is_terminated) is `false`), as with
    /// futures-util.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set stays consistent and usable.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use futures_util::stream::FusedStream;
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// # futures_executor::block_on(async {
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

    /// The futures in the set, in no particular order.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnorderedBounded;
    ///
    /// let set: FuturesUnorderedBounded<Ready<u32>> = [1, 2, 3].map(ready).into_iter().collect();
    /// assert_eq!(set.capacity(), 3); // from an iterator: as many slots as futures
    /// assert_eq!(set.iter().len(), 3);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &F> + '_ {
        self.arena.iter().map(|(_, fut)| fut)
    }

    /// The futures in the set with their keys, in no particular order.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::future::{Pending, pending};
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// let mut set: FuturesUnordered<Pending<()>> = FuturesUnordered::new();
    /// let mut keys = vec![set.insert(pending()), set.insert(pending())];
    ///
    /// let mut listed: Vec<_> = set.iter_keyed().map(|(key, _)| key).collect();
    /// listed.sort();
    /// keys.sort();
    /// assert_eq!(listed, keys);
    /// ```
    pub fn iter_keyed(&self) -> impl ExactSizeIterator<Item = (Key, &F)> + '_ {
        self.arena.iter()
    }

    /// The futures in the set, pinned, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut F>> + '_ {
        self.arena.iter_pin_mut().map(|(_, fut)| fut)
    }

    /// The futures in the set, pinned, with their keys, in no particular order.
    pub fn iter_pin_mut_keyed(&mut self) -> impl ExactSizeIterator<Item = (Key, Pin<&mut F>)> + '_ {
        self.arena.iter_pin_mut()
    }

    /// The futures in the set, mutably, in no particular order. For `F: Unpin`; use
    /// [`iter_pin_mut`](Self::iter_pin_mut) otherwise.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = &mut F> + '_
    where
        F: Unpin,
    {
        self.arena
            .iter_pin_mut()
            .map(|(_, fut)| Pin::into_inner(fut))
    }
}

impl<F: Future, A: Storage<F>> UnorderedSet<F, A> {
    /// `poll_next` that also says which future gave the output: the key
    /// [`insert`](Self::insert) returned for it. Its future is gone by then, so the key is
    /// refused from now on.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use futures_channel::oneshot;
    /// use pinfold_unordered::FuturesUnordered;
    ///
    /// # futures_executor::block_on(async {
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
    pub fn poll_next_keyed(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Key, F::Output)>> {
        pinfold_arena::coop::poll_output(cx, |cx| {
            let polled = self
                .arena
                .poll_next(cx, |_, fut, cx| Step::of_future(fut.poll(cx)));
            if let Poll::Ready(None) = polled {
                self.terminated = true;
            }
            polled
        })
    }
}

impl<F: Future, A: Storage<F>> Stream for UnorderedSet<F, A> {
    type Item = F::Output;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        self.get_mut()
            .poll_next_keyed(cx)
            .map(|polled| polled.map(|(_, out)| out))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl<F: Future, A: Storage<F>> futures_core::FusedStream for UnorderedSet<F, A> {
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl<F: Unpin, A: Storage<F>> IntoIterator for UnorderedSet<F, A>
where
    A::IntoValues: ExactSizeIterator<Item = F>,
{
    type Item = F;
    type IntoIter = A::IntoValues;

    /// Moves the futures out of the set (`F: Unpin`), whether or not they were polled, in no
    /// particular order. Dropping the iterator part-way drops the futures it has not given,
    /// once each.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use pinfold_unordered::FuturesUnordered;
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

/// The panic of a push into a full set, out of the push's inlined path.
#[cold]
#[inline(never)]
#[track_caller]
fn full(capacity: usize) -> ! {
    panic!("FuturesUnorderedBounded is full (capacity {capacity})")
}
