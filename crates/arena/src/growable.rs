//! The growable arena: a stack of doubling arenas on one hub, polled in one round.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::arena::{self, Arena, First, kept, kept_mut, slots_far};
use crate::hub::Hub;
use crate::key::Key;
use crate::ready_set::Drain;
use crate::round::{self, Budget, Queued, Rounds};
use crate::sizing::{MAX_GROUP, Sizing};
use crate::step::Step;
use crate::storage::{Storage, sealed::Sealed};
use crate::unwind;
use alloc::vec::Vec;

/// A growable arena: a stack of [`Arena`]s (its *groups*), smallest first, sharing one parent
/// registration, polled as one arena with one fairness budget.
///
/// The first insert allocates the first group, of 32 slots (or the capacity given to
/// [`with_capacity`](GrowableArena::with_capacity)); each group after it holds as many slots as
/// all the groups below it together, and at least 32, so the capacity doubles. An insert goes
/// into a free slot of the *smallest* group that has one, and a group is added only when every
/// group is full, so long-lived values drift into the small groups. Values never move: a group
/// holding a value is never released. Right after each output that frees a slot (and after
/// [`clear`](GrowableArena::clear)), while the largest group holds no value, it is released if
/// the values left fill at most half of the groups below it and the capacity left is at least
/// the capacity the arena *retains* (a set that cycles between large and small keeps what it
/// grows back into instead of reallocating every cycle; it forgets this once it has stayed
/// small for as many outputs as it was large). A growable arena has at most 63 groups.
///
/// Groups are visited round-robin, each for a *turn*: a group with queued values gives outputs
/// in a row until its queue is empty or it has given as many as it has slots, and then the
/// next group with queued values takes its turn. So a queued value waits behind at most as many
/// outputs as the arena has slots, as in one arena of that capacity, and values pushed in order
/// into a group come out in that order while the others wait their turn. Keys of a released
/// group are refused by the group that takes its place.
pub struct GrowableArena<T> {
    /// The groups, smallest first. Group `i` has bit `i` in the hub and in the masks below.
    groups: Vec<Arena<T>>,
    /// The one parent of every group; made with the first group.
    hub: Option<OwnerHub>,
    /// How many values the groups hold.
    len: usize,
    /// How many slots the groups have.
    capacity: usize,
    /// Groups with a free slot.
    not_full: u64,
    /// Groups with slots queued for this round.
    queued: u64,
    /// Groups with slots queued for the next round.
    deferred: u64,
    /// The group whose turn it is: a round looks at it first.
    cursor: u32,
    /// How many outputs the group at `cursor` may still give in its turn (0: its turn is over
    /// or has not started).
    turn_left: u32,
    /// The number of the round in progress or last run.
    round: u32,
    /// When to add and release groups.
    sizing: Sizing,
    /// The generation the slots of a new group start at: past every generation of every group
    /// released so far. Keys number slots across the groups, and a group added after releases
    /// may cover the slot numbers of several released groups, so one floor serves them all.
    generation_floor: u64,
    /// Whether the owner has left `BUSY` set in the hub.
    busy: bool,
    /// Set by a call of [`poll_next_some`](Self::poll_next_some) that ended with a stream of the
    /// group at `cursor` giving an item and moving to the tail of its queue, while that group's
    /// turn goes on; cleared by anything else that changes the groups or starts a round. While
    /// it is set, the next call polls that group's first queued value with nothing else to
    /// check but the hub ([`poll_first_rotating`](Self::poll_first_rotating)).
    hot: bool,
    /// Set while a group polls a value: still set after that poll unwound, when `len` and the
    /// masks may be stale until [`recount`](Self::recount).
    stale: bool,
    /// The number of the first slot of group `i`, for keys: the capacity of the groups below.
    bases: [u32; Hub::MAX_ARENAS],
}

/// The hub, as its owner holds it: dropping the arena forgets the registered task, so stale
/// wakers (which keep the hub alive) do not reach it. Not generic, so that the arena has no
/// `Drop` of its own and values may borrow what is declared after it.
struct OwnerHub(Hub);

