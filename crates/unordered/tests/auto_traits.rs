//! Auto traits, checked at compile time on both sets: the set is `Unpin` whatever its futures
//! are, `Send` exactly when they are, and `Sync` when they are `Send + Sync` (and not when they
//! are not `Sync`). A set of futures that are not `Unpin` is polled through `Pin::new`.

use std::cell::Cell;
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::MutexGuard;
use std::task::{Context, Poll};

use pinfold_arena::Storage;
use pinfold_testkit::auto_traits::{AmbiguousIfSend, AmbiguousIfSync, send, sync, unpin};
use pinfold_unordered::{FuturesUnordered, FuturesUnorderedBounded, UnorderedSet};

/// A future that is `!Unpin` (and `Send + Sync`).
struct Pinned(PhantomPinned);

impl Future for Pinned {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// A future that owns a `T` (as far as auto traits go), never ready: `Send` and `Sync` exactly
/// when `T` is.
struct Holding<T>(PhantomData<T>);

impl<T> Future for Holding<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// Makes a future type out of any marker type `M`, which sets its auto traits; ready at once.
struct Marked<M>(M);

impl<M> Future for Marked<M> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// `Send + !Sync`.
type SendOnly = Marked<Cell<u8>>;
/// `Sync + !Send`.
type SyncOnly = Marked<MutexGuard<'static, u8>>;
/// `Send + Sync`.
type SendSync = Marked<u8>;

#[test]
fn the_set_is_unpin_even_when_its_futures_are_not() {
    unpin::<FuturesUnordered<Pinned>>();
    unpin::<FuturesUnordered<Holding<Rc<u8>>>>();
    unpin::<FuturesUnordered<SyncOnly>>();

    unpin::<FuturesUnorderedBounded<Pinned>>();
    unpin::<FuturesUnorderedBounded<Holding<Rc<u8>>>>();
    unpin::<FuturesUnorderedBounded<SyncOnly>>();
}

#[test]
fn the_set_is_send_when_its_futures_are() {
    send::<FuturesUnordered<Pinned>>();
    send::<FuturesUnordered<Holding<Cell<u8>>>>();
    send::<FuturesUnordered<SendOnly>>();
    send::<FuturesUnordered<SendSync>>();
    send::<FuturesUnordered<Marked<(PhantomPinned, Cell<u8>)>>>();
    let _ = <FuturesUnordered<Holding<Rc<u8>>> as AmbiguousIfSend<_>>::not_send;

    send::<FuturesUnorderedBounded<Pinned>>();
    send::<FuturesUnorderedBounded<Holding<Cell<u8>>>>();
    send::<FuturesUnorderedBounded<SendOnly>>();
    send::<FuturesUnorderedBounded<SendSync>>();
    send::<FuturesUnorderedBounded<Marked<(PhantomPinned, Cell<u8>)>>>();
    let _ = <FuturesUnorderedBounded<Holding<Rc<u8>>> as AmbiguousIfSend<_>>::not_send;
}

#[test]
fn the_set_is_sync_when_its_futures_are_send_and_sync() {
    sync::<FuturesUnordered<Pinned>>();
    sync::<FuturesUnordered<SendSync>>();
    let _ = <FuturesUnordered<Holding<Cell<u8>>> as AmbiguousIfSync<_>>::not_sync;
    let _ = <FuturesUnordered<Holding<Rc<u8>>> as AmbiguousIfSync<_>>::not_sync;

    sync::<FuturesUnorderedBounded<Pinned>>();
    sync::<FuturesUnorderedBounded<SendSync>>();
    let _ = <FuturesUnorderedBounded<Holding<Cell<u8>>> as AmbiguousIfSync<_>>::not_sync;
    let _ = <FuturesUnorderedBounded<Holding<Rc<u8>>> as AmbiguousIfSync<_>>::not_sync;
}

/// Pushes a future that is not `Unpin` into `set` (empty) and polls the set through
/// `Pin::new`: the future's output comes.
fn poll_a_pinned_future_through_pin_new<A, S>(mut set: S)
where
    A: Storage<Marked<PhantomPinned>>,
    S: core::ops::DerefMut<Target = UnorderedSet<Marked<PhantomPinned>, A>>
        + futures_core::Stream<Item = ()>
        + Unpin,
{
    set.push(Marked(PhantomPinned));
    let poll = futures_core::Stream::poll_next(
        Pin::new(&mut set),
        &mut Context::from_waker(futures_task::noop_waker_ref()),
    );
    assert_eq!(poll, Poll::Ready(Some(())));
}

#[test]
fn a_set_of_pinned_futures_is_polled_through_pin_new() {
    poll_a_pinned_future_through_pin_new(FuturesUnordered::new());
}

/// The bounded set's own run of the cases above that run code.
mod bounded {
    use pinfold_unordered::FuturesUnorderedBounded;

    #[test]
    fn a_set_of_pinned_futures_is_polled_through_pin_new() {
        super::poll_a_pinned_future_through_pin_new(FuturesUnorderedBounded::new(1));
    }
}

/// Whether the value's type is `Send` and `Sync`, checked where it is named.
fn send_and_sync<T: Send + Sync>(_: &T) {}
fn send_value<T: Send>(_: &T) {}

/// The iterators over a set's futures cross threads as futures-util's do: one that lends `&F`
/// when `F` is `Sync`, one that lends `Pin<&mut F>` or `&mut F` when `F` is `Send` (and is
/// `Sync` when `F` is), one that moves the futures out when `F` is `Send`.
#[test]
fn the_iterators_are_send_and_sync_as_their_futures_allow() {
    let mut growable: FuturesUnordered<SendSync> = FuturesUnordered::new();
    let mut bounded: FuturesUnorderedBounded<SendSync> = FuturesUnorderedBounded::new(1);
    send_and_sync(&growable.iter());
    send_and_sync(&bounded.iter());
    send_and_sync(&growable.iter_pin_mut());
    send_and_sync(&bounded.iter_pin_mut());
    send_and_sync(&growable.iter_pin_mut_keyed());
    send_and_sync(&bounded.iter_pin_mut_keyed());
    send_and_sync(&growable.iter_mut());
    send_and_sync(&bounded.iter_mut());
    send_and_sync(&growable.into_iter());
    send_and_sync(&bounded.into_iter());

    // `&F` crosses threads when `F` is `Sync`, even if `F` is not `Send`.
    let growable: FuturesUnordered<SyncOnly> = FuturesUnordered::new();
    let bounded: FuturesUnorderedBounded<SyncOnly> = FuturesUnorderedBounded::new(1);
    send_and_sync(&growable.iter());
    send_and_sync(&bounded.iter());

    // `Pin<&mut F>` and `&mut F` cross threads when `F` is `Send`, even if `F` is not `Sync`.
    let mut growable: FuturesUnordered<SendOnly> = FuturesUnordered::new();
    let mut bounded: FuturesUnorderedBounded<SendOnly> = FuturesUnorderedBounded::new(1);
    send_value(&growable.iter_pin_mut());
    send_value(&bounded.iter_pin_mut());
    send_value(&growable.iter_mut());
    send_value(&bounded.iter_mut());
}
