//! The wake table: the one allocation shared between an arena and its wakers.
//!
//! Layout, in a single block: a [`Header`] (reference count, parent link, sizes), then the
//! entries in [`Pair`]s (a pair's own index, and for each of its two entries how many owned
//! wakers point at it: the data pointer of entry `e`'s wakers is the address of the pair's
//! `e % 2`-th half-word), then the words of the ready bitset ([`ready_set`]),
//! one bit per entry.
//!
//! An entry is the identity of one stay of one value in one slot: a slot's values take its two
//! entries in turn, and an entry is bound to a value again only once no waker of the value it
//! was bound to before is alive (see [`implementation`](crate::implementation)). So a waker that
//! outlives its value wakes an entry its slot's value does not have, and polls nothing.
//!
//! The block is freed when the last of its references goes, so a waker may outlive the arena:
//! the arena holds one, an uncounted waker one, and a retired entry with owned wakers alive one
//! for all of them, given up by the drop of its last (see [`WakeTable::retire`]). A counted
//! waker's clone and drop change its entry's state alone, one atomic operation each. The
//! arena's drop retires every entry whose wakers are still alive. Wakers lent to a value's
//! `poll` are borrowed (`ManuallyDrop`), so polling costs no reference counting.

use core::alloc::Layout;
use core::mem::ManuallyDrop;
use core::ptr::{self, NonNull};
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::sync::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, alloc, dealloc};
use crate::wake::atomic_waker::AtomicWaker;
use crate::wake::hub::Hub;
use crate::wake::ready_set::{self, Drain, ParentWord, ReadyLayout, Woke};

/// Who is told when the ready set goes from empty to non-empty.
pub(crate) enum Parent {
    /// The task polling the arena.
    Task(AtomicWaker),
    /// The hub of a growable arena's groups; `bit` is this group's bit in it.
    Hub { hub: Hub, bit: u32 },
}

impl Parent {
    fn notify(&self) {
        match self {
            Parent::Task(waker) => waker.wake(),
            Parent::Hub { hub, bit } => hub.notify(*bit),
        }
    }
}

#[repr(C)]
pub(crate) struct Header {
    refs: Refs,
    parent: Parent,
    ready: ReadyLayout,
    entries: usize,
    words_offset: usize,
    block: Layout,
}

/// The table's references, on a cache line of their own: uncounted wakers and retired entries'
/// last wakers, on any thread, write the count, and every wake reads the header's other fields.
#[repr(C)]
struct Refs {
    count: AtomicUsize,
    /// Whether a counted waker was ever made: set by the clone that starts an entry's count
    /// from zero, so that the arena's drop, which retires every entry with wakers alive, skips
    /// the look at each entry when none was (`held_10k`, instructions). Such a clone is made
    /// through a borrow of the arena: from a waker lent to a value's poll, or by
    /// `Storage::waker`, on the owner's thread or on any thread that shares `&arena` (scoped
    /// threads, an `Arc`); the borrow ends before the arena can be dropped, and ending it across
    /// threads synchronises with the drop, so the drop's plain load sees the flag.
    counted: AtomicBool,
    /// Keeps what follows at least 128 bytes after the count, so the two never share a cache
    /// line (nor x86's adjacent-line prefetch pair). Padding rather than `align(128)`: an
    /// over-aligned block takes the allocator's slower aligned path, which small arenas would
    /// pay at creation.
    _pad: [u8; 127],
}

/// Entries `2 i` and `2 i + 1`: eight bytes that hold what their wakers need. A waker of entry
/// `e` points at byte `4 (e % 2)` of pair `e / 2`, so its data pointer names both the pair (its
/// address rounded down to a multiple of 8, as every pair's is) and the entry in it.
#[repr(C, align(8))]
pub(crate) struct Pair {
    /// This pair's index in the table (immutable): its entries' bits are `2 index` and
    /// `2 index + 1` in the ready set.
    index: u32,
    /// The entries' states, entry `2 i`'s in the low half-word and `2 i + 1`'s in the high:
    /// `2 * owned wakers + RETIRED` each. How many owned wakers point at the entry, and whether
    /// the arena has unbound it and waits for them to go before binding it again.
    state: AtomicU32,
}

/// The flag of an entry's state that the arena sets when it unbinds an entry that still has
/// owned wakers.
pub(crate) const RETIRED: u32 = 1;

/// One owned waker in an entry's state.
const ONE_WAKER: u32 = 2;

/// An entry's state, in its half of the pair's word.
const HALF: u32 = 0xFFFF;

/// How many owned wakers of one entry are counted: past this, a clone makes an uncounted
/// waker ([`UNCOUNTED`]), so the count never reaches the other entry's half-word. Wakers in
/// flight past the limit at once, one per thread, fit in the half's last bit. Under Miri a lower
/// limit, the same code: the test that clones past it makes 16,484 wakers otherwise (a minute of
/// Miri's time).
pub(crate) const MAX_COUNTED: u32 = if cfg!(miri) { 1 << 6 } else { 1 << 14 };

/// The state of one entry: its half of its pair's word.
#[derive(Clone, Copy)]
pub(crate) struct EntryState<'a> {
    word: &'a AtomicU32,
    /// 0 for entry `2 i`, 16 for entry `2 i + 1`.
    shift: u32,
}

impl EntryState<'_> {
    /// The entry's state (`2 * owned wakers + RETIRED`).
    #[inline(always)]
    pub(crate) fn load(self, order: Ordering) -> u32 {
        (self.word.load(order) >> self.shift) & HALF
    }

    /// Sets `RETIRED`; returns the state before. Only [`WakeTable::retire`], which gives the
    /// entry its reference to the table.
    #[inline]
    fn retire(self, order: Ordering) -> u32 {
        (self.word.fetch_or(RETIRED << self.shift, order) >> self.shift) & HALF
    }

    /// Clears `RETIRED`, leaving the count as it is; returns the state before.
    #[inline]
    fn unretire(self, order: Ordering) -> u32 {
        (self.word.fetch_and(!(RETIRED << self.shift), order) >> self.shift) & HALF
    }
}