impl Drop for OwnerHub {
    fn drop(&mut self) {
        self.0.forget_waker();
    }
}

impl<T> GrowableArena<T> {
    /// An empty arena. Allocates nothing: the first insert allocates the first group.
    pub const fn new() -> Self {
        Self {
            groups: Vec::new(),
            hub: None,
            len: 0,
            capacity: 0,
            not_full: 0,
            queued: 0,
            deferred: 0,
            cursor: 0,
            turn_left: 0,
            round: 0,
            sizing: Sizing::new(),
            generation_floor: 0,
            busy: false,
            hot: false,
            stale: false,
            bases: [0; Hub::MAX_ARENAS],
        }
    }

    /// An empty arena with at least `capacity` slots, allocated now; its first group holds
    /// `capacity` slots and is kept as long as the arena. `with_capacity(0)` is
    /// [`new`](Self::new).
    pub fn with_capacity(capacity: usize) -> Self {
        let mut arena = Self::new();
        if capacity > 0 {
            arena.add_group(capacity.min(MAX_GROUP));
            while arena.capacity < capacity {
                let size = arena.sizing.grow(arena.capacity);
                arena.add_group(size);
            }
        }
        arena
    }

    /// [`with_capacity`](Self::with_capacity) with the slots' generations starting at
    /// `generation`, to reach the generations' end in tests.
    #[cfg(test)]
    pub(crate) fn starting_at_generation(capacity: usize, generation: u64) -> Self {
        let mut arena = Self::new();
        arena.generation_floor = generation;
        arena.add_group(capacity);
        arena
    }

    /// How many values the arena holds.
    pub fn len(&self) -> usize {
        if self.stale {
            self.groups.iter().map(Arena::len).sum()
        } else {
            self.len
        }
    }

    /// Recounts the length and the masks if a value's poll unwound since the last call.
    #[inline]
    fn recount(&mut self) {
        if self.stale {
            self.recount_all();
            self.stale = false;
        }
    }

    /// Whether the arena holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many slots the arena has allocated now: the sum of its groups' capacities.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many groups the arena has now.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Stores `value` in a free slot of the smallest group that has one (adding a group if
    /// none has), queues it to be polled, and returns its key.
    ///
    /// # Panics
    /// If every one of the 63 groups is full (more values than memory can hold).
    #[inline]
    pub fn insert(&mut self, value: T) -> Key {
        self.recount();
        let group = if self.not_full == 0 {
            let size = self.sizing.grow(self.capacity);
            self.add_group(size)
        } else {
            self.not_full.trailing_zeros() as usize
        };
        let arena = kept_mut(&mut self.groups, group);
        let key = match arena.insert(value) {
            Ok(key) => key,
            // The group's last free slot was retired when its value left (see `Key`).
            Err(value) => return self.insert_retired(group, value),
        };
        if arena.is_full() {
            self.not_full &= !bit(group);
        }
        self.queued |= bit(group);
        self.len += 1;
        key
    }

    /// [`insert`](Self::insert) after group `group`, marked as having a free slot, had none
    /// (its last one was retired).
    #[cold]
    fn insert_retired(&mut self, group: usize, value: T) -> Key {
        self.not_full &= !bit(group);
        self.insert(value)
    }

    /// The group of `key`'s slot, if it is one of ours: the last group whose first slot is at
    /// or before it (slots are counted across the groups, smallest first).
    pub(crate) fn group_of(&self, key: Key) -> Option<usize> {
        let index = key.index();
        (index < self.capacity).then(|| {
            self.bases[..self.groups.len()].partition_point(|&base| base as usize <= index) - 1
        })
    }

    /// Whether `key`'s value is still in the arena.
    pub fn contains_key(&self, key: Key) -> bool {
        self.group_of(key)
            .is_some_and(|group| self.groups[group].contains_key(key))
    }

