//! Stream adapters that run the futures of a stream concurrently, on the waker-slot arena:
//! [`ordered_buffer`](BufferExt::ordered_buffer) yields their outputs in input order,
//! [`unordered_buffer`](BufferExt::unordered_buffer) as they finish; and the ordered sets of
//! futures pushed by hand, [`FuturesOrderedBounded`] and [`FuturesOrdered`].
//!
//! `futures::StreamExt::buffered(n)` keeps input order by leaving finished outputs in its `n`
//! slots until the head future is out, so one slow future drops the concurrency towards one
//! (head-of-line blocking). [`OrderedBuffer`] instead moves a finished output into a *reorder
//! ring* and gives its slot to the next future of the source at once, so `concurrency` futures
//! keep running while the head is slow, and the total time approaches that of
//! [`unordered_buffer`](BufferExt::unordered_buffer). A [`window`](OrderedBuffer::window)
//! bounds what the ring may hold.
//!
//! # Example
//!
//! A slow head future does not hold up the ones behind it (in tokio's paused virtual time, so
//! the timings are exact):
//!
//! ```
//! use std::time::Duration;
//! use futures_util::{StreamExt, stream};
//! use pinfold_buffer::BufferExt;
//! use tokio::time::{Instant, sleep};
//!
//! async fn wait_then_return(id: u32, millis: u64) -> u32 {
//!     sleep(Duration::from_millis(millis)).await;
//!     id
//! }
//!
//! # tokio::runtime::Builder::new_current_thread()
//! #     .enable_time()
//! #     .start_paused(true)
//! #     .build()
//! #     .unwrap()
//! #     .block_on(async {
//! let delays = [500, 100, 200, 300, 400];
//! let start = Instant::now();
//! let ids: Vec<u32> = stream::iter(delays.into_iter().zip(1..))
//!     .map(|(millis, id)| wait_then_return(id, millis))
//!     .ordered_buffer(2)
//!     .collect()
//!     .await;
//! assert_eq!(ids, [1, 2, 3, 4, 5]); // input order
//! // Futures 2, 3 and 4 ran one after the other beside the 500 ms head, then 5 took the
//! // head's slot: 500 + 400 ms.
//! assert_eq!(start.elapsed(), Duration::from_millis(900));
//! // `buffered(2)` takes 1100 ms: futures 3 and 4 wait for the head before they start.
//!
//! // With a window, at most 3 futures are running or held at once; here that is enough.
//! let start = Instant::now();
//! let ids: Vec<u32> = stream::iter(delays.into_iter().zip(1..))
//!     .map(|(millis, id)| wait_then_return(id, millis))
//!     .ordered_buffer(2)
//!     .window(3)
//!     .collect()
//!     .await;
//! assert_eq!(ids, [1, 2, 3, 4, 5]);
//! assert_eq!(start.elapsed(), Duration::from_millis(900));
//! # });
//! ```
//!
//! # The adapters and the sets
//!
//! - [`BufferExt`]: [`ordered_buffer(n)`](BufferExt::ordered_buffer) gives an
//!   [`OrderedBuffer`], [`unordered_buffer(n)`](BufferExt::unordered_buffer) an
//!   [`UnorderedBuffer`]. Each type's docs state its order and its memory.
//! - [`BufferExt`]'s [`future_queue(max_weight)`](BufferExt::future_queue) gives a
//!   [`FutureQueue`], [`future_queue_grouped`](BufferExt::future_queue_grouped) a
//!   [`FutureQueueGrouped`]: the `future-queue` crate's unordered buffers, whose futures
//!   each have a weight (and a group), within a max weight (and each group's).
//!   [`ordered_future_queue`](BufferExt::ordered_future_queue) and
//!   [`ordered_future_queue_grouped`](BufferExt::ordered_future_queue_grouped) give the same
//!   ([`OrderedFutureQueue`], [`OrderedFutureQueueGrouped`]) with the outputs in the source's
//!   order, and a window.
//! - [`TryBufferExt`]: both buffers over a [`TryStream`](futures_core::TryStream) of
//!   [`TryFuture`](futures_core::TryFuture)s, as futures-util's `try_buffered` and
//!   `try_buffer_unordered`, with the place of a source error in the order.
//! - [`FobStreamExt`]: `ordered_buffer` under the name of the `fast_ordered_buffer` crate.
//! - [`FuturesOrderedBounded`] and [`FuturesOrdered`]: one [`OrderedSet`] over either arena,
//!   futures-buffered's and futures-util's types of those names with the same methods. They
//!   live here because they share the ordered buffer's reorder ring and its handling of a
//!   panicking future.
//! - [`Limit`]: a buffer's concurrency, changed from a handle while it runs; [`Adaptive`]
//!   sets it from the latency of the futures (additive increase, multiplicative decrease).
//! - [`iter_stream`]: an iterator as a stream, for the buffers (the facade's `IterExt` calls
//!   it).
//! - [`ProgressStream`]: every adapter and ordered set can be driven without taking an output,
//!   and [`ProgressStreamExt`]'s [`for_each_driven`](ProgressStreamExt::for_each_driven) and
//!   [`drive_while`](ProgressStreamExt::drive_while) drive it while the consumer works on an
//!   output, so the buffered futures do not stall meanwhile (as they do under `for_each` or a
//!   `while let` loop over `next()`).
//! - [`ConcurrentForEachExt`]:
//!   [`concurrent_for_each(limit, f)`](ConcurrentForEachExt::concurrent_for_each), futures-util's
//!   `for_each_concurrent` with its contract: `f`'s future for each item, at most `limit` of
//!   them running at once, on an arena allocated once. Its name is its own, so it is called as
//!   a method beside `futures::StreamExt`.
//!
//! What every adapter guarantees:
//!
//! - At most `concurrency` futures run at once, and as many as the source gives: the adapters
//!   are *work-conserving*, a slot freed during a poll is refilled from the source in that
//!   same poll.
//! - The stream yields `None` only once the source has ended and every output was yielded;
//!   after that it is [terminated](futures_core::FusedStream) and polls nothing. The source is
//!   never polled again after it returned `None`.
//! - `size_hint` counts the outputs held, the futures running, and the source's own hint.
//! - Dropping an adapter or a set drops every future still running and every output held,
//!   each once.
//! - A concurrency of 0 or a window of 0 panics, with a message that says so.
//!
//! # When a future panics
//!
//! A panic in a future's poll or `Drop`, or in the task's waker, propagates out of the call
//! that ran it, and the adapter or set stays usable, as
//! [*Panics*](pinfold_arena::contract#panics) says; what the order adds:
//!
//! - **A future's poll**: the ordered adapters and sets skip its place: every other output
//!   still comes, in order, and a head that panics lets the outputs held behind it out.
//! - **A future's `Drop` as it finishes**: its output is dropped, not yielded, its place is
//!   skipped, and the other outputs come as without it.
//! - **A future's `Drop` in [`clear`](OrderedSet::clear)**: every held output is dropped
//!   too, once, before the panic propagates.
//! - **The task's waker**: no place is skipped.
//!
//! A set or adapter whose futures all panicked ends once the last panic is out. A push on a
//! full [`FuturesOrderedBounded`] panics and leaves the set as it was.
//!
//! # The shared rules
//!
//! The adapters and the sets keep the rules of every pinfold primitive on the arena, stated
//! once in [`pinfold_arena::contract`]: the [order](pinfold_arena::contract#order) in which
//! futures are polled, [fairness](pinfold_arena::contract#fairness) within one `poll_next`
//! (also between a head that wakes itself and the futures behind it), which futures are
//! polled and when the task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
//! leaves ([panics](pinfold_arena::contract#panics)), and the `std` and `tokio-coop`
//! [features](pinfold_arena::contract#features). What differs here:
//!
//! | Rule | What differs here |
//! |------|-------------------|
//! | Order | [`OrderedBuffer`], [`FuturesOrdered`] and [`FuturesOrderedBounded`] give their outputs in input order, [`UnorderedBuffer`] as the futures finish: each type's *Order*. |
//! | Fairness | A call also pulls from the source while a slot is free (and the window has room), so a slot freed in a call is refilled in it. |
//! | Wakes | The source is polled with the task's waker; a future is first polled when it is pulled from the source (or pushed into a set), then only after its waker fired. |
//! | Panics | The ordered adapters and sets skip a panicking future's place: [*When a future panics*](#when-a-future-panics). The futures a weighted queue took from its source and has not started (the one from the source, and those in a group's queue) are dropped as a `Vec`'s are: if one's `Drop` panics while another panic unwinds (the queue dropped because of it), the process aborts. |
//! | Memory | Each type's docs state its own: an adapter allocates its arena when it is made, and the ordered ones hold early outputs in a ring. |
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

