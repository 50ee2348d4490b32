//! [`ConcurrentForEach`]: the consumer's future for each item of a stream, run concurrently on
//! the arena.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::boxed::Box;
use futures_core::Stream;
use futures_core::future::FusedFuture;
use pin_project::pin_project;
use pinfold_arena::{Arena, GrowableArena, Step, Storage, coop, unwind};

/// The largest limit that gets a fixed arena of its own size; a larger one runs on a growable
/// arena, which allocates as the futures come.
const LARGEST_FIXED_LIMIT: usize = 4096;

/// How many items a poll on a growable arena may pull at least; at most it pulls as many as
/// the arena holds when the poll starts, if that is more.
const LEAST_PULLED: usize = 32;

/// `concurrent_for_each` on the arena: futures-util's `StreamExt::for_each_concurrent`, with the
/// same signature and contract, allocating nothing per item.
///
/// Its name is its own (as [`unordered_buffer`](crate::BufferExt::unordered_buffer) is
/// `buffer_unordered`'s) so that it is called as a method with `futures::StreamExt` in the
/// same scope: with a shared name, the call would be ambiguous (E0034). With both traits
/// imported, `for_each_concurrent` is futures-util's, and `concurrent_for_each` is this one.
///
/// ```
/// use futures::StreamExt; // for `map`, and its own `for_each_concurrent`
/// use futures::stream;
/// use pinfold::ConcurrentForEachExt;
///
/// # futures::executor::block_on(async {
/// let total = std::cell::Cell::new(0);
/// stream::iter(1..=4)
///     .map(|n| n * 10)
///     .concurrent_for_each(2, |n| {
///         total.set(total.get() + n);
///         async {}
///     })
///     .await;
/// assert_eq!(total.get(), 100);
/// # });
/// ```
pub trait ConcurrentForEachExt: Stream {
    /// Runs the stream to its end, calling `f` with each item and running the futures it
    /// returns concurrently (on the task that polls the returned future: no thread is started).
    ///
    /// `limit` bounds how many of those futures run at once: `Some(n)` or `n` runs at most `n`,
    /// and `None` (or 0, as in futures-util) sets no bound. The stream is polled only while
    /// fewer than `limit` futures run, and a slot freed by a future that finished is refilled
    /// from the stream in the same poll. The futures finish in any order.
    ///
    /// The returned future completes once the stream has ended and every future has finished;
    /// it is a [`FusedFuture`], and the stream is dropped as soon as it ends. See
    /// [`ConcurrentForEach`] for its memory and for what a panic leaves.
    ///
    /// # Example
    ///
    /// At most two sleeps run at once: the four take 300 ms together, not 600 or 150 (in
    /// tokio's paused virtual time, so the timings are exact).
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::time::Duration;
    /// use futures::stream;
    /// use pinfold::ConcurrentForEachExt;
    /// use tokio::time::{Instant, sleep};
    ///
    /// # tokio::runtime::Builder::new_current_thread()
    /// #     .enable_time()
    /// #     .start_paused(true)
    /// #     .build()
    /// #     .unwrap()
    /// #     .block_on(async {
    /// let start = Instant::now();
    /// let total = Cell::new(0);
    /// stream::iter([100, 200, 100, 100])
    ///     .concurrent_for_each(2, |millis| {
    ///         let total = &total;
    ///         async move {
    ///             sleep(Duration::from_millis(millis)).await;
    ///             total.set(total.get() + millis);
    ///         }
    ///     })
    ///     .await;
    /// assert_eq!(total.get(), 500);
    /// assert_eq!(start.elapsed(), Duration::from_millis(300));
    /// # });
    /// ```
    fn concurrent_for_each<Fut, F>(
        self,
        limit: impl Into<Option<usize>>,
        f: F,
    ) -> ConcurrentForEach<Self, Fut, F>
    where
        Self: Sized,
        F: FnMut(Self::Item) -> Fut,
        Fut: Future<Output = ()>,
    {
        ConcurrentForEach::new(self, limit.into(), f)
    }
}

