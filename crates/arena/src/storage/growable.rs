//! The growable arena: a stack of growing stores on one hub, polled as one arena, by one loop
//! over one queue.

use core::fmt;
use core::mem::MaybeUninit;
use core::pin::Pin;
use core::task::{Context, Waker};

use crate::index::{trusted, trusted_mut};
use crate::key::{self, Key};
use crate::poll::{Mark, Marks, PollStorage, Polled, Queue, Rounds, Step};
use crate::storage::sizing::{FIRST_GROUP, MAX_GROUP, Sizing};
use crate::storage::store::{self, GROUP_SHIFT, Store};
use crate::storage::{
    Storage,
    sealed::{Sealed, Token},
};
use crate::unwind;
use crate::wake::hub::Hub;
use crate::wake::ready_set::{Drain, ParentWord};
use alloc::vec::Vec;
use core::ptr::NonNull;

/// A growable arena: a stack of fixed stores (its *groups*), smallest first, sharing one parent
/// registration, polled as one arena with one fairness budget.
///
/// The first insert allocates the first group, of 32 slots (or the capacity given to
/// [`with_capacity`](GrowableArena::with_capacity)); each group after it holds as many slots as
/// all the groups below it together (at least 32), so the capacity doubles, except from 256 to
/// 262,144 slots, where a group holds a quarter of what is below it (see the contract's
/// [*Memory*](crate::contract#memory)). An insert goes
/// into a free slot of the *smallest* group that has one, and a group is added only when every
/// group is full, so long-lived values drift into the small groups. Values never move: a group
/// holding a value is never released. Right after each output that frees a slot (and after
/// [`clear`](crate::Storage::clear)), while the largest group holds no value, it is released if
/// the values left fill at most half of the groups below it and the capacity left is at least
/// the capacity the arena *retains* (a set that cycles between large and small keeps what it
/// grows back into instead of reallocating every cycle; it forgets this once it has stayed
/// small for as many outputs as it was large). A growable arena has at most 63 groups.
///
/// The groups share one poll loop and one queue: a woken value is polled in the order it was
/// woken, whatever its group, exactly as in one [`Arena`](crate::Arena) of the same capacity.
/// Keys of a released group are refused by the group that takes its place.
pub struct GrowableArena<T> {
    groups: Groups<T>,
    rounds: Rounds,
}

