//! [`IterExt`]: the primitives as methods of iterators of futures.

use core::future::Future;

use futures_core::future::TryFuture;
use pinfold_buffer::{BufferExt, IterStream, OrderedBuffer, UnorderedBuffer, iter_stream};
use pinfold_join::{JoinAll, TryJoinAll, join_all, try_join_all};

/// Methods on anything iterable whose items are futures: the names futures-buffered's
/// `IterExt` gives them, where pinfold has the same thing.
///
/// ```
/// use futures_util::StreamExt;
/// use pinfold::IterExt;
///
/// async fn double(n: u32) -> u32 {
///     n * 2
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!((1..=3).map(double).join_all().await, [2, 4, 6]);
/// let firsts: Vec<u32> = (1..=100).map(double).ordered_buffer(8).take(3).collect().await;
/// assert_eq!(firsts, [2, 4, 6]);
/// # });
/// ```
pub trait IterExt: IntoIterator + Sized {
    /// [`join_all`] of the futures: all their outputs, in order.
    fn join_all(self) -> JoinAll<Self::Item>
    where
        Self::Item: Future,
    {
        join_all(self)
    }

    /// [`try_join_all`] of the futures: all their `Ok` values in order, or the first error.
    fn try_join_all(self) -> TryJoinAll<Self::Item>
    where
        Self::Item: TryFuture,
    {
        try_join_all(self)
    }

    /// A stream that runs up to `concurrency` of the futures at once, pulling them from the
    /// iterator as slots free up, and yields their outputs in order:
    /// [`ordered_buffer`](BufferExt::ordered_buffer) over the iterator.
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `ordered_buffer: concurrency must be greater than 0`.
    #[track_caller]
    fn ordered_buffer(self, concurrency: usize) -> OrderedBuffer<IterStream<Self::IntoIter>>
    where
        Self::Item: Future,
    {
        iter_stream(self).ordered_buffer(concurrency)
    }

    /// A stream that runs up to `concurrency` of the futures at once, pulling them from the
    /// iterator as slots free up, and yields their outputs as they finish:
    /// [`unordered_buffer`](BufferExt::unordered_buffer) over the iterator.
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `unordered_buffer: concurrency must be greater than 0`.
    #[track_caller]
    fn unordered_buffer(self, concurrency: usize) -> UnorderedBuffer<IterStream<Self::IntoIter>>
    where
        Self::Item: Future,
    {
        iter_stream(self).unordered_buffer(concurrency)
    }
}

/// For iterables of futures only: a stream of futures that is iterable too (a merge of
/// streams, futures-util's `select_all`) then gets its buffers from `BufferExt` alone, with
/// both traits in scope, rather than two methods of one name (E0034).
impl<I> IterExt for I
where
    I: IntoIterator,
    I::Item: Future,
{
}
