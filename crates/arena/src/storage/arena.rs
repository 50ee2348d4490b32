//! The arena: fixed storage for pinned values ([`Store`]) and the poll loop's state over it
//! ([`Rounds`]).

use core::fmt;
use core::pin::Pin;
use core::task::Waker;

use crate::key::Key;
use crate::poll::round::Rounds;
use crate::storage::store::Store;
pub use crate::storage::store::{IntoValues, Iter, IterPinMut};
use crate::storage::{
    Storage,
    sealed::{Sealed, Token},
};

/// A fixed-capacity arena of pinned values, each with its own waker. See the
/// [crate documentation](crate) for the design.
///
/// The owner (whoever holds `&mut Arena`) inserts, polls and removes values; wakers may be
/// used from any thread. Values are pinned from insertion until they are dropped in place, so
/// `T` need not be `Unpin`.
pub struct Arena<T> {
    store: Store<T>,
    rounds: Rounds,
}

impl<T> Arena<T> {
    /// An arena of `capacity` slots whose wakes notify the task that polls it. Allocates twice
    /// (the slots, and the wake table the wakers share), and never again.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self {
            store: Store::new(capacity),
            rounds: Rounds::NEW,
        }
    }

    /// [`new`](Self::new) with every slot's generation starting at `generation`, to reach the
    /// generations' end in tests.
    #[cfg(test)]
    pub(crate) fn starting_at_generation(capacity: usize, generation: u64) -> Self {
        Self {
            store: Store::starting_at_generation(capacity, generation),
            rounds: Rounds::NEW,
        }
    }

    /// Whether slots are queued for this round.
    #[cfg(test)]
    pub(crate) fn has_ready(&self) -> bool {
        self.rounds.queued().0
    }

    /// Whether slots wait for the next round.
    #[cfg(test)]
    pub(crate) fn has_deferred(&self) -> bool {
        self.rounds.queued().1
    }

    /// An owned waker of `key`'s value, if it is still in the arena: waking it queues the value
    /// as the waker lent to its `poll` does.
    pub fn waker(&self, key: Key) -> Option<Waker> {
        self.store.waker(key)
    }

    /// Moves `key`'s value out and frees its slot.
    pub fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        self.store.take(key)
    }
}

impl<T> Sealed for Arena<T> {}

impl<T> Storage<T> for Arena<T> {
    type Of<U> = Arena<U>;
    type Iter<'a>
        = Iter<'a, T>
    where
        T: 'a;
    type IterPinMut<'a>
        = IterPinMut<'a, T>
    where
        T: 'a;
    type IntoValues = IntoValues<T>;
    type Slots = Store<T>;

    #[inline(always)]
    fn engine(&mut self, _: Token) -> (&mut Rounds, &mut Store<T>) {
        (&mut self.rounds, &mut self.store)
    }

    #[inline]
    fn insert(&mut self, value: T) -> Result<Key, T> {
        let (key, id, linked) = self.store.insert(value)?;
        self.rounds.push_inserted(&mut self.store, id, linked);
        Ok(key)
    }

    fn remove(&mut self, key: Key) -> bool {
        self.store.remove(key)
    }

    fn contains_key(&self, key: Key) -> bool {
        self.store.contains_key(key)
    }

    fn get(&self, key: Key) -> Option<&T> {
        self.store.get(key)
    }

    fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        self.store.get_pin_mut(key)
    }

    fn len(&self) -> usize {
        self.store.len()
    }

    /// How many values the arena can hold: fixed when it is made.
    fn capacity(&self) -> usize {
        self.store.capacity()
    }

    fn is_full(&self) -> bool {
        self.store.is_full()
    }

    /// Drops every value in place. Storage is kept; nothing is allocated or freed.
    fn clear(&mut self) {
        // No value is left to poll: the queues forget their slots first (also if a drop
        // panics), so that the next call does not wake the task for a value that left.
        self.rounds.forget_all(&mut self.store);
        self.store.clear();
    }

    fn iter(&self) -> Iter<'_, T> {
        self.store.iter()
    }

    fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        self.store.iter_pin_mut()
    }

    fn into_values(self) -> IntoValues<T>
    where
        T: Unpin,
    {
        self.store.into_values()
    }
}

impl<T> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
