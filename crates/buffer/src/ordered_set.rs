//! [`FuturesOrderedBounded`] and [`FuturesOrdered`]: sets of futures whose outputs come out in
//! push order, on the same reorder ring as [`OrderedBuffer`](crate::OrderedBuffer).

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Budget, GrowableArena, Key, Step, unwind};

/// `Unpin`, `Stream` and `FusedStream` of an ordered set type `$set`, which wraps an
/// [`Ordered`] in its field `set`.
macro_rules! stream_impls {
    ($set:ident) => {
        // Nothing is pinned through the set: futures are pinned in the arena's own storage,
        // and outputs are never pinned.
        impl<F: Future> Unpin for $set<F> {}

        impl<F: Future> Stream for $set<F> {
            type Item = F::Output;

            fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
                self.get_mut().set.poll_next(cx)
            }

            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.len(), Some(self.len()))
            }
        }

        impl<F: Future> FusedStream for $set<F> {
            fn is_terminated(&self) -> bool {
                self.set.terminated
            }
        }
    };
}

use crate::ring::ReorderRing;
use crate::tagged::Tagged;
use alloc::vec::Vec;

/// What the ordered sets need of an arena: the fixed [`Arena`] or the [`GrowableArena`].
pub(crate) trait Slots<T> {
    fn is_full(&self) -> bool;
    fn insert_value(&mut self, value: T);
    fn len(&self) -> usize;
    fn clear(&mut self);
    fn budget(&mut self) -> Budget;
    fn poll_with_budget<R, P>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        poll: &mut P,
    ) -> Poll<Option<(Key, R)>>
    where
        P: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>;
}

/// `Slots` for an arena type, whose own methods of the same names do the work; `is_full` and
/// `insert_value` are given, as the two types differ there.
macro_rules! slots {
    ($arena:ident, |$this:ident| $is_full:expr, |$that:ident, $value:ident| $insert:expr) => {
        impl<T> Slots<T> for $arena<T> {
            #[inline]
            fn is_full(&self) -> bool {
                let $this = self;
                $is_full
            }

            #[inline]
            fn insert_value(&mut self, $value: T) {
                let $that = self;
                $insert
            }

            #[inline]
            fn len(&self) -> usize {
                $arena::len(self)
            }

            #[inline]
            fn clear(&mut self) {
                $arena::clear(self);
            }

            #[inline]
            fn budget(&mut self) -> Budget {
                $arena::budget(self)
            }

            #[inline]
            fn poll_with_budget<R, P>(
                &mut self,
                cx: &mut Context<'_>,
                budget: &mut Budget,
                poll: &mut P,
            ) -> Poll<Option<(Key, R)>>
            where
                P: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
            {
                $arena::poll_with_budget(self, cx, budget, poll)
            }
        }
    };
}

slots!(Arena, |arena| arena.is_full(), |arena, value| {
    if arena.insert(value).is_err() {
        unreachable!("the caller checked that the arena has a free slot");
    }
});
slots!(GrowableArena, |_arena| false, |arena, value| {
    arena.insert(value);
});

/// The set both public types are: futures in an arena, each tagged with its place in the
/// output order, and the ring where outputs wait for the ones before them.
struct Ordered<A, F: Future> {
    arena: A,
    ring: ReorderRing<F::Output>,
    /// The future being polled, while it is: if its poll (or its drop) panics, the next
    /// `poll_next` skips its place.
    polling: Option<u64>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push and by `clear`.
    terminated: bool,
}

impl<A: Slots<Tagged<F>>, F: Future> Ordered<A, F> {
    fn new(arena: A, ring: ReorderRing<F::Output>) -> Self {
        Self {
            arena,
            ring,
            polling: None,
            terminated: false,
        }
    }

    fn len(&self) -> usize {
        self.arena.len() + self.ring.held()
    }

    #[inline]
    fn try_push(&mut self, fut: F, front: bool) -> Result<(), F> {
        if self.arena.is_full() {
            return Err(fut);
        }
        let seq = if front {
            self.ring.push_front_running()
        } else {
            self.ring.push_running()
        };
        self.arena.insert_value(Tagged { seq, fut });
        self.terminated = false;
        Ok(())
    }

    fn clear(&mut self) {
        self.terminated = false;
        self.polling = None;
        // The ring is emptied even if a future's `Drop` panics, so that no place waits for a
        // future that is gone.
        unwind::repair_on_unwind(self, |set| set.arena.clear(), |set| set.ring.clear());
        self.ring.clear();
    }

    /// The next output in order; it spends a unit of tokio's budget (with the `tokio-coop`
    /// feature).
    #[inline]
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        pinfold_arena::coop::poll_output(cx, |cx| self.poll_in_order(cx))
    }

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
            let budget = budget.get_or_insert_with(|| self.arena.budget());
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

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures were pushed ([`push_back`](Self::push_back)), or ahead of all the others
/// ([`push_front`](Self::push_front)). futures-buffered's `FuturesOrderedBounded`, on the
/// waker-slot arena.
///
/// Every future is polled when it is woken, whatever comes before it: a slow future at the
/// head does not stop the others from running. Their outputs wait in a ring, in order, until
/// the ones before them are out; a waiting output does not take a slot, so the capacity bounds
/// the futures *running*. The slots are allocated by [`new`](Self::new), with room in the ring
/// for `capacity` outputs; nothing more is allocated unless more than that many are waiting at
/// once.
///
/// Fairness, wakes and panics are those of the unordered sets: one `poll_next` polls each
/// future at most once; a future that panics while polled is dropped, its place in the order
/// is skipped, the panic propagates, and the set stays usable.
///
/// `Unpin` whatever `F` is; `Send` if `F` and `F::Output` are.
#[must_use = "streams do nothing unless polled"]
pub struct FuturesOrderedBounded<F: Future> {
    set: Ordered<Arena<Tagged<F>>, F>,
}

