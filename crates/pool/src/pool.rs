//! [`BufferPool`]: the handle, and what its clones, buffers and packets share.

use alloc::boxed::Box;
use core::fmt;
use core::ops::Deref;
use core::ptr::NonNull;
use core::task::Waker;

use crate::block::Block;
use crate::buf::Buf;
use crate::caches::{self, CACHES, MAX_BATCH};
use crate::free_list::{Chain, FreeList, NIL, Padded, Refused};
use crate::sync::{AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::waiters::{Acquire, Waiters};

/// A fixed set of equal buffers, allocated once, handed out as [`Buf`]s.
///
/// A cheap handle: clones share the same buffers. `Send + Sync`. Its guarantees are the
/// crate's: [*Order*](crate#order) (first come, first served), [*Wakes*](crate#wakes),
/// [*Memory*](crate#memory), [*Cancellation*](crate#cancellation) and [*Panics*](crate#panics).
pub struct BufferPool {
    pub(crate) inner: InnerRef,
}

/// A pointer to a pool's shared state that counts nothing by itself: it is held by a
/// [`BufferPool`], a [`Buf`] or a [`Packet`](crate::Packet), each of which holds one of the
/// state's counts (see [`Inner::refs`]) while it lives.
#[derive(Clone, Copy)]
pub(crate) struct InnerRef(NonNull<Inner>);

// SAFETY: `Inner` is `Send + Sync` (atomics, a lock, the block, whose sharing follows the
// pool's protocol); the pointer only reaches it.
unsafe impl Send for InnerRef {}
// SAFETY: as for `Send`.
unsafe impl Sync for InnerRef {}

impl Deref for InnerRef {
    type Target = Inner;

    #[inline]
    fn deref(&self) -> &Inner {
        // SAFETY: whoever holds an `InnerRef` holds a count of the state (see the type), and
        // the state is freed only when no count is left; the paths that give a count up
        // (`Inner::release` and what it calls, `Inner::unref`) reach the state through a
        // copy of the pointer and do not touch it once the count is gone.
        unsafe { self.0.as_ref() }
    }
}

/// What the handles, buffers and packets of one pool share.
pub(crate) struct Inner {
    pub(crate) block: Block,
    /// The shared free list.
    free: FreeList,
    /// The threads' caches (see `caches`).
    caches: [Padded<FreeList>; CACHES],
    /// How many buffers move between a cache and `free` at once.
    batch: u32,
    waiters: Mutex<Waiters>,
    /// The counts that keep this state alive: one for the handles together (while one
    /// lives), and one per buffer outside `free` (a `Buf`'s or its packets', a cache's, or on
    /// its way between lists or to a waiter). It changes once per batch that moves between
    /// `free` and a cache, not per acquire or release, so threads that acquire and release
    /// on their own caches share no count.
    refs: Padded<AtomicUsize>,
    /// How many [`BufferPool`] handles live. The last one's drop closes the caches (see
    /// [`FreeList::close`]) and gives up the handles' count.
    handles: AtomicUsize,
}

/// More handles than this is a leak (as `Arc` aborts past `isize::MAX`).
const MAX_HANDLES: usize = isize::MAX as usize;

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
        let inner = Box::new(Inner {
            block,
            free,
            caches: core::array::from_fn(|_| Padded(FreeList::empty())),
            batch,
            waiters: Mutex::new(Waiters::new()),
            refs: Padded(AtomicUsize::new(1)),
            handles: AtomicUsize::new(1),
        });
        Self {
            inner: InnerRef(NonNull::from(Box::leak(inner))),
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
        let metas = inner.block.metas();
        inner.lists().map(|list| list.len(metas)).sum()
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
        // A buffer in a cache already holds its count: it passes to the `Buf`.
        match inner.cache().pop(inner.block.metas()) {
            Some(index) => Some(Buf::new(self.inner, index)),
            None => Inner::refill(self.inner),
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

impl Clone for BufferPool {
    fn clone(&self) -> Self {
        // Relaxed: a handle is made from one that is alive, so the count cannot reach 0
        // meanwhile (as `Arc::clone`).
        if self.inner.handles.fetch_add(1, Ordering::Relaxed) > MAX_HANDLES {
            pinfold_arena::unwind::abort();
        }
        Self { inner: self.inner }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        let handles = &self.inner.handles;
        // Release and Acquire as for an `Arc`: every handle's use of the pool happens before
        // the last one closes the caches.
        if handles.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        handles.load(Ordering::Acquire);
        // No acquire can come now: the buffers in the caches give their counts up, and so
        // does every buffer released from now on (see `Inner::release`).
        let metas = self.inner.block.metas();
        let cached: usize = self
            .inner
            .caches
            .iter()
            .map(|cache| cache.close(metas) as usize)
            .sum();
        Inner::unref(self.inner, cached + 1);
    }
}

/// What became of a buffer given back under the waiter lock.
pub(crate) enum Released {
    /// Handed to the first waiter, whose waker (if it had one) is to be woken once the lock
    /// is released. The buffer's count went with it.
    Handed(Option<Waker>),
    /// Nobody waits: pushed to the shared list. The caller gives up its count once the lock
    /// is released ([`Inner::unref`]).
    Freed,
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
        core::iter::once(&self.free).chain(self.caches.iter().map(|cache| &**cache))
    }

    /// Counts `n` buffers that left the shared list. Only called with a count held (a handle
    /// acquires), so the state cannot be freed meanwhile.
    fn count_out(&self, n: u32) {
        // Relaxed: the count is held up by the caller's, as in `Arc::clone`.
        self.refs.fetch_add(n as usize, Ordering::Relaxed);
    }

    /// Gives up `n` counts of the state; the last one frees it. The caller does not touch the
    /// state again.
    pub(crate) fn unref(this: InnerRef, n: usize) {
        let refs: &AtomicUsize = &this.refs;
        // Release pairs with the Acquire load of the last one: every use of the state happens
        // before it is freed (as in `Arc`'s drop; a load rather than a fence, for TSan).
        if refs.fetch_sub(n, Ordering::Release) != n {
            return;
        }
        refs.load(Ordering::Acquire);
        // SAFETY: the count reached 0: no handle, `Buf` or packet is left, and no buffer is
        // outside the shared list, so nothing else reaches the state; it was allocated by the
        // `Box` of `BufferPool::new`, and is freed once, here.
        drop(unsafe { Box::from_raw(this.0.as_ptr()) });
    }

    /// For an acquire whose cache is empty: takes a batch from the shared list (one buffer
    /// for the caller, the rest into its cache), or else a buffer from another cache. `None`
    /// if every list is empty, or tasks wait. Called through a handle.
    #[cold]
    #[inline(never)]
    fn refill(this: InnerRef) -> Option<Buf> {
        let inner: &Inner = &this;
        let metas = inner.block.metas();
        if let Some(chain) = inner.free.pop_chain(metas, inner.batch) {
            inner.count_out(chain.len);
            let (index, rest) = chain.split_first(metas);
            // Owned by a `Buf` before a waker runs: if one panics, unwinding gives it back.
            let buf = Buf::new(this, index);
            if let Some(rest) = rest {
                if let Err(rest) = inner.cache().push_chain(metas, rest) {
                    // A task started waiting since the batch was taken: the rest is its.
                    Inner::release_chain(this, rest);
                }
            }
            return Some(buf);
        }
        let index = inner.caches.iter().find_map(|other| other.pop(metas))?;
        Some(Buf::new(this, index))
    }

    /// With the lock held: pops a free buffer from any list, or, if there is none, sets
    /// [`WAITERS`](crate::free_list::WAITERS) on every list, so that the next release comes to
    /// the lock (and returns `None`: the caller queues).
    pub(crate) fn pop_or_flag_waiters(&self, _locked: &MutexGuard<'_, Waiters>) -> Option<u32> {
        let metas = self.block.metas();
        for (at, list) in self.lists().enumerate() {
            if let Some(index) = list.pop(metas) {
                self.count_if_shared(at);
                return Some(index);
            }
        }
        for (flagged, list) in self.lists().enumerate() {
            if let Some(index) = list.pop_or_flag_waiters(metas) {
                // A release pushed a buffer here after the first pass: take it, and unflag
                // the lists flagged so far (nobody waits: this task is not queued yet).
                self.lists().take(flagged).for_each(FreeList::clear_waiters);
                self.count_if_shared(flagged);
                return Some(index);
            }
        }
        None
    }

    /// Counts a buffer popped from list `at` of [`lists`](Inner::lists) if that was the
    /// shared list.
    fn count_if_shared(&self, at: usize) {
        if at == 0 {
            self.count_out(1);
        }
    }

    /// Gives buffer `index` back, with the count it holds: to the calling thread's cache (or,
    /// if the cache holds two batches, with a batch from there to the shared list), or to the
    /// first waiter, woken here. Once the buffer is in a cache the count is the cache's, and
    /// the state may be freed by another thread (the last handle's drop, see `close`), so
    /// `this` is a copied pointer and nothing is touched after the push.
    #[inline]
    pub(crate) fn release(this: InnerRef, index: u32) {
        let inner: &Inner = &this;
        let high = 2 * inner.batch;
        match inner.cache().push(inner.block.metas(), index, high) {
            Ok(()) => {}
            Err(refused) => Inner::release_slow(this, index, refused),
        }
    }

    /// A release whose cache push was refused.
    #[cold]
    #[inline(never)]
    fn release_slow(this: InnerRef, index: u32, refused: Refused) {
        match refused {
            Refused::Full => Inner::return_batch(this, index),
            Refused::Closed => Inner::unref(this, 1),
            Refused::Waiters => {
                let inner: &Inner = &this;
                let mut waiters = inner.lock();
                let released = inner.release_locked(&mut waiters, index);
                drop(waiters);
                match released {
                    Released::Handed(Some(waker)) => waker.wake(),
                    Released::Handed(None) => {}
                    Released::Freed => Inner::unref(this, 1),
                }
            }
        }
    }

    /// Buffer `index` and a batch from the calling thread's full cache go to the shared list
    /// together (or to waiters), and give up their counts.
    fn return_batch(this: InnerRef, index: u32) {
        let inner: &Inner = &this;
        let metas = inner.block.metas();
        let chain = match inner.cache().pop_chain(metas, inner.batch) {
            Some(batch) => batch.prepend(metas, index),
            // Emptied by a thread sharing the cache meanwhile.
            None => Chain::single(index),
        };
        match inner.free.push_chain(metas, chain) {
            Ok(()) => Inner::unref(this, chain.len as usize),
            // A task started waiting since the cache was found full.
            Err(chain) => Inner::release_chain(this, chain),
        }
    }

    /// Hands the buffers of `chain` (each holding its count) to the first waiters, one each
    /// (the rest, if the waiters run out, to the shared list, giving up their counts), then
    /// wakes them, oldest first.
    #[cold]
    #[inline(never)]
    fn release_chain(this: InnerRef, chain: Chain) {
        const NONE: Option<Waker> = None;
        let mut wakes = [NONE; MAX_BATCH as usize + 1];
        let inner: &Inner = &this;
        let metas = inner.block.metas();
        let mut waiters = inner.lock();
        let mut next = Some(chain);
        let mut freed = 0;
        for wake in &mut wakes {
            let Some(chain) = next else { break };
            let (index, rest) = chain.split_first(metas);
            next = rest;
            match waiters.hand_off(index) {
                Ok(waker) => *wake = waker,
                Err(_) => {
                    inner.clear_waiters_if_none(&waiters);
                    // `chain` still starts at `index`: the buffers nobody waits for.
                    if inner.free.push_chain(metas, chain).is_err() {
                        unreachable!("nobody waits and the flag is only set under the lock");
                    }
                    freed = chain.len as usize;
                    next = None;
                    break;
                }
            }
        }
        debug_assert!(next.is_none(), "a chain is at most MAX_BATCH + 1 buffers");
        inner.clear_waiters_if_none(&waiters);
        drop(waiters);
        // Before the wakes (user code that may panic); the state is not touched after it.
        if freed != 0 {
            Inner::unref(this, freed);
        }
        wake_each(&mut wakes);
    }

    /// With the lock held: hands buffer `index` to the first waiter, or, if none is left,
    /// clears the waiters flags and pushes it to the shared list.
    pub(crate) fn release_locked(&self, waiters: &mut Waiters, index: u32) -> Released {
        match waiters.hand_off(index) {
            Ok(waker) => {
                self.clear_waiters_if_none(waiters);
                Released::Handed(waker)
            }
            Err(index) => {
                self.clear_waiters_if_none(waiters);
                if self
                    .free
                    .push_chain(self.block.metas(), Chain::single(index))
                    .is_err()
                {
                    unreachable!("nobody waits and the flag is only set under the lock");
                }
                Released::Freed
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
