//! The summary table: per strategy × keep_recent × budget × noise level, the number of cells,
//! the feasible share, and mean, standard deviation and 95 % interval of the measures.
//!
//! Statistics are running sums in fixed point (2⁻³² resolution, in 128-bit integers): integer
//! addition is associative, so the summary is the same bit for bit whatever the thread count,
//! the chunking, or how shards split the histories — merging shards gives exactly the
//! single-machine summary, and no row needs to stay in memory. Means are over feasible cells
//! (retention over feasible cells of histories that have required records); the interval is
//! mean ± 1.96 · sd / √n (normal approximation; null below two cells).

use super::cell::CellRow;
use super::grid::Grid;
use serde::{Deserialize, Serialize};

/// One unit in fixed point: values are stored as `round(x · 2³²)`.
const ONE: f64 = (1u64 << 32) as f64;

/// Count, sum and sum of squares of a measure, exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    pub n: u64,
    #[serde(with = "i128_text")]
    sum: i128,
    #[serde(with = "i128_text")]
    sum_sq: i128,
}

impl Running {
    pub fn push(&mut self, x: f64) {
        let q = (x * ONE).round() as i128;
        self.n += 1;
        self.sum += q;
        self.sum_sq += q * q;
    }

    /// Adds another accumulator (exact, order-free).
    pub fn merge(&mut self, other: &Running) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64 / ONE)
    }

    /// Sample standard deviation, from the exact `n·Σx² − (Σx)²`.
    pub fn sd(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = self.n as i128;
        let spread = (n * self.sum_sq - self.sum * self.sum).max(0) as f64;
        Some((spread / (n as f64 * (n - 1) as f64)).sqrt() / ONE)
    }

    /// The 95 % interval of the mean.
    pub fn interval(&self) -> Option<(f64, f64)> {
        let mean = self.mean()?;
        let half = 1.96 * self.sd()? / (self.n as f64).sqrt();
        Some((mean - half, mean + half))
    }
}

/// Count, sum and sum of squares of a whole-number measure (tokens, compactions), exactly.
///
/// [`Running`] scales by 2³², which leaves room for values up to a few million before its
/// 128-bit sum of squares could overflow over many sessions; token counts of long sessions go
/// past that, and need no fraction bits anyway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub n: u64,
    sum: u128,
    sum_sq: u128,
}

impl Tally {
    pub fn push(&mut self, x: u64) {
        let x = u128::from(x);
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }

    /// Adds another tally (exact, order-free).
    pub fn merge(&mut self, other: &Tally) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// Sample standard deviation, from the exact `n·Σx² − (Σx)²` (in floating point only if
    /// that product would not fit 128 bits).
    pub fn sd(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = u128::from(self.n);
        let spread = match (n.checked_mul(self.sum_sq), self.sum.checked_mul(self.sum)) {
            (Some(a), Some(b)) => a.saturating_sub(b) as f64,
            _ => (n as f64 * self.sum_sq as f64 - (self.sum as f64).powi(2)).max(0.0),
        };
        Some((spread / (n as f64 * (n - 1) as f64)).sqrt())
    }

    /// The 95 % interval of the mean.
    pub fn interval(&self) -> Option<(f64, f64)> {
        let mean = self.mean()?;
        let half = 1.96 * self.sd()? / (self.n as f64).sqrt();
        Some((mean - half, mean + half))
    }
}

/// JSON has no 128-bit integers: write them as decimal strings.
mod i128_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &i128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub n: u64,
    pub reduction: Running,
    pub retention: Running,
    pub retention_any: Running,
    pub exact: Running,
}

/// Accumulates groups from cells, in any order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub groups: Vec<Group>,
}

impl Summary {
    pub fn new(grid: &Grid) -> Self {
        Summary {
            groups: vec![Group::default(); grid.groups()],
        }
    }

    /// Adds another summary of the same grid (exact, order-free).
    pub fn merge(&mut self, other: &Summary) {
        for (a, b) in self.groups.iter_mut().zip(&other.groups) {
            a.n += b.n;
            a.reduction.merge(&b.reduction);
            a.retention.merge(&b.retention);
            a.retention_any.merge(&b.retention_any);
            a.exact.merge(&b.exact);
        }
    }

    pub fn add(&mut self, grid: &Grid, rows: &[CellRow]) {
        for r in rows {
            let g = &mut self.groups[grid.group(
                r.strategy as usize,
                r.keep_recent_axis as usize,
                r.budget as usize,
                r.level as usize,
            )];
            g.n += 1;
            let m = &r.metrics;
            if let Some(x) = m.reduction {
                g.reduction.push(x);
            }
            if let Some(x) = m.required_retention {
                g.retention.push(x);
            }
            if let Some(x) = m.retention_any {
                g.retention_any.push(x);
            }
            if let Some(x) = m.exact {
                g.exact.push(x);
            }
        }
    }
}