impl<F: Future> FuturesOrderedBounded<F> {
    /// An empty set that can run `capacity` futures at once. Allocates the slots and the ring
    /// now. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self {
            set: Ordered::new(Arena::new(capacity), ReorderRing::with_capacity(capacity)),
        }
    }

    /// Adds a future whose output comes after those of every future pushed before it.
    ///
    /// # Panics
    /// If the set is full, with the message `FuturesOrderedBounded is full (capacity N)`. Use
    /// [`try_push_back`](Self::try_push_back) to get the future back instead.
    #[track_caller]
    pub fn push_back(&mut self, fut: F) {
        if self.try_push_back(fut).is_err() {
            self.full();
        }
    }

    /// Adds a future whose output comes before those of every future still in the set.
    ///
    /// # Panics
    /// If the set is full, as [`push_back`](Self::push_back).
    #[track_caller]
    pub fn push_front(&mut self, fut: F) {
        if self.try_push_front(fut).is_err() {
            self.full();
        }
    }

    /// [`push_back`](Self::push_back), or the future back in `Err` if the set is full.
    pub fn try_push_back(&mut self, fut: F) -> Result<(), F> {
        self.set.try_push(fut, false)
    }

    /// [`push_front`](Self::push_front), or the future back in `Err` if the set is full.
    pub fn try_push_front(&mut self, fut: F) -> Result<(), F> {
        self.set.try_push(fut, true)
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
            self.capacity()
        )
    }

    /// How many futures the set holds: running, or finished with their output waiting.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether the set holds no future and no waiting output.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many futures can run at once.
    pub fn capacity(&self) -> usize {
        self.set.arena.capacity()
    }

    /// Whether `capacity` futures run, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.set.arena.is_full()
    }

    /// Drops every future and every waiting output. The storage is kept. The set is no longer
    /// terminated.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set is empty and usable.
    pub fn clear(&mut self) {
        self.set.clear();
    }
}

stream_impls!(FuturesOrderedBounded);

impl<F: Future> FromIterator<F> for FuturesOrderedBounded<F> {
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

impl<F: Future> fmt::Debug for FuturesOrderedBounded<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.set
            .fmt_as("FuturesOrderedBounded", Some(self.capacity()), f)
    }
}

/// A growable set of futures, polled concurrently, whose outputs come out in the order the
/// futures were pushed ([`push_back`](Self::push_back)), or ahead of all the others
/// ([`push_front`](Self::push_front)). futures-util's `FuturesOrdered`, on the growable arena
/// of [`FuturesUnordered`](https://docs.rs/pinfold-unordered): no allocation per future.
///
/// Every future is polled when it is woken, whatever comes before it: a slow future at the
/// head does not stop the others from running. Their outputs wait in a ring, in order, until
/// the ones before them are out. The slots grow in groups and are given back as the unordered
/// set's are; the ring keeps its largest size.
///
/// Fairness, wakes and panics are those of the unordered sets: one `poll_next` polls each
/// future at most once; a future that panics while polled is dropped, its place in the order
/// is skipped, the panic propagates, and the set stays usable.
///
/// `Unpin` whatever `F` is; `Send` if `F` and `F::Output` are.
#[must_use = "streams do nothing unless polled"]
pub struct FuturesOrdered<F: Future> {
    set: Ordered<GrowableArena<Tagged<F>>, F>,
}

impl<F: Future> FuturesOrdered<F> {
    /// An empty set. Allocates nothing: the first push allocates.
    pub fn new() -> Self {
        Self {
            set: Ordered::new(GrowableArena::new(), ReorderRing::new()),
        }
    }

    /// Adds a future whose output comes after those of every future pushed before it.
    pub fn push_back(&mut self, fut: F) {
        if self.set.try_push(fut, false).is_err() {
            unreachable!("a growable arena is never full");
        }
    }

    /// Adds a future whose output comes before those of every future still in the set.
    pub fn push_front(&mut self, fut: F) {
        if self.set.try_push(fut, true).is_err() {
            unreachable!("a growable arena is never full");
        }
    }

    /// [`push_back`](Self::push_back), under the name futures-util used before 0.3.26.
    #[deprecated(note = "use `push_back`")]
    pub fn push(&mut self, fut: F) {
        self.push_back(fut);
    }

    /// How many futures the set holds: running, or finished with their output waiting.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether the set holds no future and no waiting output.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every future and every waiting output, then gives memory back as the unordered
    /// set does. The set is no longer terminated.
    ///
    /// If a future's `Drop` panics, the others are dropped all the same, then the panic
    /// propagates; the set is empty and usable.
    pub fn clear(&mut self) {
        self.set.clear();
    }
}

impl<F: Future> Default for FuturesOrdered<F> {
    fn default() -> Self {
        Self::new()
    }
}

stream_impls!(FuturesOrdered);

impl<F: Future> FromIterator<F> for FuturesOrdered<F> {
    /// A set holding every future of the iterator, in order.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<F: Future> Extend<F> for FuturesOrdered<F> {
    /// Pushes every future of the iterator to the back, in order.
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for fut in iter {
            self.push_back(fut);
        }
    }
}

impl<F: Future> fmt::Debug for FuturesOrdered<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.set.fmt_as("FuturesOrdered", None, f)
    }
}
