//! What differs between the two maps: how a value is polled ([`Futures`] or [`Streams`]).

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::Stream;
use pinfold_arena::PollKind;
pub use pinfold_arena::{Futures, Streams};

/// What polling a value gave.
#[derive(Debug)]
pub enum Polled<T> {
    /// No output: the value is polled again once its waker fires.
    Pending,
    /// An output; the value stays (a stream's item).
    Item(T),
    /// The value's last output; it leaves (a future's).
    Last(T),
    /// The value ended without an output; it leaves (a stream's end).
    End,
}

/// How a map polls its values of type `V`: implemented by [`Futures`] and [`Streams`] only.
pub trait ValueKind<V> {
    /// What a value gives: a future's output or a stream's item.
    type Output;
    /// The map's name, for `Debug`.
    const NAME: &'static str;

    /// Polls one value.
    fn poll(value: Pin<&mut V>, cx: &mut Context<'_>) -> Polled<Self::Output>;

    /// The bounds on the outputs still to come from `values`.
    fn size_hint<'a>(len: usize, values: impl Iterator<Item = &'a V>) -> (usize, Option<usize>)
    where
        V: 'a;
}

impl<F: Future> ValueKind<F> for Futures {
    type Output = F::Output;
    const NAME: &'static str = "FutureMap";

    #[inline]
    fn poll(value: Pin<&mut F>, cx: &mut Context<'_>) -> Polled<F::Output> {
        match value.poll(cx) {
            Poll::Ready(out) => Polled::Last(out),
            Poll::Pending => Polled::Pending,
        }
    }

    /// One output per future.
    fn size_hint<'a>(len: usize, _: impl Iterator<Item = &'a F>) -> (usize, Option<usize>)
    where
        F: 'a,
    {
        (len, Some(len))
    }
}

impl<S: Stream> ValueKind<S> for Streams {
    type Output = S::Item;
    const NAME: &'static str = "StreamMap";

    #[inline]
    fn poll(value: Pin<&mut S>, cx: &mut Context<'_>) -> Polled<S::Item> {
        match value.poll_next(cx) {
            Poll::Ready(Some(item)) => Polled::Item(item),
            Poll::Ready(None) => Polled::End,
            Poll::Pending => Polled::Pending,
        }
    }

    /// The sum of the streams' hints (this looks at every stream), as a merge's.
    fn size_hint<'a>(len: usize, values: impl Iterator<Item = &'a S>) -> (usize, Option<usize>)
    where
        S: 'a,
    {
        <Streams as PollKind<S>>::size_hint(len, values)
    }
}
