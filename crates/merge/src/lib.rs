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
//! # Keys
//!
//! [`insert`](StreamMerge::insert) gives a [`Key`] for the stream:
//! [`remove`](StreamMerge::remove) drops the stream in place at once (no item of it comes any
//! more), and [`poll_next_keyed`](StreamMerge::poll_next_keyed) says which stream gave each
//! item. A key is refused once its stream is gone (ended, removed or cleared), also after its
//! slot was reused, and a key of another merge or set (live or dropped) is refused too: each
//! one's generations start far from every other's (how far: [`Key`]).
//!
//! # The shared rules
//!
//! A merge keeps the rules of every pinfold primitive on the arena, stated once in
//! [`pinfold_arena::contract`]: the [order](pinfold_arena::contract#order) of its items,
//! [fairness](pinfold_arena::contract#fairness) within one `poll_next` (at most one item from
//! each stream), which streams are polled and when its task is woken
//! ([wakes](pinfold_arena::contract#wakes)), what a panic leaves
//! ([panics](pinfold_arena::contract#panics)), what is allocated when
//! ([memory](pinfold_arena::contract#memory)), and its `std` and `tokio-coop`
//! [features](pinfold_arena::contract#features). What differs here:
//!
//! | Rule | What differs here |
//! |------|-------------------|
//! | Memory | [`MergeBounded`] is the bounded merge, [`Merge`] the growable one; [`merge`] makes a `Merge` by pushing each stream. |
//!
//! Nothing else: a merge is the primitive the contract describes, over streams.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

#[cfg(any(feature = "std", test))]
extern crate std;

use futures_core::Stream;

pub use pinfold_arena::{Key, Keyed};

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
/// use futures::{StreamExt, stream};
/// use pinfold::merge;
///
/// # futures::executor::block_on(async {
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
