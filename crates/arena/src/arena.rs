//! The arena: fixed storage for pinned values, the owner's queues of slots to poll, the entries
//! its wakers point at, and the wake table shared with the wakers.

use core::cell::UnsafeCell;
use core::fmt;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::atomic_waker::AtomicWaker;
use crate::hub::Hub;
use crate::key::Key;
use crate::queue::{Links, NIL, Queue};
use crate::ready_set::{self, Drain};
use crate::round::{self, Budget, Queued, Rounds, SlotQueue, Turn};
use crate::step::Step;
use crate::storage::{Storage, sealed::Sealed};
use crate::sync::Ordering;
use crate::unwind;
use crate::wake_table::{Parent, RETIRED, WakeTable};
use alloc::boxed::Box;

/// The largest capacity: an arena has two entries per slot, indexed by `u32` below `NIL`.
const MAX_CAPACITY: usize = (u32::MAX as usize - 1) / 2;

/// The generation after which a slot takes no value: its next value would repeat a key.
const RETIRED_GENERATION: u64 = u64::MAX;

/// From how many bytes of slots on (all of a growable arena's groups together),
/// [`Arena::poll_ready`] prefetches the next queued slot while it polls one: about where the
/// slots, and what their values point at, stop staying in a core's cache from one poll of a
/// slot to the next. Below it the prefetch costs more than it saves, since the slots stay
/// cached. Guarded by `map_streams_10k` (above it) and `merge_hot_16` (below).
const FAR_SLOTS_BYTES: usize = 256 * 1024;

/// Whether an arena (or growable arena) of `capacity` slots of `T` is past
/// [`FAR_SLOTS_BYTES`].
#[inline]
pub(crate) fn slots_far<T>(capacity: usize) -> bool {
    capacity >= FAR_SLOTS_BYTES / size_of::<Slot<T>>().max(1)
}

struct Slot<T> {
    /// The value, in an `UnsafeCell` so that the owner's shared borrows of the slots (its
    /// queues and entry lists go through `&[Slot<T>]`) never assert that the value's bytes are
    /// frozen: a pinned future may keep a `&mut` into itself across `Pending` (`read(&mut
    /// buf).await`), and a shared reference covering it would take that borrow's permission
    /// away (Stacked and Tree Borrows). Only the owner, through `&mut Slot`, touches it.
    value: UnsafeCell<Option<T>>,
    /// Whether `value` holds a value; read instead of the value's own bytes.
    occupied: bool,
    /// How many values this slot has held (counted from the arena's starting generation); the
    /// current value's key carries it. A slot that reaches `u64::MAX` is retired: it never
    /// takes another value, so a generation never repeats.
    generation: u64,
    /// The entry bound to the current value, while there is one.
    entry: u32,
    /// The last round that polled this slot's value (0: none).
    round: u32,
    /// Next free slot while this one is free.
    next_free: u32,
    /// Next slot in its queue while `queued`.
    next_queued: u32,
    queued: bool,
    /// Whether the value is queued for its next poll because it gave an item
    /// (`Step::Repoll`), not because it was woken: that poll is needed anyway and is never
    /// counted as vain.
    repoll: bool,
    /// The owner's side of entries `2 i` and `2 i + 1`. Entries are not tied to slots: they
    /// live here only so that the arena needs no third allocation.
    links: [EntryLink; 2],
}

impl<T> Slot<T> {
    /// The value, for the owner (who holds `&mut`).
    #[inline]
    fn value_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut().as_mut()
    }

    /// The value, shared: only for the user's own shared access (`get`, `iter`).
    fn value_ref(&self) -> Option<&T> {
        if !self.occupied {
            return None;
        }
        // SAFETY: the value is written only through `&mut Slot` (the owner's `&mut Arena`);
        // while this `&Slot` lives nobody holds one, so nothing writes the value.
        unsafe { (*self.value.get()).as_ref() }
    }
}

/// The owner's bookkeeping for one entry.
#[derive(Clone, Copy)]
struct EntryLink {
    /// The slot whose value the entry is bound to, or `NIL`.
    slot: u32,
    /// Next entry in the free or the retired list.
    next: u32,
}