/// The groups of a [`GrowableArena`]: its storage, as the poll loop reaches it. A slot's id in
/// the queues is its group's number shifted by [`GROUP_SHIFT`], or'd with its index in the
/// group.
#[expect(
    missing_debug_implementations,
    reason = "named only as the sealed `Storage` trait's hidden storage"
)]
pub struct Groups<T> {
    /// The groups, smallest first. Group `i` has bit `i` in the hub and in `not_full`.
    stores: Vec<Group<T>>,
    /// Where group 0 is in `stores` (dangling while there is none): see [`FirstGroup`].
    first: FirstGroup,
    /// The one parent of every group; made with the first group.
    hub: Option<OwnerHub>,
    /// How many values the groups hold.
    len: usize,
    /// How many slots the groups have.
    capacity: usize,
    /// How many slots the groups under the top group have (0 with one group or none): the top
    /// group is released only once the values fill at most half of them.
    below_top: usize,
    /// Groups that may have a free slot: every group that has one is here. A group's bit is
    /// set when it is added and when a value leaves it, and cleared when an insert finds it
    /// full (not when an insert fills it: the next insert's look at the store says so).
    not_full: u64,
    /// When to add and release groups.
    sizing: Sizing,
    /// The generation the slots of a new group start at: the arena's first generation
    /// ([`key::first_generation`], taken with the first group), then past every generation of
    /// every group released so far. A key names its group by number, as a slot id does, and
    /// a group added after releases takes the number of a released one, so one floor serves
    /// them all.
    generation_floor: u64,
    /// Set when a value leaves and the top group (of two or more) holds no other, and when a
    /// value's poll panics (in any group: the release looks at the top group itself): the
    /// memory policy may release it. Acted on at once (a released group's slots are taken out of the
    /// queues first), also when the value's `Drop` panics; after a value's poll panicked, as
    /// the panic leaves the call with `std`, and at the next output that frees a slot without
    /// (the round's queues are in use while the panic unwinds). Not looked at on every call:
    /// that cost every growable kind two instructions a call (`merge_hot_16_noop`,
    /// instructions).
    release_due: bool,
    /// At or below how many values an output has the memory policy to look at (the larger of
    /// half the slots under the top group, under which the top group may be released, and a
    /// quarter of the sizing's horizon, under which its outputs count as calm); above it, an
    /// output only breaks the sizing's calm. One comparison an output (`unordered_ready_512k`,
    /// instructions); set by [`rewatch`](Self::rewatch) whenever either changes.
    watch: usize,
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

/// A group: a store, kept at a stride of a power of two bytes in the groups' vector, so that
/// reaching a slot from its id takes a shift where a store's own size (not a power of two)
/// took a multiplication, whose latency every output of a hot merge waits on. Guarded by
/// `merge_hot_16` and `merge_hot_16_noop` (pinfold-growable, time). Padded, not aligned: an
/// alignment past the allocator's own made the vector's every allocation and growth take the
/// allocator's slow aligned way (`unordered_held_256`, instructions).
struct Group<T>(
    Store<T>,
    // `allow`, not `expect`: on 32-bit targets a store is 64 bytes, the pad is empty, and an
    // empty field is never reported.
    #[allow(dead_code, reason = "padding, never read")] [MaybeUninit<u8>; GROUP_PAD],
);

/// The bytes that pad a store to a power of two (a store's size does not depend on its values'
/// type, which it keeps behind a pointer).
const GROUP_PAD: usize = size_of::<Store<()>>().next_power_of_two() - size_of::<Store<()>>();

// The group's place in the vector is a power of two bytes: checked by every build, `cargo
// check` too.
const _: () = assert!(size_of::<Group<()>>().is_power_of_two());

impl<T> core::ops::Deref for Group<T> {
    type Target = Store<T>;

    #[inline(always)]
    fn deref(&self) -> &Store<T> {
        &self.0
    }
}

impl<T> core::ops::DerefMut for Group<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Store<T> {
        &mut self.0
    }
}

/// The slots of a group hold at most this many: ids keep a slot's index in the low bits.
const INDEX_MASK: u32 = (1 << GROUP_SHIFT) - 1;

/// The group and the index in it of the slot with id `id`.
#[inline(always)]
fn split(id: u32) -> (usize, usize) {
    ((id >> GROUP_SHIFT) as usize, (id & INDEX_MASK) as usize)
}

/// Where group 0 is: the groups' vector's own pointer, kept apart from the vector, so that
/// reaching a mark of group 0 from its slot's id takes a branch on the group's number
/// (predicted) and no load whose address depends on the id. A busy merge's next head is the
/// link in its head's mark ([`Marks::rotating_mark`]), so such a load adds its latency to every
/// item. Guarded by `merge_hot_16_noop` and `merge_hot_16` (pinfold-growable, time). Kept
/// untyped, so that it gives `Groups` no auto trait bound of its own.
struct FirstGroup(NonNull<u8>);

// SAFETY: a `FirstGroup` points into the groups' vector of the `Groups` that holds it, and is
// only dereferenced in `hot_mut`, through a mutable borrow of that vector: it adds no sharing,
// and the auto traits of `Groups` are those of the vector.
unsafe impl Send for FirstGroup {}
// SAFETY: as for `Send`.
unsafe impl Sync for FirstGroup {}

