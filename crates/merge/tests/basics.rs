//! The merges as streams and containers: termination, collecting, size hints, `Debug`,
//! iteration and clearing.

mod support;

use std::task::Poll;

use futures_core::{FusedStream, Stream};
use futures_util::future::Either;
use futures_util::{StreamExt, stream};
use pinfold_merge::{Merge, MergeBounded, merge};
use support::{Key, MergeUnderTest, Tracked, both, poll_once};

both!(
    is_terminated_after_ready_none_until_a_push_or_clear,
    clear_drops_every_stream_and_empties_the_merge,
    collect_builds_a_merge_of_every_stream,
    size_hint_is_the_sum_of_the_streams_hints,
    debug_names_the_type_and_its_len,
    iter_and_iter_pin_mut_give_each_merged_stream_with_its_key,
    items_of_streams_of_many_lengths_all_come,
    len_follows_streams_added_and_ended,
);

/// Ported from futures-rs (`futures/tests/stream_select_all.rs`, `is_terminated`).
fn is_terminated_after_ready_none_until_a_push_or_clear<M: MergeUnderTest>() {
    let mut merged = M::new(1);
    assert!(!merged.is_terminated());
    assert_eq!(poll_once(&mut merged), Poll::Ready(None));
    assert!(merged.is_terminated());
    assert_eq!(M::len(&merged), 0);

    M::insert(&mut merged, stream::iter([1]));
    assert!(!merged.is_terminated(), "a push left the merge terminated");
    assert_eq!(poll_once(&mut merged), Poll::Ready(Some(1)));
    assert!(!merged.is_terminated(), "terminated before Ready(None)");
    assert_eq!(poll_once(&mut merged), Poll::Ready(None));
    assert!(merged.is_terminated());

    M::clear(&mut merged);
    assert!(!merged.is_terminated(), "clear left the merge terminated");
}

/// Ported from futures-rs (`futures/tests/stream_select_all.rs`, `clear`), with drop counts.
fn clear_drops_every_stream_and_empties_the_merge<M: MergeUnderTest>() {
    let mut merged = M::new(2);
    let (one, one_counts) = Tracked::new(1, stream::iter(vec![1]));
    let (two, two_counts) = Tracked::new(2, stream::iter(vec![2]));
    M::insert(&mut merged, one);
    M::insert(&mut merged, two);
    assert!(matches!(poll_once(&mut merged), Poll::Ready(Some(1 | 2))));
    M::clear(&mut merged);
    assert_eq!(M::len(&merged), 0);
    assert_eq!((one_counts.drops(), two_counts.drops()), (1, 1));

    let (three, three_counts) = Tracked::new(3, stream::iter(vec![3]));
    M::insert(&mut merged, three);
    assert_eq!(M::len(&merged), 1);
    M::clear(&mut merged);
    assert_eq!(M::len(&merged), 0);
    assert_eq!(three_counts.polls(), 0);
    assert_eq!(three_counts.drops(), 1);
    assert_eq!(poll_once(&mut merged), Poll::Ready(None));
}

fn collect_builds_a_merge_of_every_stream<M: MergeUnderTest>() {
    let merged: M::Merge<_> = (0..3).map(|i| stream::iter([i, 10 + i])).collect();
    assert_eq!(M::len(&merged), 3);
    let mut items: Vec<i32> = futures_executor::block_on(merged.collect());
    items.sort_unstable();
    assert_eq!(items, [0, 1, 2, 10, 11, 12]);
}

#[test]
fn merge_extend_and_from_iter_take_every_stream() {
    let mut merged = merge([stream::iter(0..2), stream::iter(10..12)]);
    merged.extend([stream::iter(20..22), stream::iter(30..30)]);
    assert_eq!(merged.len(), 4);
    let mut items: Vec<i32> = futures_executor::block_on(merged.collect());
    items.sort_unstable();
    assert_eq!(items, [0, 1, 10, 11, 20, 21]);

    let bounded: MergeBounded<_> = (0..5).map(|i| stream::iter([i])).collect();
    assert_eq!(
        (bounded.len(), bounded.capacity()),
        (5, 5),
        "capacity = the streams' count"
    );
    assert_eq!(
        Merge::<stream::Iter<std::ops::Range<i32>>>::default().len(),
        0
    );
}

fn size_hint_is_the_sum_of_the_streams_hints<M: MergeUnderTest>() {
    let mut merged = M::new(3);
    assert_eq!(merged.size_hint(), (0, Some(0)));
    M::insert(&mut merged, Either::Left(stream::iter(0..3)));
    M::insert(&mut merged, Either::Left(stream::iter(0..5)));
    assert_eq!(merged.size_hint(), (8, Some(8)));
    assert!(matches!(poll_once(&mut merged), Poll::Ready(Some(_))));
    assert_eq!(merged.size_hint(), (7, Some(7)));
    // Unbounded: the lower bound saturates, the upper one is unknown.
    M::insert(&mut merged, Either::Right(stream::repeat(0)));
    assert_eq!(merged.size_hint(), (usize::MAX, None));
}