#[cfg(feature = "std")]
mod adaptive;
mod driven;
mod for_each;
mod future_queue;
mod iter;
mod keep;
mod limit;
mod ordered;
mod ordered_future_queue;
mod ordered_set;
mod progress;
mod ring;
mod running;
mod sync;
mod tagged;
mod try_buffer;
mod unordered;
mod weights;

use core::borrow::Borrow;
use core::fmt;
use core::future::Future;
use core::hash::Hash;

use futures_core::Stream;

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use adaptive::{Adaptive, AdaptiveSettings, Clock, Measured, SystemClock};
pub use driven::Driven;
pub use for_each::{ConcurrentForEach, ConcurrentForEachExt};
pub use future_queue::{FutureQueue, FutureQueueGrouped};
pub use iter::{IterStream, iter_stream};
pub use limit::{Fixed, Limit, Steered, Steering};
pub use ordered::OrderedBuffer;
pub use ordered_future_queue::{OrderedFutureQueue, OrderedFutureQueueGrouped};
pub use ordered_set::{FuturesOrdered, FuturesOrderedBounded, OrderedSet};
pub use progress::{DriveWhile, ForEachDriven, ProgressStream, ProgressStreamExt};
pub use try_buffer::{TryBufferExt, TryOrderedBuffer, TryUnorderedBuffer};
pub use unordered::UnorderedBuffer;
pub use weights::{GroupedWeightedFuture, WeightedFuture};

