//! The wake table: the one allocation shared between an arena and its wakers.
//!
//! Layout, in a single block: a [`Header`] (reference count, parent link, sizes), then the
//! [`Entry`]s (an entry's own index, and how many owned wakers point at it: the address of
//! entry `e` is the data pointer of its wakers), then the words of the ready bitset
//! ([`ready_set`](crate::ready_set)), one bit per entry.
//!
//! An entry is the identity of one stay of one value in one slot: the arena binds a free entry
//! to a value when it is inserted and unbinds it when the value leaves, and binds it again only
//! once no waker points at it (see [`implementation`](crate::implementation)). So a waker that
//! outlives its value marks an entry that names no slot, and polls nothing.
//!
//! The arena holds one reference to the block and every owned waker one more; the block is
//! freed when the last goes, so a waker may outlive the arena. Wakers lent to a value's `poll`
//! are borrowed (`ManuallyDrop`), so polling costs no reference counting.

use core::alloc::Layout;
use core::mem::ManuallyDrop;
use core::ptr::{self, NonNull};
use core::task::{RawWaker, RawWakerVTable, Waker};

use crate::atomic_waker::AtomicWaker;
use crate::hub::Hub;
use crate::ready_set::{self, Marked, ReadyLayout};
use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Ordering, alloc, dealloc};

/// Who is told when the ready set goes from empty to non-empty.
pub(crate) enum Parent {
    /// The task polling the arena.
    Task(AtomicWaker),
    /// A hub shared by several arenas; `bit` is this arena's bit in it.
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
    /// On a cache line of its own: wakers cloned and dropped on other threads write it, and
    /// every wake reads the fields below.
    refs: CacheLine<AtomicUsize>,
    parent: Parent,
    ready: ReadyLayout,
    entries: usize,
    words_offset: usize,
    block: Layout,
}

/// Keeps what follows at least 128 bytes after its value, so the two never share a cache line
/// (nor x86's adjacent-line prefetch pair). Padding rather than `align(128)`: an over-aligned
/// block takes the allocator's slower aligned path, which small arenas would pay at creation.
#[repr(C)]
struct CacheLine<T>(T, [u8; 128]);

/// The data a waker points at.
#[repr(C)]
pub(crate) struct Entry {
    /// This entry's index in the table (immutable): its bit in the ready set.
    index: u32,
    /// `2 * owned wakers + RETIRED`: how many owned wakers point here, and whether the arena
    /// has unbound the entry and waits for them to go before binding it again.
    state: AtomicU32,
}

/// The flag of [`Entry::state`] that the arena sets when it unbinds an entry that still has
/// owned wakers.
pub(crate) const RETIRED: u32 = 1;

/// One owned waker in [`Entry::state`].
const ONE_WAKER: u32 = 2;

/// Entries start right after the header (its size is a multiple of its alignment, which is at
/// least `Entry`'s).
const ENTRIES_OFFSET: usize = size_of::<Header>();
const _: () = assert!(align_of::<Header>() >= align_of::<Entry>());

/// More references than this means wakers are being leaked in a loop: abort as `Arc` does.
const MAX_REFS: usize = isize::MAX as usize;