/// A fixed-capacity arena of pinned values, each with its own waker. See the
/// [crate documentation](crate) for the design.
///
/// The owner (whoever holds `&mut Arena`) inserts, polls and removes values; wakers may be
/// used from any thread. Values are pinned from insertion until they are dropped in place, so
/// `T` need not be `Unpin`.
pub struct Arena<T> {
    slots: Box<[Slot<T>]>,
    table: WakeTable,
    len: usize,
    free_head: u32,
    /// Entries bound to nothing, with no owned waker: ready to bind.
    free_entries: u32,
    /// Entries unbound while owned wakers of them were alive.
    retired_entries: u32,
    /// Slots to poll in this round.
    ready: Queue,
    /// Slots polled in this round and woken again: polled in the next.
    deferred: Queue,
    /// The number of the round in progress or last run, for an arena polled on its own.
    round: u32,
    /// The number of slots before this arena's in a growable arena (0 on its own): its keys
    /// count slots from there.
    base: u32,
    /// Whether the owner has left `BUSY` set in the top word (an arena of its own task).
    busy: bool,
}

// SAFETY: the `UnsafeCell` around each value only keeps the owner's shared borrows of the
// slots from covering the values (see `Slot::value`); through `&Arena` a value is only ever
// read (`get`, `iter`), never written, so sharing an arena across threads shares `&T`: it is
// sound exactly when `T: Sync`, as it was with the values held directly.
unsafe impl<T: Sync> Sync for Arena<T> {}

impl<T> Arena<T> {
    /// An arena of `capacity` slots whose wakes notify the task that polls it. Allocates twice
    /// (the slots, and the wake table the wakers share), and never again.
    ///
    /// # Panics
    /// If `capacity` is more than `(u32::MAX - 1) / 2`.
    pub fn new(capacity: usize) -> Self {
        Self::with_parent(capacity, Parent::Task(AtomicWaker::new()), 0, 0)
    }

    /// [`new`](Self::new) with every slot's generation starting at `generation`, to reach the
    /// generations' end in tests.
    #[cfg(test)]
    pub(crate) fn starting_at_generation(capacity: usize, generation: u64) -> Self {
        Self::with_parent(capacity, Parent::Task(AtomicWaker::new()), 0, generation)
    }

    /// An arena of group `bit` of a growable arena, whose wakes set bit `bit` of `hub`, whose
    /// keys count slots from `base`, and whose slots' generations start at `generation`.
    pub(crate) fn with_hub(
        capacity: usize,
        hub: &Hub,
        bit: usize,
        base: u32,
        generation: u64,
    ) -> Self {
        debug_assert!(bit < Hub::MAX_ARENAS);
        let parent = Parent::Hub {
            hub: hub.clone(),
            bit: bit as u32,
        };
        Self::with_parent(capacity, parent, base, generation)
    }

    fn with_parent(capacity: usize, parent: Parent, base: u32, generation: u64) -> Self {
        assert!(
            capacity <= MAX_CAPACITY,
            "arena capacity {capacity} is too large (at most {MAX_CAPACITY})"
        );
        let entries = 2 * capacity;
        let table = WakeTable::new(entries, parent);
        // Slot `i` starts with entry `2 i` parked with it; the odd entries are free, in a list.
        let slots = (0..capacity)
            .map(|i| Slot {
                value: UnsafeCell::new(None),
                occupied: false,
                generation,
                entry: (2 * i) as u32,
                round: 0,
                next_free: if i + 1 < capacity {
                    (i + 1) as u32
                } else {
                    NIL
                },
                next_queued: NIL,
                queued: false,
                repoll: false,
                links: [
                    EntryLink {
                        slot: i as u32,
                        next: NIL,
                    },
                    EntryLink {
                        slot: NIL,
                        next: if i + 1 < capacity {
                            (2 * i + 3) as u32
                        } else {
                            NIL
                        },
                    },
                ],
            })
            .collect::<Box<[_]>>();
        // Slots whose generation has run out take no value (see `Slot::generation`).
        let head = if capacity > 0 && generation < RETIRED_GENERATION {
            0
        } else {
            NIL
        };
        Self {
            slots,
            table,
            len: 0,
            free_head: head,
            free_entries: if capacity > 0 { 1 } else { NIL },
            retired_entries: NIL,
            ready: Queue::EMPTY,
            deferred: Queue::EMPTY,
            round: 0,
            base,
            busy: false,
        }
    }

    /// How many values the arena can hold.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many values the arena holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the arena holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every slot holds a value.
    pub fn is_full(&self) -> bool {
        self.free_head == NIL
    }

    /// Stores `value` in a free slot, queues it to be polled (without any atomic operation) and
    /// returns its key; gives `value` back if the arena is full.
    #[inline]
    pub fn insert(&mut self, value: T) -> Result<Key, T> {
        if self.free_head == NIL {
            return Err(value);
        }
        let index = self.free_head as usize;
        let entry = match kept(&self.slots, index).entry {
            // The last value's entry stayed with the slot: no waker of it is alive.
            NIL => self.bind_entry(index),
            parked => parked,
        };
        let slot = kept_mut(&mut self.slots, index);
        self.free_head = slot.next_free;
        *slot.value.get_mut() = Some(value);
        slot.occupied = true;
        slot.generation = slot.generation.wrapping_add(1);
        slot.entry = entry;
        slot.round = 0;
        slot.repoll = false;
        let key = Key::new(self.base + index as u32, slot.generation);
        self.len += 1;
        self.ready.push(&mut *self.slots, index);
        Ok(key)
    }

