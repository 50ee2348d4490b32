//! The storage of an arena: fixed slots for pinned values, the entries their wakers point at,
//! and the wake table shared with the wakers. A [`Store`] is an [`Arena`]'s
//! storage, and each group of a [`GrowableArena`](crate::GrowableArena); the poll loop
//! (`poll.rs`) reaches its slots through [`PollStorage`]. An [`Arena`] is one store and its rounds.

use core::cell::UnsafeCell;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop};
use core::pin::Pin;
use core::ptr;
use core::slice;
use core::task::{Context, Waker};

use crate::index::{trusted, trusted_mut};
use crate::key::{self, Key};
use crate::poll::{self, Mark, Marks, NIL, PollStorage, Polled, Queue, Rounds, Step, UNLINKED};
use crate::storage::block::Block;
use crate::storage::{
    Storage,
    sealed::{Sealed, Token},
};
use crate::sync::Ordering;
use crate::unwind::{self, Kept};
use crate::wake::atomic_waker::AtomicWaker;
use crate::wake::hub::Hub;
use crate::wake::ready_set::{self, Drain, ParentWord};
#[cfg(feature = "std")]
use crate::wake::wake_table::watch::{self, Watch};
use crate::wake::wake_table::{Parent, WakeTable};
use alloc::boxed::Box;
use alloc::vec::Vec;

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
    #[track_caller]
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
    type PollStorage = Store<T>;

    #[inline(always)]
    fn engine(&mut self, _: Token) -> (&mut Rounds, &mut Store<T>) {
        (&mut self.rounds, &mut self.store)
    }

    #[inline]
    fn insert(&mut self, value: T) -> Result<Key, T> {
        let (key, id, linked) = self.store.insert::<false>(value)?;
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

/// The largest capacity: an arena has two entries per slot, indexed by `u32` below `NIL`.
const MAX_CAPACITY: usize = (u32::MAX as usize - 1) / 2;

/// The generation after which a slot takes no value: its next value would repeat a key.
/// Generations count in the 63 bits of [`Slot::tag`] above its `OCCUPIED` bit.
pub(crate) const RETIRED_GENERATION: u64 = u64::MAX >> 1;

/// The bit of [`Slot::tag`] that says the slot holds a value.
const OCCUPIED: u64 = 1;

/// One place for a pinned value: the value (or, free, the next free slot), its tag and its mark.
pub(crate) struct Slot<T> {
    /// The value while the slot is occupied (see `tag`), the next free slot while it is free.
    /// In an `UnsafeCell` so that the owner's shared borrows of the slots (its queues go
    /// through `&[Slot<T>]`) never assert that the value's bytes are frozen: a pinned future
    /// may keep a `&mut` into itself across `Pending` (`read(&mut buf).await`), and a shared
    /// reference covering it would take that borrow's permission away (Stacked and Tree
    /// Borrows). Only the owner, through `&mut Slot`, touches it.
    held: UnsafeCell<Held<T>>,
    /// `generation << 1 | OCCUPIED`. The generation counts the values this slot has held
    /// (from the arena's starting generation), and the current value's key carries it; a slot
    /// that reaches [`RETIRED_GENERATION`] is retired: it never takes another value, so a
    /// generation never repeats. Its low bit also names the entry bound to the value: entry
    /// `2 i + (generation & 1)` of slot `i` (see [`Store::entry_of`]).
    tag: u64,
    /// The poll loop's mark: the slot's link in a queue, and the round that last polled it.
    mark: Mark,
}

// SAFETY: the `UnsafeCell` around the value only keeps the owner's shared borrows of the slots
// from covering the value (see `held`); through `&Slot` the value is only ever read
// (`value_ref`, which `get` and the iterators use), never written, so sharing a slot (a store,
// an iterator of `&T`) across threads shares `&T`: sound exactly when `T: Sync`, as it was
// with the values held directly.
unsafe impl<T: Sync> Sync for Slot<T> {}

/// The slots: one block of `capacity`, allocated when the store is made and never moved, of
/// which the first `len` (the block's length) are written. An arena's slot is written by the
/// insert that first takes it ([`make`](Self::make)), so making an arena writes none:
/// building a set of many values costs no walk over its slots first (`held_10k`,
/// instructions); a growable arena's group writes them all when it is added
/// ([`make_all`](Self::make_all)). Only the written slots are ever reached: the slice the
/// store sees ([`Deref`](core::ops::Deref)) is theirs.
///
/// The block is reached through its raw pointer, never through a `Box`: a pointer made from it
/// stays valid beside the references made from it later. It is a [`Block`], with no parameter
/// (see [`block`](crate::storage::block)), whose length counts the slots written.
pub(crate) struct SlotBox<T> {
    raw: Block,
    _values: PhantomData<T>,
    /// The auto traits of the boxed slots this block is (no drop: that is `raw`'s).
    _slots: PhantomData<ManuallyDrop<Box<[Slot<T>]>>>,
}

// The values sit in the heap, where moving the box does not move them, as with `Box`.
impl<T> Unpin for SlotBox<T> {}

impl<T> SlotBox<T> {
    /// A block of `capacity` slots, none written.
    fn new(capacity: usize) -> Self {
        // Exactly `capacity` slots: the store's wake table has entries for that many, and
        // its free list ends there. `Vec::with_capacity` promises at least the capacity asked
        // for, not exactly it; a boxed slice has exactly its length.
        let slots = Box::into_raw(Box::<[Slot<T>]>::new_uninit_slice(capacity));
        // SAFETY: the box's block, allocated by the global allocator for `capacity` slots (or
        // none, dangling and aligned, for 0), handed to the `Vec` whole and once: a `Vec` of
        // that capacity, holding no slot yet.
        let vec = unsafe { Vec::from_raw_parts(slots.cast::<Slot<T>>(), 0, capacity) };
        // A slot has nothing to drop when its value's type has nothing to drop.
        let raw = Block::holding(vec, mem::needs_drop::<T>());
        debug_assert_eq!(raw.capacity(), capacity);
        Self {
            raw,
            _values: PhantomData,
            _slots: PhantomData,
        }
    }

    /// How many slots the block has.
    #[inline(always)]
    fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// Writes every slot, free, its generation `generation`, each linked to the next, the
    /// last to `NIL`: a free list of them all, in order.
    fn make_all(&mut self, generation: u64) {
        let slots = self.raw.base::<Slot<T>>();
        let capacity = self.raw.capacity();
        for index in 0..capacity {
            // SAFETY: `index` is below the block's length: a slot of the block, written once.
            unsafe {
                slots.add(index).write(Slot {
                    held: UnsafeCell::new(Held {
                        next_free: index as u32 + 1,
                    }),
                    tag: generation << 1,
                    mark: Mark::NEW,
                });
            }
        }
        // SAFETY: every slot is written.
        unsafe { self.raw.set_len(capacity) };
        // The last slot ends the list (written once, not tested in every slot's making).
        if let Some(last) = self.last_mut() {
            *last.held.get_mut() = Held { next_free: NIL };
        }
    }

    /// Slot `index`, the first not written yet, counted as written from now on, its mark that
    /// of a slot in no queue.
    ///
    /// # Safety
    /// `index` is the count of slots made, and below the capacity; the caller writes the
    /// slot's other fields before anything reads the slots.
    #[inline(always)]
    unsafe fn make(&mut self, index: usize) -> *mut Slot<T> {
        debug_assert!(
            index == self.raw.len() && index < self.raw.capacity(),
            "a slot made out of turn"
        );
        // SAFETY: the slot's fields are written before anything reads or drops the slots
        // (the caller), and `index` is below the capacity.
        unsafe { self.raw.set_len(index + 1) };
        // SAFETY: `index` is below the block's length (the caller): a slot of the block.
        let slot = unsafe { self.raw.base::<Slot<T>>().add(index) };
        // SAFETY: as above; the mark is written whole, by pointer (nothing is written there).
        unsafe { (&raw mut (*slot).mark).write(Mark::NEW) };
        slot
    }
}

impl<T> core::ops::Deref for SlotBox<T> {
    type Target = [Slot<T>];

    #[inline(always)]
    fn deref(&self) -> &[Slot<T>] {
        // SAFETY: the block's first `len` slots are written; the borrow of `self` keeps
        // them from being written meanwhile (only `&mut SlotBox` writes).
        unsafe { slice::from_raw_parts(self.raw.base::<Slot<T>>(), self.raw.len()) }
    }
}

impl<T> core::ops::DerefMut for SlotBox<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Slot<T>] {
        // SAFETY: as in `deref`; the mutable borrow of `self` is the only way to the slots.
        unsafe { slice::from_raw_parts_mut(self.raw.base::<Slot<T>>(), self.raw.len()) }
    }
}

