//! What the handles, buffers and packets of one pool share: the state behind a
//! [`BufferPool`](crate::BufferPool), and how a buffer leaves and comes back: through the free
//! buffers' take and give (see `free_buffers`), and, while tasks wait, the wait queue (see
//! `waiters`). This is where the two meet, and where the state's counts are kept.

use alloc::boxed::Box;
use core::ops::Deref;
use core::ptr::NonNull;
use core::task::Waker;

use crate::block::Block;
use crate::free_buffers::{FreeBuffers, Given, Taken, Unstocked};
use crate::free_list::{Chain, NIL, Padded};
use crate::stocks::MAX_BATCH;
use crate::sync::{AtomicUsize, MutexGuard, Ordering};
use crate::waiters::{WaitQueue, Waiters};

/// A pointer to a pool's shared state that counts nothing by itself: it is held by a
/// [`BufferPool`](crate::BufferPool), a [`Buf`](crate::Buf) or a [`Packet`](crate::Packet), each of which holds one of the
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
    /// The free buffers: the threads' stocks and the shared list.
    pub(crate) free: FreeBuffers,
    /// The tasks waiting for a buffer.
    queue: WaitQueue,
    /// The counts that keep this state alive: one for the handles together (while one
    /// lives), and one per buffer outside the shared list (a `Buf`'s or its packets', a
    /// stock's, or on its way between lists or to a waiter). It changes once per batch that
    /// moves between the shared list and a stock, not per acquire or release, so threads that
    /// acquire and release on their own stocks share no count.
    refs: Padded<AtomicUsize>,
    /// How many [`BufferPool`](crate::BufferPool) handles live. The last one's drop closes the stocks (see
    /// [`FreeBuffers::close`]) and gives up the handles' count.
    handles: AtomicUsize,
}

/// More handles than this is a leak (as `Arc` aborts past `isize::MAX`).
const MAX_HANDLES: usize = isize::MAX as usize;

impl InnerRef {
    /// The state of a pool of `count` buffers of `size` bytes, with one handle. Allocates
    /// twice (this state, and the block).
    pub(crate) fn new(count: usize, size: usize) -> Self {
        // Every buffer starts in the shared list, in order.
        let block = Block::new(count, size, |index| {
            let next = if index + 1 < count as u32 {
                index + 1
            } else {
                NIL
            };
            (next, count as u32 - index)
        });
        let free = FreeBuffers::new(block.count());
        let inner = Box::new(Inner {
            block,
            free,
            queue: WaitQueue::new(),
            refs: Padded(AtomicUsize::new(1)),
            handles: AtomicUsize::new(1),
        });
        Self(NonNull::from(Box::leak(inner)))
    }

    /// One more handle (a clone of one that lives).
    pub(crate) fn add_handle(self) {
        // Relaxed: a handle is made from one that is alive, so the count cannot reach 0
        // meanwhile (as `Arc::clone`).
        if self.handles.fetch_add(1, Ordering::Relaxed) > MAX_HANDLES {
            pinfold_sync::abort();
        }
    }

    /// One handle fewer; the last one's closes the stocks and gives up the handles' count.
    pub(crate) fn drop_handle(self) {
        let handles = &self.handles;
        // Release and Acquire as for an `Arc`: every handle's use of the pool happens before
        // the last one closes the stocks.
        if handles.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        handles.load(Ordering::Acquire);
        // No acquire can come now: the buffers in the stocks give their counts up, and so
        // does every buffer released into one from now on (see `FreeBuffers::give`).
        let stocked = self.free.close(&self.block);
        Inner::unref(self, stocked + 1);
    }
}

/// What became of a buffer given back under the wait queue's lock.
pub(crate) enum Released {
    /// Handed to the first waiter, whose waker (if it had one) is to be woken once the lock
    /// is released. The buffer's count went with it.
    Handed(Option<Waker>),
    /// Nobody waits: pushed to the shared list. The caller gives up its count once the lock
    /// is released ([`Inner::unref`]).
    Freed,
}

