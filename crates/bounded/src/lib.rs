//! [`FuturesUnorderedBounded`]: a fixed-capacity set of futures that yields their outputs in
//! the order they finish, with no allocation per push.
//!
//! `futures_util::stream::FuturesUnordered` allocates an `Arc` for every future pushed into it.
//! This set allocates its storage once, when it is made, and never again: pushing, polling,
//! waking and finishing a future allocate nothing. Only the futures that were woken are
//! polled, each with its own waker, and a future never moves once pushed.
//!
//! Pushing into a full set is refused: [`try_push`](FuturesUnorderedBounded::try_push) gives the
//! future back, [`push`](FuturesUnorderedBounded::push) panics.
//!
//! # Example
//!
//! ```
//! use futures_util::StreamExt;
//! use pinfold_bounded::FuturesUnorderedBounded;
//!
//! async fn square(n: u64) -> u64 {
//!     n * n
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let mut set = FuturesUnorderedBounded::new(8);
//! for n in 0..8 {
//!     set.push(square(n));
//! }
//! assert!(set.try_push(square(100)).is_err()); // full: the future comes back
//!
//! let mut squares: Vec<u64> = set.collect().await;
//! squares.sort();
//! assert_eq!(squares, [0, 1, 4, 9, 16, 25, 36, 49]);
//! # });
//! ```
//!
//! # Fairness
//!
//! One `poll_next` polls each future at most once. It yields (wakes its task and returns
//! `Pending`) once it has polled as many futures as the set held when the call started, or once
//! two futures woke themselves during their own poll, so a future that always wakes itself
//! cannot starve the executor or the other futures.
//!
//! # Panics
//!
//! If a future panics while being polled, it is dropped in place, its slot is freed, and the
//! panic propagates out of `poll_next`. The set stays usable.
#![forbid(unsafe_code)]

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pinfold_arena::{Arena, Step};

/// A fixed-capacity set of futures, polled concurrently, whose outputs come out in the order
/// the futures finish. See the [crate documentation](crate).
///
/// `Unpin` whatever `F` is (futures are pinned in the set's own storage); `Send` if `F` is;
/// `Sync` if `F` is `Send + Sync`.
pub struct FuturesUnorderedBounded<F> {
    arena: Arena<F>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by a push.
    terminated: bool,
}

impl<F> FuturesUnorderedBounded<F> {
    /// An empty set that can hold `capacity` futures. Allocates its storage now (two
    /// allocations) and never again. A capacity of 0 is allowed: every push is refused.
    ///
    /// # Panics
    /// If `capacity` is `u32::MAX` or more.
    pub fn new(capacity: usize) -> Self {
        Self {
            arena: Arena::new(capacity),
            terminated: false,
        }
    }

    /// Adds a future to the set; it is polled by the next `poll_next`.
    ///
    /// # Panics
    /// If the set is full, with the message `FuturesUnorderedBounded is full (capacity N)`.
    /// Use [`try_push`](Self::try_push) to get the future back instead.
    #[track_caller]
    pub fn push(&mut self, fut: F) {
        if self.try_push(fut).is_err() {
            panic!(
                "FuturesUnorderedBounded is full (capacity {})",
                self.capacity()
            );
        }
    }

    /// Adds a future to the set, or gives it back in `Err` if the set is full.
    pub fn try_push(&mut self, fut: F) -> Result<(), F> {
        self.arena.insert(fut)?;
        self.terminated = false;
        Ok(())
    }

    /// How many futures the set holds.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the set holds no future.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// Whether the set holds `capacity` futures, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }

    /// How many futures the set can hold.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every future in the set. The storage is kept.
    pub fn clear(&mut self) {
        self.arena.clear();
    }

    /// The futures in the set, in no particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &F> + '_ {
        self.arena.iter().map(|(_, fut)| fut)
    }

    /// The futures in the set, pinned, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = Pin<&mut F>> + '_ {
        self.arena.iter_pin_mut().map(|(_, fut)| fut)
    }
}

impl<F: Future> Stream for FuturesUnorderedBounded<F> {
    type Item = F::Output;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let polled = self.arena.poll_next(cx, |_, fut, cx| match fut.poll(cx) {
            Poll::Ready(out) => Step::Done(out),
            Poll::Pending => Step::Pending,
        });
        match polled {
            Poll::Ready(Some((_, out))) => Poll::Ready(Some(out)),
            Poll::Ready(None) => {
                self.terminated = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl<F: Future> FusedStream for FuturesUnorderedBounded<F> {
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl<F> FromIterator<F> for FuturesUnorderedBounded<F> {
    /// A set holding every future of the iterator, with a capacity equal to their count.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let futures: Vec<F> = iter.into_iter().collect();
        let mut set = Self::new(futures.len());
        for fut in futures {
            set.push(fut);
        }
        set
    }
}

impl<F> fmt::Debug for FuturesUnorderedBounded<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FuturesUnorderedBounded")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
