//! [`FutureMap`] and [`StreamMap`]: futures and streams keyed by the user's own keys (a peer
//! id, a request id, a topic), polled concurrently on pinfold's growable waker-slot arena.
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
//! Each value sits in a slot of a [`GrowableArena`] with a copy of its user key beside it; a
//! `HashMap` (std's; `hashbrown`'s without `std`) from user key to the slot's arena [`Key`] finds
//! the slot of a key. So `insert`, `remove`, `contains_key`, `get` and `get_pin_mut` cost one hash
//! of the key and one lookup (expected constant time, as `HashMap`'s), plus the arena's
//! constant-time slot work; each key is cloned once when it is inserted. An output costs no lookup
//! while its value stays (a stream's item clones the key from its slot) and one `HashMap` removal
//! when its value leaves (a future's output takes the key out of the map, so it is not cloned).
//!
//! Inserting under a key that is taken drops the value there at once, in place, and its output
//! never comes; so does `remove`. A waker of a removed or replaced value never causes a poll of
//! the value that takes its slot (unless more wakers of departed values are alive at once than
//! the map has slots: then one may cause a spurious poll).
//!
//! # Fairness
//!
//! As the arena's (see [`pinfold_arena::implementation`]): one call of `poll_next` polls each
//! value at most once, so it takes at most one item from each stream; it polls only the values
//! that were woken or that just gave an item, the woken ones first; and it yields (wakes its
//! task and returns `Pending`) once it has polled as many values as the map held when it
//! started, once two values woke themselves during their own poll, or once 32 values polled
//! before were woken and `Pending` again ([`pinfold_arena::MAX_VAIN_REPOLLS`]).
//!
//! # Panics
//!
//! If a value panics while polled, it is dropped in place and its key removed, and the panic
//! propagates out of `poll_next`; the map stays usable with the other values. If the `Drop` of
//! a value or of a key panics (in `insert`, `remove`, `clear`), the map stays consistent: the
//! value and its key are gone, and a value being inserted is in the map.
//!
//! # Memory
//!
//! [`FutureMap::with_capacity`] and [`StreamMap::with_capacity`] allocate room for `n` values
//! and an index with room for `2 n` keys (a `HashMap` that has removed many keys rehashes in
//! place, without allocating, only while it is at most half full): values and keys then go
//! through the map without any allocation as long as it holds at most `n` at once (and they
//! allocate nothing themselves). Replacing a key's value frees the old one's slot first, so it
//! needs no room. Beyond `n`, the map grows as `FuturesUnordered` does.
//!
//! # Features
//!
//! - `std` (default): a panic in a value's poll or `Drop` is caught with `catch_unwind` and
//!   resumed once the map is consistent. Without it the crate is `#![no_std]` + `alloc` and
//!   stays consistent with drop guards while the panic unwinds (see
//!   [`pinfold_arena::unwind`]). Without `std` the index from user key to slot is a
//!   `hashbrown::HashMap` with its default hasher (foldhash: fast, not resistant to keys chosen
//!   to collide), with it `std::collections::HashMap` (SipHash, randomly keyed).
//! - `tokio-coop`: each output spends a unit of tokio's cooperative budget, and the map yields once
//!   the budget is spent (see [`pinfold_arena::coop`]).
#![forbid(unsafe_code)]
#![no_std]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

use core::borrow::Borrow;
use core::hash::Hash;
use core::pin::Pin;
use core::task::{Context, Poll};
#[cfg(not(feature = "std"))]
use hashbrown::{HashMap, hash_map};
#[cfg(feature = "std")]
use std::collections::{HashMap, hash_map};

use pin_project::pin_project;
use pinfold_arena::{GrowableArena, Key, Step, unwind};

mod future_map;
mod stream_map;

pub use future_map::FutureMap;
pub use stream_map::StreamMap;

/// A slot's content: the value and its user key.
#[pin_project]
struct Entry<K, V> {
    key: K,
    #[pin]
    value: V,
}

/// What polling a value gave.
enum Polled<T> {
    Pending,
    /// An output; the value stays (a stream's item).
    Item(T),
    /// The value's last output; it leaves (a future's).
    Last(T),
    /// The value ended without an output; it leaves (a stream's end).
    End,
}

/// Removes a value's key from the index if its poll unwinds (the arena then drops the value);
/// disarmed once the poll has returned.
struct ForgetOnUnwind<'a, K: Hash + Eq> {
    index: &'a mut HashMap<K, Key>,
    key: &'a K,
    armed: bool,
}

impl<K: Hash + Eq> Drop for ForgetOnUnwind<'_, K> {
    fn drop(&mut self) {
        if self.armed {
            self.index.remove(self.key);
        }
    }
}