impl Inner {
    /// The wait queue, locked (see [`WaitQueue::lock`]).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Waiters> {
        self.queue.lock()
    }

    /// How many buffers are free: in the shared list and in the stocks (a snapshot).
    pub(crate) fn available(&self) -> usize {
        self.free.available(&self.block)
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

    /// A free buffer for a handle's `try_acquire`: from the calling thread's stock, a batch
    /// from the shared list, or the other threads' stocks (see [`gather`](Inner::gather)).
    /// The buffer holds its count, which passes to the caller's `Buf`.
    #[inline]
    pub(crate) fn try_take(this: InnerRef) -> Option<u32> {
        this.free
            .take(&this.block)
            .or_else(|| Inner::refill(this))
            .or_else(|| Inner::gather(this))
    }

    /// For an acquire whose stock is empty: a batch from the shared list, one buffer for the
    /// caller and the rest into its stock (a thread without a stock takes one buffer). `None`
    /// if the shared list is empty, or tasks wait.
    #[cold]
    #[inline(never)]
    pub(crate) fn refill(this: InnerRef) -> Option<u32> {
        let inner: &Inner = &this;
        let metas = inner.block.metas();
        let chain = inner.free.take_batch(&inner.block)?;
        // Counted before any of them is in the stock, where a sweep may take it and give its
        // count up.
        inner.count_out(chain.len);
        let (index, rest) = chain.split_first(metas);
        if let Some(rest) = rest {
            if let Err(rest) = inner.free.stock_rest(&inner.block, rest) {
                Inner::give_back_rest(this, index, rest);
            }
        }
        Some(index)
    }

    /// A refill that found a flag set once its batch was taken: the rest of the batch goes to
    /// the tasks that wait, if any, or back, while the caller's buffer `index` is held: if a
    /// waker panics, unwinding gives it back.
    #[cold]
    #[inline(never)]
    fn give_back_rest(this: InnerRef, index: u32, rest: Chain) {
        let held = Held { inner: this, index };
        Inner::release_chain(this, rest);
        core::mem::forget(held);
    }

    /// For a [`try_acquire`](crate::BufferPool::try_acquire) that found its stock and the
    /// shared list empty: gathers the other threads' stocks, if any looks to hold a buffer and
    /// no task waits.
    #[cold]
    #[inline(never)]
    fn gather(this: InnerRef) -> Option<u32> {
        let inner: &Inner = &this;
        // A snapshot: a buffer whose release has not landed yet is not looked for (as in a
        // try_acquire just before that release).
        if !inner.free.any_stocked() {
            return None;
        }
        let waiters = inner.lock();
        if !waiters.is_empty() {
            return None;
        }
        let found = inner.take_or_wait(&waiters);
        inner.stop_waiting_if_queue_empty(&waiters);
        found
    }

    /// With the lock held (`_locked`), for a task about to wait: a free buffer, holding its
    /// count, from the shared list or the stocks; or `None`, and the waiting flags are set
    /// for the caller to queue, or to clear with
    /// [`stop_waiting_if_queue_empty`](Inner::stop_waiting_if_queue_empty) (see
    /// [`FreeBuffers::take_or_wait`]).
    pub(crate) fn take_or_wait(&self, _locked: &Waiters) -> Option<u32> {
        match self.free.take_or_wait(&self.block)? {
            Taken::Shared(index) => {
                self.count_out(1);
                Some(index)
            }
            Taken::Swept { index, returned } => {
                // Never the last count: the caller borrows a handle.
                self.refs.fetch_sub(returned as usize, Ordering::Relaxed);
                Some(index)
            }
        }
    }

    /// Gives buffer `index` back, with the count it holds: to the calling thread's stock (or,
    /// if the stock holds two batches, with a batch from there to the shared list), or to the
    /// first waiter, woken here. Once the buffer is in a stock and the owner has left it, the
    /// count is the stock's, and the state may be freed by another thread (the last handle's
    /// drop, see `FreeBuffers::close`), so `this` is a copied pointer and nothing is touched
    /// after [`InStock::leave`](crate::free_buffers::InStock::leave).
    #[inline]
    pub(crate) fn release(this: InnerRef, index: u32) {
        let inner: &Inner = &this;
        match inner.free.give(&inner.block, index) {
            Given::Stocked(stock) => stock.leave(),
            Given::Unstocked(unstocked) => Inner::released(this, unstocked),
        }
    }

    /// A release that did not end in the caller's stock: the counts of the buffers that are
    /// free go, and buffers given while tasks wait go to them.
    #[cold]
    #[inline(never)]
    fn released(this: InnerRef, unstocked: Unstocked) {
        match unstocked {
            Unstocked::Free(n) => Inner::unref(this, n),
            Unstocked::Waiting(chain) if chain.len == 1 => Inner::release_one(this, chain.first),
            Unstocked::Waiting(chain) => Inner::release_chain(this, chain),
        }
    }

    /// Buffer `index`, holding its count, to the oldest waiter (or, if none is left, to the
    /// shared list): the common release while tasks wait, with one waker to wake and none of
    /// [`release_chain`](Self::release_chain)'s batch of them.
    fn release_one(this: InnerRef, index: u32) {
        let inner: &Inner = &this;
        let mut waiters = inner.lock();
        let released = inner.release_locked(&mut waiters, index);
        drop(waiters);
        match released {
            Released::Handed(Some(waker)) => waker.wake(),
            Released::Handed(None) => {}
            // The last touch of the state: this count may be its last.
            Released::Freed => Inner::unref(this, 1),
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
            match waiters.serve_oldest(index) {
                Ok(waker) => *wake = waker,
                Err(_) => {
                    inner.stop_waiting_if_queue_empty(&waiters);
                    // `chain` still starts at `index`: the buffers nobody waits for.
                    inner.free.give_unwaited(&inner.block, chain);
                    freed = chain.len as usize;
                    next = None;
                    break;
                }
            }
        }
        debug_assert!(next.is_none(), "a chain is at most MAX_BATCH + 1 buffers");
        inner.stop_waiting_if_queue_empty(&waiters);
        drop(waiters);
        // Before the wakes (user code that may panic); the state is not touched after it.
        if freed != 0 {
            Inner::unref(this, freed);
        }
        wake_each(&mut wakes);
    }

    /// With the lock held: hands buffer `index` to the first waiter, or, if none is left,
    /// clears the waiting flags and gives it to the shared list.
    pub(crate) fn release_locked(&self, waiters: &mut Waiters, index: u32) -> Released {
        match waiters.serve_oldest(index) {
            Ok(waker) => {
                self.stop_waiting_if_queue_empty(waiters);
                Released::Handed(waker)
            }
            Err(index) => {
                self.stop_waiting_if_queue_empty(waiters);
                self.free.give_unwaited(&self.block, Chain::single(index));
                Released::Freed
            }
        }
    }

    /// With the lock held: clears the waiting flags once the queue is empty.
    pub(crate) fn stop_waiting_if_queue_empty(&self, waiters: &Waiters) {
        if waiters.is_empty() {
            self.free.stop_waiting();
        }
    }
}

