//! [`Driven`]: any stream made a [`ProgressStream`] by taking up to a number of its items ahead
//! while its consumer is busy, such as a set of futures or a merge.

use alloc::collections::VecDeque;
use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pin_project::pin_project;

use crate::ProgressStream;

/// The items a [`Driven`] holds: dropped every one, also when the `Drop` of some panics, then
/// the first panic goes on (see `pinfold_arena::unwind::drop_all`).
struct Held<T>(VecDeque<T>);

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        pinfold_arena::unwind::drop_all(self.0.drain(..));
    }
}

impl<T> core::ops::Deref for Held<T> {
    type Target = VecDeque<T>;

    fn deref(&self) -> &VecDeque<T> {
        &self.0
    }
}

impl<T> core::ops::DerefMut for Held<T> {
    fn deref_mut(&mut self) -> &mut VecDeque<T> {
        &mut self.0
    }
}

/// A stream whose items are taken ahead, up to `limit` of them (a set of futures: past it,
/// see [*At the limit*](#at-the-limit)), when it is driven
/// ([`poll_progress`](ProgressStream::poll_progress)), and given by
/// [`poll_next`](Stream::poll_next) first, in the order they came. Made by
/// [`BufferExt::driven`](crate::BufferExt::driven), or by a set of futures' own `driven`
/// ([`one_item_per_value`](Self::one_item_per_value)).
///
/// It is how a set of futures (`FuturesUnordered`, `FuturesUnorderedBounded`), a merge
/// (`Merge`, `MergeBounded`) or a map (`FutureMap`, `StreamMap`) keeps its values running
/// while its consumer works on an output: with
/// [`for_each_driven`](crate::ProgressStreamExt::for_each_driven) or
/// [`drive_while`](crate::ProgressStreamExt::drive_while), the set is polled beside the
/// consumer's future, so a value that needs several polls to finish (or that holds a lock the
/// consumer waits for) is not left stalled (in a merge or a stream map, as long as fewer than
/// `limit` items are held: see [*At the limit*](#at-the-limit)). The set itself stays as it
/// is: a set that is not driven pays nothing for this.
///
/// Each `poll_progress` calls the stream's `poll_next` until it is `Pending`, ends, or (see
/// [*At the limit*](#at-the-limit)) `limit` items are held; so one call may be several of the
/// stream's rounds. Items held are dropped with the adapter ([`into_inner`](Self::into_inner)
/// too drops them). It allocates a queue of held items as it first holds one, growing up to
/// `limit`, or past it for a stream that gives one item per value.
///
/// # At the limit
///
/// What happens once `limit` items are held depends on the stream, and on how the `Driven`
/// was made:
///
/// - **A set of futures** (`FuturesUnordered`, `FuturesUnorderedBounded`, `FutureMap`,
///   [`FuturesOrdered`](crate::FuturesOrdered),
///   [`FuturesOrderedBounded`](crate::FuturesOrderedBounded)): their own `driven(limit)`,
///   an inherent method that `set.driven(limit)` calls rather than
///   [`BufferExt::driven`](crate::BufferExt::driven), makes a `Driven` by
///   [`one_item_per_value`](Self::one_item_per_value). Driving goes on at the limit: the set
///   is polled as before, its futures keep running, and the outputs they give are held past
///   the limit. A set gives each future one output, so what is held stays within the futures
///   pushed into it and not yet given: a future holding a lock the consumer waits for is
///   polled again, however many outputs are ready.
/// - **Any other stream**, a merge (`Merge`, `MergeBounded`) or a `StreamMap` among them, from
///   [`BufferExt::driven`](crate::BufferExt::driven): a stream can give items without end, so
///   the limit holds. Once `limit` items are held, `poll_progress` returns `Ready(())` without
///   polling the stream, and polls it again only once `poll_next` took an item; meanwhile no
///   stream of the merge or map is polled. A consumer that waits for something only one of
///   those streams gives (a lock a stream of a merge holds until its next poll) while `limit`
///   items are held waits for ever under
///   [`for_each_driven`](crate::ProgressStreamExt::for_each_driven), which takes the next
///   item only once the consumer's future completes: give such a stream a limit above the
///   items its streams can have ready while the consumer waits.
///
/// A set reached through `&mut` (`(&mut set).driven(limit)`) is a stream of the second kind
/// to method-call syntax; `Driven::one_item_per_value(&mut set, limit)` drives it as a set.
///
/// # The end
///
/// An end of the stream seen while driving is given by `poll_next` once, after the items
/// held, and then forgotten: a set, merge or map that was empty and takes new values goes on
/// as it would undriven, and the next call polls it again. [`get_mut`](Self::get_mut) and
/// [`get_pin_mut`](Self::get_pin_mut) forget an end not given yet too, as the stream may
/// have been refilled through them. So `Driven` is no fuse: after `None` it polls the stream
/// again on the next call, which pinfold's sets, merges and maps allow (they give `None`
/// again while empty); fuse a stream that must not be polled after its end (futures-util's
/// `StreamExt::fuse`) before driving it. It is a [`FusedStream`] when its stream is:
/// terminated when it holds no item and the stream is terminated, or it holds none and an
/// end seen while driving was not given yet.
///
/// # Example
///
/// The consumer waits on a lock that a future in the set holds until its second poll:
/// without driving the set, nothing would poll that future again while the consumer waits.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use pinfold::ProgressStreamExt;
/// use pinfold::FuturesUnordered;
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
    held: Held<St::Item>,
    /// How many items are taken ahead.
    limit: usize,
    /// What bounds the items held: the limit, or the stream's values.
    hold: Hold,
    /// An end of the stream that `poll_progress` saw and `poll_next` has not given yet; given
    /// once `held` is empty, then forgotten.
    ended: bool,
}

