//! The owner's intrusive FIFO of slots, written once for every arena kind: each slot carries a
//! [`Mark`] (its link, and the round that last polled it), reached through [`Marks`].

/// "No slot": the end of a queue.
pub(crate) const NIL: u32 = u32::MAX;

/// The link of a slot in no queue.
pub(crate) const UNLINKED: u32 = u32::MAX - 1;

/// What the poll loop keeps on each slot: its link in a queue, and the round that last polled
/// it. Eight bytes, so that a join arena keeps one per value in a word of its wake table.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
pub struct Mark {
    /// The next slot in its queue (`NIL` at the end), or `UNLINKED` when in no queue. A slot
    /// just taken out by [`Queue::pop_for_poll`] keeps its old link until its poll, which
    /// makes it `UNLINKED` before anything else.
    pub(crate) next: u32,
    /// The last round that polled the slot's value and saw it stay (`Pending`, or an output
    /// kept in place); 0 for none since it came, or since it was queued again for an item
    /// (its next poll is needed anyway, so it is never counted as a vain one).
    pub(crate) round: u32,
}

impl Mark {
    /// The mark of a slot that no round has polled and no queue holds.
    pub(crate) const NEW: Self = Self {
        next: UNLINKED,
        round: 0,
    };

    /// The mark's bytes as a word, for storage kept in `u64`s (a join arena's owner words).
    pub(crate) fn to_word(self) -> u64 {
        let mut bytes = [0; 8];
        bytes[..4].copy_from_slice(&self.next.to_ne_bytes());
        bytes[4..].copy_from_slice(&self.round.to_ne_bytes());
        u64::from_ne_bytes(bytes)
    }
}

/// Where the marks of an arena kind's slots live, by slot id.
pub trait Marks {
    /// The mark of slot `id`, which is one of the kind's.
    fn mark(&mut self, id: u32) -> &mut Mark;

    /// [`mark`](Self::mark) for the head of a queue that rotates on every item (a busy
    /// merge's): the link read from it is the next item's head, so a kind whose lookup loads
    /// an address that depends on the id (a growable arena's group) may take another way to
    /// its common case, at a branch's cost.
    #[inline(always)]
    fn rotating_mark(&mut self, id: u32) -> &mut Mark {
        self.mark(id)
    }
}

