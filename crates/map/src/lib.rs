//! [`FutureMap`] and [`StreamMap`]: futures and streams keyed by the user's own keys (a peer
//! id, a request id, a topic), polled concurrently on pinfold's growable waker-slot arena. Both
//! are one [`KeyedMap`], written once; what differs, how a value is polled, is its kind
//! ([`Futures`] or [`Streams`]).
//!
//! tokio-util's `JoinMap` needs a tokio runtime (it spawns each future); tokio-stream's
//! `StreamMap` needs `Unpin` streams and polls every stream on every call. These maps need
//! neither: any executor, no `Unpin` bound, and only woken values are polled, each with its own
//! waker.
//!
//! # Example
//!
//! ```
//! use futures_util::StreamExt;
//! use pinfold_map::FutureMap;
//!
//! async fn fetch(id: u32) -> u32 {
//!     id * 10
//! }
//!
//! # futures_executor::block_on(async {
//! let mut requests = FutureMap::new();
//! requests.insert("a", fetch(1));
//! requests.insert("b", fetch(2));
//! assert!(requests.insert("b", fetch(3))); // replaces fetch(2), dropped now
//! assert!(requests.remove("a")); // dropped now: its output never comes
//! assert_eq!(requests.next().await, Some(("b", 30)));
//! assert_eq!(requests.next().await, None);
//! # });
//! ```
//!
//! # Keys
//!
//! A map is a [`Stream`](futures_core::Stream) of `(key, output)`: each output comes under the
//! key its value was inserted under. A [`FutureMap`]'s future gives one output and leaves,
//! its key with it (moved into the output, not cloned); a [`StreamMap`]'s stream gives items,
//! each with a clone of its key, until it ends and its key is removed. Inserting under a key
//! that is taken drops the value there at once, in place, and puts the new one in its stead,
//! under the new key (the old key, an equal one, is dropped: as in tokio-stream);
//! [`remove`](KeyedMap::remove) and [`clear`](KeyedMap::clear) drop values at once too.
//!
//! Each value sits in a slot of a [`GrowableArena`] with a copy of its user key beside it; an
//! index (a `hashbrown` hash table) from user key to the slot's arena [`Key`] finds the slot of
//! a key. So `insert`, `remove`, `contains_key`, `get` and `get_pin_mut` cost one hash of the
//! key and one lookup (expected constant time, as `HashMap`'s), plus the arena's constant-time
//! slot work; each key is cloned once when it is inserted. The index keeps each key's hash, so
//! it never hashes a key it holds again (not when it grows, nor when it rehashes). An output
//! costs no lookup while its value stays (a stream's item clones the key from its slot) and one
//! removal from the index, by the slot, when its value leaves (a future's output takes the key
//! out of the index, so it is not cloned): handing out outputs never calls a key's `Hash` or
//! `Eq`.
//!
//! Keys are hashed by the map's [`BuildHasher`], its last type parameter `H`: the
//! [`DefaultHashBuilder`] for a map made by `new`, `with_capacity`, `default` or `from_iter`,
//! or any other given to `with_hasher` or `with_capacity_and_hasher` (as for `HashMap`).
//!
//! # Capacity
//!
//! Wakers, wakes and outputs allocate nothing (nor does a stream's item, beyond its key's
//! `Clone`); a map allocates only the arena's groups and the index.
//!
//! - [`new`](KeyedMap::new) allocates nothing. [`with_capacity`](KeyedMap::with_capacity)
//!   allocates room for `n` values (the arena's first group) and an index with room for `2 n`
//!   keys (a hash table that has removed many keys rehashes in place, without allocating, only
//!   while it is at most half full): values and keys then go through the map without any
//!   allocation as long as it holds at most `n` at once (and they allocate nothing
//!   themselves). Replacing a key's value frees the old one's slot first, so it needs no room.
//! - Beyond that, the values' arena is a [`GrowableArena`]: it grows a group at a time and
//!   gives the empty groups back after a burst, as the growable primitive of
//!   [*Memory*](pinfold_arena::contract#memory) does. The index grows as a `hashbrown` table
//!   does and keeps its room, also through `clear`.
//!
//! # Key panics
//!
//! A key's `Clone`, `Hash`, `Eq` and `Drop` are user code too. A panic in one reaches the
//! caller of the method that ran it and leaves the map consistent and usable, as a value's
//! does: `len`, `keys`, `iter`, `get` and `contains_key` agree, every value and key the map no
//! longer holds was dropped exactly once, and a key that left is refused.
//!
//! - If the key's `Clone` panics while a stream's item is handed out, the stream is dropped
//!   and its key removed, as if the stream had panicked (the item is dropped).
//! - If the key's `Clone`, `Hash` or `Eq` panics in a method given a key (`insert`, `remove`,
//!   `contains_key`, ...), nothing has changed (a value being inserted is dropped). Handing out
//!   outputs never runs a key's `Hash` or `Eq`.
//! - If the `Drop` of a value or of a key panics (in `insert`, `remove`, `clear`, `poll_next`,
//!   or while dropping the map), the value and its key are gone all the same, then the panic
//!   propagates: `insert` has put the new value in the map, and `clear` and the map's drop have
//!   dropped every other value and key. If several of these `Drop`s panic (a value's and its
//!   key's, or those of several keys), the first panic propagates and the later ones are
//!   dropped; without `std`, a second panic while the first unwinds aborts, as
//!   [*Features*](pinfold_arena::contract#features) states.
//! - If the `Drop` of the slot's copy of a key panics in `replace` or `remove_entry`, the map
//!   is consistent, and what was being given back (the value, and the key) is dropped as the
//!   panic unwinds.
//!
//! # Coming from tokio-stream
//!
//! tokio-stream's `StreamMap` requires `S: Unpin` of every stream and moves streams in and out
//! of a `Vec`: its `insert(k, s)` gives back the stream it replaced and `remove(&k)` the
//! stream it removed, as `Option<S>`. Here a value is pinned in its slot from `insert` on, so
//! it can be moved out only when `V: Unpin`; and a method cannot return the value for
//! `V: Unpin` and something else for the other values under one name. So the names are kept
//! for what works for every value, and the moves have names of their own:
//!
//! - [`insert`](KeyedMap::insert) and [`remove`](KeyedMap::remove), for any `V` (an `async`
//!   block is not `Unpin`), drop the value they replace or remove, in place, and return
//!   whether there was one: `bool`, where tokio-stream's `Option<S>` would be `Some`.
//! - [`replace`](KeyedMap::replace) and [`remove_entry`](KeyedMap::remove_entry), for
//!   `V: Unpin` (every stream tokio-stream accepts), move the value out and give it back:
//!   `replace(k, s)` is tokio-stream's `insert(k, s)`, an `Option<S>`, and `remove_entry(k)`
//!   is its `remove(k)` with the key beside the stream, an `Option<(K, S)>`, as
//!   `HashMap::remove_entry`. (`take`, the name `replace` would pair with, is
//!   `StreamExt::take`'s, which a call on the map would reach first.)
//!
//! A tokio-stream user's `map.insert(k, s)` whose result is unused, or `map.remove(&k)` used
//! as a flag, keeps working with nothing dropped late; code that uses the value returned calls
//! `replace` or `remove_entry` instead, and a compiler error (a `bool` where an `Option` was
//! expected) points there, rather than a value silently dropped. The other methods keep
//! tokio-stream's names and meaning: [`keys`](KeyedMap::keys), [`values`](KeyedMap::values),
//! [`iter`](KeyedMap::iter), [`values_mut`](KeyedMap::values_mut) and
//! [`iter_mut`](KeyedMap::iter_mut) (for `V: Unpin`; [`iter_pin_mut`](KeyedMap::iter_pin_mut)
//! for any `V`), [`capacity`](KeyedMap::capacity), [`len`](KeyedMap::len),
//! [`is_empty`](KeyedMap::is_empty), [`clear`](KeyedMap::clear),
//! [`contains_key`](KeyedMap::contains_key), [`next_many`](KeyedMap::next_many) and
//! [`poll_next_many`](KeyedMap::poll_next_many) (on `FutureMap` too). What differs beyond
//! that: no `Unpin` bound on keys or values, only woken streams are polled (tokio-stream polls
//! every stream, from a random one, on each call), and the order and fairness are the
//! [shared rules](#the-shared-rules)'.
//!
//! ```
//! use futures_channel::mpsc;
//! use futures_util::StreamExt;
//! use pinfold_map::StreamMap;
//!
//! # futures_executor::block_on(async {
//! let (tx, rx) = mpsc::unbounded();
//! let mut map = StreamMap::new();
//! assert!(map.replace("a", rx).is_none()); // tokio-stream: `map.insert("a", rx)`
//! let (_, rx) = map.remove_entry("a").unwrap(); // tokio-stream: `map.remove("a")`
//!
//! map.insert("b", rx); // any stream; `true` if it replaced one, dropped now
//! tx.unbounded_send(1).unwrap();
//! assert_eq!(map.next().await, Some(("b", 1)));
//! assert!(map.remove("b")); // any stream, dropped now
//! # });
//! ```
//!
//! A map of values that are not `Unpin`, such as `async` blocks, has no `replace` or
//! `remove_entry`:
//!
//! ```compile_fail
//! use pinfold_map::FutureMap;
//!
//! let mut map = FutureMap::new();
//! map.insert(1, async { 1 });
//! let _ = map.remove_entry(&1); // error: the `async` block is not `Unpin`
//! ```
//!
//! # The shared rules
//!
//! A map keeps the rules of every pinfold primitive on the arena, stated once in
//! [`pinfold_arena::contract`]: the [order](pinfold_arena::contract#order) of its outputs,
//! [fairness](pinfold_arena::contract#fairness) within one `poll_next`, which values are
//! polled and when its task is woken ([wakes](pinfold_arena::contract#wakes)), what a panic
//! leaves ([panics](pinfold_arena::contract#panics)), and what is allocated when
//! ([memory](pinfold_arena::contract#memory)). What differs here:
//!
//! | Rule | What differs here |
//! |------|-------------------|
//! | Order | Outputs are `(key, output)`; a future's key is gone from the map before its output is returned, and a stream that ends has its key removed within the call. |
//! | Panics | A value whose poll panics has its key removed; a key's own code may panic too ([Key panics](#key-panics)). |
//! | Memory | The values are on a growable arena; the index of the keys comes on top ([Capacity](#capacity)). |
//!
//! # Features
//!
//! `std` (default) and `tokio-coop`, as [*Features*](pinfold_arena::contract#features) states.
//! `std` also sets the [`DefaultHashBuilder`]: with it, SipHash randomly keyed
//! (`std::hash::RandomState`, as `HashMap`); without it, foldhash
//! (`foldhash::fast::RandomState`: fast, not resistant to keys chosen to collide). No other
//! crate's features change it.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's examples, compiled and run as doctests.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

