//! [`FutureQueue`] and [`FutureQueueGrouped`]: an unordered buffer whose futures each have a
//! weight, within a max weight, and (grouped) a group with a max weight of its own. One
//! implementation, [`Queue`], serves both.

use core::borrow::Borrow;
use core::cell::Cell;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::hash::Hash;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::collections::VecDeque;
use futures_core::{FusedStream, Stream};
use pin_project::pin_project;
use pinfold_arena::unwind::{QuietBox, QuietDrop};
use pinfold_arena::{Budget, GrowableArena, Key, Step, Storage};

use crate::keep::{Keep, KeepOnUnwind};
use crate::limit::{Fixed, Limit, Seat, Steered, Steering};
use crate::progress::ProgressStream;
use crate::ring::ReorderRing;
use crate::tagged::Tagged;
use crate::unordered::{FutureOrOutput, FutureOrOutputProj};
use crate::weights::{
    Charge, GroupTable, GroupedWeightedFuture, Grouping, Groups, Ungrouped, WeightedFuture, Weights,
};

/// A future in its arena slot (or its output, once it finished while the queue was driven),
/// and what it counts against the limits until its output is taken.
#[pin_project]
struct Slot<Fut: Future> {
    #[pin]
    state: FutureOrOutput<Fut>,
    charge: Charge,
}

/// A future taken from the source that did not fit the max weight yet: the next to start
/// from the source.
struct Entry<Fut> {
    weight: usize,
    group: Option<usize>,
    future: Fut,
}

/// How a queue runs the futures of its source: as they are ([`Untagged`]), or each beside its
/// place in the source's order ([`Sequenced`]), for an ordered queue.
pub(crate) trait Tagging<F> {
    /// What runs in the arena.
    type Future: Future;
    /// Whether the futures have places to keep track of.
    const TAGGED: bool;
    /// Whether the source may give one more future now (an ordered queue's window).
    fn may_take(&self) -> bool;
    /// `future`, taken from the source, as it runs.
    fn tag(&mut self, future: F) -> Self::Future;
    /// The place of `future` (0 if untagged).
    fn place(future: &Self::Future) -> u64;
    /// Keeps `out`, an output taken from the arena, as the refill that follows it unwinds (the
    /// source's panic, or the task waker's): for the next call.
    fn keep(&mut self, out: <Self::Future as Future>::Output);
    /// The output kept through a refill that panicked, for a queue that gives it from
    /// [`Queue::poll_queued_in`] (an unordered one; an ordered queue puts it in its ring).
    fn resume(&mut self) -> Option<<Self::Future as Future>::Output> {
        None
    }
    /// Whether an output is kept through a refill that panicked.
    fn holds_kept(&self) -> bool;
}

/// The futures run as they are, their outputs as they finish; `kept` is the output taken
/// from the arena whose refill panicked. Boxed on that cold path, so that a drop of the queue
/// while a panic unwinds drops it quietly, and its type may still borrow what is declared
/// after the queue.
#[derive(Debug)]
pub(crate) struct Untagged<O> {
    kept: Option<QuietBox<O>>,
}

impl<O> Untagged<O> {
    pub(crate) fn new() -> Self {
        Self { kept: None }
    }
}

impl<F: Future> Tagging<F> for Untagged<F::Output> {
    type Future = F;
    const TAGGED: bool = false;

    #[inline(always)]
    fn may_take(&self) -> bool {
        true
    }

    #[inline(always)]
    fn tag(&mut self, future: F) -> F {
        future
    }

    #[inline(always)]
    fn place(_: &F) -> u64 {
        0
    }

    fn keep(&mut self, out: F::Output) {
        self.kept = Some(QuietBox::new(out));
    }

    #[inline(always)]
    fn resume(&mut self) -> Option<F::Output> {
        self.kept.take().map(QuietBox::into_inner)
    }

    #[inline(always)]
    fn holds_kept(&self) -> bool {
        self.kept.is_some()
    }
}

/// Each future beside its place in the source's order, and the outputs that finished ahead of
/// their turn, in the ring of places taken and not yet yielded; at most `window` places at
/// once, if set.
pub(crate) struct Sequenced<O> {
    pub(crate) ring: ReorderRing<O>,
    pub(crate) window: Option<usize>,
    /// The output taken from the arena whose refill panicked, with its place: the next call
    /// puts it in the ring.
    pub(crate) kept: QuietDrop<Option<(u64, O)>>,
}

impl<F: Future> Tagging<F> for Sequenced<F::Output> {
    type Future = Tagged<F>;
    const TAGGED: bool = true;