/// Entries start right after the header (its size is a multiple of its alignment, which is at
/// least `Pair`'s): so every pair's address is a multiple of 8.
const ENTRIES_OFFSET: usize = size_of::<Header>();
const _: () = assert!(align_of::<Header>() >= align_of::<Pair>());
const _: () = assert!(align_of::<Pair>() == 8);
// Eight bytes, two entries' worth; loom's atomics are larger, and its pairs too.
#[cfg(not(pinfold_loom))]
const _: () = assert!(size_of::<Pair>() == 8);

/// More references than this means wakers are being leaked in a loop: abort as `Arc` does.
const MAX_REFS: usize = isize::MAX as usize;

/// An owning reference to a wake table (the arena's).
pub(crate) struct WakeTable {
    header: NonNull<Header>,
    /// The owner's copies of the header's immutable sizes, so that its hot paths read no
    /// header field: the number of entries, and the ready words' start (with the block's
    /// provenance), count and top word. The counts are `u32` (entries are fewer than
    /// `u32::MAX`, and words and owner words fewer still) to keep the table, and so every set
    /// and join that holds one, small to move: a join's state is moved into its caller's
    /// future and again into the executor, by a `memcpy` call once it passes 128 bytes.
    words: NonNull<AtomicU64>,
    entries: u32,
    words_len: u32,
    top: u32,
    /// How many owner words there are at `owner`.
    owner_len: u32,
    /// The owner's own words at the end of the block (see
    /// [`with_owner_words`](WakeTable::with_owner_words)).
    owner: NonNull<u64>,
}

// SAFETY: everything in the table reachable through `&Header` is atomic or synchronised by
// `AtomicWaker`; entries and sizes are immutable after construction.
unsafe impl Send for WakeTable {}
// SAFETY: as for `Send`.
unsafe impl Sync for WakeTable {}

impl WakeTable {
    /// Allocates a table of `entries` entries (one allocation). `entries` is below `u32::MAX`.
    pub(crate) fn new(entries: usize, parent: Parent) -> Self {
        Self::with_owner_words(entries, parent, 0, 0)
    }

    /// [`new`](WakeTable::new), with `owner_words` more words at the end of the block, each
    /// `init`: the owner's alone (no waker reads them), for bookkeeping that needs no
    /// allocation of its own ([`owner_words`](WakeTable::owner_words)).
    pub(crate) fn with_owner_words(
        entries: usize,
        parent: Parent,
        owner_words: usize,
        init: u64,
    ) -> Self {
        debug_assert!(entries < u32::MAX as usize);
        let ready = ReadyLayout::new(entries);
        let (block, words_offset) = Layout::new::<Header>()
            .extend(Layout::array::<Pair>(entries.div_ceil(2)).expect("arena capacity overflows"))
            .and_then(|(block, _)| {
                block.extend(Layout::array::<AtomicU64>(ready.words()).expect("overflow"))
            })
            .expect("arena capacity overflows");
        let (block, owner_offset) = block
            .extend(Layout::array::<u64>(owner_words).expect("arena capacity overflows"))
            .expect("arena capacity overflows");
        let block = block.pad_to_align();
        // SAFETY: `block` has a non-zero size (it holds at least the header).
        let base = unsafe { alloc(block) };
        let Some(base) = NonNull::new(base) else {
            alloc::alloc::handle_alloc_error(block)
        };
        let header = base.cast::<Header>();
        // SAFETY: `base` is a fresh block laid out above: header first, then `entries` entries
        // at ENTRIES_OFFSET, then `ready.words()` words at `words_offset`, each in bounds and
        // aligned, and written once here before any reference to them exists.
        unsafe {
            header.write(Header {
                refs: Refs {
                    count: AtomicUsize::new(1),
                    counted: AtomicBool::new(false),
                    _pad: [0; 127],
                },
                parent,
                ready,
                entries,
                words_offset,
                block,
            });
        }
        for index in 0..entries.div_ceil(2) {
            // SAFETY: pair `index` is in bounds of the block (see the layout above).
            let pair = unsafe { base.byte_add(ENTRIES_OFFSET).cast::<Pair>().add(index) };
            // SAFETY: in bounds, aligned and not yet initialised or referenced.
            unsafe {
                pair.write(Pair {
                    index: index as u32,
                    state: AtomicU32::new(0),
                })
            };
        }
        for word in 0..ready.words() {
            // SAFETY: word `word` is in bounds of the block (see the layout above).
            let word = unsafe { base.byte_add(words_offset).cast::<AtomicU64>().add(word) };
            // SAFETY: in bounds, aligned and not yet initialised or referenced.
            unsafe { word.write(AtomicU64::new(0)) };
        }
        // SAFETY: the owner's words start at `owner_offset` inside the block (see the layout
        // above); plain data, written once here, before any reference to them exists.
        let owner = unsafe { base.byte_add(owner_offset).cast::<u64>() };
        for word in 0..owner_words {
            // SAFETY: word `word` is in bounds of the block and aligned.
            unsafe { owner.add(word).write(init) };
        }
        // SAFETY: the words start at `words_offset` inside the block (see the layout above).
        let words = unsafe { base.byte_add(words_offset).cast::<AtomicU64>() };
        // `entries` is below `u32::MAX`, so are the counts of words derived from it; the owner's
        // words are as many as the entries at most (the arenas' bookkeeping).
        let count = |n: usize| u32::try_from(n).expect("a wake table's counts fit in u32");
        Self {
            header,
            words,
            entries: count(entries),
            words_len: count(ready.words()),
            top: count(ready.top_word()),
            owner_len: count(owner_words),
            owner,
        }
    }

