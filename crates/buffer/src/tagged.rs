//! A future beside its place in the output order, in one arena slot.

use core::future::Future;
use core::pin::Pin;
use core::task::Context;

use pin_project::pin_project;
use pinfold_arena::Step;

/// A future and its place in the input order, stored together in one arena slot.
#[pin_project]
pub(crate) struct Tagged<F> {
    pub(crate) seq: u64,
    #[pin]
    pub(crate) fut: F,
}

impl<F: Future> Tagged<F> {
    /// Polls the future, recording in `polling` which one it is while its poll runs, and, if
    /// it finished, until the caller has its output (the arena drops it first, and its `Drop`
    /// may panic). A panic that leaves `polling` set is this future's; one raised by the task's
    /// waker after a `Pending` is not.
    pub(crate) fn poll_tracked(
        self: Pin<&mut Self>,
        polling: &mut Option<u64>,
        cx: &mut Context<'_>,
    ) -> Step<(u64, F::Output)> {
        let this = self.project();
        *polling = Some(*this.seq);
        let polled = this.fut.poll(cx);
        if polled.is_pending() {
            *polling = None;
        }
        Step::of_future(polled.map(|out| (*this.seq, out)))
    }
}

/// The future's output beside its place, for a queue that polls it as a future.
impl<F: Future> Future for Tagged<F> {
    type Output = (u64, F::Output);

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> core::task::Poll<Self::Output> {
        let this = self.project();
        let seq = *this.seq;
        this.fut.poll(cx).map(|out| (seq, out))
    }
}
