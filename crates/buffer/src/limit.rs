//! [`Limit`]: a concurrency that a handle changes while the buffers it steers run, a budget
//! they share; [`Steering`]: what a buffer's type says of its handles, so that a buffer without
//! one pays nothing for them.

use core::fmt;
use core::task::Context;

use pinfold_arena::AtomicWaker;

use crate::sync::{Arc, AtomicUsize, Ordering, fence};

/// A concurrency that can be changed while buffers run, and that several buffers may share: a
/// handle, `Clone + Send + Sync`, whose [`set`](Self::set) any thread may call. Give it to a
/// buffer with [`UnorderedBuffer::limit`](crate::UnorderedBuffer::limit),
/// [`OrderedBuffer::limit`](crate::OrderedBuffer::limit) or the try buffers' `limit`; given
/// to [`FutureQueue::limit`](crate::FutureQueue::limit) (or the grouped queue's), it sets the
/// max weight instead, within the one the queue was made with, and its units are weight; given
/// to [`FutureQueueGrouped::group_limit`](crate::FutureQueueGrouped::group_limit), a group's.
///
/// # A shared budget
///
/// Every buffer whose concurrency one `Limit` steers (its clones are the same limit) draws
/// from one budget: the futures they run *together* are at most the limit. So one limit
/// steers every call a service makes to one backend, from several streams at once, and what
/// an [`Adaptive`](crate::Adaptive) limit has learnt carries over from one batch's buffer to
/// the next. [`in_use`](Self::in_use) says how many of its units the buffers hold. A buffer
/// holds a unit for each future it runs (a future queue: its weight) and gives it back when
/// the future finishes, or is dropped (also when its poll or `Drop` panics), or the buffer
/// is. An unordered buffer or a future queue [driven](crate::ProgressStream::poll_progress)
/// keeps the unit of a finished future while its output waits in its slot; an ordered
/// buffer gives it back as the output joins those held for the order (its
/// [`window`](crate::OrderedBuffer::window) bounds those). A buffer that waits for a unit is
/// woken when another gives one back. A budget does not divide itself fairly: whichever
/// buffer is polled when a unit is free takes it. A limit given to a buffer that already
/// runs futures counts them from then on, as if they had started under it (the budget may
/// be overdrawn until they finish, as after a lowering).
///
/// Without the `std` feature a limit steers one buffer at a time: giving it to a second
/// while the first is alive panics, and so does giving it to one buffer twice (as its
/// concurrency and its window, or as its concurrency again) (the waiting buffers are kept in
/// a list under a lock, which needs `std`). A new buffer after the first is dropped is fine
/// either way.
///
/// # What a change does
///
/// - **Lowering** lets the futures already running finish: none is cancelled. No future
///   starts until fewer than the new limit run; from then on at most the new limit run.
/// - **Raising** starts more futures at the buffers' next poll, and wakes each buffer's task
///   that waits for room to start one (a raise is never lost while a buffer is parked).
///
/// # Range
///
/// A limit is at least 1: [`new(0)`](Self::new) and [`set(0)`](Self::set) panic. A buffer's
/// arena is allocated once, for the concurrency it was made with (or its
/// [`window`](crate::OrderedBuffer::window), if smaller): that is its *capacity*, and a
/// limit above it runs the capacity, no more. So the useful range for one buffer is
/// `1..=capacity`; make the buffer with the largest concurrency you may want, and start the
/// limit lower.
///
/// A buffer given a handle has [`Steered`] as its type's last parameter
/// (`UnorderedBuffer<St, Steered>`); one without keeps [`Fixed`], the default, and its polls
/// do not look for a handle.
///
/// # Example
///
/// ```
/// use futures::{StreamExt, stream};
/// use pinfold::{BufferExt, Limit};
///
/// let limit = Limit::new(2);
/// let buffer = stream::iter(1..=8u32)
///     .map(|n| async move { n * 10 })
///     .unordered_buffer(16) // room for up to 16; 2 to begin with
///     .limit(limit.clone());
/// limit.set(4); // from another task or thread, at any time
/// let mut outputs: Vec<u32> = futures::executor::block_on(buffer.collect());
/// outputs.sort_unstable();
/// assert_eq!(outputs, [10, 20, 30, 40, 50, 60, 70, 80]);
/// assert_eq!(limit.get(), 4);
/// assert_eq!(limit.in_use(), 0);
/// ```
#[derive(Clone)]
pub struct Limit {
    shared: Arc<Shared>,
}