    /// The ready set's words and layout, with the owner's words: disjoint parts of the block,
    /// so that the owner can drain the one into the other.
    #[inline]
    pub(crate) fn ready_and_owner_words(&mut self) -> (&[AtomicU64], &ReadyLayout, &mut [u64]) {
        // SAFETY: as in `words`, `header` and `owner_words`: the three regions do not overlap.
        unsafe {
            (
                core::slice::from_raw_parts(self.words.as_ptr(), self.words_len as usize),
                &(*self.header.as_ptr()).ready,
                core::slice::from_raw_parts_mut(self.owner.as_ptr(), self.owner_len as usize),
            )
        }
    }

    /// The owner's words (see [`with_owner_words`](WakeTable::with_owner_words)).
    #[inline]
    pub(crate) fn owner_words(&mut self) -> &mut [u64] {
        // SAFETY: `owner` points at `owner_len` initialised words of the live block, with its
        // provenance; no waker ever reads or writes them, and `&mut self` (the one owner) makes
        // this the only reference to them.
        unsafe { core::slice::from_raw_parts_mut(self.owner.as_ptr(), self.owner_len as usize) }
    }

    #[inline]
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: we hold a reference, so the header is alive and initialised.
        unsafe { self.header.as_ref() }
    }

    /// A waker for entry `index` that borrows the arena's reference: no reference counting.
    /// Cloning it makes an owned waker.
    #[inline]
    pub(crate) fn borrowed_waker(&self, index: usize) -> ManuallyDrop<Waker> {
        let entry = self.entry(index);
        // SAFETY: `entry` checked the bound.
        unsafe { Self::waker_of(entry) }
    }

    /// [`borrowed_waker`](Self::borrowed_waker) without the bound check, for the entry of a
    /// value being polled (guarded by `ready_512k`, instructions).
    ///
    /// # Safety
    /// `index` is below the table's number of entries.
    #[inline(always)]
    pub(crate) unsafe fn borrowed_waker_unchecked(&self, index: usize) -> ManuallyDrop<Waker> {
        // SAFETY: the caller's bound.
        unsafe { Self::waker_of(self.entry_unchecked(index)) }
    }

    /// The borrowed waker of the entry at `entry` (see [`Pair`]).
    ///
    /// # Safety
    /// `entry` points at an entry of this table.
    #[inline(always)]
    unsafe fn waker_of(entry: *const u32) -> ManuallyDrop<Waker> {
        let raw = RawWaker::new(entry.cast(), &VTABLE);
        // SAFETY: the vtable's contract holds for an entry of a live table (see the functions
        // below), which the caller's entry is; `ManuallyDrop` keeps `drop` from releasing the
        // arena's own reference.
        ManuallyDrop::new(unsafe { Waker::from_raw(raw) })
    }

    /// The ready bitset's words.
    #[inline]
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: we hold a reference, so the table is alive; `self.words` points at its
        // `words_len` initialised words, with the whole block's provenance.
        unsafe { core::slice::from_raw_parts(self.words.as_ptr(), self.words_len as usize) }
    }

    /// The top word of the ready set: the parent's word (see [`ParentWord`]).
    #[inline(always)]
    pub(crate) fn parent_word(&self) -> &ParentWord {
        // SAFETY: `top` is below `words_len`, both fixed at construction, so the word is one of
        // the table's initialised words; we hold a reference, so the table is alive. Read on
        // every call of a busy merge: no bounds check.
        ParentWord::of(unsafe { &*self.words.as_ptr().add(self.top as usize) })
    }

    /// Registers `waker` with the parent, if it is a task of the owner's own (a hub's owner
    /// registers with the hub).
    #[inline]
    pub(crate) fn register(&self, waker: &Waker) {
        if let Parent::Task(parent) = self.header().parent() {
            parent.register(waker);
        }
    }

    /// An owned waker for entry `index`.
    pub(crate) fn waker(&self, index: usize) -> Waker {
        (*self.borrowed_waker(index)).clone()
    }

    /// The state of entry `index` (owned wakers, [`RETIRED`]).
    #[inline]
    pub(crate) fn entry_state(&self, index: usize) -> EntryState<'_> {
        assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: checked just above.
        unsafe { self.entry_state_unchecked(index) }
    }

    /// [`entry_state`](Self::entry_state) without the bound check, for the entry bound to a
    /// value that leaves (guarded by `ready_512k`, instructions).
    ///
    /// # Safety
    /// `index` is below the table's number of entries.
    #[inline(always)]
    unsafe fn entry_state_unchecked(&self, index: usize) -> EntryState<'_> {
        // SAFETY: the pair is in the block (the caller's bound) and initialised; we hold a
        // reference, so it lives as long as `self`.
        let pair = unsafe { &*self.pair_unchecked(index / 2) };
        EntryState {
            word: &pair.state,
            shift: 16 * (index % 2) as u32,
        }
    }

    /// Retires entry `index`, bound to a value that is leaving, unless no owned waker of it is
    /// alive: `true` if none is (the entry is free, its state zero). A retired entry with
    /// wakers holds one reference to the table for all of them: taken here before the flag is
    /// set, since its last waker gives it up as soon as its drop sees the flag, and given back
    /// here if the flag found no waker.
    ///
    /// The table's references and an entry's state keep one rule, which each atomic change of
    /// the state follows by the value it read: an entry holds a reference exactly while it is
    /// `RETIRED` with a count above zero. Setting the flag on a count above zero takes one
    /// (here, and in the arena's drop), clearing it on a count above zero gives one up
    /// ([`share_retired`](Self::share_retired)), and so does the drop that takes a retired
    /// count to zero (`drop_waker`); a clone never starts a count from zero on a retired entry
    /// (a value's poll lends a waker of a bound entry, never a retired one).
    #[inline]
    pub(crate) fn retire(&self, index: usize) -> bool {
        let state = self.entry_state(index);
        // SAFETY: the arena's reference keeps the table alive; this one is the entry's.
        unsafe { add_ref(self.header.as_ptr()) };
        // AcqRel: Acquire as in `unbind`, if the last waker went meanwhile;
        // Release so that a waker dropped later sees RETIRED after our unbinding.
        let free = state.retire(Ordering::AcqRel) == 0;
        if free {
            // Relaxed: no waker is left to see it.
            state.unretire(Ordering::Relaxed);
            // SAFETY: the reference taken above, given back; the arena's keeps the table alive.
            unsafe { release(self.header.as_ptr()) };
        }
        free
    }

    /// Unbinds entry `index` from its value, which is leaving. If no owned waker of it is
    /// alive, no wake can come through it any more: its ready bit is cleared, and it is free
    /// for its slot's value after next. Otherwise it is *retired* until its wakers are all gone
    /// ([`retire`](Self::retire)). Always inlined: it is part of every output of a set.
    #[inline(always)]
    pub(crate) fn unbind(&self, index: usize) {
        debug_assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: `index` is one of the table's entries: the arena unbinds only the entry bound
        // to a value of one of its slots, as for `pair_is_clear`.
        let state = unsafe { self.entry_state_unchecked(index) };
        // Acquire pairs with the Release decrement in the wakers' drop: their bits in the ready
        // set happen before we look at (and clear) the entry's bit.
        // Most often neither of the pair's entries has an owned waker: one load says so.
        let free = self.pair_is_clear(index, Ordering::Acquire)
            || state.load(Ordering::Acquire) == 0
            || self.retire(index);
        if free {
            // SAFETY: the entry is one of the table's (above), and the ready set has a bit for
            // each.
            unsafe { ready_set::clear_unchecked(self.words(), index) };
        }
    }

    /// Drains the ready set in `mode`, calling `file` with each woken entry (see
    /// [`ready_set::drain`]).
    ///
    /// # Safety
    /// Every bit of the set's summary words but `BUSY` was set by a wake's climb: nothing but
    /// the table's wakers and its owner's calls of [`ready_set`] has written its words (the
    /// owner sets `BUSY` and clears bits only; it never raises a bit of the top word itself).
    #[inline(always)]
    pub(crate) unsafe fn drain(&self, mode: Drain, file: impl FnMut(usize)) {
        // SAFETY: the table's words and its layout, and the caller's promise.
        unsafe { ready_set::drain(self.words(), self.header().ready_layout(), mode, file) }
    }

    /// Makes entry `index` ready to bind if no waker of it is left: `true` if so, its state
    /// and, if it was retired, its ready bit cleared (its last waker gave the entry's
    /// reference up); `false` if a waker of it is alive.
    pub(crate) fn reclaim(&self, index: usize) -> bool {
        let state = self.entry_state(index);
        // Acquire: as in `unbind`.
        match state.load(Ordering::Acquire) {
            0 => true,
            RETIRED => {
                // Relaxed: no waker is left to see it.
                state.unretire(Ordering::Relaxed);
                ready_set::clear(self.words(), index);
                true
            }
            _ => false,
        }
    }

    /// Clears the flag of retired entry `index`, whose wakers may still be alive, to bind it
    /// to a new value that shares it with them: the entry's reference goes back unless its
    /// last waker went meanwhile and gave it up.
    pub(crate) fn share_retired(&self, index: usize) {
        // Relaxed: the entry's wakers may wake the new value from now on; that is all.
        let before = self.entry_state(index).unretire(Ordering::Relaxed);
        // The insert found a waker alive, so the entry was retired when its value left: the
        // count alone says whether its reference is still held.
        debug_assert!(before & RETIRED != 0, "only a retired entry is shared");
        if before > RETIRED {
            // SAFETY: the entry's reference, given up once (the state said it held one); the
            // arena's keeps the table alive.
            unsafe { release(self.header.as_ptr()) };
        }
    }

    /// Retires every entry with owned wakers still alive, as the arena goes: from now on they
    /// keep the table alive. An entry at zero stays as it is: no clone can start its count
    /// again (a counted clone is made from a counted waker, or through a borrow of the arena,
    /// which its drop has outlived).
    fn retire_all(&self) {
        // Relaxed: the flag was set through a borrow of the arena, on this thread or on one
        // that synchronised with it when the borrow ended (see `Refs::counted`).
        if !self.header().refs.counted.load(Ordering::Relaxed) {
            return;
        }
        let pairs = (self.entries as usize).div_ceil(2);
        // Four pairs a turn, one test for the four: most pairs of a table that goes hold no
        // waker.
        let state = |pair: usize| {
            // SAFETY: every call below passes a pair below `pairs`, the table's number of pairs.
            let word = unsafe { &(*self.pair_unchecked(pair)).state };
            // Acquire: a waker whose drop took the count to zero is done with the table before
            // the arena frees it.
            word.load(Ordering::Acquire)
        };
        let mut pair = 0;
        while pair + 4 <= pairs {
            let states = [
                state(pair),
                state(pair + 1),
                state(pair + 2),
                state(pair + 3),
            ];
            if states[0] | states[1] | states[2] | states[3] != 0 {
                for (offset, both) in states.into_iter().enumerate() {
                    if both != 0 {
                        self.retire_pair(pair + offset, both);
                    }
                }
            }
            pair += 4;
        }
        for pair in pair..pairs {
            let both = state(pair);
            if both != 0 {
                self.retire_pair(pair, both);
            }
        }
    }

    /// [`retire_all`](Self::retire_all) for pair `pair`, whose state word read `both`.
    #[cold]
    #[inline(never)]
    fn retire_pair(&self, pair: usize, both: u32) {
        for half in 0..2 {
            let state = (both >> (16 * half)) & HALF;
            // Retired already (it holds a reference if a waker is left), or no waker.
            if state & RETIRED != 0 || state == 0 {
                continue;
            }
            let _ = self.retire(2 * pair + half);
        }
    }

    /// The state words of entries `index` and its pair's other (the same word): whether no
    /// owned waker of either is alive and neither is retired, read with `order`.
    #[inline(always)]
    pub(crate) fn pair_is_clear(&self, index: usize, order: Ordering) -> bool {
        debug_assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: `index` is one of the table's entries (the arena asks only of the entries of
        // its slots), so its pair is in the block, initialised, and alive while `self` is.
        unsafe { (*self.pair_unchecked(index / 2)).state.load(order) == 0 }
    }

    #[inline]
    fn entry(&self, index: usize) -> *const u32 {
        assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: checked just above.
        unsafe { self.entry_unchecked(index) }
    }

    /// Entry `index`: the address its wakers point at, the `index % 2`-th half of its pair.
    ///
    /// # Safety
    /// `index` is below the table's number of entries.
    #[inline(always)]
    unsafe fn entry_unchecked(&self, index: usize) -> *const u32 {
        debug_assert!(index < self.entries as usize, "entry index out of bounds");
        if size_of::<Pair>() == 2 * size_of::<u32>() {
            // SAFETY: `index` is below the capacity (the caller's bound), so its pair, whose
            // two 4-byte halves are the entries, is inside the block: byte `4 index` past the
            // first pair is byte `4 (index % 2)` of pair `index / 2`.
            unsafe { self.pairs().cast::<u32>().add(index) }
        } else {
            // (loom's larger pairs) SAFETY: as above: byte `4 (index % 2)` of the pair, inside
            // it as a pair is at least 8 bytes.
            unsafe {
                self.pair_unchecked(index / 2)
                    .cast::<u32>()
                    .byte_add(4 * (index % 2))
            }
        }
    }

    /// Pair `pair`.
    ///
    /// # Safety
    /// `pair` is below the table's number of pairs (its entries' halved, rounded up).
    #[inline(always)]
    unsafe fn pair_unchecked(&self, pair: usize) -> *const Pair {
        // SAFETY: as the caller promises, inside the block.
        unsafe { self.pairs().add(pair) }
    }

    /// The first pair, with the whole block's provenance.
    #[inline(always)]
    fn pairs(&self) -> *const Pair {
        // SAFETY: the pairs start `ENTRIES_OFFSET` bytes into the live block (see `new`).
        unsafe {
            self.header
                .as_ptr()
                .cast_const()
                .byte_add(ENTRIES_OFFSET)
                .cast::<Pair>()
        }
    }
}

