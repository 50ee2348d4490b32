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
//! # Order
//!
//! A set is a [`Stream`](futures_core::Stream) of the futures' outputs. Each call of
//! `poll_next` polls futures until one is ready and returns its output at once, so outputs come
//! in the order the set sees the futures finish, not the order they were pushed. What is
//! promised:
//!
//! - Each future gives its output once. It is dropped in place as soon as it finishes, before
//!   its output is returned, and its slot is free for the next push.
//! - Futures are polled in the order they were queued: a future is queued when it is pushed
//!   and when it is woken, and one already queued keeps its place (woken many times before its
//!   poll, it is polled once). Futures woken since the last call are queued when the next call
//!   begins, behind the futures queued before it and in an order the set chooses among
//!   themselves; futures pushed keep the order of their pushes. So a woken future is never
//!   passed over by futures pushed or woken after the call that follows its wake began, and a
//!   finished future waits behind at most as many outputs as the set holds futures, in a
//!   bounded and a growable set alike. One exception keeps pushes cheap: a future pushed into
//!   the slot of one removed before its poll takes that future's place in the queue.
//! - `poll_next` returns `Ready(None)` when the set holds no future; the set is then
//!   [terminated](futures_core::FusedStream::is_terminated) until a future is pushed or
//!   [`clear`](UnorderedSet::clear) is called. Polling it again is allowed, and gives
//!   `Ready(None)` again while it is empty.
//!
//! # Keys
//!
//! [`insert`](UnorderedSet::insert) gives a [`Key`] for the future:
//! [`remove`](UnorderedSet::remove) drops it in place at once (its output never comes),
//! [`get`](UnorderedSet::get) and [`get_pin_mut`](UnorderedSet::get_pin_mut) reach it, and
//! [`poll_next_keyed`](UnorderedSet::poll_next_keyed) says which future gave each output. A key
//! carries a generation: once its future is gone (finished, removed or cleared) the key is
//! refused by every keyed method, also after its slot was reused, and also after a growable
//! set released the key's group and grew back.
//!
//! # Fairness
//!
//! One call of `poll_next` (or `poll_next_keyed`) is a *round* of the arena, with one
//! [`Budget`](pinfold_arena::Budget) for the whole set, whatever group each future is in: it
//! polls each future at most once, only the woken ones and those pushed and not polled yet,
//! and yields after as many polls as the set held futures. The whole rule, with when a call
//! yields early and why a future that wakes itself starves nothing, is the one every pinfold
//! primitive keeps: [*Fairness*](pinfold_arena::contract#fairness).
//!
//! # Wakes
//!
//! Each future has a waker of its own; waking it queues that future alone, a burst of wakes
//! wakes the task once, and no wake is lost. Wakers outlive their future and the set safely.
//! The rules: [*Wakes*](pinfold_arena::contract#wakes).
//!
//! # Panics
//!
//! A panic in a future's `poll` or `Drop`, or in the task's waker, reaches the caller and
//! leaves the set consistent and usable, as [*Panics*](pinfold_arena::contract#panics) says:
//! a future that panics in `poll` is dropped in place and its key refused, the others are
//! untouched; a future whose `Drop` panics as it finishes is gone, with its output, and
//! [`clear`](UnorderedSet::clear) and the set's drop drop every other future before the
//! panic propagates.
//!
//! # Memory
//!
//! [`FuturesUnorderedBounded::new`] allocates its storage (two allocations) and nothing after
//! that. A [`FuturesUnordered`] allocates nothing until the first push, then grows a group at
//! a time (32, 64, 128, 256 slots, then a quarter more at a time: 320, 400, 500, ...), reuses the smallest groups' free slots first, and gives
//! empty groups back after a burst, unless it cycles. Both as
//! [*Memory*](pinfold_arena::contract#memory) states, with the bounds.
//!
//! # Features
//!
//! `std` (default) and `tokio-coop` (each output spends a unit of tokio's cooperative
//! budget), as [*Features*](pinfold_arena::contract#features) states.
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
pub use pinfold_arena::Key;
pub use set::UnorderedSet;
