//! [`join_all`] and the future it returns, [`JoinAll`].

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::future::FusedFuture;

use crate::join::Join;
use alloc::vec::Vec;

/// Polls every future of `iter` concurrently and completes with all their outputs, in the
/// order of `iter`.
///
/// The futures are stored in order in one allocation and polled with the task's waker in the
/// first poll (the first two, up to 32 futures), then each with a waker of its own: after
/// that only the futures whose wakers fired are polled. A finished future is dropped at once
/// and its output kept in its place until the last one finishes. The crate documentation
/// states the contract: [*The shared rules*](crate#the-shared-rules),
/// [*Polls and wakes*](crate#polls-and-wakes), [*Allocations*](crate#allocations),
/// [*Cancellation*](crate#cancellation) and [*When user code panics*](crate#when-user-code-panics).
///
/// # Panics
/// If `iter` yields `u32::MAX - 1` futures or more (the arena's limit).
///
/// # Example
///
/// The futures finish in the reverse of their input order; the outputs come in input order.
///
/// ```
/// use std::cell::RefCell;
/// use pinfold::join_all;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let finished = RefCell::new(Vec::new());
/// let outputs = join_all((0..3u32).map(|id| {
///     let finished = &finished;
///     async move {
///         // Input `id` yields `2 - id` times: input 2 finishes first.
///         for _ in id..2 {
///             tokio::task::yield_now().await;
///         }
///         finished.borrow_mut().push(id);
///         id * 10
///     }
/// }))
/// .await;
/// assert_eq!(*finished.borrow(), [2, 1, 0]);
/// assert_eq!(outputs, [0, 10, 20]);
/// # });
/// ```
pub fn join_all<I>(iter: I) -> JoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: Future,
{
    JoinAll {
        join: Join::new(iter.into_iter()),
    }
}

/// The future returned by [`join_all`]: every input future's output, in input order.
///
/// Its guarantees are the crate's: [*The shared rules*](crate#the-shared-rules),
/// [*Polls and wakes*](crate#polls-and-wakes), [*Allocations*](crate#allocations),
/// [*Cancellation*](crate#cancellation) and [*When user code panics*](crate#when-user-code-panics).
///
/// `Unpin` whatever `F` is (the futures are pinned in the join's own storage); `Send` if `F`
/// and `F::Output` are; `Sync` if they are `Sync`.
///
/// # Panics
///
/// A panic in a future's poll ends the join; a panic anywhere else (a `Drop`, the task's
/// waker) leaves it consistent, and polling it again completes it. Polling it again after it
/// returned `Ready`, or after the panic of a future's poll passed through it, panics with the
/// message `JoinAll polled after completion`; [`is_terminated`] says when not to.
///
/// # Example
///
/// A `JoinAll` is also collected from an iterator of futures:
///
/// ```
/// use futures::future::FusedFuture;
/// use pinfold::JoinAll;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut join: JoinAll<_> = (1..=3u32).map(|n| async move { n * n }).collect();
/// assert!(!join.is_terminated());
/// assert_eq!((&mut join).await, [1, 4, 9]);
/// assert!(join.is_terminated()); // polling it again would panic
/// # });
/// ```
///
/// [`is_terminated`]: FusedFuture::is_terminated
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct JoinAll<F: Future> {
    join: Join<F, F::Output, Infallible>,
}

impl<F: Future> Future for JoinAll<F> {
    type Output = Vec<F::Output>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<F::Output>> {
        let polled = self
            .get_mut()
            .join
            .poll(cx, "JoinAll", |fut: Pin<&mut F>, cx| {
                fut.poll(cx).map(Ok::<_, Infallible>)
            });
        polled.map(|outputs| match outputs {
            Ok(outputs) => outputs,
            Err(never) => match never {},
        })
    }
}

impl<F: Future> FromIterator<F> for JoinAll<F> {
    /// [`join_all`] of the iterator's futures: `iter.collect::<JoinAll<_>>()`.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        join_all(iter)
    }
}

impl<F: Future> FusedFuture for JoinAll<F> {
    /// `true` once the join has returned its outputs, or the panic of a future's poll has
    /// passed through it.
    fn is_terminated(&self) -> bool {
        self.join.is_terminated()
    }
}

impl<F: Future> fmt::Debug for JoinAll<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.join.fmt_as("JoinAll", f)
    }
}