/// What both maps are: the values in a growable arena, each beside its user key, and the index
/// from user key to arena key.
struct Core<K, V> {
    arena: GrowableArena<Entry<K, V>>,
    index: HashMap<K, Key>,
    /// Set when `poll_next` returned `Ready(None)`; cleared by `insert` and `clear`.
    terminated: bool,
}

impl<K, V> Core<K, V> {
    fn new() -> Self {
        Self {
            arena: GrowableArena::new(),
            index: HashMap::new(),
            terminated: false,
        }
    }

    fn with_capacity(capacity: usize) -> Self {
        Self {
            arena: GrowableArena::with_capacity(capacity),
            // Twice the room: `HashMap` rehashes in place (no allocation) when the keys it
            // removed left it full of tombstones only while it is at most half full.
            index: HashMap::with_capacity(capacity.saturating_mul(2)),
            terminated: false,
        }
    }

    fn len(&self) -> usize {
        self.arena.len()
    }

    fn keys(&self) -> hash_map::Keys<'_, K, Key> {
        self.index.keys()
    }

    fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.arena
            .iter()
            .map(|(_, entry)| (&entry.key, &entry.value))
    }

    fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut V>)> + '_ {
        self.arena.iter_pin_mut().map(|(_, entry)| {
            let entry = entry.project();
            (&*entry.key, entry.value)
        })
    }

    fn clear(&mut self) {
        /// Clears the index when dropped: after the values, even if one's `Drop` panicked.
        struct ClearIndex<'a, K>(&'a mut HashMap<K, Key>);
        impl<K> Drop for ClearIndex<'_, K> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        self.terminated = false;
        let _index = ClearIndex(&mut self.index);
        self.arena.clear();
    }
}

impl<K: Hash + Eq + Clone, V> Core<K, V> {
    fn insert(&mut self, key: K, value: V) -> bool {
        let stored = key.clone();
        self.terminated = false;
        let Some(&replaced) = self.index.get(&key) else {
            let slot = self.arena.insert(Entry { key: stored, value });
            self.index.insert(key, slot);
            return false;
        };
        // The old value goes first, so that replacing in a full map needs no new room; if its
        // `Drop` panics, the new value goes in all the same and then the panic propagates.
        let mut incoming = Some((key, stored, value));
        unwind::repair_on_unwind(
            self,
            |core| {
                core.arena.remove(replaced);
            },
            |core| core.put_in_place_of(&mut incoming),
        );
        self.put_in_place_of(&mut incoming);
        true
    }

    /// Puts the value that replaces a key's old one (whose slot is gone) in a slot of its own
    /// and points the key's index entry at it; then drops `key` (the index keeps the key it
    /// has), with the map consistent. Does nothing the second time.
    fn put_in_place_of(&mut self, incoming: &mut Option<(K, K, V)>) {
        let Some((key, stored, value)) = incoming.take() else {
            return;
        };
        let slot = self.arena.insert(Entry { key: stored, value });
        if let Some(indexed) = self.index.get_mut(&key) {
            *indexed = slot;
        }
    }

    fn remove<Q>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        match self.index.remove_entry(key) {
            // The value goes before the key is dropped: a panicking key `Drop` leaves the map
            // consistent.
            Some((_key, slot)) => self.arena.remove(slot),
            None => false,
        }
    }

    fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.index.contains_key(key)
    }

    fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = *self.index.get(key)?;
        self.arena.get(slot).map(|entry| &entry.value)
    }

    fn get_pin_mut<Q>(&mut self, key: &Q) -> Option<Pin<&mut V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let slot = *self.index.get(key)?;
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
        let poll_entry = |_: Key, entry: Pin<&mut Entry<K, V>>, cx: &mut Context<'_>| {
            let entry = entry.project();
            let mut guard = ForgetOnUnwind {
                index: &mut *index,
                key: entry.key,
                armed: true,
            };
            let polled = poll(entry.value, cx);
            guard.armed = false;
            let (index, key) = (&mut *guard.index, guard.key);
            match polled {
                Polled::Pending => Step::Pending,
                Polled::Item(out) => Step::Repoll(Some((key.clone(), out))),
                Polled::Last(out) => {
                    let (key, _) = index
                        .remove_entry(key)
                        .expect("pinfold-map: a value's key is missing from the index");
                    Step::Done(Some((key, out)))
                }
                Polled::End => {
                    index.remove(key);
                    Step::Done(None)
                }
            }
        };
        let polled = self.arena.poll_next_some(cx, poll_entry);
        if let Poll::Ready(None) = polled {
            self.terminated = true;
        }
        polled.map(|polled| polled.map(|(_, out)| out))
    }
}

