//! [`OrderedFutureQueue`] and [`OrderedFutureQueueGrouped`]: the weighted queues of
//! `future_queue.rs`, their outputs in the source's order, with an optional window.

use core::borrow::Borrow;
use core::fmt;
use core::future::Future;
use core::hash::Hash;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pin_project::pin_project;

use crate::future_queue::{Queue, Sequenced};
use crate::limit::{Fixed, Limit, Steered, Steering};
use crate::progress::ProgressStream;
use crate::ring::ReorderRing;
use crate::tagged::Tagged;
use crate::weights::{
    GroupTable, GroupedWeightedFuture, Grouping, Groups, Ungrouped, WeightedFuture, Weights,
};

/// The queue under an ordered adapter: its futures tagged with their places.
type Ordered<St, F, G, S> = Queue<St, Tagged<F>, G, S, Sequenced<<F as Future>::Output>>;

/// A queue whose futures are tagged with their places, no window set.
fn ordered<St, F: Future, G>(source: St, max_weight: usize, groups: G) -> Ordered<St, F, G, Fixed> {
    Queue::new(
        source,
        Weights::new(max_weight, groups, Fixed),
        Sequenced {
            ring: ReorderRing::new(),
            window: None,
            kept: pinfold_arena::unwind::QuietDrop::new(None),
        },
    )
}

/// The next output in the source's order: the head's, held or as it finishes; the outputs
/// that finish ahead of it wait in the ring. A future that panicked (its place still in
/// `polling`) has its place skipped; an output kept through a refill that panicked goes to
/// its place.
fn poll_in_order<St, F, G, S>(
    mut queue: Pin<&mut Ordered<St, F, G, S>>,
    cx: &mut Context<'_>,
) -> Poll<Option<F::Output>>
where
    St: Stream,
    F: Future,
    G: Grouping<St::Item, Future = F> + Groups<Tagged<F>>,
    S: Steering,
{
    // One round of the arena for the whole call: the outputs that finish ahead of the head
    // are polled within one budget, so a head that does not finish while the futures behind
    // it keep finishing does not keep the call from returning.
    let mut round = None;
    loop {
        let this = queue.as_mut().project();
        skip_lost(this.polling, &mut this.tagging.ring);
        if let Some((seq, out)) = this.tagging.kept.take() {
            if this.tagging.ring.finish_head(seq) {
                return Poll::Ready(Some(out));
            }
            this.tagging.ring.finish(seq, out);
        }
        if let Some(out) = this.tagging.ring.pop_head() {
            return Poll::Ready(Some(out));
        }
        match queue.as_mut().poll_queued_in(cx, &mut round) {
            Poll::Ready(Some((seq, out))) => {
                let ring = &mut queue.as_mut().project().tagging.ring;
                if ring.finish_head(seq) {
                    return Poll::Ready(Some(out));
                }
                ring.finish(seq, out);
            }
            Poll::Ready(None) => {
                debug_assert_eq!(queue.tagging.ring.len(), 0, "every place was yielded");
                return Poll::Ready(None);
            }
            Poll::Pending => return Poll::Pending,
        }
    }
}

/// Skips the place of the future whose poll or `Drop` panicked, if one did.
fn skip_lost<O>(polling: &mut Option<u64>, ring: &mut ReorderRing<O>) {
    if let Some(seq) = polling.take() {
        ring.lose(seq);
    }
}

/// Drives the queue: `Ready` once an output can be taken or nothing more can start until one
/// is (see [`ProgressStream`]).
fn progress<St, F, G, S>(
    mut queue: Pin<&mut Ordered<St, F, G, S>>,
    cx: &mut Context<'_>,
) -> Poll<()>
where
    St: Stream,
    F: Future,
    G: Grouping<St::Item, Future = F> + Groups<Tagged<F>>,
    S: Steering,
{
    let this = queue.as_mut().project();
    skip_lost(this.polling, &mut this.tagging.ring);
    if let Some((seq, out)) = this.tagging.kept.take() {
        this.tagging.ring.finish(seq, out);
    }
    if this.tagging.ring.head_is_held() {
        return Poll::Ready(());
    }
    if queue.as_mut().poll_progress(cx).is_ready() {
        return Poll::Ready(());
    }
    // Driven, a finished output waits in its slot until `poll_next` takes it: the head's can
    // be taken now.
    let head = queue.tagging.ring.head();
    if queue.holds_finished(|&(seq, _)| seq == head) {
        Poll::Ready(())
    } else {
        Poll::Pending
    }
}