impl Drop for WakeTable {
    fn drop(&mut self) {
        self.retire_all();
        // Wakes that outlive the arena must not reach the task that polled it.
        if let Parent::Task(parent) = self.header().parent() {
            let waker = parent.take();
            // Give our reference up even if dropping the task's waker panics.
            let _release = ReleaseOnDrop(self.header.as_ptr());
            drop(waker);
        } else {
            // SAFETY: this is the arena's reference, given up once.
            unsafe { release(self.header.as_ptr()) }
        }
    }
}

/// Gives up one reference to the table at `.0` when dropped, also while unwinding.
struct ReleaseOnDrop(*const Header);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        // SAFETY: whoever made this guard owned a reference to a live table and handed it to
        // the guard; it is given up once, here.
        unsafe { release(self.0) }
    }
}

impl Header {
    #[inline]
    pub(crate) fn parent(&self) -> &Parent {
        &self.parent
    }

    #[inline]
    pub(crate) fn ready_layout(&self) -> &ReadyLayout {
        &self.ready
    }
}

/// The ready bitset's words of the table at `header`.
///
/// # Safety
/// `header` points to a live table, with the provenance of its whole block (it comes from the
/// allocation or an entry pointer, never from a `&Header`), and the table outlives `'a`.
#[inline]
unsafe fn words_of<'a>(header: *const Header) -> &'a [AtomicU64] {
    // SAFETY: the header is alive and initialised (caller); its sizes are immutable.
    let (offset, len) = unsafe { ((*header).words_offset, (*header).ready.words()) };
    // SAFETY: the words follow the header at `words_offset` in the same block, `len` of them,
    // initialised in `WakeTable::new`; the pointer carries the block's provenance.
    unsafe { core::slice::from_raw_parts(header.byte_add(offset).cast::<AtomicU64>(), len) }
}

