//! The arena: fixed storage for pinned values ([`Store`]) and the poll loop's state over it
//! ([`Rounds`]).

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::key::Key;
use crate::round::{Budget, Rounds};
use crate::step::Step;
use crate::storage::{Storage, sealed::Sealed};
use crate::store::Store;
pub use crate::store::{IntoValues, Iter, IterPinMut};

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

    /// How many values the arena can hold.
    pub fn capacity(&self) -> usize {
        self.store.capacity()
    }

    /// How many values the arena holds.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the arena holds no value.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Whether every slot holds a value.
    pub fn is_full(&self) -> bool {
        self.store.is_full()
    }

    /// Stores `value` in a free slot, queues it to be polled (without any atomic operation) and
    /// returns its key; gives `value` back if the arena is full.
    #[inline]
    pub fn insert(&mut self, value: T) -> Result<Key, T> {
        let (key, id) = self.store.insert(value)?;
        self.rounds.push(&mut self.store, id);
        Ok(key)
    }

    /// Whether `key`'s value is still in the arena.
    pub fn contains_key(&self, key: Key) -> bool {
        self.store.contains_key(key)
    }

    /// `key`'s value, if it is still in the arena.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.store.get(key)
    }

    /// `key`'s value, pinned, if it is still in the arena.
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        self.store.get_pin_mut(key)
    }

    /// An owned waker of `key`'s value, if it is still in the arena: waking it queues the value
    /// as the waker lent to its `poll` does.
    pub fn waker(&self, key: Key) -> Option<Waker> {
        self.store.waker(key)
    }

    /// Drops `key`'s value in place now and frees its slot; `false` if it was gone already.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
    pub fn remove(&mut self, key: Key) -> bool {
        self.store.remove(key)
    }

    /// Moves `key`'s value out and frees its slot.
    pub fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        self.store.take(key)
    }

    /// Moves the values out, in slot order, for `T: Unpin`. The values the iterator has not
    /// given when it is dropped are dropped with the arena.
    pub fn into_values(self) -> IntoValues<T>
    where
        T: Unpin,
    {
        self.store.into_values()
    }

    /// Drops every value in place. Storage is kept; nothing is allocated or freed.
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates.
    pub fn clear(&mut self) {
        self.store.clear();
    }

    /// The values with their keys, in slot order.
    pub fn iter(&self) -> Iter<'_, T> {
        self.store.iter()
    }

    /// The values, pinned, with their keys, in slot order.
    pub fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        self.store.iter_pin_mut()
    }

    /// Starts a poll round: the fairness budget for
    /// [`poll_with_budget`](Arena::poll_with_budget). Values woken again in the last round are
    /// queued for this one.
    #[inline]
    pub fn budget(&mut self) -> Budget {
        self.rounds.budget(&mut self.store)
    }

    /// Polls the arena as a stream: the next output of any woken value, fairly.
    ///
    /// `f` polls one value (with the context of its own waker); [`Step`] says what came of it.
    /// Returns `Ready(None)` when the arena is empty, `Ready(Some((key, output)))` when a value
    /// gives an output, and `Pending` once every woken value has been polled (the task is woken
    /// when a value's waker fires) or when the round's [`Budget`] is spent (the task has been
    /// woken already: it yields to let others run).
    ///
    /// If `f` panics, the value is dropped in place, its slot freed, and the panic resumed.
    #[inline]
    pub fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        self.rounds.poll_next(&mut self.store, cx, f)
    }

    /// [`poll_next`](Arena::poll_next) for values that may leave without an output, such as
    /// streams (`Step::of_stream`): an output of `None` (a stream's end: `Step::Done(None)` drops the
    /// value) is not returned; the round goes on to the next value, within the same budget.
    /// `Ready(None)` when the arena holds nothing.
    #[inline]
    pub fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        self.rounds.poll_next_some(&mut self.store, cx, f)
    }

    /// [`poll_next`](Arena::poll_next) within a round the caller started with
    /// [`budget`](Arena::budget), for a caller that takes several outputs in one poll of its
    /// own (a join, a stream adapter): call it again with the same budget after each output,
    /// and each value is still polled at most once.
    pub fn poll_with_budget<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        self.rounds.poll(&mut self.store, cx, budget, f)
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

    #[inline]
    fn insert(&mut self, value: T) -> Result<Key, T> {
        Arena::insert(self, value)
    }

    #[inline]
    fn is_full(&self) -> bool {
        Arena::is_full(self)
    }

    crate::storage::forward_to_inherent!(Arena);
}

impl<T> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}