fn debug_names_the_type_and_its_len<M: MergeUnderTest>() {
    let mut merged = M::new(2);
    M::insert(&mut merged, stream::iter(0..1));
    M::insert(&mut merged, stream::iter(0..2));
    let debug = format!("{merged:?}");
    assert!(debug.starts_with(&format!("{} {{", M::NAME)), "{debug}");
    assert!(debug.contains("len: 2"), "{debug}");
}

/// Ported from futures-rs (`futures/tests/stream_select_all.rs`, `iter_mut` and `iter`): the
/// iterators say how many streams they give, and a stream that ended is no longer among them.
fn iter_and_iter_pin_mut_give_each_merged_stream_with_its_key<M: MergeUnderTest>() {
    let mut merged = M::new(4);
    let mut keys: Vec<Key> = (0..3)
        .map(|_| M::insert(&mut merged, Either::Left(stream::pending::<u8>())))
        .collect();
    let empty = M::insert(&mut merged, Either::Right(stream::iter(None)));
    let sorted = |mut keys: Vec<Key>| {
        keys.sort_unstable();
        keys
    };
    let all = sorted([&keys[..], &[empty]].concat());
    let (len, given) = M::iter_keys(&merged);
    assert_eq!((len, sorted(given)), (4, all.clone()));
    let (len, given) = M::iter_pin_mut_keys(&mut merged);
    assert_eq!((len, sorted(given)), (4, all));

    // The empty stream ends at its first poll; the pending ones stay.
    assert_eq!(poll_once(&mut merged), Poll::Pending);
    keys.sort_unstable();
    let (len, given) = M::iter_keys(&merged);
    assert_eq!((len, sorted(given)), (3, keys.clone()));
    assert!(M::remove(&mut merged, keys.pop().unwrap()));
    let (len, given) = M::iter_pin_mut_keys(&mut merged);
    assert_eq!((len, sorted(given)), (2, keys));
    M::clear(&mut merged);
    assert_eq!(M::iter_keys(&merged), (0, Vec::new()));
}

/// Ported from futures-buffered (`src/merge_bounded.rs` and `src/merge_unbounded.rs`, test
/// `merge_tuple_4`).
fn items_of_streams_of_many_lengths_all_come<M: MergeUnderTest>() {
    let streams = [2, 3, 5, 7].map(|n| stream::repeat(n).take(n));
    let merged: M::Merge<_> = streams.into_iter().collect();
    let sum = futures_executor::block_on(merged.fold(0, |sum, n| async move { sum + n }));
    assert_eq!(sum, 2 * 2 + 3 * 3 + 5 * 5 + 7 * 7);
}

/// Ported from futures-buffered (`src/merge_unbounded.rs`, test `add_streams`): the merge is
/// not empty while items come, empty after its end, and takes streams again after it.
fn len_follows_streams_added_and_ended<M: MergeUnderTest>() {
    futures_executor::block_on(async {
        let mut merged = M::new(2);
        assert_eq!(merged.next().await, None);
        assert_eq!(M::len(&merged), 0);
        M::insert(&mut merged, stream::repeat(2).take(2));
        M::insert(&mut merged, stream::repeat(3).take(3));
        assert_eq!(M::len(&merged), 2);
        let mut sum = 0;
        while let Some(n) = merged.next().await {
            sum += n;
            assert_ne!(M::len(&merged), 0, "empty while items come");
        }
        assert_eq!(M::len(&merged), 0);
        M::insert(&mut merged, stream::repeat(4).take(4));
        assert_eq!(M::len(&merged), 1);
        while let Some(n) = merged.next().await {
            sum += n;
        }
        assert_eq!(sum, 2 * 2 + 3 * 3 + 4 * 4);
        assert_eq!(M::len(&merged), 0);
    });
}

#[test]
fn zero_capacity_merge_refuses_every_push_and_yields_none() {
    let mut streams = MergeBounded::new(0);
    assert_eq!(streams.capacity(), 0);
    assert!(streams.is_full());
    let back = streams.try_push(stream::iter([1, 2])).unwrap_err();
    assert_eq!(futures_executor::block_on(back.collect::<Vec<_>>()), [1, 2]);
    assert!(streams.is_empty());
    assert_eq!(poll_once(&mut streams), Poll::Ready(None));
    assert!(streams.is_terminated());
}

#[test]
#[should_panic(expected = "MergeBounded is full (capacity 0)")]
fn push_on_zero_capacity_merge_panics() {
    MergeBounded::new(0).push(stream::iter([1]));
}
