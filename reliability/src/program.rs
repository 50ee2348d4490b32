//! Pieces of the random programs the property tests run: which future an operation applies
//! to, where a wake comes from, and the operations of a program for a join (shared by the
//! differential and the fault tests), with their strategies. The operations of a program for
//! a set or a buffer differ between the two, and live with their drivers
//! ([`lockstep`](crate::lockstep), [`faulty`](crate::faulty)).

use proptest::prelude::*;

/// Threads a program may wake from.
pub const WAKE_THREADS: usize = 3;

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

/// Where a wake comes from: here twice as often as from each waker thread.
pub fn via() -> impl Strategy<Value = Via> {
    prop_oneof![
        2 => Just(Via::Here),
        1 => (0..WAKE_THREADS as u8).prop_map(Via::Thread),
    ]
}

/// One operation of a program for a join of futures made up front.
#[derive(Debug, Clone)]
// The fields are named in the doc of their variant.
#[allow(missing_docs)]
pub enum JoinOp {
    /// Complete the `pick`-th future not yet completed (`ok`: with `Ok`), and wake it.
    Complete { pick: Pick, ok: bool, via: Via },
    /// Wake the `pick`-th future: spurious while it runs, stale once it finished.
    Wake { pick: Pick, via: Via },
    /// Poll the join until it settles, then compare.
    Run,
    /// Poll the join once, woken or not.
    PollOnce,
    /// Drop the join (cancel it) and every future and output it holds.
    Cancel,
}

/// A [`JoinOp`]: a completion (with `Ok` with probability `ok`) eight times as often as a poll
/// once, a cancel, or `wakes` times as often a wake; a run four times as often.
pub fn join_op(ok: f64, wakes: u32) -> impl Strategy<Value = JoinOp> {
    prop_oneof![
        8 => (any::<u64>().prop_map(Pick), prop::bool::weighted(ok), via())
            .prop_map(|(pick, ok, via)| JoinOp::Complete { pick, ok, via }),
        wakes => (any::<u64>().prop_map(Pick), via()).prop_map(|(pick, via)| JoinOp::Wake { pick, via }),
        4 => Just(JoinOp::Run),
        1 => Just(JoinOp::PollOnce),
        1 => Just(JoinOp::Cancel),
    ]
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