impl FirstGroup {
    /// Where `stores` is (dangling if it has no buffer): the vector's own pointer, which no
    /// reference to its contents is made for, so that it stays valid beside the references
    /// the vector's other methods make from the same pointer.
    fn of<T>(stores: &mut Vec<Group<T>>) -> Self {
        Self(NonNull::new(stores.as_mut_ptr().cast()).unwrap_or(NonNull::dangling()))
    }
}

/// Group `group`'s store, for [`Marks::rotating_mark`]: group 0 through `first`, the others
/// by index. The group exists: a slot id in the queues names a live group (a group's ids are
/// taken out of them before it is released). The index of the others is checked: its branch
/// to the panic keeps the compiler from merging the two ways into one address chosen by the
/// group's number, which put the id-dependent load back. Only the rotating head takes this
/// way: every lookup through it cost more instructions on the other growable rows. Guarded by
/// `merge_hot_16_noop` (pinfold-growable, time) and `keyed_churn_100k` (pinfold-growable,
/// instructions).
#[inline(always)]
#[expect(
    clippy::ptr_arg,
    reason = "the vector, not its contents: a slice would be a reference to every group, \
              held through the call, beside the one made from `first`"
)]
fn hot_mut<'a, T>(
    stores: &'a mut Vec<Group<T>>,
    first: &FirstGroup,
    group: usize,
) -> &'a mut Store<T> {
    if group == 0 {
        // SAFETY: group 0 exists and `first` points at it: `first` is set after every push,
        // and only a push moves the vector's buffer; group 0 is never popped. `stores` is
        // borrowed mutably for `'a`, so no other reference to the group is in use meanwhile.
        unsafe { &mut (*first.0.as_ptr().cast::<Group<T>>()).0 }
    } else {
        &mut stores[group].0
    }
}

/// The mask bit of group `group`.
fn bit(group: usize) -> u64 {
    1 << group
}

impl<T> Groups<T> {
    const NEW: Self = Self {
        stores: Vec::new(),
        first: FirstGroup(NonNull::dangling()),
        hub: None,
        len: 0,
        capacity: 0,
        below_top: 0,
        not_full: 0,
        sizing: Sizing::new(),
        generation_floor: 0,
        release_due: false,
        watch: 0,
    };

    /// Adds groups until the arena has at least `wanted` slots: the first, if it has none, of
    /// `first` slots, the others sized as growth sizes them. `false`, with nothing added, if
    /// that is more than the arena holds (its groups, and fewer than `u32::MAX` slots): the
    /// sizes are counted before the first group is allocated.
    fn grow_to(&mut self, first: usize, wanted: usize) -> bool {
        self.assert_generations_left();
        let mut sizing = self.sizing.clone();
        let mut sizes = [0; Hub::GROUPS];
        let (from, mut capacity) = (self.stores.len(), self.capacity);
        let mut groups = from;
        if groups == 0 {
            sizes[0] = first;
            (groups, capacity) = (1, first);
        }
        while capacity < wanted {
            if groups == Hub::GROUPS {
                return false;
            }
            let size = sizing.grow(capacity);
            sizes[groups] = size;
            (groups, capacity) = (groups + 1, capacity + size);
        }
        if capacity >= u32::MAX as usize {
            return false;
        }
        self.sizing = sizing;
        for &size in &sizes[from..groups] {
            self.add(size);
        }
        true
    }

    /// Panics if a group added now could take no value: the arena's generations ran out (a
    /// released group's slot counted the last, which took more than 2^62 values). Called
    /// before anything changes, so that the arena stays as it was.
    #[track_caller]
    fn assert_generations_left(&self) {
        assert!(
            self.generation_floor < store::RETIRED_GENERATION,
            "growable arena is full: the generations of its slots have run out ({} values)",
            self.len
        );
    }

