//! [`ProgressStream`]: buffers that keep their futures running while the consumer is busy
//! with an output, and the consumers that use it ([`ProgressStreamExt`]).

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::future::FusedFuture;
use futures_core::stream::Stream;
use pin_project::pin_project;
use pinfold_arena::unwind;

/// A stream that can be driven without taking an item: its buffered futures are polled, and
/// futures from its source started, while its consumer is busy with the item before.
///
/// `futures::StreamExt::buffered(n)` and every other buffered stream polls its futures only
/// inside `poll_next`. In `while let Some(x) = s.next().await { handle(x).await }` nothing polls
/// them while `handle` runs: a future that needs several polls to finish (a request in steps, a
/// keepalive, a lock it must release) stalls, and deadlocks if `handle` waits for it. Polling
/// [`poll_progress`](Self::poll_progress) beside `handle` keeps them going;
/// [`for_each_driven`](ProgressStreamExt::for_each_driven) and
/// [`drive_while`](ProgressStreamExt::drive_while) do that for you.
///
/// Implemented by [`OrderedBuffer`](crate::OrderedBuffer),
/// [`UnorderedBuffer`](crate::UnorderedBuffer), [`TryOrderedBuffer`](crate::TryOrderedBuffer),
/// [`TryUnorderedBuffer`](crate::TryUnorderedBuffer), [`FutureQueue`](crate::FutureQueue)
/// and [`FutureQueueGrouped`](crate::FutureQueueGrouped) (so by every adapter of this crate,
/// `fast_ordered_buffer` among them), and by the ordered sets
/// [`FuturesOrderedBounded`](crate::FuturesOrderedBounded) and
/// [`FuturesOrdered`](crate::FuturesOrdered); and, for any stream (a set of futures, a merge,
/// a map), by [`Driven`](crate::Driven), from [`BufferExt::driven`](crate::BufferExt::driven).
/// A `&mut`, a `Box` or a `Pin` of one is one too, as they are streams.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not driven: make it a `Driven` with `.driven(limit)` first",
    label = "not a `ProgressStream`",
    note = "a set, merge or map is driven through `Driven`: `set.driven(limit).for_each_driven(f)`; \
            the buffers (`ordered_buffer`, `unordered_buffer`) and ordered sets are driven as they are"
)]
pub trait ProgressStream: Stream {
    /// Drives the stream without taking an item: starts futures from the source and polls the
    /// running ones that were woken, keeping their outputs for later calls of `poll_next`.
    ///
    /// Returns `Ready(())` when nothing more can move until an item is taken (every slot or the
    /// window is full of finished outputs, or nothing runs and the source has ended), and
    /// `Pending` otherwise: the task is woken when a running future or the source can move.
    /// The items and their order are those of `poll_next` called later: driving never changes
    /// what the stream yields, only when the work is done. What is held while driven is
    /// bounded, whatever the stream's consumer does between two calls: an ordered buffer holds
    /// no more than its window, or its concurrency without one (from the first call on, its
    /// `poll_next` keeps to that bound too: see [`OrderedBuffer`](crate::OrderedBuffer#memory));
    /// an unordered buffer keeps a finished output in its slot.
    ///
    /// A buffer's or ordered set's call is one round under the
    /// [*Fairness*](pinfold_arena::contract#fairness) rule: each running future is polled at
    /// most once. [`Driven`](crate::Driven)'s is as many calls of its stream's `poll_next` as it
    /// takes to hold its limit (a set of futures: past it, as
    /// [*At the limit*](crate::Driven#at-the-limit) says) or find the stream pending. A panic in a future's poll or `Drop`
    /// propagates out of this call as it would out of `poll_next`
    /// ([*When a future panics*](crate#when-a-future-panics)).
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()>;
}

impl<S: ProgressStream + Unpin + ?Sized> ProgressStream for &mut S {
    fn poll_progress(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        S::poll_progress(Pin::new(&mut **self), cx)
    }
}

/// A boxed stream is driven as the stream in the box is, as futures-core's `Stream` impl for
/// `Box` polls it (so a boxed buffer or `Box<dyn ProgressStream + Unpin>` is one).
impl<S: ProgressStream + Unpin + ?Sized> ProgressStream for alloc::boxed::Box<S> {
    fn poll_progress(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut **self).poll_progress(cx)
    }
}

