//! What the map tests share: the two maps behind one trait, holding futures (a `FutureMap` as
//! they are, a `StreamMap` as streams of their one output), so that each case is written once
//! and run on both (`both!`).
// Each test file uses a different subset of these.
#![allow(dead_code, unused_imports, unused_macros)]

use std::borrow::Borrow;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use pin_project::pin_project;
pub(crate) use pinfold_map::{FutureMap, StreamMap};
pub(crate) use pinfold_testkit::contract::panic_message;
pub(crate) use pinfold_testkit::probe::{Probe, ProbeState, probes};
pub(crate) use pinfold_testkit::rng::XorShift;
pub(crate) use pinfold_testkit::stream::{
    assert_each_stream_whole_and_in_order, drain, poll_once, poll_with, settle,
};
pub(crate) use pinfold_testkit::tracked::{Counts, TRACKED_PANIC, Tracked};
pub(crate) use pinfold_testkit::waker::counting_waker;

/// A map type under test, named by a marker type, holding futures; each function forwards to
/// the map's method of the same name.
pub(crate) trait MapUnderTest: 'static {
    /// The type's name, as its `Debug` output starts.
    const NAME: &'static str;
    /// Whether a value leaves with its output (a future), or only at the next poll after it,
    /// when its stream ends (a one-item stream).
    const KEY_LEAVES_WITH_OUTPUT: bool;
    /// How the map holds a future of type `F`.
    type Value<F: Future>;
    /// The map of futures of type `F` under keys of type `K`.
    type Map<K: Hash + Eq + Clone, F: Future>: Stream<Item = (K, F::Output)>
        + FusedStream
        + Unpin
        + Default
        + FromIterator<(K, Self::Value<F>)>
        + Extend<(K, Self::Value<F>)>;

    /// `future` as the map holds it.
    fn value<F: Future>(future: F) -> Self::Value<F>;
    fn new<K: Hash + Eq + Clone, F: Future>() -> Self::Map<K, F>;
    fn with_capacity<K: Hash + Eq + Clone, F: Future>(capacity: usize) -> Self::Map<K, F>;
    /// Inserts `future`, as the map holds it, under `key`.
    fn insert<K: Hash + Eq + Clone, F: Future>(
        map: &mut Self::Map<K, F>,
        key: K,
        future: F,
    ) -> bool;
    fn remove<K, F, Q>(map: &mut Self::Map<K, F>, key: &Q) -> bool
    where
        K: Hash + Eq + Clone + Borrow<Q>,
        F: Future,
        Q: Hash + Eq + ?Sized;
    /// Replaces the value under `key` by `future`; the future of the value it replaced.
    fn replace<K: Hash + Eq + Clone, F: Future + Unpin>(
        map: &mut Self::Map<K, F>,
        key: K,
        future: F,
    ) -> Option<F>;
    /// Takes the value under `key` out with `remove_entry`; its key and its future.
    fn remove_entry<K, F, Q>(map: &mut Self::Map<K, F>, key: &Q) -> Option<(K, F)>
    where
        K: Hash + Eq + Clone + Borrow<Q>,
        F: Future + Unpin,
        Q: Hash + Eq + ?Sized;
    /// The futures, mutably, out of the values that hold them, with their keys, sorted by
    /// key, and the length `iter_mut` announced; and the length `values_mut` announced.
    fn iter_mut<K: Hash + Eq + Clone + Ord, F: Future + Unpin>(
        map: &mut Self::Map<K, F>,
    ) -> (usize, Vec<(&K, &mut F)>, usize);
    /// The futures, out of the values that hold them, as `values` gives them, and its length.
    fn values<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> (usize, Vec<&F>);
    fn capacity<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> usize;
    fn poll_next_many<K: Hash + Eq + Clone, F: Future>(
        map: &mut Self::Map<K, F>,
        cx: &mut Context<'_>,
        buffer: &mut Vec<(K, F::Output)>,
        limit: usize,
    ) -> Poll<usize>;
    /// `next_many`'s future, boxed.
    fn next_many<'a, K: Hash + Eq + Clone, F: Future>(
        map: &'a mut Self::Map<K, F>,
        buffer: &'a mut Vec<(K, F::Output)>,
        limit: usize,
    ) -> Pin<Box<dyn Future<Output = usize> + 'a>>;
    fn contains_key<K, F, Q>(map: &Self::Map<K, F>, key: &Q) -> bool
    where
        K: Hash + Eq + Clone + Borrow<Q>,
        F: Future,
        Q: Hash + Eq + ?Sized;
    /// The future under `key`, out of the value that holds it.
    fn get<'a, K, F, Q>(map: &'a Self::Map<K, F>, key: &Q) -> Option<&'a F>
    where
        K: Hash + Eq + Clone + Borrow<Q>,
        F: Future,
        Q: Hash + Eq + ?Sized;
    /// The future under `key`, pinned, out of the value that holds it.
    fn get_pin_mut<'a, K, F, Q>(map: &'a mut Self::Map<K, F>, key: &Q) -> Option<Pin<&'a mut F>>
    where
        K: Hash + Eq + Clone + Borrow<Q>,
        F: Future,
        Q: Hash + Eq + ?Sized;
    fn len<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> usize;
    fn is_empty<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> bool;
    /// The keys `keys` gives, sorted, and the length it announced.
    fn keys<K: Hash + Eq + Clone + Ord, F: Future>(map: &Self::Map<K, F>) -> (usize, Vec<K>);
    /// What `iter` gives, sorted by key, and the length it announced.
    fn iter<K: Hash + Eq + Clone + Ord, F: Future>(map: &Self::Map<K, F>)
    -> (usize, Vec<(&K, &F)>);
    /// What `iter_pin_mut` gives, sorted by key, and the length it announced.
    fn iter_pin_mut<K: Hash + Eq + Clone + Ord, F: Future>(
        map: &mut Self::Map<K, F>,
    ) -> (usize, Vec<(&K, Pin<&mut F>)>);
    fn clear<K: Hash + Eq + Clone, F: Future>(map: &mut Self::Map<K, F>);
    /// The map's `Debug` output.
    fn debug<K: Hash + Eq + Clone + Debug, F: Future>(map: &Self::Map<K, F>) -> String;
}

