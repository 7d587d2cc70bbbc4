//! Portable, seed-stable random streams.
//!
//! Every stream is derived from the experiment seed and the coordinates of what it is for
//! (history, replicate, compaction, ...) with the SplitMix64 finaliser, so a cell is
//! reproducible on its own, on any thread, in any order. Sequences come from `ChaCha8Rng`,
//! whose output is fixed by its algorithm (unlike `StdRng`).

use rand::rngs::ChaCha8Rng;
use rand::{Rng, SeedableRng};

/// Stream tags: the same coordinates give unrelated numbers for different purposes.
pub mod tag {
    pub const NOISE: u64 = 0x6e6f697365;
    /// A history's own noise draws, the same in every replicate (`correlated`).
    pub const NOISE_HISTORY: u64 = 0x6e6f6973655f68;
    /// The draws that pick between a history's and a replicate's noise draw (`correlated`).
    pub const NOISE_SELECTOR: u64 = 0x6e6f6973655f73;
    pub const SUMMARY: u64 = 0x73756d6d617279;
    pub const GENERATE: u64 = 0x67656e;
    pub const NOTES: u64 = 0x6e6f746573;
    /// A session of a session sweep (its summaries and notes).
    pub const SESSION: u64 = 0x73657373696f6e;
}

/// The SplitMix64 finaliser: a bijective mix of 64 bits.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A key for the given coordinates; order matters.
pub fn key(parts: &[u64]) -> u64 {
    parts.iter().fold(0x6374_786c_6162u64, |h, &p| mix(h ^ p))
}

/// A `ChaCha8Rng` for the given coordinates.
pub fn stream(parts: &[u64]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(key(parts))
}

/// A uniform number in `[0, 1)` from 64 random bits (53 bits of precision).
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The next uniform number of a stream.
pub fn next_unit(rng: &mut ChaCha8Rng) -> f64 {
    unit(rng.next_u64())
}

/// The `index`-th uniform number of a counter-based stream: no state, no allocation, the same
/// value whatever was drawn before. Used for per-record draws inside the hot loop.
pub fn unit_at(stream: u64, index: u64) -> f64 {
    unit(mix(stream ^ mix(index)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chacha8_matches_its_published_golden_value() {
        assert_eq!(
            ChaCha8Rng::seed_from_u64(42).next_u64(),
            12578764544318200737
        );
    }

    #[test]
    fn mix_and_key_are_pinned() {
        // SplitMix64's first output for state 0 (the generator adds the constant first).
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_ne!(key(&[1, 2]), key(&[2, 1]));
        assert_eq!(key(&[7, 3]), key(&[7, 3]));
    }

    #[test]
    fn units_are_in_range_and_roughly_uniform() {
        let n = 20_000;
        let mean = (0..n).map(|i| unit_at(99, i)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert!((0..n).all(|i| (0.0..1.0).contains(&unit_at(5, i))));
        assert_eq!(unit(0), 0.0);
        assert!(unit(u64::MAX) < 1.0);
    }
}