/// What a slot holds: a value, or (free) the next free slot. Which one is in the slot's tag.
union Held<T> {
    value: ManuallyDrop<T>,
    next_free: u32,
}

impl<T> Slot<T> {
    /// Whether the slot holds a value.
    #[inline(always)]
    fn occupied(&self) -> bool {
        self.tag & OCCUPIED != 0
    }

    /// The generation of the slot's value (or of its last one, if free).
    #[inline(always)]
    fn generation(&self) -> u64 {
        self.tag >> 1
    }

    /// The value, for the owner (who holds `&mut`).
    #[inline(always)]
    fn value_mut(&mut self) -> Option<&mut T> {
        if !self.occupied() {
            return None;
        }
        // SAFETY: an occupied slot's `held` is its value.
        Some(unsafe { &mut self.held.get_mut().value })
    }

    /// The value, shared: only for the user's own shared access (`get`, `iter`).
    fn value_ref(&self) -> Option<&T> {
        if !self.occupied() {
            return None;
        }
        // SAFETY: an occupied slot's `held` is its value. It is written only through
        // `&mut Slot` (the owner's `&mut Arena`); while this `&Slot` lives nobody holds one, so
        // nothing writes it.
        unsafe { Some(&(*self.held.get()).value) }
    }

    /// The next free slot, of a free slot.
    #[inline(always)]
    fn next_free(&mut self) -> u32 {
        debug_assert!(!self.occupied());
        // SAFETY: a free slot's `held` is its link, written when it was freed (or made).
        unsafe { self.held.get_mut().next_free }
    }