impl<St: Stream + ?Sized> ConcurrentForEachExt for St {}

/// Future for [`ConcurrentForEachExt::concurrent_for_each`].
///
/// The consumer's futures are polled as the crate's adapters poll theirs
/// ([*The shared rules*](crate#the-shared-rules)): a future is first polled in the poll that
/// pulled its item, then only after its waker fired, and each future at most once per poll.
///
/// # Memory
///
/// A limit of at most 4,096 gets a fixed arena when the future is made: as many slots as the
/// limit, or as the stream's `size_hint` says it has items at most, if that is fewer. Nothing
/// is allocated after that, per item or per poll. Without a limit, or with a larger one, the
/// futures run on a growable arena (its bookkeeping boxed when the future is made), which
/// grows in blocks as futures come and gives them back as they finish; a poll then pulls at
/// most as many items as run when it starts (or 32), and wakes the task to pull more, so that
/// an always-ready stream cannot grow it without bound within one poll.
///
/// # Panics
///
/// A panic in `f` propagates out of the poll, and its item is lost. A panic in a future's poll
/// or `Drop` propagates as the crate's [*When a future panics*](crate#when-a-future-panics)
/// says: that future is dropped in place, once. In both cases the other futures and the stream
/// are kept, and polling again goes on with them; with the `std` feature, the task is woken
/// before the panic leaves the poll, so that an executor that polls it again does.
#[pin_project]
#[must_use = "futures do nothing unless polled"]
pub struct ConcurrentForEach<St, Fut, F> {
    /// The stream, until it ends.
    #[pin]
    stream: Option<St>,
    f: F,
    running: Running<Fut>,
}

/// The futures running, on the arena the limit chose.
enum Running<Fut> {
    /// A limit of at most [`LARGEST_FIXED_LIMIT`]: the arena's capacity.
    Fixed(Arena<Fut>),
    /// No limit (`usize::MAX`), or a larger one. Boxed: a growable arena's bookkeeping is
    /// several times a fixed arena's, and a future for a limit should not carry it.
    Growable(Box<GrowableArena<Fut>>, usize),
}

impl<St, Fut, F> ConcurrentForEach<St, Fut, F>
where
    St: Stream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    fn new(stream: St, limit: Option<usize>, f: F) -> Self {
        let running = match limit {
            Some(limit @ 1..=LARGEST_FIXED_LIMIT) => {
                let most_items = stream.size_hint().1.unwrap_or(usize::MAX);
                Running::Fixed(Arena::new(limit.min(most_items).max(1)))
            }
            Some(0) | None => Running::Growable(Box::new(GrowableArena::new()), usize::MAX),
            Some(limit) => Running::Growable(Box::new(GrowableArena::new()), limit),
        };
        Self {
            stream: Some(stream),
            f,
            running,
        }
    }
}

impl<Fut> Running<Fut> {
    fn len(&self) -> usize {
        match self {
            Running::Fixed(arena) => arena.len(),
            Running::Growable(arena, _) => arena.len(),
        }
    }

    /// How many futures may run at once; `None` for no limit.
    fn limit(&self) -> Option<usize> {
        match self {
            Running::Fixed(arena) => Some(arena.capacity()),
            Running::Growable(_, usize::MAX) => None,
            Running::Growable(_, limit) => Some(*limit),
        }
    }
}

impl<St, Fut, F> Future for ConcurrentForEach<St, Fut, F>
where
    St: Stream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    type Output = ();

    /// With the `tokio-coop` feature, a poll that finds tokio's budget spent returns `Pending`
    /// at once, and each future that finishes spends a unit: the first that finds none left
    /// ends the poll, which returns `Pending`; tokio wakes the task in both cases.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if this.stream.is_none() && this.running.len() == 0 {
            return Poll::Ready(());
        }
        if !coop::may_proceed(cx) {
            return Poll::Pending;
        }
        let (running, stream, f) = (this.running, this.stream, this.f);
        unwind::repair_on_unwind(
            cx,
            |cx| match running {
                Running::Fixed(arena) => drive(arena, usize::MAX, usize::MAX, stream, f, cx),
                Running::Growable(arena, limit) => {
                    let room = arena.len().max(LEAST_PULLED);
                    drive(&mut **arena, *limit, room, stream, f, cx)
                }
            },
            wake_after_panic,
        )
    }
}

