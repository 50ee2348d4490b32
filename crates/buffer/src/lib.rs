//! Stream adapters that run the futures of a stream concurrently, on the waker-slot arena:
//! [`ordered_buffer`](BufferExt::ordered_buffer) yields their outputs in input order,
//! [`unordered_buffer`](BufferExt::unordered_buffer) as they finish.
//!
//! `futures::StreamExt::buffered(n)` keeps input order by leaving finished outputs in its `n`
//! slots until the head future is out, so one slow future drops the concurrency towards one
//! (head-of-line blocking). [`OrderedBuffer`] instead moves a finished output into a *reorder
//! ring* and gives its slot to the next future of the source at once, so `concurrency` futures
//! keep running while the head is slow, and the total time approaches that of
//! [`unordered_buffer`](BufferExt::unordered_buffer).
//!
//! # Semantics
//!
//! - Outputs come out in input order, always ([`OrderedBuffer`]), or in the order the futures
//!   finish ([`UnorderedBuffer`]).
//! - At most `concurrency` futures run at once, and as many as the source gives: both adapters
//!   are *work-conserving*, a slot freed during a poll is refilled from the source in that same
//!   poll.
//! - With [`window(w)`](OrderedBuffer::window), running futures plus held outputs never exceed
//!   `w`, and the source is not polled while the window is full. `window(concurrency)` behaves
//!   exactly like `futures::StreamExt::buffered(concurrency)`.
//! - The stream yields `None` only once the source has ended and every output was yielded;
//!   after that it is [terminated](futures_core::FusedStream) and polls nothing. The source is
//!   never polled again after it returned `None`.
//! - `size_hint` counts the outputs held, the futures running, and the source's own hint.
//! - A concurrency of 0 or a window of 0 panics, with a message that says so.
//!
//! # Memory: the window
//!
//! Without a window, held outputs have no bound: if the head future never finishes, the
//! others keep finishing behind it and their outputs pile up in the ring while the source is
//! pulled on and on (to its end, if it has one). That is the price of never waiting for the
//! head; it is how the `fast_ordered_buffer` crate behaves too. A window bounds it: with
//! `window(w)` the ring never has more than `w` entries, and a stuck head stops the source
//! after `w` items.
//!
//! The ring has one entry per future pulled and not yet yielded, at the position given by its
//! sequence number, so holding and releasing an output are O(1); it grows as needed and keeps
//! its largest size. The arena for `concurrency` futures is allocated when the adapter is made
//! (so a huge concurrency costs memory up front, unlike `buffered`'s growable set), and no
//! allocation is made per future.
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
//! # Ordered sets and fallible sources
//!
//! [`FuturesOrderedBounded`] and [`FuturesOrdered`] are the sets behind the ordered buffer, for
//! futures pushed by hand: futures-buffered's and futures-util's types of those names, with the
//! same methods. They live here because they share the ordered buffer's reorder ring and its
//! handling of a panicking future; the ring stores nothing while futures finish in push order
//! (the head's output goes out at once) and holds an early output in O(1) otherwise.
//!
//! [`TryBufferExt`] gives both buffers over a [`TryStream`](futures_core::TryStream) of
//! [`TryFuture`](futures_core::TryFuture)s, as futures-util's `try_buffered` and
//! `try_buffer_unordered`; [`iter_stream`] makes an iterator a stream for them (the facade's
//! `IterExt` calls it).
//!
//! # Coming from `fast_ordered_buffer`
//!
//! [`FobStreamExt::fast_ordered_buffer`] is [`BufferExt::ordered_buffer`] under the name that
//! crate uses: replace `use fast_ordered_buffer::FobStreamExt;` with
//! `use pinfold_buffer::FobStreamExt;`. Differences: a concurrency of 0 panics (that crate ran
//! every future of the source at once); freed slots are refilled within the same poll (that
//! crate refilled only at the start of a poll, so in practice it waited for the head); a
//! [`window`](OrderedBuffer::window) can bound the memory; and the adapter does not forward
//! `Sink`.
//!
//! # Fairness and panics
//!
//! One `poll_next` polls each running future at most once, and yields (wakes its task and
//! returns `Pending`) once it has polled as many futures as were running when it started, or
//! once two futures woke themselves during their own poll, or once 32 futures polled before
//! were woken and `Pending` again ([`pinfold_arena::MAX_VAIN_REPOLLS`]: tokio's futures once
//! the task's coop budget is spent).
//!
//! If a future panics while being polled, it is dropped in place and the panic propagates out
//! of `poll_next`. The adapter stays usable: [`OrderedBuffer`] skips the future's place in the
//! order, and the other outputs still come out.
//!
//! # Features
//!
//! - `std` (default): a panic in a value's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the buffer is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds (see
//!   [`pinfold_arena::unwind`]).
//! - `tokio-coop`: each output spends a unit of tokio's cooperative budget, and the buffer or set
//!   yields once the budget is spent (see [`pinfold_arena::coop`]).
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

mod iter;
mod ordered;
mod ordered_set;
mod ring;
mod running;
mod tagged;
mod try_buffer;
mod unordered;

use core::future::Future;

use futures_core::Stream;

pub use iter::{IterStream, iter_stream};
pub use ordered::OrderedBuffer;
pub use ordered_set::{FuturesOrdered, FuturesOrderedBounded, OrderedSet};
pub use try_buffer::{TryBufferExt, TryOrderedBuffer, TryUnorderedBuffer};
pub use unordered::UnorderedBuffer;

/// Adapters that run the futures of a stream concurrently on the waker-slot arena.
pub trait BufferExt: Stream {
    /// Runs up to `concurrency` futures of this stream at once and yields their outputs in
    /// input order. Finished outputs wait in a ring while the head future is slow, and new
    /// futures keep starting; bound them with [`window`](OrderedBuffer::window).
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `ordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    fn ordered_buffer(self, concurrency: usize) -> OrderedBuffer<Self>
    where
        Self: Sized,
        Self::Item: Future,
    {
        OrderedBuffer::new(self, concurrency, "ordered_buffer")
    }

    /// Runs up to `concurrency` futures of this stream at once and yields their outputs in the
    /// order they finish.
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `unordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    fn unordered_buffer(self, concurrency: usize) -> UnorderedBuffer<Self>
    where
        Self: Sized,
        Self::Item: Future,
    {
        UnorderedBuffer::new(self, concurrency, "unordered_buffer")
    }
}

impl<St: Stream + ?Sized> BufferExt for St {}

/// The `fast_ordered_buffer` crate's extension trait, as a drop-in replacement: change the
/// import and nothing else.
pub trait FobStreamExt: Stream {
    /// [`ordered_buffer(n)`](BufferExt::ordered_buffer) under the name the
    /// `fast_ordered_buffer` crate uses.
    ///
    /// # Panics
    /// If `n` is 0, with the message
    /// `fast_ordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
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