    /// Adds a group of `size` slots on top; returns its index. Its callers have checked that
    /// generations are left ([`assert_generations_left`](Self::assert_generations_left)), before
    /// they changed anything.
    fn add(&mut self, size: usize) -> usize {
        let group = self.stores.len();
        assert!(
            group < Hub::GROUPS,
            "growable arena is full: {} groups, {} values",
            Hub::GROUPS,
            self.len
        );
        assert!(
            self.capacity
                .checked_add(size)
                .is_some_and(|end| end < u32::MAX as usize),
            "growable arena is full: {} slots, {} values",
            self.capacity,
            self.len
        );
        if self.hub.is_none() {
            // The arena's first group (the hub is made with it, and kept): its generations start
            // where a new arena's do, and every later group's past them.
            self.generation_floor = self.generation_floor.max(key::first_generation());
        }
        let hub = &self.hub.get_or_insert_with(|| OwnerHub(Hub::new())).0;
        if group == 0 {
            // Room for the first group only: most arenas never grow a second, and `push` would
            // make room for four.
            self.stores.reserve_exact(1);
        }
        self.stores.push(Group(
            Store::with_hub(size, hub, group, self.generation_floor),
            [MaybeUninit::uninit(); GROUP_PAD],
        ));
        // The push may have moved the groups: only a push does (a pop never shrinks the
        // vector's buffer, and nothing else changes it while the groups are held).
        self.first = FirstGroup::of(&mut self.stores);
        self.below_top = self.capacity;
        self.capacity += size;
        self.not_full |= bit(group);
        // The groups so far are all under the new top one (none, for the first group).
        self.rewatch();
        group
    }

    /// Sets [`watch`](Self::watch) from the groups and the sizing.
    fn rewatch(&mut self) {
        self.watch = (self.below_top / 2).max(self.sizing.horizon() / 4);
    }

    /// The group of `key`'s slot, if it is one of ours: a key's slot is its slot's id.
    #[inline]
    fn group_of(&self, key: Key) -> Option<usize> {
        let group = key.index() >> GROUP_SHIFT;
        (group < self.stores.len()).then_some(group)
    }

    /// Bookkeeping for a value of group `group` about to leave (done first, so that a
    /// panicking `Drop` leaves the counts right).
    #[inline(always)]
    fn leaving(&mut self, group: usize) {
        self.len -= 1;
        self.not_full |= bit(group);
        if self.len > self.watch {
            // Over both marks: the top group stays, and the output is not a calm one.
            self.sizing.not_calm();
            return;
        }
        self.leaving_low(group);
    }

    /// [`leaving`](Self::leaving) with the values at or under [`watch`](Self::watch): the
    /// memory policy looks.
    #[inline]
    fn leaving_low(&mut self, group: usize) {
        let forgot = self.sizing.output(self.len);
        if forgot {
            self.rewatch();
        }
        // Whether the top group (of two or more) holds no value once this one has left: the
        // memory policy may release it now (it may have refused before this output). It never
        // releases it while the values fill more than half of the groups under it, and the
        // values only grow fewer from one output to the next: the top group is looked at
        // from the output that leaves at most that many on.
        if self.len * 2 <= self.below_top {
            if let [_, .., top] = self.stores.as_slice() {
                let top_len = if group + 1 == self.stores.len() { 1 } else { 0 };
                self.release_due |= top.len() == top_len;
            }
        }
    }