    /// `key`'s value, if it is still in the arena.
    pub fn get(&self, key: Key) -> Option<&T> {
        self.groups[self.group_of(key)?].get(key)
    }

    /// `key`'s value, pinned, if it is still in the arena.
    pub fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        let group = self.group_of(key)?;
        self.groups[group].get_pin_mut(key)
    }

    /// An owned waker of `key`'s value, if it is still in the arena.
    pub fn waker(&self, key: Key) -> Option<Waker> {
        self.groups[self.group_of(key)?].waker(key)
    }

    /// Drops `key`'s value in place now and frees its slot; `false` if it was gone already.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
    pub fn remove(&mut self, key: Key) -> bool {
        self.recount();
        let Some(group) = self.group_of(key) else {
            return false;
        };
        if !self.groups[group].contains_key(key) {
            return false;
        }
        let removed = self.repairing(|arena| arena.groups[group].remove(key));
        self.left(group);
        removed
    }

    /// Moves `key`'s value out and frees its slot.
    pub fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        self.recount();
        let group = self.group_of(key)?;
        let value = self.groups[group].take(key)?;
        self.left(group);
        Some(value)
    }

    /// Moves the values out, group by group, for `T: Unpin`. The values the iterator has not
    /// given when it is dropped are dropped with their groups.
    pub fn into_values(mut self) -> IntoValues<T>
    where
        T: Unpin,
    {
        self.recount();
        let left = self.len;
        let GrowableArena { groups, hub, .. } = self;
        IntoValues {
            groups: groups.into_iter(),
            current: None,
            left,
            _hub: hub,
        }
    }

    /// Drops every value in place, then releases empty groups as after an output.
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates; the arena stays consistent.
    pub fn clear(&mut self) {
        self.recount();
        self.repairing(|arena| {
            if let Err(panic) = unwind::each_despite_panics(&mut arena.groups, Arena::clear) {
                unwind::resume(panic);
            }
        });
        self.recount_all();
        self.release_empty_groups();
    }

    /// The values with their keys, group by group.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            groups: self.groups.iter(),
            current: None,
            left: self.len(),
        }
    }

    /// The values, pinned, with their keys, group by group.
    pub fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        self.recount();
        IterPinMut {
            groups: self.groups.iter_mut(),
            current: None,
            left: self.len,
        }
    }

    /// Starts a poll round: the fairness budget for
    /// [`poll_with_budget`](GrowableArena::poll_with_budget).
    #[inline]
    pub fn budget(&mut self) -> Budget {
        self.hot = false;
        self.recount();
        self.round = round::next_round(self.round);
        self.start_round_with_wakes(false);
        Budget::new(self.round, self.len)
    }

    /// Queues what round `self.round` starts with, as [`Arena`]'s: the values woken since the
    /// last round if values wait for this one (or, `queued_repeat`, if the values still queued
    /// may be streams queued again after an item), then those.
    #[inline]
    fn start_round_with_wakes(&mut self, queued_repeat: bool) {
        if (self.deferred != 0 || queued_repeat && self.queued != 0)
            && self
                .hub
                .as_ref()
                .is_some_and(|OwnerHub(hub)| hub.has_ready())
        {
            // As in `Arena::budget`: wakes first, then the values deferred by the last round.
            self.begin();
            self.collect(self.round, Drain::KeepBusy);
        }
        if self.deferred != 0 {
            self.start_deferred();
        }
    }

    /// Queues the values deferred by the last round (in the groups `deferred` names) for this
    /// one.
    #[inline]
    fn start_deferred(&mut self) {
        if let [arena] = self.groups.as_mut_slice() {
            if arena.start_round() {
                self.queued = 1;
            }
        } else {
            let mut deferred = self.deferred;
            while deferred != 0 {
                let group = deferred.trailing_zeros() as usize;
                deferred &= deferred - 1;
                if self.groups[group].start_round() {
                    self.queued |= bit(group);
                }
            }
        }
        self.deferred = 0;
    }

    /// Polls the arena as a stream: the next output of any woken value, fairly. As
    /// [`Arena::poll_next`], across every group with one budget.
    #[inline]
    pub fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, mut f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let mut budget = self.budget();
        self.poll_with_budget(cx, &mut budget, &mut f)
    }

    /// [`poll_next`](GrowableArena::poll_next) for values that may leave without an output, such as
    /// streams (`Step::of_stream`): an output of `None` (a stream's end: `Step::Done(None)` drops the
    /// value) is not returned; the round goes on to the next value, within the same budget.
    /// `Ready(None)` when the arena holds nothing.
    #[inline]
    pub fn poll_next_some<R, F>(&mut self, cx: &mut Context<'_>, mut f: F) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        let budget = if self.hot || self.busy && !self.stale {
            match self.poll_first_rotating(&mut f) {
                First::Rotated(key, out) => return Poll::Ready(Some((key, out))),
                First::Polled(out, budget) => {
                    self.round = budget.round;
                    match out {
                        Some(out) => return Poll::Ready(Some(out)),
                        None => Some(budget),
                    }
                }
                First::NotTaken => None,
            }
        } else {
            None
        };
        self.poll_rest_some(cx, budget, &mut f)
    }

    /// The rest of a [`poll_next_some`](Self::poll_next_some) round after its first poll (with
    /// `budget`), or all of it (`None`). Inlined: out of line, a merge of hot streams takes
    /// fewer instructions, and one of sparse wakes more (`merge_hot_16`, `merge_sparse_10k`).
    #[inline]
    fn poll_rest_some<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: Option<Budget>,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        let mut budget = match budget {
            Some(budget) => budget,
            None => self.start_round_some(),
        };
        round::poll_round_some(self, cx, &mut budget, f)
    }

    /// Starts a round of [`poll_next_some`](Self::poll_next_some) in full.
    #[inline]
    fn start_round_some(&mut self) -> Budget {
        self.hot = false;
        self.recount();
        self.round = round::next_round(self.round);
        // Streams that gave an item went to the tail of their group's queue, not to the next
        // round: wakes are collected ahead of them as of those.
        self.start_round_with_wakes(true);
        Budget::new(self.round, self.len)
    }

    /// As [`Arena::poll_first_rotating`], in the group whose turn it is, for an arena busy
    /// from an earlier call whose counts are current: if nothing was woken since, the values
    /// deferred by the last round are queued, and the first value queued in the group whose
    /// turn it is (the one [`poll_queued`](Rounds::poll_queued) would poll) is polled in
    /// place. The masks and the turn are kept as `poll_queued` keeps them, so the rest of the
    /// round goes on from there. Guarded by `merge_hot_16` and `merge_ready_1k`
    /// (instructions).
    #[inline(always)]
    fn poll_first_rotating<R, F>(&mut self, f: &mut F) -> First<R>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<Option<R>>,
    {
        if self
            .hub
            .as_ref()
            .is_none_or(|OwnerHub(hub)| hub.has_ready())
        {
            self.hot = false;
            return First::NotTaken;
        }
        let mid_turn = self.hot;
        let group = if mid_turn {
            // The group at the cursor, mid-turn, queued, nothing deferred (see `hot`).
            self.hot = false;
            self.cursor as usize
        } else {
            if self.deferred != 0 {
                self.start_deferred();
            }
            if self.queued == 0 {
                return First::NotTaken;
            }
            first_from(self.queued, self.cursor)
        };
        let held = self.len;
        // A live group: the cursor while `hot` (cleared whenever a group goes), or a bit of
        // `queued` (bits of live groups only).
        let arena = kept_mut(&mut self.groups, group);
        let before = arena.len();
        // As in `poll_queued`: if the poll unwinds, the next call recounts (`recount`).
        self.stale = true;
        // A group's top word has no `BUSY` (the hub has it): nothing woken is all zero.
        let first = arena.poll_first_rotating(self.round, 0, held, f);
        self.stale = false;
        match &first {
            First::Rotated(..) => {
                // The common case, a stream's item: it went to the tail of the group's queue,
                // which was not empty and is not; nothing left; nothing is deferred.
                if mid_turn {
                    // The turn at the cursor goes on (it had a poll left, or `hot` was clear).
                    self.spend_turn(group);
                } else {
                    self.take_turn(group);
                }
                self.hot = self.turn_left != 0;
                return first;
            }
            First::Polled(out, _) => {
                if out.is_some() {
                    self.take_turn(group);
                }
            }
            First::NotTaken => {}
        }
        if !self.groups[group].has_ready() {
            self.queued &= !bit(group);
        }
        if self.groups[group].has_deferred() {
            self.deferred |= bit(group);
        }
        if self.groups[group].len() < before {
            self.left(group);
        }
        first
    }

    /// [`poll_next`](GrowableArena::poll_next) within a round the caller started with
    /// [`budget`](GrowableArena::budget), as [`Arena::poll_with_budget`].
    #[inline]
    pub fn poll_with_budget<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        self.hot = false;
        self.recount();
        round::poll_round(self, cx, budget, f)
    }

    /// Adds a group of `size` slots on top; returns its index.
    fn add_group(&mut self, size: usize) -> usize {
        let group = self.groups.len();
        assert!(
            group < Hub::MAX_ARENAS,
            "growable arena is full: {} groups, {} values",
            Hub::MAX_ARENAS,
            self.len
        );
        let base = u32::try_from(self.capacity)
            .ok()
            .filter(|base| {
                base.checked_add(size as u32)
                    .is_some_and(|end| end < u32::MAX)
            })
            .unwrap_or_else(|| {
                panic!(
                    "growable arena is full: {} slots, {} values",
                    self.capacity, self.len
                )
            });
        let hub = &self.hub.get_or_insert_with(|| OwnerHub(Hub::new())).0;
        self.bases[group] = base;
        self.groups.push(Arena::with_hub(
            size,
            hub,
            group,
            base,
            self.generation_floor,
        ));
        self.capacity += size;
        self.not_full |= bit(group);
        group
    }

    /// Releases the top group while it holds no value and the memory policy allows it.
    fn release_empty_groups(&mut self) {
        while let [_, .., top] = self.groups.as_slice() {
            if !top.is_empty() {
                return;
            }
            let below = self.capacity - top.capacity();
            if !self.sizing.may_release(self.len, below) {
                return;
            }
            self.sizing.released(self.capacity);
            let group = self.groups.len() - 1;
            self.generation_floor = self.generation_floor.max(top.next_generation());
            // Dropping the arena frees its slots; its wake table lives on while stale wakers
            // do. Their wakes set this group's hub bit: ignored while no group has it, and
            // costing a look that finds nothing at the group that takes the bit later.
            self.groups.pop();
            // The group at the cursor may be gone.
            self.hot = false;
            self.not_full &= !bit(group);
            self.queued &= !bit(group);
            self.deferred &= !bit(group);
            self.capacity = below;
        }
    }

    /// Bookkeeping after a value of group `group` left.
    #[inline]
    fn left(&mut self, group: usize) {
        self.len -= 1;
        self.not_full |= bit(group);
        self.sizing.output(self.len);
        if let [_, .., top] = self.groups.as_slice() {
            if top.is_empty() {
                self.release_empty_groups();
            }
        }
    }

    /// Runs `f`; if it panics (a value's `poll` or `Drop` did), recounts what the groups hold
    /// before the panic goes on, so that the arena stays consistent.
    fn repairing<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        unwind::repair_on_unwind(self, f, Self::recount_all)
    }

    /// Recomputes the length and the masks from the groups.
    fn recount_all(&mut self) {
        self.hot = false;
        self.len = 0;
        self.not_full = 0;
        self.queued = 0;
        self.deferred = 0;
        for (group, arena) in self.groups.iter().enumerate() {
            self.len += arena.len();
            if !arena.is_full() {
                self.not_full |= bit(group);
            }
            if arena.has_ready() {
                self.queued |= bit(group);
            }
            if arena.has_deferred() {
                self.deferred |= bit(group);
            }
        }
    }

    /// Counts an output of `group` against its turn, and passes the turn on to the next group
    /// once it has given as many outputs as it has slots.
    #[inline]
    fn take_turn(&mut self, group: usize) {
        if group as u32 != self.cursor || self.turn_left == 0 {
            // The group at the cursor had nothing queued, or its turn is over: this group's
            // turn starts now. (A group has fewer than `u32::MAX` slots.)
            self.cursor = group as u32;
            self.turn_left = self.groups[group].capacity() as u32;
        }
        self.spend_turn(group);
    }

    /// A poll of `group`, the cursor's, within its turn: the turn ends with its last poll.
    #[inline(always)]
    fn spend_turn(&mut self, group: usize) {
        debug_assert!(group as u32 == self.cursor && self.turn_left != 0);
        self.turn_left -= 1;
        if self.turn_left == 0 {
            self.cursor = (group as u32 + 1) % u64::BITS;
        }
    }

    /// One bit per group that exists.
    fn live_groups(&self) -> u64 {
        bit(self.groups.len()) - 1
    }
}

