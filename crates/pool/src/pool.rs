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
    /// first). Never waits, and allocates nothing. Looks in the calling thread's stock first,
    /// then takes a batch from the pool's shared list, then gathers the other threads' stocks
    /// (see [*How it works*](crate#how-it-works)).
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
