//! Pieces of the random programs the property tests run: which future an operation applies
//! to, and where a wake comes from. (Their strategies live with the tests, which have proptest.)

/// Which of `len` candidates an operation applies to, whatever `len` is then: a fraction of
/// the way through them, as `proptest::sample::Index` (which has no public constructor, so a
/// shrunk case could not be written down as a fixed test). `Pick(0)` is the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick(pub u64);

impl Pick {
    /// The pick of position `index` among `len` candidates (the middle of its share).
    ///
    /// # Panics
    /// If `index >= len`.
    pub fn at(index: usize, len: usize) -> Self {
        assert!(index < len, "position {index} of {len}");
        let share = (1u128 << 64) / len as u128;
        Self((share * index as u128 + share / 2) as u64)
    }

    /// The candidate's position: `floor(len * self.0 / 2^64)`.
    ///
    /// # Panics
    /// If `len` is 0.
    pub fn index(self, len: usize) -> usize {
        assert!(len > 0, "a pick among no candidates");
        ((len as u128 * u128::from(self.0)) >> 64) as usize
    }
}

/// Where a wake comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The test thread, between polls.
    Here,
    /// Waker thread `t`, joined before the next operation.
    Thread(u8),
}

#[cfg(test)]
mod tests {
    use super::Pick;

    #[test]
    fn a_pick_at_a_position_picks_it() {
        for len in 1..50 {
            for index in 0..len {
                assert_eq!(Pick::at(index, len).index(len), index);
            }
        }
        assert_eq!(Pick(0).index(7), 0);
        assert_eq!(Pick(u64::MAX).index(7), 6);
    }
}
