//! [`IterStream`]: an iterator as a stream, the source of the buffers of `IterExt`.

use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};

/// A stream of the items of an iterator, each ready at once: [`iter_stream`].
#[derive(Debug, Clone)]
#[must_use = "streams do nothing unless polled"]
pub struct IterStream<I> {
    iter: I,
    done: bool,
}

/// The items of `iter` as a stream (futures-util's `stream::iter`), for
/// [`ordered_buffer`](crate::BufferExt::ordered_buffer) and
/// [`unordered_buffer`](crate::BufferExt::unordered_buffer) over an iterator of futures.
///
/// Every item is ready at once; after the iterator's `None`, the stream is terminated and
/// never calls `next` again.
///
/// # Example
///
/// ```
/// use futures::StreamExt;
/// use pinfold::{BufferExt, iter_stream};
///
/// let doubled: Vec<u32> = futures::executor::block_on(
///     iter_stream((1..=3u32).map(|n| async move { n * 2 }))
///         .ordered_buffer(2)
///         .collect(),
/// );
/// assert_eq!(doubled, [2, 4, 6]);
/// ```
pub fn iter_stream<I: IntoIterator>(iter: I) -> IterStream<I::IntoIter> {
    IterStream {
        iter: iter.into_iter(),
        done: false,
    }
}

// The iterator is never pinned: `poll_next` only calls `next` on it.
impl<I> Unpin for IterStream<I> {}

impl<I: Iterator> Stream for IterStream<I> {
    type Item = I::Item;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<I::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        let next = this.iter.next();
        this.done = next.is_none();
        Poll::Ready(next)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            self.iter.size_hint()
        }
    }
}

impl<I: Iterator> FusedStream for IterStream<I> {
    fn is_terminated(&self) -> bool {
        self.done
    }
}
