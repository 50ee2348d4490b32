//! What the merge tests share: the two merges behind one trait, so that each case is written
//! once and run on both (`both!`), and merges of numbered streams.
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports, unused_macros)]

use std::fmt::Debug;
use std::iter::{self, Repeat, Zip};
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use futures_util::stream;
pub(crate) use pinfold_merge::Key;
use pinfold_merge::{Merge, MergeBounded};
pub(crate) use pinfold_testkit::contract::panic_message;
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::stream::{
    assert_each_stream_whole_and_in_order, drain, poll_once, poll_with,
};
pub(crate) use pinfold_testkit::tracked::{Counts, TRACKED_PANIC, Tracked};
pub(crate) use pinfold_testkit::waker::counting_waker;

/// A merge type under test, named by a marker type; each function forwards to the merge's
/// method of the same name.
pub(crate) trait MergeUnderTest: 'static {
    /// The type's name, as its `Debug` output starts.
    const NAME: &'static str;
    /// The merge of streams of type `S`.
    type Merge<S: Stream>: Stream<Item = S::Item> + FusedStream + Unpin + FromIterator<S> + Debug;

    /// A merge with room for `capacity` streams (the growable one starts empty and grows).
    fn new<S: Stream>(capacity: usize) -> Self::Merge<S>;
    fn insert<S: Stream>(merged: &mut Self::Merge<S>, stream: S) -> Key;
    fn remove<S: Stream>(merged: &mut Self::Merge<S>, key: Key) -> bool;
    fn contains_key<S: Stream>(merged: &Self::Merge<S>, key: Key) -> bool;
    fn get<S: Stream>(merged: &Self::Merge<S>, key: Key) -> Option<&S>;
    fn get_pin_mut<S: Stream>(merged: &mut Self::Merge<S>, key: Key) -> Option<Pin<&mut S>>;
    fn len<S: Stream>(merged: &Self::Merge<S>) -> usize;
    fn clear<S: Stream>(merged: &mut Self::Merge<S>);
    fn poll_next_keyed<S: Stream>(
        merged: &mut Self::Merge<S>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Key, S::Item)>>;
    /// The keys `iter_keyed` gives, and the length it announced.
    fn iter_keys<S: Stream>(merged: &Self::Merge<S>) -> (usize, Vec<Key>);
    /// The keys `iter_pin_mut_keyed` gives, and the length it announced.
    fn iter_pin_mut_keys<S: Stream>(merged: &mut Self::Merge<S>) -> (usize, Vec<Key>);
}

