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
/// names; the methods here are those of both.
///
/// What a map guarantees: its [keys](crate#keys), what its [capacity](crate#capacity) costs,
/// what a [key's panic](crate#key-panics) leaves, and the rules every pinfold primitive keeps,
/// stated in [`pinfold_arena::contract`] (the [order](pinfold_arena::contract#order) of its
/// outputs, [fairness](pinfold_arena::contract#fairness) within one `poll_next`, which values
/// are polled and when its task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
/// leaves ([panics](pinfold_arena::contract#panics)), and what is allocated when
/// ([memory](pinfold_arena::contract#memory))); the crate's
/// [shared rules](crate#the-shared-rules) say what differs for a map.
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
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::Ready;
    /// use pinfold_map::FutureMap;
    ///
    /// let map: FutureMap<u64, Ready<()>> = FutureMap::new();
    /// assert!(map.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_hasher(DefaultHashBuilder::default())
    }

    /// An empty map hashing keys with the [`DefaultHashBuilder`], with room for `capacity`
    /// values (the arena's first group and the index), allocated now: a map that holds at most
    /// `capacity` values at once allocates nothing more (see the crate documentation,
    /// [*Capacity*](crate#capacity)).
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::{StreamExt, stream};
    /// use pinfold_map::StreamMap;
    ///
    /// # futures_executor::block_on(async {
    /// let mut peers = StreamMap::with_capacity(64);
    /// for round in 0..3 {
    ///     for peer in 0..64 {
    ///         peers.insert(peer, stream::iter(vec![round]));
    ///     }
    ///     let items: Vec<(u32, u32)> = peers.by_ref().collect().await;
    ///     assert_eq!(items.len(), 64);
    /// }
    /// # });
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_hasher(capacity, DefaultHashBuilder::default())
    }
}

impl<K, V, P, H> KeyedMap<K, V, P, H> {
    /// An empty map hashing keys with `hasher`. Allocates nothing: the first insert allocates.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{Ready, ready};
    /// use std::hash::{BuildHasherDefault, DefaultHasher};
    /// use pinfold_map::FutureMap;
    ///
    /// type Unseeded = BuildHasherDefault<DefaultHasher>; // the same hashes in every run
    /// let mut map: FutureMap<&str, Ready<u32>, Unseeded> =
    ///     FutureMap::with_hasher(Unseeded::default());
    /// map.insert("a", ready(1));
    /// assert!(map.contains_key("a"));
    /// ```
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
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::future::{Pending, pending};
    /// use pinfold_map::FutureMap;
    ///
    /// let mut map: FutureMap<&str, Pending<()>> = FutureMap::new();
    /// map.insert("b", pending());
    /// map.insert("a", pending());
    /// map.insert("b", pending()); // replaces: the key is listed once
    ///
    /// let mut keys: Vec<&str> = map.keys().copied().collect();
    /// keys.sort();
    /// assert_eq!(keys, ["a", "b"]);
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
        self.core.keys()
    }

    /// The values with their keys, in no particular order.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, Stream};
    /// use pinfold_map::StreamMap;
    ///
    /// let mut map = StreamMap::new();
    /// map.insert("short", stream::iter(vec![1]));
    /// map.insert("long", stream::iter(vec![1, 2, 3]));
    ///
    /// let mut hints: Vec<(&str, usize)> =
    ///     map.iter().map(|(key, s)| (*key, s.size_hint().0)).collect();
    /// hints.sort();
    /// assert_eq!(hints, [("long", 3), ("short", 1)]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.core.iter()
    }

    /// The values, pinned, with their keys, in no particular order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut V>)> + '_ {
        self.core.iter_pin_mut()
    }

    /// Drops every value and key; no output of them comes any more. The index keeps its room;
    /// the arena gives back its empty groups as after an output (see the crate documentation,
    /// [*Capacity*](crate#capacity)). The map is no longer
    /// [terminated](FusedStream::is_terminated). If a value's `Drop` panics, the others are
    /// dropped all the same, then the panic propagates; the map is empty and usable.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{FusedStream, StreamExt};
    /// use futures_util::future::{Pending, pending};
    /// use pinfold_map::FutureMap;
    ///
    /// # futures_executor::block_on(async {
    /// let mut map: FutureMap<u32, Pending<()>> = FutureMap::new();
    /// assert_eq!(map.next().await, None);
    /// assert!(map.is_terminated());
    ///
    /// map.insert(1, pending());
    /// map.insert(2, pending());
    /// map.clear();
    /// assert!(map.is_empty());
    /// assert!(!map.contains_key(&1));
    /// assert!(!map.is_terminated());
    /// # });
    /// ```
    pub fn clear(&mut self) {
        self.core.clear();
    }
}

