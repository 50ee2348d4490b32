//! A deterministic pseudo-random sequence, for shuffles and delays that are the same on every
//! run.

/// xorshift64 (shifts 13, 7, 17): the same seed gives the same sequence.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// The generator seeded with `seed` (0 is taken as 1).
    pub fn new(seed: u64) -> Self {
        // Zero is xorshift's one fixed point.
        Self(seed.max(1))
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n`; `n` must not be 0.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `0..=max`.
    pub fn up_to(&mut self, max: u64) -> u64 {
        self.next_u64() % (max + 1)
    }

    /// Shuffles `items` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }

    /// `0..n` in a random order.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        self.shuffle(&mut order);
        order
    }
}
