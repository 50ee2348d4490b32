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
//! - A stream that gave an item is queued again at once, without a wake; a stream that
//!   returned `Pending` waits for its waker. Streams are queued in one order, as they are
//!   added, woken or give an item: a stream woken (by a send on its channel, say) is polled
//!   before any always-ready stream has a second turn after its wake, so within as many calls
//!   as the merge holds streams.
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
//! [`Budget`](pinfold_arena::Budget): it polls each stream at most once, so it takes at most
//! one item from each, and only the streams that were woken, that gave an item in an earlier
//! call, or that were added and not polled yet. A stream polled again because it gave an item
//! is never a strike, so streams that are always ready starve neither the executor nor the
//! other streams. The whole rule: [*Fairness*](pinfold_arena::contract#fairness).
//!
//! # Wakes
//!
//! Each stream has a waker of its own; waking it queues that stream alone, a burst of wakes
//! wakes the task once, and no wake is lost. Wakers outlive their stream and the merge safely.
//! The rules: [*Wakes*](pinfold_arena::contract#wakes).
//!
//! # Panics
//!
//! A panic in a stream's `poll_next` or `Drop`, or in the task's waker, reaches the caller and
//! leaves the merge consistent and usable, as [*Panics*](pinfold_arena::contract#panics) says:
//! a stream whose `poll_next` panics is dropped in place and its key refused, and the other
//! streams give all their items; a stream whose `Drop` panics (as it ends, in `remove`, in
//! `clear`, or with the merge) is gone all the same.
//!
//! # Memory
//!
//! Keys, wakers, wakes and items allocate nothing. [`MergeBounded::new`] allocates its storage
//! (two allocations) and nothing after that: adding, polling, waking, ending and removing
//! streams allocate nothing. A [`Merge`] allocates nothing until the first stream, then grows
//! a group at a time and gives empty groups back after a burst, as `FuturesUnordered` of
//! pinfold-unordered does; [`merge`] builds one by pushing each stream. Both as
//! [*Memory*](pinfold_arena::contract#memory) states, with the bounds.
//!
//! # Features
//!
//! `std` (default) and `tokio-coop` (each item spends a unit of tokio's cooperative budget),
//! as [*Features*](pinfold_arena::contract#features) states.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

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