struct Shared {
    value: AtomicUsize,
    /// The units the buffers whose concurrency this limit steers hold together.
    used: AtomicUsize,
    /// How many seats (a buffer's concurrency or window) are taken.
    seats: AtomicUsize,
    /// The wakers of the buffers steered, each woken by a raise or a unit given back.
    #[cfg(feature = "std")]
    waiters: crate::sync::Mutex<alloc::vec::Vec<Arc<AtomicWaker>>>,
    /// The one buffer's task, woken by a raise.
    #[cfg(not(feature = "std"))]
    task: AtomicWaker,
}

impl Limit {
    /// A limit of `limit` futures at once.
    ///
    /// # Panics
    /// If `limit` is 0, with the message `Limit: a limit must be at least 1`.
    #[track_caller]
    pub fn new(limit: usize) -> Self {
        assert!(limit > 0, "Limit: a limit must be at least 1");
        Self {
            shared: Arc::new(Shared {
                value: AtomicUsize::new(limit),
                used: AtomicUsize::new(0),
                seats: AtomicUsize::new(0),
                #[cfg(feature = "std")]
                waiters: crate::sync::Mutex::new(alloc::vec::Vec::new()),
                #[cfg(not(feature = "std"))]
                task: AtomicWaker::new(),
            }),
        }
    }

    /// The limit now, as last set (a buffer runs at most its capacity, whatever this says).
    pub fn get(&self) -> usize {
        // Relaxed: the value is a hint read on each poll; a raise that a poll misses is
        // delivered by the wake in `set`, ordered by the fences around the registration.
        self.shared.value.load(Ordering::Relaxed)
    }

    /// How many units the buffers whose concurrency this limit steers hold now: one for each
    /// future they run (a future queue: its weight), and for each output an unordered buffer
    /// or a future queue keeps in its slot while driven (see
    /// [*A shared budget*](Self#a-shared-budget)).
    pub fn in_use(&self) -> usize {
        self.shared.used.load(Ordering::Relaxed)
    }

    /// Sets the limit to `limit`; a raise wakes the tasks of the buffers waiting for room.
    ///
    /// # Panics
    /// If `limit` is 0, with the message `Limit: a limit must be at least 1`. If the waker of a
    /// task a raise wakes panics: the limit is set and every other waiting task woken first,
    /// then the first such panic propagates.
    #[track_caller]
    pub fn set(&self, limit: usize) {
        assert!(limit > 0, "Limit: a limit must be at least 1");
        #[cfg(feature = "std")]
        if let Some(panic) = self.store(limit) {
            std::panic::resume_unwind(panic);
        }
        #[cfg(not(feature = "std"))]
        self.store(limit);
    }

    /// Stores `limit` as [`set`](Self::set) does, without waking anyone: for a caller that
    /// stores under its own lock (an [`Adaptive`](crate::Adaptive) limit, so that its stores
    /// come in the order of its updates) and wakes with [`wake_quietly`](Self::wake_quietly)
    /// once it has let go of it, so that no waker (user code) runs under the lock. Returns
    /// whether this was a raise.
    #[cfg(feature = "std")]
    pub(crate) fn store_quietly(&self, limit: usize) -> bool {
        // SeqCst: as in `store`.
        limit > self.shared.value.swap(limit, Ordering::SeqCst)
    }

    /// Wakes the tasks of the buffers waiting for room, after a raise by
    /// [`store_quietly`](Self::store_quietly), from a future as it finishes: a panic of a
    /// woken task's waker is that task's, and is dropped here rather than lose the future's
    /// output.
    #[cfg(feature = "std")]
    pub(crate) fn wake_quietly(&self) {
        drop(self.wake_all());
    }

    /// Stores `limit`; a raise wakes the tasks of the buffers waiting for room, and returns
    /// the first panic of their wakers.
    #[cfg(feature = "std")]
    fn store(&self, limit: usize) -> Option<alloc::boxed::Box<dyn core::any::Any + Send>> {
        // SeqCst pairs with the SeqCst fence in `Seat::register` after a waiter registers:
        // either its next load sees the new value, or this store comes after the registration
        // and the wake below finds the task.
        let old = self.shared.value.swap(limit, Ordering::SeqCst);
        if limit > old { self.wake_all() } else { None }
    }

    /// Stores `limit`; a raise wakes the task of the buffer waiting for room.
    #[cfg(not(feature = "std"))]
    fn store(&self, limit: usize) {
        // SeqCst: as with `std`.
        let old = self.shared.value.swap(limit, Ordering::SeqCst);
        if limit > old {
            self.shared.task.wake();
        }
    }