    /// Moves the value out of an occupied slot, leaving it free (not yet linked).
    ///
    /// # Safety
    /// The slot is occupied, and its value may be moved (`T: Unpin`, or never pinned).
    #[inline]
    unsafe fn take_value(&mut self) -> T {
        self.tag &= !OCCUPIED;
        // SAFETY: the slot held a value (the caller), which is read out once: the tag now
        // says the slot is free, so nothing reads or drops it there again.
        unsafe { ManuallyDrop::take(&mut self.held.get_mut().value) }
    }
}

impl<T> Slot<T> {
    /// Drops the slot's value in place, if it holds one, leaving it free (not linked): free
    /// also if the `Drop` panics.
    fn drop_value(&mut self) {
        if self.occupied() {
            self.tag &= !OCCUPIED;
            // SAFETY: the slot held a value, dropped once, in place (it may be pinned): the tag
            // says the slot is free before the drop runs, so nothing drops it again.
            unsafe { ManuallyDrop::drop(&mut self.held.get_mut().value) }
        }
    }
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        self.drop_value();
    }
}

/// Fixed storage for pinned values, each with its own waker: an [`Arena`]'s, or
/// one group of a [`GrowableArena`](crate::GrowableArena)'s. See the
/// [crate documentation](crate) for the design.
#[expect(
    missing_debug_implementations,
    reason = "named only as the sealed `Storage` trait's hidden storage"
)]
pub struct Store<T> {
    slots: SlotBox<T>,
    table: WakeTable,
    len: usize,
    /// The first slot of the free list: a slot freed by a value that left, whose link is the
    /// next; or, with [`UNMADE`] set, the first slot not made yet, which ends the list (each
    /// one after it is free too); or `NIL` when no slot may take a value (each holds one, or
    /// its generation has run out).
    free_head: u32,
    /// The id of slot 0 in the poll loop's queues and in the keys: the group's number shifted
    /// past the slot's index in a growable arena (see [`GROUP_SHIFT`]), 0 on its own. A key's
    /// slot is its slot's id, so that a growable arena finds the group of a key with a shift.
    ids: u32,
    /// The generation of a slot not made yet: its first value's is the next.
    generation: u64,
}

/// Set in a free list's link to the first slot not made yet (the slot's index is the rest): no
/// slot index has it (a store has at most [`MAX_CAPACITY`] slots), and the free list's end
/// (`NIL`) has it too, so an insert from the list tests one bit.
const UNMADE: u32 = 1 << 31;

/// How far a slot id in a growable arena's queues shifts its group's number: a group holds at
/// most `1 << GROUP_SHIFT` slots (see [`MAX_GROUP`](crate::storage::sizing::MAX_GROUP)), and 63 groups
/// leave the ids below [`UNLINKED`].
pub(crate) const GROUP_SHIFT: u32 = 26;

impl<T> Store<T> {
    /// A store of `capacity` slots whose wakes notify the task that polls it, their
    /// generations starting at a new arena's ([`key::first_generation`]). Allocates twice (the
    /// slots, and the wake table the wakers share), and never again.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    #[track_caller]
    pub(crate) fn new(capacity: usize) -> Self {
        let generation = key::first_generation();
        Self::with_parent(capacity, Parent::Task(AtomicWaker::new()), generation, 0)
    }

    /// [`new`](Self::new) with every slot's generation starting at `generation`, to reach the
    /// generations' end in tests.
    #[cfg(test)]
    pub(crate) fn starting_at_generation(capacity: usize, generation: u64) -> Self {
        Self::with_parent(capacity, Parent::Task(AtomicWaker::new()), generation, 0)
    }

    /// Group `bit` of a growable arena, whose wakes set bit `bit` of `hub`, whose slots' ids
    /// and keys have `bit` above the slot's index, and whose slots' generations start at
    /// `generation`.
    pub(crate) fn with_hub(capacity: usize, hub: &Hub, bit: usize, generation: u64) -> Self {
        debug_assert!(bit < Hub::GROUPS);
        debug_assert!(capacity <= 1 << GROUP_SHIFT);
        let parent = Parent::Hub {
            hub: hub.clone(),
            bit: bit as u32,
        };
        let mut store =
            Self::with_parent(capacity, parent, generation, (bit as u32) << GROUP_SHIFT);
        // A group's slots are made at once, so that a growable arena's inlined insert takes
        // a slot from the free list only (`insert::<true>`), small enough for a caller's
        // closure around it to be inlined (`futures_ordered_ready_512k`, instructions).
        store.slots.make_all(store.generation);
        if store.free_head != NIL {
            store.free_head = 0;
        }
        store
    }

    #[track_caller]
    fn with_parent(capacity: usize, parent: Parent, generation: u64, ids: u32) -> Self {
        assert!(
            capacity <= MAX_CAPACITY,
            "arena capacity {capacity} is too large (at most {MAX_CAPACITY})"
        );
        let entries = 2 * capacity;
        let table = WakeTable::new(entries, parent);
        // Generations count in the tag's upper 63 bits: one past the last is as retired.
        let generation = generation.min(RETIRED_GENERATION);
        // No slot is written yet: each is made by the insert that first takes it, free of
        // wakers (its two entries, `2 i` and `2 i + 1`, start so, their ready bits clear).
        // Slots whose generation has run out take no value (see `Slot::generation`): the free
        // list is empty from the start.
        let takes = capacity > 0 && generation < RETIRED_GENERATION;
        Self {
            slots: SlotBox::new(capacity),
            table,
            len: 0,
            free_head: if takes { UNMADE } else { NIL },
            ids,
            generation,
        }
    }