/// A buffer taken for a caller while other tasks' wakers run: given back if one panics.
struct Held {
    inner: InnerRef,
    index: u32,
}

impl Drop for Held {
    fn drop(&mut self) {
        Inner::release(self.inner, self.index);
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

#[cfg(all(test, not(all(pinfold_loom, feature = "loom"))))]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    use core::future::Future;

    use super::{Chain, Inner, MAX_BATCH, wake_each};

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

    /// A task that had to wait drains the stocks; the spell ends once the shared list's head
    /// has changed four times per buffer without the list being found empty, so that the
    /// threads use their stocks again. The changes are counted from the wait, not from the
    /// pool's start: the list has changed many times before it.
    #[test]
    fn a_drained_spell_ends_after_four_changes_of_the_shared_list_per_buffer() {
        use core::pin::pin;
        use core::task::Context;

        use crate::pool::BufferPool;

        let pool = BufferPool::new(2, 8);
        let drained = || pool.inner.free.drained();
        let (free, metas) = (pool.inner.free.shared(), pool.inner.block.metas());
        for _ in 0..100 {
            let index = free.pop(metas).expect("a free buffer");
            assert!(free.push_chain(metas, Chain::single(index)).is_ok());
        }
        let (a, b) = (pool.try_acquire().unwrap(), pool.try_acquire().unwrap());
        let mut waiting = pin!(pool.acquire());
        let mut cx = Context::from_waker(Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        assert!(drained(), "a task waits: the stocks are drained");
        drop(a);
        let core::task::Poll::Ready(mut a) = waiting.as_mut().poll(&mut cx) else {
            panic!("handed the buffer released");
        };
        // Each release and acquire changes the shared list's head twice: eight changes for
        // two buffers.
        let mut cycles = 0;
        while drained() {
            assert!(
                cycles < 4,
                "still drained after {cycles} releases and acquires"
            );
            drop(a);
            a = pool.try_acquire().expect("the buffer just released");
            cycles += 1;
        }
        assert!(
            cycles >= 3,
            "the spell ended after {cycles} releases and acquires"
        );
        drop((a, b));
    }

    /// Every buffer of `pool` taken the way an acquire takes it, each index holding its
    /// count (as a `Buf` would).
    fn take_all(pool: &crate::pool::BufferPool) -> std::vec::Vec<u32> {
        let taken: std::vec::Vec<u32> = (0..pool.capacity())
            .map(|_| Inner::try_take(pool.inner).expect("a free buffer"))
            .collect();
        assert_eq!(Inner::try_take(pool.inner), None, "every buffer taken");
        taken
    }

    /// The chain of `indices`, in order.
    fn chain_of(pool: &crate::pool::BufferPool, indices: &[u32]) -> Chain {
        let metas = pool.inner.block.metas();
        let (&last, before) = indices.split_last().expect("a chain has a buffer");
        before
            .iter()
            .rev()
            .fold(Chain::single(last), |chain, &index| {
                chain.prepend(metas, index)
            })
    }

    /// Queues a task that awaits `acquire` with `waker`.
    fn queue<'a>(
        pool: &'a crate::pool::BufferPool,
        waker: &Waker,
    ) -> core::pin::Pin<std::boxed::Box<crate::acquire::Acquire<'a>>> {
        let mut waiting = std::boxed::Box::pin(pool.acquire());
        let pending = waiting
            .as_mut()
            .poll(&mut core::task::Context::from_waker(waker));
        assert!(
            pending.is_pending(),
            "every buffer is taken: the task waits"
        );
        waiting
    }

