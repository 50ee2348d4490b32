//! [`KeyedMap`]: the map, written once for futures and streams.

use core::borrow::Borrow;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use alloc::vec::Vec;
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
    /// use pinfold::FutureMap;
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
    /// # Panics
    /// If `capacity` is more values than a map holds (its arena's 63 groups), before anything
    /// is allocated.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::{StreamExt, stream};
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
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
    #[track_caller]
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
    /// use pinfold::FutureMap;
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
    ///
    /// # Panics
    /// As [`with_capacity`](Self::with_capacity).
    #[track_caller]
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

    /// The keys of the values in the map, in no particular order, but in the order of
    /// [`values`](Self::values) and [`iter`](Self::iter) (while the map is not changed between
    /// the calls), as `HashMap`'s and tokio-stream's: `keys().zip(values())` pairs each key
    /// with its value.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::future::{Pending, pending};
    /// use pinfold::FutureMap;
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

    /// The values with their keys, in no particular order: that of [`keys`](Self::keys) and
    /// [`values`](Self::values).
    ///
    /// # Example
    ///
    /// ```
    /// use futures::stream::{self, Stream};
    /// use pinfold::StreamMap;
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

    /// The values, pinned, with their keys, in no particular order: that of
    /// [`iter`](Self::iter).
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut V>)> + '_ {
        self.core.iter_pin_mut()
    }

    /// The values with their keys, mutably, in no particular order: that of
    /// [`iter`](Self::iter). For `V: Unpin` (as
    /// tokio-stream's `iter_mut`); use [`iter_pin_mut`](Self::iter_pin_mut) otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
    /// let (a_tx, a) = mpsc::unbounded::<u32>();
    /// let (b_tx, b) = mpsc::unbounded::<u32>();
    /// let mut map = StreamMap::new();
    /// map.insert("a", a);
    /// map.insert("b", b);
    ///
    /// // Close the receivers of the keys that are done: they end once drained.
    /// for (key, receiver) in map.iter_mut() {
    ///     if *key == "a" {
    ///         receiver.close();
    ///     }
    /// }
    /// assert!(a_tx.unbounded_send(1).is_err());
    /// b_tx.unbounded_send(2).unwrap();
    /// assert_eq!(map.next().await, Some(("b", 2)));
    /// assert!(!map.contains_key("a"));
    /// # });
    /// ```
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, &mut V)> + '_
    where
        V: Unpin,
    {
        self.core.iter_mut()
    }

    /// The values, in no particular order: that of [`keys`](Self::keys) and
    /// [`iter`](Self::iter).
    ///
    /// # Example
    ///
    /// ```
    /// use futures::stream::{self, Stream};
    /// use pinfold::StreamMap;
    ///
    /// let mut map = StreamMap::new();
    /// map.insert("a", stream::iter(vec![1]));
    /// map.insert("b", stream::iter(vec![1, 2, 3]));
    ///
    /// let items_left: usize = map.values().map(|s| s.size_hint().0).sum();
    /// assert_eq!(items_left, 4);
    /// ```
    pub fn values(&self) -> impl ExactSizeIterator<Item = &V> + '_ {
        self.core.values()
    }

    /// The values, mutably, in no particular order: that of [`values`](Self::values). For
    /// `V: Unpin` (as tokio-stream's
    /// `values_mut`); use [`iter_pin_mut`](Self::iter_pin_mut) otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
    /// let (tx, rx) = mpsc::unbounded::<u32>();
    /// let mut map = StreamMap::new();
    /// map.insert(1, rx);
    ///
    /// tx.unbounded_send(7).unwrap();
    /// map.values_mut().for_each(|receiver| receiver.close()); // shutting down
    /// assert_eq!(map.next().await, Some((1, 7))); // what was sent still comes
    /// assert_eq!(map.next().await, None);
    /// # });
    /// ```
    pub fn values_mut(&mut self) -> impl ExactSizeIterator<Item = &mut V> + '_
    where
        V: Unpin,
    {
        self.core.iter_mut().map(|(_, value)| value)
    }

    /// How many values the map can hold before an insert allocates: the smaller of the room
    /// of the values' arena and of the index of the keys; at least [`len`](Self::len).
    /// [`with_capacity(n)`](Self::with_capacity) gives at least `n`, and [`new`](Self::new)
    /// 0. The arena gives its empty groups back after outputs, and an index that removed many
    /// keys has less room until it rehashes (see the crate documentation,
    /// [*Capacity*](crate#capacity)), so the capacity may shrink as well as grow.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::Pending;
    /// use pinfold::FutureMap;
    ///
    /// let map: FutureMap<u32, Pending<()>> = FutureMap::new();
    /// assert_eq!(map.capacity(), 0);
    /// let map: FutureMap<u32, Pending<()>> = FutureMap::with_capacity(100);
    /// assert!(map.capacity() >= 100);
    /// ```
    pub fn capacity(&self) -> usize {
        self.core.capacity()
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
    /// use futures::stream::{FusedStream, StreamExt};
    /// use futures::future::{Pending, pending};
    /// use pinfold::FutureMap;
    ///
    /// # futures::executor::block_on(async {
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
    /// replaced: then `true`. Its key is replaced too, as in tokio-stream: `keys`, `iter`,
    /// `remove_entry` and the outputs give `key` from then on (not the old key, an equal one).
    ///
    /// **From tokio-stream**, whose `insert` returns the old stream: that is
    /// [`replace`](Self::replace) here (`V: Unpin`), and its `insert(k, s).is_some()` is this
    /// `insert(k, s)`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::oneshot;
    /// use futures::StreamExt;
    /// use pinfold::FutureMap;
    ///
    /// # futures::executor::block_on(async {
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
    /// **From tokio-stream**, whose `remove` returns the stream: that is
    /// [`remove_entry`](Self::remove_entry) here (`V: Unpin`), and its `remove(k).is_some()` is
    /// this `remove(k)`.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
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

    /// Adds `value` under `key`, as [`insert`](Self::insert), and gives back the value it
    /// replaced, moved out of the map, instead of dropping it: tokio-stream's `insert`. For
    /// `V: Unpin`, as a value is pinned in the map (see the crate documentation,
    /// [*Coming from tokio-stream*](crate#coming-from-tokio-stream)). The replaced value's
    /// output never comes from the map; it is the caller's to poll or drop. Until it is polled
    /// again it holds the waker the map last polled it with: a waker of a value that left,
    /// whose wakes may wake the map's task for nothing and poll none of its values, save the
    /// spurious poll that [*Wakes*](pinfold_arena::contract#wakes) allows for such wakers
    /// (two `replace`s of one key, each value kept with its waker, can make one).
    ///
    /// If a key's `Drop` panics (one of the old key's copies, which `key` replaces), the new
    /// value is in the map under `key`, the old one is dropped, and the panic propagates.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
    /// let (old_tx, old_rx) = mpsc::unbounded();
    /// let (new_tx, new_rx) = mpsc::unbounded();
    /// let mut map = StreamMap::new();
    /// assert!(map.replace("feed", old_rx).is_none());
    ///
    /// let mut old_rx = map.replace("feed", new_rx).unwrap(); // not dropped: given back
    /// old_tx.unbounded_send("old").unwrap();
    /// new_tx.unbounded_send("new").unwrap();
    /// assert_eq!(old_rx.next().await, Some("old"));
    /// assert_eq!(map.next().await, Some(("feed", "new")));
    /// # });
    /// ```
    pub fn replace(&mut self, key: K, value: V) -> Option<V>
    where
        V: Unpin,
    {
        self.core.replace(key, value)
    }

    /// Moves the value under `key` out of the map, with its key, as [`remove`](Self::remove)
    /// but giving them back instead of dropping them (as `HashMap::remove_entry`):
    /// tokio-stream's `remove`, which gives the stream alone, is `remove_entry(k).map(|(_, s)|
    /// s)`. For `V: Unpin`, as a value is pinned in the map (see the crate documentation,
    /// [*Coming from tokio-stream*](crate#coming-from-tokio-stream)). `None` if there was
    /// none. The key given back is the one the value was inserted under. The value's output
    /// never comes from the map; it is the caller's to poll or drop. Until it is polled again
    /// it holds the waker the map last polled it with: a waker of a value that left, whose
    /// wakes may wake the map's task for nothing and poll none of its values, save the
    /// spurious poll that [*Wakes*](pinfold_arena::contract#wakes) allows for such wakers.
    ///
    /// If the `Drop` of the map's copy of the key panics, the value and the key are dropped
    /// and the panic propagates; they have left the map all the same.
    ///
    /// # Example
    ///
    /// Moving a stream from one map to another:
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
    /// let (tx, rx) = mpsc::unbounded();
    /// let mut idle = StreamMap::new();
    /// let mut active = StreamMap::new();
    /// idle.insert(String::from("peer"), rx);
    ///
    /// let (key, rx) = idle.remove_entry("peer").unwrap();
    /// assert!(idle.remove_entry("peer").is_none());
    /// active.insert(key, rx);
    ///
    /// tx.unbounded_send(1).unwrap();
    /// assert_eq!(active.next().await, Some((String::from("peer"), 1)));
    /// # });
    /// ```
    pub fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Unpin,
    {
        self.core.remove_entry(key)
    }

    /// Whether a value is under `key`: `false` once it finished (a future, before its output is
    /// returned), ended (a stream), or was removed.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::ready;
    /// use futures::StreamExt;
    /// use pinfold::FutureMap;
    ///
    /// # futures::executor::block_on(async {
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
    /// use futures::stream::{self, Stream};
    /// use pinfold::StreamMap;
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
    /// use futures::channel::mpsc;
    /// use futures::StreamExt;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
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

impl<K: Hash + Eq + Clone, V, P: ValueKind<V>, H: BuildHasher> KeyedMap<K, V, P, H> {
    /// Waits for outputs and appends up to `limit` of them, with their keys, to `buffer`;
    /// returns how many it appended. As tokio-stream's `next_many`: once an output is ready, it
    /// takes every output ready now, up to `limit`, without waiting for more; it returns 0 only
    /// if `limit` is 0 or the map is empty (its end: it then holds no value).
    ///
    /// Cancel safe: outputs are taken only in the poll that returns them, so dropping the
    /// future (a `select!` branch that lost) loses none. The outputs come as
    /// [`poll_next`](Stream::poll_next) gives them, in the same order and fairness.
    ///
    /// # Example
    ///
    /// ```
    /// use futures::channel::mpsc;
    /// use pinfold::StreamMap;
    ///
    /// # futures::executor::block_on(async {
    /// let (tx, rx) = mpsc::unbounded();
    /// let mut map = StreamMap::new();
    /// map.insert("log", rx);
    /// for line in 0..5 {
    ///     tx.unbounded_send(line).unwrap();
    /// }
    ///
    /// let mut batch = Vec::new();
    /// assert_eq!(map.next_many(&mut batch, 3).await, 3);
    /// assert_eq!(map.next_many(&mut batch, 10).await, 2); // what is ready: no waiting
    /// assert_eq!(batch.iter().map(|&(_, line)| line).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    ///
    /// drop(tx); // the stream ends, and the map is empty
    /// assert_eq!(map.next_many(&mut batch, 10).await, 0);
    /// # });
    /// ```
    pub async fn next_many(&mut self, buffer: &mut Vec<(K, P::Output)>, limit: usize) -> usize {
        core::future::poll_fn(|cx| self.poll_next_many(cx, buffer, limit)).await
    }

    /// Appends up to `limit` outputs ready now, with their keys, to `buffer`, as tokio-stream's
    /// `poll_next_many`:
    ///
    /// - `Ready(n)`, `n` from 1 to `limit`: `n` outputs were appended;
    /// - `Pending`: no output is ready, and the map holds values (the task is woken as by
    ///   [`poll_next`](Stream::poll_next));
    /// - `Ready(0)`: `limit` is 0 (nothing is polled) or the map is empty (its end: the map is
    ///   then [terminated](FusedStream::is_terminated)).
    ///
    /// Each output is taken as by `poll_next`, in the same order and fairness, and spends the
    /// same unit of tokio's budget with the `tokio-coop` feature.
    ///
    /// # Example
    ///
    /// ```
    /// use std::future::{poll_fn, ready};
    /// use std::task::Poll;
    /// use pinfold::FutureMap;
    ///
    /// # futures::executor::block_on(async {
    /// let mut map = FutureMap::new();
    /// map.insert("a", ready(1));
    /// map.insert("b", ready(2));
    ///
    /// let mut outputs = Vec::new();
    /// let taken = poll_fn(|cx| map.poll_next_many(cx, &mut outputs, 8)).await;
    /// assert_eq!(taken, 2);
    /// assert_eq!(outputs, [("a", 1), ("b", 2)]);
    ///
    /// let end = poll_fn(|cx| Poll::Ready(map.poll_next_many(cx, &mut outputs, 8))).await;
    /// assert_eq!(end, Poll::Ready(0));
    /// # });
    /// ```
    pub fn poll_next_many(
        &mut self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<(K, P::Output)>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let mut added = 0;
        while added < limit {
            match self.core.poll_next(cx, P::poll) {
                Poll::Ready(Some(output)) => {
                    buffer.push(output);
                    added += 1;
                }
                Poll::Ready(None) => break,
                Poll::Pending if added == 0 => return Poll::Pending,
                Poll::Pending => break,
            }
        }
        Poll::Ready(added)
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