    /// The slot of `key`'s value, if it is still here.
    fn live(&self, key: Key) -> Option<usize> {
        let index = key.index().checked_sub(self.base as usize)?;
        let slot = self.slots.get(index)?;
        (slot.generation == key.generation() && slot.occupied).then_some(index)
    }

    /// Whether `key`'s value is still in the arena.
    pub fn contains_key(&self, key: Key) -> bool {
        self.live(key).is_some()
    }

    /// `key`'s value, if it is still in the arena.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.slots[self.live(key)?].value_ref()
    }

    /// `key`'s value, pinned, if it is still in the arena.
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        let index = self.live(key)?;
        let value = self.slots[index].value_mut()?;
        // SAFETY: the slots live in a boxed slice that is never reallocated, and a value is only
        // ever dropped in place (never moved out) unless `T: Unpin`; so it stays pinned.
        Some(unsafe { Pin::new_unchecked(value) })
    }

    /// An owned waker of `key`'s value, if it is still in the arena: waking it queues the value
    /// as the waker lent to its `poll` does.
    pub fn waker(&self, key: Key) -> Option<Waker> {
        let index = self.live(key)?;
        Some(self.table.waker(self.slots[index].entry as usize))
    }

    /// Drops `key`'s value in place now and frees its slot; `false` if it was gone already.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
    pub fn remove(&mut self, key: Key) -> bool {
        match self.live(key) {
            Some(index) => {
                self.remove_at(index);
                true
            }
            None => false,
        }
    }

    /// Moves `key`'s value out and frees its slot.
    pub fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        let index = self.live(key)?;
        let value = self.slots[index].value.get_mut().take();
        self.vacate(index);
        value
    }

    /// Moves the values out, in slot order, for `T: Unpin`. The values the iterator has not
    /// given when it is dropped are dropped with the arena.
    pub fn into_values(self) -> IntoValues<T>
    where
        T: Unpin,
    {
        IntoValues {
            arena: self,
            next: 0,
        }
    }

    /// Drops every value in place. Storage is kept; nothing is allocated or freed.
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates.
    pub fn clear(&mut self) {
        let cleared = unwind::each_despite_panics(0..self.slots.len(), |index| {
            if self.slots[index].occupied {
                self.remove_at(index);
            }
        });
        if let Err(panic) = cleared {
            unwind::resume(panic);
        }
    }

    /// The values with their keys, in slot order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            slots: self.slots.iter().enumerate(),
            base: self.base,
            left: self.len,
        }
    }

    /// The values, pinned, with their keys, in slot order.
    pub fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        IterPinMut {
            slots: self.slots.iter_mut().enumerate(),
            base: self.base,
            left: self.len,
        }
    }

    /// Starts a poll round: the fairness budget for
    /// [`poll_with_budget`](Arena::poll_with_budget). Values woken again in the last round are
    /// queued for this one.
    #[inline]
    pub fn budget(&mut self) -> Budget {
        self.round = round::next_round(self.round);
        self.start_round_with_wakes(false);
        Budget::new(self.round, self.len)
    }

    /// Queues what round `self.round` starts with: the values woken since the last round if
    /// values wait for this one (or, `queued_repeat`, if the values still queued may be
    /// streams queued again after an item), then those.
    #[inline]
    fn start_round_with_wakes(&mut self, queued_repeat: bool) {
        if queued_repeat || self.has_deferred() {
            // Streams queued again after an item (`Step::Repoll`) would keep this round's queue
            // from ever running empty, and the round collects wakes only when it does: collect
            // them first, so that woken values are polled before those streams.
            self.begin();
            self.collect(self.round, Drain::KeepBusy);
        }
        self.start_round();
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
    pub fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, mut f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let mut budget = self.budget();
        round::poll_round(self, cx, &mut budget, &mut f)
    }

    /// [`poll_next`](Arena::poll_next) for values that may leave without an output, such as
    /// streams (`Step::of_stream`): an output of `None` (a stream's end: `Step::Done(None)` drops the
    /// value) is not returned; the round goes on to the next value, within the same budget.
    /// `Ready(None)` when the arena holds nothing.
    #[inline]
    pub fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, mut f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        // The owner is busy (from an earlier call) exactly when `BUSY` is set in the top word:
        // nothing else sets it.
        let mut budget =
            match self.poll_first_rotating(self.round, ready_set::BUSY, self.len, &mut f) {
                First::Rotated(key, out) => return Poll::Ready(Some((key, out))),
                First::Polled(out, budget) => {
                    self.round = budget.round;
                    match out {
                        Some(out) => return Poll::Ready(Some(out)),
                        None => budget,
                    }
                }
                // Streams that gave an item went to the tail of the queue, not to the next round:
                // wakes are collected ahead of them as of those (see `start_round_with_wakes`).
                First::NotTaken => {
                    self.round = round::next_round(self.round);
                    self.start_round_with_wakes(self.has_ready());
                    Budget::new(self.round, self.len)
                }
            };
        self.poll_rest_some(cx, &mut budget, &mut f)
    }

    /// The common call of a merge of busy streams, inline. When the top word of the ready set
    /// is `idle_top` (the owner is busy from an earlier call and nothing was woken since; the
    /// caller knows what that word is then), the round after `last_round` (of an arena holding
    /// `held` values) starts with nothing to collect: the head of the queue is polled here, and
    /// if it gives an item, it goes straight to the tail of the queue (it had its turn; this
    /// call ends with its item, and the next round polls it after the others) and the item is
    /// the call's output. Guarded by `merge_hot_16` (instructions).
    #[inline(always)]
    pub(crate) fn poll_first_rotating<R, F>(
        &mut self,
        last_round: u32,
        idle_top: u64,
        held: usize,
        f: &mut F,
    ) -> First<R>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        if self.table.top_word().load(Ordering::Relaxed) != idle_top {
            return First::NotTaken;
        }
        // Nothing woken: the streams that gave an item in the last round go behind those
        // still queued, and the round starts.
        self.start_round();
        if !self.has_queued() {
            return First::NotTaken;
        }
        let index = self.ready.head_unchecked();
        let slot = kept_mut(&mut self.slots, index);
        // Through `as_mut`, as in `poll_front`.
        if slot.value.get_mut().as_mut().is_none() {
            // A value that left: the round in full skips it.
            return First::NotTaken;
        }
        let key = Key::new(self.base + index as u32, slot.generation);
        let entry = slot.entry as usize;
        // Polled in place at the head of the queue: nothing else touches the queue meanwhile,
        // and a value that panics is dropped and its slot skipped when met, as any removed one.
        let step = self.poll_value(index, entry, |value, cx| f(key, value, cx));
        if let Step::Repoll(Some(out)) = step {
            // Its next poll is needed anyway, never vain; its round mark matters only to a
            // value out of the queue.
            kept_mut(&mut self.slots, index).repoll = true;
            self.ready.rotate(&mut *self.slots);
            return First::Rotated(key, out);
        }
        // Anything else: as if the round had taken it out of the queue to poll it. A rotation
        // leaves no mark of its round, so only this path numbers one.
        let round = round::next_round(last_round);
        self.ready.pop(&mut *self.slots);
        let mut budget = Budget::new(round, held);
        budget.polled();
        if let Step::Done(out) = step {
            // A stream's end: out of line (`remove_at`), so that this path stays small.
            self.remove_at(index);
            return First::Polled(out.map(|out| (key, out)), budget);
        }
        let slot = kept_mut(&mut self.slots, index);
        let counts_as_vain = slot.round != 0 && !slot.repoll;
        slot.repoll = false;
        slot.round = round;
        let turn = Turn {
            index,
            key,
            entry,
            counts_as_vain,
        };
        let out = match round::settle(self, turn, step, &mut budget) {
            Some((key, Some(out))) => Some((key, out)),
            // The value left without an output, or gave none: the round goes on.
            Some((_, None)) | None => None,
        };
        First::Polled(out, budget)
    }

    /// The rest of a [`poll_next_some`](Arena::poll_next_some) round, after its first poll.
    #[inline(never)]
    fn poll_rest_some<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        round::poll_round_some(self, cx, budget, f)
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
        round::poll_round(self, cx, budget, f)
    }

    /// Queues the slots deferred by the last round for this one; `true` if any is queued.
    #[inline]
    pub(crate) fn start_round(&mut self) -> bool {
        self.ready.append(&mut *self.slots, &mut self.deferred);
        !self.ready.is_empty()
    }

    /// Whether slots are queued for this round.
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether slots wait for the next round.
    pub(crate) fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// The generation the slots of an arena that replaces this one in its group start at, so
    /// that no key of this arena names a value of that one.
    pub(crate) fn next_generation(&self) -> u64 {
        let highest = self.slots.iter().map(|slot| slot.generation).max();
        highest.unwrap_or(0).saturating_add(1)
    }

    /// Bookkeeping for the value of slot `index` leaving: frees the slot, and its entry unless
    /// it can stay parked with the slot.
    #[inline]
    fn vacate(&mut self, index: usize) {
        self.vacate_inline(index);
    }

    /// [`vacate`](Self::vacate), always inlined: for [`remove_done`](Self::remove_done).
    #[inline(always)]
    fn vacate_inline(&mut self, index: usize) {
        let slot = kept_mut(&mut self.slots, index);
        slot.occupied = false;
        if slot.generation != RETIRED_GENERATION {
            slot.next_free = self.free_head;
            self.free_head = index as u32;
        }
        self.len -= 1;
        self.release_entry(index);
    }

    /// [`remove_at`](Self::remove_at), always inlined: for a value that finished in the poll
    /// loop, where the call would cost every output of a set more than the code it runs.
    /// Guarded by `ready_512k` (instructions).
    #[inline(always)]
    fn remove_done(&mut self, index: usize) {
        // The bookkeeping is done first, so a panicking `Drop` leaves the arena consistent.
        self.vacate_inline(index);
        // Assignment drops in place and writes `None` even if that drop unwinds.
        *kept_mut(&mut self.slots, index).value.get_mut() = None;
    }

    /// [`remove_at`](Self::remove_at) for a value whose poll panicked: out of line, so that
    /// the poll loop it unwinds from stays small.
    #[cold]
    #[inline(never)]
    fn remove_unwound(&mut self, index: usize) {
        self.remove_at(index);
    }

    /// Drops the value of slot `index` in place and frees the slot.
    #[inline]
    fn remove_at(&mut self, index: usize) {
        // As `remove_done`, but left to the compiler to inline or not: always inlined here, a
        // merge's first poll (which removes an ended stream) grows and costs its hot path
        // (`merge_hot_16`, instructions).
        // The bookkeeping is done first, so a panicking `Drop` leaves the arena consistent.
        self.vacate(index);
        // Assignment drops in place and writes `None` even if that drop unwinds.
        *kept_mut(&mut self.slots, index).value.get_mut() = None;
    }

    /// Binds an entry to the value about to be stored in slot `index`.
    fn bind_entry(&mut self, index: usize) -> u32 {
        if self.free_entries == NIL {
            self.reclaim_entries();
        }
        let entry = if self.free_entries != NIL {
            let entry = self.free_entries;
            self.free_entries = link(&self.slots, entry).next;
            entry
        } else {
            // More wakers of departed values are alive than the arena has slots: share an entry
            // with some of them (one of them may cause a spurious poll of the new value).
            let entry = self.retired_entries;
            debug_assert_ne!(entry, NIL, "a free slot leaves an entry free or retired");
            self.retired_entries = link(&self.slots, entry).next;
            // Relaxed: the entry's wakers may wake the new value from now on; that is all.
            self.table
                .entry_state(entry as usize)
                .fetch_and(!RETIRED, Ordering::Relaxed);
            entry
        };
        link_mut(&mut self.slots, entry).slot = index as u32;
        entry
    }

    /// Releases the entry of slot `index`, whose value is leaving. If no owned waker of it is
    /// alive, no wake can come through it any more: it stays *parked* with the slot, its ready
    /// bit cleared, and the slot's next value uses it (no waker of this value can reach that
    /// one). Otherwise it is unbound and retired until its wakers are all gone.
    /// Always inlined: it is part of [`remove_done`](Self::remove_done).
    #[inline(always)]
    fn release_entry(&mut self, index: usize) {
        let entry = kept(&self.slots, index).entry;
        // SAFETY: `entry` is the one bound to the leaving value: the arena binds only entries
        // of its table.
        let state = unsafe { self.table.entry_state_unchecked(entry as usize) };
        // Acquire pairs with the Release decrement in the wakers' drop: their marks in the ready
        // set happen before we look at (and clear) the entry's bit.
        let parked = state.load(Ordering::Acquire) == 0 || {
            // AcqRel: Acquire as above, if the last waker went meanwhile; Release so that a
            // waker dropped later sees RETIRED after our unbinding.
            let parked = state.fetch_or(RETIRED, Ordering::AcqRel) == 0;
            if parked {
                // Relaxed: no waker is left to see it.
                state.store(0, Ordering::Relaxed);
            }
            parked
        };
        if parked {
            // SAFETY: the entry is one of the table's, and the ready set has a bit for each.
            unsafe { ready_set::unmark_unchecked(self.table.words(), entry as usize) };
        } else {
            kept_mut(&mut self.slots, index).entry = NIL;
            let link = link_mut(&mut self.slots, entry);
            link.slot = NIL;
            link.next = self.retired_entries;
            self.retired_entries = entry;
        }
    }

    /// Puts `entry`, retired and with no waker left, on the free list, its ready bit cleared.
    fn free_entry(&mut self, entry: u32) {
        // Relaxed: no waker is left to see it.
        self.table
            .entry_state(entry as usize)
            .store(0, Ordering::Relaxed);
        ready_set::unmark(self.table.words(), entry as usize);
        link_mut(&mut self.slots, entry).next = self.free_entries;
        self.free_entries = entry;
    }

    /// Moves the retired entries whose wakers are all gone to the free list.
    fn reclaim_entries(&mut self) {
        let mut previous = NIL;
        let mut entry = self.retired_entries;
        while entry != NIL {
            let next = link(&self.slots, entry).next;
            // Acquire: as in `release_entry`.
            let state = self
                .table
                .entry_state(entry as usize)
                .load(Ordering::Acquire);
            if state == RETIRED {
                if previous == NIL {
                    self.retired_entries = next;
                } else {
                    link_mut(&mut self.slots, previous).next = next;
                }
                self.free_entry(entry);
            } else {
                previous = entry;
            }
            entry = next;
        }
    }

    /// Drains the ready set (or, `hub` set, the part of it the hub said was marked) into the
    /// queues for round `round`; `true` if this round's queue got a slot.
    fn drain_into_queues(&mut self, round: u32, mode: Drain) -> bool {
        let Self {
            slots,
            table,
            ready,
            deferred,
            ..
        } = self;
        // Slots still queued from an earlier round (the round ended at an output before it
        // reached them; always-ready streams, say) go behind the ones woken since: a woken
        // value is polled in the next call however many such streams wait. Within a round the
        // queue is empty when it collects, so this costs nothing there.
        let mut behind = core::mem::replace(ready, Queue::EMPTY);
        let mut got = false;
        ready_set::drain(
            table.words(),
            table.header().ready_layout(),
            mode,
            &mut |entry| {
                let index = link(slots, entry as u32).slot;
                if index == NIL {
                    // A waker of a departed value: it names no slot.
                    return;
                }
                let index = index as usize;
                let slot = kept(slots, index);
                if !slot.occupied {
                    // A parked entry: its wakers were gone when its value left.
                    return;
                }
                if slot.round == round {
                    deferred.push(&mut **slots, index);
                } else {
                    ready.push(&mut **slots, index);
                    got = true;
                }
            },
        );
        ready.append(&mut **slots, &mut behind);
        got
    }

    /// Collects the wakes of an arena in a growable arena (whose hub bit said it has some).
    pub(crate) fn collect_group(&mut self, round: u32) -> bool {
        self.drain_into_queues(round, Drain::Arm)
    }

    /// Polls the slots queued for this round until one gives an output, none is left, or
    /// `budget` is spent; prefetching the next queued slot while it polls one if `far` (see
    /// [`slots_far`]). The two cases are two loops, so that the small arenas' hot loop tests
    /// nothing. Guarded by `merge_hot_16`.
    #[inline(always)]
    pub(crate) fn poll_ready<R, F>(
        &mut self,
        budget: &mut Budget,
        f: &mut F,
        far: bool,
    ) -> Queued<(Key, R)>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        if far {
            round::poll_queue::<true, T, R, Self, F>(self, budget, f)
        } else {
            round::poll_queue::<false, T, R, Self, F>(self, budget, f)
        }
    }
}

