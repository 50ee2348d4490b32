//! Auto traits: a map is `Unpin` whatever its keys and values are, `Send` when they are `Send`,
//! and `Sync` when its keys are `Sync` and its values `Send + Sync` (checked at compile time,
//! by the bounds of the cases); and `!Unpin` futures and keys can be inserted and polled.

mod support;

use std::cell::Cell;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::marker::{PhantomData, PhantomPinned};
use std::pin::Pin;
use std::sync::MutexGuard;
use std::task::{Context, Poll};

use futures_util::future::poll_fn;
use support::{MapUnderTest, both, drain};

both!(
    map_is_unpin_send_and_sync_as_its_keys_and_values_allow,
    unpin_futures_and_keys_are_not_required,
);

/// Makes a future type out of any marker type `M`, which sets its auto traits.
struct Marked<M>(M);

impl<M> Future for Marked<M> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

/// Makes a key type out of any marker type `M`, which sets its auto traits.
struct Key<M>(u8, PhantomData<M>);

impl<M> Clone for Key<M> {
    fn clone(&self) -> Self {
        Self(self.0, PhantomData)
    }
}

impl<M> PartialEq for Key<M> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<M> Eq for Key<M> {}

impl<M> Hash for Key<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// `!Unpin`, `Send + Sync`.
type Pinned = PhantomPinned;
/// `Send + !Sync`.
type SendOnly = Cell<u8>;
/// `Sync + !Send`.
type SyncOnly = MutexGuard<'static, u8>;
/// Neither `Send` nor `Sync`.
type Neither = *const u8;

/// Nothing to run: the bounds are the assertions, checked where the tests name `M`.
fn map_is_unpin_send_and_sync_as_its_keys_and_values_allow<M: MapUnderTest>()
where
    M::Map<Key<Pinned>, Marked<Pinned>>: Unpin + Send + Sync,
    M::Map<Key<Neither>, Marked<Neither>>: Unpin,
    M::Map<Key<SendOnly>, Marked<SendOnly>>: Send,
    M::Map<Key<u8>, Marked<(Pinned, SendOnly)>>: Send,
    M::Map<Key<SyncOnly>, Marked<u8>>: Sync,
    M::Map<Key<u8>, Marked<u8>>: Send + Sync,
{
}

/// A key with a `!Unpin` part: `Hash + Eq + Clone` all the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct PinnedKey(u32, PhantomPinned);

/// `2 n`, from an `async fn` that counts its polls through a `&mut` to its own local, held
/// across two `Pending`s: a `!Unpin` future, which refers to itself while it waits.
async fn doubled(n: u32) -> u32 {
    let mut polls = 0;
    poll_fn(|cx| {
        polls += 1;
        if polls == 3 {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
    assert_eq!(polls, 3);
    2 * n
}

fn unpin_futures_and_keys_are_not_required<M: MapUnderTest>() {
    fn assert_unpin<T: Unpin>(_: &T) {}
    let mut map = M::new();
    for n in 0..3 {
        M::insert(&mut map, PinnedKey(n, PhantomPinned), doubled(n));
    }
    assert_unpin(&map);
    assert!(M::remove(&mut map, &PinnedKey(1, PhantomPinned)));
    let mut outputs = drain(&mut map);
    outputs.sort_unstable();
    assert_eq!(
        outputs,
        [
            (PinnedKey(0, PhantomPinned), 0),
            (PinnedKey(2, PhantomPinned), 4)
        ]
    );
}

fn send_and_sync<T: Send + Sync>(_: &T) {}
fn send_value<T: Send>(_: &T) {}

/// The iterators over a map's entries cross threads as futures-util's do: those that lend
/// `&V` when `V` is `Sync`, those that lend `Pin<&mut V>` or `&mut V` when `V` is `Send`.
#[test]
fn the_iterators_are_send_and_sync_as_their_values_allow() {
    let map: pinfold_map::FutureMap<u32, Marked<MutexGuard<'static, u8>>> =
        pinfold_map::FutureMap::new();
    send_and_sync(&map.iter());
    send_and_sync(&map.values());
    send_and_sync(&map.keys());
    let mut map: pinfold_map::FutureMap<u32, Marked<Cell<u8>>> = pinfold_map::FutureMap::new();
    send_value(&map.iter_pin_mut());
    send_value(&map.iter_mut());
    send_value(&map.values_mut());
}