/// The poll watch: while an owner polls a value, the entry of the waker it lent is kept in a
/// thread-local cell, and a wake of that entry on the same thread during the poll (a value that
/// wakes itself, the common wake of a busy value) only sets a flag there, which the owner reads
/// as the poll ends and answers by queueing the value for the next round. No atomic operation,
/// no ready bit, no drain. A wake from another thread, or of another entry, or once the poll
/// is over, goes to the ready set as before. An owner restores the cell's earlier content after
/// its poll, so an arena polled inside another's value's poll (nested sets) keeps the outer
/// watch whole. Without `std` there is no thread-local cell, and every wake goes to the ready
/// set.
pub(crate) mod watch {
    /// The low bit of the cell: the entry watched was woken. An entry's address is a multiple
    /// of 4 (see [`Pair`](super::Pair)).
    #[cfg(feature = "std")]
    const WOKEN: usize = 1;

    #[cfg(all(feature = "std", not(all(pinfold_loom, feature = "loom"))))]
    std::thread_local! {
        /// The address of the entry whose value this thread's owner is polling (0 for none),
        /// with [`WOKEN`] once it was woken during the poll.
        static POLLING: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
    }

    // Loom runs its threads on one thread of the system: its own thread-locals keep them apart.
    #[cfg(all(feature = "std", pinfold_loom, feature = "loom"))]
    loom::thread_local! {
        static POLLING: core::cell::Cell<usize> = core::cell::Cell::new(0);
    }