    /// How many values the store can hold.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// How many values the store holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the store holds no value.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether an insert would give its value back: every slot holds a value, or those that
    /// do not have run out of generations.
    pub(crate) fn is_full(&self) -> bool {
        self.free_head == NIL
    }

    /// Stores `value` in a free slot and returns its key, its slot's id and whether the slot
    /// is still linked in a queue (where its last value was queued), for the caller to queue
    /// it ([`Rounds::push_inserted`](crate::poll::Rounds::push_inserted)); a slot in no
    /// queue has its link set to end one. Gives `value` back if the store is full. A `GROUP`
    /// (a growable arena's) has every slot made (see [`with_hub`](Self::with_hub)), and names
    /// its slots by its number shifted above their index; any other store makes its slots as
    /// they are taken, and names them by index. Always inlined, as the growable arena's
    /// `insert` (guarded by `unordered_held_100k`, instructions).
    #[inline(always)]
    pub(crate) fn insert<const GROUP: bool>(&mut self, value: T) -> Result<(Key, u32, bool), T> {
        debug_assert!(
            GROUP || self.ids == 0,
            "a store on its own names its slots by index"
        );
        let head = self.free_head;
        // The slot, its index and the value's generation.
        // In a group every slot is made: the list's only tagged link is its end.
        let listed = if GROUP {
            head != NIL
        } else {
            head & UNMADE == 0
        };
        let (slot, index, generation) = if listed {
            let index = head as usize;
            let slot = trusted_mut(&mut self.slots, index);
            self.free_head = slot.next_free();
            let generation = slot.generation() + 1;
            // The new value's entry is the one its slot's value before last had: free of
            // wakers unless one of that value outlived it.
            let entry = Self::entry_of(index, generation);
            // Acquire: as in `WakeTable::unbind`, if the entry's last waker went since. Most
            // often neither of the slot's entries has an owned waker: one load of their word
            // says so.
            // Otherwise this entry may be free all the same: `bind_retired` looks, out of line.
            let generation = if self.table.pair_is_clear(entry, Ordering::Acquire) {
                generation
            } else {
                self.bind_retired(index, generation)
            };
            (
                ptr::from_mut(trusted_mut(&mut self.slots, index)),
                index,
                generation,
            )
        } else if !GROUP && head != NIL {
            // The first slot not made yet, which ends the free list: its entries have never
            // had a waker. The next one, if any, ends it now.
            let index = (head & !UNMADE) as usize;
            // SAFETY: the list's tagged link names the first slot not made yet, below the
            // capacity (it is `NIL` past it); its fields are written below, before anything
            // reads them.
            let slot = unsafe { self.slots.make(index) };
            self.free_head = if index + 1 < self.slots.capacity() {
                (index as u32 + 1) | UNMADE
            } else {
                NIL
            };
            (slot, index, self.generation + 1)
        } else {
            return Err(value);
        };
        // SAFETY: `slot` is slot `index`, free (a slot of the free list, or one just made,
        // whose link is written), and nothing was reached through the slots since it was
        // found. The fields are written whole, by pointer (a slot just made has no value to
        // read): the value in place of the free link, the tag, the mark's round; the link is
        // read.
        let linked = unsafe {
            (&raw mut (*slot).held).write(UnsafeCell::new(Held {
                value: ManuallyDrop::new(value),
            }));
            (&raw mut (*slot).tag).write(generation << 1 | OCCUPIED);
            let mark = &mut (*slot).mark;
            mark.round = 0;
            // The queue's first look at the mark, made here where the slot is at hand: a
            // growable arena would find it again from the id (`unordered_ready_512k`,
            // instructions).
            let linked = mark.next != UNLINKED;
            if !linked {
                mark.next = NIL;
            }
            linked
        };
        let id = if GROUP {
            self.ids | index as u32
        } else {
            index as u32
        };
        self.len += 1;
        Ok((Key::new(id, generation), id, linked))
    }

    /// The entry of slot `index`'s value in generation `generation`: its slot's values take
    /// its two entries in turn.
    #[inline(always)]
    fn entry_of(index: usize, generation: u64) -> usize {
        2 * index + (generation & 1) as usize
    }

    /// The slot of `key`'s value, if it is still here.
    #[inline]
    pub(crate) fn live(&self, key: Key) -> Option<usize> {
        let index = key.index().checked_sub(self.ids as usize)?;
        let slot = self.slots.get(index)?;
        (slot.tag == (key.generation() << 1 | OCCUPIED)).then_some(index)
    }

    /// Whether `key`'s value is still in the store.
    pub(crate) fn contains_key(&self, key: Key) -> bool {
        self.live(key).is_some()
    }

    /// `key`'s value, if it is still in the store.
    pub(crate) fn get(&self, key: Key) -> Option<&T> {
        self.slots[self.live(key)?].value_ref()
    }

