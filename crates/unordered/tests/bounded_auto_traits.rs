//! Auto traits: the set is `Unpin` whatever its futures are, `Send` when they are `Send`, and
//! `Sync` when they are `Send + Sync`. Checked at compile time.

use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::MutexGuard;
use std::task::{Context, Poll};

use pinfold_unordered::FuturesUnorderedBounded;

fn assert_unpin<T: Unpin>() {}
fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}

/// Makes a future type out of any marker type `M`, which sets its auto traits.
struct Marked<M>(M);

impl<M> Future for Marked<M> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// `!Unpin`.
type Pinned = Marked<PhantomPinned>;
/// `Send + !Sync`.
type SendOnly = Marked<Cell<u8>>;
/// `Sync + !Send`.
type SyncOnly = Marked<MutexGuard<'static, u8>>;
/// `Send + Sync`.
type SendSync = Marked<u8>;

#[test]
fn set_is_unpin_even_when_its_futures_are_not() {
    assert_unpin::<FuturesUnorderedBounded<Pinned>>();
    assert_unpin::<FuturesUnorderedBounded<SyncOnly>>();
    // A set of `!Unpin` futures can be polled through `Pin::new`.
    let mut set = FuturesUnorderedBounded::new(1);
    set.push(Marked(PhantomPinned));
    let poll = futures_core::Stream::poll_next(
        Pin::new(&mut set),
        &mut Context::from_waker(futures_task::noop_waker_ref()),
    );
    assert_eq!(poll, Poll::Ready(Some(())));
}

#[test]
fn set_is_send_when_its_futures_are_send() {
    assert_send::<FuturesUnorderedBounded<SendOnly>>();
    assert_send::<FuturesUnorderedBounded<SendSync>>();
    assert_send::<FuturesUnorderedBounded<Marked<(PhantomPinned, Cell<u8>)>>>();
}

#[test]
fn set_is_sync_when_its_futures_are_send_and_sync() {
    assert_sync::<FuturesUnorderedBounded<SendSync>>();
    assert_sync::<FuturesUnorderedBounded<Pinned>>();
}
