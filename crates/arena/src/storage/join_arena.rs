//! [`JoinArena`]: a fixed sequence of pinned values that get wakers of their own only when
//! asked, and whose storage becomes the output `Vec`. What a join is made of.

use core::fmt;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop};
use core::pin::Pin;
use core::ptr::{self, NonNull};
use core::task::{Context, Poll, Waker};

use crate::key::Key;
use crate::poll::{self, Budget, Mark, Marks, PollStorage, Polled, Queue, Rounds, Step, UNLINKED};
use crate::storage::block::Block;
use crate::sync::Ordering;
use crate::unwind;
use crate::wake::atomic_waker::AtomicWaker;
use crate::wake::ready_set::{self, Drain, ParentWord};
use crate::wake::wake_table::{Parent, WakeTable};
use alloc::vec::Vec;

/// The largest storage [`JoinArena::take_vec_with`] hands over as a `Vec` whatever the spare
/// capacity: small enough that the spare room costs less than the allocation it saves.
const MAX_SPARE: usize = 2048;

/// A fixed sequence of pinned values, value `i` at index `i`, in one allocation; each value
/// gets a waker of its own once the owner [`arm`](JoinArena::arm)s it (the wake table is the second
/// allocation), and [`take_vec_with`](JoinArena::take_vec_with) turns the values into a `Vec` of
/// outputs, in the same allocation when the layouts allow.
///
/// Until it is armed, the owner polls values with a context of its choosing
/// ([`get_pin_mut`](JoinArena::get_pin_mut)): a join polls every input once with its own task's
/// waker first, and needs no wake table at all when they all finish then. Once armed,
/// [`poll_with_budget`](JoinArena::poll_with_budget) polls only the woken values, in the arena's
/// poll rounds (see [`Arena::poll_with_budget`](crate::Storage::poll_with_budget)). Values are
/// never removed: a value that gave an output stays in place (a join keeps the output in it),
/// and is polled again only if a stale waker of it fires.
pub struct JoinArena<T> {
    /// The values; never grown, shrunk or reallocated.
    cells: Cells<T>,
    /// Everything the wakers need, made by [`arm`](JoinArena::arm). Until then a join arena is
    /// its `Vec` and a `None`: making one writes those alone, not the queues and counters a
    /// join that finishes in its first polls never uses (and which its caller would move).
    armed: Option<Armed>,
}

/// The wake table of an armed [`JoinArena`] (one owner word per value: its [`Mark`]) and the
/// poll loop's state.
struct Armed {
    table: WakeTable,
    rounds: Rounds,
}

/// The values of a [`JoinArena`]: the parts of a `Vec<T>` (never grown, shrunk or
/// reallocated), as a [`Block`], which drops every value also when the `Drop` of some panics:
/// so a join arena has no `Drop` of its own and its values may borrow what is declared after it
/// (see [`block`](crate::storage::block)).
struct Cells<T> {
    raw: Block,
    _values: PhantomData<T>,
}