use core::borrow::Borrow;
use core::hash::{BuildHasher, Hash};
use core::pin::Pin;
use core::task::{Context, Poll};
use hashbrown::HashTable;

use pin_project::pin_project;
use pinfold_arena::unwind::{self, QuietDrop};
use pinfold_arena::{GrowableArena, Key, Step, Storage};

mod future_map;
mod keyed_map;
mod kind;
mod stream_map;

pub use future_map::FutureMap;
pub use keyed_map::KeyedMap;
pub use kind::{Futures, Streams};
pub use stream_map::StreamMap;

use kind::Polled;

/// The hasher of a map made without one (by `new`, `with_capacity`, `default` or
/// `from_iter`): with the `std` feature, std's [`RandomState`](std::hash::RandomState) (SipHash
/// with random keys, as `HashMap`'s); without it, foldhash's
/// [`fast::RandomState`](foldhash::fast::RandomState) (fast, but not resistant to keys chosen
/// to collide). Only this crate's `std` feature decides which.
#[cfg(feature = "std")]
// Defined with and without `std`: no feature badge.
#[cfg_attr(docsrs, doc(auto_cfg = false))]
pub type DefaultHashBuilder = std::hash::RandomState;
/// The hasher of a map made without one (by `new`, `with_capacity`, `default` or
/// `from_iter`): with the `std` feature, std's `RandomState` (SipHash with random keys, as
/// `HashMap`'s); without it, foldhash's [`fast::RandomState`](foldhash::fast::RandomState)
/// (fast, but not resistant to keys chosen to collide). Only this crate's `std` feature
/// decides which.
#[cfg(not(feature = "std"))]
pub type DefaultHashBuilder = foldhash::fast::RandomState;