/// The queue's bounds (an output kept through a refill that panicked among them) and the
/// outputs held for their turn.
fn size_hint<St, F, G, S>(queue: &Ordered<St, F, G, S>) -> (usize, Option<usize>)
where
    St: Stream,
    F: Future,
    G: Grouping<St::Item, Future = F> + Groups<Tagged<F>>,
    S: Steering,
{
    let held = queue.tagging.ring.held();
    let (lower, upper) = queue.size_hint();
    (
        lower.saturating_add(held),
        upper.and_then(|upper| upper.checked_add(held)),
    )
}

/// Sets the window of `queue`, for the adapter made by `method`.
#[track_caller]
fn set_window<St, F: Future, G, S>(queue: &mut Ordered<St, F, G, S>, window: usize, method: &str) {
    assert!(window > 0, "{method}: window must be greater than 0");
    queue.tagging.window = Some(window);
}

/// The fields an ordered queue shows in `Debug`, beside the queue's.
fn fmt_order<O>(sequenced: &Sequenced<O>, f: &mut fmt::DebugStruct<'_, '_>) {
    f.field("places", &sequenced.ring.len())
        .field(
            "held",
            &(sequenced.ring.held() + usize::from(sequenced.kept.is_some())),
        )
        .field("window", &sequenced.window);
}

/// Stream for [`BufferExt::ordered_future_queue`](crate::BufferExt::ordered_future_queue):
/// [`FutureQueue`](crate::FutureQueue)'s contract (weights, the max weight, start order), its
/// outputs in the order the source gave their futures.
///
/// # Order
///
/// Outputs come out in the order the source gave the futures, always. A future that finishes
/// before the ones taken earlier gives its weight back at once, and its output waits for
/// theirs; so a slow future at the head does not hold up the others, only their outputs. A
/// future whose poll or `Drop` panicked has no output, and its place is skipped.
///
/// # Memory
///
/// As [`FutureQueue`](crate::FutureQueue)'s, and a ring of the places taken from the source
/// and not yet yielded, which stores an entry only from the head to the last output that
/// finished ahead of its turn. Without a [`window`](Self::window), outputs held for their
/// turn have no bound: if the head never finishes, the others keep finishing behind it. With
/// `window(w)`, at most `w` futures taken from the source are not yet yielded (running,
/// waiting for room, or finished and held), so a stuck head stops the source after `w`.
/// Driven ([`ProgressStream::poll_progress`]), a finished output keeps its weight until
/// `poll_next` takes it, as in [`FutureQueue`](crate::FutureQueue).
///
/// # Panics
///
/// As [`FutureQueue`](crate::FutureQueue)'s: a future whose poll or `Drop` panics is gone,
/// its weight free again and its place skipped; the panic propagates out of the call.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct OrderedFutureQueue<St, S = Fixed>
where
    St: Stream,
    St::Item: WeightedFuture,
{
    #[pin]
    queue: Ordered<St, <St::Item as WeightedFuture>::Future, Ungrouped, S>,
}

impl<St> OrderedFutureQueue<St>
where
    St: Stream,
    St::Item: WeightedFuture,
{
    #[track_caller]
    pub(crate) fn new(source: St, max_weight: usize) -> Self {
        assert!(
            max_weight > 0,
            "ordered_future_queue: max_weight must be greater than 0"
        );
        Self {
            queue: ordered(source, max_weight, Ungrouped),
        }
    }
}

