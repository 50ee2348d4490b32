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
//! # Fairness
//!
//! One call of `poll_next` is a *round* of the arena (see
//! [`pinfold_arena::implementation`]): it polls each stream at most once, so it takes at most
//! one item from each. A stream that gives an item is polled again in the next round, without
//! a wake; a stream that returns `Pending` waits for its waker. A round that starts with
//! streams queued after an item collects the wakes first and polls the woken streams before
//! them, so a stream that is always ready does not delay a woken stream past the next call. A
//! round also yields (wakes its task and returns `Pending`) once it has polled as many streams
//! as the merge held when it started, once two streams woke themselves during their own
//! poll, or once 32 streams polled before were woken and `Pending` again
//! ([`pinfold_arena::MAX_VAIN_REPOLLS`]).
//!
//! # Ends and panics
//!
//! A stream that returns `Ready(None)` is dropped in place at once and its slot is free for the
//! next stream; its key is refused from then on. The merged stream returns `Ready(None)` when
//! it holds no stream, and is then [terminated](futures_core::FusedStream::is_terminated) until a stream is
//! added (or [`clear`](StreamMerge::clear) is called). A stream whose `poll_next` panics is dropped
//! in place and the panic propagates out of `poll_next`; the merge stays usable, with the other
//! streams.
//!
//! # Wakes
//!
//! As the arena's: `Send + Sync` wakers, usable anywhere and at any time; a waker that outlives
//! its stream does not poll the stream that takes its slot next (unless more wakers of
//! departed streams are alive at once than the merge has slots: then one may cause a spurious
//! poll).
//!
//! # Features
//!
//! - `std` (default): a panic in a value's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the merge is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds (see
//!   [`pinfold_arena::unwind`]).
//! - `tokio-coop`: each item spends a unit of tokio's cooperative budget, and the merge yields once
//!   the budget is spent (see [`pinfold_arena::coop`]).
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

/// Merges the streams of `streams` into one growable [`Merge`].
pub fn merge<I>(streams: I) -> Merge<I::Item>
where
    I: IntoIterator,
    I::Item: Stream,
{
    streams.into_iter().collect()
}
