//! Keys: which value of which arena, and which stay of it in its slot.

use core::fmt;

/// Names one value in an [`Arena`](crate::Arena) or a [`GrowableArena`](crate::GrowableArena)
/// for as long as it is there.
///
/// A key is the value's slot plus a *generation*: the slot's count of values stored in it. Once
/// the value is gone (finished, removed or cleared), its key is refused by every keyed method
/// (`remove` returns `false`, `get` returns `None`), also after another value took the slot.
/// Keys of different arenas are not told apart: use a key only with the set that gave it.
///
/// One `u64` (slot in the low half, generation in the high half), so that it moves in one
/// register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(u64);

impl Key {
    /// The key of slot `index` (counted across the groups of a growable arena) in generation
    /// `generation`.
    #[inline]
    pub(crate) const fn new(index: u32, generation: u32) -> Self {
        Self(index as u64 | (generation as u64) << 32)
    }

    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.0 as u32 as usize
    }

    #[inline]
    pub(crate) const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}#{})", self.index(), self.generation())
    }
}