/// What [`Arena::poll_first_rotating`] came to.
pub(crate) enum First<R> {
    /// The owner was not busy, a value was woken, nothing was queued, or the first queued
    /// slot's value had left: nothing was polled, and the round starts in full.
    NotTaken,
    /// The first queued stream gave an item and went to the tail of the queue.
    Rotated(Key, R),
    /// The first queued value was polled and came to this (an output, or none: the round goes
    /// on from there, with this budget).
    Polled(Option<(Key, R)>, Budget),
}

impl<T> SlotQueue<T> for Arena<T> {
    #[inline(always)]
    fn has_queued(&self) -> bool {
        !self.ready.is_empty_before_pop()
    }

    #[inline(always)]
    fn poll_front<R>(
        &mut self,
        round: u32,
        prefetch: bool,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> R,
    ) -> Option<(Turn, R)> {
        let index = self.ready.pop(&mut *self.slots);
        if prefetch {
            if let Some(next) = self.ready.front() {
                // The next slot is read right after this one's poll: in a large arena whose
                // woken slots are scattered, it is most likely out of this core's caches.
                crate::queue::prefetch(kept(&self.slots, next));
            }
        }
        let slot = kept_mut(&mut self.slots, index);
        // Through `as_mut`, not `is_none` on the `Option<T>`: a shared reference to a
        // (possibly self-referential) value would invalidate its borrows of itself under
        // Stacked Borrows (`a_future_borrowing_itself_across_pending_keeps_its_borrow`).
        slot.value.get_mut().as_mut()?;
        let counts_as_vain = slot.round != 0 && !slot.repoll;
        slot.repoll = false;
        slot.round = round;
        let key = Key::new(self.base + index as u32, slot.generation);
        let entry = slot.entry as usize;
        let out = self.poll_value(index, entry, |value, cx| poll(key, value, cx));
        let turn = Turn {
            index,
            key,
            entry,
            counts_as_vain,
        };
        Some((turn, out))
    }