    #[inline]
    fn may_take(&self) -> bool {
        self.window.is_none_or(|window| self.ring.len() < window)
    }

    #[inline]
    fn tag(&mut self, fut: F) -> Tagged<F> {
        Tagged {
            seq: self.ring.push_running(),
            fut,
        }
    }

    #[inline]
    fn place(future: &Tagged<F>) -> u64 {
        future.seq
    }

    fn keep(&mut self, out: (u64, F::Output)) {
        *self.kept = Some(out);
    }

    #[inline]
    fn holds_kept(&self) -> bool {
        self.kept.is_some()
    }
}

/// The queue every adapter is: the source, the futures running in a growable arena, the one
/// future from the source waiting for room, the [`Weights`], and the [`Tagging`].
#[pin_project]
pub(crate) struct Queue<St, Fut: Future, G, S, T = Untagged<<Fut as Future>::Output>> {
    #[pin]
    pub(crate) source: St,
    /// The source returned `None`: it is not polled again.
    source_done: bool,
    waiting: Option<Entry<Fut>>,
    arena: GrowableArena<Slot<Fut>>,
    pub(crate) weights: Weights<G, S>,
    /// The slots whose futures finished while the queue was driven, in the order they
    /// finished.
    finished: VecDeque<Key>,
    /// Set when `poll_next` returned `Ready(None)`.
    pub(crate) terminated: bool,
    pub(crate) tagging: T,
    /// The place of the tagged future being polled, while it is and, once it finished, until
    /// its output is out of the arena: if its poll or `Drop` panics, this still names it.
    pub(crate) polling: Option<u64>,
}

/// Gives back the charge of the future being polled, when it finished or when its poll (or
/// its `Drop`) panicked: in both cases the arena has dropped it.
struct Release<'a, G: Groups<Fut>, S: Steering, Fut> {
    weights: &'a mut Weights<G, S>,
    polled: &'a Cell<Option<Charge>>,
    _future: core::marker::PhantomData<fn(Fut)>,
}

impl<G: Groups<Fut>, S: Steering, Fut> Drop for Release<'_, G, S, Fut> {
    fn drop(&mut self) {
        if let Some(charge) = self.polled.take() {
            self.weights.release::<Fut>(charge);
        }
    }
}

impl<St, Fut: Future, G, S: Steering, T> Queue<St, Fut, G, S, T> {
    pub(crate) fn new(source: St, weights: Weights<G, S>, tagging: T) -> Self {
        Self {
            source,
            source_done: false,
            waiting: None,
            arena: GrowableArena::new(),
            weights,
            finished: VecDeque::new(),
            terminated: false,
            tagging,
            polling: None,
        }
    }

    /// The same queue, steered by `seat` (a limit attached already).
    pub(crate) fn with_limit(self, seat: Seat) -> Queue<St, Fut, G, Steered, T> {
        Queue {
            source: self.source,
            source_done: self.source_done,
            waiting: self.waiting,
            arena: self.arena,
            weights: self
                .weights
                .steer(|steering| steering.steered().with_concurrency(seat)),
            finished: self.finished,
            terminated: self.terminated,
            tagging: self.tagging,
            polling: self.polling,
        }
    }
}

impl<St, Fut, G, S, T> KeepOnUnwind for Queue<St, Fut, G, S, T>
where
    St: Stream,
    Fut: Future,
    G: Grouping<St::Item> + Groups<Fut>,
    S: Steering,
    T: Tagging<G::Future, Future = Fut>,
{
    type Output = Fut::Output;

    fn keep_on_unwind(self: Pin<&mut Self>, out: Fut::Output) {
        let this = self.project();
        this.tagging.keep(out);
        if !T::TAGGED {
            *this.terminated = true;
        }
    }
}