impl<T> Cells<T> {
    #[inline]
    fn new(vec: Vec<T>) -> Self {
        Self {
            raw: Block::new(vec),
            _values: PhantomData,
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.raw.len()
    }

    #[inline(always)]
    fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// The first value's place: values `0..len` are initialised.
    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut T {
        self.raw.base::<T>()
    }

    /// Value `index`.
    ///
    /// # Panics
    /// If `index` is out of bounds.
    fn get(&self, index: usize) -> &T {
        assert!(
            index < self.len(),
            "join arena index {index} out of bounds ({} values)",
            self.len()
        );
        // SAFETY: `index < len`: an initialised value; the shared borrow of `self` keeps any
        // `&mut` to it away for the returned borrow's lifetime.
        unsafe { &*self.raw.base::<T>().add(index) }
    }

    /// Sets the number of values to `len`.
    ///
    /// # Safety
    /// Values `0..len` are initialised (so `len` is within the capacity), and no other value
    /// needs dropping.
    #[inline(always)]
    unsafe fn set_len(&mut self, len: usize) {
        // SAFETY: the caller's promise.
        unsafe { self.raw.set_len(len) }
    }

    /// The values, moved out as their `Vec`: the cells hold none after.
    #[inline]
    fn take(&mut self) -> Vec<T> {
        // SAFETY: the block was made from a `Vec<T>` (`new`).
        unsafe { self.raw.take::<T>() }
    }
}

// The values live in a heap block that never moves: moving a `JoinArena` moves none of them.
impl<T> Unpin for JoinArena<T> {}

impl<T> JoinArena<T> {
    /// Stores the values of `iter` in order: one allocation when its `size_hint` is exact (what
    /// collecting into a `Vec` costs otherwise).
    ///
    /// # Panics
    /// If `iter` gives `u32::MAX` values or more.
    #[inline]
    pub fn new(iter: impl IntoIterator<Item = T>) -> Self {
        // `extend` rather than `collect`: `collect` returns its `Vec` through memory that is
        // read back at once, wider than it was written, which stalls the store buffer; `extend`
        // is inlined here. Guarded by `join_all_ready_2_block_on`.
        let iter = iter.into_iter();
        let mut cells = Vec::with_capacity(iter.size_hint().0);
        cells.extend(iter);
        assert!(
            cells.len() < UNLINKED as usize,
            "too many values for a join arena: {} (at most {})",
            cells.len(),
            UNLINKED - 1
        );
        Self {
            cells: Cells::new(cells),
            armed: None,
        }
    }

    /// The values, pinned, in order.
    pub fn iter_pin_mut(&mut self) -> impl Iterator<Item = Pin<&mut T>> {
        self.iter_pin_mut_from(0)
    }

