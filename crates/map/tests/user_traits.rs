//! A user's trait over a map, whose methods have the map's own names (tokio-stream's
//! `StreamMap`'s, pinfold's signatures) and call the map's: by path
//! (`FutureMap::insert(self, key, future)`) or by method call (`self.len()`), as code written
//! for tokio-stream's map or futures-util's set does. `FutureMap` and `StreamMap` are one type,
//! `KeyedMap`, whose methods are its own (no dereference), so each call reaches the map's
//! method, never the trait's own, which would call itself until the stack overflows.

use std::future::{Ready, ready};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::vec::IntoIter;

use futures_task::noop_waker_ref;
use futures_util::stream::{self, Iter};
use pinfold_map::{FutureMap, StreamMap};

type Key = &'static str;

/// Every method of the map, under its own name, in a trait of the user's.
trait Map<V> {
    type Output;
    fn with_capacity(capacity: usize) -> Self;
    fn insert(&mut self, key: Key, value: V) -> bool;
    fn remove(&mut self, key: &Key) -> bool;
    fn contains_key(&self, key: &Key) -> bool;
    fn get(&self, key: &Key) -> Option<&V>;
    fn get_pin_mut(&mut self, key: &Key) -> Option<Pin<&mut V>>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
    fn capacity(&self) -> usize;
    fn clear(&mut self);
    fn keys(&self) -> Box<dyn ExactSizeIterator<Item = &Key> + '_>;
    fn values(&self) -> Box<dyn ExactSizeIterator<Item = &V> + '_>;
    fn values_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut V> + '_>;
    fn iter(&self) -> Box<dyn ExactSizeIterator<Item = (&Key, &V)> + '_>;
    fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = (&Key, &mut V)> + '_>;
    fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = (&Key, Pin<&mut V>)> + '_>;
    fn poll_next_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<(Key, Self::Output)>,
        limit: usize,
    ) -> Poll<usize>;
}

/// By path, as tower's `Drive` calls futures-util's set.
impl Map<Ready<u32>> for FutureMap<Key, Ready<u32>> {
    type Output = u32;
    fn with_capacity(capacity: usize) -> Self {
        FutureMap::with_capacity(capacity)
    }
    fn insert(&mut self, key: Key, value: Ready<u32>) -> bool {
        FutureMap::insert(self, key, value)
    }
    fn remove(&mut self, key: &Key) -> bool {
        FutureMap::remove(self, key)
    }
    fn contains_key(&self, key: &Key) -> bool {
        FutureMap::contains_key(self, key)
    }
    fn get(&self, key: &Key) -> Option<&Ready<u32>> {
        FutureMap::get(self, key)
    }
    fn get_pin_mut(&mut self, key: &Key) -> Option<Pin<&mut Ready<u32>>> {
        FutureMap::get_pin_mut(self, key)
    }
    fn len(&self) -> usize {
        FutureMap::len(self)
    }
    fn is_empty(&self) -> bool {
        FutureMap::is_empty(self)
    }
    fn capacity(&self) -> usize {
        FutureMap::capacity(self)
    }
    fn clear(&mut self) {
        FutureMap::clear(self)
    }
    fn keys(&self) -> Box<dyn ExactSizeIterator<Item = &Key> + '_> {
        Box::new(FutureMap::keys(self))
    }
    fn values(&self) -> Box<dyn ExactSizeIterator<Item = &Ready<u32>> + '_> {
        Box::new(FutureMap::values(self))
    }
    fn values_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut Ready<u32>> + '_> {
        Box::new(FutureMap::values_mut(self))
    }
    fn iter(&self) -> Box<dyn ExactSizeIterator<Item = (&Key, &Ready<u32>)> + '_> {
        Box::new(FutureMap::iter(self))
    }
    fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = (&Key, &mut Ready<u32>)> + '_> {
        Box::new(FutureMap::iter_mut(self))
    }
    fn iter_pin_mut(
        &mut self,
    ) -> Box<dyn ExactSizeIterator<Item = (&Key, Pin<&mut Ready<u32>>)> + '_> {
        Box::new(FutureMap::iter_pin_mut(self))
    }
    fn poll_next_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<(Key, u32)>,
        limit: usize,
    ) -> Poll<usize> {
        FutureMap::poll_next_many(self, cx, buffer, limit)
    }
}