impl<K: Hash + Eq + Clone, V, P, H: BuildHasher> KeyedMap<K, V, P, H> {
    /// Adds `value` under `key`; it is polled by the next `poll_next`. A value already under
    /// `key` is dropped now, in place (its output never comes, even if it was ready), and
    /// replaced: then `true`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_channel::oneshot;
    /// use futures_util::StreamExt;
    /// use pinfold_map::FutureMap;
    ///
    /// # futures_executor::block_on(async {
    /// let (old_tx, old_rx) = oneshot::channel::<&str>();
    /// let (new_tx, new_rx) = oneshot::channel();
    /// let mut map = FutureMap::new();
    /// assert!(!map.insert("job", old_rx));
    ///
    /// assert!(map.insert("job", new_rx)); // replaced: the old receiver is dropped now
    /// assert!(old_tx.send("stale").is_err());
    /// assert_eq!(map.len(), 1);
    ///
    /// new_tx.send("fresh").unwrap();
    /// assert_eq!(map.next().await, Some(("job", Ok("fresh"))));
    /// # });
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> bool {
        self.core.insert(key, value)
    }

    /// Drops the value under `key` now, in place, and its key; no output of it comes any more.
    /// `false` if there was none.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_channel::mpsc;
    /// use futures_util::StreamExt;
    /// use pinfold_map::StreamMap;
    ///
    /// # futures_executor::block_on(async {
    /// let (news_tx, news) = mpsc::unbounded();
    /// let (ads_tx, ads) = mpsc::unbounded();
    /// let mut topics = StreamMap::new();
    /// topics.insert("news", news);
    /// topics.insert("ads", ads);
    ///
    /// ads_tx.unbounded_send("buy").unwrap();
    /// assert!(topics.remove("ads"));
    /// assert!(ads_tx.unbounded_send("now").is_err()); // the receiver was dropped
    /// assert!(!topics.remove("ads"));
    ///
    /// news_tx.unbounded_send("hello").unwrap();
    /// drop(news_tx);
    /// let items: Vec<(&str, &str)> = topics.collect().await;
    /// assert_eq!(items, [("news", "hello")]); // "buy" never comes
    /// # });
    /// ```
    pub fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.remove(key)
    }

    /// Whether a value is under `key`: `false` once it finished (a future, before its output is
    /// returned), ended (a stream), or was removed.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use futures_util::StreamExt;
    /// use pinfold_map::FutureMap;
    ///
    /// # futures_executor::block_on(async {
    /// let mut map = FutureMap::new();
    /// map.insert(String::from("a"), ready(1));
    /// assert!(map.contains_key("a")); // looked up by `&str`, as in a `HashMap<String, _>`
    ///
    /// assert_eq!(map.next().await, Some((String::from("a"), 1)));
    /// assert!(!map.contains_key("a"));
    /// # });
    /// ```
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.contains_key(key)
    }

    /// The value under `key`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures_util::stream::{self, Stream};
    /// use pinfold_map::StreamMap;
    ///
    /// let mut map = StreamMap::new();
    /// map.insert(7, stream::iter(vec!['a', 'b']));
    /// assert_eq!(map.get(&7).map(|s| s.size_hint()), Some((2, Some(2))));
    /// assert!(map.get(&8).is_none());
    /// ```
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.core.get(key)
    }

    /// The value under `key`, pinned.
    ///
    /// # Example
    ///
    /// Closing a channel's receiver in the map: its buffered items still come, then it ends and
    /// its key leaves.
    ///
    /// ```
    /// use futures_channel::mpsc;
    /// use futures_util::StreamExt;
    /// use pinfold_map::StreamMap;
    ///
    /// # futures_executor::block_on(async {
    /// let (sender, receiver) = mpsc::unbounded();
    /// let mut map = StreamMap::new();
    /// map.insert("feed", receiver);
    ///
    /// sender.unbounded_send(1).unwrap();
    /// map.get_pin_mut("feed").unwrap().close();
    /// assert!(sender.unbounded_send(2).is_err());
    /// assert_eq!(map.next().await, Some(("feed", 1)));
    /// assert_eq!(map.next().await, None);
    /// assert!(!map.contains_key("feed"));
    /// # });
    /// ```
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