    #[inline(always)]
    fn waits_for_an_earlier_waker(&self, _entry: usize) -> bool {
        // Every value is polled with its own waker from its first poll on.
        false
    }

    #[inline(always)]
    fn is_marked(&self, entry: usize) -> bool {
        ready_set::is_marked(self.table.words(), entry)
    }

    #[inline(always)]
    fn queue_unbound(&mut self, _index: usize) {
        unreachable!("an arena's values all have wakers of their own")
    }

    #[inline(always)]
    fn queue_repoll(&mut self, index: usize) {
        kept_mut(&mut self.slots, index).repoll = true;
        self.deferred.push(&mut *self.slots, index);
    }

    #[inline(always)]
    fn done(&mut self, index: usize) {
        self.remove_done(index);
    }
}

impl<T> Arena<T> {
    /// Polls the value at `index` (there is one) with `poll`, in a context of the waker of
    /// wake table entry `entry`. If `poll` panics, the value is dropped and its slot freed
    /// before the panic goes on.
    #[inline(always)]
    fn poll_value<R>(
        &mut self,
        index: usize,
        entry: usize,
        poll: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> R,
    ) -> R {
        #[cfg(feature = "std")]
        {
            use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
            let (value, waker) = self.value_and_waker(index, entry);
            // Only the poll is wrapped: `unwind::repair_on_unwind` would take the slot lookup
            // and the waker in too, a cost on every poll. Guarded by `ready_512k`.
            match catch_unwind(AssertUnwindSafe(|| {
                poll(value, &mut Context::from_waker(&waker))
            })) {
                Ok(out) => out,
                Err(panic) => {
                    self.remove_unwound(index);
                    resume_unwind(panic);
                }
            }
        }
        #[cfg(not(feature = "std"))]
        unwind::repair_on_unwind(
            self,
            |arena| {
                let (value, waker) = arena.value_and_waker(index, entry);
                poll(value, &mut Context::from_waker(&waker))
            },
            |arena| arena.remove_unwound(index),
        )
    }