    /// A poll being watched: what the cell held before it, restored at [`end`](Self::end).
    #[cfg(feature = "std")]
    #[must_use]
    pub(crate) struct Watch {
        outer: usize,
        entry: usize,
    }

    /// Starts watching the poll of the value lent `waker` (one of a wake table's).
    #[cfg(feature = "std")]
    #[inline(always)]
    pub(crate) fn start(waker: &core::task::Waker) -> Watch {
        let entry = waker.data().addr();
        let outer = POLLING.with(|cell| cell.replace(entry));
        Watch { outer, entry }
    }

    #[cfg(feature = "std")]
    impl Watch {
        /// Ends the watch: whether the value woke itself during the poll. Also when the poll
        /// unwound, so that the cell is the outer owner's again.
        #[inline(always)]
        pub(crate) fn end(self) -> bool {
            POLLING.with(|cell| cell.replace(self.outer)) == self.entry | WOKEN
        }
    }

    /// A wake of the entry at `data`: `true` if it is the one being polled on this thread,
    /// now flagged woken. A second wake in the same poll finds the flag and goes to the ready
    /// set, as a wake from another thread does: a wake not watched tests one word.
    #[inline(always)]
    pub(crate) fn woke(data: *const ()) -> bool {
        #[cfg(feature = "std")]
        {
            POLLING.with(|cell| {
                let watched = cell.get() == data.addr();
                if watched {
                    cell.set(data.addr() | WOKEN);
                }
                watched
            })
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = data;
            false
        }
    }
}

/// Sets the ready bit of entry `entry` of the table at `header`, and notifies the parent if
/// the set was empty.
///
/// # Safety
/// As for [`words_of`]; and `entry` is one of the table's entries.
unsafe fn wake_entry(header: *const Header, entry: usize) {
    // SAFETY: as the caller promises.
    let words = unsafe { words_of(header) };
    // SAFETY: the header is alive; this reference covers the header's bytes only.
    let header = unsafe { &*header };
    // SAFETY: the words are the table's, laid out by its layout, and `entry` is one of its
    // entries (the caller's promise), each of which has a bit.
    if unsafe { ready_set::wake(words, &header.ready, entry) } == Woke::Raised {
        header.parent.notify();
    }
}

/// Gives up one reference, freeing the block with the last.
///
/// # Safety
/// `header` points to a live table and the caller owns one of its references.
unsafe fn release(header: *const Header) {
    // SAFETY: the caller owns a reference, so the header is alive.
    let refs = unsafe { &(*header).refs.count };
    // Release: our uses of the table happen before the free below (see the Acquire load).
    if refs.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
    // SAFETY: ours was the last reference.
    unsafe { free(header) }
}

/// Frees the table at `header`, whose last reference was just given up: out of line, so that
/// giving up any other (a waker's drop) saves no registers for it.
///
/// # Safety
/// `header` points to a live table whose references are all given up.
#[cold]
#[inline(never)]
unsafe fn free(header: *const Header) {
    // SAFETY: the header is alive until freed below (the caller).
    let refs = unsafe { &(*header).refs.count };
    // Acquire: reading the count our decrement left synchronises with every earlier Release
    // decrement (they head release sequences our RMW belongs to), as a fence(Acquire) would.
    // A load rather than a fence because ThreadSanitizer does not model fences (std's `Arc`
    // does the same under TSan); it runs once per table.
    refs.load(Ordering::Acquire);
    let header = header.cast_mut();
    // SAFETY: no reference is left, so nothing else reads the block.
    let (block, words_offset, words) = unsafe {
        (
            (*header).block,
            (*header).words_offset,
            (*header).ready.words(),
        )
    };
    // SAFETY: the words were initialised in `new` and nobody refers to them any more.
    unsafe {
        ptr::drop_in_place(ptr::slice_from_raw_parts_mut(
            header.byte_add(words_offset).cast::<AtomicU64>(),
            words,
        ))
    };
    // SAFETY: the header was initialised in `new` and nobody refers to it any more.
    unsafe { ptr::drop_in_place(header) };
    // SAFETY: the block was allocated in `new` with this layout.
    unsafe { dealloc(header.cast(), block) };
}

/// The pair an entry's waker points into, and the entry's place in it (0 or 1).
///
/// # Safety
/// `entry` is an entry of a live table (a waker's data pointer).
#[inline(always)]
unsafe fn pair_of(entry: *const ()) -> (*const Pair, usize) {
    // The pair's address is a multiple of 8 (see `ENTRIES_OFFSET`): the entry is its first
    // half-word or its second.
    let offset = entry.addr() % align_of::<Pair>();
    // SAFETY: `entry` is inside its pair, `offset` bytes after its start (above).
    let pair = unsafe { entry.byte_sub(offset) }.cast::<Pair>();
    (pair, offset / 4)
}

/// The header of the table an entry belongs to, and the entry's index.
///
/// # Safety
/// `entry` is an entry of a live table.
#[inline(always)]
unsafe fn header_of(entry: *const ()) -> (*const Header, usize) {
    // SAFETY: the caller's promise.
    let (pair, half) = unsafe { pair_of(entry) };
    // SAFETY: pairs are initialised in `new` and their indexes immutable after.
    let index = unsafe { (*pair).index } as usize;
    // SAFETY: pair `index` sits `index` pairs after the first, which sits ENTRIES_OFFSET bytes
    // after the header, all in one block.
    let header = unsafe { pair.sub(index).byte_sub(ENTRIES_OFFSET).cast::<Header>() };
    (header, 2 * index + half)
}

