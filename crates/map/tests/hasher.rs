//! Hashers: a map made without one hashes its keys with the `DefaultHashBuilder` (std's
//! `RandomState` with `std`, foldhash's without), whatever features other crates turn on; a
//! map given a hasher hashes each key it is given with it, once per call, and never while it
//! hands out outputs.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_executor::block_on;
use futures_util::{StreamExt, future, stream};
use pinfold_map::{DefaultHashBuilder, FutureMap, StreamMap};

/// Fails to compile unless the maps made by `new`, `with_capacity`, `default` and `from_iter`
/// hash with std's `RandomState`.
#[cfg(feature = "std")]
#[test]
fn the_default_hasher_with_std_is_std_random_state() {
    use std::hash::RandomState;
    fn future_map<K, F>(_: &FutureMap<K, F, RandomState>) {}
    fn stream_map<K, S>(_: &StreamMap<K, S, RandomState>) {}
    let _: fn() -> RandomState = DefaultHashBuilder::new;

    future_map::<u8, future::Ready<u8>>(&FutureMap::new());
    future_map::<u8, future::Ready<u8>>(&FutureMap::with_capacity(1));
    future_map::<u8, future::Ready<u8>>(&FutureMap::default());
    future_map::<u8, future::Ready<u8>>(&[(1, future::ready(1))].into_iter().collect());
    stream_map::<u8, stream::Empty<u8>>(&StreamMap::new());
    stream_map::<u8, stream::Empty<u8>>(&StreamMap::with_capacity(1));
    stream_map::<u8, stream::Empty<u8>>(&StreamMap::default());
    stream_map::<u8, stream::Empty<u8>>(&[(1, stream::empty())].into_iter().collect());
}

/// Fails to compile unless the maps made by `new` and `default` hash with foldhash's
/// `fast::RandomState` when `std` is off.
#[cfg(not(feature = "std"))]
#[test]
fn the_default_hasher_without_std_is_foldhash() {
    use foldhash::fast::RandomState;
    fn future_map<K, F>(_: &FutureMap<K, F, RandomState>) {}
    fn stream_map<K, S>(_: &StreamMap<K, S, RandomState>) {}
    let _: fn() -> RandomState = <DefaultHashBuilder as Default>::default;

    future_map::<u8, future::Ready<u8>>(&FutureMap::new());
    stream_map::<u8, stream::Empty<u8>>(&StreamMap::default());
}

/// Hashes every key to the same value, and counts the hashes it starts.
#[derive(Clone, Default)]
struct Colliding {
    hashes: Arc<AtomicUsize>,
}

impl Colliding {
    fn hashes(&self) -> usize {
        self.hashes.load(Ordering::Relaxed)
    }
}

impl BuildHasher for Colliding {
    type Hasher = Constant;

    fn build_hasher(&self) -> Constant {
        self.hashes.fetch_add(1, Ordering::Relaxed);
        Constant
    }
}

struct Constant;

impl Hasher for Constant {
    fn finish(&self) -> u64 {
        7
    }

    fn write(&mut self, _: &[u8]) {}
}

/// Every key collides: the map still tells them apart by `Eq`, and each call given a key
/// hashes it once with the map's hasher; outputs hash nothing.
#[test]
fn a_future_map_hashes_each_given_key_once_with_its_own_hasher() {
    let n = if cfg!(miri) { 8 } else { 64 };
    let mut map = FutureMap::with_hasher(Colliding::default());
    for key in 0..n {
        assert!(!map.insert(key, future::ready(key * 2)));
    }
    assert_eq!(map.hasher().hashes(), n);
    assert!(map.contains_key(&3));
    assert!(!map.contains_key(&n));
    assert!(map.remove(&5));
    assert!(map.insert(7, future::ready(1000)));
    assert_eq!(map.hasher().hashes(), n + 4);

    let hasher = map.hasher().clone();
    let mut outputs: Vec<(usize, usize)> = block_on(map.collect());
    outputs.sort_unstable();
    let expected: Vec<(usize, usize)> = (0..n)
        .filter(|&key| key != 5)
        .map(|key| (key, if key == 7 { 1000 } else { key * 2 }))
        .collect();
    assert_eq!(outputs, expected);
    assert_eq!(hasher.hashes(), n + 4);
}

/// A stream map given a hasher and a capacity: its items come under their keys, in each
/// stream's order, with one hash per insert.
#[test]
fn a_stream_map_hashes_each_key_once_with_its_own_hasher() {
    let mut map = StreamMap::with_capacity_and_hasher(3, Colliding::default());
    for key in ["a", "b", "c"] {
        assert!(!map.insert(key, stream::iter(0..5)));
    }
    let hasher = map.hasher().clone();
    let items: Vec<(&str, i32)> = block_on(map.collect());
    for key in ["a", "b", "c"] {
        let values: Vec<i32> = items
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|&(_, v)| v)
            .collect();
        assert_eq!(values, [0, 1, 2, 3, 4], "the items of stream {key}");
    }
    assert_eq!(hasher.hashes(), 3);
}