    /// The value at `index` (there is one), pinned, and the waker of wake table entry `entry`.
    #[inline(always)]
    fn value_and_waker(
        &mut self,
        index: usize,
        entry: usize,
    ) -> (Pin<&mut T>, ManuallyDrop<Waker>) {
        let Some(value) = kept_mut(&mut self.slots, index).value.get_mut().as_mut() else {
            unreachable!("the slot polled is empty")
        };
        // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
        let value = unsafe { Pin::new_unchecked(value) };
        // SAFETY: `entry` is the one bound to the value: the arena binds only entries of its
        // table.
        (value, unsafe { self.table.borrowed_waker_unchecked(entry) })
    }
}

impl<T> Rounds<T> for Arena<T> {
    #[inline]
    fn held(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn poll_queued<R, F>(&mut self, budget: &mut Budget, f: &mut F) -> Queued<(Key, R)>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        // A bounded arena does not prefetch: telling a large one from a small one on each call
        // costs every output more than the prefetch saves. Guarded by `ready_512k`.
        self.poll_ready(budget, f, false)
    }

    #[inline]
    fn collect(&mut self, round: u32, mode: Drain) -> bool {
        if ready_set::drain_is_idle(self.table.top_word(), mode) {
            return false;
        }
        if self.table.own_task() {
            self.busy = mode == Drain::KeepBusy;
        }
        self.drain_into_queues(round, mode)
    }

