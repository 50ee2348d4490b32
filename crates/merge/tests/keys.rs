//! Keys and capacity: `remove` drops a stream at once, a key outlives its stream only to be
//! refused (also once a new stream took its slot), a key of another merge is refused, and a
//! full `MergeBounded` refuses streams, giving them back from `try_push`.

mod support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;

use futures_core::FusedStream;
use pinfold_merge::MergeBounded;
use support::{
    Bounded, Counts, Key, MergeUnderTest, Numbered, NumberedMerge, Tracked,
    assert_each_stream_whole_and_in_order, both, drain_keyed, numbered, panic_message, poll_keyed,
    poll_once,
};

both!(
    remove_drops_the_stream_at_once_and_its_items_never_come,
    key_of_an_ended_stream_is_refused_also_after_its_slot_is_reused,
    key_of_a_removed_stream_is_refused_also_after_its_slot_is_reused,
    a_key_of_another_merge_is_refused_and_its_stream_stays,
    a_key_of_a_dropped_merge_is_refused_by_a_new_one,
);

/// Stream `id` of `len` items, tracked.
fn tracked(id: usize, len: usize) -> (Tracked<Numbered>, Arc<Counts>) {
    Tracked::new(id, numbered(id, len))
}

/// Asserts that `key` names no stream of `merged`, in each way to ask.
fn assert_refused<M: MergeUnderTest>(merged: &mut M::Merge<Tracked<Numbered>>, key: Key) {
    assert!(!M::contains_key(merged, key), "contains_key({key:?})");
    assert!(M::get(merged, key).is_none(), "get({key:?})");
    assert!(
        M::get_pin_mut(merged, key).is_none(),
        "get_pin_mut({key:?})"
    );
    let len = M::len(merged);
    assert!(!M::remove(merged, key), "remove({key:?})");
    assert_eq!(M::len(merged), len);
}

fn remove_drops_the_stream_at_once_and_its_items_never_come<M: MergeUnderTest>() {
    let NumberedMerge {
        mut merged,
        keys,
        counts,
    } = NumberedMerge::<M>::new(&[3, 3, 3, 3], None);
    // Stream 3 goes before its first poll.
    assert!(M::remove(&mut merged, keys[3]));
    assert_eq!(counts[3].drops(), 1);
    // Stream 1 (or 2, if 1 gave the first item) goes after the first item, while it has
    // items ready.
    let Poll::Ready(Some((first, _))) = poll_keyed::<M, _>(&mut merged) else {
        panic!("no first item");
    };
    let removed = if first == keys[1] { 2 } else { 1 };
    assert!(M::remove(&mut merged, keys[removed]));
    assert_eq!(
        counts[removed].drops(),
        1,
        "remove did not drop the stream at once"
    );
    assert_eq!(M::len(&merged), 2);
    assert_refused::<M>(&mut merged, keys[removed]);

    let rest = drain_keyed::<M, _>(&mut merged);
    assert!(rest.iter().all(|&(_, (id, _))| id != removed && id != 3));
    assert_eq!(rest.len(), 3 + 3 - 1);
    assert_eq!(
        counts[3].polls(),
        0,
        "a stream removed before its first poll was polled"
    );
    assert!(counts.iter().all(|counts| counts.drops() == 1));
}

fn key_of_an_ended_stream_is_refused_also_after_its_slot_is_reused<M: MergeUnderTest>() {
    stale_key_after_reuse::<M>(false);
}

fn key_of_a_removed_stream_is_refused_also_after_its_slot_is_reused<M: MergeUnderTest>() {
    stale_key_after_reuse::<M>(true);
}

/// A merge of one stream (a bounded one has just the one slot to give the next stream): once
/// that stream ended (or was removed), its key is refused, and still is, without touching the
/// new stream, once a new stream took the slot.
fn stale_key_after_reuse<M: MergeUnderTest>(remove: bool) {
    let mut merged = M::new(1);
    let (stream, old_counts) = tracked(0, 1);
    let old = M::insert(&mut merged, stream);
    if remove {
        assert!(M::remove(&mut merged, old));
    } else {
        assert_eq!(
            poll_keyed::<M, _>(&mut merged),
            Poll::Ready(Some((old, (0, 0))))
        );
        assert_eq!(poll_keyed::<M, _>(&mut merged), Poll::Ready(None));
    }
    assert_eq!(old_counts.drops(), 1);
    assert_refused::<M>(&mut merged, old);

    let (stream, counts) = tracked(1, 1);
    let new = M::insert(&mut merged, stream);
    assert_ne!(new, old);
    assert_refused::<M>(&mut merged, old);
    assert_eq!(
        counts.drops(),
        0,
        "a stale key's remove dropped the new stream"
    );
    assert_eq!(M::get(&merged, new).map(Tracked::id), Some(1));
    assert_eq!(drain_keyed::<M, _>(&mut merged), [(new, (1, 0))]);
}

/// A merge of one tracked stream, `id`, of `len` items, and its key and counts.
fn merge_of_one<M: MergeUnderTest>(
    id: usize,
    len: usize,
) -> (M::Merge<Tracked<Numbered>>, Key, Arc<Counts>) {
    let mut merged = M::new(1);
    let (stream, counts) = tracked(id, len);
    let key = M::insert(&mut merged, stream);
    (merged, key, counts)
}