    /// The values from index `start` on, pinned, in order (none if `start` is past the end).
    pub fn iter_pin_mut_from(&mut self, start: usize) -> impl Iterator<Item = Pin<&mut T>> {
        // Through the `Vec`'s pointer, as `pinned` does.
        let base = self.cells.as_mut_ptr();
        (start..self.cells.len()).map(move |index| {
            // SAFETY: `index < len`: an initialised value of the buffer, which stays in place
            // until it is dropped (as in `pinned`); each index is visited once, so the `&mut`s
            // handed out are disjoint, and they live no longer than the `&mut self` borrow.
            unsafe { Pin::new_unchecked(&mut *base.add(index)) }
        })
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there is no value.
    pub fn is_empty(&self) -> bool {
        self.cells.len() == 0
    }

    /// Value `index`, pinned.
    ///
    /// # Panics
    /// If `index` is out of bounds.
    #[inline]
    pub fn get_pin_mut(&mut self, index: usize) -> Pin<&mut T> {
        pinned(&mut self.cells, index)
    }

    /// Value `index`.
    ///
    /// # Panics
    /// If `index` is out of bounds.
    pub fn get(&self, index: usize) -> &T {
        self.cells.get(index)
    }

    /// Whether [`arm`](JoinArena::arm) has run.
    pub fn is_armed(&self) -> bool {
        self.armed.is_some()
    }

    /// Gives every value a waker of its own (allocates the wake table; once) and queues the
    /// values for which `queue` says `true` to be polled by the next round, as if their wakers
    /// had fired. `queue` sees each value pinned and mutable, not shared: a shared reference
    /// covering a pending future that borrows itself would take that borrow's permission away.
    pub fn arm(&mut self, mut queue: impl FnMut(Pin<&mut T>) -> bool) {
        let len = self.cells.len();
        let armed = self.armed.get_or_insert_with(|| Armed {
            table: WakeTable::with_owner_words(
                len,
                Parent::Task(AtomicWaker::new()),
                len,
                Mark::NEW.to_word(),
            ),
            rounds: Rounds::NEW,
        });
        let marks = marks(armed.table.owner_words());
        for index in 0..len {
            if queue(pinned(&mut self.cells, index)) {
                armed.rounds.ready.push(marks, index as u32);
            }
        }
    }

    /// Starts a poll round: the fairness budget for
    /// [`poll_with_budget`](JoinArena::poll_with_budget) (as many polls as there are values).
    ///
    /// # Panics
    /// If the arena is not armed.
    #[inline]
    pub fn start_round(&mut self) -> Budget {
        let (rounds, mut slots) = self.armed_slots();
        rounds.start_round(&mut slots)
    }

    /// The old name of [`start_round`](JoinArena::start_round).
    ///
    /// # Panics
    /// If the arena is not armed.
    #[deprecated(note = "renamed to `start_round`")]
    #[inline]
    pub fn budget(&mut self) -> Budget {
        self.start_round()
    }

    /// Polls the woken values, as [`Arena::poll_with_budget`](crate::Storage::poll_with_budget)
    /// does: `Ready(Some((key, output)))` at an output (the key's index is the value's),
    /// `Pending` when no woken value is left to poll in this round or the budget is spent.
    /// `Keep` and `Done` both leave the value in place. Never `Ready(None)`.
    ///
    /// A value that returns `Pending` without having kept a waker of its own (no clone of it
    /// is alive) and without having woken itself can only be waiting for a waker it was given
    /// before the arena was armed, the caller's: it is polled again by every later round
    /// (without waking the task), until it keeps its own waker. That makes a future that
    /// stores the waker of its first poll only (which the `Future` contract does not allow,
    /// but which works where the waker never changes) finish all the same, polled on each
    /// poll of the task as `futures-util`'s small joins poll every future.
    ///
    /// If `f` panics, the panic propagates and the value stays.
    ///
    /// # Panics
    /// If the arena is not armed.
    pub fn poll_with_budget<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(Key, R)>>
    where
        F: FnMut(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let (rounds, mut slots) = self.armed_slots();
        rounds.poll(&mut slots, cx, budget, f)
    }

    /// Visits the values in order with `visit` until one stops the pass, turning each value's
    /// output into the output `Vec` as it comes, in the values' own storage: the output is
    /// written where the output `Vec` wants it as soon as its value is dropped, so a pass in
    /// which every value gives an output leaves nothing to move afterwards. For a join of
    /// futures that are all ready at once, that is the whole join in one pass.
    ///
    /// `visit` gives `Ok(output)` for a value it is done with (the arena then drops the value in
    /// place), or `Err(reason)` to stop the pass at that value, which stays as `visit` left it.
    /// Then every output taken so far is put back in its value's place as `restore(output)`
    /// (the arena is left as if each value had been replaced by `restore(output)` in turn), and
    /// the pass returns [`Filled::Stopped`]. Values after the one that stopped are not visited.
    ///
    /// Nothing is visited, and [`Filled::Unfit`] returned, when the outputs cannot take over the
    /// values' storage (the conditions of [`take_vec_with`](JoinArena::take_vec_with)). Otherwise,
    /// when every value gave an output, the arena is left empty (as by `take_vec_with`) and the
    /// outputs returned in order ([`Filled::All`]).
    ///
    /// If `visit` or a value's `Drop` panics, the outputs taken so far are put back as when the
    /// pass stops (a value whose `Drop` panicked gets `restore` of its output), and the panic
    /// goes on. If the pass is complete and the drop of the wake table's task waker panics
    /// (an armed arena frees its table then), the arena is left empty, every output is
    /// dropped, and the panic goes on. `restore` should not panic: if it does while the arena puts outputs back, the
    /// values and outputs not yet put back are dropped, the arena is left empty, and the panic
    /// goes on (if that is during an unwinding, the process aborts).
    #[inline]
    pub fn fill_in_place<U, B>(
        &mut self,
        mut visit: impl FnMut(Pin<&mut T>) -> Result<U, B>,
        mut restore: impl FnMut(U) -> T,
    ) -> Filled<U, B> {
        let len = self.cells.len();
        let capacity = self.cells.capacity();
        if !reuses_storage::<T, U>(len, capacity) {
            return Filled::Unfit;
        }
        let mut guard = Filling {
            cells: &mut self.cells,
            taken: 0,
            held: None,
            restore: &mut restore,
        };
        let base = guard.cells.as_mut_ptr();
        while guard.taken < len {
            let index = guard.taken;
            // SAFETY: `index < len`: value `index` is initialised and in place (outputs
            // `0..index` end at or before its start, as `U` is no larger than a value); pinned
            // as in `get_pin_mut`.
            let value = unsafe { Pin::new_unchecked(&mut *base.add(index)) };
            match visit(value) {
                Ok(output) => {
                    guard.held = Some(output);
                    // SAFETY: the value is initialised and dropped once: if the drop panics, the
                    // guard writes `restore` of the held output over it, without dropping it.
                    unsafe { ptr::drop_in_place(base.add(index)) };
                    let Some(output) = guard.held.take() else {
                        unreachable!("the output just held is gone")
                    };
                    // SAFETY: output `index` occupies bytes from `index * size_of::<U>()` up to
                    // at most `(index + 1) * size_of::<T>()`: inside values `0..=index`, all
                    // dropped now; aligned, as `U` has the values' alignment.
                    unsafe { base.cast::<U>().add(index).write(output) };
                    guard.taken = index + 1;
                }
                Err(reason) => {
                    // Puts the outputs back.
                    drop(guard);
                    return Filled::Stopped { at: index, reason };
                }
            }
        }
        mem::forget(guard);
        // The block is the outputs' now.
        mem::forget(self.cells.take());
        let capacity_bytes = capacity * size_of::<T>();
        // SAFETY: the block holds `len` initialised `U`s at its start and no value (each was
        // dropped before its bytes were written); it was allocated by a `Vec<T>` of `capacity`
        // values, aligned as `U`, `capacity_bytes / size_of::<U>()` whole `U`s.
        let outputs = Made(unsafe {
            Vec::from_raw_parts(base.cast::<U>(), len, capacity_bytes / size_of::<U>())
        });
        // The wake table, if any, goes too (as in `take_vec_with`), once the outputs are a
        // `Vec`: if dropping the task's waker it holds panics, they are dropped with it.
        // Dropped in place, not moved out first.
        self.armed = None;
        Filled::All(outputs.into_vec())
    }

    /// Turns the values into a `Vec` of `take(value)`, in order, and leaves no value: each value
    /// is handed to `take`, then dropped in place. The `Vec` reuses the values' allocation (no allocation
    /// at all) when `U` has the alignment of the values' storage, the storage is a whole
    /// number of `U`s, and the spare capacity that leaves is small: the storage is at most
    /// 2 KiB, or at most twice the outputs' size. Otherwise it allocates once, exactly, after
    /// releasing the owner's reference to the wake table: the table is freed then, unless a
    /// value or a waker elsewhere still holds one of its wakers (it goes with the last).
    ///
    /// If `take` or a value's `Drop` panics, every value not yet handed over is dropped in
    /// place, every output made so far is dropped, the storage is freed, and the panic goes on.
    #[inline]
    pub fn take_vec_with<U>(&mut self, mut take: impl FnMut(Pin<&mut T>) -> U) -> Vec<U> {
        // The wake table first (the owner's reference; wakers still held keep it until they
        // go): the outputs' `Vec`, when it is a new allocation, can then take its place, and a
        // join's peak memory is its values and table, not those and its outputs too.
        self.armed = None;
        let cells = self.cells.take();
        let capacity_bytes = cells.capacity() * size_of::<T>();
        if !reuses_storage::<T, U>(cells.len(), cells.capacity()) {
            // Dropped as the arena's values are: every one, also when two panic.
            let mut cells = Cells::new(cells);
            let mut outputs = Made(Vec::with_capacity(cells.len()));
            for index in 0..cells.len() {
                outputs.0.push(take(pinned(&mut cells, index)));
            }
            drop(cells);
            return outputs.into_vec();
        }
        let mut cells = ManuallyDrop::new(cells);
        let mut guard = InPlace::<T, U> {
            base: NonNull::new(cells.as_mut_ptr()).expect("a Vec's pointer is not null"),
            len: cells.len(),
            capacity: cells.capacity(),
            written: 0,
            dropped: 0,
            _types: PhantomData,
        };
        while guard.dropped < guard.len {
            let index = guard.dropped;
            // SAFETY: `index < len`: cell `index` is initialised and has not been dropped or
            // overwritten (outputs `0..index` end at or before its start, as `U` is no larger
            // than a cell); its value is pinned in place as in `get_pin_mut`.
            let cell = unsafe { &mut *guard.base.as_ptr().add(index) };
            // SAFETY: as in `get_pin_mut`.
            let output = Made(One(Some(take(unsafe { Pin::new_unchecked(&mut *cell) }))));
            guard.dropped = index + 1;
            // SAFETY: the cell is initialised and dropped once: `dropped` already counts it, so
            // the guard will not drop it again even if this drop panics (then `output` is
            // dropped by the unwinding, caught if it panics too).
            unsafe { ptr::drop_in_place(cell) };
            let output = output.into_inner();
            // SAFETY: output `index` occupies bytes `index * size_of::<U>()..` up to at most
            // `(index + 1) * size_of::<T>()`: inside cells `0..=index`, all dropped now;
            // the pointer is aligned as `U` has the cells' alignment.
            unsafe { guard.base.as_ptr().cast::<U>().add(index).write(output) };
            guard.written = index + 1;
        }
        let guard = ManuallyDrop::new(guard);
        // SAFETY: the block holds `len` initialised `U`s at its start; it was allocated by a
        // `Vec<T>` of `capacity` values, i.e. `capacity * size_of::<T>()` bytes
        // aligned as `U`, which is `capacity_bytes / size_of::<U>()` whole `U`s.
        unsafe {
            Vec::from_raw_parts(
                guard.base.as_ptr().cast::<U>(),
                guard.len,
                capacity_bytes / size_of::<U>(),
            )
        }
    }
}

/// What [`JoinArena::fill_in_place`] did.
#[derive(Debug)]
pub enum Filled<U, B> {
    /// Every value gave an output: here they are, in order; the arena holds no value.
    All(Vec<U>),
    /// Value `at` stopped the pass with `reason`; the values before it hold their outputs as
    /// `restore` made them, the values after it were not visited.
    Stopped {
        /// The value that stopped the pass.
        at: usize,
        /// What `visit` gave for it.
        reason: B,
    },
    /// The outputs cannot take over the values' storage: no value was visited.
    Unfit,
}

/// The storage of [`JoinArena::fill_in_place`] while outputs replace values: when dropped (when the
/// pass stops or unwinds), puts every output back in its value's place as `restore(output)`.
struct Filling<'r, T, U, R: FnMut(U) -> T> {
    /// The arena's values.
    cells: &'r mut Cells<T>,
    /// Outputs `0..taken` are written, each over its value's bytes (or earlier ones); the
    /// values from `taken` on are in place, but for value `taken` when `held` is `Some`.
    taken: usize,
    /// The output of value `taken` while that value is being dropped.
    held: Option<U>,
    restore: &'r mut R,
}

impl<T, U, R: FnMut(U) -> T> Drop for Filling<'_, T, U, R> {
    fn drop(&mut self) {
        self.put_back();
    }
}

