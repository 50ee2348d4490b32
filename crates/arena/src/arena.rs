//! The arena: fixed storage for pinned values, an owner-side queue of slots to poll, and the
//! wake table shared with the wakers.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::hub::Hub;
use crate::ready_set;
use crate::wake_table::{Parent, WakeTable};

/// The end of an intrusive list.
const NIL: u32 = u32::MAX;

/// What polling a value came to; returned by the closure given to [`Arena::poll_next`] and
/// [`Arena::poll_queued`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<R> {
    /// No output: the value is polled again once its waker fires.
    Pending,
    /// An output; the value stays in its slot and is polled again only when its waker fires
    /// (a finished value kept for later, such as a join's output).
    Keep(R),
    /// An output; the value stays and is queued to be polled again without a wake (a stream
    /// that may have more items ready).
    Repoll(R),
    /// An output; the value is dropped in place and its slot freed before the output is handed
    /// on (a finished future).
    Done(R),
}

/// What [`Arena::poll_queued`] came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued<R> {
    /// The value in slot `.0` produced `.1`.
    Ready(usize, R),
    /// The queue of slots to poll is empty.
    Empty,
    /// The budget is spent while slots are still queued: the caller should wake its task and
    /// return `Pending`.
    Yield,
}

/// The fairness budget of one poll call.
///
/// One call polls each value at most once, and stops once it has polled as many values as
/// the set held when the call started, or once two values woke themselves during their own
/// poll. A set made of several arenas passes one budget through all of them.
#[derive(Debug, Clone)]
pub struct Budget {
    limit: usize,
    polled: usize,
    visited: usize,
    self_woken: u8,
}

impl Budget {
    /// A budget for a call that starts with `len` values in the set.
    pub fn new(len: usize) -> Self {
        Self {
            limit: len.max(1),
            polled: 0,
            visited: 0,
            self_woken: 0,
        }
    }

    /// Whether the call must yield now.
    pub fn is_spent(&self) -> bool {
        self.polled >= self.limit || self.self_woken >= 2
    }

    /// How many queued slots the call has taken so far, including those whose value was gone.
    /// Once this is non-zero, a slot woken again may already have been polled in this call, so
    /// the caller must not collect new wakes into the queue and poll them in the same call.
    pub fn visited(&self) -> usize {
        self.visited
    }

    /// How many values the call has polled so far.
    pub fn polled(&self) -> usize {
        self.polled
    }
}

struct Slot<T> {
    value: Option<T>,
    /// Next free slot while this one is free.
    next_free: u32,
    /// Next slot in the poll queue while `queued`.
    next_queued: u32,
    queued: bool,
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
    queue_head: u32,
    queue_tail: u32,
}

impl<T> Arena<T> {
    /// An arena of `capacity` slots whose wakes notify the task registered with
    /// [`register`](Arena::register). Allocates twice (none for the slots if `capacity` is 0),
    /// and never again.
    ///
    /// # Panics
    /// If `capacity` is `u32::MAX` or more.
    pub fn new(capacity: usize) -> Self {
        Self::with_parent(
            capacity,
            Parent::Task(crate::atomic_waker::AtomicWaker::new()),
        )
    }

    /// An arena of `capacity` slots whose wakes set bit `bit` of `hub` instead of waking a task
    /// of its own.
    ///
    /// # Panics
    /// If `bit >= Hub::MAX_ARENAS`, or as [`new`](Arena::new).
    pub fn with_hub(capacity: usize, hub: &Hub, bit: usize) -> Self {
        assert!(
            bit < Hub::MAX_ARENAS,
            "hub bit {bit} out of range (a hub serves {} arenas)",
            Hub::MAX_ARENAS
        );
        Self::with_parent(
            capacity,
            Parent::Hub {
                hub: hub.clone(),
                bit: bit as u32,
            },
        )
    }

