//! [`OrderedBuffer`]: outputs in input order, with new futures starting while the head is slow.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pin_project::pin_project;
use pinfold_arena::Budget;
use pinfold_arena::unwind::QuietDrop;

use crate::limit::{Fixed, Limit, Seat, Steered, Steering};
use crate::progress::ProgressStream;
use crate::ring::ReorderRing;
use crate::running::Running;
use crate::tagged::Tagged;

/// Stream for [`BufferExt::ordered_buffer`](crate::BufferExt::ordered_buffer) and
/// [`FobStreamExt::fast_ordered_buffer`](crate::FobStreamExt::fast_ordered_buffer): runs up to
/// `concurrency` futures from the source at once and yields their outputs in input order.
///
/// Wakes, fairness and panics are the crate's ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)); so are the end of the stream and
/// `size_hint` ([*The adapters and the sets*](crate#the-adapters-and-the-sets)).
///
/// # Order
///
/// Outputs come out in the order the source gave the futures, always. A future that finishes
/// before the ones pulled earlier has its output held until they are out; meanwhile its slot
/// is refilled from the source, so a slow head future does not hold up the others. A future
/// whose poll panicked has no output, and its place is skipped.
///
/// # Memory
///
/// The arena for `concurrency` futures is allocated when the adapter is made (so a huge
/// concurrency costs memory up front, unlike `buffered`'s growable set), and nothing is
/// allocated per future. Held outputs sit in a ring with one entry per future pulled and not
/// yet yielded, at the position given by its sequence number, so holding and releasing an
/// output are O(1); nothing is stored while futures finish in order, and the ring grows as
/// needed and keeps its largest size.
///
/// Without a [`window`](Self::window), held outputs have no bound: if the head future never
/// finishes, the others keep finishing behind it and their outputs pile up while the source
/// is pulled on and on (to its end, if it has one). That is the price of never waiting for
/// the head; it is how the `fast_ordered_buffer` crate behaves too. With `window(w)`, running
/// futures plus held outputs never exceed `w`, and a stuck head stops the source after `w`
/// items.
///
/// A buffer that is driven is bounded without a window too. From its first
/// [`poll_progress`](ProgressStream::poll_progress) on, it starts a future only while the
/// futures running plus the outputs held are fewer than its window, or, without one, its
/// concurrency, in `poll_next` as in `poll_progress`: however the two calls alternate, it
/// holds no more than `buffered(concurrency)` would (if it held more before, no future starts
/// until it holds less). Driven, it no longer runs ahead of a slow head without a window; a
/// window larger than the concurrency lets it, that far.
/// [`for_each_driven`](crate::ProgressStreamExt::for_each_driven) drives the buffer from its
/// first poll; a loop of `next()` and [`drive_while`](crate::ProgressStreamExt::drive_while)
/// from the first `drive_while` whose future has to wait.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct OrderedBuffer<St, S = Fixed>
where
    St: Stream,
    St::Item: Future,
{
    #[pin]
    running: Running<St, Tagged<St::Item>, S>,
    /// One entry per future pulled and not yet yielded, in input order.
    ring: ReorderRing<<St::Item as Future>::Output>,
    /// The window, if one was set.
    window: Option<usize>,
    /// The bound on running plus held futures that every refill keeps to: the window, or,
    /// once the buffer has been driven without one, the concurrency; `None` while unbounded.
    limit: Option<usize>,
    /// The future being polled, while it is: if its poll (or its drop) panics, this still names
    /// it on the next `poll_next`, which skips its place.
    polling: Option<u64>,
    /// The head's output while the freed slot is refilled (`polling` naming its place): if the
    /// source panics there, the next call gives it.
    kept: QuietDrop<Option<<St::Item as Future>::Output>>,
    /// Set when `poll_next` returned `Ready(None)`.
    terminated: bool,
    /// The name of the method that made it, for panic messages.
    method: &'static str,
}

impl<St> OrderedBuffer<St>
where
    St: Stream,
    St::Item: Future,
{
    #[track_caller]
    pub(crate) fn new(source: St, concurrency: usize, method: &'static str) -> Self {
        assert!(
            concurrency > 0,
            "{method}: concurrency must be greater than 0"
        );
        Self {
            running: Running::new(source, concurrency),
            ring: ReorderRing::new(),
            window: None,
            limit: None,
            polling: None,
            kept: QuietDrop::new(None),
            terminated: false,
            method,
        }
    }
}