impl<T> Rounds<T> for GrowableArena<T> {
    fn held(&self) -> usize {
        self.len
    }

    #[inline]
    fn poll_queued<R, F>(&mut self, budget: &mut Budget, f: &mut F) -> Queued<(Key, R)>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        if let [arena] = self.groups.as_mut_slice() {
            // One group (a set that never outgrew its first): no group to choose, no turn to
            // pass on; the masks are kept as the loop below keeps them.
            if self.queued == 0 {
                return Queued::Empty;
            }
            let before = arena.len();
            self.stale = true;
            let polled = arena.poll_ready(budget, f, slots_far::<T>(self.capacity));
            self.stale = false;
            self.deferred = u64::from(arena.has_deferred());
            return match polled {
                Queued::Ready(out) => {
                    self.queued = u64::from(arena.has_ready());
                    if arena.len() < before {
                        self.left(0);
                    }
                    Queued::Ready(out)
                }
                Queued::Empty => {
                    self.queued = 0;
                    Queued::Empty
                }
                Queued::Yield => Queued::Yield,
            };
        }
        let far = slots_far::<T>(self.capacity);
        while self.queued != 0 {
            let group = first_from(self.queued, self.cursor);
            let before = kept(&self.groups, group).len();
            // If the poll unwinds (a value panicked; the group dropped it), the length and
            // masks are recounted by the next call (`recount`); `len` counts the groups till then.
            self.stale = true;
            let polled = kept_mut(&mut self.groups, group).poll_ready(budget, f, far);
            self.stale = false;
            let arena = kept(&self.groups, group);
            if arena.has_deferred() {
                self.deferred |= bit(group);
            }
            match polled {
                Queued::Ready(out) => {
                    if !arena.has_ready() {
                        self.queued &= !bit(group);
                    }
                    let left = arena.len() < before;
                    self.take_turn(group);
                    if left {
                        self.left(group);
                    }
                    return Queued::Ready(out);
                }
                Queued::Empty => self.queued &= !bit(group),
                Queued::Yield => return Queued::Yield,
            }
        }
        Queued::Empty
    }

    fn collect(&mut self, round: u32, mode: Drain) -> bool {
        let Some(OwnerHub(hub)) = &self.hub else {
            return false;
        };
        if mode == Drain::KeepBusy && !hub.has_ready() {
            return false;
        }
        // A group's bit is set when its ready set goes from empty to non-empty, so every group
        // whose bit is taken is collected now.
        let mut woken = hub.take_ready(mode) & self.live_groups();
        self.busy = mode == Drain::KeepBusy;
        let mut got = false;
        while woken != 0 {
            let group = woken.trailing_zeros() as usize;
            woken &= woken - 1;
            let arena = &mut self.groups[group];
            if arena.collect_group(round) {
                self.queued |= bit(group);
                got = true;
            }
            if arena.has_deferred() {
                self.deferred |= bit(group);
            }
        }
        got
    }

    fn register(&self, waker: &Waker) {
        if let Some(OwnerHub(hub)) = &self.hub {
            hub.register(waker);
        }
    }

    fn has_deferred(&self) -> bool {
        self.deferred != 0
    }

    #[inline]
    fn begin(&mut self) {
        if !self.busy {
            if let Some(OwnerHub(hub)) = &self.hub {
                hub.set_busy();
                self.busy = true;
            }
        }
    }
}

