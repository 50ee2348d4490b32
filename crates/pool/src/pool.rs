//! [`BufferPool`]: the handle.

use core::fmt;

use crate::acquire::Acquire;
use crate::buf::Buf;
use crate::shared::{Inner, InnerRef};

/// A fixed set of equal buffers, allocated once, handed out as [`Buf`]s.
///
/// A cheap handle: clones share the same buffers. `Send + Sync`. Its guarantees are the
/// crate's: [*Order*](crate#order) (first come, first served), [*Wakes*](crate#wakes),
/// [*Memory*](crate#memory), [*Cancellation*](crate#cancellation) and [*Panics*](crate#panics).
///
/// # In a forked child
///
/// A process forked (on unix, by `fork`, which runs the `pthread_atfork` handlers) while other
/// threads use a pool has only the thread that called `fork`. The child may go on using the
/// pool, with these differences:
///
/// - The buffers the other threads had at the fork stay theirs, and never come back: the
///   `Buf`s and packets they held, and the stocks of those caught inside an acquire or a
///   release. [`available`](Self::available) does not count them and no acquire finds them
///   (so the pool's memory is not freed in the child); every other buffer is found as in the
///   parent. [`try_acquire`](Self::try_acquire) and releases never wait for those threads.
/// - The pool's lock is held for a few steps when a task starts or stops waiting, when a
///   release hands a buffer to a waiting task, and when a `try_acquire` finds its thread's
///   stock and the shared list empty. If another thread held it at the fork, it stays held in
///   the child, and [`acquire`](Self::acquire), such a `try_acquire`, and a release while tasks
///   wait block for ever there, as with any lock held at a fork.
/// - Tasks of the parent that waited at the fork keep their places: buffers released in the
///   child go to them first, and their wakers are woken in the child.
///
/// So a child is safe with a pool forked while no task waits for it and no other thread
/// acquires or releases; otherwise it uses a pool of its own.
pub struct BufferPool {
    pub(crate) inner: InnerRef,
}

impl BufferPool {
    /// A pool of `count` buffers of `size` bytes each. Allocates twice (the shared state, and
    /// one block holding every buffer with its bookkeeping) and never again.
    ///
    /// # Panics
    /// If `count` is `u32::MAX` or more, or `count * size` overflows.
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(4, 1500);
    /// assert_eq!(pool.capacity(), 4);
    /// assert_eq!(pool.buffer_size(), 1500);
    /// assert_eq!(pool.available(), 4);
    ///
    /// // A clone is another handle to the same buffers.
    /// let handle = pool.clone();
    /// let buf = handle.try_acquire().unwrap();
    /// assert_eq!(pool.available(), 3);
    /// drop(buf);
    /// assert_eq!(pool.available(), 4);
    /// ```
    pub fn new(count: usize, size: usize) -> Self {
        Self {
            inner: InnerRef::new(count, size),
        }
    }

    /// How many buffers the pool has.
    pub fn capacity(&self) -> usize {
        self.inner.block.count() as usize
    }

    /// How many bytes each buffer has.
    pub fn buffer_size(&self) -> usize {
        self.inner.block.size()
    }

    /// How many buffers are free now, in the pool's shared list and in its threads' stocks.
    /// Exact when no buffer is acquired or released meanwhile; otherwise a snapshot that may
    /// already be out of date. Reads one word per list and one buffer record, whatever the
    /// number of buffers.
    pub fn available(&self) -> usize {
        self.inner.available()
    }

    /// A free buffer, if one is free now and no task waits for one (waiting tasks are served
    /// first). Never waits (but see [*In a forked child*](Self#in-a-forked-child)), and
    /// allocates nothing. Looks in the calling thread's stock first, then takes a batch from
    /// the pool's shared list, then gathers the other threads' stocks (see
    /// [*How it works*](crate#how-it-works)).
    ///
    /// # Example
    ///
    /// ```
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let buf = pool.try_acquire().expect("the pool has a free buffer");
    /// assert!(pool.try_acquire().is_none()); // every buffer is out
    /// drop(buf);
    /// assert!(pool.try_acquire().is_some());
    /// ```
    #[inline]
    pub fn try_acquire(&self) -> Option<Buf> {
        Inner::try_take(self.inner).map(|index| Buf::new(self.inner, index))
    }

    /// A buffer, as soon as one is free: tasks are served in the order they started waiting
    /// (their first poll of the future). See [`Acquire`].
    ///
    /// # Example
    ///
    /// Every buffer is out, so the `acquire` waits; a release on another thread hands the
    /// buffer to it, emptied:
    ///
    /// ```
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::task::{Context, Waker};
    /// use pinfold_pool::BufferPool;
    ///
    /// let pool = BufferPool::new(1, 64);
    /// let mut held = pool.try_acquire().unwrap();
    /// assert!(held.try_extend_from_slice(b"first owner's bytes"));
    ///
    /// let mut waiting = pin!(pool.acquire());
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert!(waiting.as_mut().poll(&mut cx).is_pending());
    ///
    /// std::thread::spawn(move || drop(held)).join().unwrap();
    /// assert_eq!(pool.available(), 0); // handed to the waiter, not to the free list
    /// let buf = futures_executor::block_on(waiting);
    /// assert!(buf.is_empty());
    /// ```
    pub fn acquire(&self) -> Acquire<'_> {
        Acquire::new(self.inner)
    }
}

impl Clone for BufferPool {
    fn clone(&self) -> Self {
        self.inner.add_handle();
        Self { inner: self.inner }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.inner.drop_handle();
    }
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("capacity", &self.capacity())
            .field("buffer_size", &self.buffer_size())
            .field("available", &self.available())
            .finish()
    }
}