impl<St, S> OrderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    /// Bounds the futures running plus the outputs held (finished, waiting for an earlier
    /// future) to `window`. While the window is full the source is not polled.
    ///
    /// `window(concurrency)` behaves exactly like `futures::StreamExt::buffered(concurrency)`;
    /// a larger window lets up to `window - concurrency` outputs wait behind a slow head while
    /// new futures start. A window smaller than the concurrency lowers the concurrency to the
    /// window (no more than `window` futures can be pulled and not yet yielded). The order is
    /// the same with or without a window.
    ///
    /// # Panics
    /// If `window` is 0, with the message `ordered_buffer: window must be greater than 0` (or
    /// the name of the method that made the buffer, such as `try_ordered_buffer`).
    ///
    /// # Example
    ///
    /// The head future waits for a gate while the nine futures behind it are ready. With a
    /// window of 3, the two finished behind the head fill the window and the source is left
    /// alone; once the head finishes, every output comes, in order.
    ///
    /// ```
    /// use std::cell::{Cell, RefCell};
    /// use std::future::poll_fn;
    /// use std::task::{Context, Poll, Waker};
    /// use futures::{StreamExt, stream};
    /// use pinfold::BufferExt;
    ///
    /// let pulled = Cell::new(0);
    /// let gate_open = Cell::new(false);
    /// let head_waker = RefCell::new(None::<Waker>);
    /// let mut buffer = stream::iter(0..10u32)
    ///     .inspect(|_| pulled.set(pulled.get() + 1))
    ///     .map(|id| {
    ///         let (gate_open, head_waker) = (&gate_open, &head_waker);
    ///         poll_fn(move |cx: &mut Context<'_>| {
    ///             if id == 0 && !gate_open.get() {
    ///                 *head_waker.borrow_mut() = Some(cx.waker().clone());
    ///                 return Poll::Pending;
    ///             }
    ///             Poll::Ready(id)
    ///         })
    ///     })
    ///     .ordered_buffer(2)
    ///     .window(3);
    ///
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert_eq!(buffer.poll_next_unpin(&mut cx), Poll::Pending);
    /// assert_eq!(pulled.get(), 3); // the head, and two outputs held behind it
    ///
    /// gate_open.set(true);
    /// head_waker.take().unwrap().wake();
    /// let outputs: Vec<u32> = futures::executor::block_on(buffer.collect());
    /// assert_eq!(outputs, (0..10).collect::<Vec<_>>());
    /// ```
    #[track_caller]
    pub fn window(mut self, window: usize) -> Self {
        assert!(window > 0, "{}: window must be greater than 0", self.method);
        self.window = Some(window);
        self.limit = Some(window);
        self.running.lower_concurrency(window);
        self
    }

    /// Lets `limit` set the concurrency while the buffer runs, within the concurrency the
    /// buffer was made with, or its [`window`](Self::window) if smaller (its capacity): see
    /// [`Limit`] for what lowering and raising it do. The order is the same; the window, if
    /// any, still bounds the futures running plus the outputs held.
    ///
    /// # Panics
    /// Without the `std` feature, if `limit` (or a clone of it) already steers a buffer, this
    /// one's other handle included. With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::{BufferExt, Limit};
    ///
    /// let limit = Limit::new(2);
    /// let outputs: Vec<u32> = futures::executor::block_on(
    ///     stream::iter(1..=5u32)
    ///         .map(|n| async move { n })
    ///         .ordered_buffer(8)
    ///         .limit(limit)
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3, 4, 5]);
    /// ```
    #[track_caller]
    pub fn limit(self, limit: Limit) -> OrderedBuffer<St, Steered> {
        let limit = limit.attach();
        self.steer(|steered| steered.with_concurrency(limit))
    }

    /// Lets `window` set the [`window`](Self::window) while the buffer runs: the futures
    /// running plus the outputs held are kept to its value from the next poll on. Lowering it
    /// cancels nothing and drops no output: no future starts until fewer than the new window
    /// are running or held. Raising it starts more at the next poll, and wakes the buffer's
    /// task if it waits only for room in the window. Any window of 1 or more may be set (the
    /// concurrency still bounds the futures running); this replaces a window set before.
    ///
    /// # Panics
    /// Without the `std` feature, if `window` (or a clone of it) already steers a buffer, this
    /// one's other handle included. With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::{BufferExt, Limit};
    ///
    /// let window = Limit::new(2);
    /// let outputs: Vec<u32> = futures::executor::block_on(
    ///     stream::iter(1..=5u32)
    ///         .map(|n| async move { n })
    ///         .ordered_buffer(4)
    ///         .window_limit(window.clone())
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3, 4, 5]);
    /// ```
    #[track_caller]
    pub fn window_limit(self, window: Limit) -> OrderedBuffer<St, Steered> {
        let size = window.get();
        let window = window.attach();
        let mut buffer = self.steer(|steered| steered.with_window(window));
        buffer.window = Some(size);
        buffer.limit = Some(size);
        buffer
    }

    /// The same buffer, its handles changed by `steer`.
    #[track_caller]
    fn steer(self, steer: impl FnOnce(Steered) -> Steered) -> OrderedBuffer<St, Steered> {
        OrderedBuffer {
            running: self.running.steer(steer),
            ring: self.ring,
            window: self.window,
            limit: self.limit,
            polling: self.polling,
            kept: self.kept,
            terminated: self.terminated,
            method: self.method,
        }
    }

    /// The source stream.
    pub fn get_ref(&self) -> &St {
        self.running.source()
    }

    /// The source stream. Taking items from it directly skips them.
    pub fn get_mut(&mut self) -> &mut St {
        self.running.source_mut()
    }

    /// The source stream, pinned. Taking items from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().running.source_pin_mut()
    }

    /// The source stream; the futures running and the outputs held are dropped.
    pub fn into_inner(self) -> St {
        self.running.into_source()
    }
}

