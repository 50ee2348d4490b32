//! [`Driven`]: any stream made a [`ProgressStream`] by taking up to a number of its items ahead
//! while its consumer is busy, such as a set of futures or a merge.

use alloc::collections::VecDeque;
use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pin_project::pin_project;

use crate::ProgressStream;

/// A stream whose items are taken ahead, up to `limit` of them, when it is driven
/// ([`poll_progress`](ProgressStream::poll_progress)), and given by
/// [`poll_next`](Stream::poll_next) first, in the order they came. Made by
/// [`BufferExt::driven`](crate::BufferExt::driven).
///
/// It is how a set of futures (`FuturesUnordered`, `FuturesUnorderedBounded`), a merge
/// (`Merge`, `MergeBounded`) or a map (`FutureMap`, `StreamMap`) keeps its values running
/// while its consumer works on an output: with
/// [`for_each_driven`](crate::ProgressStreamExt::for_each_driven) or
/// [`drive_while`](crate::ProgressStreamExt::drive_while), the set is polled beside the
/// consumer's future, so a value that needs several polls to finish (or that holds a lock the
/// consumer waits for) is not left stalled. The set itself stays as it is: a set that is not
/// driven pays nothing for this.
///
/// Each `poll_progress` calls the stream's `poll_next` until it is `Pending`, ends, or `limit`
/// items are held; so one call may be several of the stream's rounds. Items held are dropped
/// with the adapter ([`into_inner`](Self::into_inner) too drops them). It allocates a queue of
/// held items as it first holds one, growing up to `limit`.
///
/// # Example
///
/// The consumer waits on a lock that a future in the set holds until its second poll:
/// without driving the set, nothing would poll that future again while the consumer waits.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use pinfold_buffer::{BufferExt, ProgressStreamExt};
/// use pinfold_unordered::FuturesUnordered;
/// use tokio::sync::Mutex;
///
/// # tokio::runtime::Builder::new_current_thread()
/// #     .enable_time()
/// #     .start_paused(true)
/// #     .build()
/// #     .unwrap()
/// #     .block_on(async {
/// type Job = std::pin::Pin<Box<dyn std::future::Future<Output = u32>>>;
///
/// let lock = Arc::new(Mutex::new(0));
/// let mut set: FuturesUnordered<Job> = FuturesUnordered::new();
/// let held = lock.clone();
/// set.push(Box::pin(async move {
///     // Holds the lock across a sleep: its second poll lets it go.
///     let mut guard = held.lock().await;
///     *guard += 1;
///     tokio::time::sleep(Duration::from_millis(10)).await;
///     1
/// }));
/// set.push(Box::pin(async { 2 }));
///
/// let mut seen = Vec::new();
/// set.driven(2)
///     .for_each_driven(|n| {
///         seen.push(n);
///         let lock = lock.clone();
///         async move {
///             *lock.lock().await += 10;
///         }
///     })
///     .await;
/// seen.sort();
/// assert_eq!(seen, [1, 2]);
/// assert_eq!(*lock.lock().await, 21);
/// # });
/// ```
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct Driven<St: Stream> {
    #[pin]
    stream: St,
    /// Items taken ahead, oldest first.
    held: VecDeque<St::Item>,
    /// The most items held at once.
    limit: usize,
    /// Set when the stream ended; its end is given once `held` is empty.
    ended: bool,
}

impl<St: Stream> Driven<St> {
    #[track_caller]
    pub(crate) fn new(stream: St, limit: usize) -> Self {
        assert!(limit > 0, "driven: limit must be greater than 0");
        Self {
            stream,
            held: VecDeque::new(),
            limit,
            ended: false,
        }
    }

    /// How many items are held, taken ahead of `poll_next`.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// The stream.
    pub fn get_ref(&self) -> &St {
        &self.stream
    }

    /// The stream. An item taken from it directly comes out ahead of those held, which came
    /// before it.
    pub fn get_mut(&mut self) -> &mut St {
        &mut self.stream
    }

    /// The stream, pinned. An item taken from it directly comes out ahead of those held.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().stream
    }

    /// The stream; the items held are dropped.
    pub fn into_inner(self) -> St {
        self.stream
    }
}

impl<St: Stream> Stream for Driven<St> {
    type Item = St::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<St::Item>> {
        let this = self.project();
        if let Some(item) = this.held.pop_front() {
            return Poll::Ready(Some(item));
        }
        if *this.ended {
            return Poll::Ready(None);
        }
        let polled = this.stream.poll_next(cx);
        if let Poll::Ready(None) = polled {
            *this.ended = true;
        }
        polled
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.ended {
            return (self.held.len(), Some(self.held.len()));
        }
        let (low, high) = self.stream.size_hint();
        let held = self.held.len();
        (
            low.saturating_add(held),
            high.and_then(|high| high.checked_add(held)),
        )
    }
}

impl<St: Stream> ProgressStream for Driven<St> {
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        loop {
            if *this.ended || this.held.len() >= *this.limit {
                return Poll::Ready(());
            }
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => this.held.push_back(item),
                Poll::Ready(None) => *this.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<St: Stream> FusedStream for Driven<St> {
    fn is_terminated(&self) -> bool {
        self.ended && self.held.is_empty()
    }
}

impl<St: Stream + fmt::Debug> fmt::Debug for Driven<St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driven")
            .field("stream", &self.stream)
            .field("held", &self.held.len())
            .field("limit", &self.limit)
            .field("ended", &self.ended)
            .finish()
    }
}
