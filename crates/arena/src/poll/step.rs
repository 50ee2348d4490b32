//! What polling one value came to.

use core::task::Poll;

/// What polling a value came to; returned by the closure given to the arenas' `poll_next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<R> {
    /// No output: the value is polled again once its waker fires.
    Pending,
    /// An output; the value stays in its slot and is polled again only when its waker fires
    /// (a finished value kept for later, such as a join's output).
    Keep(R),
    /// An output; the value stays and is polled again in the next round without a wake (a
    /// stream that may have more items ready).
    Repoll(R),
    /// An output; the value is dropped in place and its slot freed before the output is handed
    /// on (a finished future).
    Done(R),
    /// No output handed on: the value has settled (it keeps what it made, such as a join's
    /// finished output), is polled again only when its waker fires, and the round goes on to
    /// the next woken value. Unlike `Pending`, never counted against the round's budget.
    Settled,
}

impl<R> Step<R> {
    /// The step of a future: `Done` when it is ready, `Pending` otherwise.
    pub fn of_future(poll: Poll<R>) -> Self {
        match poll {
            Poll::Ready(out) => Step::Done(out),
            Poll::Pending => Step::Pending,
        }
    }
}

impl<I> Step<Option<I>> {
    /// The step of a stream: `Repoll` with each item, `Done(None)` at its end, `Pending`
    /// otherwise.
    pub fn of_stream(poll: Poll<Option<I>>) -> Self {
        match poll {
            Poll::Ready(Some(item)) => Step::Repoll(Some(item)),
            Poll::Ready(None) => Step::Done(None),
            Poll::Pending => Step::Pending,
        }
    }
}
