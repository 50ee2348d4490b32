//! Keys: which value of which arena, and which stay of it in its slot.

use core::fmt;

use crate::sync::statics::{AtomicU64, Ordering};

/// Names one value in an [`Arena`](crate::Arena) or a [`GrowableArena`](crate::GrowableArena)
/// for as long as it is there.
///
/// A key is the value's slot plus a *generation*: a count that rises with each value stored in the
/// slot, from where its arena's generations start (by one, or by two when a waker of an older
/// value, kept alive, holds the entry the value would take). Once the value is gone (finished,
/// removed or cleared), its key is refused by every keyed method (`remove` returns `false`, `get`
/// returns `None`), also after another value took the slot, and also after a growable set gave
/// groups back and grew again over the same slots.
///
/// A key of another arena, live or dropped, bounded or growable, is refused in the same way: each
/// arena's generations start at a distance from every other's. The `n`-th arena the program makes
/// (a bounded one when it is made, a growable one when it takes its first group) starts at `n` with
/// its bits reversed into the top of the range below 2^62, so two of the first 2^k arenas start at
/// least 2^(62-k) generations apart, and a key of one matches no value of the other before a slot
/// of either has counted that many generations: two of the first 2^20 arenas (a million) are told
/// apart until a slot has counted 2^42 generations, two of the first 2^10 until 2^52. A value takes
/// one generation or two; a group that a growable arena adds after giving groups back starts past
/// every generation those counted, so over many such cycles its slots count the values of the
/// groups before them too. Past that, a key of another arena names a value here only if slot and
/// generation both match one exactly.
///
/// Generations are 63-bit and never wrap: an arena starts below 2^62, so at least 2^62 generations
/// are counted before one runs out (at least 2^61 values, one after the other: at one value a
/// nanosecond, 73 years), and a slot whose generation has run out is retired instead of reused. So
/// a key, once refused, is refused for good.
///
/// Its `Debug` form is `Key(slot#generation)`, the generation in hexadecimal: its top digits
/// are the arena's start, its last ones the slot's count of generations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    generation: u64,
    index: u32,
}

impl Key {
    /// The key of slot `index` (in a growable arena, the slot's id: its group's number above
    /// its index in the group) in generation `generation`.
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
        write!(f, "Key({}#{:#x})", self.index(), self.generation())
    }
}

/// How many arenas the program has made (see [`first_generation`]).
static ARENAS_MADE: AtomicU64 = AtomicU64::new(0);

/// The generation the slots of a new arena start at (a growable arena's first group's): the
/// number of arenas made before it, its bits reversed into bits 61 down to 0. Two of the first
/// 2^k arenas start at least 2^(62-k) apart (see [`Key`]), and each slot has at least 2^62
/// generations before its generation runs out (`RETIRED_GENERATION`, 2^63 - 1).
/// Called once per arena, never on the paths that insert, poll or remove.
pub(crate) fn first_generation() -> u64 {
    // Relaxed: each arena takes a number of its own; nothing else is ordered by it.
    let made = ARENAS_MADE.fetch_add(1, Ordering::Relaxed);
    made.reverse_bits() >> 2
}

#[cfg(test)]
mod tests {
    use std::format;

    use super::{Key, first_generation};

    #[test]
    fn debug_names_the_slot_and_its_generation_in_hexadecimal() {
        // The form the sets' panic messages and the models' reports show.
        assert_eq!(format!("{:?}", Key::new(99, 3)), "Key(99#0x3)");
        assert_eq!(
            format!("{:?}", Key::new(0, 1 << 61 | 12)),
            "Key(0#0x200000000000000c)"
        );
    }

    #[test]
    fn arenas_start_far_apart_and_below_two_to_the_62() {
        let starts: std::vec::Vec<u64> = (0..64).map(|_| first_generation()).collect();
        for (i, &a) in starts.iter().enumerate() {
            assert!(a < 1 << 62, "start {a:#x}");
            for &b in &starts[i + 1..] {
                // Other tests make arenas meanwhile: these 64 are among the first 2^k for
                // some k < 40, so they start at least 2^22 apart.
                assert!(a.abs_diff(b) >= 1 << 22, "{a:#x} and {b:#x}");
            }
        }
    }
}
