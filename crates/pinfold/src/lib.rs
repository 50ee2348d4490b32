//! pinfold: async concurrency primitives (sets of futures, joins, stream buffers, merges and
//! keyed maps on one waker-slot arena) and a fixed-memory buffer pool.
//!
//! This crate re-exports the primitives at its root and the arena as [`arena`]. Depend on it
//! for everything, or on the one crate you need:
//!
//! | crate | what |
//! |---|---|
//! | [`pinfold-arena`](arena) | the waker-slot arena the sets, joins, buffers, merges and maps stand on |
//! | `pinfold-unordered` | [`FuturesUnorderedBounded`]: fixed capacity, no allocation per push; [`FuturesUnordered`]: growable, never moves a future, gives memory back |
//! | `pinfold-join` | [`join_all`], [`try_join_all`]: outputs in input order; after the first polls, only woken futures polled |
//! | `pinfold-merge` | [`MergeBounded`], [`Merge`], [`merge`]: many streams merged into one, only woken streams polled |
//! | `pinfold-map` | [`FutureMap`], [`StreamMap`]: futures and streams under the user's own keys, no runtime, no `Unpin` bound |
//! | `pinfold-buffer` | [`BufferExt`] (`ordered_buffer`, `unordered_buffer`; `future_queue`, `future_queue_grouped`: futures with weights, and groups, within max weights, the `future-queue` crate's contract, and `ordered_future_queue`, `ordered_future_queue_grouped` in the source's order), [`TryBufferExt`], [`FobStreamExt`]; [`ProgressStreamExt`] (`for_each_driven`, `drive_while`): the buffered futures keep running while the consumer works; [`FuturesOrderedBounded`], [`FuturesOrdered`]: outputs in push order, a slow head does not stop the others; [`Limit`]: a buffer's concurrency changed while it runs, [`Adaptive`] (std): set from the latency of its futures; [`ConcurrentForEachExt`] (`concurrent_for_each(limit, f)`, futures-util's, on the arena) |
//! | [`pinfold-pool`](pool) | [`pool::BufferPool`]: fixed-memory async buffer pool (FIFO waiters), [`pool::Buf`] writes like a slice, [`pool::Packet`] shares it read-only |
//! | `pinfold` (this crate) | [`IterExt`]: `join_all`, `try_join_all`, `ordered_buffer`, `unordered_buffer` on iterators of futures |
//!
//! # Example
//!
//! ```
//! use futures_util::StreamExt;
//! use pinfold::FuturesUnorderedBounded;
//!
//! async fn fetch(id: u32) -> u32 {
//!     id * 2
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let mut set = FuturesUnorderedBounded::new(16);
//! for id in 0..16 {
//!     set.push(fetch(id));
//! }
//! let total: u32 = set.fold(0, |sum, n| async move { sum + n }).await;
//! assert_eq!(total, 240);
//! # });
//! ```
//!
//! # Features
//!
//! - `std` (default): what needs the standard library in each crate: `catch_unwind` to stay
//!   consistent across a panicking future or stream, std's `RandomState` (SipHash) as the maps'
//!   hasher, `io::Write` for [`pool::Buf`] and std's `Mutex` as the pool's waiter lock. Without
//!   it every crate is `#![no_std]` + `alloc`: panics are survived with drop guards
//!   ([`arena::unwind`]; a second panic while one unwinds aborts, as in a `Vec`), the maps hash
//!   with foldhash, the pool locks its waiters with a spin lock. CI builds every crate for
//!   `x86_64-unknown-none`.
//! - `tokio-coop`: each output of a set, merge, map or buffer (and each finished join) spends
//!   a unit of tokio's cooperative budget, and the primitive yields once it is spent, as
//!   tokio's `JoinSet` does ([`arena::coop`]). Without it nothing of tokio is compiled in, and
//!   a task that drains a set whose futures are always ready keeps its thread until it stops
//!   (each poll call is bounded by the fairness rule, a task's loop of calls is not).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![no_std]

#[cfg(any(feature = "std", test))]
extern crate std;

mod iter_ext;

pub use iter_ext::IterExt;
/// The waker-slot arena (the `pinfold-arena` crate).
pub use pinfold_arena as arena;
pub use pinfold_arena::Key;
#[cfg(feature = "std")]
pub use pinfold_buffer::{Adaptive, AdaptiveSettings, Clock, Measured, SystemClock};
pub use pinfold_buffer::{
    BufferExt, ConcurrentForEach, ConcurrentForEachExt, DriveWhile, Driven, Fixed, FobStreamExt,
    ForEachDriven, FutureQueue, FutureQueueGrouped, FuturesOrdered, FuturesOrderedBounded,
    GroupedWeightedFuture, IterStream, Limit, OrderedBuffer, OrderedFutureQueue,
    OrderedFutureQueueGrouped, OrderedSet, ProgressStream, ProgressStreamExt, Steered, Steering,
    TryBufferExt, TryOrderedBuffer, TryUnorderedBuffer, UnorderedBuffer, WeightedFuture,
    iter_stream,
};
pub use pinfold_join::{JoinAll, TryJoinAll, join_all, try_join_all};
pub use pinfold_map::{FutureMap, KeyedMap, StreamMap};
pub use pinfold_merge::{Merge, MergeBounded, merge};
/// The async buffer pool (the `pinfold-pool` crate).
pub use pinfold_pool as pool;
pub use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded};

/// futures-util's extension traits of `Stream` and `TryStream`, for a project that depends on
/// `pinfold` alone: `next`, `map`, `collect` and the rest on every primitive here.
///
/// They are the same traits as `futures::StreamExt` and `futures::TryStreamExt` (importing
/// both is no conflict). They are in a module of their own, not at the crate's root, so that
/// `use pinfold::*` brings in no `StreamExt` to clash with another crate's, such as
/// tokio-stream's.
///
/// ```
/// use pinfold::FuturesUnordered;
/// use pinfold::ext::StreamExt;
///
/// # futures_executor::block_on(async {
/// let set: FuturesUnordered<_> = (1..=3u32).map(|n| async move { n * 10 }).collect();
/// let mut all: Vec<u32> = set.collect().await;
/// all.sort();
/// assert_eq!(all, [10, 20, 30]);
/// # });
/// ```
pub mod ext {
    pub use futures_util::{StreamExt, TryStreamExt};
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// MIGRATION.md's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../MIGRATION.md")]
pub struct MigrationDoctests;
