//! [`Limit`]: a concurrency that a handle changes while the buffer runs; [`Steering`]: what a
//! buffer's type says of its handles, so that a buffer without one pays nothing for them.

use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::Context;

use alloc::sync::Arc;
use pinfold_arena::AtomicWaker;

/// A concurrency that can be changed while a buffer runs: a handle, `Clone + Send + Sync`,
/// whose [`set`](Self::set) any thread may call. Give it to a buffer with
/// [`UnorderedBuffer::limit`](crate::UnorderedBuffer::limit),
/// [`OrderedBuffer::limit`](crate::OrderedBuffer::limit) or the try buffers' `limit`; given
/// to [`FutureQueue::limit`](crate::FutureQueue::limit) (or the grouped queue's), it sets the
/// max weight instead, within the one the queue was made with.
///
/// # What a change does
///
/// - **Lowering** lets the futures already running finish: none is cancelled. No future
///   starts until fewer than the new limit run; from then on at most the new limit run.
/// - **Raising** starts more futures at the buffer's next poll, and wakes the buffer's task
///   if it waits only for room to start one (a raise is never lost while the buffer is
///   parked).
///
/// # Range
///
/// A limit is at least 1: [`new(0)`](Self::new) and [`set(0)`](Self::set) panic. The buffer's
/// arena is allocated once, for the concurrency it was made with (or its
/// [`window`](crate::OrderedBuffer::window), if smaller): that is its *capacity*, and a
/// limit above it runs the capacity, no more. So the useful range is `1..=capacity`; make the
/// buffer with the largest concurrency you may want, and start the limit lower.
///
/// A `Limit` steers one buffer: giving it (or a clone of it) to a second buffer panics. Its
/// clones are for reading and setting it.
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
/// ```
#[derive(Clone)]
pub struct Limit {
    shared: Arc<Shared>,
}

struct Shared {
    value: AtomicUsize,
    /// The task of the buffer waiting for room, woken by a raise.
    task: AtomicWaker,
    /// Whether a buffer took this limit.
    attached: AtomicBool,
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
                task: AtomicWaker::new(),
                attached: AtomicBool::new(false),
            }),
        }
    }

    /// The limit now, as last set (the buffer runs at most its capacity, whatever this says).
    pub fn get(&self) -> usize {
        // Relaxed: the value is a hint read on each poll; a raise that a poll misses is
        // delivered by the wake in `set`, ordered by the task slot's own AcqRel.
        self.shared.value.load(Ordering::Relaxed)
    }

    /// Sets the limit to `limit`; a raise wakes the buffer's task if it waits for room.
    ///
    /// # Panics
    /// If `limit` is 0, with the message `Limit: a limit must be at least 1`.
    #[track_caller]
    pub fn set(&self, limit: usize) {
        assert!(limit > 0, "Limit: a limit must be at least 1");
        // SeqCst pairs with the SeqCst load in `room` after the task registers: either that
        // load sees the new value, or this store comes after the registration and the wake
        // below finds the task.
        let old = self.shared.value.swap(limit, Ordering::SeqCst);
        if limit > old {
            self.shared.task.wake();
        }
    }

    /// Marks the limit as taken by a buffer.
    #[track_caller]
    pub(crate) fn attach(self) -> Self {
        let taken = self.shared.attached.swap(true, Ordering::Relaxed);
        assert!(!taken, "Limit: a limit steers one buffer only");
        self
    }

    /// How many of `room` futures may start while `running` run. If the limit is what stops
    /// them (it allows fewer than `room`), the task is registered first to be woken by a
    /// raise, so a raise after this call wakes it.
    #[inline(never)]
    pub(crate) fn room(&self, running: usize, room: usize, cx: &mut Context<'_>) -> usize {
        if self.get().saturating_sub(running) >= room {
            return room;
        }
        self.shared.task.register(cx.waker());
        // SeqCst: pairs with the swap in `set` (see there): a raise this load misses wakes the
        // task just registered.
        let limit = self.shared.value.load(Ordering::SeqCst);
        limit.saturating_sub(running).min(room)
    }

    /// Whether one more future may start while `running` run; if not, the task is registered
    /// to be woken by a raise.
    pub(crate) fn admits(&self, running: usize, cx: &mut Context<'_>) -> bool {
        self.room(running, 1, cx) > 0
    }
}

impl fmt::Debug for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Limit").field(&self.get()).finish()
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
    concurrency: Option<Limit>,
    window: Option<Limit>,
}

impl Steering for Fixed {}
impl Steering for Steered {}

/// Both take a limit already [attached](Limit::attach): the public method that takes the
/// user's limit attaches it itself, so that its panic names the user's line (a closure in
/// between would lose `#[track_caller]`).
impl Steered {
    pub(crate) fn with_concurrency(mut self, attached: Limit) -> Self {
        self.concurrency = Some(attached);
        self
    }

    pub(crate) fn with_window(mut self, attached: Limit) -> Self {
        self.window = Some(attached);
        self
    }
}

/// What the buffers ask of their [`Steering`], out of the public trait.
pub(crate) mod sealed {
    use core::task::Context;

    use super::{Fixed, Limit, Steered};

    pub trait Sealed {
        /// How many of `room` units (futures, or weight) may start while the buffer has `running`
        /// in use. A buffer that starts fewer than it was granted, or whose futures finished,
        /// calls [`settle`](Self::settle) with what it has in use after.
        fn room(&mut self, running: usize, room: usize, cx: &mut Context<'_>) -> usize;
        /// The buffer has `running` units in use now (after a refill, or an output).
        fn settle(&mut self, running: usize);
        /// The concurrency's handle, if any.
        fn concurrency(&self) -> Option<&Limit>;
        /// The window's handle, if any.
        fn window(&self) -> Option<&Limit>;
        /// The same handles, as [`Steered`].
        fn steered(self) -> Steered;
    }

    impl Sealed for Fixed {
        #[inline(always)]
        fn room(&mut self, _: usize, room: usize, _: &mut Context<'_>) -> usize {
            room
        }

        #[inline(always)]
        fn settle(&mut self, _: usize) {}

        #[inline(always)]
        fn concurrency(&self) -> Option<&Limit> {
            None
        }

        #[inline(always)]
        fn window(&self) -> Option<&Limit> {
            None
        }

        fn steered(self) -> Steered {
            Steered::default()
        }
    }

    impl Sealed for Steered {
        #[inline]
        fn room(&mut self, running: usize, room: usize, cx: &mut Context<'_>) -> usize {
            match &self.concurrency {
                Some(limit) => limit.room(running, room, cx),
                None => room,
            }
        }

        #[inline]
        fn settle(&mut self, _: usize) {}

        fn concurrency(&self) -> Option<&Limit> {
            self.concurrency.as_ref()
        }

        fn window(&self) -> Option<&Limit> {
            self.window.as_ref()
        }

        fn steered(self) -> Steered {
            self
        }
    }
}
