//! [`FuturesOrderedBounded`] and [`FuturesOrdered`]: sets of futures whose outputs come out in
//! push order, on the same reorder ring as [`OrderedBuffer`](crate::OrderedBuffer). Both are one
//! [`OrderedSet`], written once over either arena ([`Storage`]).

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::vec::Vec;
use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Budget, GrowableArena, Storage, unwind};

use crate::driven::Driven;
use crate::progress::ProgressStream;
use crate::ring::ReorderRing;
use crate::tagged::Tagged;

/// A set of futures, polled concurrently, whose outputs come out in the order the futures
/// were pushed ([`push_back`](Self::push_back)), or ahead of all the others
/// ([`push_front`](Self::push_front)), with futures stored in the kind of arena `A` is:
/// [`FuturesOrderedBounded<F>`] (an [`Arena`], a fixed capacity) or [`FuturesOrdered<F>`] (a
/// [`GrowableArena`]). Use those two names; the methods here are those of both, and each
/// name's docs state its memory.
///
/// Wakes, fairness and panics are the crate's ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)).
///
/// # Order
///
/// Outputs come out in push order, a future pushed to the front coming before every future
/// still in the set (running, or finished with its output held). Every future is polled when
/// it is woken, whatever comes before it: a slow future at the head does not stop the others
/// from running, and their outputs wait in a ring, in order, until the ones before them are
/// out. A future whose poll panicked has no output, and its place is skipped.
///
/// The set is a [`FusedStream`]: terminated once `poll_next` returned `None`, and live again
/// after a push or [`clear`](Self::clear). `len` and `size_hint` count the futures running
/// and the outputs held.
///
/// `Unpin` whatever `F` is; `Send` if `F` and `F::Output` are.
#[must_use = "streams do nothing unless polled"]
pub struct OrderedSet<F: Future, A: Storage<F>> {
    /// The futures, each tagged with its place in the output order.
    arena: A::Of<Tagged<F>>,
    /// Where outputs wait for the ones before them.
    ring: ReorderRing<F::Output>,
    /// The future being polled, while it is: if its poll (or its drop) panics, the next
    /// `poll_next` skips its place.
    polling: Option<u64>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push and by `clear`.
    terminated: bool,
}

impl<F: Future, A: Storage<F>> OrderedSet<F, A> {
    fn with_arena(arena: A::Of<Tagged<F>>, ring: ReorderRing<F::Output>) -> Self {
        Self {
            arena,
            ring,
            polling: None,
            terminated: false,
        }
    }

    /// Adds a future whose output comes after those of every future pushed before it.
    ///
    /// # Panics
    /// If the set is full (a [`FuturesOrderedBounded`] running `capacity` futures), with the
    /// message `FuturesOrderedBounded is full (capacity N)`; the future is dropped first, and
    /// if its `Drop` panics, that panic is the one raised. Use its
    /// [`try_push_back`](Self::try_push_back) to get the future back instead. A
    /// [`FuturesOrdered`] is never full.
    ///
    /// # Example
    ///
    /// The second future finishes first; its output waits for the first one's:
    ///
    /// ```
    /// use std::task::{Context, Poll, Waker};
    /// use futures::channel::oneshot;
    /// use futures::StreamExt;
    /// use pinfold::FuturesOrdered;
    ///
    /// let (first_tx, first) = oneshot::channel();
    /// let (second_tx, second) = oneshot::channel();
    /// let mut set = FuturesOrdered::new();
    /// set.push_back(first);
    /// set.push_back(second);
    ///
    /// second_tx.send("second").unwrap();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert_eq!(set.poll_next_unpin(&mut cx), Poll::Pending);
    /// assert_eq!(set.len(), 2); // the first running, the second's output held
    ///
    /// first_tx.send("first").unwrap();
    /// let outputs: Vec<_> = futures::executor::block_on(set.collect());
    /// assert_eq!(outputs, [Ok("first"), Ok("second")]);
    /// ```
    #[track_caller]
    pub fn push_back(&mut self, fut: F) {
        if self.try_push_at(fut, false).is_err() {
            self.full();
        }
    }

    /// Adds a future whose output comes before those of every future still in the set.
    ///
    /// # Panics
    /// If the set is full, as [`push_back`](Self::push_back).
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use futures::StreamExt;
    /// use pinfold::FuturesOrdered;
    ///
    /// let mut set = FuturesOrdered::new();
    /// set.push_back(ready(1));
    /// set.push_back(ready(2));
    /// set.push_front(ready(0));
    /// let outputs: Vec<u32> = futures::executor::block_on(set.collect());
    /// assert_eq!(outputs, [0, 1, 2]);
    /// ```
    #[track_caller]
    pub fn push_front(&mut self, fut: F) {
        if self.try_push_at(fut, true).is_err() {
            self.full();
        }
    }

    /// [`push_back`](Self::push_back), under the name futures-util used before 0.3.26.
    #[deprecated(note = "use `push_back`")]
    #[track_caller]
    pub fn push(&mut self, fut: F) {
        self.push_back(fut);
    }

