//! [`BufferPool`]: the handle, and what its clones share.

use core::fmt;
use core::task::Waker;

use crate::block::Block;
use crate::buf::Buf;
use crate::free_list::{FreeList, NIL, WAITERS, head, with_head};
use crate::sync::{Arc, Mutex, MutexGuard, Ordering};
use crate::waiters::{Acquire, Waiters};

/// A fixed set of equal buffers, allocated once, handed out as [`Buf`]s.
///
/// A cheap handle: clones share the same buffers. `Send + Sync`. Its guarantees are the
/// crate's: [*Order*](crate#order) (first come, first served), [*Wakes*](crate#wakes),
/// [*Memory*](crate#memory), [*Cancellation*](crate#cancellation) and [*Panics*](crate#panics).
#[derive(Clone)]
pub struct BufferPool {
    pub(crate) inner: Arc<Inner>,
}

/// What the handles, buffers and packets of one pool share.
pub(crate) struct Inner {
    pub(crate) block: Block,
    pub(crate) free: FreeList,
    waiters: Mutex<Waiters>,
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
        let block = Block::new(count, size, |index| {
            if index + 1 < count as u32 {
                index + 1
            } else {
                NIL
            }
        });
        let free = FreeList::new(block.count());
        Self {
            inner: Arc::new(Inner {
                block,
                free,
                waiters: Mutex::new(Waiters::new()),
            }),
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

    /// How many buffers are free now. Exact when no buffer is acquired or released meanwhile;
    /// otherwise a snapshot that may already be out of date. O(free buffers).
    pub fn available(&self) -> usize {
        self.inner.free.len(&self.inner.block)
    }

    /// A free buffer, if one is free now and no task waits for one (waiting tasks are served
    /// first). Never waits, and allocates nothing.
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
        let index = self.inner.free.pop(&self.inner.block)?;
        Some(Buf::new(self.inner.clone(), index))
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
        Acquire::new(self)
    }
}

impl Inner {
    /// The waiter lock. No user code runs with it held (wakers are cloned before it is taken,
    /// dropped and woken after it is released), so no panic can leave the list half-changed,
    /// and a poisoned lock is used as is.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Waiters> {
        #[cfg(feature = "std")]
        return self
            .waiters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(not(feature = "std"))]
        return self.waiters.lock();
    }

    /// With the lock held: pops a free buffer, or, if there is none, sets [`WAITERS`] so that
    /// the next release comes to the lock (and returns `None`: the caller queues).
    pub(crate) fn pop_or_flag_waiters(&self, _locked: &MutexGuard<'_, Waiters>) -> Option<u32> {
        loop {
            if let Some(index) = self.free.pop(&self.block) {
                return Some(index);
            }
            let state = self.free.state.load(Ordering::Relaxed);
            if state & WAITERS != 0 {
                return None;
            }
            if head(state) != NIL {
                continue;
            }
            // Fails if a release pushed a buffer since: then take it. Relaxed: the flag
            // publishes nothing; the buffer's hand-off goes through the lock.
            if self
                .free
                .state
                .compare_exchange(state, state | WAITERS, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                return None;
            }
        }
    }

    /// Gives buffer `index` back: to the free list, or to the first waiter, woken here.
    #[inline]
    pub(crate) fn release(&self, index: u32) {
        if self.free.push(&self.block, index).is_ok() {
            return;
        }
        let mut waiters = self.lock();
        let wake = self.release_locked(&mut waiters, index);
        drop(waiters);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    /// With the lock held: hands buffer `index` to the first waiter (whose waker is returned,
    /// to be woken once the lock is released), or, if none is left, clears [`WAITERS`] and
    /// pushes it to the free list.
    pub(crate) fn release_locked(&self, waiters: &mut Waiters, index: u32) -> Option<Waker> {
        match waiters.hand_off(index) {
            Ok(waker) => {
                self.clear_waiters_if_none(waiters);
                waker
            }
            Err(index) => {
                self.clear_waiters_if_none(waiters);
                if self.free.push(&self.block, index).is_err() {
                    unreachable!("nobody waits and the flag is only set under the lock");
                }
                None
            }
        }
    }

    /// With the lock held: clears [`WAITERS`] once the list is empty.
    pub(crate) fn clear_waiters_if_none(&self, waiters: &Waiters) {
        if waiters.is_empty() && self.free.state.load(Ordering::Relaxed) & WAITERS != 0 {
            // While the flag is set the list is empty and only lock holders change the word.
            // Relaxed: clearing publishes nothing (the list is empty).
            let state = self.free.state.load(Ordering::Relaxed);
            self.free
                .state
                .store(with_head(state, NIL), Ordering::Relaxed);
        }
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