impl<T, U, R: FnMut(U) -> T> Filling<'_, T, U, R> {
    /// Puts every output back in its value's place. Out of line: the pass's loop then keeps
    /// nothing for it in registers (guarded by `join_all_std_ready_30`).
    #[cold]
    #[inline(never)]
    fn put_back(&mut self) {
        let Self {
            cells,
            taken,
            held,
            restore,
        } = self;
        let base = cells.as_mut_ptr();
        // Drops what is left if `restore` panics: the outputs not yet read, and the values in
        // place after the one whose output `restore` took; the cells then hold no value.
        let mut abandon = Abandon::<T, U> {
            cells,
            at: *taken,
            _output: PhantomData,
        };
        if let Some(output) = held.take() {
            // SAFETY: value `taken` was dropped (its `Drop` panicked); its bytes overlap no
            // output written, as outputs `0..taken` end at or before its start.
            unsafe { base.add(*taken).write(restore(output)) };
        }
        // From the last output to the first: a value's bytes overlap only outputs at or after
        // its own index, each read (and put back) before the value is written.
        for index in (0..*taken).rev() {
            abandon.at = index;
            // SAFETY: output `index` is initialised and read once.
            let output = unsafe { base.cast::<U>().add(index).read() };
            // SAFETY: the bytes of value `index` hold no live value and no output not yet read
            // (see above); aligned and in bounds as the `Vec`'s values are.
            unsafe { base.add(index).write(restore(output)) };
        }
        mem::forget(abandon);
    }
}