    /// The value of group `group` whose leaving ([`leaving`](Self::leaving)) made a release
    /// due leaves through `out` (dropped in place, or moved out); then the top group is
    /// released if the memory policy allows it, also when the value's `Drop` panics. Out of
    /// line, and the value's common way out written at each caller, not through one helper
    /// taking `out`: the compiler then kept that closure out of line (`unordered_ready_512k`,
    /// `keyed_churn_100k`, instructions).
    #[cold]
    #[inline(never)]
    fn leave_releasing<R>(
        &mut self,
        rounds: &mut Rounds,
        group: usize,
        out: impl FnOnce(&mut Store<T>) -> R,
    ) -> R {
        /// Releases what the memory policy allows when dropped.
        struct Release<'a, T> {
            groups: &'a mut Groups<T>,
            rounds: &'a mut Rounds,
        }
        impl<T> Drop for Release<'_, T> {
            fn drop(&mut self) {
                self.groups.release_empty(self.rounds);
            }
        }
        let release = Release {
            groups: self,
            rounds,
        };
        out(&mut trusted_mut(&mut release.groups.stores, group).0)
    }

    /// Releases the top group while it holds no value and the memory policy allows it, its
    /// slots taken out of `rounds`' queues first.
    #[cold]
    #[inline(never)]
    fn release_empty(&mut self, rounds: &mut Rounds) {
        self.release_due = false;
        while let [_, .., top] = self.stores.as_slice() {
            if !top.is_empty() {
                return;
            }
            let below = self.capacity - top.capacity();
            if !self.sizing.may_release(self.len, below) {
                return;
            }
            self.sizing.released(self.capacity);
            let group = self.stores.len() - 1;
            self.generation_floor = self.generation_floor.max(top.next_generation());
            // Its slots may still be queued (a value that left is skipped when met).
            rounds.retain(self, |id| split(id).0 != group);
            // Dropping the store frees its slots; its wake table lives on while stale wakers
            // do. Their wakes set this group's hub bit: ignored while no group has it, and
            // costing a look that finds nothing at the group that takes the bit later.
            self.stores.pop();
            self.not_full &= !bit(group);
            self.capacity = below;
            self.below_top = self.stores.last().map_or(0, |top| below - top.capacity());
            self.rewatch();
        }
    }

    /// Recounts the length and the free groups from the groups.
    fn recount(&mut self) {
        self.len = self.stores.iter().map(|store| store.len()).sum();
        self.not_full = 0;
        for (group, store) in self.stores.iter().enumerate() {
            if !store.is_full() {
                self.not_full |= bit(group);
            }
        }
    }
}

impl<T> Marks for Groups<T> {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        let (group, index) = split(id);
        // A slot id in the queues names a live group: a group's ids are taken out of them
        // before it is released.
        trusted_mut(&mut self.stores, group).mark_at(index)
    }

    #[inline(always)]
    fn rotating_mark(&mut self, id: u32) -> &mut Mark {
        let (group, index) = split(id);
        hot_mut(&mut self.stores, &self.first, group).mark_at(index)
    }
}

/// The storage of a [`GrowableArena`], as its poll loop reaches it.
impl<T> PollStorage<T> for Groups<T> {
    const MAY_WAIT_UNBOUND: bool = false;