/// What bounds the items a [`Driven`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// At most `limit` items: driving stops there.
    Limit,
    /// The stream gives at most one item per value it holds: driving goes on past `limit`.
    OnePerValue,
}

impl<St: Stream> Driven<St> {
    #[track_caller]
    pub(crate) fn new(stream: St, limit: usize) -> Self {
        Self::with_hold(stream, limit, Hold::Limit)
    }

    /// Drives `stream`, a stream that gives at most one item per value it holds (a set of
    /// futures, each future giving one output), going on polling it once `limit` items are
    /// held: its values keep running at the limit, and the items they give are held past it
    /// ([*At the limit*](#at-the-limit)). So the limit does not stop the driving here; the
    /// stream's values bound what is held (it takes the same `limit` as
    /// [`BufferExt::driven`](crate::BufferExt::driven), whose signature the sets' own
    /// `driven(limit)` methods share: they call this).
    ///
    /// Over a stream that may give more than one item per value (a merge, a `StreamMap`), what
    /// is held is not bounded: use [`BufferExt::driven`](crate::BufferExt::driven) for those.
    ///
    /// # Panics
    /// If `limit` is 0, with the message `driven: limit must be greater than 0`.
    ///
    /// # Example
    ///
    /// A set reached through `&mut`, so that it can be used again after the driving:
    ///
    /// ```
    /// use futures::StreamExt;
    /// use pinfold::{Driven, ProgressStream};
    /// use pinfold::FuturesUnordered;
    ///
    /// # futures::executor::block_on(async {
    /// let mut set: FuturesUnordered<_> = (0..4u32).map(|n| async move { n }).collect();
    /// let mut driven = Driven::one_item_per_value(&mut set, 1);
    /// std::future::poll_fn(|cx| std::pin::Pin::new(&mut driven).poll_progress(cx)).await;
    /// assert_eq!(driven.held(), 4); // past the limit: one output per future
    /// let outputs: Vec<u32> = driven.collect().await;
    /// assert_eq!(outputs.len(), 4);
    /// assert!(set.is_empty());
    /// # });
    /// ```
    #[track_caller]
    pub fn one_item_per_value(stream: St, limit: usize) -> Self {
        Self::with_hold(stream, limit, Hold::OnePerValue)
    }

    #[track_caller]
    fn with_hold(stream: St, limit: usize, hold: Hold) -> Self {
        assert!(limit > 0, "driven: limit must be greater than 0");
        Self {
            stream,
            held: Held(VecDeque::new()),
            limit,
            hold,
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

    /// The stream, to push into it for instance. An item taken from it directly comes out
    /// ahead of those held, which came before it. An end seen while driving and not given yet
    /// is forgotten ([*The end*](#the-end)): the stream is polled again.
    pub fn get_mut(&mut self) -> &mut St {
        self.ended = false;
        &mut self.stream
    }

    /// The stream, pinned. An item taken from it directly comes out ahead of those held. An
    /// end seen while driving and not given yet is forgotten, as by
    /// [`get_mut`](Self::get_mut).
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        let this = self.project();
        *this.ended = false;
        this.stream
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
            // Given once: the stream (a set that takes new values) may go on.
            *this.ended = false;
            return Poll::Ready(None);
        }
        this.stream.poll_next(cx)
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
            let full = *this.hold == Hold::Limit && this.held.len() >= *this.limit;
            if *this.ended || full {
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

/// Terminated when nothing is held and the stream is terminated, or its end was seen while
/// driving and not given yet.
impl<St: FusedStream> FusedStream for Driven<St> {
    fn is_terminated(&self) -> bool {
        self.held.is_empty() && (self.ended || self.stream.is_terminated())
    }
}

impl<St: Stream + fmt::Debug> fmt::Debug for Driven<St> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driven")
            .field("stream", &self.stream)
            .field("held", &self.held.len())
            .field("limit", &self.limit)
            .field("hold", &self.hold)
            .field("ended", &self.ended)
            .finish()
    }
}
