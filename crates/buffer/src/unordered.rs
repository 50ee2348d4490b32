//! [`UnorderedBuffer`]: outputs in the order the futures finish.

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::collections::VecDeque;
use futures_core::{FusedStream, Stream};
use pin_project::pin_project;
use pinfold_arena::unwind::QuietBox;
use pinfold_arena::{Key, Step};

use crate::keep::{Keep, KeepOnUnwind};
use crate::limit::{Fixed, Limit, Steered, Steering};
use crate::progress::ProgressStream;
use crate::running::Running;

/// Stream for [`BufferExt::unordered_buffer`](crate::BufferExt::unordered_buffer): runs up to
/// `concurrency` futures from the source at once and yields their outputs in the order they
/// finish.
///
/// Wakes, fairness and panics are the crate's ([*The shared rules*](crate#the-shared-rules),
/// [*When a future panics*](crate#when-a-future-panics)); so are the end of the stream and
/// `size_hint` ([*The adapters and the sets*](crate#the-adapters-and-the-sets)).
///
/// # Order
///
/// An output comes out as soon as its future finishes, in the poll that finishes it. A slot
/// freed by a finished future is refilled from the source in the same poll.
///
/// # Memory
///
/// The arena for `concurrency` futures is allocated when the adapter is made, and nothing is
/// allocated per future. No output is held, but for those that finished while the adapter was
/// [driven](ProgressStream::poll_progress): each waits in its future's slot (the slot is not
/// refilled until the output is out), and the keys of those slots in a queue that grows to the
/// concurrency at most, allocated when the first such output is kept.
#[pin_project]
#[must_use = "streams do nothing unless polled"]
pub struct UnorderedBuffer<St, S = Fixed>
where
    St: Stream,
    St::Item: Future,
{
    #[pin]
    running: Running<St, FutureOrOutput<St::Item>, S>,
    /// The slots whose futures finished while the adapter was driven, in the order they
    /// finished: one key for each slot that holds an output.
    finished: VecDeque<Key>,
    /// Whether `poll_next` returned `Ready(None)`, and an output kept through a refill that
    /// panicked.
    end: End<<St::Item as Future>::Output>,
}

/// How an [`UnorderedBuffer`] ended, or that it has an output to give before it goes on.
struct End<O> {
    /// The output of a call whose refill panicked (the source's panic, or the task waker's),
    /// for the next call. Boxed on that cold path, so that a drop of the adapter while a panic
    /// unwinds drops it quietly, and its type may still borrow what is declared after the
    /// adapter.
    kept: Option<QuietBox<O>>,
    /// Set when `poll_next` returned `Ready(None)`, and when a refill panicked with an output
    /// kept (so that the next call looks at one flag only).
    terminated: bool,
}

impl<O> KeepOnUnwind for End<O> {
    type Output = O;

    fn keep_on_unwind(self: Pin<&mut Self>, out: O) {
        let end = self.get_mut();
        end.kept = Some(QuietBox::new(out));
        end.terminated = true;
    }
}

/// Refills `running`, then gives `out`, which is kept if the refill unwinds.
#[inline(always)]
fn refill_keeping<St, S>(
    running: Pin<&mut Running<St, FutureOrOutput<St::Item>, S>>,
    out: <St::Item as Future>::Output,
    end: &mut End<<St::Item as Future>::Output>,
    cx: &mut Context<'_>,
) -> <St::Item as Future>::Output
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    Keep::through(Pin::new(end), out, |_| {
        running.refill(cx, usize::MAX, FutureOrOutput::Running);
    })
}