    fn register(&self, waker: &Waker) {
        if let Parent::Task(parent) = self.table.header().parent() {
            parent.register(waker);
        }
    }

    fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    #[inline]
    fn begin(&mut self) {
        // BUSY stays set from one round to the next until a round arms the set; only the owner
        // sets or clears it, so it knows without looking.
        if !self.busy && self.table.own_task() {
            ready_set::set_busy(self.table.top_word());
            self.busy = true;
        }
    }
}

/// Element `index` of `items`, not bounds-checked again: for the indexes the arena keeps
/// itself, each below the length, fixed when the storage is made (a slot from the free list,
/// a queue or a bound entry's link; a group named by a growable arena's masks). Used on the
/// paths every output takes, where the checks cost a set's output more than the code they
/// guard (guarded by `ready_512k`, instructions). A debug build checks (`get_unchecked`'s own
/// precondition).
///
/// Under Miri the index is checked as by `items[index]`: a broken invariant panics there too,
/// and Miri runs the sets' tests 10-15% faster than through `get_unchecked`.
#[inline(always)]
pub(crate) fn kept<E>(items: &[E], index: usize) -> &E {
    #[cfg(miri)]
    return &items[index];
    // SAFETY: `index` is one the arena keeps, below `items.len()` (above).
    #[cfg(not(miri))]
    unsafe {
        items.get_unchecked(index)
    }
}