    /// `key`'s value, pinned, if it is still in the store.
    pub(crate) fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        let index = self.live(key)?;
        let value = self.slots[index].value_mut()?;
        // SAFETY: the slots live in a block that is never reallocated, and a value is only
        // ever dropped in place (never moved out) unless `T: Unpin`; so it stays pinned.
        Some(unsafe { Pin::new_unchecked(value) })
    }

    /// An owned waker of `key`'s value, if it is still in the store: waking it queues the value
    /// as the waker lent to its `poll` does.
    pub(crate) fn waker(&self, key: Key) -> Option<Waker> {
        let index = self.live(key)?;
        let generation = self.slots[index].generation();
        Some(self.table.waker(Self::entry_of(index, generation)))
    }

    /// Drops `key`'s value in place now and frees its slot; `false` if it was gone already.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
    #[inline(always)]
    pub(crate) fn remove(&mut self, key: Key) -> bool {
        match self.live(key) {
            Some(index) => {
                self.remove_at(index);
                true
            }
            None => false,
        }
    }

    /// Moves `key`'s value out and frees its slot.
    pub(crate) fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        let index = self.live(key)?;
        Some(self.take_at(index))
    }

    /// Moves the value of slot `index`, which holds one ([`live`](Self::live)), out and frees
    /// the slot.
    pub(crate) fn take_at(&mut self, index: usize) -> T
    where
        T: Unpin,
    {
        assert!(self.slots[index].occupied(), "slot {index} holds no value");
        // SAFETY: the slot is occupied (checked above), and `T: Unpin`.
        let value = unsafe { trusted_mut(&mut self.slots, index).take_value() };
        self.vacate(index);
        value
    }

    /// Moves the values out, in slot order, for `T: Unpin`. The values the iterator has not
    /// given when it is dropped are dropped with the arena.
    pub(crate) fn into_values(self) -> IntoValues<T>
    where
        T: Unpin,
    {
        IntoValues {
            store: self,
            next: 0,
        }
    }

    /// Drops every value in place. Storage is kept; nothing is allocated or freed.
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates.
    pub(crate) fn clear(&mut self) {
        let cleared = unwind::each_despite_panics(0..self.slots.len(), |index| {
            if self.slots[index].occupied() {
                self.remove_at(index);
            }
        });
        if let Err(panic) = cleared {
            unwind::resume(panic);
        }
    }

    /// The values with their keys, in slot order.
    pub(crate) fn iter(&self) -> Iter<'_, T> {
        Iter {
            slots: self.slots.iter().enumerate(),
            ids: self.ids,
            left: self.len,
        }
    }

    /// The values, pinned, with their keys, in slot order.
    pub(crate) fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        IterPinMut {
            slots: self.slots.iter_mut().enumerate(),
            ids: self.ids,
            left: self.len,
        }
    }
    /// The generation the slots of an arena that replaces this one in its group start at, so
    /// that no key of this arena names a value of that one.
    pub(crate) fn next_generation(&self) -> u64 {
        // A group's slots are all made (`with_hub`).
        debug_assert_eq!(
            self.slots.len(),
            self.capacity(),
            "a group with slots not made"
        );
        let highest = self.slots.iter().map(Slot::generation).max();
        highest.map_or(0, |generation| generation + 1)
    }

    /// Bookkeeping for the value of slot `index` leaving, moved out already: releases its entry
    /// and frees the slot.
    #[inline]
    fn vacate(&mut self, index: usize) {
        self.release(index);
        self.link_free(index);
    }

    /// The bookkeeping of a value that leaves slot `index` but is still there, to be dropped
    /// in place: the slot is marked free and the value's entry released; the slot is linked
    /// into the free list once the value is dropped ([`link_free`](Self::link_free)), as the
    /// link takes the value's place.
    #[inline(always)]
    fn release(&mut self, index: usize) {
        let slot = trusted_mut(&mut self.slots, index);
        slot.tag &= !OCCUPIED;
        let entry = Self::entry_of(index, slot.generation());
        self.len -= 1;
        self.table.unbind(entry);
    }

    /// Puts free slot `index` on the free list, unless its generation has run out.
    #[inline(always)]
    fn link_free(&mut self, index: usize) {
        let slot = trusted_mut(&mut self.slots, index);
        if slot.generation() != RETIRED_GENERATION {
            *slot.held.get_mut() = Held {
                next_free: self.free_head,
            };
            self.free_head = index as u32;
        }
    }

    /// [`remove_at`](Self::remove_at), always inlined: for a value that finished in the poll
    /// loop, where the call would cost every output of a set more than the code it runs.
    /// Guarded by `ready_512k` (instructions).
    #[inline(always)]
    pub(crate) fn remove_done(&mut self, index: usize) {
        // The bookkeeping is done first, so a panicking `Drop` leaves the arena consistent.
        self.release(index);
        self.drop_value(index);
    }

    /// [`remove_at`](Self::remove_at) for a value whose poll panicked: out of line, so that
    /// the poll loop it unwinds from stays small. With `std`, a panic of the value's `Drop`
    /// is dropped: the poll's panic is the one that goes on, and the round's repair after it
    /// still runs. (Without `std` this runs while the poll's panic unwinds, and a second panic
    /// aborts, see [`unwind`].)
    #[cold]
    #[inline(never)]
    fn remove_unwound(&mut self, index: usize) {
        #[cfg(feature = "std")]
        {
            use std::panic::{AssertUnwindSafe, catch_unwind};
            // The slot is freed also when the drop panics (`drop_value`).
            drop(catch_unwind(AssertUnwindSafe(|| self.remove_at(index))));
        }
        #[cfg(not(feature = "std"))]
        self.remove_at(index);
    }

    /// Drops the value of slot `index`, which holds one ([`live`](Self::live)), in place and
    /// frees the slot.
    #[inline]
    pub(crate) fn remove_at(&mut self, index: usize) {
        // As `remove_done`, but left to the compiler to inline or not: always inlined here, a
        // merge's first poll (which removes an ended stream) grows and costs its hot path
        // (`merge_hot_16`, instructions).
        self.release(index);
        self.drop_value(index);
    }

    /// Drops the value of slot `index`, released already ([`release`](Self::release)), in
    /// place, then puts the slot on the free list: also if the value's `Drop` panics.
    #[inline(always)]
    fn drop_value(&mut self, index: usize) {
        /// Links the slot when dropped: after the value's drop, or while it unwinds.
        struct LinkFree<'a, T> {
            store: &'a mut Store<T>,
            index: usize,
        }
        impl<T> Drop for LinkFree<'_, T> {
            #[inline(always)]
            fn drop(&mut self) {
                self.store.link_free(self.index);
            }
        }
        let guard = LinkFree { store: self, index };
        let slot = trusted_mut(&mut guard.store.slots, index);
        // SAFETY: the slot held a value until `release` marked it free, and nothing has read,
        // moved or dropped it since: it is dropped once, in place (it may be pinned). The
        // guard's link overwrites its bytes only after.
        unsafe { ManuallyDrop::drop(&mut slot.held.get_mut().value) };
        drop(guard);
    }

    /// The pair of the entry for generation `generation` of slot `index`, whose turn it is, is
    /// not clear: this entry, or the other, has wakers of a departed value or had some and is
    /// retired. Settles which entry the value takes (this one if it is free after all), and
    /// returns its generation (one more if it takes the other entry).
    #[cold]
    #[inline(never)]
    fn bind_retired(&mut self, index: usize, generation: u64) -> u64 {
        let entry = Self::entry_of(index, generation);
        if self.table.reclaim(entry) {
            return generation;
        }
        // Wakers of the value before last are alive: the last value's entry, if its wakers are
        // gone, skipping a generation (keys only ever grow).
        if generation < RETIRED_GENERATION && self.table.reclaim(entry ^ 1) {
            return generation + 1;
        }
        // Both of the slot's entries have wakers of departed values alive: share this one, and
        // its old wakers may cause a spurious poll of the new value.
        self.table.share_retired(entry);
        generation
    }

    /// Drains the ready set in `mode`, filing each woken slot that holds a value for round
    /// `round` ([`poll::file`]) by its id (its index if not `GROUP`; a growable arena's
    /// group's id for it if `GROUP`); `true` if `ready` got any.
    #[inline]
    pub(crate) fn drain<const GROUP: bool>(
        &mut self,
        mode: Drain,
        round: u32,
        ready: &mut Queue,
        deferred: &mut Queue,
    ) -> bool {
        let Self {
            slots, table, ids, ..
        } = self;
        let ids = *ids;
        debug_assert!(GROUP || ids == 0);
        let slots = &mut **slots;
        let last = ready.last();
        // The filing closure owns copies of `ids` and `round` and the queues' borrows, so that
        // the loop keeps them in registers rather than reading them back through references
        // (guarded by `unordered_sparse_10k`, instructions).
        let (filed, deferred) = (&mut *ready, deferred);
        // SAFETY: only the table's wakers and this store's calls of the ready set write the
        // table's words, and the store never raises a bit of its top word.
        unsafe {
            table.drain(mode, move |entry| {
                let index = (entry / 2) as u32;
                // The entry's slot holds a value, and the entry is that value's: not a waker of
                // a departed value.
                let bound = (entry as u64 & 1) << 1 | OCCUPIED;
                if trusted(slots, index as usize).tag & 3 != bound {
                    return;
                }
                if GROUP {
                    // `ids + index` is `ids | index` (the index is below the group's bits),
                    // written so that the compiler finds the mark in the slot just read.
                    let mut marks = Local { slots, ids };
                    poll::file(&mut marks, ids + index, round, filed, deferred);
                } else {
                    poll::file(slots, index, round, filed, deferred);
                }
            })
        };
        ready.last() != last
    }

    /// Polls the value of slot `index`, if it holds one, with `poll` (given its key), in a
    /// context of its own waker; its key and entry come back with what `poll` returned. If
    /// `poll` panics, `unwound` runs and the value is dropped in place and its slot freed;
    /// then, with `std`, the panic is returned (the caller repairs and resumes it), and
    /// without `std` `panicked` runs with the table while the panic goes on.
    /// If `WATCH`, the poll is watched ([`watch`]): a wake of the value on this thread during
    /// it comes back in [`Polled::woken`], not through the ready set. If `UNLINK`, the slot's
    /// link is made `UNLINKED` first (see [`PollStorage::poll_slot`]).
    #[inline(always)]
    pub(crate) fn poll_at<const WATCH: bool, const UNLINK: bool, R>(
        &mut self,
        index: usize,
        take_wake: bool,
        round: u32,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        unwound: impl FnOnce(),
        panicked: impl FnOnce(&WakeTable),
    ) -> Result<Option<Polled<R>>, Kept> {
        let slot = trusted_mut(&mut self.slots, index);
        if UNLINK {
            slot.mark.next = UNLINKED;
        }
        if !slot.occupied() {
            return Ok(None);
        }
        let generation = slot.generation();
        let key = Key::new(self.ids | index as u32, generation);
        let entry = Self::entry_of(index, generation) as u32;
        if take_wake {
            // SAFETY: `entry` is the one bound to the value, an entry of the table, so its bit
            // is in the ready set's first level.
            unsafe { ready_set::take_unchecked(self.table.words(), entry as usize) };
        }
        let (step, woken) =
            self.poll_value::<WATCH, _>(index, entry as usize, unwound, panicked, |value, cx| {
                poll(key, value, cx)
            })?;
        let polled_before = matches!(step, Step::Pending)
            && poll::mark_polled(&mut trusted_mut(&mut self.slots, index).mark, round);
        Ok(Some(Polled {
            key,
            entry,
            step,
            woken,
            polled_before,
        }))
    }

    /// Whether entry `entry` was woken since its value's poll began.
    #[inline(always)]
    pub(crate) fn entry_woken(&self, entry: u32) -> bool {
        // SAFETY: the entries the loop asks about are those `poll_at` gave, each bound to one of
        // the store's values: entries of the table, whose bits are in the ready set's first
        // level (as for `kept`, an index the arena keeps itself).
        unsafe { ready_set::is_woken_unchecked(self.table.words(), entry as usize) }
    }

    /// The mark of slot `index`.
    #[inline(always)]
    pub(crate) fn mark_at(&mut self, index: usize) -> &mut Mark {
        &mut trusted_mut(&mut self.slots, index).mark
    }

    /// Polls the value at `index` (there is one) with `poll`, in a context of the waker of
    /// wake table entry `entry`, watched if `WATCH` (the `bool` says whether it woke itself).
    /// If `poll` panics, `unwound` runs and the value is dropped and its slot freed; then the
    /// panic is returned (with `std`), or goes on after `panicked` (without).
    #[inline(always)]
    fn poll_value<const WATCH: bool, R>(
        &mut self,
        index: usize,
        entry: usize,
        unwound: impl FnOnce(),
        panicked: impl FnOnce(&WakeTable),
        poll: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> R,
    ) -> Result<(R, bool), Kept> {
        #[cfg(feature = "std")]
        {
            use core::mem::MaybeUninit;
            use std::panic::{AssertUnwindSafe, catch_unwind};
            // The round repairs with its queues and the storage both at hand.
            let _ = panicked;
            let (value, waker) = self.value_and_waker(index, entry);
            // The output goes through a place of our own, not through `catch_unwind`'s result:
            // that passes it through a union, written field by field and read back whole, and
            // a CPU that cannot forward the fields' stores to the whole load waits for them
            // (a merge of `u32` items, `merge_hot_16_u32`).
            let mut out = MaybeUninit::<R>::uninit();
            let watch = WATCH.then(|| watch::start(&waker));
            // Only the poll is wrapped: `unwind::repair_on_unwind` would take the slot lookup
            // and the waker in too, a cost on every poll. Guarded by `ready_512k`.
            match catch_unwind(AssertUnwindSafe(|| {
                out.write(poll(value, &mut Context::from_waker(&waker)));
            })) {
                Ok(()) => Ok((
                    // SAFETY: the closure returned, so it wrote the output.
                    unsafe { out.assume_init() },
                    watch.is_some_and(Watch::end),
                )),
                Err(panic) => {
                    // The watch ends also here (the cell is an outer owner's again); the value
                    // leaves, so a wake during its poll has nothing left to poll.
                    if let Some(watch) = watch {
                        let _ = watch.end();
                    }
                    // The caller's bookkeeping first: the value's `Drop` may panic too.
                    unwound();
                    self.remove_unwound(index);
                    Err(unwind::keep(panic))
                }
            }
        }
        // Without `std` no poll is watched (there is no thread-local cell).
        #[cfg(not(feature = "std"))]
        Ok((
            unwind::repair_on_unwind(
                self,
                |store| {
                    let (value, waker) = store.value_and_waker(index, entry);
                    poll(value, &mut Context::from_waker(&waker))
                },
                |store| {
                    unwound();
                    store.remove_unwound(index);
                    panicked(&store.table);
                },
            ),
            false,
        ))
    }
    /// The value at `index` (there is one), pinned, and the waker of wake table entry `entry`.
    #[inline(always)]
    fn value_and_waker(
        &mut self,
        index: usize,
        entry: usize,
    ) -> (Pin<&mut T>, ManuallyDrop<Waker>) {
        let slot = trusted_mut(&mut self.slots, index);
        debug_assert!(slot.occupied(), "the slot polled is empty");
        // SAFETY: the caller polls an occupied slot (`poll_at` looked), whose `held` is its
        // value.
        let value = unsafe { &mut *slot.held.get_mut().value };
        // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
        let value = unsafe { Pin::new_unchecked(value) };
        // SAFETY: `entry` is the one bound to the value: the arena binds only entries of its
        // table.
        (value, unsafe { self.table.borrowed_waker_unchecked(entry) })
    }
}