/// The state of the entry a counted waker points at.
///
/// # Safety
/// `entry` is an entry of a live table.
#[inline(always)]
unsafe fn state_of<'a>(entry: *const ()) -> EntryState<'a> {
    // SAFETY: the caller's promise.
    let (pair, half) = unsafe { pair_of(entry) };
    EntryState {
        // SAFETY: the pair is initialised and lives while the waker does (it holds a
        // reference to the table).
        word: unsafe { &(*pair).state },
        shift: 16 * half as u32,
    }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_waker, wake, wake_by_ref, drop_waker);

/// The wakers of an entry cloned past [`MAX_COUNTED`]: each holds a reference to the table but
/// is not counted in its entry's state. Waking one wakes the entry as any of its wakers does,
/// so that no wake is lost; once the value has left, the entry may be bound to a later value
/// of its slot, which such a wake may then poll spuriously.
static UNCOUNTED: RawWakerVTable =
    RawWakerVTable::new(clone_uncounted, wake_uncounted, wake_by_ref, drop_uncounted);

// SAFETY (all the functions below): `data` is an entry of a live table: an uncounted waker owns
// one of its references, a counted one is counted in its entry's state (whose retired entry
// holds one), and a borrowed one is lent by its live arena.

/// Adds a reference to the table at `header`, as `Arc::clone`.
///
/// # Safety
/// `header` points to a live table and the caller holds one of its references (or is its
/// arena).
unsafe fn add_ref(header: *const Header) {
    // SAFETY: as the caller promises.
    let refs = unsafe { &(*header).refs.count };
    // Relaxed: a new reference is made from an existing one, as `Arc::clone`.
    if refs.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
        crate::unwind::abort();
    }
}

unsafe fn clone_waker(data: *const ()) -> RawWaker {
    // SAFETY: see above.
    let state = unsafe { state_of(data) };
    // Relaxed: as above. The arena reads the count before binding the entry again, and only
    // binds it once it has acquired the drop of every owned waker (see `drop_waker`); a clone
    // is only made from a waker that exists, so none is made while the count reads zero and
    // the arena is not polling the entry's value. The table lives on: the waker cloned from is
    // counted (its entry holds a reference once retired), or lent by a live arena.
    let before = state
        .word
        .fetch_add(ONE_WAKER << state.shift, Ordering::Relaxed);
    let count = (before >> state.shift) & HALF;
    if count == 0 {
        // The entry's first: made through a borrow of the arena (see `Refs::counted`).
        // SAFETY: see above.
        let header = unsafe { &*header_of(data).0 };
        // Relaxed: as in `WakeTable::retire_all`. A load first, so that the header's line
        // is written once per table.
        if !header.refs.counted.load(Ordering::Relaxed) {
            header.refs.counted.store(true, Ordering::Relaxed);
        }
    }
    if count >= MAX_COUNTED * ONE_WAKER {
        // Too many to count in the half-word: this one goes uncounted (see `UNCOUNTED`), with
        // a reference of its own, taken before the count goes back (the waker cloned from
        // keeps the count above zero meanwhile).
        // SAFETY: see above.
        unsafe { add_ref(header_of(data).0) };
        // Relaxed: as the drop of a waker that woke nothing.
        state
            .word
            .fetch_sub(ONE_WAKER << state.shift, Ordering::Relaxed);
        return RawWaker::new(data, &UNCOUNTED);
    }
    RawWaker::new(data, &VTABLE)
}

unsafe fn clone_uncounted(data: *const ()) -> RawWaker {
    // SAFETY: see above.
    unsafe { add_ref(header_of(data).0) };
    RawWaker::new(data, &UNCOUNTED)
}

unsafe fn wake_uncounted(data: *const ()) {
    // The reference this waker owns is given up after the wake, also if the wake panics.
    let _release = ReleaseOnDrop(
        // SAFETY: see above.
        unsafe { header_of(data).0 },
    );
    // SAFETY: see above.
    unsafe { wake_by_ref(data) };
}

unsafe fn drop_uncounted(data: *const ()) {
    // SAFETY: see above: this waker's reference is given up once.
    unsafe { release(header_of(data).0) }
}

unsafe fn wake(data: *const ()) {
    // The reference this waker owns is given up after the wake, also if the wake panics (the
    // parent task's waker may).
    let _release = DropWakerOnDrop(data);
    // SAFETY: see above.
    unsafe { wake_by_ref(data) };
}

/// Gives up the owned waker at `.0` when dropped, also while unwinding.
struct DropWakerOnDrop(*const ());

impl Drop for DropWakerOnDrop {
    fn drop(&mut self) {
        // SAFETY: made in `wake` from an owned waker, whose reference is given up once, here.
        unsafe { drop_waker(self.0) }
    }
}

unsafe fn wake_by_ref(data: *const ()) {
    // The value this thread's owner is polling woke itself: no atomic, the owner queues it.
    if watch::woke(data) {
        return;
    }
    // SAFETY: see above; `header_of` derives the header from the entry pointer, which carries
    // the whole block's provenance; a pair's index, written when the table was made, is its
    // own.
    let (header, entry) = unsafe { header_of(data) };
    // SAFETY: as just above.
    unsafe { wake_entry(header, entry) };
}

unsafe fn drop_waker(data: *const ()) {
    // SAFETY: see above.
    let state = unsafe { state_of(data) };
    // Release: this waker's wakes (its bits in the ready set) happen before the arena, which
    // loads the count with Acquire, binds the entry to another value. Acquire: the drop that
    // gives the retired entry's reference up (below) comes after every earlier drop of its
    // wakers, which then happen before the table is freed.
    let before = state
        .word
        .fetch_sub(ONE_WAKER << state.shift, Ordering::AcqRel);
    // The last waker of a retired entry: the entry's reference goes with it (see
    // `WakeTable::retire`). Any other drop leaves the table to the references that remain.
    if (before >> state.shift) & HALF == RETIRED + ONE_WAKER {
        // SAFETY: the entry's reference keeps the table alive until this release, which gives
        // it up once: only the drop that takes the count to zero sees this state.
        unsafe { release(header_of(data).0) }
    }
}