    /// The counts of the pool's state: one for the handles, one per buffer outside the
    /// shared list.
    fn refs(pool: &crate::pool::BufferPool) -> usize {
        pool.inner.refs.load(Ordering::Relaxed)
    }

    /// A thread that owns a stock takes a batch from the shared list at its first acquire,
    /// keeps the rest in its stock, gives its releases to it and takes its next acquire from
    /// it: the shared list is not touched again.
    #[test]
    fn a_thread_takes_a_batch_into_its_stock_and_releases_and_acquires_there() {
        use crate::pool::BufferPool;

        let Some(slot) = crate::stocks::slot() else {
            // Without `std` no thread owns a stock, and there is no barrier to ask.
            #[cfg(feature = "std")]
            assert!(
                !crate::stocks::barrier::ready(),
                "no stock though the barrier is ready"
            );
            return;
        };
        let pool = BufferPool::new(1024, 1);
        let inner = &*pool.inner;
        let (stock, metas, batch) = (
            inner.free.stock_at(slot).0,
            inner.block.metas(),
            inner.free.batch(),
        );
        assert!(batch > 1, "a pool of 1,024 buffers moves them in batches");
        let shared = || inner.free.shared().len(metas);

        let first = pool.try_acquire().expect("a free buffer");
        assert_eq!(
            stock.len(),
            batch - 1,
            "the rest of the first batch is in the stock"
        );
        assert_eq!(
            shared(),
            1024 - batch as usize,
            "one batch left the shared list"
        );
        drop(first);
        assert_eq!(stock.len(), batch, "the release went to the stock");
        let again = pool.try_acquire().expect("a free buffer");
        assert_eq!(stock.len(), batch - 1, "the acquire took from the stock");
        assert_eq!(
            shared(),
            1024 - batch as usize,
            "the shared list was not touched"
        );
        drop(again);
    }

    /// A batch given back while tasks wait goes to them, one buffer each and oldest first, up
    /// to the longest batch there is (a full stock's batch and the buffer released); the
    /// buffers nobody waits for go to the shared list and give up their counts.
    #[test]
    fn a_chain_released_to_waiters_hands_one_buffer_to_each_and_frees_the_rest() {
        use crate::pool::BufferPool;

        for (buffers, waiting) in [(MAX_BATCH as usize + 1, MAX_BATCH as usize + 1), (5, 2)] {
            let pool = BufferPool::new(buffers, 1);
            let taken = take_all(&pool);
            let tasks: std::vec::Vec<_> = (0..waiting).map(|_| task(false)).collect();
            let mut queued: std::vec::Vec<_> = tasks
                .iter()
                .map(|(_, waker)| queue(&pool, waker.as_ref().unwrap()))
                .collect();
            assert_eq!(refs(&pool), 1 + buffers);

            Inner::release_chain(pool.inner, chain_of(&pool, &taken));
            let mut cx = core::task::Context::from_waker(Waker::noop());
            for (n, ((task, _), waiting)) in tasks.iter().zip(&mut queued).enumerate() {
                assert_eq!(task.wakes.load(Ordering::Relaxed), 1, "task {n} woken once");
                let core::task::Poll::Ready(buf) = waiting.as_mut().poll(&mut cx) else {
                    panic!(
                        "task {n} of {waiting} was handed no buffer",
                        waiting = tasks.len()
                    );
                };
                core::mem::forget(buf);
            }
            let freed = buffers - waiting;
            assert_eq!(
                pool.available(),
                freed,
                "the buffers nobody waits for are free"
            );
            assert_eq!(
                refs(&pool),
                1 + waiting,
                "the freed buffers gave up their counts, the handed ones kept theirs"
            );
            drop(queued);
            for index in &taken[..waiting] {
                Inner::release(pool.inner, *index);
            }
            assert_eq!(pool.available(), buffers);
        }
    }

