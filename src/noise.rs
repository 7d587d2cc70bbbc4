//! Label noise: the flags a strategy sees are a possibly wrong copy of the true labels.
//!
//! Flags depend only on (seed, history, replicate) and the noise level — never on the strategy
//! or the budget — so strategies are compared on the very same mistakes (common random numbers).
//! Each record gets one uniform draw `u` per (seed, history, replicate); a required record loses
//! its flag when `u < false_negative`, an unrequired one gains a flag when `u < false_positive`.
//! The same draws serve every noise level, so a record mislabelled at 10 % is also mislabelled
//! at 20 %: curves over the noise axis are not jittered by fresh draws at each level.

use crate::rng;
use serde::Serialize;

/// P(flag off | required) and P(flag on | not required).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct NoiseLevel {
    pub false_negative: f64,
    pub false_positive: f64,
}

impl NoiseLevel {
    pub const NONE: NoiseLevel = NoiseLevel {
        false_negative: 0.0,
        false_positive: 0.0,
    };

    pub fn new(false_negative: f64, false_positive: f64) -> Self {
        NoiseLevel {
            false_negative,
            false_positive,
        }
    }
}

/// Every (false_negative, false_positive) pair, false-negative major: a sweep's noise axis.
pub fn levels(false_negative: &[f64], false_positive: &[f64]) -> Vec<NoiseLevel> {
    false_negative
        .iter()
        .flat_map(|&q| false_positive.iter().map(move |&p| NoiseLevel::new(q, p)))
        .collect()
}

/// Fills `out` with one uniform draw per record for (seed, history, replicate).
pub fn draws(seed: u64, history: u64, replicate: u64, records: usize, out: &mut Vec<f64>) {
    let mut s = rng::stream(&[seed, rng::tag::NOISE, history, replicate]);
    out.clear();
    out.extend((0..records).map(|_| rng::next_unit(&mut s)));
}

/// Fills `out` with the flags for `truth` at `level`, given the record draws.
pub fn apply(truth: &[bool], draws: &[f64], level: NoiseLevel, out: &mut Vec<bool>) {
    out.clear();
    out.extend(truth.iter().zip(draws).map(|(&required, &u)| {
        if required {
            u >= level.false_negative
        } else {
            u < level.false_positive
        }
    }));
}

/// The flags for one history at one noise level, drawn afresh (for one-off callers).
pub fn flags(
    truth: &[bool],
    level: NoiseLevel,
    seed: u64,
    history: u64,
    replicate: u64,
) -> Vec<bool> {
    let mut d = Vec::new();
    draws(seed, history, replicate, truth.len(), &mut d);
    let mut f = Vec::new();
    apply(truth, &d, level, &mut f);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_noise_gives_the_truth() {
        let truth = vec![true, false, true, false];
        assert_eq!(flags(&truth, NoiseLevel::NONE, 1, 2, 3), truth);
    }

    #[test]
    fn rates_one_flip_everything() {
        let truth = vec![true, false, true, false];
        assert_eq!(
            flags(&truth, NoiseLevel::new(1.0, 1.0), 1, 2, 3),
            vec![false, true, false, true]
        );
    }

    #[test]
    fn false_negatives_hit_about_q_of_required_records_and_nest_across_levels() {
        let truth = vec![true; 10_000];
        let low = flags(&truth, NoiseLevel::new(0.1, 0.0), 7, 0, 0);
        let high = flags(&truth, NoiseLevel::new(0.2, 0.0), 7, 0, 0);
        let off = |f: &[bool]| f.iter().filter(|&&x| !x).count() as f64 / f.len() as f64;
        assert!((off(&low) - 0.1).abs() < 0.01, "{}", off(&low));
        assert!((off(&high) - 0.2).abs() < 0.012, "{}", off(&high));
        // Every record wrong at 10 % is wrong at 20 %.
        assert!(low.iter().zip(&high).all(|(l, h)| *l || !*h));
    }

    #[test]
    fn different_replicates_and_histories_draw_differently() {
        let truth = vec![true; 64];
        let level = NoiseLevel::new(0.5, 0.0);
        let a = flags(&truth, level, 7, 0, 0);
        assert_ne!(a, flags(&truth, level, 7, 0, 1));
        assert_ne!(a, flags(&truth, level, 7, 1, 0));
        assert_eq!(a, flags(&truth, level, 7, 0, 0));
    }
}
