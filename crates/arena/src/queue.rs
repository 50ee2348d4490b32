//! The owner's intrusive FIFO of slots, written once for every arena: the links live in the
//! arena's own storage (a slot's fields, or a word per value), behind [`Links`].

/// "No slot": the end of a queue.
pub(crate) const NIL: u32 = u32::MAX;

/// Where a queue's links live: one per slot, and whether the slot is in a queue.
pub(crate) trait Links {
    /// Whether slot `index` is in a queue.
    fn is_queued(&self, index: usize) -> bool;
    /// The slot after `index` in its queue (`NIL` at the end).
    fn next(&self, index: usize) -> u32;
    /// Puts slot `index` in a queue, before `next`.
    fn set_next(&mut self, index: usize, next: u32);
    /// Takes slot `index` out of its queue.
    fn unqueue(&mut self, index: usize);
    /// Changes the link of slot `index`, which stays in its queue.
    #[inline(always)]
    fn relink(&mut self, index: usize, next: u32) {
        self.set_next(index, next);
    }
}

/// Asks the CPU to bring `value`'s first and last bytes (so all of it, up to two cache lines)
/// into its caches, without waiting for them: a hint, on x86-64 only (nothing elsewhere, or
/// under Miri).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (value as *const T).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        // SAFETY: `_mm_prefetch` needs SSE, which is in x86-64's baseline (every x86-64 target
        // enables it); a prefetch is a hint that cannot fault and changes nothing the program
        // can observe, and both addresses are inside (or, for a zero-sized `T`, at) `value`.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = value;
}

/// An intrusive FIFO of slots.
#[derive(Clone, Copy)]
pub(crate) struct Queue {
    head: u32,
    tail: u32,
}

impl Queue {
    pub(crate) const EMPTY: Self = Self {
        head: NIL,
        tail: NIL,
    };

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// [`is_empty`](Self::is_empty) for a caller that pops next: tests `tail` (`NIL` exactly
    /// when `head` is), so that `head` is read once, in `pop`. Guarded by `ready_512k`.
    #[inline]
    pub(crate) fn is_empty_before_pop(&self) -> bool {
        self.tail == NIL
    }

    /// The first slot; the queue is not empty.
    #[inline]
    pub(crate) fn head_unchecked(&self) -> usize {
        debug_assert!(!self.is_empty());
        self.head as usize
    }

    /// The first slot, if any.
    #[inline]
    pub(crate) fn front(&self) -> Option<usize> {
        (self.head != NIL).then_some(self.head as usize)
    }

    /// Appends slot `index` unless it is in a queue already. Always inlined: a busy merge
    /// appends on every call (guarded by `merge_hot_16`, instructions).
    #[inline(always)]
    pub(crate) fn push(&mut self, links: &mut (impl Links + ?Sized), index: usize) {
        if links.is_queued(index) {
            return;
        }
        links.set_next(index, NIL);
        if self.tail == NIL {
            self.head = index as u32;
        } else {
            // The tail is queued already: only its link changes.
            links.relink(self.tail as usize, index as u32);
        }
        self.tail = index as u32;
    }

    /// Takes the first slot out; the queue is not empty.
    #[inline]
    pub(crate) fn pop(&mut self, links: &mut (impl Links + ?Sized)) -> usize {
        let index = self.head as usize;
        self.head = links.next(index);
        links.unqueue(index);
        if self.head == NIL {
            self.tail = NIL;
        }
        index
    }

    /// Moves the first slot to the end (the queue is not empty): what a pop and a push of the
    /// same slot do, with only the links that change written. Guarded by `merge_hot_16`
    /// (instructions).
    #[inline(always)]
    pub(crate) fn rotate(&mut self, links: &mut (impl Links + ?Sized)) {
        let head = self.head;
        if head == self.tail {
            return;
        }
        let next = links.next(head as usize);
        links.relink(self.tail as usize, head);
        links.relink(head as usize, NIL);
        self.tail = head;
        self.head = next;
    }

    /// Appends every slot of `other`, which is left empty.
    #[inline]
    pub(crate) fn append(&mut self, links: &mut (impl Links + ?Sized), other: &mut Queue) {
        if other.is_empty() {
            return;
        }
        let tail = core::mem::replace(other, Queue::EMPTY);
        if self.is_empty() {
            *self = tail;
        } else {
            links.relink(self.tail as usize, tail.head);
            self.tail = tail.tail;
        }
    }
}