impl Marks for [Mark] {
    #[inline(always)]
    fn mark(&mut self, id: u32) -> &mut Mark {
        crate::index::trusted_mut(self, id as usize)
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
#[derive(Clone, Copy, Debug)]
pub struct Queue {
    head: u32,
    tail: u32,
}

impl Queue {
    pub(crate) const EMPTY: Self = Self {
        head: NIL,
        tail: NIL,
    };

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// [`is_empty`](Self::is_empty) for a caller that pops next: tests `tail` (`NIL` exactly
    /// when `head` is), so that `head` is read once, in `pop_for_poll`. Guarded by
    /// `ready_512k`.
    #[inline(always)]
    pub(crate) fn is_empty_before_pop(&self) -> bool {
        self.tail == NIL
    }

    /// Whether the queue holds more than one slot.
    #[inline]
    pub(crate) fn len_above_one(&self) -> bool {
        self.head != self.tail
    }

    /// The first slot; the queue is not empty.
    #[inline(always)]
    pub(crate) fn head_unchecked(&self) -> u32 {
        debug_assert!(!self.is_empty());
        self.head
    }

    /// The last slot, `NIL` if none. A drain only appends, and only slots in no queue (a
    /// slot queued already stays where it is), so the tail differs after a drain exactly when
    /// the drain appended any.
    #[inline(always)]
    pub(crate) fn last(&self) -> u32 {
        self.tail
    }

    /// The first slot, if any.
    #[inline(always)]
    pub(crate) fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// Appends slot `id` unless it is in a queue already. Always inlined: a busy merge
    /// appends on every call (guarded by `merge_hot_16`, instructions).
    #[inline(always)]
    pub(crate) fn push(&mut self, marks: &mut (impl Marks + ?Sized), id: u32) {
        let mark = marks.mark(id);
        if mark.next != UNLINKED {
            return;
        }
        mark.next = NIL;
        self.link_last(marks, id);
    }

    /// Appends slot `id`, whose mark was in no queue and now ends one (`next` is `NIL`): the
    /// second half of [`push`](Self::push), for a caller that has looked at the mark already.
    #[inline(always)]
    pub(crate) fn link_last(&mut self, marks: &mut (impl Marks + ?Sized), id: u32) {
        if self.tail == NIL {
            self.head = id;
        } else {
            marks.mark(self.tail).next = id;
        }
        self.tail = id;
    }

    /// Takes the first slot out; the queue is not empty.
    #[inline(always)]
    pub(crate) fn pop(&mut self, marks: &mut (impl Marks + ?Sized)) -> u32 {
        let id = self.head;
        let mark = marks.mark(id);
        // The link is read into a local before the mark is written: the compiler cannot tell
        // the mark from `self.head`, and would load `head` again after that write
        // (`unordered_held_100k`, instructions).
        let next = mark.next;
        mark.next = UNLINKED;
        self.head = next;
        if next == NIL {
            self.tail = NIL;
        }
        id
    }

    /// [`pop`](Self::pop) for a caller that polls the slot next: the slot's mark keeps its
    /// link, which the poll makes [`UNLINKED`] first, where the slot is at hand
    /// ([`Slots::poll_slot`](crate::poll::round::Slots::poll_slot) with `UNLINK`). No store to
    /// the mark then sits between the two lookups of the slot, and the compiler makes them one
    /// (a growable arena's decode of the id was done twice). Guarded by `unordered_held_100k`
    /// (instructions).
    #[inline(always)]
    pub(crate) fn pop_for_poll(&mut self, marks: &mut (impl Marks + ?Sized)) -> u32 {
        let id = self.head;
        let next = marks.mark(id).next;
        self.head = next;
        if next == NIL {
            self.tail = NIL;
        }
        id
    }

    /// Moves the first slot to the end (the queue is not empty), applying `first` to its mark:
    /// what a pop and a push of the same slot do, with only the links that change written,
    /// and each mark looked up once. Guarded by `merge_hot_16` (instructions).
    #[inline(always)]
    pub(crate) fn rotate(
        &mut self,
        marks: &mut (impl Marks + ?Sized),
        first: impl FnOnce(&mut Mark),
    ) {
        let head = self.head;
        let mark = marks.rotating_mark(head);
        first(mark);
        if head == self.tail {
            return;
        }
        let next = mark.next;
        mark.next = NIL;
        marks.mark(self.tail).next = head;
        self.tail = head;
        self.head = next;
    }

    /// Appends every slot of `other`, which is left empty.
    #[inline]
    pub(crate) fn append(&mut self, marks: &mut (impl Marks + ?Sized), other: &mut Queue) {
        if other.is_empty() {
            return;
        }
        let tail = core::mem::replace(other, Queue::EMPTY);
        if self.is_empty() {
            *self = tail;
        } else {
            marks.mark(self.tail).next = tail.head;
            self.tail = tail.tail;
        }
    }

    /// Takes every slot out of the queue, each unlinked (its value left).
    pub(crate) fn unlink_all(&mut self, marks: &mut (impl Marks + ?Sized)) {
        let mut id = self.head;
        while id != NIL {
            let mark = marks.mark(id);
            id = mark.next;
            mark.next = UNLINKED;
        }
        *self = Queue::EMPTY;
    }

    /// Takes out every slot for which `keep` says `false` (their marks are left alone: the
    /// caller is about to free them), keeping the others in order.
    pub(crate) fn retain(&mut self, marks: &mut (impl Marks + ?Sized), keep: impl Fn(u32) -> bool) {
        let mut kept = Queue::EMPTY;
        let mut id = self.head;
        while id != NIL {
            let next = marks.mark(id).next;
            if keep(id) {
                if kept.tail == NIL {
                    kept.head = id;
                } else {
                    marks.mark(kept.tail).next = id;
                }
                kept.tail = id;
            }
            id = next;
        }
        if kept.tail != NIL {
            marks.mark(kept.tail).next = NIL;
        }
        *self = kept;
    }
}
