//! [`TryBufferExt`]: the buffers over a stream of fallible futures that may itself fail.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::future::TryFuture;
use futures_core::stream::TryStream;
use futures_core::{FusedStream, Stream};
use pin_project::pin_project;

use crate::limit::{Fixed, Steered, Steering};
use crate::{Limit, OrderedBuffer, ProgressStream, UnorderedBuffer};

/// The buffers of [`BufferExt`](crate::BufferExt) for a [`TryStream`] of [`TryFuture`]s, with
/// the semantics of futures-util's `try_buffered` and `try_buffer_unordered`: the stream yields
/// `Result<T, E>`, and an `Err`, from the source or from a future, is yielded as an item and the
/// stream goes on. Wakes, fairness and panics are the crate's
/// ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)).
///
/// # Order
///
/// An `Err` item of the source takes its place as if it were a future that failed at once: in
/// [`try_ordered_buffer`](Self::try_ordered_buffer) it comes out in input order, after the
/// outputs of the futures pulled before it (futures-util's `try_buffered` yields it as soon as
/// it is pulled, ahead of them); it holds a slot only until the same poll yields or holds it.
pub trait TryBufferExt: TryStream {
    /// Runs up to `concurrency` futures of this stream at once and yields their results in
    /// input order, as [`ordered_buffer`](crate::BufferExt::ordered_buffer).
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `try_ordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// An error of the source and an error of a future each come out at their place, and the
    /// stream goes on:
    ///
    /// ```
    /// use futures::future::ready;
    /// use futures::{StreamExt, stream};
    /// use pinfold::TryBufferExt;
    ///
    /// let source = stream::iter([
    ///     Ok(ready(Ok(1))),
    ///     Err("source failed"),
    ///     Ok(ready(Err("future failed"))),
    ///     Ok(ready(Ok(4))),
    /// ]);
    /// let results: Vec<Result<u32, &str>> =
    ///     futures::executor::block_on(source.try_ordered_buffer(2).collect());
    /// assert_eq!(results, [Ok(1), Err("source failed"), Err("future failed"), Ok(4)]);
    /// ```
    #[track_caller]
    fn try_ordered_buffer(self, concurrency: usize) -> TryOrderedBuffer<Self>
    where
        Self: Sized,
        Self::Ok: TryFuture<Error = Self::Error>,
    {
        TryOrderedBuffer {
            inner: OrderedBuffer::new(Places { source: self }, concurrency, "try_ordered_buffer"),
        }
    }

    /// Runs up to `concurrency` futures of this stream at once and yields their results in
    /// the order they finish, as [`unordered_buffer`](crate::BufferExt::unordered_buffer).
    ///
    /// # Panics
    /// If `concurrency` is 0, with the message
    /// `try_unordered_buffer: concurrency must be greater than 0`;
    /// if it is more than `(u32::MAX - 1) / 2`.
    ///
    /// # Example
    ///
    /// The results come as the futures finish; an error does not end the stream:
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::{StreamExt, stream};
    /// use pinfold::TryBufferExt;
    ///
    /// async fn check(millis: u64) -> Result<u64, String> {
    ///     tokio::time::sleep(Duration::from_millis(millis)).await;
    ///     if millis == 20 { Err(format!("{millis} failed")) } else { Ok(millis) }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let results: Vec<Result<u64, String>> = stream::iter([30, 10, 20])
    ///     .map(|millis| Ok(check(millis)))
    ///     .try_unordered_buffer(3)
    ///     .collect()
    ///     .await;
    /// assert_eq!(results, [Ok(10), Err("20 failed".to_string()), Ok(30)]);
    /// # });
    /// ```
    #[track_caller]
    fn try_unordered_buffer(self, concurrency: usize) -> TryUnorderedBuffer<Self>
    where
        Self: Sized,
        Self::Ok: TryFuture<Error = Self::Error>,
    {
        TryUnorderedBuffer {
            inner: UnorderedBuffer::new(
                Places { source: self },
                concurrency,
                "try_unordered_buffer",
            ),
        }
    }
}

impl<St: TryStream + ?Sized> TryBufferExt for St {}

/// The source as a stream of futures: each `Ok` future, and each `Err` as a future that fails
/// at once.
#[pin_project]
struct Places<St> {
    #[pin]
    source: St,
}

impl<St> Stream for Places<St>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
{
    type Item = Place<St::Ok>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.project().source.try_poll_next(cx).map(|item| {
            item.map(|result| match result {
                Ok(fut) => Place::Run(fut),
                Err(error) => Place::Failed(Some(error)),
            })
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.source.size_hint()
    }
}

/// One item of the source, as a future.
#[pin_project(project = PlaceProj)]
enum Place<Fut: TryFuture> {
    Run(#[pin] Fut),
    Failed(Option<Fut::Error>),
}

impl<Fut: TryFuture> Future for Place<Fut> {
    type Output = Result<Fut::Ok, Fut::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            PlaceProj::Run(fut) => fut.try_poll(cx),
            PlaceProj::Failed(error) => Poll::Ready(Err(error
                .take()
                .expect("a failed place is polled once: the buffer drops it after its output"))),
        }
    }
}

