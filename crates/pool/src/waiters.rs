//! The wait queue: an intrusive FIFO list of nodes that live in the pinned
//! [`Acquire`](crate::Acquire) futures themselves, so that waiting allocates nothing, and the
//! lock that guards it. This module is the only code that reads or writes a node: a future
//! holds its node as a [`Place`] and goes through the queue's methods to join the queue, look
//! at what it was handed, and leave; a release goes through [`Waiters::serve_oldest`]. The
//! list and every node in it are only touched with the lock held (a `&Waiters` or
//! `&mut Waiters` is reached only through the lock's guard).

use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::task::Waker;

use crate::free_list::NIL;
use crate::sync::{Mutex, MutexGuard, UnsafeCell};

/// One waiting task, inside its [`Acquire`](crate::Acquire) future.
struct Node {
    prev: Option<NonNull<Node>>,
    next: Option<NonNull<Node>>,
    /// The waker of the task's latest poll.
    waker: Option<Waker>,
    /// The buffer handed to this waiter by a release, or [`NIL`].
    buffer: u32,
    /// Whether the node is in the list.
    queued: bool,
}

/// A waiter's node, inside its pinned [`Acquire`](crate::Acquire) future: written when the
/// future joins the queue ([`Waiters::enqueue`]), never before, so a future served at once
/// never touches it.
pub(crate) struct Place(UnsafeCell<MaybeUninit<Node>>);

impl Place {
    /// A place not written yet.
    #[inline]
    pub(crate) fn new() -> Self {
        Self(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Drops the node of a waiter that took the buffer it was handed. Runs no user code (the
    /// hand-off took the waker), and needs no lock (the node is out of the list).
    ///
    /// # Safety
    /// The node was written by [`Waiters::enqueue`], was then handed a buffer which
    /// [`Waiters::revisit`] gave out, and is dropped once, here.
    pub(crate) unsafe fn drop_served(&self) {
        self.0.with_mut(|slot| {
            // SAFETY: the caller's contract: the node is written and out of the list, so
            // nothing else reaches it; it is dropped once.
            unsafe { slot.cast::<Node>().drop_in_place() }
        });
    }
}

/// What a poll of a queued waiter found in its node (see [`Waiters::revisit`]).
pub(crate) struct Revisit {
    /// The buffer a release handed to the waiter, now the caller's.
    pub(crate) handed: Option<u32>,
    /// The waker that the fresh one replaced, to be dropped once the lock is released.
    pub(crate) replaced: Option<Waker>,
    /// Whether the node's waker wakes the task of this poll.
    pub(crate) up_to_date: bool,
}

/// The wait queue: the list of waiting nodes and the lock that guards it.
pub(crate) struct WaitQueue {
    list: Mutex<Waiters>,
}

impl WaitQueue {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self {
            list: Mutex::new(Waiters {
                head: None,
                tail: None,
            }),
        }
    }

    /// Takes the lock. No user code runs with it held (wakers are cloned before it is taken,
    /// dropped and woken after it is released), so no panic can leave the list half-changed,
    /// and a poisoned lock is used as is.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Waiters> {
        crate::sync::lock(&self.list)
    }
}

/// The list of waiting nodes, oldest first, reached through [`WaitQueue::lock`].
pub(crate) struct Waiters {
    head: Option<NonNull<Node>>,
    tail: Option<NonNull<Node>>,
}

// SAFETY: the nodes the list points to are only read or written with the lock around the list
// held (the `Mutex` makes the list `Sync`); a node's `Waker` is `Send`.
unsafe impl Send for Waiters {}

impl Waiters {
    /// Whether no task waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Hands `buffer` to the oldest waiter: unlinks it, stores the buffer in it and returns its
    /// waker, to be woken once the lock is released. `Err(buffer)` if nobody waits.
    pub(crate) fn serve_oldest(&mut self, buffer: u32) -> Result<Option<Waker>, u32> {
        let Some(mut first) = self.head else {
            return Err(buffer);
        };
        // SAFETY: a queued node is alive (its future unlinks it before it is dropped) and only
        // touched under the lock, which the caller holds (it has `&mut self`).
        let node = unsafe { first.as_mut() };
        self.head = node.next;
        match self.head {
            // SAFETY: as above, for the next queued node.
            Some(mut next) => unsafe { next.as_mut().prev = None },
            None => self.tail = None,
        }
        node.next = None;
        node.queued = false;
        node.buffer = buffer;
        Ok(node.waker.take())
    }