/// A future in its arena slot, or its output once it finished while the adapter was driven
/// (until it is taken). No `Option` around the output: the three states share one tag, which
/// fits in the future's own spare values where it has some (a ready future's output beside
/// it costs no more bytes than the future).
#[pin_project(project = FutureOrOutputProj, project_replace = FutureOrOutputReplace)]
pub(crate) enum FutureOrOutput<F: Future> {
    Running(#[pin] F),
    Finished(F::Output),
    Taken,
}

impl<F: Future> FutureOrOutput<F> {
    /// The output, if the future finished and it was not taken yet.
    pub(crate) fn take_output(self: Pin<&mut Self>) -> Option<F::Output> {
        if !matches!(*self, Self::Finished(_)) {
            return None;
        }
        match self.project_replace(Self::Taken) {
            FutureOrOutputReplace::Finished(out) => Some(out),
            _ => None,
        }
    }
}

impl<St> UnorderedBuffer<St>
where
    St: Stream,
    St::Item: Future,
{
    #[track_caller]
    pub(crate) fn new(source: St, concurrency: usize, method: &str) -> Self {
        assert!(
            concurrency > 0,
            "{method}: concurrency must be greater than 0"
        );
        Self {
            running: Running::new(source, concurrency),
            finished: VecDeque::new(),
            end: End {
                kept: None,
                terminated: false,
            },
        }
    }
}

impl<St, S> UnorderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    /// Lets `limit` set the concurrency while the buffer runs, within the concurrency the
    /// buffer was made with (its capacity): see [`Limit`] for what lowering and raising it do.
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
    /// let limit = Limit::new(1);
    /// let outputs: Vec<u32> = futures::executor::block_on(
    ///     stream::iter(1..=3u32)
    ///         .map(|n| async move { n })
    ///         .unordered_buffer(8)
    ///         .limit(limit)
    ///         .collect(),
    /// );
    /// assert_eq!(outputs, [1, 2, 3]); // one at a time
    /// ```
    #[track_caller]
    pub fn limit(self, limit: Limit) -> UnorderedBuffer<St, Steered> {
        let limit = limit.attach();
        UnorderedBuffer {
            running: self
                .running
                .steer(|steered| steered.with_concurrency(limit)),
            finished: self.finished,
            end: self.end,
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

    /// The source stream; the futures running are dropped.
    pub fn into_inner(self) -> St {
        self.running.into_source()
    }
}

impl<St, S> UnorderedBuffer<St, S>
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
        if this.end.terminated {
            // The output of a call whose refill panicked (the source's panic), if one was kept.
            if let Some(out) = this.end.kept.take() {
                this.end.terminated = false;
                return Poll::Ready(Some(out.into_inner()));
            }
            return Poll::Ready(None);
        }
        // Outputs that finished while the adapter was driven come next, in the order they
        // finished.
        if let Some(key) = this.finished.pop_front() {
            let out = this
                .running
                .as_mut()
                .take_with(key, FutureOrOutput::take_output);
            let out = out.expect("a queued slot holds its output");
            let out = refill_keeping(this.running.as_mut(), out, this.end, cx);
            return Poll::Ready(Some(out));
        }
        this.running
            .as_mut()
            .refill(cx, usize::MAX, FutureOrOutput::Running);
        let mut budget = this.running.as_mut().begin_poll();
        let mut poll = |_, slot: Pin<&mut FutureOrOutput<St::Item>>, cx: &mut Context<'_>| {
            match slot.project() {
                FutureOrOutputProj::Running(fut) => Step::of_future(fut.poll(cx)),
                // Woken after it finished (its future had given its waker away): the output comes
                // from the queue.
                FutureOrOutputProj::Finished(_) | FutureOrOutputProj::Taken => Step::Settled,
            }
        };
        match this
            .running
            .as_mut()
            .poll_output(cx, &mut budget, &mut poll)
        {
            Poll::Ready(Some(out)) => {
                // Its slot is free: start the next future now, not on the next poll, the
                // output kept through it.
                let out = refill_keeping(this.running.as_mut(), out, this.end, cx);
                Poll::Ready(Some(out))
            }
            Poll::Ready(None) => {
                // Nothing runs, and the refill above had room: the source has ended or is
                // `Pending` (and will wake the task).
                if this.running.source_done() {
                    this.end.terminated = true;
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<St, S> ProgressStream for UnorderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    /// A future that finishes keeps its output in its slot until `poll_next` takes it, so the
    /// futures running plus the outputs waiting never exceed the concurrency; outputs come out
    /// in the order they finished.
    fn poll_progress(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        // An output kept through a refill that panicked takes no slot: the futures running
        // still move, and are driven.
        if this.end.terminated && this.end.kept.is_none() {
            return Poll::Ready(());
        }
        this.running
            .as_mut()
            .refill(cx, usize::MAX, FutureOrOutput::Running);
        let mut budget = this.running.as_mut().begin_poll();
        let finished = &mut *this.finished;
        let mut poll = |key, mut slot: Pin<&mut FutureOrOutput<St::Item>>, cx: &mut Context<'_>| {
            let FutureOrOutputProj::Running(fut) = slot.as_mut().project() else {
                return Step::<Infallible>::Settled;
            };
            let Poll::Ready(out) = fut.poll(cx) else {
                return Step::Pending;
            };
            // If the future's `Drop` panics here, the arena drops the slot with the output in
            // it, and the key is not queued.
            slot.project_replace(FutureOrOutput::Finished(out));
            finished.push_back(key);
            Step::Settled
        };
        let polled = this
            .running
            .as_mut()
            .poll_output(cx, &mut budget, &mut poll);
        let stuck = this.running.len() == this.finished.len()
            && (this.running.source_done() || this.running.len() >= this.running.current_limit());
        match polled {
            Poll::Ready(Some(never)) => match never {},
            Poll::Ready(None) if this.running.source_done() => Poll::Ready(()),
            _ if stuck => Poll::Ready(()),
            _ => Poll::Pending,
        }
    }
}

impl<St, S> Stream for UnorderedBuffer<St, S>
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
        if self.end.terminated && self.end.kept.is_none() {
            return (0, Some(0));
        }
        let running = self.running.len() + usize::from(self.end.kept.is_some());
        let (lower, upper) = self.running.source_size_hint();
        (
            lower.saturating_add(running),
            upper.and_then(|upper| upper.checked_add(running)),
        )
    }
}

impl<St, S> FusedStream for UnorderedBuffer<St, S>
where
    St: Stream,
    St::Item: Future,
    S: Steering,
{
    fn is_terminated(&self) -> bool {
        self.end.terminated && self.end.kept.is_none()
    }
}

impl<St, S> fmt::Debug for UnorderedBuffer<St, S>
where
    St: Stream + fmt::Debug,
    St::Item: Future,
    S: Steering,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnorderedBuffer")
            .field("source", self.running.source())
            .field("source_done", &self.running.source_done())
            .field("running", &(self.running.len() - self.finished.len()))
            .field("finished", &self.finished.len())
            .field("concurrency", &self.running.concurrency())
            .field(
                "terminated",
                &(self.end.terminated && self.end.kept.is_none()),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::FutureOrOutput;
    use core::future::Ready;
    use core::mem::size_of;

    #[test]
    fn a_finished_slot_costs_no_more_bytes_than_its_future() {
        // A ready future is an `Option` of its output: the finished and taken states fit in
        // its tag's spare values.
        assert_eq!(
            size_of::<FutureOrOutput<Ready<u64>>>(),
            size_of::<Ready<u64>>()
        );
        assert_eq!(
            size_of::<FutureOrOutput<Ready<(u64, u64)>>>(),
            size_of::<Ready<(u64, u64)>>()
        );
    }
}