/// A pinned pointer to a stream is driven as the stream is, as futures-core's `Stream` impl for
/// `Pin<P>` polls it (so `Box::pin(buffer)` is one).
impl<P> ProgressStream for Pin<P>
where
    P: core::ops::DerefMut + Unpin,
    P::Target: ProgressStream,
{
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().as_mut().poll_progress(cx)
    }
}

/// Consumers that keep a [`ProgressStream`] going while they work.
///
/// Implemented for every stream, its methods bound to a [`ProgressStream`]: called on a stream
/// that is not one (a set, a merge, a map), the error says to make it one with `.driven(limit)`.
///
/// ```compile_fail,E0277
/// use pinfold::{FuturesUnordered, ProgressStreamExt};
///
/// let set: FuturesUnordered<_> = (0..4u32).map(|n| async move { n }).collect();
/// let _ = set.for_each_driven(|_| async {}); // `set.driven(2).for_each_driven(..)` compiles
/// ```
pub trait ProgressStreamExt: Stream {
    /// Runs `f`'s future for each item, one item at a time, as `StreamExt::for_each` does, and
    /// drives the stream ([`poll_progress`](ProgressStream::poll_progress)) while each of those
    /// futures runs, so the buffered futures keep running meanwhile. The stream is driven from
    /// the first poll on, so the wait for the first item keeps to the bounds of a driven stream
    /// too.
    ///
    /// Completes when the stream has ended and the future for its last item has completed.
    ///
    /// # Panics
    ///
    /// A panic in `f`, or in the poll of the future it returned, propagates out of the poll;
    /// that item's future is dropped (if its `Drop` panics too, the poll's panic is the one
    /// that goes on), and polling again goes on with the next item. A panic in
    /// a buffered future propagates as the crate's
    /// [*When a future panics*](crate#when-a-future-panics) says, and the future for the
    /// current item is kept.
    ///
    /// # Example
    ///
    /// Each fetch takes three steps of 10 ms, and storing an output takes 30 ms; the fetches
    /// behind the one being stored keep running meanwhile (with `for_each`, they would make
    /// one step per item stored):
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures::stream;
    /// use futures::StreamExt;
    /// use pinfold::{BufferExt, ProgressStreamExt};
    /// use tokio::time::{Instant, sleep};
    ///
    /// async fn fetch(id: u32) -> u32 {
    ///     for _ in 0..3 {
    ///         sleep(Duration::from_millis(10)).await;
    ///     }
    ///     id
    /// }
    ///
    /// #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// async fn main() {
    ///     let start = Instant::now();
    ///     let mut stored = Vec::new();
    ///     stream::iter(0..4)
    ///         .map(fetch)
    ///         .ordered_buffer(2)
    ///         .for_each_driven(|id| {
    ///             stored.push(id);
    ///             sleep(Duration::from_millis(30))
    ///         })
    ///         .await;
    ///     assert_eq!(stored, [0, 1, 2, 3]);
    ///     // The first two fetches take 30 ms; storing four outputs 120 ms more.
    ///     assert_eq!(start.elapsed(), Duration::from_millis(150));
    /// }
    /// ```
    fn for_each_driven<Fut, F>(self, f: F) -> ForEachDriven<Self, Fut, F>
    where
        Self: ProgressStream + Sized,
        F: FnMut(Self::Item) -> Fut,
        Fut: Future<Output = ()>,
    {
        ForEachDriven {
            stream: self,
            f,
            current: None,
            driven: false,
            done: false,
        }
    }

