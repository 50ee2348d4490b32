//! How large a new group is, and when the largest group, once empty, is given back.
//!
//! The set keeps its groups in a stack, smallest first: it only ever adds a group on top (when
//! every group is full) and only ever releases the top group (when it holds no future). This
//! module decides the sizes and the releases; the set does the rest. The rules are spelled out
//! for users in the crate documentation, section *Memory*.

/// The capacity of the first group of a set made with `new`, and the least capacity of any
/// group added after the first.
pub(crate) const FIRST_GROUP: usize = 32;

/// The largest group made: a slot's id in the arena's queues keeps its index in a group in
/// [`GROUP_SHIFT`](crate::storage::store::GROUP_SHIFT) bits.
pub(crate) const MAX_GROUP: usize = 1 << crate::storage::store::GROUP_SHIFT;

/// From this capacity up to [`QUARTER_GROWTH_BELOW`] a regular group adds a quarter of the
/// capacity, so that at most a fifth of the slots are spare after a group is added; below and
/// above, a group doubles the capacity: small sets take few groups (four to 256 slots), and
/// the 63 groups still reach about 1.36 billion slots.
const QUARTER_GROWTH_FROM: usize = 256;

/// See [`QUARTER_GROWTH_FROM`].
const QUARTER_GROWTH_BELOW: usize = 1 << 18;

/// How much a group added while the set grows back may hold, as a multiple of the capacity the
/// set has then: a regular group doubles the capacity, a grow-back group at most quadruples it.
const GROW_BACK_FACTOR: usize = 3;

/// The set's memory policy: what it remembers about its recent size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sizing {
    /// The capacity the set had before it last released groups; 0 if it has not, or has
    /// forgotten.
    released_from: usize,
    /// The set releases no group that would leave it with less capacity than this; set when the
    /// set grows back into capacity it released (it cycles between large and small), 0 otherwise.
    retain: usize,
    /// Outputs since the set last held more than a quarter of [`horizon`](Self::horizon).
    calm: usize,
}

impl Sizing {
    /// A policy with no history.
    pub(crate) const fn new() -> Self {
        Self {
            released_from: 0,
            retain: 0,
            calm: 0,
        }
    }

    /// The capacity of a group added on top of `capacity` full slots.
    ///
    /// A regular group holds a quarter of what all the groups below it hold together while that
    /// is from [`QUARTER_GROWTH_FROM`] to [`QUARTER_GROWTH_BELOW`], and as much as they do
    /// otherwise (at least [`FIRST_GROUP`]). If the set released capacity recently and is
    /// growing back into it, the group holds up to what was released (at most
    /// `GROW_BACK_FACTOR` times `capacity`), and the capacity reached is retained.
    pub(crate) fn grow(&mut self, capacity: usize) -> usize {
        let regular = if (QUARTER_GROWTH_FROM..QUARTER_GROWTH_BELOW).contains(&capacity) {
            capacity / 4
        } else {
            capacity
        };
        let mut size = regular.max(FIRST_GROUP);
        let growing_back = capacity < self.released_from;
        if growing_back {
            let back =
                (self.released_from - capacity).min(GROW_BACK_FACTOR.saturating_mul(capacity));
            size = size.max(back);
        }
        let size = size.min(MAX_GROUP);
        if growing_back {
            self.retain = self.retain.max(capacity.saturating_add(size));
            self.calm = 0;
        }
        size
    }

    /// Whether the top group, which holds no future, is released while `len` futures live in
    /// the `below` slots of the groups under it: if that leaves at least the retained capacity,
    /// and the futures fill at most half of it.
    pub(crate) fn may_release(&self, len: usize, below: usize) -> bool {
        below >= self.retain && len <= below / 2
    }

    /// Notes that the set reserved room up to `capacity` slots: that capacity is retained as
    /// capacity grown back into is, until the set forgets.
    pub(crate) fn reserved(&mut self, capacity: usize) {
        self.retain = self.retain.max(capacity);
        self.calm = 0;
    }

    /// Notes that the top group was released from a set of `capacity` slots.
    pub(crate) fn released(&mut self, capacity: usize) {
        if capacity > self.released_from {
            self.released_from = capacity;
            self.calm = 0;
        }
    }

    /// Notes an output, after which `len` futures are left. Once the set has given
    /// [`horizon`](Self::horizon) outputs in a row while holding at most a quarter of the
    /// horizon, it forgets its history: nothing is retained, and growth is regular again.
    /// `true` if it forgot (its [`horizon`](Self::horizon) is 0 now).
    #[inline]
    pub(crate) fn output(&mut self, len: usize) -> bool {
        let horizon = self.horizon();
        if horizon == 0 {
            return false;
        }
        if len > horizon / 4 {
            self.calm = 0;
            return false;
        }
        self.calm += 1;
        if self.calm >= horizon {
            *self = Self::new();
            return true;
        }
        false
    }

    /// Notes an output that leaves more than a quarter of the [`horizon`](Self::horizon)
    /// futures: as [`output`](Self::output) then, the count of calm outputs starts again.
    #[inline(always)]
    pub(crate) fn not_calm(&mut self) {
        self.calm = 0;
    }

    /// How far back the set remembers, in outputs (and the size its history is about).
    #[inline]
    pub(crate) fn horizon(&self) -> usize {
        self.released_from.max(self.retain)
    }

    /// The capacity the set does not release below.
    #[cfg(test)]
    fn retained(&self) -> usize {
        self.retain
    }
}

