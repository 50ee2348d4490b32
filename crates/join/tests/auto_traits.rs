//! Auto traits, as the joins' documentation states them: a join is `Unpin` whatever its futures
//! are; `Send` when its futures and their outputs (and a try join's errors) are `Send`; `Sync`
//! when they are `Sync`. Checked at compile time: each call builds only if the type has (or,
//! for `not_*`, has not) the trait.

use std::cell::Cell;
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use pinfold_join::{JoinAll, TryJoinAll};
use pinfold_testkit::auto_traits::{AmbiguousIfSend, AmbiguousIfSync, send, sync, unpin};

/// A future whose auto traits are those of `M`, with output `O` (never given).
struct Marked<M, O>(M, PhantomData<fn() -> O>);

impl<M, O> Future for Marked<M, O> {
    type Output = O;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<O> {
        Poll::Pending
    }
}

#[test]
fn a_join_is_unpin_whatever_its_futures_are() {
    unpin::<JoinAll<Marked<PhantomPinned, u8>>>();
    unpin::<TryJoinAll<Marked<PhantomPinned, Result<u8, u8>>>>();
}

#[test]
fn a_join_is_send_and_sync_when_its_futures_and_outputs_are() {
    send::<JoinAll<Marked<u8, u8>>>();
    sync::<JoinAll<Marked<u8, u8>>>();
    send::<TryJoinAll<Marked<u8, Result<u8, u8>>>>();
    sync::<TryJoinAll<Marked<u8, Result<u8, u8>>>>();
}

#[test]
fn a_join_is_not_send_when_a_future_an_output_or_an_error_is_not() {
    let _ = <JoinAll<Marked<Rc<u8>, u8>> as AmbiguousIfSend<_>>::not_send;
    let _ = <JoinAll<Marked<u8, Rc<u8>>> as AmbiguousIfSend<_>>::not_send;
    let _ = <TryJoinAll<Marked<u8, Result<Rc<u8>, u8>>> as AmbiguousIfSend<_>>::not_send;
    let _ = <TryJoinAll<Marked<u8, Result<u8, Rc<u8>>>> as AmbiguousIfSend<_>>::not_send;
}

#[test]
fn a_join_is_not_sync_when_a_future_an_output_or_an_error_is_not() {
    let _ = <JoinAll<Marked<Cell<u8>, u8>> as AmbiguousIfSync<_>>::not_sync;
    let _ = <JoinAll<Marked<u8, Cell<u8>>> as AmbiguousIfSync<_>>::not_sync;
    let _ = <TryJoinAll<Marked<u8, Result<u8, Cell<u8>>>> as AmbiguousIfSync<_>>::not_sync;
}