    /// Whether `other` is this limit (a clone of it, or itself).
    pub(crate) fn is(&self, other: &Limit) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// A seat for a buffer: its hold on the limit, given back when dropped.
    ///
    /// # Panics
    /// Without the `std` feature, if another buffer's seat on this limit is alive.
    #[track_caller]
    pub(crate) fn attach(self) -> Seat {
        let taken = self.shared.seats.fetch_add(1, Ordering::Relaxed);
        #[cfg(not(feature = "std"))]
        if taken > 0 {
            self.shared.seats.fetch_sub(1, Ordering::Relaxed);
            panic!("Limit: without the `std` feature a limit steers one buffer at a time");
        }
        #[cfg(feature = "std")]
        {
            let _ = taken;
            let waker = Arc::new(AtomicWaker::new());
            self.shared.lock_waiters().push(waker.clone());
            Seat {
                limit: self,
                held: 0,
                waker,
            }
        }
        #[cfg(not(feature = "std"))]
        Seat {
            limit: self,
            held: 0,
        }
    }

    /// Takes up to `want` units of the budget; returns how many it took.
    fn take(&self, want: usize) -> usize {
        self.take_granted(|free| free.min(want))
    }

    /// Takes `want` units of the budget if that many are free; `false` (taking none) if not.
    fn take_all(&self, want: usize) -> bool {
        self.take_granted(|free| if free >= want { want } else { 0 }) == want
    }

    /// Takes what `grant` allows of the units free now (it is asked again if another buffer
    /// takes or gives meanwhile); returns how many it took.
    fn take_granted(&self, grant: impl Fn(usize) -> usize) -> usize {
        let shared = &*self.shared;
        // SeqCst: a unit given back (`give`) or a raise (`set`) that this misses comes after
        // the waiter's registration in their total order, and their wake finds it.
        let mut used = shared.used.load(Ordering::SeqCst);
        loop {
            let got = grant(shared.value.load(Ordering::SeqCst).saturating_sub(used));
            if got == 0 {
                return 0;
            }
            match shared.used.compare_exchange_weak(
                used,
                used + got,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return got,
                Err(now) => used = now,
            }
        }
    }

    /// Gives `units` back to the budget, waking the other buffers that may wait for one.
    fn give(&self, units: usize) {
        // SeqCst: see `take`.
        self.shared.used.fetch_sub(units, Ordering::SeqCst);
        // One buffer alone gives back only in its own poll (or as it is dropped): it needs no
        // wake. (Without `std` there is only one.)
        //
        // The fence pairs with the one in `Seat::register`, as in Dekker's handshake: a buffer
        // takes its seat, registers and fences, then loads `used`; this gives back, fences,
        // then loads `seats`. Either its load sees the unit given back, or this load sees its
        // seat and the wake below finds it. Without the fence here, the pairing rests on a
        // SeqCst load being ordered after the other thread's fence, which loom does not model
        // (it treats SeqCst accesses as AcqRel), and its model of two buffers found this load
        // reading one seat while the other buffer waited.
        #[cfg(feature = "std")]
        fence(Ordering::SeqCst);
        #[cfg(feature = "std")]
        if self.shared.seats.load(Ordering::SeqCst) > 1 {
            // Another buffer's task's waker that panics is that task's: its panic is dropped
            // here, where it would lose this buffer's output (the unit comes back as the
            // output goes out).
            drop(self.wake_all());
        }
    }

    /// Wakes every buffer's task that registered since its last wake, each outside the lock
    /// (a waker is user code, which may drop a buffer and so change the list), and each also
    /// if one before it panics: returns the first panic.
    ///
    /// The list is walked from its end, one waker taken (an `Arc` clone) under the lock at a
    /// time, so that nothing is allocated per unit given back. A waker removed meanwhile (its
    /// buffer dropped) moves those after it down by one: walking down, those are visited
    /// again (a spare wake), never skipped. One pushed meanwhile is after the walk: its buffer
    /// takes its units after the change that this wake is for.
    #[cfg(feature = "std")]
    fn wake_all(&self) -> Option<alloc::boxed::Box<dyn core::any::Any + Send>> {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        let mut first_panic = None;
        let mut next = usize::MAX;
        loop {
            let waker = {
                let waiters = self.shared.lock_waiters();
                next = next.min(waiters.len());
                let Some(at) = next.checked_sub(1) else {
                    break;
                };
                next = at;
                waiters[at].clone()
            };
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                first_panic.get_or_insert(panic);
            }
        }
        first_panic
    }
}