impl<St, S> OrderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    /// [`Stream::poll_next`] without tokio's budget.
    fn poll_buffered(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<<St::Item as Future>::Output>> {
        let mut this = self.project();
        if *this.terminated {
            return Poll::Ready(None);
        }
        settle_panic(this.polling, this.kept, this.ring);
        if let Some(handle) = this.running.window_limit() {
            *this.window = Some(handle.get());
            *this.limit = *this.window;
        }
        refill(this.running.as_mut(), this.ring, *this.limit, cx);
        let mut budget = this.running.as_mut().begin_poll();
        loop {
            if let Some(out) = this.ring.pop_head() {
                return Poll::Ready(Some(out));
            }
            match poll_finished(this.running.as_mut(), this.polling, &mut budget, cx) {
                Poll::Ready(Some((seq, out))) => {
                    // Its slot is free: start the next future now, not on the next poll (while
                    // the ring still counts this output's place against the bound). The
                    // output is kept through the refill, where the source may panic.
                    let head = seq == this.ring.head();
                    if head {
                        **this.kept = Some(out);
                        *this.polling = Some(seq);
                    } else {
                        this.ring.finish(seq, out);
                    }
                    refill(this.running.as_mut(), this.ring, *this.limit, cx);
                    if head {
                        *this.polling = None;
                        let advanced = this.ring.finish_head(seq);
                        debug_assert!(advanced, "the head's place");
                        return Poll::Ready(this.kept.take());
                    }
                }
                Poll::Ready(None) => {
                    // Nothing runs, so every entry of the ring has finished and the head would
                    // have been yielded: the ring is empty, and the last refill had room, so the
                    // source has ended or is `Pending` (and will wake the task).
                    debug_assert_eq!(this.ring.len(), 0);
                    if this.running.source_done() {
                        *this.terminated = true;
                        return Poll::Ready(None);
                    }
                    park(this.running.window_limit(), this.ring, *this.limit, cx);
                    return Poll::Pending;
                }
                Poll::Pending => {
                    park(this.running.window_limit(), this.ring, *this.limit, cx);
                    return Poll::Pending;
                }
            }
        }
    }
}

impl<St, S> ProgressStream for OrderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    /// Finished outputs wait in the ring, in order, for `poll_next`. The source is pulled while
    /// the futures running plus the outputs held are fewer than the
    /// [`window`](Self::window), or, without one, than the concurrency, and from the first
    /// call on `poll_next` keeps to the same bound ([*Memory*](Self#memory)): a driven buffer
    /// holds no more than `buffered(concurrency)` would, however its consumer mixes the two
    /// calls.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if *this.terminated {
            return Poll::Ready(());
        }
        settle_panic(this.polling, this.kept, this.ring);
        if let Some(handle) = this.running.window_limit() {
            *this.window = Some(handle.get());
            *this.limit = *this.window;
        }
        // From now on `poll_next` keeps to the bound too: otherwise it would fill the slots
        // freed while driving, and driving would finish those futures too, each item adding
        // to what is held.
        let bound = *this.limit.get_or_insert(this.running.concurrency());
        refill(this.running.as_mut(), this.ring, Some(bound), cx);
        let mut budget = this.running.as_mut().begin_poll();
        loop {
            match poll_finished(this.running.as_mut(), this.polling, &mut budget, cx) {
                Poll::Ready(Some((seq, out))) => {
                    this.ring.finish(seq, out);
                    refill(this.running.as_mut(), this.ring, Some(bound), cx);
                }
                // Every woken future was polled, or the round's budget is spent: stuck only if
                // nothing runs and the bound is reached or the source has ended (otherwise a
                // future or the source will wake the task).
                Poll::Ready(None) | Poll::Pending => {
                    let full = this.ring.len() >= bound;
                    let stuck = this.running.len() == 0 && (full || this.running.source_done());
                    if stuck {
                        return Poll::Ready(());
                    }
                    park(this.running.window_limit(), this.ring, Some(bound), cx);
                    return Poll::Pending;
                }
            }
        }
    }
}