/// Adapters that run the futures of a stream concurrently on the waker-slot arena. See the
/// crate documentation for what both guarantee ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)).
pub trait BufferExt: Stream {
    /// Runs up to `concurrency` futures of this stream at once and yields their outputs in
    /// input order. Finished outputs wait in a ring while the head future is slow, and new
    /// futures keep starting; bound them with [`window`](OrderedBuffer::window) (a driven
    /// buffer keeps to its concurrency without one). See [`OrderedBuffer`] for its order and
    /// memory.
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `ordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// The futures finish in the reverse of their input order; the outputs come in input
    /// order:
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let outputs: Vec<u64> = stream::iter([30, 20, 10])
    ///     .map(|millis| async move {
    ///         tokio::time::sleep(Duration::from_millis(millis)).await;
    ///         millis
    ///     })
    ///     .ordered_buffer(3)
    ///     .collect()
    ///     .await;
    /// assert_eq!(outputs, [30, 20, 10]);
    /// # });
    /// ```
    #[track_caller]
    fn ordered_buffer(self, concurrency: usize) -> OrderedBuffer<Self>
    where
        Self: Sized,
        Self::Item: Future,
    {
        OrderedBuffer::new(self, concurrency, "ordered_buffer")
    }

    /// Runs up to `concurrency` futures of this stream at once and yields their outputs in the
    /// order they finish. See [`UnorderedBuffer`] for its order and memory.
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `unordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// The outputs come as the futures finish: the shortest sleep first.
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let outputs: Vec<u64> = stream::iter([30, 10, 20])
    ///     .map(|millis| async move {
    ///         tokio::time::sleep(Duration::from_millis(millis)).await;
    ///         millis
    ///     })
    ///     .unordered_buffer(3)
    ///     .collect()
    ///     .await;
    /// assert_eq!(outputs, [10, 20, 30]);
    /// # });
    /// ```
    #[track_caller]
    fn unordered_buffer(self, concurrency: usize) -> UnorderedBuffer<Self>
    where
        Self: Sized,
        Self::Item: Future,
    {
        UnorderedBuffer::new(self, concurrency, "unordered_buffer")
    }

