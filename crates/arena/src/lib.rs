//! The waker-slot arena that pinfold's sets, joins, buffers, merges and maps stand on.
//!
//! An [`Arena<T>`] is a block of `capacity` slots, fixed when it is made. Each slot holds a
//! pinned value (a future, a stream, anything the owner polls) and gives it a waker of its
//! own. Waking it, from any thread, puts the value in a lock-free set of woken values; the
//! owner collects that set and polls exactly the values that were woken. A
//! [`GrowableArena<T>`] is a stack of arenas that grows and shrinks, polled as one; both
//! implement [`Storage`], so that a primitive is written once over either. A
//! [`JoinArena<T>`] is a fixed sequence of values, a join's: polled by the owner with a context
//! of its choosing until it arms them with wakers of their own, and turned into the output
//! `Vec` in the same allocation at the end. [`with_noted_wakes`] lends a waker that notes wakes and
//! passes them on to the task once, for an owner's pass over values with the task's waker.
//!
//! - Storage is allocated once, at construction (two allocations: the slots, and the wake
//!   table the wakers share) and never again: inserting, polling, waking, removing and
//!   clearing allocate nothing.
//! - A value never moves: it is dropped in place when it finishes, is removed, or the arena is
//!   dropped.
//! - Inserting gives a [`Key`]: slot plus generation. A key of a value that is gone is refused
//!   by every keyed method, also after its slot was reused.
//! - The wake path is a few atomic `fetch_or`s, no lock, no allocation.
//! - Wakes, fairness, panics and memory follow the rules of [`contract`], which every pinfold
//!   primitive on the arena keeps: one round per call, each value polled at most once in it,
//!   wakes coalesced and never lost, a panic that leaves everything consistent. Each crate
//!   states only what is its own, and links there.
//!
//! How it works is in [`implementation`].
//!
//! # Example
//!
//! A tiny unordered set of futures:
//!
//! ```
//! use std::future::{Future, ready};
//! use std::task::{Context, Poll};
//! use pinfold_arena::{Arena, Step, Storage};
//!
//! let mut arena = Arena::new(4);
//! for n in [1, 2, 3] {
//!     arena.insert(ready(n * 10)).unwrap();
//! }
//! let mut cx = Context::from_waker(std::task::Waker::noop());
//! let mut outputs = Vec::new();
//! while let Poll::Ready(Some((_key, out))) =
//!     arena.poll_next(&mut cx, |_, fut, cx| Step::of_future(fut.poll(cx)))
//! {
//!     outputs.push(out);
//! }
//! assert_eq!(outputs, [10, 20, 30]);
//! assert!(arena.is_empty());
//! ```
//!
//! # Features
//!
//! - `std` (default): [`unwind`] catches panics with `catch_unwind`. Without it the crate is
//!   `#![no_std]` + `alloc` and stays consistent with drop guards while a panic unwinds.
//! - `tokio-coop`: [`coop`] spends tokio's cooperative budget per output.
//! - `loom`: with `--cfg pinfold_loom`, loom's atomics, cells and allocation, for the models
//!   in `loom-tests/`.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

// The layers, lowest first: the root's own modules (`sync`, `unwind`, `key`, `index`,
// `coop`), then `wake`, `poll`, `storage` and `set`. A module imports from its own layer and
// those below it only (`cargo xtask layers`).
pub mod contract;
pub mod coop;
pub mod implementation;
mod index;
mod key;
mod poll;
mod set;
mod storage;
mod sync;
pub mod unwind;
mod wake;

pub use key::Key;
pub use poll::{Budget, MAX_VAIN_REPOLLS, Step};
pub use set::keyed_set::{Futures, Keyed, KeyedSet, Kind, PollKind, Streams};
pub use storage::Storage;
pub use storage::growable::GrowableArena;
pub use storage::join_arena::{Filled, JoinArena};
pub use storage::store::{Arena, IntoValues, Iter, IterPinMut};
pub use wake::atomic_waker::AtomicWaker;
pub use wake::noted::with_noted_wakes;

/// The iterators of a [`GrowableArena`].
pub mod growable_iter {
    pub use crate::storage::growable::{IntoValues, Iter, IterPinMut};
}

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests;