impl<St, Fut, G, S, T> Queue<St, Fut, G, S, T>
where
    St: Stream,
    Fut: Future,
    G: Grouping<St::Item> + Groups<Fut>,
    S: Steering,
    T: Tagging<G::Future, Future = Fut>,
{
    /// Starts what fits: the futures waiting in the groups' queues (those of `first`, the
    /// group of the future that finished, first), then the future waiting from the source and
    /// the next ones, in the source's order, until one does not fit, the source is `Pending`
    /// (it will wake the task) or has ended.
    fn fill(self: Pin<&mut Self>, cx: &mut Context<'_>, first: Option<usize>) {
        let mut this = self.project();
        let arena = &mut *this.arena;
        this.weights.start_queued(first, cx, |charge, future| {
            insert(arena, charge, future);
        });
        loop {
            // The future waiting is looked at in place, and taken only once it fits: a panic
            // while it is admitted (the task waker's, as a limit registers it) leaves it
            // waiting. One from the source waits first.
            let Some(waiting) = this.waiting.as_ref() else {
                if *this.source_done || !this.tagging.may_take() {
                    return;
                }
                match this.source.as_mut().poll_next(cx) {
                    Poll::Ready(Some(item)) => {
                        let (weight, group, future) = this.weights.grouping().split(item);
                        let future = this.tagging.tag(future);
                        *this.waiting = Some(Entry {
                            weight,
                            group,
                            future,
                        });
                        continue;
                    }
                    Poll::Ready(None) => {
                        *this.source_done = true;
                        return;
                    }
                    Poll::Pending => return,
                }
            };
            let (weight, group) = (waiting.weight, waiting.group);
            let Some(global) = this.weights.admits(weight, cx) else {
                return;
            };
            let group_weight = this.weights.admits_group(group, weight, cx);
            let entry = this.waiting.take().expect("a future waits");
            if let Some((charge, future)) =
                this.weights
                    .place(global, group_weight, weight, group, entry.future)
            {
                insert(arena, charge, future);
            }
        }
    }

    /// Polls the running futures that were woken until one finishes; gives its output, its
    /// charge given back. `round` is the call's budget, started here if it was not yet.
    fn poll_output(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        round: &mut Option<Budget>,
    ) -> Poll<Option<(Option<usize>, Fut::Output)>> {
        let this = self.project();
        let polling = &mut *this.polling;
        let in_poll = Cell::new(None);
        let _release = Release {
            weights: this.weights,
            polled: &in_poll,
            _future: core::marker::PhantomData,
        };
        let arena = &mut *this.arena;
        let budget = round.get_or_insert_with(|| arena.start_round());
        let mut poll = |_, slot: Pin<&mut Slot<Fut>>, cx: &mut Context<'_>| {
            let slot = slot.project();
            match slot.state.project() {
                FutureOrOutputProj::Running(future) => {
                    in_poll.set(Some(*slot.charge));
                    if T::TAGGED {
                        *polling = Some(T::place(&future));
                    }
                    match future.poll(cx) {
                        // The arena drops the future; `_release` gives its charge back. Its
                        // place stays in `polling` until the output is out of the arena.
                        Poll::Ready(out) => Step::Done((slot.charge.group(), out)),
                        Poll::Pending => {
                            in_poll.set(None);
                            if T::TAGGED {
                                *polling = None;
                            }
                            Step::Pending
                        }
                    }
                }
                // Woken after it finished while the queue was driven: its output comes from
                // `finished`.
                FutureOrOutputProj::Finished(_) | FutureOrOutputProj::Taken => Step::Settled,
            }
        };
        let polled = arena.poll_with_budget(cx, budget, &mut poll);
        if T::TAGGED && polled.is_ready() {
            *polling = None;
        }
        polled.map(|polled| polled.map(|(_, out)| out))
    }

    /// Takes the output of the future that finished first while the queue was driven, if any,
    /// and gives its charge back.
    fn take_finished(self: Pin<&mut Self>) -> Option<(Option<usize>, Fut::Output)> {
        let this = self.project();
        let key = this.finished.pop_front()?;
        let slot = this
            .arena
            .get_pin_mut(key)
            .expect("a finished slot holds its output")
            .project();
        let charge = *slot.charge;
        let out = slot
            .state
            .take_output()
            .expect("a finished slot holds its output");
        this.arena.remove(key);
        this.weights.release::<Fut>(charge);
        Some((charge.group(), out))
    }

    /// Whether an output that finished while the queue was driven, waiting in its slot, is
    /// one `wanted` picks out.
    pub(crate) fn holds_finished(&self, wanted: impl Fn(&Fut::Output) -> bool) -> bool {
        self.finished.iter().any(|&key| {
            matches!(
                self.arena.get(key),
                Some(Slot { state: FutureOrOutput::Finished(out), .. }) if wanted(out)
            )
        })
    }

    /// Whether futures wait to start (from the source, or in a group's queue).
    fn has_waiting(&self) -> bool {
        self.waiting.is_some() || self.weights.queued() > 0
    }

    pub(crate) fn poll_queued(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Fut::Output>> {
        self.poll_queued_in(cx, &mut None)
    }

    /// [`poll_queued`](Self::poll_queued) within `round`, the budget of a call that takes
    /// several outputs (an ordered queue's, while the head's is not among them): one round of
    /// the arena a call, however many outputs it takes.
    pub(crate) fn poll_queued_in(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        round: &mut Option<Budget>,
    ) -> Poll<Option<Fut::Output>> {
        if self.terminated {
            // Or an output was kept through a refill that panicked: it comes now.
            let this = self.project();
            let kept = this.tagging.resume();
            *this.terminated = kept.is_none();
            return Poll::Ready(kept);
        }
        // Outputs that finished while the queue was driven come first, in the order they
        // finished.
        if let Some((group, out)) = self.as_mut().take_finished() {
            return Poll::Ready(Some(self.refill_keeping(cx, group, out)));
        }
        self.as_mut().fill(cx, None);
        match self.as_mut().poll_output(cx, round) {
            // Its weight is free: start the next futures now, not on the next poll.
            Poll::Ready(Some((group, out))) => {
                Poll::Ready(Some(self.refill_keeping(cx, group, out)))
            }
            Poll::Ready(None) => {
                // Nothing runs, and the fill above had all the room: the source has ended or
                // is `Pending` (and will wake the task). Futures still waiting wait for a
                // limit shared with others, which wakes the task.
                if self.source_done && !self.has_waiting() {
                    *self.as_mut().project().terminated = true;
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Starts what fits after `out` (of a future of `group`) freed its weight, and gives
    /// `out`, held while the refill runs: if the source or the task's waker panics there, it
    /// goes to [`tagging`](Tagging::keep) for the next call. An unordered queue's next call
    /// finds it behind `terminated`, set as the refill unwinds, so that it looks at one flag.
    #[inline(always)]
    fn refill_keeping(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        group: Option<usize>,
        out: Fut::Output,
    ) -> Fut::Output {
        Keep::through(self, out, |queue| queue.fill(cx, group))
    }

    pub(crate) fn poll_progress(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // An output kept through a refill that panicked holds no weight: the futures running
        // still move, and are driven.
        if self.is_terminated() {
            return Poll::Ready(());
        }
        self.as_mut().fill(cx, None);
        let this = self.as_mut().project();
        let in_poll = Cell::new(None);
        let release = Release {
            weights: this.weights,
            polled: &in_poll,
            _future: core::marker::PhantomData,
        };
        let finished = &mut *this.finished;
        let polling = &mut *this.polling;
        let mut budget = this.arena.start_round();
        let mut poll = |key, slot: Pin<&mut Slot<Fut>>, cx: &mut Context<'_>| {
            let slot = slot.project();
            let charge = *slot.charge;
            let mut state = slot.state;
            let FutureOrOutputProj::Running(future) = state.as_mut().project() else {
                return Step::<Infallible>::Settled;
            };
            in_poll.set(Some(charge));
            if T::TAGGED {
                *polling = Some(T::place(&future));
            }
            let Poll::Ready(out) = future.poll(cx) else {
                in_poll.set(None);
                if T::TAGGED {
                    *polling = None;
                }
                return Step::Pending;
            };
            // If the future's `Drop` panics here, the arena drops the slot with the output in
            // it, and `release` gives the charge back (and `polling` names its place).
            state.project_replace(FutureOrOutput::Finished(out));
            // The output holds the charge until it is taken.
            in_poll.set(None);
            if T::TAGGED {
                *polling = None;
            }
            finished.push_back(key);
            Step::Settled
        };
        let polled = this.arena.poll_with_budget(cx, &mut budget, &mut poll);
        drop(release);
        // Nothing runs but finished outputs, and nothing else can start until one is taken
        // (or the source has ended). With no output to take, only the end is stuck: a future
        // that waits with nothing running waits for units of a shared limit, which wakes the
        // task.
        // A source an ordered queue's window stops is as good as ended until an output is
        // taken.
        let source_stopped = self.source_done || !self.tagging.may_take();
        let stuck = self.arena.len() == self.finished.len()
            && if self.finished.is_empty() {
                source_stopped && !self.has_waiting()
            } else {
                self.has_waiting() || source_stopped
            };
        match polled {
            Poll::Ready(Some((_, never))) => match never {},
            _ if stuck => Poll::Ready(()),
            _ => Poll::Pending,
        }
    }

    /// Whether the queue has ended: `poll_next` returned `None`, and no output is kept (see
    /// [`refill_keeping`](Self::refill_keeping)).
    pub(crate) fn is_terminated(&self) -> bool
    where
        T: Tagging<G::Future, Future = Fut>,
    {
        self.terminated && !self.tagging.holds_kept()
    }

    pub(crate) fn size_hint(&self) -> (usize, Option<usize>) {
        if self.is_terminated() {
            return (0, Some(0));
        }
        let kept = usize::from(self.tagging.holds_kept());
        let held =
            self.arena.len() + self.weights.queued() + usize::from(self.waiting.is_some()) + kept;
        let (lower, upper) = if self.source_done {
            (0, Some(0))
        } else {
            self.source.size_hint()
        };
        (
            lower.saturating_add(held),
            upper.and_then(|upper| upper.checked_add(held)),
        )
    }

    pub(crate) fn fmt_fields(&self, f: &mut fmt::DebugStruct<'_, '_>)
    where
        St: fmt::Debug,
        G: fmt::Debug,
    {
        f.field("source", &self.source)
            .field("source_done", &self.source_done)
            .field("running", &(self.arena.len() - self.finished.len()))
            .field("finished", &self.finished.len())
            .field("waiting", &self.has_waiting())
            .field("running_weight", &self.weights.running_weight())
            .field("max_weight", &self.weights.max_weight())
            .field("groups", self.weights.grouping())
            .field("kept", &self.tagging.holds_kept())
            .field("terminated", &self.is_terminated());
    }
}

/// Panics if `limit`, about to steer the max weight of a grouped queue made by `method`,
/// steers one of its groups: a future of the group would count its weight against it twice.
#[track_caller]
pub(crate) fn refuse_group_limit<K: Eq + Hash + fmt::Debug, Q, S: Steering>(
    weights: &Weights<GroupTable<K, Q>, S>,
    limit: &Limit,
    method: &str,
) {
    if let Some(group) = weights.grouping().steered_by(limit) {
        panic!(
            "{method}: limit: the limit steers group {group:?} already (a future of the group \
             would count its weight against it twice)"
        );
    }
}

/// Lets `limit` steer group `group` of a grouped queue made by `method`.
///
/// # Panics
/// If the queue has no such group, or if `limit` steers its max weight.
#[track_caller]
pub(crate) fn steer_group<K, Q, G, S>(
    weights: &mut Weights<GroupTable<K, Q>, S>,
    group: &G,
    limit: Limit,
    method: &str,
) where
    K: Borrow<G> + Eq + Hash + fmt::Debug,
    G: Eq + Hash + fmt::Debug + ?Sized,
    S: Steering,
{
    let groups = weights.grouping_mut();
    if groups.group(group).is_none() {
        panic!(
            "{method}: group_limit: unknown group {group:?} (the groups are {:?})",
            groups.keys()
        );
    }
    if weights.steered_by(&limit) {
        panic!(
            "{method}: group_limit: the limit given to group {group:?} steers the queue's max \
             weight already (a future of the group would count its weight against it twice)"
        );
    }
    let seat = limit.attach();
    let steered = weights.grouping_mut().steer(group, seat);
    debug_assert!(steered, "the group was just found");
}

/// Starts `future` in a free slot of `arena`.
fn insert<Fut: Future>(arena: &mut GrowableArena<Slot<Fut>>, charge: Charge, future: Fut) {
    arena.insert(Slot {
        state: FutureOrOutput::Running(future),
        charge,
    });
}

/// Stream for [`BufferExt::future_queue`](crate::BufferExt::future_queue): runs the futures
/// of a source of `(weight, future)` pairs at once while the sum of their weights stays
/// within a max weight, and yields their outputs in the order they finish.
///
/// The contract of the `future-queue` crate's adapter of this name:
///
/// - The weights of the futures running add up to the max weight at most. A weight above the
///   max weight counts as the max weight; a weight of 0 counts nothing, so such a future
///   always starts when its turn comes.
/// - Futures start in the order the source gives them: when the next one does not fit, no
///   later one starts before it.
/// - With all weights 1, it is [`unordered_buffer(max_weight)`](crate::BufferExt::unordered_buffer).
///
/// Wakes, fairness and panics are the crate's ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)); so are the end of the stream and
/// `size_hint` ([*The adapters and the sets*](crate#the-adapters-and-the-sets)), which also
/// counts the future taken from the source and waiting for room.
///
/// # Order
///
/// An output comes out as soon as its future finishes, in the poll that finishes it; the
/// weight it frees is refilled from the source in the same poll.
///
/// # Memory
///
/// The futures run in a growable arena ([`GrowableArena`]), allocated when the first one
/// starts and grown as more run at once, never per future: futures of weight 1 or more run at
/// most `max_weight` at once, and those of weight 0 as many as the source gives, so that they
/// never wait for a slot. Beside the arena, one future from the source waits in the queue when
/// it does not fit. An output that finished while the queue was
/// [driven](ProgressStream::poll_progress) waits in its future's slot, still counting its
/// weight, until it is taken, so the weight of what runs and what waits stays within the max
/// weight.
///
/// # Panics
///
/// A future whose poll or `Drop` panics is gone, and its weight is free again; the panic
/// propagates out of the call, and the queue goes on with the other futures. The future that
/// waits for room is dropped as a `Vec`'s values are: if its `Drop` panics while another panic
/// unwinds (the queue dropped because of that panic), the process aborts.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct FutureQueue<St, S = Fixed>
where
    St: Stream,
    St::Item: WeightedFuture,
{
    #[pin]
    queue: Queue<St, <St::Item as WeightedFuture>::Future, Ungrouped, S>,
}

impl<St> FutureQueue<St>
where
    St: Stream,
    St::Item: WeightedFuture,
{
    #[track_caller]
    pub(crate) fn new(source: St, max_weight: usize) -> Self {
        assert!(
            max_weight > 0,
            "future_queue: max_weight must be greater than 0"
        );
        Self {
            queue: Queue::new(
                source,
                Weights::new(max_weight, Ungrouped, Fixed),
                Untagged::new(),
            ),
        }
    }
}

impl<St, S> FutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    /// Lets `limit` set the max weight while the queue runs, within the max weight the queue
    /// was made with: see [`Limit`] for what lowering and raising it do. A weight above the
    /// limit counts as the limit, as read when the future's turn comes.
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
    ///     stream::iter(1..=3u32)
    ///         .map(|n| (2, async move { n }))
    ///         .future_queue(8)
    ///         .limit(limit)
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3]); // one of weight 2 at a time
    /// ```
    #[track_caller]
    pub fn limit(self, limit: Limit) -> FutureQueue<St, Steered> {
        let limit = limit.attach();
        FutureQueue {
            queue: self.queue.with_limit(limit),
        }
    }

    /// The max weight the queue was made with.
    pub fn max_weight(&self) -> usize {
        self.queue.weights.max_weight()
    }

    /// The weight of the futures running (and of the outputs waiting to be taken).
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

    /// The source stream; the futures running or waiting are dropped.
    pub fn into_inner(self) -> St {
        self.queue.source
    }
}