/// The mask bit of group `group`.
fn bit(group: usize) -> u64 {
    1 << group
}

/// The first group in `mask` at or after `from`, wrapping around. `mask` is not empty.
fn first_from(mask: u64, from: u32) -> usize {
    ((mask.rotate_right(from).trailing_zeros() + from) % u64::BITS) as usize
}

impl<T> Sealed for GrowableArena<T> {}

impl<T> Storage<T> for GrowableArena<T> {
    type Of<U> = GrowableArena<U>;
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
        Ok(GrowableArena::insert(self, value))
    }

    #[inline]
    fn is_full(&self) -> bool {
        false
    }

    crate::storage::forward_to_inherent!(GrowableArena);
}

impl<T> Default for GrowableArena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for GrowableArena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableArena")
            .field("len", &self.len())
            .field("capacity", &self.capacity)
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

crate::arena::counted_iterator!(Iter, IterPinMut);

/// The values of a [`GrowableArena`] with their keys: [`GrowableArena::iter`].
pub struct Iter<'a, T> {
    groups: core::slice::Iter<'a, Arena<T>>,
    current: Option<arena::Iter<'a, T>>,
    left: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Key, &'a T);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.as_mut().and_then(Iterator::next) {
                self.left -= 1;
                return Some(item);
            }
            self.current = Some(self.groups.next()?.iter());
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of a [`GrowableArena`], pinned, with their keys: [`GrowableArena::iter_pin_mut`].
pub struct IterPinMut<'a, T> {
    groups: core::slice::IterMut<'a, Arena<T>>,
    current: Option<arena::IterPinMut<'a, T>>,
    left: usize,
}