    #[inline(always)]
    fn count(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn parent_word(&self) -> Option<&ParentWord> {
        self.hub.as_ref().map(|OwnerHub(hub)| hub.word())
    }

    fn register(&self, waker: &Waker) {
        if let Some(OwnerHub(hub)) = &self.hub {
            hub.register(waker);
        }
    }

    fn drain(&mut self, mode: Drain, round: u32, ready: &mut Queue, deferred: &mut Queue) -> bool {
        let Some(OwnerHub(hub)) = &self.hub else {
            return false;
        };
        // A group's bit is set when its ready set goes from empty to non-empty, so every group
        // whose bit is taken is collected now.
        let mut woken = hub.word().take(mode) & (bit(self.stores.len()) - 1);
        let mut got = false;
        while woken != 0 {
            let group = woken.trailing_zeros() as usize;
            woken &= woken - 1;
            // Each group files its woken slots into queues of its own, linked through its own
            // marks, which then go to the ends of the arena's.
            let (mut woken_ready, mut woken_deferred) = (Queue::EMPTY, Queue::EMPTY);
            got |= trusted_mut(&mut self.stores, group).drain::<true>(
                Drain::Arm,
                round,
                &mut woken_ready,
                &mut woken_deferred,
            );
            ready.append(self, &mut woken_ready);
            deferred.append(self, &mut woken_deferred);
        }
        got
    }

    #[inline(always)]
    fn poll_slot<const WATCH: bool, const UNLINK: bool, R>(
        &mut self,
        id: u32,
        take_wake: bool,
        round: u32,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        panicked: impl FnOnce(&ParentWord),
    ) -> Result<Option<Polled<R>>, unwind::Kept> {
        let (group, index) = split(id);
        let Self {
            stores,
            len,
            not_full,
            release_due,
            hub,
            ..
        } = self;
        trusted_mut(stores, group).poll_at::<WATCH, UNLINK, R>(
            index,
            take_wake,
            round,
            poll,
            || {
                // The group dropped the value that panicked. If it was the top group's last,
                // the group may go: `release_empty` looks (a panic is rare, and the look
                // costs the poll nothing).
                *len -= 1;
                *not_full |= bit(group);
                *release_due = true;
            },
            // The task's parent is the hub, not the group's table.
            |_| {
                if let Some(OwnerHub(hub)) = hub {
                    panicked(hub.word());
                }
            },
        )
    }

    #[inline(always)]
    fn is_woken(&self, id: u32, entry: u32) -> bool {
        trusted(&self.stores, split(id).0).entry_woken(entry)
    }

    #[inline(always)]
    fn holds_no_waker(&self, _id: u32, _entry: u32) -> bool {
        false
    }

    #[inline(always)]
    fn remove(&mut self, id: u32, rounds: &mut Rounds) {
        let (group, index) = split(id);
        self.leaving(group);
        if self.release_due {
            self.leave_releasing(rounds, group, |store| store.remove_done(index));
        } else {
            trusted_mut(&mut self.stores, group).remove_done(index);
        }
    }

    #[cfg(feature = "std")]
    #[inline(always)]
    fn after_unwind(&mut self, rounds: &mut Rounds) {
        if self.release_due {
            self.release_empty(rounds);
        }
    }
}

impl<T> GrowableArena<T> {
    /// An empty arena. Allocates nothing: the first insert allocates the first group.
    pub const fn new() -> Self {
        Self {
            groups: Groups::NEW,
            rounds: Rounds::NEW,
        }
    }

    /// An empty arena with at least `capacity` slots, allocated now; its first group holds
    /// `capacity` slots and is kept as long as the arena. `with_capacity(0)` is
    /// [`new`](Self::new).
    ///
    /// # Panics
    /// If `capacity` is more slots than a growable arena holds (its 63 groups, and fewer than
    /// `u32::MAX` slots), before anything is allocated.
    #[track_caller]
    pub fn with_capacity(capacity: usize) -> Self {
        let mut arena = Self::new();
        if capacity > 0 {
            assert!(
                arena.groups.grow_to(capacity.min(MAX_GROUP), capacity),
                "GrowableArena::with_capacity: {capacity} slots are more than a growable arena \
                 holds"
            );
        }
        arena
    }

    /// Adds groups, sized as growth sizes them, until at least `additional` slots are free, so
    /// that the next `additional` inserts add no group; does nothing if that many are free
    /// already. An arena with no group first gets one of `additional` slots (at least 32), kept
    /// as long as the arena, as [`with_capacity`](Self::with_capacity)'s is. The
    /// capacity reached is *retained*, as capacity grown back into is (see the contract's
    /// [*Memory*](crate::contract#memory)): outputs do not release it until the arena forgets.
    ///
    /// # Panics
    /// If that many slots would take more than the 63 groups can hold (or `u32::MAX` slots or
    /// more), before anything is allocated; or if a group is needed and the arena's
    /// generations have run out (see [`insert`](Self::insert)), also when slots are free.
    #[track_caller]
    pub fn reserve(&mut self, additional: usize) {
        let groups = &mut self.groups;
        let wanted = groups.len.saturating_add(additional);
        if wanted <= groups.capacity {
            return;
        }
        assert!(
            groups.grow_to(wanted.clamp(FIRST_GROUP, MAX_GROUP), wanted),
            "GrowableArena::reserve: {additional} more slots are more than a growable arena holds"
        );
        groups.sizing.reserved(groups.capacity);
        groups.rewatch();
    }