impl<St, S> Stream for FutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    type Item = <<St::Item as WeightedFuture>::Future as Future>::Output;

    /// An output spends a unit of tokio's budget (with the `tokio-coop` feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let queue = self.project().queue;
        pinfold_arena::coop::poll_output(cx, |cx| queue.poll_queued(cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.queue.size_hint()
    }
}

impl<St, S> FusedStream for FutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.queue.is_terminated()
    }
}

impl<St, S> ProgressStream for FutureQueue<St, S>
where
    St: Stream,
    St::Item: WeightedFuture,
    S: Steering,
{
    /// A future that finishes keeps its output, and its weight, in its slot until `poll_next`
    /// takes it, so the weight of the futures running and of the outputs waiting stays within
    /// the max weight; outputs come out in the order they finished.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().queue.poll_progress(cx)
    }
}

impl<St, S> fmt::Debug for FutureQueue<St, S>
where
    St: Stream + fmt::Debug,
    St::Item: WeightedFuture,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("FutureQueue");
        self.queue.fmt_fields(&mut f);
        f.finish()
    }
}

/// Stream for [`BufferExt::future_queue_grouped`](crate::BufferExt::future_queue_grouped):
/// [`FutureQueue`], where each future may also name a group, with a max weight of its own.
///
/// The contract of the `future-queue` crate's adapter of this name:
///
/// - The weights of the futures running add up to the max weight at most, and those of each
///   group's futures to the group's max weight at most: a future in a group counts against
///   both. A weight above a max weight counts as that max weight (against the max weight, and
///   against the group's); a weight of 0 counts nothing.
/// - Futures start in the order the source gives them: when the next one does not fit the max
///   weight, no later one starts before it. One that fits the max weight but not its group's
///   waits in its group's queue, and the source goes on.
/// - Within a group, futures start in the order they were queued, and the group's futures
///   from the source join the back of its queue while it is not empty; the queue stops at its
///   first future that does not fit (a smaller one behind it waits too).
/// - When a future finishes, the weight it frees goes first to its own group's queue, then to
///   the other groups' queues (each in turn, from the group after its own), then to the
///   source.
///
/// [`limit`](Self::limit) steers the max weight while the queue runs, and
/// [`group_limit`](Self::group_limit) a group's, each within the one it was made with.
///
/// Wakes, fairness and panics are the crate's ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)); so are the end of the stream and
/// `size_hint` ([*The adapters and the sets*](crate#the-adapters-and-the-sets)), which also
/// counts the futures waiting in the groups' queues.
///
/// # Order
///
/// An output comes out as soon as its future finishes, in the poll that finishes it; the
/// weight it frees is refilled, as above, in the same poll.
///
/// # Memory
///
/// As [`FutureQueue`]'s: a growable arena of the futures running, with no allocation per
/// future. The futures that wait for their group's room wait in that group's queue (a
/// `VecDeque`, grown to the most that waited at once); the groups are in a hash table from
/// key to group, made when the queue is made.
///
/// # Panics
///
/// A future whose poll or `Drop` panics is gone, and its weight (and its group's) is free
/// again; the panic propagates out of the call, and the queue goes on with the other futures.
/// An item that names a group the queue does not have panics when it is taken from the source,
/// with a message that names the group and the queue's groups; the item's future is dropped,
/// and the queue goes on with the next item. The futures waiting in the groups' queues are
/// dropped as a `Vec`'s values are: if one's `Drop` panics while another panic unwinds (the
/// queue dropped because of it, or a waiting future's `Drop` before it), the process aborts.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct FutureQueueGrouped<St, K, S = Fixed>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
{
    #[pin]
    queue: Queue<St, GroupedFuture<St>, GroupTable<K, GroupedFuture<St>>, S>,
}

