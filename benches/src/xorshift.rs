//! A small deterministic PRNG, so that every implementation and every run gets the same
//! "random" delays.

/// Marsaglia's xorshift64 (shifts 13, 7, 17). Not for anything but reproducible workloads.
#[derive(Debug, Clone)]
pub struct Xorshift {
    state: u64,
}

impl Xorshift {
    /// A generator from `seed` (a zero seed is replaced: xorshift would stay at zero).
    pub fn new(seed: u64) -> Self {
        Self {
            state: if seed == 0 {
                0x9E37_79B9_7F4A_7C15
            } else {
                seed
            },
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// A number in `0..=max` (with a negligible modulo bias for small `max`).
    pub fn up_to(&mut self, max: u64) -> u64 {
        self.next_u64() % (max + 1)
    }
}

/// `count` delays in milliseconds, each in `0..=max_ms`, the same for a given `seed`.
pub fn random_delays(count: usize, max_ms: u64, seed: u64) -> Vec<u64> {
    let mut rng = Xorshift::new(seed);
    (0..count).map(|_| rng.up_to(max_ms)).collect()
}
