//! [`FuturesUnorderedBounded`] and [`FuturesUnordered`]: sets of futures that yield their
//! outputs in the order they finish. Both are one [`UnorderedSet`], written once over either
//! of pinfold's arenas ([`pinfold_arena::Storage`]): [`FuturesUnorderedBounded`] on a
//! fixed-capacity [`Arena`](pinfold_arena::Arena), allocated when the set is made, and
//! [`FuturesUnordered`] on groups of waker-slot arenas that are added as it grows and released
//! as it shrinks. A future never moves once pushed, and growing never reallocates the futures
//! already in the set.
//!
//! `futures_util::stream::FuturesUnordered` allocates an `Arc` for every future pushed into it.
//! These sets allocate slots a group at a time (the bounded set, one group for good), and a set
//! that stays within its capacity allocates nothing: pushing, polling, waking and finishing a
//! future allocate nothing. Only the futures that were woken are polled, each with its own
//! waker.
//!
//! # Example
//!
//! ```
//! use futures_util::StreamExt;
//! use pinfold_unordered::FuturesUnordered;
//!
//! async fn square(n: u64) -> u64 {
//!     n * n
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let mut set = FuturesUnordered::new(); // allocates nothing
//! assert_eq!(set.capacity(), 0);
//! for n in 0..100 {
//!     set.push(square(n));
//! }
//! assert_eq!(set.capacity(), 128); // groups of 32, 32 and 64 slots
//!
//! let mut sum = 0;
//! while let Some(square) = set.next().await {
//!     sum += square;
//! }
//! assert_eq!(sum, (0..100).map(|n| n * n).sum::<u64>());
//! assert_eq!(set.capacity(), 32); // drained: only the first group is left
//! # });
//! ```
//!
//! # Keys
//!
//! [`insert`](UnorderedSet::insert) gives a [`Key`] for the future:
//! [`remove`](UnorderedSet::remove) drops it in place at once (its output never comes),
//! [`get`](UnorderedSet::get) and [`get_pin_mut`](UnorderedSet::get_pin_mut) reach it, and
//! [`poll_next_keyed`](UnorderedSet::poll_next_keyed) says which future gave each output. A key
//! carries a generation: once its future is gone (finished, removed or cleared) the key is
//! refused by every keyed method, also after its slot was reused, and also after a growable
//! set released the key's group and grew back. A key of another set (bounded or growable, live
//! or dropped) is refused too: each set's generations start far from every other's (how far:
//! [`Key`]).
//!
//! # The shared rules
//!
//! A set keeps the rules of every pinfold primitive on the arena, stated once in
//! [`pinfold_arena::contract`]: the [order](pinfold_arena::contract#order) of its outputs,
//! [fairness](pinfold_arena::contract#fairness) within one `poll_next`, which futures are
//! polled and when its task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
//! leaves ([panics](pinfold_arena::contract#panics)), what is allocated when
//! ([memory](pinfold_arena::contract#memory)), and its `std` and `tokio-coop`
//! [features](pinfold_arena::contract#features). What differs here:
//!
//! | Rule | What differs here |
//! |------|-------------------|
//! | Memory | [`FuturesUnorderedBounded`] is the bounded set, [`FuturesUnordered`] the growable one. |
//!
//! Nothing else: a set is the primitive the contract describes, over futures.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

#[cfg(any(feature = "std", test))]
extern crate std;

mod bounded;
mod growable;
mod set;

pub use bounded::{FuturesUnorderedBounded, IntoIterBounded};
pub use growable::{FuturesUnordered, IntoIter};
pub use pinfold_arena::{Key, Keyed};
pub use set::UnorderedSet;