/// The future of a [`FutureQueueGrouped`]'s source's items.
type GroupedFuture<St> = <<St as Stream>::Item as GroupedWeightedFuture>::Future;

impl<St, K> FutureQueueGrouped<St, K>
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
            "future_queue_grouped: max_weight must be greater than 0"
        );
        let groups = GroupTable::new(groups, "future_queue_grouped");
        Self {
            queue: Queue::new(
                source,
                Weights::new(max_weight, groups, Fixed),
                Untagged::new(),
            ),
        }
    }
}

impl<St, K, S> FutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    /// Lets `limit` set the max weight while the queue runs, within the max weight the queue
    /// was made with, as [`FutureQueue::limit`]; the groups' max weights are steered by
    /// [`group_limit`](Self::group_limit), not by this.
    ///
    /// # Panics
    /// If `limit` (or a clone of it) steers one of the queue's groups: a future of that group
    /// would count its weight against it twice (the message names the group). Without the
    /// `std` feature, if `limit` already steers a buffer, this one's other handle included.
    /// With `std` a limit steers any number of buffers (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)).
    #[track_caller]
    pub fn limit(self, limit: Limit) -> FutureQueueGrouped<St, K, Steered> {
        refuse_group_limit(&self.queue.weights, &limit, "future_queue_grouped");
        let limit = limit.attach();
        FutureQueueGrouped {
            queue: self.queue.with_limit(limit),
        }
    }

    /// Lets `limit` set the max weight of group `group` while the queue runs, within the max
    /// weight the group was made with, as [`limit`](Self::limit) does for the queue's: a weight
    /// above the limit counts as the limit, as read when the future's turn comes; lowering it
    /// stops the group's next futures until what runs fits, and raising it starts them. The
    /// weight the group's futures run counts against the limit at once. One limit may steer
    /// several groups, of one queue or of several, as one budget (see
    /// [*A shared budget*](crate::Limit#a-shared-budget)), and an [`Adaptive`](crate::Adaptive)
    /// may set it; not the max weight and a group of one queue at once. A limit given to a
    /// group that has one replaces it.
    ///
    /// # Panics
    /// If the queue has no group `group` (the message names it and the queue's groups). If
    /// `limit` (or a clone of it) steers the queue's max weight: a future of the group would
    /// count its weight against it twice. Without the `std` feature, if `limit` already steers
    /// a buffer or a group.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::{BufferExt, Limit};
    ///
    /// let db = Limit::new(1);
    /// let outputs: Vec<u32> = futures::executor::block_on(
    ///     stream::iter(1..=3u32)
    ///         .map(|n| (1, Some("db"), async move { n }))
    ///         .future_queue_grouped(8, [("db", 4)])
    ///         .group_limit("db", db.clone())
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3]); // one at a time in group "db"
    /// assert_eq!(db.in_use(), 0);
    /// ```
    #[track_caller]
    pub fn group_limit<Q>(mut self, group: &Q, limit: Limit) -> Self
    where
        K: Borrow<Q>,
        Q: Eq + Hash + fmt::Debug + ?Sized,
    {
        steer_group(
            &mut self.queue.weights,
            group,
            limit,
            "future_queue_grouped",
        );
        self
    }

    /// The max weight the queue was made with.
    pub fn max_global_weight(&self) -> usize {
        self.queue.weights.max_weight()
    }

    /// The weight of the futures running (and of the outputs waiting to be taken).
    pub fn current_global_weight(&self) -> usize {
        self.queue.weights.running_weight()
    }

    /// The max weight of group `group`, if the queue has that group.
    pub fn max_group_weight<Q>(&self, group: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        Some(self.queue.weights.grouping().group(group)?.max_weight())
    }

    /// The weight of group `group`'s futures running (and of their outputs waiting to be
    /// taken), if the queue has that group.
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

    /// The source stream; the futures running or waiting are dropped.
    pub fn into_inner(self) -> St {
        self.queue.source
    }
}