/// A slot's content: the value, its user key and that key's hash.
///
/// The key is dropped after the value, and through [`QuietDrop`]: if the value's `Drop` panics,
/// the key's drop runs as that panic unwinds, and a panic of it then is dropped (with `std`).
#[pin_project]
struct Entry<K, V> {
    hash: u64,
    #[pin]
    value: V,
    key: QuietDrop<K>,
}

/// An entry of the index: a user key, its hash (computed once, when the key came in) and the
/// arena key of its value's slot.
struct Indexed<K> {
    hash: u64,
    key: K,
    slot: Key,
}

/// Takes the index entry of the value in `slot`, whose key hashed to `hash`, out of `index`.
/// Finds it by its slot: runs none of the key's code (`Hash`, `Eq`, `Drop`).
fn take_indexed<K>(index: &mut HashTable<Indexed<K>>, hash: u64, slot: Key) -> Option<Indexed<K>> {
    let found = index
        .find_entry(hash, |indexed| indexed.slot == slot)
        .ok()?;
    Some(found.remove().0)
}

/// Polls one map entry, the value of arena slot `slot`, with `poll`: what the round does with
/// it. A value that leaves takes its key out of `index` first; if the poll, or the clone of the
/// key for an item, panics, the arena drops the value and its key leaves the index first. The
/// output's key and output are each [`QuietDrop`]: a future's are held while the arena drops the
/// future and its slot's key, and are dropped despite their panics.
#[inline(always)]
fn poll_entry<K: Clone, V, T>(
    index: &mut HashTable<Indexed<K>>,
    poll: &mut impl FnMut(Pin<&mut V>, &mut Context<'_>) -> Polled<T>,
    slot: Key,
    entry: Pin<&mut Entry<K, V>>,
    cx: &mut Context<'_>,
) -> Step<Option<(QuietDrop<K>, QuietDrop<T>)>> {
    let entry = entry.project();
    let (hash, key, value) = (*entry.hash, &**entry.key, entry.value);
    let (item_key, polled) = unwind::repair_on_unwind(
        &mut *index,
        |_| {
            let polled = poll(value, cx);
            let item_key = matches!(polled, Polled::Item(_)).then(|| key.clone());
            (item_key, polled)
        },
        |index| drop(take_indexed(index, hash, slot)),
    );
    match (item_key, polled) {
        (Some(key), Polled::Item(out)) => {
            Step::Repoll(Some((QuietDrop::new(key), QuietDrop::new(out))))
        }
        (_, Polled::Pending | Polled::Item(_)) => Step::Pending,
        (_, Polled::Last(out)) => {
            let indexed = take_indexed(index, hash, slot)
                .expect("pinfold-map: a value's key is missing from the index");
            Step::Done(Some((QuietDrop::new(indexed.key), QuietDrop::new(out))))
        }
        (_, Polled::End) => {
            // The key's `Drop` runs once it is out of the index: if it panics, the arena drops
            // the stream, which has ended anyway.
            drop(take_indexed(index, hash, slot));
            Step::Done(None)
        }
    }
}

/// What both maps are: the values in a growable arena, each beside its user key, and the index
/// from user key to arena key.
///
/// The index keeps each key's hash beside it, so growing or rehashing it never runs the keys'
/// `Hash`; and the map finds a value's index entry by its slot when the value leaves, so no
/// key's `Hash` or `Eq` runs then either. A key's code runs only in the operations that are
/// given a key, before they change anything; the clone of a key for a stream's item, and the
/// drop of a departed value's key, run with the map already consistent.
struct Core<K, V, H> {
    arena: GrowableArena<Entry<K, V>>,
    index: HashTable<Indexed<K>>,
    hasher: H,
    /// Set when `poll_next` returned `Ready(None)`; cleared by `insert` and `clear`.
    terminated: bool,
}

impl<K, V, H> Core<K, V, H> {
    fn with_hasher(hasher: H) -> Self {
        Self {
            arena: GrowableArena::new(),
            index: HashTable::new(),
            hasher,
            terminated: false,
        }
    }

    #[track_caller]
    fn with_capacity_and_hasher(capacity: usize, hasher: H) -> Self {
        Self {
            arena: GrowableArena::with_capacity(capacity),
            // Twice the room: the index rehashes in place (no allocation) when the keys it
            // removed left it full of tombstones only while it is at most half full.
            index: HashTable::with_capacity(capacity.saturating_mul(2)),
            hasher,
            terminated: false,
        }
    }

    fn len(&self) -> usize {
        self.arena.len()
    }

    /// The slots' copies of the keys, in the arena's order: that of `values` and `iter`.
    fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
        self.arena.iter().map(|(_, entry)| &*entry.key)
    }

    fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.arena
            .iter()
            .map(|(_, entry)| (&*entry.key, &entry.value))
    }

    /// How many values the map holds before an insert allocates: the smaller of the arena's
    /// slots and the index's room.
    fn capacity(&self) -> usize {
        self.arena.capacity().min(self.index.capacity())
    }

    fn values(&self) -> impl ExactSizeIterator<Item = &V> + '_ {
        self.arena.iter().map(|(_, entry)| &entry.value)
    }

    fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, &mut V)> + '_
    where
        V: Unpin,
    {
        self.iter_pin_mut()
            .map(|(key, value)| (key, Pin::into_inner(value)))
    }

    fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut V>)> + '_ {
        self.arena.iter_pin_mut().map(|(_, entry)| {
            let entry = entry.project();
            (&**entry.key, entry.value)
        })
    }

    fn clear(&mut self) {
        /// Empties the index when dropped: after the values, even if one's `Drop` panicked.
        /// Its keys are dropped one by one, as [`unwind::drop_all`] drops: if one's `Drop`
        /// panics, the others are dropped all the same, and while a value's panic unwinds, a
        /// panic of a key's `Drop` is dropped (with `std`) rather than abort.
        struct ClearIndex<'a, K>(&'a mut HashTable<Indexed<K>>);
        impl<K> Drop for ClearIndex<'_, K> {
            fn drop(&mut self) {
                unwind::drop_all(self.0.drain());
            }
        }
        self.terminated = false;
        let _index = ClearIndex(&mut self.index);
        self.arena.clear();
    }
}

