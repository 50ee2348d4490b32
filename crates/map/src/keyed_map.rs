//! [`KeyedMap`]: the map, written once for futures and streams.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use futures_core::{FusedStream, Stream};

use crate::kind::ValueKind;
use crate::{Core, DefaultHashBuilder};

/// Values keyed by the user's keys, polled concurrently, as the kind `P` says:
/// [`FutureMap<K, F>`](crate::FutureMap) (futures, [`Futures`](crate::Futures)) or
/// [`StreamMap<K, S>`](crate::StreamMap) (streams, [`Streams`](crate::Streams)). Use those two
/// names; the methods here are those of both. See the [crate documentation](crate).
///
/// Keys are hashed by `H`, the [`DefaultHashBuilder`] unless the map was made with a hasher of
/// its own ([`with_hasher`](Self::with_hasher)).
///
/// `Unpin` whatever `V` is; `Send` if `K`, `V` and `H` are; `Sync` if `K` and `H` are `Sync` and
/// `V` is `Send + Sync`.
#[must_use = "streams do nothing unless polled"]
pub struct KeyedMap<K, V, P, H = DefaultHashBuilder> {
    core: Core<K, V, H>,
    _kind: PhantomData<fn() -> P>,
}

impl<K, V, P> KeyedMap<K, V, P> {
    /// An empty map hashing keys with the [`DefaultHashBuilder`]. Allocates nothing: the first
    /// insert allocates.
    pub fn new() -> Self {
        Self::with_hasher(DefaultHashBuilder::default())
    }

    /// An empty map hashing keys with the [`DefaultHashBuilder`], with room for `capacity`
    /// values (the arena's first group and the index), allocated now.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, DefaultHashBuilder::default())
    }
}

impl<K, V, P, H> KeyedMap<K, V, P, H> {
    /// An empty map hashing keys with `hasher`. Allocates nothing: the first insert allocates.
    pub fn with_hasher(hasher: H) -> Self {
        Self {
            core: Core::with_hasher(hasher),
            _kind: PhantomData,
        }
    }

    /// An empty map hashing keys with `hasher`, with room for `capacity` values (the arena's
    /// first group and the index), allocated now.
    pub fn with_capacity_and_hasher(capacity: usize, hasher: H) -> Self {
        Self {
            core: Core::with_capacity_and_hasher(capacity, hasher),
            _kind: PhantomData,
        }
    }

    /// The hasher the map hashes keys with.
    pub fn hasher(&self) -> &H {
        &self.core.hasher
    }

    /// How many values the map holds.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether the map holds no value.
    pub fn is_empty(&self) -> bool {
        self.core.len() == 0
    }

    /// The keys of the values in the map, in no particular order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
        self.core.keys()
    }

    /// The values with their keys, in no particular order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.core.iter()
    }

    /// The values, pinned, with their keys, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut V>)> + '_ {
        self.core.iter_pin_mut()
    }

    /// Drops every value and key. The map is no longer terminated. If a value's `Drop` panics,
    /// the others are dropped all the same, then the panic propagates; the map is empty and
    /// usable.
    pub fn clear(&mut self) {
        self.core.clear();
    }
}

impl<K: Hash + Eq + Clone, V, P, H: BuildHasher> KeyedMap<K, V, P, H> {
    /// Adds `value` under `key`; it is polled by the next `poll_next`. A value already under
    /// `key` is dropped now (its output never comes) and replaced: then `true`.
    pub fn insert(&mut self, key: K, value: V) -> bool {
        self.core.insert(key, value)
    }

    /// Drops the value under `key` now; no output of it comes. `false` if there was none.
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.remove(key)
    }

    /// Whether a value is under `key`.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.contains_key(key)
    }

    /// The value under `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.get(key)
    }

    /// The value under `key`, pinned.
    pub fn get_pin_mut<Q>(&mut self, key: &Q) -> Option<Pin<&mut V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.get_pin_mut(key)
    }
}

// Nothing is pinned but the values, in the arena's own storage; the keys in the index are
// never pinned.
impl<K, V, P, H> Unpin for KeyedMap<K, V, P, H> {}

impl<K, V, P, H: Default> Default for KeyedMap<K, V, P, H> {
    /// An empty map hashing keys with `H::default()`.
    fn default() -> Self {
        Self::with_hasher(H::default())
    }
}

impl<K: Hash + Eq + Clone, V, P, H: BuildHasher + Default> FromIterator<(K, V)>
    for KeyedMap<K, V, P, H>
{
    /// A map of every `(key, value)` of the iterator, inserted in order (a later one replaces
    /// an earlier one under the same key).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = Self::default();
        map.extend(iter);
        map
    }
}

impl<K: Hash + Eq + Clone, V, P, H: BuildHasher> Extend<(K, V)> for KeyedMap<K, V, P, H> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (key, value) in iter {
            self.insert(key, value);
        }
    }
}

impl<K: Hash + Eq + Clone, V, P: ValueKind<V>, H: BuildHasher> Stream for KeyedMap<K, V, P, H> {
    type Item = (K, P::Output);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().core.poll_next(cx, P::poll)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        P::size_hint(self.len(), self.iter().map(|(_, value)| value))
    }
}

impl<K: Hash + Eq + Clone, V, P: ValueKind<V>, H: BuildHasher> FusedStream
    for KeyedMap<K, V, P, H>
{
    fn is_terminated(&self) -> bool {
        self.core.terminated
    }
}

impl<K: fmt::Debug, V, P: ValueKind<V>, H> fmt::Debug for KeyedMap<K, V, P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(P::NAME)
            .field("len", &self.len())
            .field("keys", &self.core.keys().collect::<alloc::vec::Vec<_>>())
            .field("terminated", &self.core.terminated)
            .finish_non_exhaustive()
    }
}
