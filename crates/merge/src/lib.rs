//! Many streams merged into one: [`MergeBounded`] (a fixed capacity, no allocation after it is
//! made), [`Merge`] (growable) and [`merge`]. Both merges are one [`StreamMerge`], written once
//! over either of pinfold's arenas ([`pinfold_arena::Storage`]).
//!
//! Each stream sits pinned in a slot of pinfold's waker-slot arena, with a waker of its own.
//! Waking it, from any thread, queues that stream alone; the merged stream polls only the
//! streams that were woken or that just gave an item, never the others.
//! `futures_util::stream::select_all` allocates for every item (each is a future pushed into
//! a `FuturesUnordered`); tokio-stream's `StreamMap` polls every stream on every call;
//! futures-buffered's `MergeUnbounded` needs `Unpin` streams. None of that here: no `Unpin`
//! bound, nothing allocated per item, and a [`Key`] per stream to remove it by.
//!
//! # Example
//!
//! ```
//! use futures_util::{StreamExt, stream};
//! use pinfold_merge::{MergeBounded, merge};
//!
//! # futures_executor::block_on(async {
//! // Growable, from any iterator of streams.
//! let merged = merge([stream::iter(vec![1, 2]), stream::iter(vec![10]), stream::iter(vec![])]);
//! let mut items: Vec<i32> = merged.collect().await;
//! items.sort();
//! assert_eq!(items, [1, 2, 10]);
//!
//! // Bounded, with keys.
//! let mut merged = MergeBounded::new(2);
//! let evens = merged.insert(stream::iter(vec![0, 2, 4]));
//! let odds = merged.insert(stream::iter(vec![1, 3, 5]));
//! assert!(merged.try_push(stream::iter(vec![7])).is_err()); // full: the stream comes back
//! assert!(merged.remove(odds));
//! assert_eq!(merged.next().await, Some(0));
//! assert!(merged.contains_key(evens));
//! # });
//! ```
//!
//! # Order
//!
//! A merge is a [`Stream`] of its streams' items, each given as soon as a call of `poll_next`
//! finds it. What is promised:
//!
//! - The items of one stream come in that stream's order, none lost, none twice.
//! - One call takes at most one item from each stream (see *Fairness*), so streams that are
//!   always ready take turns, one item each.
//! - A stream that gave an item is polled again by the next call, without a wake; a stream that
//!   returned `Pending` waits for its waker. A call that starts with streams queued after an
//!   item collects the wakes first and polls the woken streams before them: a stream woken
//!   before a call starts (by a send on its channel, say) is polled by that call, however many
//!   always-ready streams are merged.
//! - A stream that returns `Ready(None)` is dropped in place at once, within the call (which
//!   goes on to the other streams), and its slot is free for the next stream; its key is
//!   refused from then on, also after its slot was reused.
//! - `poll_next` returns `Ready(None)` when the merge holds no stream; it is then
//!   [terminated](futures_core::FusedStream::is_terminated) until a stream is added or
//!   [`clear`](StreamMerge::clear) is called, and gives `Ready(None)` again while it is empty.
//!
//! [`insert`](StreamMerge::insert) gives a [`Key`] for the stream:
//! [`remove`](StreamMerge::remove) drops the stream in place at once (no item of it comes any
//! more), and [`poll_next_keyed`](StreamMerge::poll_next_keyed) says which stream gave each
//! item.
//!
//! # Fairness
//!
//! One call of `poll_next` (or `poll_next_keyed`) is a *round* of the arena, with one
//! [`Budget`](pinfold_arena::Budget):
//!
//! - It polls each stream at most once, so it takes at most one item from each.
//! - It polls only the streams that were woken, that gave an item in an earlier call, or that
//!   were added and not polled yet; no other (see *Wakes*).
//! - It yields (wakes its task and returns `Pending`) while streams are still queued once it
//!   has polled as many streams as the merge held when it started, or once its strikes reach
//!   [`MAX_VAIN_REPOLLS`](pinfold_arena::MAX_VAIN_REPOLLS) (32): a stream polled in an earlier
//!   call, woken, and `Pending` again without waking itself is one strike (under tokio, once
//!   the task's coop budget is spent, tokio's own streams do that until the next poll of the
//!   task). A stream that wakes itself during its own poll, or is polled again because it gave
//!   an item, is never a strike: it is polled again in the next call, which the call wakes its
//!   task for. A stream that is always ready, or always wakes itself, starves neither the
//!   executor nor the other streams.
//! - Otherwise it returns `Pending` only when no woken stream is left that it has not polled:
//!   wakes that arrive during the call are collected in it, and the streams they woke are
//!   polled in it. A stream polled in the call and woken again (or that gave an item) waits for
//!   the next call, and the call wakes its task for it before it returns.
//!
//! The rule bounds one call. A task that loops over the items of streams that are always ready
//! is not made to yield by the merge, unless the `tokio-coop` feature is on (see *Features*).
//!
//! # Wakes
//!
//! Each stream has a waker of its own; waking it queues that stream alone. A call that returns
//! `Pending` has registered its task's waker (the latest call's replaces the one before), and a
//! wake that comes after the call's last collection of wakes wakes that task: no wake is lost.
//! Wakes coalesce: a stream woken many times before it is polled is polled once, and a burst of
//! wakes, into one stream or many, wakes the task once. A stream that wakes itself, or another
//! stream of the merge, while the merge polls wakes no task: the call collects that wake
//! itself.
//!
//! Wakers are `Send + Sync` and may be cloned, woken and dropped on any thread at any time,
//! also after their stream ended or was removed, and after the merge is dropped: then waking
//! does nothing. A waker outliving its stream does not cause a poll of the stream that takes
//! its slot next (unless more wakers of departed streams are alive at once than the merge, or
//! one of its groups, has slots: then one may cause a spurious poll). Dropping the merge
//! forgets the registered task.
//!
//! # Panics
//!
//! A panic in user code (a stream's `poll_next` or `Drop`, the task's waker) reaches the caller
//! of the method that ran it, and leaves the merge consistent and usable: `len`, `iter` and
//! the keyed methods agree, every stream it no longer holds was dropped exactly once, and
//! nothing leaks.
//!
//! - A stream whose `poll_next` panics is dropped in place and its key refused; the panic
//!   propagates out of `poll_next`. The other streams are untouched and give all their items.
//! - A stream whose `Drop` panics (when it ends, in `remove`, `clear`, or when the merge is
//!   dropped) is gone all the same, then the panic propagates; `clear` and the merge's drop
//!   drop the other streams all the same before the first panic propagates (without `std`, a
//!   second panic while the first unwinds aborts, see *Features*).
//! - A panic in the task waker's `clone` (when a call registers it) or in the `drop` of the
//!   waker it replaces propagates out of `poll_next`. A panic in its `wake` propagates to
//!   whoever woke the stream's waker (another thread, or the code that called `wake_by_ref`),
//!   or out of `poll_next` if the merge woke its own task (when it yields). No stream is
//!   blamed: none is dropped for it, and later wakes reach the task.
//!
//! # Memory
//!
//! Keys, wakers, wakes and items allocate nothing: a merge allocates only its storage.
//!
//! - [`MergeBounded::new`] allocates its storage (two allocations: the slots, and the wake
//!   table the wakers share) and nothing after that: adding, polling, waking, ending and
//!   removing streams allocate nothing. Its `from_iter` collects the streams into a `Vec`
//!   first, to know their number.
//! - A [`Merge`] is a [`GrowableArena`](pinfold_arena::GrowableArena), and grows and gives
//!   memory back as its page says (and as `FuturesUnordered` of pinfold-unordered does):
//!   [`Merge::new`] allocates nothing; slots come a group at a time (two allocations each),
//!   each group as large as all the groups below it, so the capacity doubles: 32, 64, 128, ...
//!   slots; a stream goes into the smallest group with a free slot; and once the largest group
//!   is empty and the streams left fill at most half of the others, it is given back (unless
//!   the merge retains that capacity because it cycles between large and small). So a merge
//!   that stays within its capacity allocates nothing, and one drained after a burst gives its
//!   memory back. [`merge`] builds a [`Merge`] by pushing each stream.
//!
//! # Features
//!
//! - `std` (default): a panic in a stream's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the merge is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds; a second panic during that
//!   unwinding aborts the process, as it does for a `Vec` (see [`pinfold_arena::unwind`]).
//! - `tokio-coop`: each item spends a unit of the task's tokio cooperative budget; once it is
//!   spent, `poll_next` returns `Pending` (tokio has woken the task), so a task that takes
//!   items in a loop lets the other tasks run. Without it, nothing of tokio is compiled in (see
//!   [`pinfold_arena::coop`]).
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