/// The methods and trait implementations `FutureMap` and `StreamMap` share: `$map<K, $v>`
/// holds values of type `$v`, called `$what` in the docs.
macro_rules! shared {
    ($map:ident, $v:ident, $what:literal) => {
        impl<K, $v> $map<K, $v> {
            #[doc = concat!("An empty map. Allocates nothing: the first insert allocates.")]
            pub fn new() -> Self {
                Self {
                    core: $crate::Core::new(),
                }
            }

            #[doc = concat!("An empty map with room for `capacity` ", $what, "s (the arena's first group and the index), allocated now.")]
            pub fn with_capacity(capacity: usize) -> Self {
                Self {
                    core: $crate::Core::with_capacity(capacity),
                }
            }

            #[doc = concat!("How many ", $what, "s the map holds.")]
            pub fn len(&self) -> usize {
                self.core.len()
            }

            #[doc = concat!("Whether the map holds no ", $what, ".")]
            pub fn is_empty(&self) -> bool {
                self.core.len() == 0
            }

            #[doc = concat!("The keys of the ", $what, "s in the map, in no particular order.")]
            pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
                self.core.keys()
            }

            #[doc = concat!("The ", $what, "s with their keys, in no particular order.")]
            pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &$v)> + '_ {
                self.core.iter()
            }

            #[doc = concat!("The ", $what, "s, pinned, with their keys, in no particular order.")]
            pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (&K, Pin<&mut $v>)> + '_ {
                self.core.iter_pin_mut()
            }

            #[doc = concat!("Drops every ", $what, " and key. The map is no longer terminated. If a ", $what, "'s `Drop` panics, the others are dropped all the same, then the panic propagates; the map is empty and usable.")]
            pub fn clear(&mut self) {
                self.core.clear();
            }
        }

        impl<K: Hash + Eq + Clone, $v> $map<K, $v> {
            #[doc = concat!("Adds `value` under `key`; it is polled by the next `poll_next`. A ", $what, " already under `key` is dropped now (its output never comes) and replaced: then `true`.")]
            pub fn insert(&mut self, key: K, value: $v) -> bool {
                self.core.insert(key, value)
            }

            #[doc = concat!("Drops the ", $what, " under `key` now; no output of it comes. `false` if there was none.")]
            pub fn remove<Q>(&mut self, key: &Q) -> bool
            where
                K: Borrow<Q>,
                Q: Hash + Eq + ?Sized,
            {
                self.core.remove(key)
            }

            #[doc = concat!("Whether a ", $what, " is under `key`.")]
            pub fn contains_key<Q>(&self, key: &Q) -> bool
            where
                K: Borrow<Q>,
                Q: Hash + Eq + ?Sized,
            {
                self.core.contains_key(key)
            }

            #[doc = concat!("The ", $what, " under `key`.")]
            pub fn get<Q>(&self, key: &Q) -> Option<&$v>
            where
                K: Borrow<Q>,
                Q: Hash + Eq + ?Sized,
            {
                self.core.get(key)
            }

            #[doc = concat!("The ", $what, " under `key`, pinned.")]
            pub fn get_pin_mut<Q>(&mut self, key: &Q) -> Option<Pin<&mut $v>>
            where
                K: Borrow<Q>,
                Q: Hash + Eq + ?Sized,
            {
                self.core.get_pin_mut(key)
            }
        }

        // Nothing is pinned but the values, in the arena's own storage; the keys in the index
        // are never pinned.
        impl<K, $v> Unpin for $map<K, $v> {}

        impl<K, $v> Default for $map<K, $v> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<K: Hash + Eq + Clone, $v> FromIterator<(K, $v)> for $map<K, $v> {
            #[doc = concat!("A map of every `(key, ", $what, ")` of the iterator, inserted in order (a later one replaces an earlier one under the same key).")]
            fn from_iter<I: IntoIterator<Item = (K, $v)>>(iter: I) -> Self {
                let mut map = Self::new();
                map.extend(iter);
                map
            }
        }

        impl<K: Hash + Eq + Clone, $v> Extend<(K, $v)> for $map<K, $v> {
            fn extend<I: IntoIterator<Item = (K, $v)>>(&mut self, iter: I) {
                for (key, value) in iter {
                    self.insert(key, value);
                }
            }
        }

        impl<K: fmt::Debug, $v> fmt::Debug for $map<K, $v> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($map))
                    .field("len", &self.len())
                    .field("keys", &self.core.keys().collect::<alloc::vec::Vec<_>>())
                    .field("terminated", &self.core.terminated)
                    .finish_non_exhaustive()
            }
        }
    };
}
use shared;