/// What [`Filling::put_back`] drops if `restore` panics: outputs `0..at`, not yet read, and
/// values `at + 1..len`, in place (the output of value `at` went to `restore`); then the cells
/// hold no value, so that none is dropped again as a value it no longer is.
struct Abandon<'c, T, U> {
    cells: &'c mut Cells<T>,
    at: usize,
    _output: PhantomData<U>,
}

impl<T, U> Drop for Abandon<'_, T, U> {
    fn drop(&mut self) {
        let (base, len) = (self.cells.as_mut_ptr(), self.cells.len());
        // SAFETY: the cells count no value from now on: what they held is dropped below.
        unsafe { self.cells.set_len(0) };
        let outputs = unwind::each_despite_panics(0..self.at, |index| {
            // SAFETY: outputs `0..at` are initialised and not read yet; each dropped once.
            unsafe { ptr::drop_in_place(base.cast::<U>().add(index)) }
        });
        let values = unwind::each_despite_panics(self.at + 1..len, |index| {
            // SAFETY: values `at + 1..len` are in place and not dropped; each dropped once.
            unsafe { ptr::drop_in_place(base.add(index)) }
        });
        // This runs only while `restore`'s panic unwinds: later panics are dropped.
        let _ = (outputs, values);
    }
}

/// Whether a `Vec<U>` of `len` outputs may take over the storage of `capacity` values `T`:
/// `U` is not zero-sized, has the values' alignment and is no larger than a value, the storage
/// is a whole number of `U`s, and the spare capacity that leaves is small (at most
/// [`MAX_SPARE`] bytes of storage, or at most twice the outputs' size).
#[inline]
fn reuses_storage<T, U>(len: usize, capacity: usize) -> bool {
    let capacity_bytes = capacity * size_of::<T>();
    size_of::<U>() != 0
        && align_of::<U>() == align_of::<T>()
        && size_of::<U>() <= size_of::<T>()
        && capacity_bytes % size_of::<U>() == 0
        && (capacity_bytes <= MAX_SPARE || capacity_bytes <= 2 * len * size_of::<U>())
}

