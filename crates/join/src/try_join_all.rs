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
/// before the error is returned, not when the `TryJoinAll` is dropped. Otherwise it is
/// [`join_all`](crate::join_all): the crate documentation states the contract,
/// [*The shared rules*](crate#the-shared-rules), [*Polls and wakes*](crate#polls-and-wakes),
/// [*Allocations*](crate#allocations), [*Cancellation*](crate#cancellation) and
/// [*When user code panics*](crate#when-user-code-panics).
///
/// # Panics
/// If `iter` yields `u32::MAX - 1` futures or more (the arena's limit).
///
/// # Example
///
/// Input 2 fails in the first poll; the three others would never finish. The error comes
/// back from that poll, and every future has been dropped by then, while the join itself is
/// still alive:
///
/// ```
/// use std::cell::Cell;
/// use std::future::{Future, pending};
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use pinfold::try_join_all;
///
/// /// Counts its drops: one per input future dropped.
/// struct Dropped<'a>(&'a Cell<u32>);
///
/// impl Drop for Dropped<'_> {
///     fn drop(&mut self) {
///         self.0.set(self.0.get() + 1);
///     }
/// }
///
/// // The future owns its `Dropped` from the start, also if it is never polled.
/// async fn input(id: u32, _dropped: Dropped<'_>) -> Result<u32, String> {
///     if id == 2 {
///         return Err(format!("input {id} failed"));
///     }
///     pending().await
/// }
///
/// let drops = Cell::new(0);
/// let mut join = pin!(try_join_all((0..4).map(|id| input(id, Dropped(&drops)))));
/// let mut cx = Context::from_waker(Waker::noop());
/// assert_eq!(join.as_mut().poll(&mut cx), Poll::Ready(Err("input 2 failed".to_string())));
/// assert_eq!(drops.get(), 4);
///
/// // Without an error, the `Ok` values come in input order.
/// async fn parse(s: &str) -> Result<u32, std::num::ParseIntError> {
///     s.parse()
/// }
/// let parsed = futures::executor::block_on(try_join_all(["1", "2", "3"].map(parse)));
/// assert_eq!(parsed, Ok(vec![1, 2, 3]));
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
/// Its guarantees are the crate's: [*The shared rules*](crate#the-shared-rules),
/// [*Polls and wakes*](crate#polls-and-wakes), [*Allocations*](crate#allocations),
/// [*Cancellation*](crate#cancellation) and [*When user code panics*](crate#when-user-code-panics).
///
/// `Unpin` whatever `F` is (the futures are pinned in the join's own storage); `Send` if `F`,
/// `F::Ok` and `F::Error` are (an error is kept until the join gives it); `Sync` if they are
/// `Sync`.
///
/// # Panics
///
/// A panic in a future's poll ends the join; a panic anywhere else (a `Drop`, the task's
/// waker) leaves it consistent, its error kept if it met one, and polling it again completes
/// it. Polling it again after it returned `Ready` (`Ok` or `Err`), or after the panic of a
/// future's poll passed through it, panics with the message `TryJoinAll polled after
/// completion`; [`is_terminated`] says when not to.
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