/// One row of the summary table, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub strategy: String,
    pub keep_recent: u64,
    pub budget_percent: f64,
    pub false_negative: f64,
    pub false_positive: f64,
    pub n: u64,
    pub n_feasible: u64,
    pub feasible_share: f64,
    pub reduction_mean: Option<f64>,
    pub reduction_sd: Option<f64>,
    pub required_retention_mean: Option<f64>,
    pub required_retention_sd: Option<f64>,
    pub required_retention_ci_low: Option<f64>,
    pub required_retention_ci_high: Option<f64>,
    pub retention_any_mean: Option<f64>,
    pub retention_any_ci_low: Option<f64>,
    pub retention_any_ci_high: Option<f64>,
    pub exact_mean: Option<f64>,
}

impl Summary {
    pub fn rows(&self, grid: &Grid) -> Vec<SummaryRow> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let (s, k, b, l) = grid.group_coordinates(i);
                let strategy = &grid.strategies[s];
                let level = grid.levels[l];
                // Feasible cells are exactly those with a reduction.
                let n_feasible = g.reduction.n;
                SummaryRow {
                    strategy: grid.labels[s].clone(),
                    keep_recent: strategy.effective_keep_recent(grid.keep_recent[k]) as u64,
                    budget_percent: grid.budgets[b],
                    false_negative: level.false_negative,
                    false_positive: level.false_positive,
                    n: g.n,
                    n_feasible,
                    feasible_share: if g.n == 0 {
                        0.0
                    } else {
                        n_feasible as f64 / g.n as f64
                    },
                    reduction_mean: g.reduction.mean(),
                    reduction_sd: g.reduction.sd(),
                    required_retention_mean: g.retention.mean(),
                    required_retention_sd: g.retention.sd(),
                    required_retention_ci_low: g.retention.interval().map(|i| i.0),
                    required_retention_ci_high: g.retention.interval().map(|i| i.1),
                    retention_any_mean: g.retention_any.mean(),
                    retention_any_ci_low: g.retention_any.interval().map(|i| i.0),
                    retention_any_ci_high: g.retention_any.interval().map(|i| i.1),
                    exact_mean: g.exact.mean(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_statistics_match_hand_computation() {
        let mut r = Running::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            r.push(x);
        }
        assert_eq!(r.mean(), Some(5.0));
        // Sum of squared deviations 32, sample variance 32/7.
        assert!((r.sd().unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let (lo, hi) = r.interval().unwrap();
        let half = 1.96 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        assert!((lo - (5.0 - half)).abs() < 1e-12 && (hi - (5.0 + half)).abs() < 1e-12);
        let mut one = Running::default();
        one.push(3.0);
        assert_eq!(
            (one.mean(), one.sd(), one.interval()),
            (Some(3.0), None, None)
        );
    }

    #[test]
    fn merging_in_any_split_gives_the_same_bits() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1000) as f64 / 997.0)
            .collect();
        let mut whole = Running::default();
        xs.iter().for_each(|&x| whole.push(x));
        for split in [1, 13, 500, 999] {
            let (mut a, mut b) = (Running::default(), Running::default());
            xs[..split].iter().for_each(|&x| a.push(x));
            xs[split..].iter().rev().for_each(|&x| b.push(x));
            b.merge(&a);
            assert_eq!(b, whole);
            assert_eq!(b.mean().unwrap().to_bits(), whole.mean().unwrap().to_bits());
        }
        let json = serde_json::to_string(&whole).unwrap();
        assert_eq!(serde_json::from_str::<Running>(&json).unwrap(), whole);
    }

    #[test]
    fn tallies_are_exact_on_large_whole_numbers() {
        let mut t = Tally::default();
        for x in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            t.push(x);
        }
        assert_eq!(t.mean(), Some(5.0));
        assert!((t.sd().unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // Ten thousand sessions of ten billion tokens: far past what 2³² fixed point holds.
        let mut big = Tally::default();
        let mut split = (Tally::default(), Tally::default());
        for i in 0..10_000u64 {
            let x = 10_000_000_000 + i;
            big.push(x);
            if i % 3 == 0 {
                split.0.push(x)
            } else {
                split.1.push(x)
            }
        }
        split.1.merge(&split.0);
        assert_eq!(split.1, big);
        assert_eq!(big.mean(), Some(10_000_004_999.5));
        // The sd of 0..10000 is sqrt(10000 · 10001 / 12).
        assert!((big.sd().unwrap() - (10_000.0f64 * 10_001.0 / 12.0).sqrt()).abs() < 1e-6);
        assert_eq!(Tally::default().mean(), None);
    }
}
