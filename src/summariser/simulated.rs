//! `simulated`: no model is called. For each record a summary replaces, the record's
//! information survives with a probability that depends on whether the record is flagged
//! (summary prompts ask to keep decisions, constraints and open problems); the summary's text
//! holds the facts of every record that survives. What survives is paraphrased: it counts for
//! `retention_any` and `fact_retention`, never for `exact`. Summarising a summary applies recall
//! again to what it carries, so repeated compaction compounds loss.

use crate::rng;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simulated {
    pub recall_flagged: f64,
    pub recall_other: f64,
}

impl Default for Simulated {
    fn default() -> Self {
        Simulated {
            recall_flagged: 0.9,
            recall_other: 0.2,
        }
    }
}

impl Simulated {
    pub fn recall(&self, flagged: bool) -> f64 {
        if flagged {
            self.recall_flagged
        } else {
            self.recall_other
        }
    }

    /// Whether the information of record `index` survives a summary drawn from `stream`.
    /// Counter-based: the answer depends on (stream, index) only.
    pub fn keeps(&self, flagged: bool, stream: u64, index: u64) -> bool {
        rng::unit_at(stream, index) < self.recall(flagged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_one_keeps_all_and_zero_keeps_none() {
        let all = Simulated {
            recall_flagged: 1.0,
            recall_other: 1.0,
        };
        let none = Simulated {
            recall_flagged: 0.0,
            recall_other: 0.0,
        };
        assert!((0..1000).all(|i| all.keeps(i % 2 == 0, 3, i)));
        assert!((0..1000).all(|i| !none.keeps(i % 2 == 0, 3, i)));
    }

    #[test]
    fn recall_is_the_survival_rate() {
        let s = Simulated::default();
        let n = 20_000u64;
        let kept = (0..n).filter(|&i| s.keeps(true, 11, i)).count() as f64 / n as f64;
        assert!((kept - 0.9).abs() < 0.01, "{kept}");
    }
}
