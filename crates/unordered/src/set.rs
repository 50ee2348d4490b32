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
/// those of both. See the [crate documentation](crate).
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

    /// Adds a future to the set, as [`push`](Self::push), and returns its key.
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
    pub fn remove(&mut self, key: Key) -> bool {
        self.arena.remove(key)
    }

    /// Whether `key`'s future is still in the set.
    pub fn contains_key(&self, key: Key) -> bool {
        self.arena.contains_key(key)
    }

    /// `key`'s future, if it is still in the set.
    pub fn get(&self, key: Key) -> Option<&F> {
        self.arena.get(key)
    }

    /// `key`'s future, pinned, if it is still in the set.
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

    /// Drops every future in the set. A bounded set keeps its storage; a growable set then
    /// releases empty groups as after an output (see the crate documentation, *Memory*). The
    /// set is no longer terminated ([`is_terminated`](FusedStream::is_terminated) is `false`),
    /// as with futures-util.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set stays consistent and usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }

    /// The futures in the set, in no particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &F> + '_ {
        self.arena.iter().map(|(_, fut)| fut)
    }

    /// The futures in the set with their keys, in no particular order.
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
    /// [`insert`](Self::insert) returned for it.
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
