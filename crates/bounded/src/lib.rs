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
//! [`insert`](FuturesUnorderedBounded::insert) gives a [`Key`] for the future:
//! [`remove`](FuturesUnorderedBounded::remove) drops it in place at once (its output never
//! comes), and [`poll_next_keyed`](FuturesUnorderedBounded::poll_next_keyed) says which future
//! gave each output. A key of a future that is gone is refused, also after its slot was reused.
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
//! cannot starve the executor or the other futures, or once 32 futures polled before were woken
//! and `Pending` again ([`pinfold_arena::MAX_VAIN_REPOLLS`]: under tokio, once the task's coop
//! budget is spent, tokio's futures do that until the next task poll). Wakes that arrive during the call are
//! collected in it, and the woken futures it has not polled yet are polled in it: a call returns
//! `Pending` only when no woken future is left that it may still poll (a future polled in the
//! call and woken again waits for the next call, and the call wakes its task for it).
//!
//! # Wakes
//!
//! Each future has its own waker: `Send + Sync`, usable from any thread, also after the future
//! finished or the set is gone (then waking does nothing). A waker that outlives its future
//! does not cause a poll of the future that takes its slot next (unless more wakers of departed
//! futures are alive at once than the set has slots: then one may cause a spurious poll).
//!
//! # Panics
//!
//! If a future panics while being polled, it is dropped in place, its slot is freed, and the
//! panic propagates out of `poll_next`. If the task's waker panics (in its `clone`, `wake` or
//! `drop`), the panic propagates out of the call that ran it and no future is blamed for it.
//! Either way the set stays usable.
//!
//! # Features
//!
//! - `std` (default): a panic in a value's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the set is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds (see
//!   [`pinfold_arena::unwind`]).
//! - `tokio-coop`: each output spends a unit of tokio's cooperative budget, and the set yields once
//!   the budget is spent (see [`pinfold_arena::coop`]).
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

use core::fmt;

use alloc::vec::Vec;
#[cfg(doc)]
use futures_core::FusedStream;
use pinfold_arena::Arena;

pub use pinfold_arena::Key;

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
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
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
        self.insert(fut);
    }

    /// Adds a future to the set, or gives it back in `Err` if the set is full.
    pub fn try_push(&mut self, fut: F) -> Result<(), F> {
        self.try_insert(fut).map(drop)
    }

    /// Adds a future to the set and returns its key.
    ///
    /// # Panics
    /// If the set is full, as [`push`](Self::push).
    #[track_caller]
    pub fn insert(&mut self, fut: F) -> Key {
        match self.try_insert(fut) {
            Ok(key) => key,
            Err(_) => panic!(
                "FuturesUnorderedBounded is full (capacity {})",
                self.capacity()
            ),
        }
    }

    /// Adds a future to the set and returns its key, or gives it back in `Err` if the set is
    /// full.
    pub fn try_insert(&mut self, fut: F) -> Result<Key, F> {
        let key = self.arena.insert(fut)?;
        self.terminated = false;
        Ok(key)
    }

    /// Whether the set holds `capacity` futures, so that a push would be refused.
    pub fn is_full(&self) -> bool {
        self.arena.is_full()
    }

    /// How many futures the set can hold.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Drops every future in the set. The storage is kept. The set is no longer terminated
    /// ([`is_terminated`](FusedStream::is_terminated) is `false`), as with futures-util.
    pub fn clear(&mut self) {
        self.terminated = false;
        self.arena.clear();
    }
}

pinfold_arena::unordered_set_common!(FuturesUnorderedBounded);

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

/// The futures of a [`FuturesUnorderedBounded`], moved out by its `into_iter`, in no particular order.
/// Dropping it part-way drops the futures it has not given, once each.
pub type IntoIter<F> = pinfold_arena::IntoValues<F>;

impl<F: Unpin> IntoIterator for FuturesUnorderedBounded<F> {
    type Item = F;
    type IntoIter = IntoIter<F>;

    /// Moves the futures out of the set (`F: Unpin`), whether or not they were polled.
    fn into_iter(self) -> IntoIter<F> {
        self.arena.into_values()
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