use futures_core::Stream;

pub use pinfold_arena::Key;

mod bounded;
mod growable;
mod stream_merge;

pub use bounded::MergeBounded;
pub use growable::Merge;
pub use stream_merge::StreamMerge;

/// Merges the streams of `streams` into one growable [`Merge`], pushing each in turn.
///
/// # Example
///
/// ```
/// use futures_util::{StreamExt, stream};
/// use pinfold_merge::merge;
///
/// # futures_executor::block_on(async {
/// let letters = stream::iter(vec!['a', 'b', 'c']);
/// let digits = stream::iter(vec!['1', '2']);
/// let items: Vec<char> = merge([letters, digits]).collect().await;
///
/// // Each stream's items in its order.
/// let letters: String = items.iter().filter(|c| c.is_ascii_alphabetic()).collect();
/// let digits: String = items.iter().filter(|c| c.is_ascii_digit()).collect();
/// assert_eq!((letters.as_str(), digits.as_str()), ("abc", "12"));
///
/// // Both are always ready: they take turns, one item each, until one ends.
/// let turns: Vec<bool> = items.iter().map(|c| c.is_ascii_digit()).collect();
/// assert!(turns[..4].windows(2).all(|pair| pair[0] != pair[1]));
/// # });
/// ```
pub fn merge<I>(streams: I) -> Merge<I::Item>
where
    I: IntoIterator,
    I::Item: Stream,
{
    streams.into_iter().collect()
}
