//! [`Acquire`]: the future of [`BufferPool::acquire`](crate::BufferPool::acquire), which
//! waits in the pool's queue (see `waiters`) while every buffer is out.

use core::fmt;
use core::future::Future;
use core::marker::{PhantomData, PhantomPinned};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::buf::Buf;
use crate::shared::{Inner, InnerRef, Released};
use crate::waiters::{Place, Revisit};

/// Where an [`Acquire`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Not polled yet, or polled and not queued: its place is not written yet.
    Start,
    /// Queued: its place is in the wait queue, or was handed a buffer.
    Waiting,
    /// Returned its buffer without queueing: its place was never written.
    Done,
    /// Returned the buffer it was handed: its place is written, out of the queue.
    Served,
}

/// The future of [`BufferPool::acquire`](crate::BufferPool::acquire): a [`Buf`] as soon as one is free and every task that
/// started waiting before this one has had its own.
///
/// While it waits, it holds its place in the queue in itself (no allocation). Its place is
/// taken at its first poll that finds no free buffer, and kept however often it is polled
/// after ([*Order*](crate#order)); a release wakes it through the waker of its latest poll
/// ([*Wakes*](crate#wakes)). Dropping it gives up the place; a buffer handed to it and not yet
/// taken goes on to the next waiter, or back to the pool ([*Cancellation*](crate#cancellation)).
///
/// # Panics
/// A panic of the task's waker (its `clone` or `drop`, run by `poll`), or of another task's
/// `wake` (see [*Panics*](crate#panics)), comes out of `poll`, and loses no buffer: the future may be polled again or dropped. A buffer already handed to it
/// stays its, and a place in the queue it had stays its; one whose first poll panicked has no
/// place yet (see [*Panics*](crate#panics)). Polling it after it returned its buffer panics,
/// with the message `Acquire polled after it returned its buffer`.
///
/// # Example
///
/// Two tasks wait on a pool whose one buffer is out; they are served in the order of their
/// first poll, whatever order they are polled in after it:
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
/// use pinfold_pool::BufferPool;
///
/// let pool = BufferPool::new(1, 64);
/// let held = pool.try_acquire().unwrap();
/// let mut cx = Context::from_waker(Waker::noop());
///
/// let mut first = pin!(pool.acquire());
/// let mut second = pin!(pool.acquire());
/// assert!(first.as_mut().poll(&mut cx).is_pending());
/// assert!(second.as_mut().poll(&mut cx).is_pending());
///
/// drop(held);
/// assert!(second.as_mut().poll(&mut cx).is_pending()); // not its turn
/// let Poll::Ready(buf) = first.as_mut().poll(&mut cx) else { panic!("first is served first") };
/// drop(buf);
/// assert!(second.as_mut().poll(&mut cx).is_ready());
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
// `C`: the pool and the stage first, the place after them, so that a new future is two
// fields written side by side, and a move of it (into an executor, or a `block_on`) reads
// the place's bytes without waiting on any write of them.
#[repr(C)]
pub struct Acquire<'a> {
    /// The pool's state, borrowed through a handle for `'a`.
    inner: InnerRef,
    stage: Stage,
    /// Its node in the wait queue, written when the future queues: a future served at once
    /// never touches it.
    place: Place,
    _pinned: PhantomPinned,
    _pool: PhantomData<&'a ()>,
}

// SAFETY: the place's node is only touched by the wait queue with its lock held, from whichever
// thread; the rest is a pointer to a `Sync` pool's state.
unsafe impl Send for Acquire<'_> {}
// SAFETY: `&Acquire` gives access to nothing.
unsafe impl Sync for Acquire<'_> {}

impl<'a> Acquire<'a> {
    /// The future of an `acquire` through a handle to `inner` that lives for `'a`.
    pub(crate) fn new(inner: InnerRef) -> Self {
        Self {
            inner,
            place: Place::new(),
            stage: Stage::Start,
            _pinned: PhantomPinned,
            _pool: PhantomData,
        }
    }
}

impl Future for Acquire<'_> {
    type Output = Buf;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Buf> {
        // SAFETY: nothing is moved out of the future; the place stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        // The fast path: the thread's stock, or a batch from the shared list, before any
        // waiter machinery (whose first step sweeps the other stocks).
        if this.stage == Stage::Start {
            // Copied out first, so that the `Buf` is built from a register, not from the
            // future after the write of its stage.
            let inner = this.inner;
            if let Some(index) = inner.free.take(&inner.block) {
                this.stage = Stage::Done;
                return Poll::Ready(Buf::new(inner, index));
            }
        }
        this.poll_slow(cx)
    }
}