/// Outputs made by a pass and not handed over yet (one, or a `Vec` of them): dropped, if a
/// panic unwinds first, as [`unwind::drop_all`] drops (a `Vec` item by item), so that an output
/// whose `Drop` panics then does not abort; handed over with [`into_inner`](Made::into_inner).
struct Made<U: MadeOutputs>(U);

/// What [`Made`] holds: how to drop it despite panics.
trait MadeOutputs {
    fn drop_despite_panics(&mut self);
}

impl<U> MadeOutputs for Vec<U> {
    fn drop_despite_panics(&mut self) {
        unwind::drop_all(mem::take(self));
    }
}

/// One output, in a `Some` until dropped.
struct One<U>(Option<U>);

impl<U> MadeOutputs for One<U> {
    fn drop_despite_panics(&mut self) {
        unwind::drop_all(self.0.take());
    }
}

impl<U: MadeOutputs> Drop for Made<U> {
    fn drop(&mut self) {
        self.0.drop_despite_panics();
    }
}

impl<U> Made<Vec<U>> {
    /// The outputs, handed over.
    fn into_vec(self) -> Vec<U> {
        let mut this = ManuallyDrop::new(self);
        mem::take(&mut this.0)
    }
}

impl<U> Made<One<U>> {
    /// The output, handed over.
    #[inline(always)]
    fn into_inner(self) -> U {
        let mut this = ManuallyDrop::new(self);
        this.0
            .0
            .take()
            .unwrap_or_else(|| unreachable!("an output made is handed over once"))
    }
}

