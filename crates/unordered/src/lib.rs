//! [`FuturesUnorderedBounded`] and [`FuturesUnordered`]: sets of futures that yield their
//! outputs in the order they finish. Both are one [`UnorderedSet`], written once over either
//! of pinfold's arenas ([`pinfold_arena::Storage`]): [`FuturesUnorderedBounded`] on a
//! fixed-capacity [`Arena`](pinfold_arena::Arena), allocated when the set is made (see its
//! page), and [`FuturesUnordered`] on groups of waker-slot arenas that are added as it grows
//! and released as it shrinks. A future never moves once pushed, and growing never reallocates
//! the futures already in the set.
//!
//! `futures_util::stream::FuturesUnordered` allocates an `Arc` for every future pushed into it.
//! The growable set allocates a *group* of slots at a time, each group twice the size of the
//! last, so a set that grows to `n` futures has made about `2 log2(n / 32)` allocations, and a
//! set that stays within its capacity makes none: pushing, polling, waking and finishing a
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
//! # Groups
//!
//! The growable set is a [`GrowableArena`](pinfold_arena::GrowableArena): a stack of arenas, smallest
//! first (at most 63). The
//! first push allocates the first group, of 32 slots (or the capacity given to
//! [`with_capacity`](FuturesUnordered::with_capacity)); each group after it holds as many
//! slots as all the groups below it together, and at least 32, so the capacity doubles: 32, 64,
//! 128, 256, ... A group costs two allocations (its slots and its wake table); the first push
//! also allocates the hub the groups share and the table of groups.
//!
//! A push goes into a free slot of the *smallest* group that has one. A group is added only
//! when every group is full. So free slots in older groups are reused first, and the futures
//! that stay long drift down into the small groups while the large ones empty out.
//!
//! # Memory
//!
//! A group holding a future is never released (its futures cannot move), and the first group
//! is kept as long as the set. Otherwise, right after each output (and after
//! [`clear`](FuturesUnordered::clear)), while the largest group holds no future, it is released
//! if
//!
//! - the futures left fill at most half of the groups below it (`len <= below / 2`, so the next
//!   pushes need no new group), and
//! - the capacity left is at least the *retained* capacity (below).
//!
//! Releasing from the top keeps the sizes geometric. When the largest group is empty after an
//! output and nothing is retained, either only the first group is left or `len > below / 2`;
//! a group added by regular growth holds at most as much as the groups below it (or 32), so
//! then the capacity is at most `4 * len + 32` (or the first group's capacity). A set that grew
//! to 100,000 futures holds 131,072 slots; once its futures but 100 have finished, and those
//! 100 sit in the small groups (the oldest do, and the rest drift there as new futures replace
//! finished ones), it holds at most 432 slots, 256 in fact.
//!
//! *Retained capacity* stops a set that cycles, such as one that is filled with a batch and
//! drained, batch after batch, from releasing and reallocating its groups every cycle. It is
//! zero until the set grows back, before it has forgotten (below), into capacity it released:
//! then each group it adds holds up to the capacity released (at most three times the capacity
//! it has, so the bound above is `8 * len + 32` while such a group is the largest), and the
//! capacity reached is retained: the set does not release below it. The set forgets what it
//! released and retained once it has given as many outputs as the larger of the two in a row
//! while holding at most a quarter of it; then it releases and grows as a new set does. So a
//! set that is filled with 256 futures and drained, again and again, adds groups in its first
//! two cycles and never again (14 allocations in all, the first push's included), and a set
//! that settles down gives its memory back after doing that much work.
//!
//! # Fairness
//!
//! One `poll_next` polls each future at most once, whatever group it is in, with one budget
//! for the whole set: it yields (wakes its task and returns `Pending`) once it has polled as
//! many futures as the set held when the call started, or once two futures woke themselves
//! during their own poll, so a future that always wakes itself cannot starve the executor or
//! the other futures, or once 32 futures polled before were woken and `Pending` again
//! ([`pinfold_arena::MAX_VAIN_REPOLLS`]: under tokio, once the task's coop budget is spent,
//! tokio's futures do that until the next task poll). Wakes that arrive during the call are collected in it, and the woken
//! futures it has not polled yet are polled in it; a future polled in the call and woken again
//! waits for the next call (the call wakes its task for it). So a call returns `Pending` only
//! when no woken future is left that it may still poll.
//!
//! # Keys
//!
//! [`insert`](UnorderedSet::insert) gives a [`Key`] for the future:
//! [`remove`](UnorderedSet::remove) drops it in place at once (its output never comes), and
//! [`poll_next_keyed`](UnorderedSet::poll_next_keyed) says which future gave each output. A
//! key of a future that is gone is refused, also after its slot was reused.
//!
//! Groups take turns giving outputs: a group with finished futures gives outputs in a row until
//! it has none left or has given as many as it has slots, then the next group with finished
//! futures takes its turn. So a finished future waits behind at most as many outputs as the set
//! has slots (as in one bounded set of that capacity), however fast the other groups refill.
//! Within a group, futures come out in the order they were queued (pushed, or woken); so a set
//! filled group by group, whose futures are all ready at once, gives its outputs in push order.
//!
//! # Wakes
//!
//! The groups share one hub: the task registers once for the whole set,
//! a burst of wakes into any groups wakes it once, and a poll collects only the groups that
//! were woken (the hub keeps one bit per group). Wakers are `Send + Sync` and may be woken from
//! any thread, also after their future finished, was dropped, or the set is gone: then waking
//! does nothing. A waker outliving its future does not cause a poll of the future that takes
//! its slot next (unless more wakers of departed futures are alive at once than a group has
//! slots: then one may cause a spurious poll). Dropping the set forgets the registered task.
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

mod bounded;
mod growable;
mod set;

pub use bounded::{FuturesUnorderedBounded, IntoIterBounded};
pub use growable::{FuturesUnordered, IntoIter};
pub use pinfold_arena::Key;
pub use set::UnorderedSet;