impl Acquire<'_> {
    /// A poll that found no free buffer, or that waits.
    #[inline(never)]
    fn poll_slow(&mut self, cx: &mut Context<'_>) -> Poll<Buf> {
        let this = self;
        let inner: &Inner = &this.inner;
        match this.stage {
            Stage::Start => {
                if let Some(index) = Inner::refill(this.inner) {
                    this.stage = Stage::Done;
                    return Poll::Ready(Buf::new(this.inner, index));
                }
                // Cloned before the lock: no user code runs with it held (a waker's clone or
                // drop may release a buffer of this pool, which takes the lock).
                let waker = cx.waker().clone();
                let mut waiters = inner.lock();
                if let Some(index) = inner.take_or_wait(&waiters) {
                    drop(waiters);
                    // Owned by a `Buf` before the clone's drop (user code) runs: if that
                    // panics, unwinding drops the `Buf`, which gives the buffer back.
                    let buf = Buf::new(this.inner, index);
                    drop(waker);
                    this.stage = Stage::Done;
                    return Poll::Ready(buf);
                }
                // SAFETY: the future is pinned, so its place stays at this address until the
                // future's drop takes it out of the queue; it is not written yet (the stage is
                // `Start`), and `waiters` is this pool's queue, locked.
                unsafe { waiters.enqueue(&this.place, waker) };
                this.stage = Stage::Waiting;
                Poll::Pending
            }
            Stage::Waiting => {
                // First without a clone: handed a buffer, or the same waker as stored.
                let mut fresh: Option<Waker> = None;
                loop {
                    let waiters = inner.lock();
                    // SAFETY: the place was written into this pool's queue when the future
                    // queued (the stage is `Waiting`), and has neither left it nor given out
                    // a buffer (that makes the stage `Served`).
                    let Revisit {
                        handed,
                        replaced,
                        up_to_date,
                    } = unsafe { waiters.revisit(&this.place, &mut fresh, cx.waker()) };
                    drop(waiters);
                    if let Some(index) = handed {
                        this.stage = Stage::Served;
                        return Poll::Ready(Buf::new(this.inner, index));
                    }
                    // Wakers are cloned and dropped with the lock released: their code may
                    // give a buffer of this pool back, which takes the lock.
                    drop(replaced);
                    if let Some(unneeded) = fresh.take() {
                        // Handed a buffer while the waker was cloned: take it next time round.
                        drop(unneeded);
                        continue;
                    }
                    if up_to_date {
                        return Poll::Pending;
                    }
                    fresh = Some(cx.waker().clone());
                }
            }
            Stage::Done | Stage::Served => panic!("Acquire polled after it returned its buffer"),
        }
    }
}

impl Drop for Acquire<'_> {
    #[inline]
    fn drop(&mut self) {
        // A future that never queued (most of them) has no node to undo.
        if !matches!(self.stage, Stage::Start | Stage::Done) {
            self.drop_node();
        }
    }
}

impl Acquire<'_> {
    /// The drop of a future that queued.
    #[inline(never)]
    fn drop_node(&mut self) {
        match self.stage {
            Stage::Waiting => self.give_up_place(),
            // SAFETY: the place was written when the future queued and gave out the buffer it
            // was handed (the stage is `Served`); it is dropped once, here.
            Stage::Served => unsafe { self.place.drop_served() },
            Stage::Start | Stage::Done => {}
        }
    }
}

impl Acquire<'_> {
    /// Leaves the queue, or passes on a buffer handed over and not taken.
    #[inline(never)]
    fn give_up_place(&mut self) {
        let inner: &Inner = &self.inner;
        let mut waiters = inner.lock();
        // SAFETY: the place was written into this pool's queue when the future queued (the
        // stage is `Waiting`), and leaves it once, here, in the future's drop.
        let (handed, waker) = unsafe { waiters.leave(&self.place) };
        let released = if let Some(handed) = handed {
            // Handed a buffer it never took: it goes to the next waiter, or back.
            Some(inner.release_locked(&mut waiters, handed))
        } else {
            inner.stop_waiting_if_queue_empty(&waiters);
            None
        };
        drop(waiters);
        let wake = match released {
            Some(Released::Handed(waker)) => waker,
            Some(Released::Freed) => {
                // Back in the shared list: its count goes (never the last: this future
                // borrows a handle).
                Inner::unref(self.inner, 1);
                None
            }
            None => None,
        };
        // At most one of these runs user code: a node handed a buffer has no waker (the
        // hand-off took it).
        drop(waker);
        if let Some(next) = wake {
            next.wake();
        }
    }
}

impl fmt::Debug for Acquire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acquire")
            .field("waiting", &(self.stage == Stage::Waiting))
            .finish_non_exhaustive()
    }
}