impl<St, K, S> Stream for FutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    type Item = <<St::Item as GroupedWeightedFuture>::Future as Future>::Output;

    /// An output spends a unit of tokio's budget (with the `tokio-coop` feature).
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let queue = self.project().queue;
        pinfold_arena::coop::poll_output(cx, |cx| queue.poll_queued(cx))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.queue.size_hint()
    }
}

impl<St, K, S> FusedStream for FutureQueueGrouped<St, K, S>
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

impl<St, K, S> ProgressStream for FutureQueueGrouped<St, K, S>
where
    St: Stream,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    /// As [`FutureQueue`]'s: an output keeps its weight, and its group's, until it is taken.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().queue.poll_progress(cx)
    }
}

impl<St, K, S> fmt::Debug for FutureQueueGrouped<St, K, S>
where
    St: Stream + fmt::Debug,
    St::Item: GroupedWeightedFuture,
    K: Borrow<<St::Item as GroupedWeightedFuture>::Group> + Eq + Hash + fmt::Debug,
    <St::Item as GroupedWeightedFuture>::Group: Eq + Hash + fmt::Debug,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("FutureQueueGrouped");
        self.queue.fmt_fields(&mut f);
        f.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use std::vec::Vec;

    use futures_util::{StreamExt, stream};
    use pinfold_testkit::rng::XorShift;

    use super::*;

    /// Ported from future-queue 0.4.1's `tests/integration/properties.rs`,
    /// `proptest_future_queue_grouped`, with the check its `set_extra_verify` adds: after each
    /// poll, no group's first queued future fits both its group and the max weight. Random
    /// bursty workloads from fixed seeds; every future finishes.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn no_queued_future_that_fits_is_left_waiting_after_a_poll() {
        let mut rng = XorShift::new(0xEAD5);
        for _ in 0..24 {
            let max = 1 + rng.below(63);
            let groups: Vec<(u8, usize)> = (0..4).map(|g| (g, 1 + rng.below(63))).collect();
            let jobs: Vec<(usize, Option<u8>, u64, u64)> = (0..rng.below(512))
                .map(|_| {
                    let group = [None, Some(0), Some(1), Some(2), Some(3)][rng.below(5)];
                    let arrive = if rng.below(10) < 6 { 0 } else { rng.up_to(19) };
                    (rng.below(8), group, arrive, rng.up_to(999))
                })
                .collect();
            let finished = Arc::new(Mutex::new(0));
            let source = {
                let finished = finished.clone();
                stream::iter(jobs.clone()).then(move |(weight, group, arrive, run)| {
                    let finished = finished.clone();
                    async move {
                        tokio::time::sleep(Duration::from_millis(arrive)).await;
                        let future = async move {
                            tokio::time::sleep(Duration::from_millis(run)).await;
                            *finished.lock().unwrap() += 1;
                        };
                        (weight, group, future)
                    }
                })
            };
            let mut queue = core::pin::pin!(FutureQueueGrouped::new(source, max, groups));
            let checked = stream::poll_fn(|cx| {
                let polled = queue.as_mut().poll_next(cx);
                let weights = &mut queue.as_mut().project().queue.project().weights;
                assert!(
                    !weights.has_startable_queue_head(),
                    "a queued future that fits waits"
                );
                polled
            });
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap()
                .block_on(checked.collect::<Vec<()>>());
            assert_eq!(*finished.lock().unwrap(), jobs.len());
        }
    }
}