impl Default for Sizing {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// The capacities a set grows through, from empty, with no history.
    fn regular_capacities(groups: usize) -> Vec<usize> {
        let mut sizing = Sizing::new();
        let mut capacity = 0;
        (0..groups)
            .map(|_| {
                capacity += sizing.grow(capacity);
                capacity
            })
            .collect()
    }

    #[test]
    fn regular_groups_add_a_quarter_of_the_capacity() {
        assert_eq!(
            regular_capacities(9),
            [32, 64, 128, 256, 320, 400, 500, 625, 781],
            "groups of 32, 32, 64 and 128, then a quarter: 64, 80, 100, 125, 156"
        );
        let capacities = regular_capacities(63);
        for pair in capacities.windows(2) {
            let spare = pair[1] - pair[0];
            if (QUARTER_GROWTH_FROM..QUARTER_GROWTH_BELOW).contains(&pair[0]) {
                assert!(spare * 5 <= pair[1], "{pair:?}: more than a fifth spare");
            }
        }
    }

    #[test]
    fn past_a_quarter_million_slots_groups_double_the_capacity() {
        let mut sizing = Sizing::new();
        assert_eq!(
            sizing.grow(QUARTER_GROWTH_BELOW - 4),
            QUARTER_GROWTH_BELOW / 4 - 1
        );
        assert_eq!(sizing.grow(QUARTER_GROWTH_BELOW), QUARTER_GROWTH_BELOW);
        let capacities = regular_capacities(63);
        assert!(
            capacities[62] > 1_300_000_000,
            "63 groups hold {} slots",
            capacities[62]
        );
    }

    #[test]
    fn a_group_added_to_a_small_first_group_holds_at_least_32() {
        let mut sizing = Sizing::new();
        assert_eq!(sizing.grow(5), 32);
        assert_eq!(sizing.grow(37), 37);
    }

    #[test]
    fn groups_are_capped() {
        let mut sizing = Sizing::new();
        assert_eq!(sizing.grow(MAX_GROUP * 3), MAX_GROUP);
    }

    #[test]
    fn releases_need_half_the_capacity_below_free() {
        let sizing = Sizing::new();
        assert!(sizing.may_release(0, 32));
        assert!(sizing.may_release(16, 32));
        assert!(!sizing.may_release(17, 32));
    }

    #[test]
    fn growing_back_retains_the_capacity_reached() {
        let mut sizing = Sizing::new();
        sizing.released(256);
        // From 32: a group of 96 (three times 32), then 128, back to 256.
        assert_eq!(sizing.grow(32), 96);
        assert_eq!(sizing.retained(), 128);
        assert_eq!(sizing.grow(128), 128);
        assert_eq!(sizing.retained(), 256);
        assert!(!sizing.may_release(0, 128));
        // Past what was released, growth is regular again.
        assert_eq!(sizing.grow(256), 64);
        assert!(sizing.may_release(0, 256));
    }

    #[test]
    fn a_cycling_set_never_forgets() {
        let mut sizing = Sizing::new();
        sizing.released(256);
        sizing.grow(32);
        sizing.grow(128);
        // Each drain ends in 65 calm outputs: counted across drains rather than in a row, four
        // would make the 256 that forget. Under Miri, eight.
        for _ in 0..if cfg!(miri) { 8 } else { 100 } {
            // Drain a batch of 256 to empty.
            for len in (0..256).rev() {
                sizing.output(len);
            }
        }
        assert_eq!(sizing.retained(), 256);
    }

    #[test]
    fn a_calm_set_forgets_its_history() {
        let mut sizing = Sizing::new();
        sizing.released(256);
        sizing.grow(32);
        sizing.grow(128);
        // 255 outputs holding a quarter of 256 or less: not yet.
        for _ in 0..255 {
            sizing.output(64);
        }
        assert_eq!(sizing.retained(), 256);
        // One output holding more starts the count again.
        sizing.output(65);
        for _ in 0..255 {
            sizing.output(10);
        }
        assert_eq!(sizing.retained(), 256);
        sizing.output(10);
        assert_eq!(sizing, Sizing::new());
        assert_eq!(sizing.grow(32), 32, "regular growth once forgotten");
    }

    #[test]
    fn outputs_holding_exactly_a_quarter_count_as_calm() {
        let mut sizing = Sizing::new();
        sizing.released(256);
        for _ in 0..255 {
            sizing.output(64);
        }
        assert_eq!(sizing.retained(), 0);
        assert_ne!(sizing, Sizing::new());
        sizing.output(64);
        assert_eq!(
            sizing,
            Sizing::new(),
            "the 256th output holding 64 of 256 forgets"
        );
    }

    #[test]
    fn a_release_from_no_larger_capacity_keeps_the_count_of_calm_outputs() {
        let mut sizing = Sizing::new();
        sizing.released(256);
        for _ in 0..200 {
            sizing.output(0);
        }
        // Released from the same capacity again: the set did not grow, its calm goes on.
        sizing.released(256);
        for _ in 0..56 {
            sizing.output(0);
        }
        assert_eq!(sizing, Sizing::new());
        // From a larger one, the count starts again.
        sizing.released(256);
        for _ in 0..200 {
            sizing.output(0);
        }
        sizing.released(512);
        for _ in 0..256 {
            sizing.output(0);
        }
        assert_ne!(sizing, Sizing::new());
    }
}