/// Declares `$marker` and implements [`MergeUnderTest`] for it by forwarding to `$merge`,
/// made by `$new` (a closure of the capacity).
macro_rules! merge_under_test {
    ($(#[$doc:meta])* $marker:ident: $merge:ident, $new:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $marker;

        impl MergeUnderTest for $marker {
            const NAME: &'static str = stringify!($merge);
            type Merge<S: Stream> = $merge<S>;

            fn new<S: Stream>(capacity: usize) -> $merge<S> {
                ($new)(capacity)
            }
            fn insert<S: Stream>(merged: &mut $merge<S>, stream: S) -> Key {
                merged.insert(stream)
            }
            fn remove<S: Stream>(merged: &mut $merge<S>, key: Key) -> bool {
                merged.remove(key)
            }
            fn contains_key<S: Stream>(merged: &$merge<S>, key: Key) -> bool {
                merged.contains_key(key)
            }
            fn get<S: Stream>(merged: &$merge<S>, key: Key) -> Option<&S> {
                merged.get(key)
            }
            fn get_pin_mut<S: Stream>(merged: &mut $merge<S>, key: Key) -> Option<Pin<&mut S>> {
                merged.get_pin_mut(key)
            }
            fn len<S: Stream>(merged: &$merge<S>) -> usize {
                merged.len()
            }
            fn clear<S: Stream>(merged: &mut $merge<S>) {
                merged.clear()
            }
            fn poll_next_keyed<S: Stream>(
                merged: &mut $merge<S>,
                cx: &mut Context<'_>,
            ) -> Poll<Option<(Key, S::Item)>> {
                merged.poll_next_keyed(cx)
            }
            fn iter_keys<S: Stream>(merged: &$merge<S>) -> (usize, Vec<Key>) {
                assert_eq!(merged.iter().len(), merged.iter_keyed().len());
                let iter = merged.iter_keyed();
                (iter.len(), iter.map(|(key, _)| key).collect())
            }
            fn iter_pin_mut_keys<S: Stream>(merged: &mut $merge<S>) -> (usize, Vec<Key>) {
                let len = merged.len();
                assert_eq!(merged.iter_pin_mut().len(), len);
                let iter = merged.iter_pin_mut_keyed();
                (iter.len(), iter.map(|(key, _)| key).collect())
            }
        }
    };
}

merge_under_test!(
    /// `MergeBounded::new(capacity)`.
    Bounded: MergeBounded,
    MergeBounded::new
);
merge_under_test!(
    /// `Merge::new()`, whatever the capacity asked: it grows group by group, so the cases also
    /// run over several groups.
    Growable: Merge,
    |_| Merge::new()
);

/// Declares each case, a function generic over [`MergeUnderTest`], as two tests:
/// `bounded::<case>` on `MergeBounded` and `growable::<case>` on `Merge`. Attributes written
/// before a case (such as `#[cfg_attr(miri, ignore)]`) go on both tests.
macro_rules! both {
    ($($cases:tt)*) => {
        pinfold_testkit::tests_for_each!(
            [bounded: crate::support::Bounded, growable: crate::support::Growable]
            { $($cases)* }
        );
    };
}
pub(crate) use both;

/// `merged` as a stream of `(key, item)` pairs, through `poll_next_keyed`, for the testkit's
/// stream drivers.
pub(crate) struct Keyed<'a, M: MergeUnderTest, S: Stream>(pub(crate) &'a mut M::Merge<S>);

impl<M: MergeUnderTest, S: Stream> Stream for Keyed<'_, M, S> {
    type Item = (Key, S::Item);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        M::poll_next_keyed(self.get_mut().0, cx)
    }
}

/// One `poll_next_keyed` of `merged` with a waker that does nothing.
pub(crate) fn poll_keyed<M: MergeUnderTest, S: Stream>(
    merged: &mut M::Merge<S>,
) -> Poll<Option<(Key, S::Item)>> {
    poll_once(&mut Keyed::<M, S>(merged))
}

/// Polls `merged` to its end with `poll_next_keyed`, as an executor would (see
/// [`drain`](pinfold_testkit::stream::drain)); the items with their keys.
pub(crate) fn drain_keyed<M: MergeUnderTest, S: Stream>(
    merged: &mut M::Merge<S>,
) -> Vec<(Key, S::Item)> {
    drain(&mut Keyed::<M, S>(merged))
}

/// The items `(id, 0..len)` of stream `id`.
pub(crate) type Numbered = stream::Iter<Zip<Repeat<usize>, Range<usize>>>;

/// Stream `id`, whose items are `(id, 0..len)`.
pub(crate) fn numbered(id: usize, len: usize) -> Numbered {
    stream::iter(iter::repeat(id).zip(0..len))
}

/// Tracked [`numbered`] streams in a merge, with their keys and counts by id.
pub(crate) struct NumberedMerge<M: MergeUnderTest> {
    pub(crate) merged: M::Merge<Tracked<Numbered>>,
    pub(crate) keys: Vec<Key>,
    pub(crate) counts: Vec<Arc<Counts>>,
}

impl<M: MergeUnderTest> NumberedMerge<M> {
    /// A merge of one numbered stream per length, stream `id` of `lengths[id]` items; the
    /// stream named by `panic_at`, if any, panics at the poll it names.
    pub(crate) fn new(lengths: &[usize], panic_at: Option<(usize, usize)>) -> Self {
        let mut merged = M::new(lengths.len());
        let (keys, counts) = lengths
            .iter()
            .enumerate()
            .map(|(id, &len)| {
                let (stream, counts) = Tracked::new(id, numbered(id, len));
                let stream = match panic_at {
                    Some((panicking, poll)) if panicking == id => stream.panicking_at(poll),
                    _ => stream,
                };
                (M::insert(&mut merged, stream), counts)
            })
            .unzip();
        Self {
            merged,
            keys,
            counts,
        }
    }
}