    #[track_caller]
    fn full(&self) -> ! {
        panic!(
            "FuturesOrderedBounded is full (capacity {})",
            self.arena.capacity()
        )
    }

    /// How many futures the set holds: running, or finished with their output waiting.
    pub fn len(&self) -> usize {
        self.arena.len() + self.ring.held()
    }

    /// Whether the set holds no future and no waiting output.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every future and every waiting output. A bounded set keeps its storage; a
    /// growable set then gives memory back as the unordered set does. The set is no longer
    /// terminated.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set is empty and usable.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.polling = None;
        // The ring is emptied even if a future's `Drop` panics, so that no place waits for a
        // future that is gone.
        unwind::repair_on_unwind(self, |set| set.arena.clear(), |set| set.ring.clear());
        self.ring.clear();
    }

    /// Adds `fut` at the back or the front of the order, or gives it back if the arena is
    /// full.
    #[inline]
    fn try_push_at(&mut self, fut: F, front: bool) -> Result<(), F> {
        if self.arena.is_full() {
            return Err(fut);
        }
        let seq = if front {
            self.ring.push_front_running()
        } else {
            self.ring.push_running()
        };
        if self.arena.insert(Tagged { seq, fut }).is_err() {
            unreachable!("the arena has a free slot");
        }
        self.terminated = false;
        Ok(())
    }

    /// The next output in order, without tokio's budget.
    #[inline]
    fn poll_in_order(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        if let Some(seq) = self.polling.take() {
            // The last poll panicked in this future's poll or drop; the arena dropped it.
            self.ring.lose(seq);
        }
        let mut budget: Option<Budget> = None;
        loop {
            if let Some(out) = self.ring.pop_head() {
                return Poll::Ready(Some(out));
            }
            let budget = budget.get_or_insert_with(|| self.arena.start_round());
            let polling = &mut self.polling;
            let polled = self.arena.poll_with_budget(
                cx,
                budget,
                &mut |_, tagged: Pin<&mut Tagged<F>>, cx| tagged.poll_tracked(polling, cx),
            );
            // The finished future was dropped without a panic.
            self.polling = None;
            match polled {
                Poll::Ready(Some((_, (seq, out)))) => {
                    if self.ring.finish_head(seq) {
                        return Poll::Ready(Some(out));
                    }
                    self.ring.finish(seq, out);
                }
                Poll::Ready(None) => {
                    // Nothing runs, so every place has finished and been yielded, or is lost.
                    debug_assert_eq!(self.ring.len(), 0);
                    self.terminated = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn fmt_as(
        &self,
        name: &str,
        capacity: Option<usize>,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        let mut debug = f.debug_struct(name);
        debug
            .field("running", &self.arena.len())
            .field("held", &self.ring.held());
        if let Some(capacity) = capacity {
            debug.field("capacity", &capacity);
        }
        debug.field("terminated", &self.terminated).finish()
    }
}

impl<F: Future, A: Storage<F>> OrderedSet<F, A> {
    /// The set as a [`Driven`]: [`BufferExt::driven`](crate::BufferExt::driven) for a set of
    /// futures, which `set.driven(limit)` calls instead of that one. Once `limit` outputs are
    /// held it goes on polling the set, so the futures keep running and the outputs they give
    /// are held past the limit, at most one per future
    /// ([*At the limit*](Driven#at-the-limit)).
    ///
    /// A set is a [`ProgressStream`] already, holding its outputs in its ring while driven:
    /// [`for_each_driven`](crate::ProgressStreamExt::for_each_driven) takes it as it is. This
    /// method is there so that `set.driven(limit)` drives it as it drives every other set.
    ///
    /// # Panics
    /// If `limit` is 0, with the message `driven: limit must be greater than 0`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use pinfold::{FuturesOrdered, ProgressStreamExt};
    ///
    /// # futures::executor::block_on(async {
    /// let set: FuturesOrdered<_> = (0..4u32).map(ready).collect();
    /// let mut seen = Vec::new();
    /// set.driven(1)
    ///     .for_each_driven(|n| {
    ///         seen.push(n);
    ///         async {}
    ///     })
    ///     .await;
    /// assert_eq!(seen, [0, 1, 2, 3]);
    /// # });
    /// ```
    #[track_caller]
    pub fn driven(self, limit: usize) -> Driven<Self> {
        Driven::one_item_per_value(self, limit)
    }
}

// Nothing is pinned through the set: futures are pinned in the arena's own storage, and
// outputs are never pinned.
impl<F: Future, A: Storage<F>> Unpin for OrderedSet<F, A> {}

impl<F: Future, A: Storage<F>> Stream for OrderedSet<F, A> {
    type Item = F::Output;

    /// The next output in order; it spends a unit of tokio's budget (with the `tokio-coop`
    /// feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let set = self.get_mut();
        pinfold_arena::coop::poll_output(cx, |cx| set.poll_in_order(cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl<F: Future, A: Storage<F>> ProgressStream for OrderedSet<F, A> {
    /// Polls the futures that were woken; each output waits in the ring, in push order, for
    /// `poll_next`. `Ready(())` once nothing runs: every future has finished (or none was
    /// pushed).
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let set = self.get_mut();
        if let Some(seq) = set.polling.take() {
            set.ring.lose(seq);
        }
        let mut budget = set.arena.start_round();
        loop {
            let polling = &mut set.polling;
            let polled = set.arena.poll_with_budget(
                cx,
                &mut budget,
                &mut |_, tagged: Pin<&mut Tagged<F>>, cx| tagged.poll_tracked(polling, cx),
            );
            set.polling = None;
            match polled {
                Poll::Ready(Some((_, (seq, out)))) => set.ring.finish(seq, out),
                Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending if set.arena.is_empty() => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<F: Future, A: Storage<F>> FusedStream for OrderedSet<F, A> {
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures were pushed, or ahead of all the others; its methods, order, and the rest of
/// its contract are those of [`OrderedSet`]. futures-buffered's `FuturesOrderedBounded`, on
/// the waker-slot arena.
///
/// # Memory
///
/// A held output does not take a slot, so the capacity bounds the futures *running*. The
/// slots are allocated by [`new`](OrderedSet::new), with room in the ring for `capacity`
/// outputs; nothing more is allocated unless more than that many are held at once (the ring
/// then grows, and keeps its largest size). [`clear`](OrderedSet::clear) keeps the storage.
pub type FuturesOrderedBounded<F> = OrderedSet<F, Arena<F>>;

impl<F: Future> OrderedSet<F, Arena<F>> {
    /// An empty set that can run `capacity` futures at once. Allocates the slots and the ring
    /// now. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::Ready;
    /// use pinfold::FuturesOrderedBounded;
    ///
    /// let set: FuturesOrderedBounded<Ready<u32>> = FuturesOrderedBounded::new(8);
    /// assert_eq!(set.capacity(), 8);
    /// assert!(set.is_empty() && !set.is_full());
    /// ```
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        Self::with_arena(Arena::new(capacity), ReorderRing::with_capacity(capacity))
    }

    /// [`push_back`](Self::push_back), or the future back in `Err` if the set is full.
    ///
    /// # Example
    ///
    /// A full set gives the future back, unpolled; once an output is out, a slot is free:
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use futures::StreamExt;
    /// use pinfold::FuturesOrderedBounded;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set: FuturesOrderedBounded<Ready<u32>> = FuturesOrderedBounded::new(1);
    /// assert!(set.try_push_back(ready(1)).is_ok());
    /// let refused = set.try_push_back(ready(2)).unwrap_err();
    /// assert_eq!(set.next().await, Some(1));
    /// assert!(set.try_push_back(refused).is_ok());
    /// assert_eq!(set.next().await, Some(2));
    /// # });
    /// ```
    pub fn try_push_back(&mut self, fut: F) -> Result<(), F> {
        self.try_push_at(fut, false)
    }

    /// [`push_front`](Self::push_front), or the future back in `Err` if the set is full.
    pub fn try_push_front(&mut self, fut: F) -> Result<(), F> {
        self.try_push_at(fut, true)
    }

    /// How many futures can run at once.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Whether `capacity` futures run, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }
}

impl<F: Future> FromIterator<F> for OrderedSet<F, Arena<F>> {
    /// A set holding every future of the iterator in order, with a capacity equal to their
    /// count.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let futures: Vec<F> = iter.into_iter().collect();
        let mut set = Self::new(futures.len());
        for fut in futures {
            set.push_back(fut);
        }
        set
    }
}

impl<F: Future> fmt::Debug for OrderedSet<F, Arena<F>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_as("FuturesOrderedBounded", Some(self.capacity()), f)
    }
}

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures were pushed, or ahead of all the others; its methods, order, and the rest of its
/// contract are those of [`OrderedSet`]. futures-util's `FuturesOrdered`, on the growable
/// arena of [`FuturesUnordered`](https://docs.rs/pinfold-unordered): no allocation per future.
///
/// # Memory
///
/// [`new`](OrderedSet::new) allocates nothing. The slots grow in groups as futures are
/// pushed, and are given back as the unordered set's are (the top group once it is empty and
/// the rest at most half full); the ring keeps its largest size.
pub type FuturesOrdered<F> = OrderedSet<F, GrowableArena<F>>;

impl<F: Future> OrderedSet<F, GrowableArena<F>> {
    /// An empty set. Allocates nothing: the first push allocates.
    pub fn new() -> Self {
        Self::with_arena(GrowableArena::new(), ReorderRing::new())
    }
}

impl<F: Future> Default for OrderedSet<F, GrowableArena<F>> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Future> FromIterator<F> for OrderedSet<F, GrowableArena<F>> {
    /// A set holding every future of the iterator, in order.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<F: Future> Extend<F> for OrderedSet<F, GrowableArena<F>> {
    /// Pushes every future of the iterator to the back, in order.
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for fut in iter {
            self.push_back(fut);
        }
    }
}

impl<F: Future> fmt::Debug for OrderedSet<F, GrowableArena<F>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_as("FuturesOrdered", None, f)
    }
}
