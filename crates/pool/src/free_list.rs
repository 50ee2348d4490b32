//! The free list: a lock-free stack of free buffer indices in one atomic word, with a flag that
//! sends everyone to the waiter queue while tasks wait.
//!
//! The word holds the index of the first free buffer (or [`NIL`]) in its low 32 bits, a tag
//! in the next 31 bits, and [`WAITERS`] in the top bit. Each buffer's next link lives in its
//! [`Meta`](crate::block::Meta). Every change of the head bumps the tag, so a pop that read a
//! head and its link cannot succeed after that buffer was popped and pushed back meanwhile
//! (the ABA problem of a Treiber stack); memory is never freed while the pool lives, so reading
//! a stale link is harmless.

use crate::block::Block;
use crate::sync::{AtomicU64, Ordering};

/// The end of the free list.
pub(crate) const NIL: u32 = u32::MAX;

/// Set while tasks wait: the free list is then empty, releases go to the first waiter, and
/// acquires queue behind the waiters. Only changed with the waiter lock held.
pub(crate) const WAITERS: u64 = 1 << 63;

const TAG_ONE: u64 = 1 << 32;
const TAG_MASK: u64 = !WAITERS & !(u32::MAX as u64);

/// The head index of `state`.
#[inline]
pub(crate) fn head(state: u64) -> u32 {
    state as u32
}

/// `state` with head `head`, the next tag, and no [`WAITERS`].
#[inline]
pub(crate) fn with_head(state: u64, head: u32) -> u64 {
    (state.wrapping_add(TAG_ONE) & TAG_MASK) | head as u64
}

/// The free list of a block's buffers.
pub(crate) struct FreeList {
    pub(crate) state: AtomicU64,
}

impl FreeList {
    /// A list holding buffers `0..count` in order (their links were set by the block).
    pub(crate) fn new(count: u32) -> Self {
        let head = if count == 0 { NIL } else { 0 };
        Self {
            state: AtomicU64::new(head as u64),
        }
    }

    /// Pops a free buffer, if there is one and no task waits.
    #[inline]
    pub(crate) fn pop(&self, block: &Block) -> Option<u32> {
        // Acquire pairs with the Release of the push that put the head there: the previous
        // owner's writes to the buffer, and the head's link, happen before this pop.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let index = head(state);
            if index == NIL {
                // Empty, and always so while `WAITERS` is set.
                return None;
            }
            let next = block.meta(index).next.load(Ordering::Relaxed);
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

    /// Pushes buffer `index`, unless tasks wait: then `Err(())`, and the caller hands it to
    /// the first waiter under the lock.
    #[inline]
    pub(crate) fn push(&self, block: &Block, index: u32) -> Result<(), ()> {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & WAITERS != 0 {
                return Err(());
            }
            block.meta(index).next.store(head(state), Ordering::Relaxed);
            // Release pairs with the Acquire of the pop that takes this buffer: this owner's
            // use of it, and the link just written, happen before.
            match self.state.compare_exchange_weak(
                state,
                with_head(state, index),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => state = now,
            }
        }
    }

    /// How many buffers the list holds now: exact when nothing acquires or releases
    /// meanwhile, a snapshot otherwise.
    pub(crate) fn len(&self, block: &Block) -> usize {
        let mut index = head(self.state.load(Ordering::Acquire));
        let mut len = 0;
        while index != NIL && len < block.count() as usize {
            len += 1;
            index = block.meta(index).next.load(Ordering::Relaxed);
        }
        len
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
        let top = (TAG_MASK | 5) & !WAITERS;
        let wrapped = with_head(top, 9);
        assert_eq!(head(wrapped), 9);
        assert_eq!(wrapped & WAITERS, 0, "the tag never spills into the flag");
        assert_eq!(with_head(WAITERS | 3, NIL) & WAITERS, 0);
    }
}
