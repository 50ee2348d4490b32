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
/// The futures are stored in order in one allocation, and polled with the task's waker in the
/// first poll (the first two, up to 32 futures), then each with a waker of its own: after
/// that only the futures whose wakers fired are polled. A finished future is dropped at once
/// and its output kept in its place until the last one finishes. See the
/// [crate documentation](crate) for polls, allocations, cancellation, panics and polling after
/// completion.
///
/// # Panics
/// If `iter` yields `u32::MAX - 1` futures or more (the arena's limit).
///
/// # Example
///
/// ```
/// use pinfold_join::join_all;
///
/// async fn double(n: u32) -> u32 {
///     n * 2
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let doubled = join_all((1..=4).map(double)).await;
/// assert_eq!(doubled, [2, 4, 6, 8]);
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
/// `Unpin` whatever `F` is (the futures are pinned in the join's own storage); `Send` if `F`
/// and `F::Output` are; `Sync` if they are `Sync`.
///
/// Polling it again after it returned `Ready` (or after the panic of a future's poll passed
/// through it) panics with the message `JoinAll polled after completion`; [`is_terminated`]
/// says when not to. Other panics leave it going on (see the crate docs, *Cancellation and
/// panics*).
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