/// A store's marks by the ids of its slots in a growable arena's queues.
struct Local<'a, T> {
    slots: &'a mut [Slot<T>],
    ids: u32,
}

impl<T> Marks for Local<'_, T> {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        &mut trusted_mut(self.slots, (id - self.ids) as usize).mark
    }
}

/// Slots named by their index.
impl<T> Marks for [Slot<T>] {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        &mut trusted_mut(self, id as usize).mark
    }
}

/// A store polled on its own (an arena's) names its slots by their index.
impl<T> Marks for Store<T> {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        debug_assert_eq!(
            self.ids, 0,
            "a group's slots are named by their group's ids"
        );
        self.mark_at(id as usize)
    }
}

/// The storage of an [`Arena`], as its poll loop reaches it.
impl<T> PollStorage<T> for Store<T> {
    const MAY_WAIT_UNBOUND: bool = false;

    #[inline(always)]
    fn count(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn parent_word(&self) -> Option<&ParentWord> {
        Some(self.table.parent_word())
    }

    fn register(&self, waker: &Waker) {
        self.table.register(waker);
    }

    #[inline(never)]
    fn drain(&mut self, mode: Drain, round: u32, ready: &mut Queue, deferred: &mut Queue) -> bool {
        Store::drain::<false>(self, mode, round, ready, deferred)
    }

    #[inline(always)]
    fn poll_slot<const WATCH: bool, const UNLINK: bool, R>(
        &mut self,
        id: u32,
        take_wake: bool,
        round: u32,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        panicked: impl FnOnce(&ParentWord),
    ) -> Result<Option<Polled<R>>, Kept> {
        self.poll_at::<WATCH, UNLINK, R>(
            id as usize,
            take_wake,
            round,
            poll,
            || {},
            |table| {
                panicked(table.parent_word());
            },
        )
    }

    #[inline(always)]
    fn is_woken(&self, _id: u32, entry: u32) -> bool {
        self.entry_woken(entry)
    }

    #[inline(always)]
    fn holds_no_waker(&self, _id: u32, _entry: u32) -> bool {
        // Every value is polled with its own waker from its first poll on.
        false
    }

    #[inline(always)]
    fn remove(&mut self, id: u32, _: &mut Rounds) {
        self.remove_done(id as usize);
    }
}

/// Gives each iterator `$name` (which counts what it has `left`) an exact size, makes it fused,
/// and its `Debug` shows that count.
macro_rules! counted_iterator {
    ($($name:ident),+) => {$(
        impl<T> ExactSizeIterator for $name<'_, T> {}
        impl<T> core::iter::FusedIterator for $name<'_, T> {}

        impl<T> core::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("left", &self.left)
                    .finish()
            }
        }
    )+};
}
pub(crate) use counted_iterator;