    /// The rest of a refill's batch goes to the thread's stock only while no task waits: with
    /// one waiting, the stock refuses it, and it is handed on instead.
    #[test]
    fn a_refills_rest_is_refused_by_the_stock_while_a_task_waits() {
        use crate::pool::BufferPool;

        if crate::stocks::slot().is_none() {
            return;
        }
        let pool = BufferPool::new(64, 1);
        let taken = take_all(&pool);
        let (waiter, waker) = task(false);
        let mut queued = queue(&pool, waker.as_ref().unwrap());
        let inner = &*pool.inner;
        let rest = chain_of(&pool, &taken[..2]);
        let refused = inner
            .free
            .stock_rest(&inner.block, rest)
            .expect_err("a stock takes no rest while a task waits");
        Inner::release_chain(pool.inner, refused);
        assert_eq!(
            waiter.wakes.load(Ordering::Relaxed),
            1,
            "the waiter is woken"
        );
        let mut cx = core::task::Context::from_waker(Waker::noop());
        let core::task::Poll::Ready(buf) = queued.as_mut().poll(&mut cx) else {
            panic!("the waiter was handed no buffer");
        };
        drop(buf);
        drop(queued);
        for index in &taken[2..] {
            Inner::release(pool.inner, *index);
        }
        assert_eq!(pool.available(), 64, "every buffer is back");
    }

    /// A give that comes back with buffers for the waiters (`Unstocked::Waiting`) hands each
    /// of them on: one buffer alone through the one-waker path, a chain (a full stock's batch
    /// and the buffer released) one buffer to each waiter.
    #[test]
    fn released_buffers_for_waiters_go_to_them_one_or_a_chain() {
        use crate::free_buffers::Unstocked;
        use crate::pool::BufferPool;

        for buffers in [1, 3] {
            let pool = BufferPool::new(buffers, 1);
            let taken = take_all(&pool);
            let tasks: std::vec::Vec<_> = (0..buffers).map(|_| task(false)).collect();
            let mut queued: std::vec::Vec<_> = tasks
                .iter()
                .map(|(_, waker)| queue(&pool, waker.as_ref().unwrap()))
                .collect();

            Inner::released(pool.inner, Unstocked::Waiting(chain_of(&pool, &taken)));
            let mut cx = core::task::Context::from_waker(Waker::noop());
            for (n, ((task, _), waiting)) in tasks.iter().zip(&mut queued).enumerate() {
                assert_eq!(task.wakes.load(Ordering::Relaxed), 1, "task {n} woken once");
                let core::task::Poll::Ready(buf) = waiting.as_mut().poll(&mut cx) else {
                    panic!("task {n} of {buffers} was handed no buffer");
                };
                drop(buf);
            }
            drop(queued);
            assert_eq!(pool.available(), buffers, "every buffer is back");
        }
    }

