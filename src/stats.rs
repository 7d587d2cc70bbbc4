//! The statistics behind every summary table: per group, the number of rows and, per measure,
//! the mean, standard deviation and 95 % interval.
//!
//! Statistics are running sums in fixed point (2⁻³² resolution, in 128-bit integers): integer
//! addition is associative, so the summary is the same bit for bit whatever the thread count,
//! the chunking, or how shards split the histories — merging shards gives exactly the
//! single-machine summary, and no row needs to stay in memory. Means are over feasible cells
//! (retention over feasible cells of histories that have required records); the interval is
//! mean ± 1.96 · sd / √n (normal approximation; null below two cells).

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub n: u64,
    #[serde(with = "u128_text")]
    sum: u128,
    #[serde(with = "u128_text")]
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
mod u128_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
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

/// The accumulator of one measure: exact tallies for whole numbers, fixed point for fractions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Acc {
    Whole(Tally),
    Real(Running),
}

impl Acc {
    pub fn n(&self) -> u64 {
        match self {
            Acc::Whole(t) => t.n,
            Acc::Real(r) => r.n,
        }
    }

    pub fn mean(&self) -> Option<f64> {
        match self {
            Acc::Whole(t) => t.mean(),
            Acc::Real(r) => r.mean(),
        }
    }

    pub fn sd(&self) -> Option<f64> {
        match self {
            Acc::Whole(t) => t.sd(),
            Acc::Real(r) => r.sd(),
        }
    }

    pub fn interval(&self) -> Option<(f64, f64)> {
        match self {
            Acc::Whole(t) => t.interval(),
            Acc::Real(r) => r.interval(),
        }
    }

    fn merge(&mut self, other: &Acc) {
        match (self, other) {
            (Acc::Whole(a), Acc::Whole(b)) => a.merge(b),
            (Acc::Real(a), Acc::Real(b)) => a.merge(b),
            _ => unreachable!("summaries of one grid have the same measures"),
        }
    }
}

/// One summary group: its number of rows and an accumulator per measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupAcc {
    pub n: u64,
    pub measures: Vec<Acc>,
}

/// The running summary of a sweep: one [`GroupAcc`] per group, in group order. It is what a
/// checkpoint and a shard state carry, and merging two is exact and order-free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub groups: Vec<GroupAcc>,
}

impl Summary {
    /// An empty summary of `groups` groups whose measures are whole (`true`) or fractional.
    pub fn new(groups: usize, whole: &[bool]) -> Self {
        let empty = GroupAcc {
            n: 0,
            measures: whole
                .iter()
                .map(|&w| {
                    if w {
                        Acc::Whole(Tally::default())
                    } else {
                        Acc::Real(Running::default())
                    }
                })
                .collect(),
        };
        Summary {
            groups: vec![empty; groups],
        }
    }

    /// Whether `other` has the same shape (groups and measure kinds) as `self`.
    pub fn same_shape(&self, other: &Summary) -> bool {
        self.groups.len() == other.groups.len()
            && self.groups.iter().zip(&other.groups).all(|(a, b)| {
                a.measures.len() == b.measures.len()
                    && a.measures.iter().zip(&b.measures).all(|(x, y)| {
                        matches!(
                            (x, y),
                            (Acc::Whole(_), Acc::Whole(_)) | (Acc::Real(_), Acc::Real(_))
                        )
                    })
            })
    }

    /// Adds another summary of the same shape (exact, order-free).
    pub fn merge(&mut self, other: &Summary) {
        for (a, b) in self.groups.iter_mut().zip(&other.groups) {
            a.n += b.n;
            for (x, y) in a.measures.iter_mut().zip(&b.measures) {
                x.merge(y);
            }
        }
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