impl<St, S> OrderedFutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    /// Bounds the futures taken from the source and not yet yielded (running, waiting for
    /// room, or finished and held for their turn) to `window`: the source is not polled while
    /// that many are.
    ///
    /// # Panics
    /// If `window` is 0, with the message
    /// `ordered_future_queue: window must be greater than 0`.
    #[track_caller]
    pub fn window(mut self, window: usize) -> Self {
        set_window(&mut self.queue, window, "ordered_future_queue");
        self
    }

    /// Lets `limit` set the max weight while the queue runs, as
    /// [`FutureQueue::limit`](crate::FutureQueue::limit).
    ///
    /// # Panics
    /// Without the `std` feature, if `limit` (or a clone of it) already steers a buffer.
    #[track_caller]
    pub fn limit(self, limit: Limit) -> OrderedFutureQueue<St, Steered> {
        let seat = limit.attach();
        OrderedFutureQueue {
            queue: self.queue.with_limit(seat),
        }
    }

    /// The max weight the queue was made with.
    pub fn max_weight(&self) -> usize {
        self.queue.weights.max_weight()
    }

    /// The weight of the futures running (and of the outputs waiting in their slots while the
    /// queue is driven).
    pub fn current_weight(&self) -> usize {
        self.queue.weights.running_weight()
    }

    /// The source stream.
    pub fn get_ref(&self) -> &St {
        &self.queue.source
    }

    /// The source stream. Taking items from it directly skips them.
    pub fn get_mut(&mut self) -> &mut St {
        &mut self.queue.source
    }

    /// The source stream, pinned. Taking items from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().queue.project().source
    }

    /// The source stream; the futures running or waiting, and the outputs held, are dropped.
    pub fn into_inner(self) -> St {
        self.queue.source
    }
}

impl<St, S> Stream for OrderedFutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    type Item = <<St::Item as WeightedFuture>::Future as Future>::Output;

    /// An output spends a unit of tokio's budget (with the `tokio-coop` feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let queue = self.project().queue;
        pinfold_arena::coop::poll_output(cx, |cx| poll_in_order(queue, cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        size_hint(&self.queue)
    }
}

impl<St, S> FusedStream for OrderedFutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.queue.is_terminated()
    }
}

impl<St, S> ProgressStream for OrderedFutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    /// As [`FutureQueue`](crate::FutureQueue)'s; `Ready` also when the next output in order
    /// has finished (held in the ring, or in its slot while the queue is driven), or the window
    /// stops the source.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        progress(self.project().queue, cx)
    }
}

impl<St, S> fmt::Debug for OrderedFutureQueue<St, S>
where
    St: Stream + fmt::Debug,
    St::Item: WeightedFuture,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("OrderedFutureQueue");
        self.queue.fmt_fields(&mut f);
        fmt_order(&self.queue.tagging, &mut f);
        f.finish()
    }
}

/// Stream for
/// [`BufferExt::ordered_future_queue_grouped`](crate::BufferExt::ordered_future_queue_grouped):
/// [`FutureQueueGrouped`](crate::FutureQueueGrouped)'s contract (weights, groups, start order,
/// the preference order after a completion), its outputs in the order the source gave their
/// futures, as [`OrderedFutureQueue`]'s, with the same [`window`](Self::window).
///
/// # Panics
///
/// As [`FutureQueueGrouped`](crate::FutureQueueGrouped)'s; an item of an unknown group takes
/// no place in the order.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct OrderedFutureQueueGrouped<St, K, S = Fixed>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
{
    #[pin]
    queue: GroupedOrdered<St, K, S>,
}

/// The future of an [`OrderedFutureQueueGrouped`]'s source's items.
type GroupedFuture<St> = <<St as Stream>::Item as GroupedWeightedFuture>::Future;

/// The queue under an [`OrderedFutureQueueGrouped`].
type GroupedOrdered<St, K, S> =
    Ordered<St, GroupedFuture<St>, GroupTable<K, Tagged<GroupedFuture<St>>>, S>;

impl<St, K> OrderedFutureQueueGrouped<St, K>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Eq + Hash + fmt::Debug,
{
    #[track_caller]
    pub(crate) fn new(
        source: St,
        max_weight: usize,
        groups: impl IntoIterator<Item = (K, usize)>,
    ) -> Self {
        assert!(
            max_weight > 0,
            "ordered_future_queue_grouped: max_weight must be greater than 0"
        );
        let groups = GroupTable::new(groups, "ordered_future_queue_grouped");
        Self {
            queue: ordered(source, max_weight, groups),
        }
    }
}