impl<St, S> Stream for OrderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    type Item = <St::Item as Future>::Output;

    /// An output spends a unit of tokio's budget (with the `tokio-coop` feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        pinfold_arena::coop::poll_output(cx, |cx| self.poll_buffered(cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.terminated {
            return (0, Some(0));
        }
        let queued = self.ring.held() + self.running.len() + usize::from(self.kept.is_some());
        let (lower, upper) = self.running.source_size_hint();
        (
            lower.saturating_add(queued),
            upper.and_then(|upper| upper.checked_add(queued)),
        )
    }
}

/// What the last call left when it panicked, named by `polling`: the place of a future whose
/// poll or drop panicked (the arena dropped it) is skipped; the head's output, kept through a
/// refill whose source panicked, goes back to its place, to be given first.
#[inline]
fn settle_panic<O>(polling: &mut Option<u64>, kept: &mut Option<O>, ring: &mut ReorderRing<O>) {
    if let Some(seq) = polling.take() {
        match kept.take() {
            Some(out) => ring.finish(seq, out),
            None => ring.lose(seq),
        }
    }
}

/// Polls the woken futures until one finishes: its place in the order and its output, as
/// [`Running::poll_output`] says. `polling` names the future whose poll or drop runs, and is
/// cleared once it returned, the finished future dropped without a panic.
#[inline]
fn poll_finished<St, S: Steering>(
    running: Pin<&mut Running<St, Tagged<St::Item>, S>>,
    polling: &mut Option<u64>,
    budget: &mut Budget,
    cx: &mut Context<'_>,
) -> Poll<Option<(u64, <St::Item as Future>::Output)>>
where
    St: Stream,
    St::Item: Future,
{
    let polled = running.poll_output(
        cx,
        budget,
        &mut |_, tagged: Pin<&mut Tagged<St::Item>>, cx| tagged.poll_tracked(polling, cx),
    );
    *polling = None;
    polled
}

/// Before a `Pending`: if the window follows a handle and is full, asks the handle to wake the
/// task on a raise (and wakes it now if a raise came since the window was read).
fn park<T>(
    window_limit: Option<&Seat>,
    ring: &ReorderRing<T>,
    window: Option<usize>,
    cx: &mut Context<'_>,
) {
    if let (Some(handle), Some(window)) = (window_limit, window) {
        if ring.len() >= window && handle.admits(ring.len(), cx) {
            cx.waker().wake_by_ref();
        }
    }
}

/// Pulls futures from the source while a slot is free and the futures running plus the
/// outputs held are fewer than `window`, if given.
fn refill<St, S: Steering>(
    running: Pin<&mut Running<St, Tagged<St::Item>, S>>,
    ring: &mut ReorderRing<<St::Item as Future>::Output>,
    window: Option<usize>,
    cx: &mut Context<'_>,
) where
    St: Stream,
    St::Item: Future,
{
    let room = window.map_or(usize::MAX, |window| window.saturating_sub(ring.len()));
    running.refill(cx, room, |fut| Tagged {
        seq: ring.push_running(),
        fut,
    });
}

impl<St, S> FusedStream for OrderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.terminated
    }
}

impl<St, S> fmt::Debug for OrderedBuffer<St, S>
where
    St: Stream + fmt::Debug,
    St::Item: Future,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrderedBuffer")
            .field("source", self.running.source())
            .field("source_done", &self.running.source_done())
            .field("running", &self.running.len())
            .field("held", &self.ring.held())
            .field("concurrency", &self.running.concurrency())
            .field("window", &self.window)
            .field("terminated", &self.terminated)
            .finish()
    }
}
