//! tokio's cooperative budget, with the `tokio-coop` feature.
//!
//! A task on a tokio runtime has a budget of units of work per poll (128); tokio's own
//! resources (channels, sockets, timers, `JoinSet`) spend one unit on each value they return
//! and return `Pending` (with the task woken) once it is spent, so that a task that always has
//! work still lets the others run. pinfold's primitives spend one unit on each output they
//! return, through [`poll_output`] (a join, one unit on each future it completes, through
//! [`may_proceed`] and [`spend`]): with the feature, a set whose futures are always ready
//! yields to tokio's scheduler every 128 outputs as `JoinSet` does; without it, nothing of
//! tokio is compiled in, and such a set returns outputs for as long as it is polled (its
//! fairness rule bounds one poll call, not a task's loop over calls).
//!
//! Off a tokio runtime (or outside any task) the budget is unconstrained and this costs a
//! thread-local read.

use core::task::{Context, Poll};

/// Whether tokio's budget is spent at all (the `tokio-coop` feature).
pub const ENABLED: bool = cfg!(feature = "tokio-coop");

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

/// Whether the task may make one more output now: `false` once its tokio budget is spent,
/// and tokio then wakes the task (the caller returns `Pending`, and is polled again after the
/// other tasks had their turn). Spends nothing: [`spend`] does, once the output is made.
/// Without the `tokio-coop` feature, always `true`.
///
/// For a future that makes many outputs in one poll (a join, one per future it completes):
/// checked once when the poll starts, then [`spend`] after each output. Unlike
/// [`poll_output`], nothing of the budget is held across the values' own polls, so what they
/// spend stays spent.
#[inline(always)]
pub fn may_proceed(cx: &mut Context<'_>) -> bool {
    #[cfg(feature = "tokio-coop")]
    {
        // One thread-local read while the budget lasts; once it is spent, `poll_proceed`
        // has tokio wake the task (the unit it would take is none).
        tokio::task::coop::has_budget_remaining() || tokio::task::coop::poll_proceed(cx).is_ready()
    }
    #[cfg(not(feature = "tokio-coop"))]
    {
        let _ = cx;
        true
    }
}

/// Spends a unit of the task's tokio budget on an output just made. `false` if none was left
/// (the values polled since [`may_proceed`] may have spent the last ones themselves): tokio
/// then wakes the task, and the caller keeps the output and returns `Pending` before it polls
/// anything more. One thread-local read and write. Without the `tokio-coop` feature, nothing,
/// and `true`.
#[inline(always)]
#[must_use = "`false` means the caller stops: the task's budget is spent"]
pub fn spend(cx: &mut Context<'_>) -> bool {
    #[cfg(feature = "tokio-coop")]
    {
        match tokio::task::coop::poll_proceed(cx) {
            Poll::Ready(progress) => {
                progress.made_progress();
                true
            }
            Poll::Pending => false,
        }
    }
    #[cfg(not(feature = "tokio-coop"))]
    {
        let _ = cx;
        true
    }
}