    /// [`with_capacity`](Self::with_capacity) with the slots' generations starting at
    /// `generation`, to reach the generations' end in tests.
    #[cfg(test)]
    pub(crate) fn starting_at_generation(capacity: usize, generation: u64) -> Self {
        let mut arena = Self::new();
        arena.groups.generation_floor = generation;
        arena.groups.add(capacity);
        arena
    }

    /// How many groups the arena has now.
    pub fn groups(&self) -> usize {
        self.groups.stores.len()
    }

    /// Stores `value` in a free slot of the smallest group that has one (adding a group if
    /// none has), queues it to be polled, and returns its key.
    ///
    /// # Panics
    /// If every one of the 63 groups is full (more values than memory can hold), or if every
    /// group is full and the arena's generations have run out (see [`Key`]: more than 2^62
    /// values through one slot of a group since released).
    // Always inlined: called once per value (guarded by `unordered_held_100k`, instructions).
    // Every case but a free slot in the first group marked as maybe having one is out of line,
    // in one call: the rest is small enough for a caller's closure around it to be inlined
    // (`futures_ordered_ready_512k`, instructions).
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Key {
        let groups = &mut self.groups;
        let value = if groups.not_full == 0 {
            value
        } else {
            let group = groups.not_full.trailing_zeros() as usize;
            match trusted_mut(&mut groups.stores, group).insert::<true>(value) {
                Ok((key, id, linked)) => {
                    groups.len += 1;
                    self.rounds.push_inserted(groups, id, linked);
                    return key;
                }
                // The group filled up with the last insert, or its last free slot was retired
                // when its value left (see `Key`).
                Err(value) => {
                    groups.not_full &= !bit(group);
                    value
                }
            }
        };
        self.insert_slow(value)
    }

    /// [`insert`](Self::insert) after the group first marked as maybe having a free slot had
    /// none, or when no group is marked: every group marked so that is full loses its mark
    /// first, then the insert goes into the first group still marked, or a group is added, at
    /// once (each retry would hold another copy of `value` on the stack).
    #[cold]
    #[inline(never)]
    fn insert_slow(&mut self, value: T) -> Key {
        let groups = &mut self.groups;
        let mut marked = groups.not_full;
        while marked != 0 {
            let group = marked.trailing_zeros() as usize;
            marked &= marked - 1;
            if trusted(&groups.stores, group).is_full() {
                groups.not_full &= !bit(group);
            }
        }
        if groups.not_full == 0 {
            groups.assert_generations_left();
            let size = groups.sizing.grow(groups.capacity);
            groups.add(size);
        }
        self.insert(value)
    }

    /// The group of `key`'s slot, if it is one of ours.
    #[cfg(test)]
    pub(crate) fn group_of(&self, key: Key) -> Option<usize> {
        self.groups.group_of(key)
    }

    /// The group holding `key`'s value and its slot there, if the value is still in the arena.
    #[inline]
    fn live_slot(&self, key: Key) -> Option<(usize, usize)> {
        let group = self.groups.group_of(key)?;
        Some((group, trusted(&self.groups.stores, group).live(key)?))
    }

    /// An owned waker of `key`'s value, if it is still in the arena.
    pub fn waker(&self, key: Key) -> Option<Waker> {
        self.groups.stores[self.groups.group_of(key)?].waker(key)
    }