#[cfg(all(test, not(pinfold_loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn table(entries: usize) -> WakeTable {
        WakeTable::new(entries, Parent::Task(AtomicWaker::new()))
    }

    /// Tables of 0 to 11 entries (odd counts too, as a join's), with wakers kept of one entry,
    /// of two near each other, or of all, some of them retired before: the table's drop retires
    /// exactly the entries with wakers alive, each holding one reference to the table, and
    /// leaves the others as they were. Under Miri, the sizes at the edges of the walk's turns
    /// of four pairs: none, half a pair, one pair, one and a half, a turn that ends in half a
    /// pair, one turn, one turn and half a pair, one turn and one and a half.
    #[test]
    fn retire_all_retires_exactly_the_entries_with_wakers_alive() {
        let sizes: &[usize] = if cfg!(miri) {
            &[0, 1, 2, 3, 7, 8, 9, 11]
        } else {
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
        };
        for &entries in sizes {
            let mut sets: Vec<u32> = (0..entries).map(|e| 1 << e).collect();
            for a in 0..entries {
                // Two entries of one pair, or of pairs next to each other.
                sets.extend((a + 1..entries.min(a + 4)).map(|b| (1 << a) | (1 << b)));
            }
            sets.push((1 << entries) - 1);
            for set in sets {
                for retired_before in [false, true] {
                    let table = table(entries);
                    let kept: Vec<Waker> = (0..entries)
                        .filter(|e| set & (1 << e) != 0)
                        .flat_map(|e| [table.waker(e), table.waker(e)])
                        .collect();
                    if retired_before {
                        for e in (0..entries).step_by(3).filter(|e| set & (1 << e) != 0) {
                            assert!(!table.retire(e), "entry {e} has wakers alive");
                        }
                    }
                    table.retire_all();
                    for e in 0..entries {
                        let expected = if set & (1 << e) != 0 {
                            2 * ONE_WAKER + RETIRED
                        } else {
                            0
                        };
                        let state = table.entry_state(e).load(Ordering::Relaxed);
                        assert_eq!(state, expected, "entry {e} of {entries}, wakers of {set:b}");
                    }
                    let refs = || table.header().refs.count.load(Ordering::Relaxed);
                    let alive = set.count_ones() as usize;
                    assert_eq!(refs(), 1 + alive, "{entries} entries, wakers of {set:b}");
                    drop(kept);
                    assert_eq!(refs(), 1, "{entries} entries, wakers of {set:b} dropped");
                }
            }
        }
    }

    #[test]
    fn each_entry_of_a_pair_counts_its_own_wakers() {
        let table = table(4);
        let odd: Vec<Waker> = (0..3).map(|_| table.waker(3)).collect();
        let even = table.waker(2);
        assert_eq!(table.entry_state(3).load(Ordering::Relaxed), 3 * ONE_WAKER);
        assert_eq!(table.entry_state(2).load(Ordering::Relaxed), ONE_WAKER);
        assert!(!table.pair_is_clear(2, Ordering::Relaxed));
        assert!(
            table.pair_is_clear(0, Ordering::Relaxed),
            "the other pair is untouched"
        );
        assert!(!table.retire(2), "entry 2 has a waker");
        assert_eq!(
            table.header().refs.count.load(Ordering::Relaxed),
            2,
            "the entry's reference"
        );
        even.wake();
        assert_eq!(
            table.header().refs.count.load(Ordering::Relaxed),
            1,
            "given up by its last"
        );
        assert_eq!(table.entry_state(2).load(Ordering::Relaxed), RETIRED);
        assert_eq!(table.entry_state(3).load(Ordering::Relaxed), 3 * ONE_WAKER);
        assert!(ready_set::is_woken(table.words(), 2));
        assert!(!ready_set::is_woken(table.words(), 3));
        odd[1].wake_by_ref();
        assert!(ready_set::is_woken(table.words(), 3));
        drop(odd);
        assert!(table.reclaim(2));
        assert!(table.pair_is_clear(3, Ordering::Relaxed));
        assert!(
            !ready_set::is_woken(table.words(), 2),
            "a reclaimed entry's bit is clear"
        );
    }

    #[test]
    fn wakers_cloned_past_the_count_wake_but_leave_the_count_alone() {
        let table = table(2);
        let total = MAX_COUNTED as usize + 100;
        let clones: Vec<Waker> = (0..total).map(|_| table.waker(1)).collect();
        let counted = MAX_COUNTED * ONE_WAKER;
        assert_eq!(table.entry_state(1).load(Ordering::Relaxed), counted);
        assert_eq!(table.entry_state(0).load(Ordering::Relaxed), 0, "no spill");
        // An uncounted waker, and its clone, wake the entry like any of its wakers.
        let uncounted = clones.last().unwrap().clone();
        assert_eq!(table.entry_state(1).load(Ordering::Relaxed), counted);
        uncounted.wake_by_ref();
        assert!(ready_set::is_woken(table.words(), 1));
        assert!(!ready_set::is_woken(table.words(), 0));
        uncounted.wake();
        // The arena's reference and the uncounted clones' own: counted ones take none.
        assert_eq!(
            table.header().refs.count.load(Ordering::Relaxed),
            1 + total - MAX_COUNTED as usize
        );
        drop(clones);
        assert_eq!(table.entry_state(1).load(Ordering::Relaxed), 0);
        assert_eq!(table.header().refs.count.load(Ordering::Relaxed), 1);
    }
}
