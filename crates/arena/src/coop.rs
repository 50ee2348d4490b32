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
/// For a future that makes many outputs in one poll (a join, one per future it completes),
/// checked before each: unlike [`poll_output`], nothing of the budget is held across the
/// values' own polls, so what they spend stays spent.
#[inline(always)]
pub fn may_proceed(cx: &mut Context<'_>) -> bool {
    #[cfg(feature = "tokio-coop")]
    {
        // The unit taken here is given back at once, when the guard drops unspent.
        tokio::task::coop::poll_proceed(cx).is_ready()
    }
    #[cfg(not(feature = "tokio-coop"))]
    {
        let _ = cx;
        true
    }
}

/// Spends a unit of the task's tokio budget on an output just made, if any is left (a value
/// may have spent the last one itself; the next [`may_proceed`] then says so). Without the
/// `tokio-coop` feature, nothing.
#[inline(always)]
pub fn spend(cx: &mut Context<'_>) {
    #[cfg(feature = "tokio-coop")]
    if tokio::task::coop::has_budget_remaining() {
        if let Poll::Ready(progress) = tokio::task::coop::poll_proceed(cx) {
            progress.made_progress();
        }
    }
    #[cfg(not(feature = "tokio-coop"))]
    let _ = cx;
}