impl<'a, T> Iterator for IterPinMut<'a, T> {
    type Item = (Key, Pin<&'a mut T>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.as_mut().and_then(Iterator::next) {
                self.left -= 1;
                return Some(item);
            }
            self.current = Some(self.groups.next()?.iter_pin_mut());
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The values of a [`GrowableArena`], moved out: [`GrowableArena::into_values`]. Dropping it
/// drops the values it has not given yet, once each.
pub struct IntoValues<T> {
    groups: alloc::vec::IntoIter<Arena<T>>,
    current: Option<arena::IntoValues<T>>,
    left: usize,
    /// Kept until the groups are gone, as the arena keeps it.
    _hub: Option<OwnerHub>,
}

impl<T: Unpin> Iterator for IntoValues<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(value) = self.current.as_mut().and_then(Iterator::next) {
                self.left -= 1;
                return Some(value);
            }
            self.current = Some(self.groups.next()?.into_values());
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T: Unpin> ExactSizeIterator for IntoValues<T> {}

impl<T: Unpin> core::iter::FusedIterator for IntoValues<T> {}

impl<T> fmt::Debug for IntoValues<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoValues")
            .field("len", &self.left)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_from_wraps_around() {
        assert_eq!(first_from(0b1010, 0), 1);
        assert_eq!(first_from(0b1010, 1), 1);
        assert_eq!(first_from(0b1010, 2), 3);
        assert_eq!(first_from(0b1010, 4), 1);
        assert_eq!(first_from(1 << 62, 5), 62);
        assert_eq!(first_from(1, 62), 0);
    }
}
