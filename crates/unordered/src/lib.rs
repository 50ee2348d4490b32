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
//!   and when it is woken. So futures that are ready when pushed give their outputs in push
//!   order (in a growable set, within each group; groups take turns, below). No order is
//!   promised between futures woken between two calls.
//! - In a growable set, groups take turns: a group with queued futures gives outputs in a row
//!   until it has none left or has given as many as it has slots, then the next group with
//!   queued futures takes its turn. So a finished future waits behind at most as many outputs
//!   as the set has slots (as in one bounded set of that capacity), however fast the other
//!   groups refill.
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
//! [`Budget`](pinfold_arena::Budget) for the whole set, whatever group each future is in:
//!
//! - It polls each future at most once.
//! - It polls only futures that were woken, and futures pushed and not polled yet; no other
//!   (see *Wakes*).
//! - It yields (wakes its task and returns `Pending`) while futures are still queued once it
//!   has polled as many futures as the set held when it started, or once its strikes reach
//!   [`MAX_VAIN_REPOLLS`](pinfold_arena::MAX_VAIN_REPOLLS) (32): a future polled in an earlier
//!   call, woken, and `Pending` again without waking itself is one strike (under tokio, once
//!   the task's coop budget is spent, tokio's own futures do that until the next poll of the
//!   task). A future that wakes itself during its own poll is never a strike: it is polled
//!   again in the next call, which the call wakes its task for. A future that always wakes
//!   itself starves neither the executor nor the other futures.
//! - Otherwise it returns `Pending` only when no woken future is left that it has not polled:
//!   wakes that arrive during the call are collected in it, and the futures they woke are
//!   polled in it. A future polled in the call and woken again waits for the next call, and the
//!   call wakes its task for it before it returns.
//!
//! The rule bounds one call. A task that loops over the outputs of futures that are always
//! ready is not made to yield by the set, unless the `tokio-coop` feature is on (see
//! *Features*).
//!
//! # Wakes
//!
//! Each future has a waker of its own; waking it queues that future alone. A call that returns
//! `Pending` has registered its task's waker (the latest call's replaces the one before), and
//! a wake that comes after the call's last collection of wakes wakes that task: no wake is
//! lost. Wakes coalesce: a future woken many times before it is polled is polled once, and a
//! burst of wakes, into one future or many (in a growable set, in any of its groups), wakes the
//! task once. A future that wakes itself, or another future of the set, while the set polls
//! wakes no task: the call collects that wake itself.
//!
//! Wakers are `Send + Sync` and may be cloned, woken and dropped on any thread at any time,
//! also after their future finished or was removed, and after the set is dropped: then waking
//! does nothing. A waker outliving its future does not cause a poll of the future that takes
//! its slot next (unless more wakers of departed futures are alive at once than a group has
//! slots: then one may cause a spurious poll). Dropping the set forgets the registered task.
//!
//! # Panics
//!
//! A panic in user code (a future's `poll` or `Drop`, the task's waker) reaches the caller of
//! the method that ran it, and leaves the set consistent and usable: `len`, `iter` and the
//! keyed methods agree, every future it no longer holds was dropped exactly once, and nothing
//! leaks.
//!
//! - A future that panics in `poll` is dropped in place, its slot freed and its key refused;
//!   the panic propagates out of `poll_next`. The other futures are untouched: those not polled
//!   yet in that call are polled by the next one.
//! - A future whose `Drop` panics when it finishes is gone; its output is lost, and the panic
//!   propagates out of `poll_next`. In `remove` the future is gone as well, then the panic
//!   propagates. In [`clear`](UnorderedSet::clear) and when the set is dropped, the other
//!   futures are dropped all the same, then the first panic propagates (without `std`, a
//!   second panic while the first unwinds aborts, see *Features*).
//! - A panic in the task waker's `clone` (when a call registers it) or in the `drop` of the
//!   waker it replaces propagates out of `poll_next`. A panic in its `wake` propagates to
//!   whoever woke the future's waker (another thread, or the code that called `wake_by_ref`),
//!   or out of `poll_next` if the set woke its own task (when it yields). No future is blamed:
//!   none is dropped for it, the woken future's output still comes, and later wakes reach the
//!   task.
//!
//! # Memory
//!
//! Keys, wakers, wakes and outputs allocate nothing: a set allocates only its storage, as
//! below.
//!
//! [`FuturesUnorderedBounded::new`] allocates its storage (two allocations: the slots, and the
//! wake table the wakers share) and nothing after that: pushing, polling, waking, removing and
//! clearing allocate nothing. The slots are freed with the set, the wake table with the set or
//! the last waker of its futures, whichever goes last. Its `from_iter` collects the futures
//! into a `Vec` first, to know their number.
//!
//! A [`FuturesUnordered`] is a [`GrowableArena`](pinfold_arena::GrowableArena): a stack of
//! arenas (its *groups*), smallest first, at most 63. [`FuturesUnordered::new`] allocates
//! nothing. The first push allocates the first group, of 32 slots (or the capacity given to
//! [`with_capacity`](FuturesUnordered::with_capacity), allocated then); each group after it
//! holds as many slots as all the groups below it together, and at least 32, so the capacity
//! doubles: 32, 64, 128, 256, ... A group costs two allocations (its slots and its wake
//! table); the first group also allocates the hub the groups share and the table of groups.
//! So a set that grows to `n` futures has made about `2 log2(n / 32)` allocations.
//!
//! A push goes into a free slot of the *smallest* group that has one. A group is added only
//! when every group is full. So free slots in older groups are reused first, and the futures
//! that stay long drift down into the small groups while the large ones empty out.
//!
//! A group holding a future is never released (its futures cannot move), and the first group
//! is kept as long as the set. Otherwise, right after each output (and after
//! [`clear`](UnorderedSet::clear)), while the largest group holds no future, it is released
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
//! # Features
//!
//! - `std` (default): a panic in a future's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the set is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds; a second panic during that
//!   unwinding aborts the process, as it does for a `Vec` (see [`pinfold_arena::unwind`]).
//! - `tokio-coop`: each output spends a unit of the task's tokio cooperative budget; once it is
//!   spent, `poll_next` returns `Pending` (tokio has woken the task), so a task that takes
//!   outputs in a loop lets the other tasks run, as with tokio's `JoinSet`. Without it, nothing
//!   of tokio is compiled in (see [`pinfold_arena::coop`]).
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