    /// Runs the futures of this stream of `(weight, future)` pairs at once while the sum of
    /// their weights stays within `max_weight`, and yields their outputs in the order they
    /// finish: the `future-queue` crate's adapter. A weight above `max_weight` counts as
    /// `max_weight`, a weight of 0 counts nothing; futures start in the order the stream gives
    /// them. See [`FutureQueue`] for its contract, order and memory.
    ///
    /// # Panics
    /// If `max_weight` is 0, with the message
    /// `future_queue: max_weight must be greater than 0`.
    ///
    /// # Example
    ///
    /// A future of weight 3 and one of weight 2 do not fit a max weight of 4 together: the
    /// second starts when the first finishes, and the one of weight 1 runs beside the first.
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    /// use tokio::time::{Instant, sleep};
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let start = Instant::now();
    /// let outputs: Vec<(&str, Duration)> = stream::iter([("a", 3, 30), ("b", 1, 10), ("c", 2, 10)])
    ///     .map(|(name, weight, millis)| {
    ///         (weight, async move {
    ///             sleep(Duration::from_millis(millis)).await;
    ///             (name, start.elapsed())
    ///         })
    ///     })
    ///     .future_queue(4)
    ///     .collect()
    ///     .await;
    /// let ms = Duration::from_millis;
    /// assert_eq!(outputs, [("b", ms(10)), ("a", ms(30)), ("c", ms(40))]);
    /// # });
    /// ```
    #[track_caller]
    fn future_queue<F>(self, max_weight: usize) -> FutureQueue<Self>
    where
        Self: Sized + Stream<Item = (usize, F)>,
        F: Future,
    {
        FutureQueue::new(self, max_weight)
    }

    /// [`future_queue`](Self::future_queue) where each future may also name a group, with a
    /// max weight of its own: this stream gives `(weight, group, future)`, `group` an
    /// `Option<Q>` that names one of `groups` (keys `K` that borrow as `Q`, as a `HashMap`'s
    /// do), each with its max weight. A future in a group counts against both max weights; one
    /// that fits the max weight but not its group's waits in its group's queue, and when a
    /// future finishes, its group's queue is served first. See [`FutureQueueGrouped`] for its
    /// contract, order and memory.
    ///
    /// # Panics
    /// If `max_weight` is 0, with the message
    /// `future_queue_grouped: max_weight must be greater than 0`; if a group's max weight is
    /// 0, with a message that names the group. The stream panics when it takes an item whose
    /// group is not one of `groups`, with a message that names the group and the groups.
    ///
    /// # Example
    ///
    /// The two futures of group `"db"` run one at a time; the ungrouped one runs beside them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    /// use tokio::time::{Instant, sleep};
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let start = Instant::now();
    /// let items = [("a", Some("db")), ("b", Some("db")), ("c", None)];
    /// let outputs: Vec<(&str, Duration)> = stream::iter(items)
    ///     .map(|(name, group)| {
    ///         (1, group, async move {
    ///             sleep(Duration::from_millis(10)).await;
    ///             (name, start.elapsed())
    ///         })
    ///     })
    ///     .future_queue_grouped(8, [("db", 1)])
    ///     .collect()
    ///     .await;
    /// let ms = Duration::from_millis;
    /// assert_eq!(outputs, [("a", ms(10)), ("c", ms(10)), ("b", ms(20))]);
    /// # });
    /// ```
    #[track_caller]
    fn future_queue_grouped<F, K, Q>(
        self,
        max_weight: usize,
        groups: impl IntoIterator<Item = (K, usize)>,
    ) -> FutureQueueGrouped<Self, K>
    where
        Self: Sized + Stream<Item = (usize, Option<Q>, F)>,
        F: Future,
        K: Borrow<Q> + Eq + Hash + fmt::Debug,
        Q: Eq + Hash + fmt::Debug,
    {
        FutureQueueGrouped::new(self, max_weight, groups)
    }