/// More owned wakers of one entry than this: abort likewise (the count must not overflow).
const MAX_ENTRY_REFS: u32 = u32::MAX / 4;

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
            .extend(Layout::array::<Entry>(entries).expect("arena capacity overflows"))
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
                refs: CacheLine(AtomicUsize::new(1), [0; 128]),
                parent,
                ready,
                entries,
                words_offset,
                block,
            });
        }
        for index in 0..entries {
            // SAFETY: entry `index` is in bounds of the block (see the layout above).
            let entry = unsafe { base.byte_add(ENTRIES_OFFSET).cast::<Entry>().add(index) };
            // SAFETY: in bounds, aligned and not yet initialised or referenced.
            unsafe {
                entry.write(Entry {
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

    /// The borrowed waker of the entry at `entry`.
    ///
    /// # Safety
    /// `entry` points at an entry of this table.
    #[inline(always)]
    unsafe fn waker_of(entry: *const Entry) -> ManuallyDrop<Waker> {
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

    /// The top word of the ready set (where `BUSY` lives).
    #[inline]
    pub(crate) fn top_word(&self) -> &AtomicU64 {
        // SAFETY: `top` is below `words_len`, both fixed at construction, so the word is one of
        // the table's initialised words; we hold a reference, so the table is alive. Read on
        // every call of a busy merge: no bounds check.
        unsafe { &*self.words.as_ptr().add(self.top as usize) }
    }

    /// Whether the owner is busy (from an earlier call) and nothing was woken since: the top
    /// word holds `BUSY` and nothing else.
    #[inline(always)]
    pub(crate) fn is_idle(&self) -> bool {
        self.top_word().load(Ordering::Relaxed) == ready_set::BUSY
    }

    /// Whether a drain in `mode` has anything to take or change (see
    /// [`drain_is_idle`](ready_set::drain_is_idle)).
    #[inline(always)]
    pub(crate) fn has_wakes(&self, mode: ready_set::Drain) -> bool {
        !ready_set::drain_is_idle(self.top_word(), mode)
    }

    /// Sets `BUSY` in the top word: wakes from now on notify nobody.
    #[inline(always)]
    pub(crate) fn set_busy(&self) {
        ready_set::set_busy(self.top_word());
    }

    /// Arms the table's ready set if nothing was woken since the owner's last drain (see
    /// [`try_arm`](ready_set::try_arm)).
    pub(crate) fn try_arm(&self) -> bool {
        ready_set::try_arm(self.top_word())
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

    /// The state word of entry `index` (owned wakers, [`RETIRED`]).
    #[inline]
    pub(crate) fn entry_state(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the entry is in the block (`entry` checks the bound) and initialised; we hold
        // a reference, so it lives as long as `self`.
        unsafe { &(*self.entry(index)).state }
    }

    /// [`entry_state`](Self::entry_state) without the bound check, for the entry bound to a
    /// value that leaves (guarded by `ready_512k`, instructions).
    ///
    /// # Safety
    /// `index` is below the table's number of entries.
    #[inline(always)]
    pub(crate) unsafe fn entry_state_unchecked(&self, index: usize) -> &AtomicU32 {
        // SAFETY: the entry is in the block (the caller's bound) and initialised; we hold a
        // reference, so it lives as long as `self`.
        unsafe { &(*self.entry_unchecked(index)).state }
    }

    #[inline]
    fn entry(&self, index: usize) -> *const Entry {
        assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: checked just above.
        unsafe { self.entry_unchecked(index) }
    }

    /// Entry `index`.
    ///
    /// # Safety
    /// `index` is below the table's number of entries.
    #[inline(always)]
    unsafe fn entry_unchecked(&self, index: usize) -> *const Entry {
        debug_assert!(index < self.entries as usize, "entry index out of bounds");
        // SAFETY: `index` is below the capacity (the caller's bound), so the entry is inside
        // the block.
        unsafe {
            self.header
                .as_ptr()
                .cast_const()
                .byte_add(ENTRIES_OFFSET)
                .cast::<Entry>()
                .add(index)
        }
    }
}

impl Drop for WakeTable {
    fn drop(&mut self) {
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

/// Marks slot `index` of the table at `header` woken, and notifies the parent if the set was
/// empty.
///
/// # Safety
/// As for [`words_of`]; and `index` is one of the table's entries.
unsafe fn wake_slot(header: *const Header, index: usize) {
    // SAFETY: as the caller promises.
    let words = unsafe { words_of(header) };
    // SAFETY: the header is alive; this reference covers the header's bytes only.
    let header = unsafe { &*header };
    // SAFETY: the words are the table's, laid out by its layout, and `index` is one of its
    // entries (the caller's promise), each of which has a bit.
    if unsafe { ready_set::mark(words, &header.ready, index) } == Marked::Raised {
        header.parent.notify();
    }
}

/// Gives up one reference, freeing the block with the last.
///
/// # Safety
/// `header` points to a live table and the caller owns one of its references.
unsafe fn release(header: *const Header) {
    // SAFETY: the caller owns a reference, so the header is alive.
    let refs = unsafe { &(*header).refs.0 };
    // Release: our uses of the table happen before the free below (see the Acquire load).
    if refs.fetch_sub(1, Ordering::Release) != 1 {
        return;
    }
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

/// The header of the table an entry belongs to.
///
/// # Safety
/// `entry` is an entry of a live table.
unsafe fn header_of(entry: *const ()) -> *const Header {
    let entry = entry.cast::<Entry>();
    // SAFETY: entries are initialised in `new` and immutable after.
    let index = unsafe { (*entry).index } as usize;
    // SAFETY: entry `index` sits `index` entries after the first, which sits ENTRIES_OFFSET
    // bytes after the header, all in one block.
    unsafe { entry.sub(index).byte_sub(ENTRIES_OFFSET).cast::<Header>() }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_waker, wake, wake_by_ref, drop_waker);

// SAFETY (all four functions): `data` is an entry of a live table and, except for the borrowed
// waker, the waker owns one of the table's references.

unsafe fn clone_waker(data: *const ()) -> RawWaker {
    // SAFETY: see above.
    let header = unsafe { &*header_of(data) };
    // Relaxed: a new reference is made from an existing one, as `Arc::clone`.
    if header.refs.0.fetch_add(1, Ordering::Relaxed) > MAX_REFS {
        crate::unwind::abort();
    }
    // SAFETY: see above.
    let entry = unsafe { &*data.cast::<Entry>() };
    // Relaxed: as above. The arena reads the count before binding the entry again, and only
    // binds it once it has acquired the drop of every owned waker (see `drop_waker`); a clone
    // is only made from a waker that exists, so none is made while the count reads zero and
    // the arena is not polling the entry's value.
    if entry.state.fetch_add(ONE_WAKER, Ordering::Relaxed) > MAX_ENTRY_REFS {
        crate::unwind::abort();
    }
    RawWaker::new(data, &VTABLE)
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
    // SAFETY: see above.
    let index = unsafe { (*data.cast::<Entry>()).index } as usize;
    // SAFETY: see above; `header_of` derives the header from the entry pointer, which carries
    // the whole block's provenance; an entry's index, written when the table was made, is
    // its own.
    unsafe { wake_slot(header_of(data), index) };
}

unsafe fn drop_waker(data: *const ()) {
    // SAFETY: see above.
    let entry = unsafe { &*data.cast::<Entry>() };
    // Release: this waker's wakes (its marks in the ready set) happen before the arena, which
    // loads the count with Acquire, binds the entry to another value.
    entry.state.fetch_sub(ONE_WAKER, Ordering::Release);
    // SAFETY: see above: this waker's reference is given up once.
    unsafe { release(header_of(data)) }
}
