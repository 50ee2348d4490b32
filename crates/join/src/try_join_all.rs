//! [`try_join_all`] and the future it returns, [`TryJoinAll`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::future::{FusedFuture, TryFuture};

use crate::join::Join;
use alloc::vec::Vec;

/// Polls every future of `iter` concurrently and completes with all their `Ok` values, in the
/// order of `iter`, or with the first `Err` as soon as one comes.
///
/// `I::Item` is any `Future<Output = Result<T, E>>` ([`TryFuture`] is implemented for every
/// such future). The first error *in time* is returned at once, whatever its position in the
/// input, and every other future and every `Ok` value kept so far is dropped right then,
/// before the error is returned, not when the `TryJoinAll` is dropped. See the
/// [crate documentation](crate) for allocations, cancellation, panics and polling after
/// completion.
///
/// # Panics
/// If `iter` yields `u32::MAX - 1` futures or more (the arena's limit).
///
/// # Example
///
/// ```
/// use pinfold_join::try_join_all;
///
/// async fn parse(s: &str) -> Result<u32, std::num::ParseIntError> {
///     s.parse()
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(try_join_all(["1", "2", "3"].map(parse)).await, Ok(vec![1, 2, 3]));
/// assert!(try_join_all(["1", "two", "3"].map(parse)).await.is_err());
/// # });
/// ```
pub fn try_join_all<I>(iter: I) -> TryJoinAll<I::Item>
where
    I: IntoIterator,
    I::Item: TryFuture,
{
    TryJoinAll {
        join: Join::new(iter.into_iter()),
    }
}

/// The future returned by [`try_join_all`]: every input future's `Ok` value in input order,
/// or the first error.
///
/// `Unpin` whatever `F` is (the futures are pinned in the join's own storage); `Send` if `F`
/// and `F::Ok` are; `Sync` if they are `Sync`.
///
/// Polling it again after it returned `Ready` (`Ok` or `Err`, or after the panic of a
/// future's poll passed through it) panics with the message `TryJoinAll polled after
/// completion`; [`is_terminated`] says when not to. Other panics leave it going on, its error
/// kept if it met one (see the crate docs, *Cancellation and panics*).
///
/// [`is_terminated`]: FusedFuture::is_terminated
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct TryJoinAll<F: TryFuture> {
    join: Join<F, F::Ok, F::Error>,
}

impl<F: TryFuture> Future for TryJoinAll<F> {
    type Output = Result<Vec<F::Ok>, F::Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut()
            .join
            .poll(cx, "TryJoinAll", |fut: Pin<&mut F>, cx| fut.try_poll(cx))
    }
}

impl<F: TryFuture> FromIterator<F> for TryJoinAll<F> {
    /// [`try_join_all`] of the iterator's futures: `iter.collect::<TryJoinAll<_>>()`.
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        try_join_all(iter)
    }
}

impl<F: TryFuture> FusedFuture for TryJoinAll<F> {
    /// `true` once the join has returned (`Ok` or `Err`), or the panic of a future's poll has
    /// passed through it.
    fn is_terminated(&self) -> bool {
        self.join.is_terminated()
    }
}

impl<F: TryFuture> fmt::Debug for TryJoinAll<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.join.fmt_as("TryJoinAll", f)
    }
}