/// The storage of [`JoinArena::take_vec_with`] while it works in place: on unwind, drops the
/// outputs written and the cells not yet dropped, and frees the block.
struct InPlace<C, U> {
    base: NonNull<C>,
    len: usize,
    capacity: usize,
    /// Outputs `0..written` are initialised.
    written: usize,
    /// Cells `0..dropped` have been dropped (or are being dropped).
    dropped: usize,
    _types: PhantomData<(C, U)>,
}

impl<C, U> Drop for InPlace<C, U> {
    fn drop(&mut self) {
        // The storage is freed by this guard whatever the drops below do.
        let _free = FreeBlock::<C> {
            base: self.base,
            capacity: self.capacity,
        };
        let (cells, outputs) = (self.base.as_ptr(), self.base.as_ptr().cast::<U>());
        // Each drop may panic too: the others are dropped all the same.
        let rest = unwind::each_despite_panics(self.dropped..self.len, |index| {
            // SAFETY: cells `dropped..len` are initialised and not dropped yet (the fields'
            // invariants); each is dropped once.
            unsafe { ptr::drop_in_place(cells.add(index)) }
        });
        let written = unwind::each_despite_panics(0..self.written, |index| {
            // SAFETY: outputs `0..written` are initialised; each is dropped once.
            unsafe { ptr::drop_in_place(outputs.add(index)) }
        });
        // This runs only while the pass's panic unwinds: later panics are dropped.
        let _ = (rest, written);
    }
}

/// Frees the block of a `Vec<C>` of `capacity` elements when dropped.
struct FreeBlock<C> {
    base: NonNull<C>,
    capacity: usize,
}

impl<C> Drop for FreeBlock<C> {
    fn drop(&mut self) {
        // SAFETY: the block was allocated by a `Vec<C>` with this capacity; length 0 drops no
        // element.
        drop(unsafe { Vec::from_raw_parts(self.base.as_ptr(), 0, self.capacity) });
    }
}

impl<T> JoinArena<T> {
    /// The poll loop's state and the values with their wake table, as the loop reaches them.
    ///
    /// # Panics
    /// If the arena is not armed, with the message "JoinArena polled before it was armed".
    #[inline]
    fn armed_slots(&mut self) -> (&mut Rounds, ArmedSlots<'_, T>) {
        let Self { cells, armed } = self;
        let Armed { table, rounds } = armed
            .as_mut()
            .expect("JoinArena polled before it was armed");
        (rounds, ArmedSlots { cells, table })
    }
}

/// Value `index` of `cells`, pinned, reached through the `Vec`'s pointer: indexing or
/// iterating the slice makes a reference covering every value, and a shared one (some of std's
/// slice methods make one) takes away the borrows that pending values hold into themselves.
///
/// # Panics
/// If `index` is out of bounds.
#[inline]
fn pinned<T>(cells: &mut Cells<T>, index: usize) -> Pin<&mut T> {
    assert!(
        index < cells.len(),
        "join arena index {index} out of bounds ({} values)",
        cells.len()
    );
    // SAFETY: `index < len`, so the pointer is to an initialised value of the buffer; the
    // cells are a `Vec`'s parts, never grown, shrunk or moved out of while the arena lives
    // (`take_vec_with` drops each value in place first), so the value stays where it is until
    // it is dropped; `&mut Cells` gives exclusive access for the returned borrow's lifetime.
    unsafe { Pin::new_unchecked(&mut *cells.as_mut_ptr().add(index)) }
}

/// The owner words of a join arena's wake table as the values' marks.
#[inline(always)]
fn marks(words: &mut [u64]) -> &mut [Mark] {
    // SAFETY: `Mark` is `repr(C, align(8))`, two `u32`s: eight bytes with no padding, valid
    // for any bits, aligned as a `u64`; so the words are as many marks, borrowed as long.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<Mark>(), words.len()) }
}