/// After a panic in `f` or in the stream (which may come after the arena's round gave an
/// output, so that wakes reach the task only after a poll returned `Pending`), or in a
/// future: wakes the task, so that it is polled again. With `std` only: without it this runs
/// while the panic unwinds, where no user code may run.
fn wake_after_panic(cx: &mut Context<'_>) {
    #[cfg(feature = "std")]
    cx.waker().wake_by_ref();
    #[cfg(not(feature = "std"))]
    let _ = cx;
}

/// One poll: pulls items into free slots (while fewer than `limit` run, at most `room` of
/// them) and polls the woken futures in one round of the arena, refilling each slot freed.
fn drive<St, Fut, F, A>(
    arena: &mut A,
    limit: usize,
    mut room: usize,
    mut stream: Pin<&mut Option<St>>,
    f: &mut F,
    cx: &mut Context<'_>,
) -> Poll<()>
where
    St: Stream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
    A: Storage<Fut>,
{
    refill(arena, limit, &mut room, stream.as_mut(), f, cx);
    let mut budget = arena.start_round();
    let mut poll = |_, fut: Pin<&mut Fut>, cx: &mut Context<'_>| Step::of_future(fut.poll(cx));
    loop {
        match arena.poll_with_budget(cx, &mut budget, &mut poll) {
            Poll::Ready(Some(_)) => {
                if !coop::spend(cx) {
                    return Poll::Pending;
                }
                // Its slot is free: start the next future now, not on the next poll.
                refill(arena, limit, &mut room, stream.as_mut(), f, cx);
            }
            // Nothing runs, and the last refill had room: the stream has ended, or it is
            // `Pending` (and will wake the task).
            Poll::Ready(None) if stream.is_none() => return Poll::Ready(()),
            // Every woken future was polled, or the round's budget is spent (the task was
            // woken). If the poll stopped pulling items for want of `room`, the stream may have
            // more at once: the next poll pulls them.
            Poll::Ready(None) | Poll::Pending => {
                if room == 0 && stream.is_some() {
                    cx.waker().wake_by_ref();
                }
                return Poll::Pending;
            }
        }
    }
}

/// Pulls items from the stream while the arena has a free slot, fewer than `limit` futures
/// run and `room` is left, and starts `f`'s future for each. Stops when the stream is
/// `Pending` (it will wake the task) or has ended (it is dropped then).
#[inline]
fn refill<St, Fut, F, A>(
    arena: &mut A,
    limit: usize,
    room: &mut usize,
    mut stream: Pin<&mut Option<St>>,
    f: &mut F,
    cx: &mut Context<'_>,
) where
    St: Stream,
    F: FnMut(St::Item) -> Fut,
    A: Storage<Fut>,
{
    while *room > 0 && !arena.is_full() && arena.len() < limit {
        let Some(source) = stream.as_mut().as_pin_mut() else {
            return;
        };
        match source.poll_next(cx) {
            Poll::Ready(Some(item)) => {
                if arena.insert(f(item)).is_err() {
                    unreachable!("the arena had a free slot");
                }
                *room -= 1;
            }
            Poll::Ready(None) => stream.set(None),
            Poll::Pending => return,
        }
    }
}

impl<St, Fut, F> FusedFuture for ConcurrentForEach<St, Fut, F>
where
    St: Stream,
    F: FnMut(St::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    /// The stream has ended and every future has finished.
    fn is_terminated(&self) -> bool {
        self.stream.is_none() && self.running.len() == 0
    }
}

impl<St: fmt::Debug, Fut, F> fmt::Debug for ConcurrentForEach<St, Fut, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConcurrentForEach")
            .field("stream", &self.stream)
            .field("running", &self.running.len())
            .field("limit", &self.running.limit())
            .finish()
    }
}