    /// [`future_queue`](Self::future_queue), its outputs in the order this stream gave their
    /// futures: one that finishes early gives its weight back at once and its output waits
    /// for its turn. [`window(w)`](OrderedFutureQueue::window) bounds the futures taken and
    /// not yet yielded. See [`OrderedFutureQueue`].
    ///
    /// # Panics
    /// If `max_weight` is 0, with the message
    /// `ordered_future_queue: max_weight must be greater than 0`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    ///
    /// let outputs: Vec<u32> = futures::executor::block_on(
    ///     stream::iter([(3, 1), (1, 2), (2, 3)])
    ///         .map(|(weight, n)| (weight, async move { n }))
    ///         .ordered_future_queue(4)
    ///         .window(8)
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3]);
    /// ```
    #[track_caller]
    fn ordered_future_queue<F>(self, max_weight: usize) -> OrderedFutureQueue<Self>
    where
        Self: Sized + Stream<Item = (usize, F)>,
        F: Future,
    {
        OrderedFutureQueue::new(self, max_weight)
    }

    /// [`future_queue_grouped`](Self::future_queue_grouped), its outputs in the order this
    /// stream gave their futures, as [`ordered_future_queue`](Self::ordered_future_queue)'s.
    /// See [`OrderedFutureQueueGrouped`].
    ///
    /// # Panics
    /// As [`future_queue_grouped`](Self::future_queue_grouped), the messages beginning
    /// `ordered_future_queue_grouped:`.
    #[track_caller]
    fn ordered_future_queue_grouped<F, K, Q>(
        self,
        max_weight: usize,
        groups: impl IntoIterator<Item = (K, usize)>,
    ) -> OrderedFutureQueueGrouped<Self, K>
    where
        Self: Sized + Stream<Item = (usize, Option<Q>, F)>,
        F: Future,
        K: Borrow<Q> + Eq + Hash + fmt::Debug,
        Q: Eq + Hash + fmt::Debug,
    {
        OrderedFutureQueueGrouped::new(self, max_weight, groups)
    }

    /// Takes up to `limit` items of this stream ahead while it is driven
    /// ([`ProgressStream::poll_progress`]), and gives them first: any stream made a
    /// [`ProgressStream`], so that [`for_each_driven`](ProgressStreamExt::for_each_driven) and
    /// [`drive_while`](ProgressStreamExt::drive_while) keep a merge, a map or any stream
    /// polled while the consumer works on an item. See [`Driven`].
    ///
    /// Once `limit` items are held, the stream is not polled until one is taken
    /// ([*At the limit*](Driven#at-the-limit) says what that means for a consumer that waits
    /// on one of its values): a stream can give items without end. The sets of futures
    /// (`FuturesUnordered`, `FuturesUnorderedBounded`, `FutureMap`, [`FuturesOrdered`],
    /// [`FuturesOrderedBounded`]) have a `driven(limit)` of their own, which `set.driven(limit)`
    /// calls instead of this one: it goes on polling the set at the limit
    /// ([`Driven::one_item_per_value`]).
    ///
    /// # Panics
    /// If `limit` is 0, with the message `driven: limit must be greater than 0`.
    #[track_caller]
    fn driven(self, limit: usize) -> Driven<Self>
    where
        Self: Sized,
    {
        Driven::new(self, limit)
    }
}

impl<St: Stream + ?Sized> BufferExt for St {}

/// The `fast_ordered_buffer` crate's extension trait: change the import, and the adapter's
/// type where it is named (`OrderedBuffer`, was `FastBufferOrdered`).
///
/// Replace `use fast_ordered_buffer::FobStreamExt;` with `use pinfold_buffer::FobStreamExt;`.
/// Differences from that crate: a concurrency of 0 panics (that crate ran every future of the
/// source at once); freed slots are refilled within the same poll (that crate refilled only
/// at the start of a poll, so in practice it waited for the head); a
/// [`window`](OrderedBuffer::window) can bound the memory; and the adapter does not forward
/// `Sink`.
pub trait FobStreamExt: Stream {
    /// [`ordered_buffer(n)`](BufferExt::ordered_buffer) under the name the
    /// `fast_ordered_buffer` crate uses.
    ///
    /// # Panics
    /// If `n` is 0, with the message
    /// `fast_ordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::FobStreamExt;
    ///
    /// let squares: Vec<u32> = futures::executor::block_on(
    ///     stream::iter(1..=4u32)
    ///         .map(|n| async move { n * n })
    ///         .fast_ordered_buffer(2)
    ///         .collect(),
    /// );
    /// assert_eq!(squares, [1, 4, 9, 16]);
    /// ```
    #[track_caller]
    fn fast_ordered_buffer(self, n: usize) -> OrderedBuffer<Self>
    where
        Self: Sized,
        Self::Item: Future,
    {
        OrderedBuffer::new(self, n, "fast_ordered_buffer")
    }
}

impl<St: Stream + ?Sized> FobStreamExt for St {}
