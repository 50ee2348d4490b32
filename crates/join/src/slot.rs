//! What one arena slot of a join holds: the input future while it runs, then its output.

use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project::pin_project;
use pinfold_arena::Step;

/// One input of a join, in the arena slot whose index is its position in the input.
///
/// A slot starts `Running`. When its future finishes, [`poll`](Slot::poll) drops the future in
/// place and keeps its output in the same slot (`Done`), so finished outputs need no storage of
/// their own. When every slot is `Done`, the outputs are moved out in input order and the
/// slots left `Taken`.
#[pin_project(project = SlotProj, project_replace = SlotOwn)]
pub(crate) enum Slot<F, T> {
    /// The future, still running.
    Running(#[pin] F),
    /// Its output, kept until every future has finished.
    Done(T),
    /// The output was moved out.
    Taken,
}

impl<F, T> Slot<F, T> {
    /// Polls a running future with `poll`. On `Ok` the future is dropped in place and the output
    /// kept in the slot (`Step::Keep(Ok(()))`: the slot is never polled again unless a stale
    /// waker fires); on `Err` the error is handed on and the slot freed (`Step::Done`). A
    /// finished slot polled by a stale wake does nothing.
    pub(crate) fn poll<E, P>(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: &mut P,
    ) -> Step<Result<(), E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        match self.as_mut().poll_output(cx, poll) {
            Err(None) => Step::Pending,
            Ok(out) => {
                // Drops the future in place (the output is written even if that drop panics).
                self.project_replace(Slot::Done(out));
                Step::Keep(Ok(()))
            }
            Err(Some(err)) => Step::Done(Err(err)),
        }
    }

    /// Polls a running future with `poll` for [`Fixed::fill_in_place`]: its output as `Ok` (the
    /// slot is left as it is, `Running`, for the arena to drop in place), `Err(None)` if it is
    /// pending, `Err(Some(err))` at an error. A slot that is not running gives `Err(None)`.
    ///
    /// [`Fixed::fill_in_place`]: pinfold_arena::Fixed::fill_in_place
    #[inline]
    pub(crate) fn poll_output<E, P>(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: &mut P,
    ) -> Result<T, Option<E>>
    where
        P: FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<Result<T, E>>,
    {
        let SlotProj::Running(fut) = self.project() else {
            return Err(None);
        };
        match poll(fut, cx) {
            Poll::Pending => Err(None),
            Poll::Ready(Ok(out)) => Ok(out),
            Poll::Ready(Err(err)) => Err(Some(err)),
        }
    }

    /// Whether the future is still running. Takes the slot pinned and mutable, not shared: a
    /// shared reference covering a pending future that borrows itself would take that
    /// borrow's permission away.
    pub(crate) fn is_running(self: Pin<&mut Self>) -> bool {
        matches!(self.project(), SlotProj::Running(_))
    }

    /// Drops the future or the output in place now, leaving the slot `Taken` (even if that
    /// drop panics).
    pub(crate) fn clear(self: Pin<&mut Self>) {
        self.project_replace(Slot::Taken);
    }

    /// Moves the output out, leaving the slot `Taken`; `None` if the slot holds no output.
    pub(crate) fn take_output(mut self: Pin<&mut Self>) -> Option<T> {
        if !matches!(self.as_mut().project(), SlotProj::Done(_)) {
            return None;
        }
        match self.project_replace(Slot::Taken) {
            SlotOwn::Done(out) => Some(out),
            SlotOwn::Running(_) | SlotOwn::Taken => None,
        }
    }
}