counted_iterator!(Iter, IterPinMut);

/// The values of an [`Arena`] with their keys: [`Arena::iter`](crate::Storage::iter).
pub struct Iter<'a, T> {
    slots: core::iter::Enumerate<core::slice::Iter<'a, Slot<T>>>,
    ids: u32,
    left: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Key, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        for (index, slot) in self.slots.by_ref() {
            if let Some(value) = slot.value_ref() {
                self.left -= 1;
                return Some((Key::new(self.ids | index as u32, slot.generation()), value));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of an [`Arena`], pinned, with their keys:
/// [`Arena::iter_pin_mut`](crate::Storage::iter_pin_mut).
pub struct IterPinMut<'a, T> {
    slots: core::iter::Enumerate<core::slice::IterMut<'a, Slot<T>>>,
    ids: u32,
    left: usize,
}

impl<'a, T> Iterator for IterPinMut<'a, T> {
    type Item = (Key, Pin<&'a mut T>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        for (index, slot) in self.slots.by_ref() {
            let generation = slot.generation();
            if let Some(value) = slot.value_mut() {
                self.left -= 1;
                // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
                let value = unsafe { Pin::new_unchecked(value) };
                return Some((Key::new(self.ids | index as u32, generation), value));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of an [`Arena`], moved out:
/// [`Arena::into_values`](crate::Storage::into_values). Dropping it drops the values
/// it has not given yet, once each.
pub struct IntoValues<T> {
    store: Store<T>,
    /// The first slot not yet looked at.
    next: usize,
}

impl<T: Unpin> Iterator for IntoValues<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        while self.store.len > 0 && self.next < self.store.slots.len() {
            let index = self.next;
            self.next += 1;
            if self.store.slots[index].occupied() {
                // SAFETY: the slot is occupied, and `T: Unpin`.
                let value = unsafe { self.store.slots[index].take_value() };
                self.store.vacate(index);
                return Some(value);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.store.len, Some(self.store.len))
    }
}

impl<T: Unpin> ExactSizeIterator for IntoValues<T> {}

impl<T: Unpin> core::iter::FusedIterator for IntoValues<T> {}

impl<T> fmt::Debug for IntoValues<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoValues")
            .field("len", &self.store.len)
            .finish_non_exhaustive()
    }
}
