//! The pool's shared free list: a lock-free stack of free buffer indices in one atomic word,
//! with a bit, [`TO_WAITERS`], that sends every buffer given back to the wait queue while
//! tasks wait. The threads' own stocks are in `stocks`.
//!
//! The word holds the index of the first free buffer (or [`NIL`]) in its low 32 bits, a tag
//! in the next 31 bits and [`TO_WAITERS`] in the top bit. Each buffer's next link, and its
//! depth (how many buffers the list holds from it on, so a list's length is its head's
//! depth), live in its [`Meta`](crate::block::Meta). Every change of the head bumps the tag, so a pop that read a
//! head and its link cannot succeed after that buffer was popped and pushed back meanwhile
//! (the ABA problem of a Treiber stack); memory is never freed while the pool lives, so reading
//! a stale link is harmless.

use crate::block::Metas;
use crate::sync::{AtomicU64, Ordering};

/// The end of the free list.
pub(crate) const NIL: u32 = u32::MAX;

/// The list word's top bit, set while tasks wait: the list is then empty, a pop finds
/// nothing and a push is refused, so that a buffer given back goes to the first waiter and an
/// acquire queues behind the waiters. Only changed with the wait queue's lock held. It is the
/// list's own part of the waiting state; the pool's [`WAITING`](crate::stocks::WAITING) flag,
/// set and cleared with it, keeps the threads out of their stocks.
pub(crate) const TO_WAITERS: u64 = 1 << 63;

const TAG_ONE: u64 = 1 << 32;
const TAG_MASK: u64 = !TO_WAITERS & !(u32::MAX as u64);

/// The bits of a tag: how many times the head has changed, wrapping.
pub(crate) const CHANGES_MASK: u32 = (TAG_MASK >> 32) as u32;

/// The tag of `state`: how many times the head has changed (wrapping at [`CHANGES_MASK`]).
#[inline]
pub(crate) fn changes(state: u64) -> u32 {
    ((state & TAG_MASK) >> 32) as u32
}

/// The head index of `state`.
#[inline]
pub(crate) fn head(state: u64) -> u32 {
    state as u32
}

/// `state` with head `head`, the next tag, and no flag.
#[inline]
pub(crate) fn with_head(state: u64, head: u32) -> u64 {
    (state.wrapping_add(TAG_ONE) & TAG_MASK) | head as u64
}

/// A free list of a block's buffers. Nothing but its atomic word, so that a `&FreeList` is a
/// reference to an atomic only (see [`Metas`]); the pool keeps it on a cache line of its own
/// ([`Padded`]).
pub(crate) struct FreeList {
    pub(crate) state: AtomicU64,
}

/// Buffers taken off a list together: `first`, linked through the metas' `next` to `last`,
/// `len` in all. Their depths are stale until the chain is pushed onto a list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chain {
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) len: u32,
}

impl Chain {
    /// The chain from `first` to `last`, `len` buffers (linked already).
    pub(crate) fn new(first: u32, last: u32, len: u32) -> Self {
        Self { first, last, len }
    }

    /// This chain, then `other`.
    pub(crate) fn append(self, metas: Metas<'_>, other: Chain) -> Self {
        metas
            .get(self.last)
            .next
            .store(other.first, Ordering::Relaxed);
        Self {
            first: self.first,
            last: other.last,
            len: self.len + other.len,
        }
    }

    /// The chain of buffer `index` alone.
    pub(crate) fn single(index: u32) -> Self {
        Self {
            first: index,
            last: index,
            len: 1,
        }
    }

    /// Buffer `index` (in no list, so the caller may set its link), then this chain.
    pub(crate) fn prepend(self, metas: Metas<'_>, index: u32) -> Self {
        metas.get(index).next.store(self.first, Ordering::Relaxed);
        Self {
            first: index,
            last: self.last,
            len: self.len + 1,
        }
    }

    /// The first buffer of the chain, and the rest of it, if any.
    pub(crate) fn split_first(self, metas: Metas<'_>) -> (u32, Option<Chain>) {
        if self.len == 1 {
            return (self.first, None);
        }
        let rest = Chain {
            first: metas.get(self.first).next.load(Ordering::Relaxed),
            last: self.last,
            len: self.len - 1,
        };
        (self.first, Some(rest))
    }
}

impl FreeList {
    /// A list holding buffers `0..count` in order (their links and depths were set by the
    /// block).
    pub(crate) fn new(count: u32) -> Self {
        let head = if count == 0 { NIL } else { 0 };
        Self {
            state: AtomicU64::new(head as u64),
        }
    }

