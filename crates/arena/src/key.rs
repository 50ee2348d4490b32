//! Keys: which value of which arena, and which stay of it in its slot.

use core::fmt;

/// Names one value in an [`Arena`](crate::Arena) or a [`GrowableArena`](crate::GrowableArena)
/// for as long as it is there.
///
/// A key is the value's slot plus a *generation*: the slot's count of values stored in it. Once
/// the value is gone (finished, removed or cleared), its key is refused by every keyed method
/// (`remove` returns `false`, `get` returns `None`), also after another value took the slot,
/// and also after a growable set gave groups back and grew again over the same slots.
/// Keys of different arenas are not told apart: use a key only with the set that gave it.
///
/// Generations are 63-bit and never wrap: a slot would have to hold 2^63 values, one after
/// the other, before its generation ran out (at one value a nanosecond, 292 years), and a
/// slot whose generation has run out is retired instead of reused. So a key, once refused,
/// is refused for good.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    generation: u64,
    index: u32,
}

impl Key {
    /// The key of slot `index` (counted across the groups of a growable arena) in generation
    /// `generation`.
    #[inline]
    pub(crate) const fn new(index: u32, generation: u64) -> Self {
        Self { generation, index }
    }

    #[inline]
    pub(crate) const fn index(self) -> usize {
        self.index as usize
    }

    #[inline]
    pub(crate) const fn generation(self) -> u64 {
        self.generation
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}#{})", self.index(), self.generation())
    }
}

#[cfg(test)]
mod tests {
    use std::format;

    use super::Key;

    #[test]
    fn debug_names_the_slot_and_its_generation() {
        // The form the sets' panic messages and the models' reports show.
        assert_eq!(format!("{:?}", Key::new(99, 3)), "Key(99#3)");
    }
}