impl<St, K, S> OrderedFutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    /// As [`OrderedFutureQueue::window`].
    ///
    /// # Panics
    /// If `window` is 0, with the message
    /// `ordered_future_queue_grouped: window must be greater than 0`.
    #[track_caller]
    pub fn window(mut self, window: usize) -> Self {
        set_window(&mut self.queue, window, "ordered_future_queue_grouped");
        self
    }

    /// Lets `limit` set the max weight while the queue runs, as
    /// [`FutureQueueGrouped::limit`](crate::FutureQueueGrouped::limit).
    ///
    /// # Panics
    /// As [`FutureQueueGrouped::limit`](crate::FutureQueueGrouped::limit).
    #[track_caller]
    pub fn limit(self, limit: Limit) -> OrderedFutureQueueGrouped<St, K, Steered> {
        crate::future_queue::refuse_group_limit(
            &self.queue.weights,
            &limit,
            "ordered_future_queue_grouped",
        );
        let seat = limit.attach();
        OrderedFutureQueueGrouped {
            queue: self.queue.with_limit(seat),
        }
    }

    /// Lets `limit` set the max weight of group `group` while the queue runs, as
    /// [`FutureQueueGrouped::group_limit`](crate::FutureQueueGrouped::group_limit).
    ///
    /// # Panics
    /// As [`FutureQueueGrouped::group_limit`](crate::FutureQueueGrouped::group_limit).
    #[track_caller]
    pub fn group_limit<Q>(mut self, group: &Q, limit: Limit) -> Self
    where
        K: Borrow<Q>,
        Q: Eq + Hash + fmt::Debug + ?Sized,
    {
        crate::future_queue::steer_group(
            &mut self.queue.weights,
            group,
            limit,
            "ordered_future_queue_grouped",
        );
        self
    }

    /// The max weight the queue was made with.
    pub fn max_global_weight(&self) -> usize {
        self.queue.weights.max_weight()
    }

    /// The weight of the futures running (and of the outputs waiting in their slots while the
    /// queue is driven).
    pub fn current_global_weight(&self) -> usize {
        self.queue.weights.running_weight()
    }

    /// The max weight group `group` was made with, if the queue has that group.
    pub fn max_group_weight<Q>(&self, group: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        Some(self.queue.weights.grouping().group(group)?.max_weight())
    }

    /// The weight of group `group`'s futures running, if the queue has that group.
    pub fn current_group_weight<Q>(&self, group: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        Some(self.queue.weights.grouping().group(group)?.running_weight())
    }

    /// The source stream.
    pub fn get_ref(&self) -> &St {
        &self.queue.source
    }

    /// The source stream. Taking items from it directly skips them.
    pub fn get_mut(&mut self) -> &mut St {
        &mut self.queue.source
    }

    /// The source stream, pinned. Taking items from it directly skips them.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut St> {
        self.project().queue.project().source
    }

    /// The source stream; the futures running or waiting, and the outputs held, are dropped.
    pub fn into_inner(self) -> St {
        self.queue.source
    }
}

impl<St, K, S> Stream for OrderedFutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    type Item = <GroupedFuture<St> as Future>::Output;

    /// An output spends a unit of tokio's budget (with the `tokio-coop` feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let queue = self.project().queue;
        pinfold_arena::coop::poll_output(cx, |cx| poll_in_order(queue, cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        size_hint(&self.queue)
    }
}

impl<St, K, S> FusedStream for OrderedFutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.queue.is_terminated()
    }
}

impl<St, K, S> ProgressStream for OrderedFutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    /// As [`OrderedFutureQueue`]'s.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        progress(self.project().queue, cx)
    }
}

impl<St, K, S> fmt::Debug for OrderedFutureQueueGrouped<St, K, S>
where
    St: Stream + fmt::Debug,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("OrderedFutureQueueGrouped");
        self.queue.fmt_fields(&mut f);
        fmt_order(&self.queue.tagging, &mut f);
        f.finish()
    }
}
