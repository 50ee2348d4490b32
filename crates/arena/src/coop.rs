//! tokio's cooperative budget, with the `tokio-coop` feature.
//!
//! A task on a tokio runtime has a budget of units of work per poll (128); tokio's own
//! resources (channels, sockets, timers, `JoinSet`) spend one unit on each value they return
//! and return `Pending` (with the task woken) once it is spent, so that a task that always has
//! work still lets the others run. pinfold's primitives spend one unit on each output they
//! return, through [`poll_output`]: with the feature, a set whose futures are always ready
//! yields to tokio's scheduler every 128 outputs as `JoinSet` does; without it, nothing of
//! tokio is compiled in, and such a set returns outputs for as long as it is polled (its
//! fairness rule bounds one poll call, not a task's loop over calls).
//!
//! Off a tokio runtime (or outside any task) the budget is unconstrained and this costs a
//! thread-local read.

use core::task::{Context, Poll};

/// Polls for one output with `poll`, spending a unit of the task's tokio budget if it gives
/// one (`Ready(Some(_))`). If the budget is spent, returns `Pending` without calling `poll`;
/// tokio has then woken the task, which is polled again after the others had their turn.
/// Without the `tokio-coop` feature, this is `poll(cx)`.
#[inline(always)]
pub fn poll_output<T>(
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<Option<T>>,
) -> Poll<Option<T>> {
    #[cfg(feature = "tokio-coop")]
    {
        let Poll::Ready(progress) = tokio::task::coop::poll_proceed(cx) else {
            return Poll::Pending;
        };
        let polled = poll(cx);
        if let Poll::Ready(Some(_)) = polled {
            progress.made_progress();
        }
        polled
    }
    #[cfg(not(feature = "tokio-coop"))]
    poll(cx)
}

/// As [`poll_output`], for a future whose one output is its whole result (a join): a unit is
/// spent when the poll is `Ready`.
#[inline(always)]
pub fn poll_once<T>(
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    #[cfg(feature = "tokio-coop")]
    {
        let Poll::Ready(progress) = tokio::task::coop::poll_proceed(cx) else {
            return Poll::Pending;
        };
        let polled = poll(cx);
        if polled.is_ready() {
            progress.made_progress();
        }
        polled
    }
    #[cfg(not(feature = "tokio-coop"))]
    poll(cx)
}