#[cfg(feature = "std")]
impl Shared {
    fn lock_waiters(&self) -> crate::sync::MutexGuard<'_, alloc::vec::Vec<Arc<AtomicWaker>>> {
        // A panic under the lock leaves the list whole (each change is one push or removal).
        self.waiters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl fmt::Debug for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limit")
            .field("limit", &self.get())
            .field("in_use", &self.in_use())
            .finish()
    }
}

/// A buffer's hold on a [`Limit`], for its concurrency or its window: the units it took of
/// the budget (a concurrency's), and its own waker in the limit's list. Dropping it gives its
/// units back and leaves the list.
pub struct Seat {
    limit: Limit,
    held: usize,
    #[cfg(feature = "std")]
    waker: Arc<AtomicWaker>,
}

impl Seat {
    /// Whether this is a seat on `limit`.
    pub(crate) fn is_on(&self, limit: &Limit) -> bool {
        self.limit.is(limit)
    }

    /// The limit's value now.
    pub(crate) fn get(&self) -> usize {
        self.limit.get()
    }

    /// How many of `room` units may start while the buffer has `running` in use: the units it
    /// holds beyond `running` are given back first, then up to `room` taken from the budget.
    /// If the budget stops them, the task is registered first to be woken when a unit comes
    /// back or the limit rises, so one after this call wakes it. The units taken count as held
    /// before the task's waker is registered: if its `clone` (or the `drop` of the waker it
    /// replaces) panics, they go back when the buffer settles or is dropped.
    #[inline(never)]
    pub(crate) fn room(&mut self, running: usize, room: usize, cx: &mut Context<'_>) -> usize {
        self.settle(running);
        let mut got = self.limit.take(room);
        self.held += got;
        if got < room {
            self.register(cx);
            let more = self.limit.take(room - got);
            self.held += more;
            got += more;
        }
        got
    }

    /// Whether `units` more (a future's weight) may start while the buffer has `running` in
    /// use, all of them or none: taken from the budget if so. If not, the task is registered
    /// to be woken when units come back or the limit rises. All or none, so that buffers
    /// waiting for more than is free do not take part of it and give it back by turns, each
    /// waking the other.
    #[inline(never)]
    pub(crate) fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool {
        self.settle(running);
        let taken = self.limit.take_all(units) || {
            self.register(cx);
            self.limit.take_all(units)
        };
        if taken {
            self.held += units;
        }
        taken
    }

    /// The buffer has `running` units in use, for futures that started before this seat was
    /// taken: the units it holds short of them are taken from the budget whatever is free (as
    /// after a lowering, the budget may be overdrawn until they finish), so that they count.
    pub(crate) fn hold(&mut self, running: usize) {
        if running > self.held {
            // SeqCst: as in `take`.
            self.limit
                .shared
                .used
                .fetch_add(running - self.held, Ordering::SeqCst);
            self.held = running;
        }
    }

    /// The buffer has `running` units in use: those it holds beyond go back to the budget.
    #[inline]
    pub(crate) fn settle(&mut self, running: usize) {
        if self.held > running {
            let units = self.held - running;
            self.held = running;
            self.limit.give(units);
        }
    }

    /// Whether one more may start while `running` are in use, against the limit's value
    /// alone (a window's: not a budget shared with other buffers); if not, the task is
    /// registered to be woken by a raise.
    pub(crate) fn admits(&self, running: usize, cx: &mut Context<'_>) -> bool {
        if self.limit.get() > running {
            return true;
        }
        self.register(cx);
        // SeqCst: see `Limit::set`.
        self.limit.shared.value.load(Ordering::SeqCst) > running
    }

    /// Registers the task to be woken by a raise or a unit given back, then fences, so that
    /// a load after this sees what came before that wake's store.
    fn register(&self, cx: &mut Context<'_>) {
        #[cfg(feature = "std")]
        self.waker.register(cx.waker());
        #[cfg(not(feature = "std"))]
        self.limit.shared.task.register(cx.waker());
        fence(Ordering::SeqCst);
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        // The units first, while this seat still counts: a buffer left alone with them must
        // be woken too (`give` wakes only when another seat is taken).
        if self.held > 0 {
            let units = core::mem::take(&mut self.held);
            self.limit.give(units);
        }
        let shared = &*self.limit.shared;
        #[cfg(feature = "std")]
        shared
            .lock_waiters()
            .retain(|waker| !Arc::ptr_eq(waker, &self.waker));
        shared.seats.fetch_sub(1, Ordering::SeqCst);
    }
}

impl fmt::Debug for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Seat")
            .field("limit", &self.limit)
            .field("held", &self.held)
            .finish()
    }
}

