//! Keys: which value of which arena, and which stay of it in its slot.

use core::fmt;

/// Names one value in an [`Arena`](crate::Arena) or a [`GrowableArena`](crate::GrowableArena)
/// for as long as it is there.
///
/// A key is the value's slot plus a *generation*: the slot's count of values stored in it. Once
/// the value is gone (finished, removed or cleared), its key is refused by every keyed method
/// (`remove` returns `false`, `get` returns `None`), also after another value took the slot.
/// Keys of different arenas are not told apart: use a key only with the set that gave it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The arena of a growable arena (0 for a single arena).
    group: u32,
    /// The slot in that arena.
    index: u32,
    /// The slot's generation when the value was stored.
    generation: u32,
}

impl Key {
    #[inline]
    pub(crate) const fn new(group: u32, index: u32, generation: u32) -> Self {
        Self {
            group,
            index,
            generation,
        }
    }

    #[inline]
    pub(crate) const fn group(self) -> usize {
        self.group as usize
    }

    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.index as usize
    }

    #[inline]
    pub(crate) const fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}.{}#{})", self.group, self.index, self.generation)
    }
}