    /// Moves `key`'s value out and frees its slot.
    pub fn take(&mut self, key: Key) -> Option<T>
    where
        T: Unpin,
    {
        let (group, index) = self.live_slot(key)?;
        let groups = &mut self.groups;
        groups.leaving(group);
        if groups.release_due {
            return Some(
                groups.leave_releasing(&mut self.rounds, group, |store| store.take_at(index)),
            );
        }
        Some(trusted_mut(&mut groups.stores, group).take_at(index))
    }
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
    type PollStorage = Groups<T>;

    #[inline(always)]
    fn engine(&mut self, _: Token) -> (&mut Rounds, &mut Groups<T>) {
        (&mut self.rounds, &mut self.groups)
    }

    /// [`GrowableArena::insert`]: never gives the value back.
    #[inline]
    fn insert(&mut self, value: T) -> Result<Key, T> {
        Ok(GrowableArena::insert(self, value))
    }

    /// Never: a growable arena adds a group when every group is full.
    #[inline]
    fn is_full(&self) -> bool {
        false
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some((group, index)) = self.live_slot(key) else {
            return false;
        };
        let groups = &mut self.groups;
        groups.leaving(group);
        if groups.release_due {
            groups.leave_releasing(&mut self.rounds, group, |store| store.remove_at(index));
        } else {
            trusted_mut(&mut groups.stores, group).remove_at(index);
        }
        true
    }

    fn contains_key(&self, key: Key) -> bool {
        self.live_slot(key).is_some()
    }

    fn get(&self, key: Key) -> Option<&T> {
        self.groups.stores[self.groups.group_of(key)?].get(key)
    }

    fn get_pin_mut(&mut self, key: Key) -> Option<Pin<&mut T>> {
        let group = self.groups.group_of(key)?;
        self.groups.stores[group].get_pin_mut(key)
    }

    fn len(&self) -> usize {
        self.groups.len
    }

    /// How many slots the arena has allocated now: the sum of its groups' capacities.
    fn capacity(&self) -> usize {
        self.groups.capacity
    }

    /// Drops every value in place, then releases empty groups as after an output.
    fn clear(&mut self) {
        // As an `Arena`'s: the queues forget every slot first.
        self.rounds.forget_all(&mut self.groups);
        let cleared = unwind::each_despite_panics(&mut self.groups.stores, |store| store.clear());
        self.groups.recount();
        self.groups.release_due = true;
        self.groups.release_empty(&mut self.rounds);
        if let Err(panic) = cleared {
            unwind::resume(panic);
        }
    }

    /// The values with their keys, group by group.
    fn iter(&self) -> Iter<'_, T> {
        Iter {
            groups: self.groups.stores.iter(),
            current: None,
            left: self.len(),
        }
    }

    /// The values, pinned, with their keys, group by group.
    fn iter_pin_mut(&mut self) -> IterPinMut<'_, T> {
        IterPinMut {
            left: self.groups.len,
            groups: self.groups.stores.iter_mut(),
            current: None,
        }
    }

    /// Moves the values out, group by group, for `T: Unpin`.
    fn into_values(self) -> IntoValues<T>
    where
        T: Unpin,
    {
        let Groups {
            stores, hub, len, ..
        } = self.groups;
        IntoValues {
            groups: stores.into_iter(),
            current: None,
            left: len,
            _hub: hub,
        }
    }
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
            .field("capacity", &self.capacity())
            .field("groups", &self.groups())
            .finish_non_exhaustive()
    }
}

crate::storage::store::counted_iterator!(Iter, IterPinMut);

/// The values of a [`GrowableArena`] with their keys: [`GrowableArena::iter`].
pub struct Iter<'a, T> {
    groups: core::slice::Iter<'a, Group<T>>,
    current: Option<store::Iter<'a, T>>,
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
    groups: core::slice::IterMut<'a, Group<T>>,
    current: Option<store::IterPinMut<'a, T>>,
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
    groups: alloc::vec::IntoIter<Group<T>>,
    current: Option<store::IntoValues<T>>,
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
            self.current = Some(self.groups.next()?.0.into_values());
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