type Items = Iter<IntoIter<u32>>;

/// By method call, as deno's op driver's `len` calls `self.len()`.
impl Map<Items> for StreamMap<Key, Items> {
    type Output = u32;
    fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity(capacity)
    }
    fn insert(&mut self, key: Key, value: Items) -> bool {
        self.insert(key, value)
    }
    fn remove(&mut self, key: &Key) -> bool {
        self.remove(key)
    }
    fn contains_key(&self, key: &Key) -> bool {
        self.contains_key(key)
    }
    fn get(&self, key: &Key) -> Option<&Items> {
        self.get(key)
    }
    fn get_pin_mut(&mut self, key: &Key) -> Option<Pin<&mut Items>> {
        self.get_pin_mut(key)
    }
    fn len(&self) -> usize {
        self.len()
    }
    fn is_empty(&self) -> bool {
        self.is_empty()
    }
    fn capacity(&self) -> usize {
        self.capacity()
    }
    fn clear(&mut self) {
        self.clear()
    }
    fn keys(&self) -> Box<dyn ExactSizeIterator<Item = &Key> + '_> {
        Box::new(self.keys())
    }
    fn values(&self) -> Box<dyn ExactSizeIterator<Item = &Items> + '_> {
        Box::new(self.values())
    }
    fn values_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = &mut Items> + '_> {
        Box::new(self.values_mut())
    }
    fn iter(&self) -> Box<dyn ExactSizeIterator<Item = (&Key, &Items)> + '_> {
        Box::new(self.iter())
    }
    fn iter_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = (&Key, &mut Items)> + '_> {
        Box::new(self.iter_mut())
    }
    fn iter_pin_mut(&mut self) -> Box<dyn ExactSizeIterator<Item = (&Key, Pin<&mut Items>)> + '_> {
        Box::new(self.iter_pin_mut())
    }
    fn poll_next_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<(Key, u32)>,
        limit: usize,
    ) -> Poll<usize> {
        self.poll_next_many(cx, buffer, limit)
    }
}

/// Every method through the user's `Map`, on a map of `a`, `b` and `c` made from `value`, each
/// of which gives the one output `n`.
fn every_method_reaches_the_map<M, V>(value: impl Fn(u32) -> V)
where
    M: Map<V, Output = u32>,
{
    let mut map = M::with_capacity(4);
    assert!(Map::is_empty(&map));
    assert!(Map::capacity(&map) >= 4);
    for (key, n) in [("a", 1), ("b", 2), ("c", 3)] {
        assert!(!Map::insert(&mut map, key, value(n)));
    }
    assert!(Map::insert(&mut map, "c", value(3))); // replaced
    assert_eq!(Map::len(&map), 3);
    assert!(Map::contains_key(&map, &"b"));
    assert!(Map::get(&map, &"b").is_some());
    assert!(Map::get_pin_mut(&mut map, &"b").is_some());
    let mut keys: Vec<Key> = Map::keys(&map).copied().collect();
    keys.sort_unstable();
    assert_eq!(keys, ["a", "b", "c"]);
    assert_eq!(Map::values(&map).len(), 3);
    assert_eq!(Map::values_mut(&mut map).len(), 3);
    assert_eq!(Map::iter(&map).len(), 3);
    assert_eq!(Map::iter_mut(&mut map).len(), 3);
    assert_eq!(Map::iter_pin_mut(&mut map).len(), 3);

    assert!(Map::remove(&mut map, &"b"));
    assert!(!Map::contains_key(&map, &"b"));

    let mut cx = Context::from_waker(noop_waker_ref());
    let mut outputs = Vec::new();
    assert_eq!(
        Map::poll_next_many(&mut map, &mut cx, &mut outputs, 8),
        Poll::Ready(2)
    );
    outputs.sort_unstable();
    assert_eq!(outputs, [("a", 1), ("c", 3)]);

    Map::insert(&mut map, "d", value(4));
    Map::clear(&mut map);
    assert!(Map::is_empty(&map));
}

#[test]
fn future_map_answers_every_method_of_a_users_trait() {
    every_method_reaches_the_map::<FutureMap<Key, Ready<u32>>, _>(ready);
}

#[test]
fn stream_map_answers_every_method_of_a_users_trait() {
    every_method_reaches_the_map::<StreamMap<Key, Items>, _>(|n| stream::iter(vec![n]));
}