    /// Runs `future` to completion and drives this stream
    /// ([`poll_progress`](ProgressStream::poll_progress)) while it runs; its output is the
    /// future's. For a loop of your own, where `for_each_driven` does not fit (a `break`, a
    /// `?`):
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::{BufferExt, ProgressStreamExt};
    ///
    /// async fn store(n: u32) -> Result<(), String> {
    ///     if n < 3 { Ok(()) } else { Err(format!("{n} is too large")) }
    /// }
    ///
    /// async fn run() -> Result<(), String> {
    ///     let mut results = stream::iter(0..10).map(|n| async move { n }).ordered_buffer(4);
    ///     while let Some(n) = results.next().await {
    ///         results.drive_while(store(n)).await?;
    ///     }
    ///     Ok(())
    /// }
    ///
    /// assert_eq!(futures::executor::block_on(run()), Err("3 is too large".to_string()));
    /// ```
    ///
    /// A panic in `future` propagates; a panic in a buffered future propagates as the crate's
    /// [*When a future panics*](crate#when-a-future-panics) says, and `future` is kept.
    fn drive_while<Fut>(&mut self, future: Fut) -> DriveWhile<'_, Self, Fut>
    where
        Self: ProgressStream + Unpin,
        Fut: Future,
    {
        DriveWhile {
            stream: self,
            future,
        }
    }
}

impl<S: Stream + ?Sized> ProgressStreamExt for S {}

/// Future for [`ProgressStreamExt::for_each_driven`].
#[pin_project]
#[must_use = "futures do nothing unless polled"]
pub struct ForEachDriven<St, Fut, F> {
    #[pin]
    stream: St,
    f: F,
    /// The future for the item being handled.
    #[pin]
    current: Option<Fut>,
    /// The stream was driven once: from then on it keeps to the bounds of a driven stream.
    driven: bool,
    /// The stream has ended and the last item's future completed.
    done: bool,
}

impl<St, Fut, F> Future for ForEachDriven<St, Fut, F>
where
    St: ProgressStream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(());
        }
        if !*this.driven {
            // Driven from the start, so that the wait for the first item keeps to the bounds
            // of a driven stream too (an ordered buffer without a window holds no more than
            // its concurrency); a `Ready` here only means that an item can be taken.
            *this.driven = true;
            let _ = this.stream.as_mut().poll_progress(cx);
        }
        loop {
            if this.current.is_some() {
                // If that poll panics, the item's future is dropped (a panic of its `Drop` then
                // is dropped, and the poll's goes on): the next poll takes the next item.
                let polled = unwind::repair_on_unwind(
                    &mut this.current,
                    |current| {
                        current
                            .as_mut()
                            .as_pin_mut()
                            .expect("the item's future is there until it completes")
                            .poll(cx)
                    },
                    |current| current.set(None),
                );
                if polled.is_pending() {
                    // The buffered futures run while the item's future waits; whether the
                    // stream could move or not, the item's future will wake the task.
                    let _ = this.stream.as_mut().poll_progress(cx);
                    return Poll::Pending;
                }
                this.current.set(None);
            }
            match this.stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => this.current.set(Some((this.f)(item))),
                Poll::Ready(None) => {
                    *this.done = true;
                    return Poll::Ready(());
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<St, Fut, F> FusedFuture for ForEachDriven<St, Fut, F>
where
    St: ProgressStream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    fn is_terminated(&self) -> bool {
        self.done
    }
}

impl<St: fmt::Debug, Fut, F> fmt::Debug for ForEachDriven<St, Fut, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForEachDriven")
            .field("stream", &self.stream)
            .field("handling", &self.current.is_some())
            .field("done", &self.done)
            .finish()
    }
}

/// Future for [`ProgressStreamExt::drive_while`].
#[pin_project]
#[must_use = "futures do nothing unless polled"]
pub struct DriveWhile<'a, St: ?Sized, Fut> {
    stream: &'a mut St,
    #[pin]
    future: Fut,
}

impl<St, Fut> Future for DriveWhile<'_, St, Fut>
where
    St: ProgressStream + Unpin + ?Sized,
    Fut: Future,
{
    type Output = Fut::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.future.poll(cx) {
            return Poll::Ready(out);
        }
        // `future` will wake the task; the stream's own wakes only make it move sooner.
        let _ = Pin::new(&mut **this.stream).poll_progress(cx);
        Poll::Pending
    }
}

impl<St, Fut> FusedFuture for DriveWhile<'_, St, Fut>
where
    St: ProgressStream + Unpin + ?Sized,
    Fut: FusedFuture,
{
    fn is_terminated(&self) -> bool {
        self.future.is_terminated()
    }
}

impl<St: fmt::Debug + ?Sized, Fut: fmt::Debug> fmt::Debug for DriveWhile<'_, St, Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriveWhile")
            .field("stream", &self.stream)
            .field("future", &self.future)
            .finish()
    }
}