/// Stream for [`TryBufferExt::try_ordered_buffer`]: [`OrderedBuffer`] over a fallible source,
/// with its [order](OrderedBuffer#order) and [memory](OrderedBuffer#memory), and the place of
/// a source error given by [`TryBufferExt`](TryBufferExt#order).
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct TryOrderedBuffer<St, S = Fixed>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
{
    #[pin]
    inner: OrderedBuffer<Places<St>, S>,
}

/// Stream for [`TryBufferExt::try_unordered_buffer`]: [`UnorderedBuffer`] over a fallible
/// source, with its [order](UnorderedBuffer#order) and [memory](UnorderedBuffer#memory).
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct TryUnorderedBuffer<St, S = Fixed>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
{
    #[pin]
    inner: UnorderedBuffer<Places<St>, S>,
}

impl<St, S> TryOrderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    /// Bounds the futures running plus the results held, as
    /// [`OrderedBuffer::window`]; `window(concurrency)` behaves like futures-util's
    /// `try_buffered(concurrency)`, apart from where a source error comes out.
    ///
    /// # Panics
    /// If `window` is 0, with the message `try_ordered_buffer: window must be greater than 0`.
    #[track_caller]
    pub fn window(self, window: usize) -> Self {
        Self {
            inner: self.inner.window(window),
        }
    }

    /// Lets `window` set the window while the buffer runs, as
    /// [`OrderedBuffer::window_limit`].
    ///
    /// # Panics
    /// Without the `std` feature, if `window` (or a clone of it) already steers a buffer, this
    /// one's other handle included. With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    #[track_caller]
    pub fn window_limit(self, window: Limit) -> TryOrderedBuffer<St, Steered> {
        TryOrderedBuffer {
            inner: self.inner.window_limit(window),
        }
    }

    /// Lets `limit` set the concurrency while the buffer runs, as
    /// [`OrderedBuffer::limit`].
    ///
    /// # Panics
    /// Without the `std` feature, if `limit` (or a clone of it) already steers a buffer, this
    /// one's other handle included. With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    #[track_caller]
    pub fn limit(self, limit: Limit) -> TryOrderedBuffer<St, Steered> {
        TryOrderedBuffer {
            inner: self.inner.limit(limit),
        }
    }

    /// The source stream.
    pub fn get_ref(&self) -> &St {
        &self.inner.get_ref().source
    }

    /// The source stream. Taking items from it directly skips them.
    pub fn get_mut(&mut self) -> &mut St {
        &mut self.inner.get_mut().source
    }

    /// The source stream, pinned. Taking items from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().inner.get_pin_mut().project().source
    }

    /// The source stream; the futures running and the results held are dropped.
    pub fn into_inner(self) -> St {
        self.inner.into_inner().source
    }
}

impl<St, S> Stream for TryOrderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    type Item = Result<<St::Ok as TryFuture>::Ok, St::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.project().inner.poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<St, S> ProgressStream for TryOrderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll_progress(cx)
    }
}

impl<St, S> FusedStream for TryOrderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}

impl<St, S> fmt::Debug for TryOrderedBuffer<St, S>
where
    St: TryStream + fmt::Debug,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TryOrderedBuffer")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<St, S> TryUnorderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    /// Lets `limit` set the concurrency while the buffer runs, as
    /// [`UnorderedBuffer::limit`].
    ///
    /// # Panics
    /// Without the `std` feature, if `limit` (or a clone of it) already steers a buffer, this
    /// one's other handle included. With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    #[track_caller]
    pub fn limit(self, limit: Limit) -> TryUnorderedBuffer<St, Steered> {
        TryUnorderedBuffer {
            inner: self.inner.limit(limit),
        }
    }

    /// The source stream.
    pub fn get_ref(&self) -> &St {
        &self.inner.get_ref().source
    }

    /// The source stream. Taking items from it directly skips them.
    pub fn get_mut(&mut self) -> &mut St {
        &mut self.inner.get_mut().source
    }

    /// The source stream, pinned. Taking items from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().inner.get_pin_mut().project().source
    }

    /// The source stream; the futures running and the results held are dropped.
    pub fn into_inner(self) -> St {
        self.inner.into_inner().source
    }
}

impl<St, S> Stream for TryUnorderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    type Item = Result<<St::Ok as TryFuture>::Ok, St::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.project().inner.poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<St, S> ProgressStream for TryUnorderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll_progress(cx)
    }
}

impl<St, S> FusedStream for TryUnorderedBuffer<St, S>
where
    St: TryStream,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }
}

impl<St, S> fmt::Debug for TryUnorderedBuffer<St, S>
where
    St: TryStream + fmt::Debug,
    St::Ok: TryFuture<Error = St::Error>,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TryUnorderedBuffer")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<St: fmt::Debug> fmt::Debug for Places<St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.source.fmt(f)
    }
}