/// The values of an armed [`JoinArena`] with its wake table: its storage, as the poll loop
/// reaches it. A value's id is its index, and its entry too.
struct ArmedSlots<'a, T> {
    cells: &'a mut Cells<T>,
    table: &'a mut WakeTable,
}

impl<T> Marks for ArmedSlots<'_, T> {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        marks(self.table.owner_words()).mark(id)
    }
}

impl<T> PollStorage<T> for ArmedSlots<'_, T> {
    /// A value polled before the arena was armed was given the caller's waker, not its own.
    const MAY_WAIT_UNBOUND: bool = true;

    #[inline(always)]
    fn count(&self) -> usize {
        self.cells.len()
    }

    #[inline(always)]
    fn parent_word(&self) -> Option<&ParentWord> {
        Some(self.table.parent_word())
    }

    fn register(&self, waker: &Waker) {
        self.table.register(waker);
    }

    fn drain(&mut self, mode: Drain, round: u32, ready: &mut Queue, deferred: &mut Queue) -> bool {
        let (words, layout, owner) = self.table.ready_and_owner_words();
        let marks = marks(owner);
        let last = ready.last();
        // SAFETY: the table's words and its layout; a bit of a summary word is set only by
        // a waker's climb (the owner only sets `BUSY` and clears).
        unsafe {
            ready_set::drain(words, layout, mode, |index| {
                poll::file(marks, index as u32, round, ready, deferred);
            })
        };
        ready.last() != last
    }

    #[inline(always)]
    fn poll_slot<const WATCH: bool, const UNLINK: bool, R>(
        &mut self,
        id: u32,
        take_wake: bool,
        round: u32,
        poll: impl FnOnce(Key, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
        _panicked: impl FnOnce(&ParentWord),
    ) -> Result<Option<Polled<R>>, unwind::Kept> {
        if UNLINK {
            self.mark(id).next = UNLINKED;
        }
        let key = Key::new(id, 0);
        // Checks that `id` is below the number of values, which is the table's number of
        // entries (made with one per value; the values never change in number).
        let value = pinned(self.cells, id as usize);
        if take_wake {
            // SAFETY: `id` is an entry of the table (above), so its bit is in the ready set's
            // first level.
            unsafe { ready_set::take_unchecked(self.table.words(), id as usize) };
        }
        // SAFETY: `id` is an entry of the table (above).
        let waker = unsafe { self.table.borrowed_waker_unchecked(id as usize) };
        // A panic goes on to the owner, a join, which drops every value.
        // Not watched: every wake of a join's value goes through the ready set.
        let step = poll(key, value, &mut Context::from_waker(&waker));
        let polled_before =
            matches!(step, Step::Pending) && poll::mark_polled(self.mark(id), round);
        Ok(Some(Polled {
            key,
            entry: id,
            step,
            woken: false,
            polled_before,
        }))
    }

    #[inline(always)]
    fn is_woken(&self, _id: u32, entry: u32) -> bool {
        // SAFETY: `entry` is the one `poll_slot` gave, the entry of one of the arena's values,
        // so its bit is in the ready set's first level.
        unsafe { ready_set::is_woken_unchecked(self.table.words(), entry as usize) }
    }

    #[inline(always)]
    fn holds_no_waker(&self, _id: u32, entry: u32) -> bool {
        // Whether no waker of this value's is alive, read before its bit: Acquire pairs with
        // the Release of a waker's drop, so a wake through a waker that is gone sets its bit by
        // then, and seen by `is_woken`.
        self.table
            .entry_state(entry as usize)
            .load(Ordering::Acquire)
            == 0
    }

    #[inline(always)]
    fn remove(&mut self, _id: u32, _: &mut Rounds) {
        // The value stays in place, its output with it.
    }
}

impl<T> fmt::Debug for JoinArena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinArena")
            .field("len", &self.cells.len())
            .field("armed", &self.armed.is_some())
            .finish_non_exhaustive()
    }
}