impl<K, V, H> Drop for Core<K, V, H> {
    /// As `clear`: each value and key dropped once, whichever `Drop` panics.
    fn drop(&mut self) {
        self.clear();
    }
}

impl<K: Hash + Eq + Clone, V, H: BuildHasher> Core<K, V, H> {
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        self.hasher.hash_one(key)
    }

    fn insert(&mut self, key: K, value: V) -> bool {
        self.insert_evicting(key, value, |arena, replaced| {
            arena.remove(replaced);
        })
        .is_some()
    }

    /// [`insert`](Self::insert) that moves the replaced value out instead of dropping it.
    fn replace(&mut self, key: K, value: V) -> Option<V>
    where
        V: Unpin,
    {
        let Entry {
            key: stored, value, ..
        } = self
            .insert_evicting(key, value, GrowableArena::take)?
            .expect("pinfold-map: a key's slot is missing from the arena");
        // The replaced value's key is dropped once the map is consistent; if its `Drop`
        // panics, the value is dropped as the panic unwinds (guarded: its own panic then is
        // dropped).
        let value = QuietDrop::new(value);
        drop(stored);
        Some(value.into_inner())
    }

    /// Puts `value` under `key`. If a value was under `key`, `evict` takes it out of its slot
    /// (its slot's key is given) first, and what `evict` returned comes back.
    fn insert_evicting<R>(
        &mut self,
        key: K,
        value: V,
        evict: impl FnOnce(&mut GrowableArena<Entry<K, V>>, Key) -> R,
    ) -> Option<R> {
        // The key's code runs first, before anything changes. If it panics, the key and the
        // value are dropped as the panic unwinds, each quietly.
        let (key, value) = (QuietDrop::new(key), QuietDrop::new(value));
        let hash = self.hash(&*key);
        let stored = QuietDrop::new((*key).clone());
        let taken = self.index.find(hash, |indexed| indexed.key == *key);
        let (key, stored, value) = (key.into_inner(), stored.into_inner(), value.into_inner());
        let Some(&Indexed { slot: replaced, .. }) = taken else {
            self.terminated = false;
            self.index.reserve(1, |indexed| indexed.hash);
            let slot = self.arena.insert(Entry {
                hash,
                value,
                key: QuietDrop::new(stored),
            });
            self.index
                .insert_unique(hash, Indexed { hash, key, slot }, |indexed| indexed.hash);
            return None;
        };
        self.terminated = false;
        // The old value goes first, so that replacing in a full map needs no new room; if its
        // `Drop` (or its stored key's) panics, the new value and its key go in all the same
        // (the old key of the index is dropped then) and the panic propagates.
        let mut incoming = Some((key, stored, value));
        let evicted = unwind::repair_on_unwind(
            self,
            |core| evict(&mut core.arena, replaced),
            |core| drop(core.put_in_place_of(hash, replaced, &mut incoming)),
        );
        let old_key = self.put_in_place_of(hash, replaced, &mut incoming);
        // The index's old key is dropped now, with the map consistent, and before the result
        // is made: if its `Drop` panics, what was evicted is dropped as the panic unwinds
        // (guarded: its own panic then is dropped), not leaked with an unfinished return
        // value.
        let evicted = QuietDrop::new(evicted);
        drop(old_key);
        Some(evicted.into_inner())
    }

    /// Puts the value that replaces the one in slot `replaced` (which is gone) in a slot of its
    /// own, with the slot's copy of its key, and points the key's index entry at it, with the
    /// key it was inserted under (`incoming` is that key, the slot's copy and the value): both
    /// copies are the new key, as tokio-stream keeps it. Gives back the index's old key, to be
    /// dropped by the caller. Does nothing the second time.
    fn put_in_place_of(
        &mut self,
        hash: u64,
        replaced: Key,
        incoming: &mut Option<(K, K, V)>,
    ) -> Option<K> {
        let (key, stored, value) = incoming.take()?;
        let slot = self.arena.insert(Entry {
            hash,
            value,
            key: QuietDrop::new(stored),
        });
        let indexed = self
            .index
            .find_mut(hash, |indexed| indexed.slot == replaced)?;
        indexed.slot = slot;
        Some(core::mem::replace(&mut indexed.key, key))
    }

    fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let Ok(found) = self
            .index
            .find_entry(hash, |indexed| indexed.key.borrow() == key)
        else {
            return false;
        };
        let (Indexed { key, slot, .. }, _) = found.remove();
        // The value goes before the key is dropped: a panicking key `Drop` leaves the map
        // consistent. If the value's `Drop` (or its slot's key's) panics, the key is dropped
        // as the panic unwinds (guarded: its own panic then is dropped).
        let _key = QuietDrop::new(key);
        self.arena.remove(slot)
    }

    /// [`remove`](Self::remove) that moves the value out, with its key, instead of dropping
    /// them.
    fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Unpin,
    {
        let hash = self.hash(key);
        let found = self
            .index
            .find_entry(hash, |indexed| indexed.key.borrow() == key)
            .ok()?;
        let (Indexed { key, slot, .. }, _) = found.remove();
        let Entry {
            key: stored, value, ..
        } = self
            .arena
            .take(slot)
            .expect("pinfold-map: a key's slot is missing from the arena");
        // The slot's copy of the key is dropped once the map is consistent; if its `Drop`
        // panics, the key and the value are dropped as the panic unwinds (each guarded: their
        // own panics then are dropped).
        let (key, value) = (QuietDrop::new(key), QuietDrop::new(value));
        drop(stored);
        Some((key.into_inner(), value.into_inner()))
    }

    /// The slot of the value under `key`.
    fn slot<Q>(&self, key: &Q) -> Option<Key>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let indexed = self
            .index
            .find(hash, |indexed| indexed.key.borrow() == key)?;
        Some(indexed.slot)
    }

    fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.slot(key).is_some()
    }

    fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = self.slot(key)?;
        self.arena.get(slot).map(|entry| &entry.value)
    }

    fn get_pin_mut<Q>(&mut self, key: &Q) -> Option<Pin<&mut V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = self.slot(key)?;
        self.arena
            .get_pin_mut(slot)
            .map(|entry| entry.project().value)
    }

    /// One round: the next output of any woken value, with its user key. `poll` polls one
    /// value; values that leave are dropped by the arena and their keys taken out of the index
    /// before the output is returned. An output spends a unit of tokio's budget (with the
    /// `tokio-coop` feature).
    fn poll_next<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnMut(Pin<&mut V>, &mut Context<'_>) -> Polled<T>,
    ) -> Poll<Option<(K, T)>> {
        pinfold_arena::coop::poll_output(cx, |cx| self.poll_round(cx, poll))
    }

    /// [`poll_next`](Self::poll_next) without tokio's budget.
    fn poll_round<T>(
        &mut self,
        cx: &mut Context<'_>,
        mut poll: impl FnMut(Pin<&mut V>, &mut Context<'_>) -> Polled<T>,
    ) -> Poll<Option<(K, T)>> {
        let index = &mut self.index;
        // Always inlined, as `poll_entry` is: called from two places in the arena's round, the
        // closure was not, and each item paid a call. Guarded by `map_streams_10k`,
        // instructions.
        let polled = self.arena.poll_next_some(
            cx,
            #[inline(always)]
            |slot, entry: Pin<&mut Entry<K, V>>, cx| poll_entry(index, &mut poll, slot, entry, cx),
        );
        if let Poll::Ready(None) = polled {
            self.terminated = true;
        }
        polled.map(|polled| polled.map(|(_, (key, out))| (key.into_inner(), out.into_inner())))
    }
}
