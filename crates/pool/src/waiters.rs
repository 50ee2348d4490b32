//! The waiter queue: an intrusive FIFO list of nodes that live in the pinned
//! [`Acquire`](crate::Acquire) futures themselves, so that waiting allocates nothing. The list
//! and every node in it are only touched with the pool's waiter lock held.

use core::ptr::NonNull;
use core::task::Waker;

/// One waiting task, inside its [`Acquire`](crate::Acquire) future.
pub(crate) struct Node {
    pub(crate) prev: Option<NonNull<Node>>,
    pub(crate) next: Option<NonNull<Node>>,
    /// The waker of the task's latest poll.
    pub(crate) waker: Option<Waker>,
    /// The buffer handed to this waiter by a release, or
    /// [`NIL`](crate::free_list::NIL).
    pub(crate) buffer: u32,
    /// Whether the node is in the list.
    pub(crate) queued: bool,
}

/// The list of waiting nodes, oldest first.
pub(crate) struct Waiters {
    head: Option<NonNull<Node>>,
    tail: Option<NonNull<Node>>,
}

// SAFETY: the nodes the list points to are only read or written with the lock around the list
// held (the `Mutex` makes the list `Sync`); a node's `Waker` is `Send`.
unsafe impl Send for Waiters {}

impl Waiters {
    pub(crate) const fn new() -> Self {
        Self {
            head: None,
            tail: None,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Hands `buffer` to the oldest waiter: unlinks it, stores the buffer in it and returns its
    /// waker, to be woken once the lock is released. `Err(buffer)` if nobody waits.
    pub(crate) fn hand_off(&mut self, buffer: u32) -> Result<Option<Waker>, u32> {
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

    /// Appends `node`.
    ///
    /// # Safety
    /// `node` is alive and stays at its address until [`unlink`](Self::unlink)ed or handed a
    /// buffer, and is only touched with the lock held.
    pub(crate) unsafe fn push_back(&mut self, mut node: NonNull<Node>) {
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
    pub(crate) unsafe fn unlink(&mut self, mut node: NonNull<Node>) {
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