/// [`kept`], mutable.
#[inline(always)]
pub(crate) fn kept_mut<E>(items: &mut [E], index: usize) -> &mut E {
    #[cfg(miri)]
    return &mut items[index];
    // SAFETY: as in `kept`.
    #[cfg(not(miri))]
    unsafe {
        items.get_unchecked_mut(index)
    }
}

/// The owner's link of entry `entry`.
fn link<T>(slots: &[Slot<T>], entry: u32) -> &EntryLink {
    // An entry the arena keeps is below twice the slots' number: its slot is one of them.
    &kept(slots, entry as usize / 2).links[entry as usize % 2]
}

fn link_mut<T>(slots: &mut [Slot<T>], entry: u32) -> &mut EntryLink {
    &mut kept_mut(slots, entry as usize / 2).links[entry as usize % 2]
}

impl<T> Links for [Slot<T>] {
    #[inline]
    fn is_queued(&self, index: usize) -> bool {
        kept(self, index).queued
    }

    #[inline]
    fn next(&self, index: usize) -> u32 {
        kept(self, index).next_queued
    }

    #[inline]
    fn set_next(&mut self, index: usize, next: u32) {
        let slot = kept_mut(self, index);
        slot.queued = true;
        slot.next_queued = next;
    }

    #[inline]
    fn unqueue(&mut self, index: usize) {
        kept_mut(self, index).queued = false;
    }

    #[inline(always)]
    fn relink(&mut self, index: usize, next: u32) {
        kept_mut(self, index).next_queued = next;
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
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

/// The impls every iterator of an arena shares: it counts the values `left`, so it is exact
/// and fused, and its `Debug` shows that count.
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

/// The values of an [`Arena`] with their keys: [`Arena::iter`].
pub struct Iter<'a, T> {
    slots: core::iter::Enumerate<core::slice::Iter<'a, Slot<T>>>,
    base: u32,
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
                return Some((Key::new(self.base + index as u32, slot.generation), value));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of an [`Arena`], pinned, with their keys: [`Arena::iter_pin_mut`].
pub struct IterPinMut<'a, T> {
    slots: core::iter::Enumerate<core::slice::IterMut<'a, Slot<T>>>,
    base: u32,
    left: usize,
}

impl<'a, T> Iterator for IterPinMut<'a, T> {
    type Item = (Key, Pin<&'a mut T>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        for (index, slot) in self.slots.by_ref() {
            let generation = slot.generation;
            if let Some(value) = slot.value_mut() {
                self.left -= 1;
                // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
                let value = unsafe { Pin::new_unchecked(value) };
                return Some((Key::new(self.base + index as u32, generation), value));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of an [`Arena`], moved out: [`Arena::into_values`]. Dropping it drops the values
/// it has not given yet, once each.
pub struct IntoValues<T> {
    arena: Arena<T>,
    /// The first slot not yet looked at.
    next: usize,
}

impl<T: Unpin> Iterator for IntoValues<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        while self.arena.len > 0 && self.next < self.arena.slots.len() {
            let index = self.next;
            self.next += 1;
            if self.arena.slots[index].occupied {
                let value = self.arena.slots[index].value.get_mut().take();
                self.arena.vacate(index);
                return value;
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.arena.len, Some(self.arena.len))
    }
}

impl<T: Unpin> ExactSizeIterator for IntoValues<T> {}

impl<T: Unpin> core::iter::FusedIterator for IntoValues<T> {}

impl<T> fmt::Debug for IntoValues<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoValues")
            .field("len", &self.arena.len)
            .finish_non_exhaustive()
    }
}
