//! [`BufferPool`]: the handle, and what its clones share.

use core::fmt;
use core::task::Waker;

use crate::block::Block;
use crate::buf::Buf;
use crate::caches::{self, CACHES, MAX_BATCH};
use crate::free_list::{Chain, FreeList, NIL};
use crate::sync::{Arc, Mutex, MutexGuard};
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
    /// The shared free list.
    free: FreeList,
    /// The threads' caches (see `caches`).
    caches: [FreeList; CACHES],
    /// How many buffers move between a cache and `free` at once.
    batch: u32,
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
        // Every buffer starts in the shared list, in order.
        let block = Block::new(count, size, |index| {
            let next = if index + 1 < count as u32 {
                index + 1
            } else {
                NIL
            };
            (next, count as u32 - index)
        });
        let free = FreeList::new(block.count());
        let batch = caches::batch(block.count());
        Self {
            inner: Arc::new(Inner {
                block,
                free,
                caches: core::array::from_fn(|_| FreeList::empty()),
                batch,
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

    /// How many buffers are free now, in the pool's shared list and in its threads' caches.
    /// Exact when no buffer is acquired or released meanwhile; otherwise a snapshot that may
    /// already be out of date. Reads one word and one buffer record per list, whatever the
    /// number of buffers.
    pub fn available(&self) -> usize {
        let inner = &self.inner;
        inner.lists().map(|list| list.len(&inner.block)).sum()
    }

    /// A free buffer, if one is free now and no task waits for one (waiting tasks are served
    /// first). Never waits, and allocates nothing. Looks in the calling thread's cache first,
    /// then takes a batch from the pool's shared list, then looks in the other threads' caches
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
        let inner = &self.inner;
        let cache = inner.cache();
        match cache.pop(&inner.block) {
            Some(index) => Some(Buf::new(inner.clone(), index)),
            None => Inner::refill(inner, cache),
        }
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

    /// The calling thread's cache.
    #[inline]
    fn cache(&self) -> &FreeList {
        // `%` of a power of two, which also spares the bounds check.
        &self.caches[caches::home() % CACHES]
    }

    /// The shared list, then the caches.
    fn lists(&self) -> impl Iterator<Item = &FreeList> {
        core::iter::once(&self.free).chain(&self.caches)
    }

    /// For an acquire whose cache is empty: takes a batch from the shared list (one buffer
    /// for the caller, the rest into `cache`), or else a buffer from another cache. `None` if
    /// every list is empty, or tasks wait.
    #[cold]
    #[inline(never)]
    fn refill(this: &Arc<Self>, cache: &FreeList) -> Option<Buf> {
        if let Some(chain) = this.free.pop_chain(&this.block, this.batch) {
            let (index, rest) = chain.split_first(&this.block);
            // Owned by a `Buf` before a waker runs: if one panics, unwinding gives it back.
            let buf = Buf::new(this.clone(), index);
            if let Some(rest) = rest {
                if let Err(rest) = cache.push_chain(&this.block, rest) {
                    // A task started waiting since the batch was taken: the rest is its.
                    this.release_chain(rest);
                }
            }
            return Some(buf);
        }
        let index = this
            .caches
            .iter()
            .find_map(|other| other.pop(&this.block))?;
        Some(Buf::new(this.clone(), index))
    }

    /// With the lock held: pops a free buffer from any list, or, if there is none, sets
    /// [`WAITERS`](crate::free_list::WAITERS) on every list, so that the next release comes to
    /// the lock (and returns `None`: the caller queues).
    pub(crate) fn pop_or_flag_waiters(&self, _locked: &MutexGuard<'_, Waiters>) -> Option<u32> {
        if let Some(index) = self.lists().find_map(|list| list.pop(&self.block)) {
            return Some(index);
        }
        for (flagged, list) in self.lists().enumerate() {
            if let Some(index) = list.pop_or_flag_waiters(&self.block) {
                // A release pushed a buffer here after the first pass: take it, and unflag
                // the lists flagged so far (nobody waits: this task is not queued yet).
                self.lists().take(flagged).for_each(FreeList::clear_waiters);
                return Some(index);
            }
        }
        None
    }

    /// Gives buffer `index` back: to the calling thread's cache (and a batch from there to the
    /// shared list if the cache holds more than two batches), or to the first waiter, woken
    /// here.
    #[inline]
    pub(crate) fn release(&self, index: u32) {
        let cache = self.cache();
        match cache.push(&self.block, index) {
            Ok(depth) if depth <= 2 * self.batch => {}
            Ok(_) => self.return_batch(cache),
            Err(()) => self.release_slow(index),
        }
    }

    /// Moves a batch from `cache` to the shared list.
    #[cold]
    #[inline(never)]
    fn return_batch(&self, cache: &FreeList) {
        if let Some(chain) = cache.pop_chain(&self.block, self.batch) {
            if let Err(chain) = self.free.push_chain(&self.block, chain) {
                // A task started waiting since the push into the cache.
                self.release_chain(chain);
            }
        }
    }

    /// Hands buffer `index` to the first waiter (or, if none is left, to the shared list).
    #[cold]
    #[inline(never)]
    fn release_slow(&self, index: u32) {
        let mut waiters = self.lock();
        let wake = self.release_locked(&mut waiters, index);
        drop(waiters);
        if let Some(waker) = wake {
            waker.wake();
        }
    }

    /// Hands the buffers of `chain` to the first waiters, one each (the rest, if the waiters
    /// run out, to the shared list), then wakes them, oldest first.
    #[cold]
    #[inline(never)]
    fn release_chain(&self, chain: Chain) {
        const NONE: Option<Waker> = None;
        let mut wakes = [NONE; MAX_BATCH as usize];
        let mut waiters = self.lock();
        let mut next = Some(chain);
        for wake in &mut wakes {
            let Some(chain) = next else { break };
            let (index, rest) = chain.split_first(&self.block);
            next = rest;
            match waiters.hand_off(index) {
                Ok(waker) => *wake = waker,
                Err(_) => {
                    self.clear_waiters_if_none(&waiters);
                    // `chain` still starts at `index`: the buffers nobody waits for.
                    if self.free.push_chain(&self.block, chain).is_err() {
                        unreachable!("nobody waits and the flag is only set under the lock");
                    }
                    next = None;
                    break;
                }
            }
        }
        debug_assert!(next.is_none(), "a batch is at most MAX_BATCH buffers");
        self.clear_waiters_if_none(&waiters);
        drop(waiters);
        wake_each(&mut wakes);
    }

    /// With the lock held: hands buffer `index` to the first waiter (whose waker is returned,
    /// to be woken once the lock is released), or, if none is left, clears the waiters flags
    /// and pushes it to the shared list.
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

    /// With the lock held: clears every list's waiters flag once the queue is empty.
    pub(crate) fn clear_waiters_if_none(&self, waiters: &Waiters) {
        // The lists are flagged and unflagged together, under the lock.
        if waiters.is_empty() && self.free.flagged() {
            self.lists().for_each(FreeList::clear_waiters);
        }
    }
}

/// Wakes each waker in turn; if one panics, the ones after it are woken all the same while
/// the panic unwinds (a second panic among them aborts, as any panic during unwinding does).
fn wake_each(wakers: &mut [Option<Waker>]) {
    /// Wakes the rest when dropped: after the first waker's wake, or while it unwinds.
    struct Rest<'a>(&'a mut [Option<Waker>]);
    impl Drop for Rest<'_> {
        fn drop(&mut self) {
            wake_each(self.0);
        }
    }
    if let Some((first, rest)) = wakers.split_first_mut() {
        let rest = Rest(rest);
        if let Some(waker) = first.take() {
            waker.wake();
        }
        drop(rest);
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

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    use super::wake_each;

    /// Counts its wakes, and panics in each if told to.
    struct Task {
        wakes: AtomicUsize,
        panics: bool,
    }

    impl Wake for Task {
        fn wake(self: Arc<Self>) {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            assert!(!self.panics, "a waker that panics");
        }
    }

    fn task(panics: bool) -> (Arc<Task>, Option<Waker>) {
        let task = Arc::new(Task {
            wakes: AtomicUsize::new(0),
            panics,
        });
        (task.clone(), Some(Waker::from(task)))
    }

    #[test]
    fn a_panicking_wake_does_not_stop_the_wakes_after_it() {
        let (first, a) = task(false);
        let (second, b) = task(true);
        let (third, c) = task(false);
        let mut wakers = [a, None, b, c];
        let result = catch_unwind(AssertUnwindSafe(|| wake_each(&mut wakers)));
        assert!(result.is_err(), "the panic comes out");
        for (task, name) in [(&first, "first"), (&second, "second"), (&third, "third")] {
            assert_eq!(
                task.wakes.load(Ordering::Relaxed),
                1,
                "the {name} woken once"
            );
        }
        assert!(
            wakers.iter().all(Option::is_none),
            "no waker is left to wake"
        );
    }
}