/// A stream of one item, its future's output: what `stream::once` is, with the future kept
/// in reach of `get` and `get_pin_mut` (and after its output, so it is never moved out).
#[pin_project]
#[derive(Debug)]
pub(crate) struct OneItem<F> {
    #[pin]
    future: F,
    done: bool,
}

impl<F> OneItem<F> {
    pub(crate) fn new(future: F) -> Self {
        Self {
            future,
            done: false,
        }
    }

    pub(crate) fn future(&self) -> &F {
        &self.future
    }

    pub(crate) fn future_pin_mut(self: Pin<&mut Self>) -> Pin<&mut F> {
        self.project().future
    }

    pub(crate) fn future_mut(&mut self) -> &mut F {
        &mut self.future
    }

    pub(crate) fn into_future(self) -> F {
        self.future
    }
}

impl<F> From<F> for OneItem<F> {
    fn from(future: F) -> Self {
        Self::new(future)
    }
}

impl<F: Future> Stream for OneItem<F> {
    type Item = F::Output;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        let out = std::task::ready!(this.future.poll(cx));
        *this.done = true;
        Poll::Ready(Some(out))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::from(!self.done);
        (left, Some(left))
    }
}

/// Declares `$marker` and implements [`MapUnderTest`] for it by forwarding to `$map`, which
/// holds each future `F` as a `$value<F>`; `$future` takes the future out of a `&$value<F>`,
/// `$pinned` out of a `Pin<&mut $value<F>>`.
macro_rules! map_under_test {
    (
        $(#[$doc:meta])* $marker:ident: $map:ident of $value:ident,
        leaves_with_output: $leaves:expr,
        future: |$v:ident| $future:expr,
        future_mut: |$m:ident| $future_mut:expr,
        into_future: |$o:ident| $into_future:expr,
        pinned: |$p:ident| $pinned:expr $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $marker;

        impl MapUnderTest for $marker {
            const NAME: &'static str = stringify!($map);
            const KEY_LEAVES_WITH_OUTPUT: bool = $leaves;
            type Value<F: Future> = $value<F>;
            type Map<K: Hash + Eq + Clone, F: Future> = $map<K, $value<F>>;

            fn value<F: Future>(future: F) -> $value<F> {
                future.into()
            }
            fn new<K: Hash + Eq + Clone, F: Future>() -> Self::Map<K, F> {
                $map::new()
            }
            fn with_capacity<K: Hash + Eq + Clone, F: Future>(capacity: usize) -> Self::Map<K, F> {
                $map::with_capacity(capacity)
            }
            fn insert<K: Hash + Eq + Clone, F: Future>(
                map: &mut Self::Map<K, F>,
                key: K,
                future: F,
            ) -> bool {
                map.insert(key, future.into())
            }
            fn remove<K, F, Q>(map: &mut Self::Map<K, F>, key: &Q) -> bool
            where
                K: Hash + Eq + Clone + Borrow<Q>,
                F: Future,
                Q: Hash + Eq + ?Sized,
            {
                map.remove(key)
            }
            fn replace<K: Hash + Eq + Clone, F: Future + Unpin>(
                map: &mut Self::Map<K, F>,
                key: K,
                future: F,
            ) -> Option<F> {
                map.replace(key, future.into()).map(|$o| $into_future)
            }
            fn remove_entry<K, F, Q>(map: &mut Self::Map<K, F>, key: &Q) -> Option<(K, F)>
            where
                K: Hash + Eq + Clone + Borrow<Q>,
                F: Future + Unpin,
                Q: Hash + Eq + ?Sized,
            {
                map.remove_entry(key).map(|(key, $o)| (key, $into_future))
            }
            fn iter_mut<K: Hash + Eq + Clone + Ord, F: Future + Unpin>(
                map: &mut Self::Map<K, F>,
            ) -> (usize, Vec<(&K, &mut F)>, usize) {
                let values_len = map.values_mut().len();
                let iter = map.iter_mut();
                let len = iter.len();
                let mut given: Vec<_> = iter.map(|(key, $m)| (key, $future_mut)).collect();
                given.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
                (len, given, values_len)
            }
            fn values<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> (usize, Vec<&F>) {
                let values = map.values();
                (values.len(), values.map(|$v| $future).collect())
            }
            fn capacity<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> usize {
                map.capacity()
            }
            fn poll_next_many<K: Hash + Eq + Clone, F: Future>(
                map: &mut Self::Map<K, F>,
                cx: &mut Context<'_>,
                buffer: &mut Vec<(K, F::Output)>,
                limit: usize,
            ) -> Poll<usize> {
                map.poll_next_many(cx, buffer, limit)
            }
            fn next_many<'a, K: Hash + Eq + Clone, F: Future>(
                map: &'a mut Self::Map<K, F>,
                buffer: &'a mut Vec<(K, F::Output)>,
                limit: usize,
            ) -> Pin<Box<dyn Future<Output = usize> + 'a>> {
                Box::pin(map.next_many(buffer, limit))
            }
            fn contains_key<K, F, Q>(map: &Self::Map<K, F>, key: &Q) -> bool
            where
                K: Hash + Eq + Clone + Borrow<Q>,
                F: Future,
                Q: Hash + Eq + ?Sized,
            {
                map.contains_key(key)
            }
            fn get<'a, K, F, Q>(map: &'a Self::Map<K, F>, key: &Q) -> Option<&'a F>
            where
                K: Hash + Eq + Clone + Borrow<Q>,
                F: Future,
                Q: Hash + Eq + ?Sized,
            {
                map.get(key).map(|$v| $future)
            }
            fn get_pin_mut<'a, K, F, Q>(
                map: &'a mut Self::Map<K, F>,
                key: &Q,
            ) -> Option<Pin<&'a mut F>>
            where
                K: Hash + Eq + Clone + Borrow<Q>,
                F: Future,
                Q: Hash + Eq + ?Sized,
            {
                map.get_pin_mut(key).map(|$p| $pinned)
            }
            fn len<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> usize {
                map.len()
            }
            fn is_empty<K: Hash + Eq + Clone, F: Future>(map: &Self::Map<K, F>) -> bool {
                map.is_empty()
            }
            fn keys<K: Hash + Eq + Clone + Ord, F: Future>(
                map: &Self::Map<K, F>,
            ) -> (usize, Vec<K>) {
                let keys = map.keys();
                let len = keys.len();
                let mut keys: Vec<K> = keys.cloned().collect();
                keys.sort_unstable();
                (len, keys)
            }
            fn iter<K: Hash + Eq + Clone + Ord, F: Future>(
                map: &Self::Map<K, F>,
            ) -> (usize, Vec<(&K, &F)>) {
                let iter = map.iter();
                let len = iter.len();
                let mut given: Vec<_> = iter.map(|(key, $v)| (key, $future)).collect();
                given.sort_unstable_by_key(|&(key, _)| key);
                (len, given)
            }
            fn iter_pin_mut<K: Hash + Eq + Clone + Ord, F: Future>(
                map: &mut Self::Map<K, F>,
            ) -> (usize, Vec<(&K, Pin<&mut F>)>) {
                let iter = map.iter_pin_mut();
                let len = iter.len();
                let mut given: Vec<_> = iter.map(|(key, $p)| (key, $pinned)).collect();
                given.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
                (len, given)
            }
            fn clear<K: Hash + Eq + Clone, F: Future>(map: &mut Self::Map<K, F>) {
                map.clear()
            }
            fn debug<K: Hash + Eq + Clone + Debug, F: Future>(map: &Self::Map<K, F>) -> String {
                format!("{map:?}")
            }
        }
    };
}

/// A future, as a `FutureMap` holds it.
pub(crate) type Bare<F> = F;

map_under_test!(
    /// `FutureMap`, holding each future as it is.
    Futures: FutureMap of Bare,
    leaves_with_output: true,
    future: |value| value,
    future_mut: |value| value,
    into_future: |value| value,
    pinned: |value| value,
);
map_under_test!(
    /// `StreamMap`, holding each future as a stream of its one output.
    Streams: StreamMap of OneItem,
    leaves_with_output: false,
    future: |value| value.future(),
    future_mut: |value| value.future_mut(),
    into_future: |value| value.into_future(),
    pinned: |value| value.future_pin_mut(),
);

/// Declares each case, a function generic over [`MapUnderTest`], as two tests:
/// `future_map::<case>` on `FutureMap` and `stream_map::<case>` on `StreamMap`. Attributes
/// written before a case (such as `#[cfg_attr(miri, ignore)]`) go on both tests.
macro_rules! both {
    ($($cases:tt)*) => {
        pinfold_testkit::tests_for_each!(
            [future_map: crate::support::Futures, stream_map: crate::support::Streams]
            { $($cases)* }
        );
    };
}
pub(crate) use both;
