//! Auto traits, checked at compile time: the set is `Unpin` whatever its futures are, `Send`
//! exactly when they are, and `Sync` when they are `Send + Sync` (and not when they are not
//! `Sync`).

use std::cell::Cell;
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use pinfold_unordered::FuturesUnordered;

/// A future that is `!Unpin` (and `Send + Sync`).
struct Pinned(PhantomPinned);

impl Future for Pinned {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// A future that owns a `T` (as far as auto traits go), never ready: `Send` and `Sync` exactly when `T` is.
struct Holding<T>(PhantomData<T>);

impl<T> Future for Holding<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

fn unpin<T: Unpin>() {}
fn send<T: Send>() {}
fn sync<T: Sync>() {}

/// `T::not_send` names an item only if `T` is not `Send`: for a `Send` type the two impls
/// below make the name ambiguous, which fails to compile (the `static_assertions` trick).
trait AmbiguousIfSend<A> {
    fn not_send() {}
}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}

/// As [`AmbiguousIfSend`], for `Sync`.
trait AmbiguousIfSync<A> {
    fn not_sync() {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<u8> for T {}

#[test]
fn the_set_is_unpin_even_when_its_futures_are_not() {
    unpin::<FuturesUnordered<Pinned>>();
    unpin::<FuturesUnordered<Holding<Rc<u8>>>>();
}

#[test]
fn the_set_is_send_when_its_futures_are() {
    send::<FuturesUnordered<Pinned>>();
    send::<FuturesUnordered<Holding<Cell<u8>>>>();
    let _ = <FuturesUnordered<Holding<Rc<u8>>> as AmbiguousIfSend<_>>::not_send;
}

#[test]
fn the_set_is_sync_when_its_futures_are_send_and_sync() {
    sync::<FuturesUnordered<Pinned>>();
    let _ = <FuturesUnordered<Holding<Cell<u8>>> as AmbiguousIfSync<_>>::not_sync;
    let _ = <FuturesUnordered<Holding<Rc<u8>>> as AmbiguousIfSync<_>>::not_sync;
}