    /// A refill that finds a task waiting once its batch is taken hands the rest of the batch
    /// to it; if the task's waker panics, the refill's own buffer is given back, not lost.
    #[test]
    fn a_refill_whose_rest_wakes_a_panicking_waker_gives_its_own_buffer_back() {
        use crate::pool::BufferPool;

        let pool = BufferPool::new(2, 1);
        let taken = take_all(&pool);
        let (panicky, waker) = task(true);
        let mut waiting = queue(&pool, waker.as_ref().unwrap());

        let unwound = catch_unwind(AssertUnwindSafe(|| {
            Inner::give_back_rest(pool.inner, taken[0], Chain::single(taken[1]));
        }));
        assert!(unwound.is_err(), "the waker's panic comes out");
        assert_eq!(panicky.wakes.load(Ordering::Relaxed), 1);
        assert_eq!(
            pool.available(),
            1,
            "the refill's own buffer was given back"
        );
        let mut cx = core::task::Context::from_waker(Waker::noop());
        let core::task::Poll::Ready(buf) = waiting.as_mut().poll(&mut cx) else {
            panic!("the waiting task was handed the rest of the batch");
        };
        drop(buf);
        assert_eq!(pool.available(), 2);
        assert_eq!(refs(&pool), 1, "no count is left but the handles'");
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

    /// A stock whose owner was inside an operation when another thread forked the process:
    /// in the child, where that owner does not exist, the stock is orphaned, none of its
    /// buffers are counted and `try_acquire` takes the others without waiting for it; in the
    /// parent, where its owner lives on, it is neither. The owner's operation is stood in for
    /// by entering its stock from the test's thread, so the child always finds it busy.
    #[cfg(all(unix, feature = "std", not(miri)))]
    #[test]
    fn a_stock_busy_at_a_fork_is_orphaned_in_the_child_only() {
        use std::sync::mpsc;
        use std::time::{Duration, Instant};

        use crate::pool::BufferPool;
        use crate::stocks;

        /// The child's exit codes: 0 when it found what it should.
        const NOT_ORPHANED: i32 = 2;
        const OWN_ORPHANED: i32 = 3;
        const MISCOUNTED: i32 = 4;
        const TOOK_WRONG: i32 = 5;
        const BUFFERS: usize = 8;

        // ThreadSanitizer does not support a child forked from a multi-threaded process.
        if std::env::var_os("TSAN_OPTIONS").is_some() {
            return;
        }
        let pool = BufferPool::new(BUFFERS, 16);
        let (owned_tx, owned_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let owner = {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let held: std::vec::Vec<_> = (0..2).map(|_| pool.try_acquire().unwrap()).collect();
                drop(held);
                owned_tx.send(stocks::slot()).unwrap();
                // Lives on, owning its stock, until the test is done.
                let _ = done_rx.recv();
            })
        };
        let slot = owned_rx
            .recv()
            .unwrap()
            .expect("the thread owns a stock while stocks are free");
        let (stock, flags) = pool.inner.free.stock_at(slot);
        let stocked = stock.len() as usize;
        assert!(
            stocked > 0,
            "the owner's released buffers wait in its stock"
        );
        assert!(stock.enter(flags), "no flag is set");
        assert!(!stocks::orphaned(slot), "the owner lives: not orphaned");
        assert_eq!(
            pool.available(),
            BUFFERS,
            "a busy stock whose owner lives is counted"
        );
        let own = stocks::slot();

        // SAFETY: the child runs only atomics and the pool (no allocation, no lock), and
        // leaves with `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: `alarm` only arms a timer, which ends a child that hangs.
            unsafe { libc::alarm(10) };
            let code = if !stocks::orphaned(slot) {
                NOT_ORPHANED
            } else if own.is_some_and(stocks::orphaned) {
                OWN_ORPHANED
            } else if pool.available() != BUFFERS - stocked {
                MISCOUNTED
            } else {
                let mut taken = 0;
                let mut held: [Option<crate::Buf>; BUFFERS] = Default::default();
                for place in &mut held {
                    *place = pool.try_acquire();
                    taken += usize::from(place.is_some());
                }
                if taken == BUFFERS - stocked {
                    0
                } else {
                    TOOK_WRONG
                }
            };
            // SAFETY: ends the child at once, without running the parent's exit handlers.
            unsafe { libc::_exit(code) };
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut status = 0;
        let outcome = loop {
            // SAFETY: `status` is a valid place for the status of our own child `pid`.
            let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            assert!(reaped >= 0, "waitpid failed");
            if reaped == pid {
                break if libc::WIFEXITED(status) {
                    Ok(libc::WEXITSTATUS(status))
                } else {
                    Err(libc::WTERMSIG(status))
                };
            }
            if Instant::now() >= deadline {
                // SAFETY: `pid` is our own child, not reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        stock.leave();
        done_tx.send(()).unwrap();
        owner.join().unwrap();
        assert_eq!(
            outcome,
            Ok(0),
            "the child: 0 ok, {NOT_ORPHANED} the stock not orphaned, {OWN_ORPHANED} its own \
             stock orphaned, {MISCOUNTED} miscounted, {TOOK_WRONG} took too many or too few; \
             a signal if it hung"
        );
        assert_eq!(
            pool.available(),
            BUFFERS,
            "the parent's buffers are all there"
        );
    }
}