    /// Pops a free buffer, if there is one and no task waits.
    #[inline]
    pub(crate) fn pop(&self, metas: Metas<'_>) -> Option<u32> {
        // Acquire pairs with the Release of the push that put the head there: the previous
        // owner's writes to the buffer, and the head's link, happen before this pop.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let index = head(state);
            if index == NIL {
                // Empty, and always so while `TO_WAITERS` is set.
                return None;
            }
            let next = metas.get(index).next.load(Ordering::Relaxed);
            // Acquire as above, on success and on failure (the new head is read next).
            match self.state.compare_exchange_weak(
                state,
                with_head(state, next),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(index),
                Err(now) => state = now,
            }
        }
    }

    /// Pops up to `max` (at least 1) buffers at once, if there is one and no task waits: one
    /// CAS of the head, after a walk of the links.
    pub(crate) fn pop_chain(&self, metas: Metas<'_>, max: u32) -> Option<Chain> {
        // Acquire as in `pop`: the links walked were written before the pushes that put their
        // buffers here. A link read after its buffer left the list is stale, and then the
        // head's tag has changed and the CAS fails.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let first = head(state);
            if first == NIL {
                return None;
            }
            let (mut last, mut len) = (first, 1);
            let mut next = metas.get(first).next.load(Ordering::Relaxed);
            while len < max && next != NIL {
                last = next;
                len += 1;
                next = metas.get(last).next.load(Ordering::Relaxed);
            }
            // Acquire as above, on success and on failure.
            match self.state.compare_exchange_weak(
                state,
                with_head(state, next),
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(Chain { first, last, len }),
                Err(now) => state = now,
            }
        }
    }

    /// Pushes a chain of buffers at once (one CAS of the head, after a walk that sets their
    /// depths), unless [`TO_WAITERS`] is set: then `Err(chain)`, and the caller
    /// hands them over.
    pub(crate) fn push_chain(&self, metas: Metas<'_>, chain: Chain) -> Result<u64, Chain> {
        // Acquire pairs with the Release of the push that put the head there, whose depth is
        // read.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & TO_WAITERS != 0 {
                return Err(chain);
            }
            let mut depth = self.depth_below(metas, state) + chain.len;
            let mut index = chain.first;
            loop {
                let meta = metas.get(index);
                meta.depth.store(depth, Ordering::Relaxed);
                if index == chain.last {
                    meta.next.store(head(state), Ordering::Relaxed);
                    break;
                }
                index = meta.next.load(Ordering::Relaxed);
                depth -= 1;
            }
            // Release pairs with the Acquire of the pop that takes each buffer: this owner's
            // use of it, and the links and depths just written, happen before. Acquire on
            // failure as above.
            match self.state.compare_exchange_weak(
                state,
                with_head(state, chain.first),
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(with_head(state, chain.first)),
                Err(now) => state = now,
            }
        }
    }

    /// How many buffers a list whose word is `state` holds.
    #[inline]
    fn depth_below(&self, metas: Metas<'_>, state: u64) -> u32 {
        match head(state) {
            NIL => 0,
            index => metas.get(index).depth.load(Ordering::Relaxed),
        }
    }

    /// With the wait queue's lock held: pops a free buffer, or, if there is none, sets
    /// [`TO_WAITERS`] (if it is not set already) and returns `None`.
    pub(crate) fn pop_or_set_to_waiters(&self, metas: Metas<'_>) -> Option<u32> {
        loop {
            if let Some(index) = self.pop(metas) {
                return Some(index);
            }
            let state = self.state.load(Ordering::Relaxed);
            if state & TO_WAITERS != 0 {
                return None;
            }
            if head(state) != NIL {
                continue;
            }
            // Fails if a release pushed a buffer since: then take it. Relaxed: the flag
            // publishes nothing; the buffer's hand-off goes through the lock.
            if self
                .state
                .compare_exchange(
                    state,
                    state | TO_WAITERS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return None;
            }
        }
    }

    /// How many times the head has changed (see [`changes`]), now.
    pub(crate) fn changes(&self) -> u32 {
        changes(self.state.load(Ordering::Relaxed))
    }

    /// Whether [`TO_WAITERS`] is set.
    pub(crate) fn is_to_waiters(&self) -> bool {
        self.state.load(Ordering::Relaxed) & TO_WAITERS != 0
    }

    /// With the wait queue's lock held: clears [`TO_WAITERS`], if set.
    pub(crate) fn clear_to_waiters(&self) {
        let state = self.state.load(Ordering::Relaxed);
        if state & TO_WAITERS != 0 {
            // While the flag is set the list is empty and only lock holders change the word.
            // Relaxed: clearing publishes nothing (the list is empty).
            self.state.store(with_head(state, NIL), Ordering::Relaxed);
        }
    }

    /// How many buffers the list holds now: exact when nothing acquires or releases
    /// meanwhile, a snapshot otherwise.
    pub(crate) fn len(&self, metas: Metas<'_>) -> usize {
        // Acquire as in `push_chain`: the head's depth was written before it was pushed.
        self.depth_below(metas, self.state.load(Ordering::Acquire)) as usize
    }
}

/// A `T` on a cache line of its own, so that what threads running side by side change does
/// not share one: the pool's shared list and stocks (guarded by `pool_4_threads_16`), the
/// writer's slots.
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> core::ops::Deref for Padded<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_change_on_every_head_change_and_wrap_below_the_flag() {
        let state = with_head(0, 7);
        assert_eq!(head(state), 7);
        assert_ne!(state >> 32, 0);
        let top = TAG_MASK | 5;
        let wrapped = with_head(top, 9);
        assert_eq!(head(wrapped), 9);
        assert_eq!(
            wrapped & TO_WAITERS,
            0,
            "the tag never spills into the flag"
        );
        assert_eq!(with_head(TO_WAITERS | 3, NIL) & TO_WAITERS, 0);
    }
}
