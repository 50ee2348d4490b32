//! Auto traits: a merge is `Unpin` whatever its streams are, `Send` when they are `Send`, and
//! `Sync` when they are `Send + Sync` (checked at compile time, by the bounds of the cases);
//! and `!Unpin` streams can be merged and polled.

mod support;

use std::cell::Cell;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::MutexGuard;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::{StreamExt, stream};
use support::{MergeUnderTest, both, drain_keyed};

both!(
    merge_is_unpin_send_and_sync_as_its_streams_allow,
    unpin_streams_are_not_required,
);

/// Makes a stream type out of any marker type `M`, which sets its auto traits.
struct Marked<M>(M);

impl<M> Stream for Marked<M> {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<()>> {
        Poll::Ready(None)
    }
}

/// `!Unpin`, `Send + Sync`.
type Pinned = Marked<PhantomPinned>;
/// `Send + !Sync`.
type SendOnly = Marked<Cell<u8>>;
/// `Sync + !Send`.
type SyncOnly = Marked<MutexGuard<'static, u8>>;
/// `Send + Sync`.
type SendSync = Marked<u8>;

/// Nothing to run: the bounds are the assertions, checked where the tests name `M`.
fn merge_is_unpin_send_and_sync_as_its_streams_allow<M: MergeUnderTest>()
where
    M::Merge<Pinned>: Unpin + Send + Sync,
    M::Merge<SyncOnly>: Unpin,
    M::Merge<SendOnly>: Send,
    M::Merge<SendSync>: Send + Sync,
    M::Merge<Marked<(PhantomPinned, Cell<u8>)>>: Send,
{
}

/// Counts `0..to`: `stream::unfold` over an async block, which is `!Unpin`.
fn counter(to: u32) -> impl Stream<Item = u32> {
    stream::unfold(0, move |n| async move { (n < to).then_some((n, n + 1)) })
}

fn unpin_streams_are_not_required<M: MergeUnderTest>() {
    fn assert_unpin<T: Unpin>(_: &T) {}
    let mut merged = M::new(2);
    M::insert(&mut merged, counter(3));
    M::insert(&mut merged, counter(2));
    assert_unpin(&merged);
    let mut items: Vec<u32> = drain_keyed::<M, _>(&mut merged)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    items.sort_unstable();
    assert_eq!(items, [0, 0, 1, 1, 2]);

    // Through `StreamExt` too, which needs `Unpin` for `next`.
    M::insert(&mut merged, counter(2));
    let collected: Vec<u32> = futures_executor::block_on(async {
        let mut items = Vec::new();
        while let Some(n) = merged.next().await {
            items.push(n);
        }
        items
    });
    assert_eq!(collected, [0, 1]);
}

fn send_and_sync<T: Send + Sync>(_: &T) {}
fn send_value<T: Send>(_: &T) {}

/// The iterators over a merge's streams cross threads as futures-util's do: those that lend
/// `&S` when `S` is `Sync`, those that lend `Pin<&mut S>` or `&mut S` when `S` is `Send`.
#[test]
fn the_iterators_are_send_and_sync_as_their_streams_allow() {
    let growable: pinfold_merge::Merge<SyncOnly> = pinfold_merge::Merge::default();
    let bounded: pinfold_merge::MergeBounded<SyncOnly> = pinfold_merge::MergeBounded::new(1);
    send_and_sync(&growable.iter());
    send_and_sync(&growable.iter_keyed());
    send_and_sync(&bounded.iter());
    send_and_sync(&bounded.iter_keyed());
    let mut growable: pinfold_merge::Merge<SendOnly> = pinfold_merge::Merge::default();
    let mut bounded: pinfold_merge::MergeBounded<SendOnly> = pinfold_merge::MergeBounded::new(1);
    send_value(&growable.iter_pin_mut());
    send_value(&growable.iter_pin_mut_keyed());
    send_value(&growable.iter_mut());
    send_value(&bounded.iter_pin_mut());
    send_value(&bounded.iter_pin_mut_keyed());
    send_value(&bounded.iter_mut());
}