/// Two fresh merges of one stream each (in the same slot, after the same history): the key of
/// one is refused by the other, whose stream stays and still gives all its items under its own
/// key.
fn a_key_of_another_merge_is_refused_and_its_stream_stays<M: MergeUnderTest>() {
    let (mut a, in_a, counts_a) = merge_of_one::<M>(0, 2);
    let (mut b, in_b, counts_b) = merge_of_one::<M>(1, 2);
    assert_refused::<M>(&mut b, in_a);
    assert_refused::<M>(&mut a, in_b);
    assert_ne!(in_a, in_b, "two merges gave the same key");
    assert_eq!(
        counts_a.drops() + counts_b.drops(),
        0,
        "a foreign key dropped a stream"
    );
    assert_eq!(M::get(&a, in_a).map(Tracked::id), Some(0));
    assert_eq!(M::get(&b, in_b).map(Tracked::id), Some(1));
    assert_eq!(
        drain_keyed::<M, _>(&mut a),
        [(in_a, (0, 0)), (in_a, (0, 1))]
    );
    assert_eq!(
        drain_keyed::<M, _>(&mut b),
        [(in_b, (1, 0)), (in_b, (1, 1))]
    );
}

/// The key of a merge that was dropped is refused by a merge made after it, which may take its
/// memory.
fn a_key_of_a_dropped_merge_is_refused_by_a_new_one<M: MergeUnderTest>() {
    let (dropped, gone, _) = merge_of_one::<M>(0, 1);
    drop(dropped);
    let (mut merged, own, counts) = merge_of_one::<M>(1, 1);
    assert_refused::<M>(&mut merged, gone);
    assert_eq!(counts.drops(), 0, "a foreign key dropped the stream");
    assert_eq!(drain_keyed::<M, _>(&mut merged), [(own, (1, 0))]);
}

#[test]
fn capacity_zero_refuses_every_stream_and_ends_at_once() {
    let mut merged = MergeBounded::new(0);
    assert!(merged.is_full());
    let (stream, counts) = tracked(7, 1);
    let Err(back) = merged.try_push(stream) else {
        panic!("a merge of capacity 0 took a stream");
    };
    assert_eq!(back.id(), 7);
    assert_eq!(counts.drops(), 0);
    let refused = catch_unwind(AssertUnwindSafe(|| merged.push(back)));
    let panic = refused.expect_err("push into a merge of capacity 0 did not panic");
    assert_eq!(panic_message(&*panic), "MergeBounded is full (capacity 0)");
    assert_eq!(counts.drops(), 1, "the refused stream was leaked");
    assert_eq!(poll_once(&mut merged), Poll::Ready(None));
    assert!(merged.is_terminated());
}

#[test]
fn push_into_a_full_merge_panics_naming_its_capacity() {
    let mut merged = MergeBounded::new(2);
    merged.push(tracked(0, 1).0);
    merged.push(tracked(1, 1).0);
    let (extra, counts) = tracked(2, 1);
    let refused = catch_unwind(AssertUnwindSafe(|| merged.push(extra)));
    let panic = refused.expect_err("push into a full merge did not panic");
    assert_eq!(panic_message(&*panic), "MergeBounded is full (capacity 2)");
    assert_eq!(counts.drops(), 1);
    // `insert` says the same, and the merge goes on with its two streams.
    let refused = catch_unwind(AssertUnwindSafe(|| merged.insert(tracked(3, 1).0)));
    assert_eq!(
        panic_message(&*refused.unwrap_err()),
        "MergeBounded is full (capacity 2)"
    );
    assert_eq!(merged.len(), 2);
    let mut items = futures_executor::block_on_stream(merged).collect::<Vec<_>>();
    items.sort_unstable();
    assert_eq!(items, [(0, 0), (1, 0)]);
}

#[test]
fn try_push_into_a_full_merge_gives_the_same_stream_back() {
    let mut merged = MergeBounded::new(1);
    let first = merged.insert(tracked(0, 1).0);
    let (second, counts) = tracked(1, 2);
    let Err(back) = merged.try_push(second) else {
        panic!("a full merge took a stream");
    };
    assert_eq!(back.id(), 1, "not the stream pushed");
    assert_eq!((counts.polls(), counts.drops()), (0, 0));
    assert!(matches!(merged.try_insert(tracked(2, 1).0), Err(refused) if refused.id() == 2));

    // Once the first stream ended, the same stream goes in and gives all its items.
    let mut items = Vec::new();
    while let Poll::Ready(Some((key, item))) = poll_keyed::<Bounded, _>(&mut merged) {
        assert_eq!(key, first);
        items.push(item);
    }
    assert!(merged.is_empty());
    assert!(merged.try_push(back).is_ok());
    items.extend(futures_executor::block_on_stream(merged));
    assert_each_stream_whole_and_in_order(&items, &[1, 2]);
}

#[test]
fn keyed_gives_each_item_under_its_streams_key_until_the_stream_ends() {
    let mut merged = pinfold_merge::Merge::new();
    let short = merged.insert(numbered(0, 1));
    let long = merged.insert(numbered(1, 3));
    let mut items = {
        let mut keyed = merged.keyed();
        let items = support::drain(&mut keyed);
        assert!(keyed.is_terminated());
        items
    };
    assert!(merged.is_empty());
    assert!(merged.is_terminated());
    items.sort_by_key(|&(_, item)| item);
    assert_eq!(
        items,
        [
            (short, (0, 0)),
            (long, (1, 0)),
            (long, (1, 1)),
            (long, (1, 2))
        ]
    );
}