    fn with_parent(capacity: usize, parent: Parent) -> Self {
        let table = WakeTable::new(capacity, parent);
        let slots = (0..capacity)
            .map(|i| Slot {
                value: None,
                next_free: if i + 1 < capacity {
                    (i + 1) as u32
                } else {
                    NIL
                },
                next_queued: NIL,
                queued: false,
            })
            .collect::<Box<[_]>>();
        Self {
            slots,
            table,
            len: 0,
            free_head: if capacity > 0 { 0 } else { NIL },
            queue_head: NIL,
            queue_tail: NIL,
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

    /// Stores `value` in a free slot, queues the slot to be polled (without any atomic
    /// operation) and returns its index; gives `value` back if the arena is full.
    pub fn insert(&mut self, value: T) -> Result<usize, T> {
        if self.free_head == NIL {
            return Err(value);
        }
        let index = self.free_head as usize;
        let slot = &mut self.slots[index];
        self.free_head = slot.next_free;
        slot.value = Some(value);
        self.len += 1;
        self.enqueue(index);
        Ok(index)
    }

    /// The value in slot `index`, if any.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.slots.get(index)?.value.as_ref()
    }

    /// The value in slot `index`, pinned, if any.
    pub fn get_pin_mut(&mut self, index: usize) -> Option<Pin<&mut T>> {
        let value = self.slots.get_mut(index)?.value.as_mut()?;
        // SAFETY: the slots live in a boxed slice that is never reallocated, and a value is only
        // ever dropped in place (never moved out) unless `T: Unpin`; so it stays pinned.
        Some(unsafe { Pin::new_unchecked(value) })
    }

    /// Drops the value in slot `index` in place and frees the slot; `false` if it was empty.
    ///
    /// If the value's `Drop` panics, the slot is free all the same and the panic propagates.
    pub fn remove(&mut self, index: usize) -> bool {
        let Some(slot) = self.slots.get_mut(index) else {
            return false;
        };
        if slot.value.is_none() {
            return false;
        }
        slot.next_free = self.free_head;
        self.free_head = index as u32;
        self.len -= 1;
        // The bookkeeping is done first, so a panicking `Drop` leaves the arena consistent.
        // Assignment drops in place and writes `None` even if that drop unwinds.
        slot.value = None;
        true
    }

    /// Moves the value out of slot `index` and frees the slot.
    pub fn take(&mut self, index: usize) -> Option<T>
    where
        T: Unpin,
    {
        let value = self.slots.get_mut(index)?.value.take()?;
        self.slots[index].next_free = self.free_head;
        self.free_head = index as u32;
        self.len -= 1;
        Some(value)
    }

    /// Drops every value in place. Storage is kept; nothing is allocated or freed.
    ///
    /// If a value's `Drop` panics, the other values are dropped all the same, and then the
    /// first panic propagates.
    pub fn clear(&mut self) {
        let mut first_panic = None;
        for index in 0..self.slots.len() {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| self.remove(index))) {
                first_panic.get_or_insert(panic);
            }
        }
        if let Some(panic) = first_panic {
            resume_unwind(panic);
        }
    }

    /// The values, with their slot indices, in slot order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (usize, &T)> + '_ {
        Counted {
            inner: self
                .slots
                .iter()
                .enumerate()
                .filter_map(|(i, slot)| Some((i, slot.value.as_ref()?))),
            left: self.len,
        }
    }

    /// The values, pinned, with their slot indices, in slot order.
    pub fn iter_pin_mut(&mut self) -> impl ExactSizeIterator<Item = (usize, Pin<&mut T>)> + '_ {
        Counted {
            inner: self.slots.iter_mut().enumerate().filter_map(|(i, slot)| {
                let value = slot.value.as_mut()?;
                // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
                Some((i, unsafe { Pin::new_unchecked(value) }))
            }),
            left: self.len,
        }
    }

    /// An owned waker for slot `index`: waking it queues the slot as the value's own waker does.
    ///
    /// # Panics
    /// If `index >= capacity`.
    pub fn waker(&self, index: usize) -> Waker {
        self.table.waker(index)
    }

    /// Queues slot `index` to be polled, from the owner's side (no atomic operation).
    pub fn mark_ready(&mut self, index: usize) {
        if self
            .slots
            .get(index)
            .is_some_and(|slot| slot.value.is_some())
        {
            self.enqueue(index);
        }
    }

    /// Registers the task to wake when a slot is woken while none was. Call it before
    /// [`collect_woken`](Arena::collect_woken). Does nothing for an arena made
    /// [`with_hub`](Arena::with_hub): register with the hub instead.
    pub fn register(&self, waker: &Waker) {
        if let Parent::Task(parent) = self.table.header().parent() {
            parent.register(waker);
        }
    }

    /// Moves every slot woken since the last call into the queue of slots to poll; `true` if
    /// the queue is not empty afterwards.
    pub fn collect_woken(&mut self) -> bool {
        let Self {
            slots,
            table,
            queue_head,
            queue_tail,
            ..
        } = self;
        ready_set::drain(table.words(), table.header().ready_layout(), &mut |index| {
            if slots[index].value.is_some() {
                enqueue(slots, queue_head, queue_tail, index);
            }
        });
        self.queue_head != NIL
    }

    /// Whether any slot is queued to be polled.
    pub fn has_queued(&self) -> bool {
        self.queue_head != NIL
    }

    /// Whether a wake may be waiting to be collected. A hint: a wake may land right after.
    pub fn has_woken(&self) -> bool {
        !ready_set::is_empty(self.table.words(), self.table.header().ready_layout())
    }

    /// Polls queued slots, each with its own waker, until one gives an output, the queue is
    /// empty, or `budget` is spent.
    ///
    /// If `f` panics, the value is dropped in place, its slot freed, and the panic resumed.
    pub fn poll_queued<R, F>(&mut self, budget: &mut Budget, f: &mut F) -> Queued<R>
    where
        F: FnMut(usize, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        loop {
            if self.queue_head == NIL {
                return Queued::Empty;
            }
            if budget.is_spent() {
                return Queued::Yield;
            }
            let index = self.dequeue();
            budget.visited += 1;
            let Some(value) = self.slots[index].value.as_mut() else {
                continue;
            };
            budget.polled += 1;
            // SAFETY: as in `get_pin_mut`: the value never moves while in the arena.
            let value = unsafe { Pin::new_unchecked(value) };
            let waker = self.table.borrowed_waker(index);
            let mut cx = Context::from_waker(&waker);
            let step = match catch_unwind(AssertUnwindSafe(|| f(index, value, &mut cx))) {
                Ok(step) => step,
                Err(panic) => {
                    self.remove(index);
                    resume_unwind(panic);
                }
            };
            match step {
                Step::Pending => {
                    if ready_set::is_marked(self.table.words(), index) {
                        budget.self_woken += 1;
                    }
                }
                Step::Keep(out) => return Queued::Ready(index, out),
                Step::Repoll(out) => {
                    self.enqueue(index);
                    return Queued::Ready(index, out);
                }
                Step::Done(out) => {
                    self.remove(index);
                    return Queued::Ready(index, out);
                }
            }
        }
    }

    /// Polls the arena as a stream: the next output of any value, fairly.
    ///
    /// Returns `Ready(None)` when the arena is empty, `Ready(Some((slot, output)))` when a value
    /// gives an output, and `Pending` once every woken value has been polled (the task is woken
    /// when a value's waker fires) or when the [`Budget`] is spent (the task has been woken
    /// already: it yields to let others run).
    pub fn poll_next<R, F>(&mut self, cx: &mut Context<'_>, mut f: F) -> Poll<Option<(usize, R)>>
    where
        F: FnMut(usize, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        let mut budget = Budget::new(self.len);
        self.poll_with_budget(cx, &mut budget, &mut f)
    }

    /// [`poll_next`](Arena::poll_next) with a budget the caller keeps, for a caller that takes
    /// several outputs in one poll of its own (a join): call it again with the same budget
    /// after each output, and each value is still polled at most once.
    pub fn poll_with_budget<R, F>(
        &mut self,
        cx: &mut Context<'_>,
        budget: &mut Budget,
        f: &mut F,
    ) -> Poll<Option<(usize, R)>>
    where
        F: FnMut(usize, Pin<&mut T>, &mut Context<'_>) -> Step<R>,
    {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        loop {
            match self.poll_queued(budget, f) {
                Queued::Ready(index, out) => return Poll::Ready(Some((index, out))),
                Queued::Yield => {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Queued::Empty => {
                    // Register first, so a wake after the collection below wakes the task.
                    self.register(cx.waker());
                    let collected = self.collect_woken();
                    if budget.visited() == 0 && collected {
                        continue;
                    }
                    if collected {
                        // Slots woken during this call: poll them in the next one.
                        cx.waker().wake_by_ref();
                    }
                    return Poll::Pending;
                }
            }
        }
    }

    fn enqueue(&mut self, index: usize) {
        enqueue(
            &mut self.slots,
            &mut self.queue_head,
            &mut self.queue_tail,
            index,
        );
    }

    fn dequeue(&mut self) -> usize {
        let index = self.queue_head as usize;
        let slot = &mut self.slots[index];
        self.queue_head = slot.next_queued;
        slot.queued = false;
        if self.queue_head == NIL {
            self.queue_tail = NIL;
        }
        index
    }
}

/// Appends `index` to the poll queue unless it is queued already.
fn enqueue<T>(slots: &mut [Slot<T>], head: &mut u32, tail: &mut u32, index: usize) {
    let slot = &mut slots[index];
    if slot.queued {
        return;
    }
    slot.queued = true;
    slot.next_queued = NIL;
    if *tail == NIL {
        *head = index as u32;
    } else {
        slots[*tail as usize].next_queued = index as u32;
    }
    *tail = index as u32;
}

impl<T> Drop for Arena<T> {
    fn drop(&mut self) {
        // Wakes that outlive the arena find no task to wake. The values are dropped in place
        // with `slots`, on this thread; the table when its last waker goes.
        if let Parent::Task(parent) = self.table.header().parent() {
            drop(parent.take());
        }
    }
}

impl<T> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Arena")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

/// An iterator that knows how many items are left.
struct Counted<I> {
    inner: I,
    left: usize,
}

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next()?;
        self.left -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}