/// What steers a buffer's concurrency (and an ordered buffer's window): [`Fixed`], the
/// numbers it was made with, or [`Steered`], [`Limit`] handles. A buffer's type carries it,
/// `Fixed` by default, so that a buffer without a handle does not look for one.
/// [`limit`](crate::UnorderedBuffer::limit) and
/// [`window_limit`](crate::OrderedBuffer::window_limit) make a buffer `Steered`. Sealed.
pub trait Steering: sealed::Sealed {}

/// The [`Steering`] of a buffer without handles: the concurrency and window it was made with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fixed;

/// The [`Steering`] of a buffer given a [`Limit`] for its concurrency, or its window, or both.
#[derive(Debug, Default)]
pub struct Steered {
    concurrency: Option<Seat>,
    window: Option<Seat>,
}

impl Steering for Fixed {}
impl Steering for Steered {}

/// Both take a seat already [taken](Limit::attach): the public method that takes the user's
/// limit attaches it itself, so that its panic names the user's line (a closure in between
/// would lose `#[track_caller]`). A seat they replace is dropped, its units given back.
impl Steered {
    pub(crate) fn with_concurrency(mut self, seat: Seat) -> Self {
        self.concurrency = Some(seat);
        self
    }

    pub(crate) fn with_window(mut self, seat: Seat) -> Self {
        self.window = Some(seat);
        self
    }
}

/// What the buffers ask of their [`Steering`], out of the public trait.
pub(crate) mod sealed {
    use core::task::Context;

    use super::{Fixed, Seat, Steered};

    pub trait Sealed {
        /// Whether a handle may steer the buffer: `false` for [`Fixed`], whose buffers skip
        /// the settling altogether.
        const STEERED: bool;
        /// How many of `room` units (futures, or weight) may start while the buffer has
        /// `running` in use. A buffer that starts fewer than it was granted, or whose futures
        /// finished, calls [`settle`](Self::settle) with what it has in use after.
        fn room(&mut self, running: usize, room: usize, cx: &mut Context<'_>) -> usize;
        /// Whether `units` more may start while the buffer has `running` in use, all or none
        /// (a future's weight); if not, the task is woken when that may have changed.
        fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool;
        /// The buffer has `running` units in use now (after a refill, or an output).
        fn settle(&mut self, running: usize);
        /// The buffer has `running` units in use as it is given a handle: they count against
        /// it, started before it or not.
        fn hold(&mut self, running: usize);
        /// The concurrency's seat, if any.
        fn concurrency(&self) -> Option<&Seat>;
        /// The window's seat, if any.
        fn window(&self) -> Option<&Seat>;
        /// The same seats, as [`Steered`].
        fn steered(self) -> Steered;
    }

    impl Sealed for Fixed {
        const STEERED: bool = false;

        #[inline(always)]
        fn room(&mut self, _: usize, room: usize, _: &mut Context<'_>) -> usize {
            room
        }

        #[inline(always)]
        fn admit(&mut self, _: usize, _: usize, _: &mut Context<'_>) -> bool {
            true
        }

        #[inline(always)]
        fn settle(&mut self, _: usize) {}

        #[inline(always)]
        fn hold(&mut self, _: usize) {}

        #[inline(always)]
        fn concurrency(&self) -> Option<&Seat> {
            None
        }

        #[inline(always)]
        fn window(&self) -> Option<&Seat> {
            None
        }

        fn steered(self) -> Steered {
            Steered::default()
        }
    }

    impl Sealed for Steered {
        const STEERED: bool = true;

        #[inline]
        fn room(&mut self, running: usize, room: usize, cx: &mut Context<'_>) -> usize {
            match &mut self.concurrency {
                Some(seat) => seat.room(running, room, cx),
                None => room,
            }
        }

        #[inline]
        fn admit(&mut self, running: usize, units: usize, cx: &mut Context<'_>) -> bool {
            match &mut self.concurrency {
                Some(seat) => seat.admit(running, units, cx),
                None => true,
            }
        }

        #[inline]
        fn settle(&mut self, running: usize) {
            if let Some(seat) = &mut self.concurrency {
                seat.settle(running);
            }
        }

        fn hold(&mut self, running: usize) {
            if let Some(seat) = &mut self.concurrency {
                seat.hold(running);
            }
        }

        fn concurrency(&self) -> Option<&Seat> {
            self.concurrency.as_ref()
        }

        fn window(&self) -> Option<&Seat> {
            self.window.as_ref()
        }

        fn steered(self) -> Steered {
            self
        }
    }
}