    /// Writes the node of `place`, holding `waker`, and appends it.
    ///
    /// # Safety
    /// `place` was not written yet, is pinned (stays at its address until
    /// [`leave`](Self::leave) or [`Place::drop_served`]), and this list is its pool's.
    pub(crate) unsafe fn enqueue(&mut self, place: &Place, waker: Waker) {
        place.0.with_mut(|slot| {
            let node = slot.cast::<Node>();
            // SAFETY: the caller's contract: the node stays at this address until it leaves
            // the list or is dropped, and it is written first here; the lock is held (`&mut
            // self`), the only way to touch it.
            unsafe {
                node.write(Node {
                    prev: None,
                    next: None,
                    waker: Some(waker),
                    buffer: NIL,
                    queued: false,
                });
                self.push_back(NonNull::new_unchecked(node));
            }
        });
    }

    /// For a poll of the queued waiter at `place`: takes the buffer handed to it, if any; or
    /// stores `fresh`, a clone of the poll's waker, if given; or says whether the stored waker
    /// wakes the same task as `current`. A buffer handed over while `fresh` was cloned stays in
    /// the node (`handed` is `None`, `up_to_date` `false`): the caller drops `fresh` first and
    /// looks again, so that if that drop panics the buffer stays this waiter's.
    ///
    /// # Safety
    /// `place` was written by [`enqueue`](Self::enqueue) into this list and has not left it
    /// by [`leave`](Self::leave), nor given out its buffer yet.
    pub(crate) unsafe fn revisit(
        &self,
        place: &Place,
        fresh: &mut Option<Waker>,
        current: &Waker,
    ) -> Revisit {
        place.0.with_mut(|slot| {
            // SAFETY: the caller's contract: the node is written; it is only touched under
            // the lock, held here (`&self` comes from the guard).
            let node = unsafe { &mut *slot.cast::<Node>() };
            if node.buffer != NIL {
                if fresh.is_some() {
                    return Revisit {
                        handed: None,
                        replaced: None,
                        up_to_date: false,
                    };
                }
                return Revisit {
                    handed: Some(core::mem::replace(&mut node.buffer, NIL)),
                    replaced: None,
                    up_to_date: true,
                };
            }
            if let Some(waker) = fresh.take() {
                return Revisit {
                    handed: None,
                    replaced: node.waker.replace(waker),
                    up_to_date: true,
                };
            }
            Revisit {
                handed: None,
                replaced: None,
                up_to_date: node.waker.as_ref().is_some_and(|w| w.will_wake(current)),
            }
        })
    }

    /// A waiter gives up: unlinks the node of `place` if it is still queued, and returns the
    /// buffer handed to it and not taken (if any: the caller passes it on) and its waker (to
    /// be dropped once the lock is released). The node is dropped: `place` is not written
    /// any more.
    ///
    /// # Safety
    /// `place` was written by [`enqueue`](Self::enqueue) into this list, and has not left it
    /// by `leave` or been dropped by [`Place::drop_served`].
    pub(crate) unsafe fn leave(&mut self, place: &Place) -> (Option<u32>, Option<Waker>) {
        place.0.with_mut(|slot| {
            let node = slot.cast::<Node>();
            // SAFETY: the caller's contract: the node is written, and only touched under the
            // lock, held here; no reference to it is alive while `unlink` takes its own.
            if unsafe { (*node).queued } {
                // SAFETY: the node is alive and in this list, and the lock is held.
                unsafe { self.unlink(NonNull::new_unchecked(node)) };
            }
            // SAFETY: as above; `unlink`'s reference is gone, and the node is read out once,
            // here (a `Node` has no drop of its own beyond its waker's, moved out).
            let node = unsafe { node.read() };
            let handed = (node.buffer != NIL).then_some(node.buffer);
            (handed, node.waker)
        })
    }

    /// Appends `node`.
    ///
    /// # Safety
    /// `node` is alive and stays at its address until [`unlink`](Self::unlink)ed or handed a
    /// buffer, and is only touched with the lock held.
    unsafe fn push_back(&mut self, mut node: NonNull<Node>) {
        // SAFETY: the caller's contract.
        let n = unsafe { node.as_mut() };
        n.prev = self.tail;
        n.next = None;
        n.queued = true;
        match self.tail {
            // SAFETY: the tail is a queued node: alive, touched only under the lock.
            Some(mut tail) => unsafe { tail.as_mut().next = Some(node) },
            None => self.head = Some(node),
        }
        self.tail = Some(node);
    }

    /// Removes the queued `node`.
    ///
    /// # Safety
    /// `node` is alive, in this list, and only touched with the lock held.
    unsafe fn unlink(&mut self, mut node: NonNull<Node>) {
        // SAFETY: the caller's contract.
        let n = unsafe { node.as_mut() };
        match n.prev {
            // SAFETY: a neighbour of a queued node is queued: alive, touched under the lock.
            Some(mut prev) => unsafe { prev.as_mut().next = n.next },
            None => self.head = n.next,
        }
        match n.next {
            // SAFETY: as above.
            Some(mut next) => unsafe { next.as_mut().prev = n.prev },
            None => self.tail = n.prev,
        }
        n.prev = None;
        n.next = None;
        n.queued = false;
    }
}
