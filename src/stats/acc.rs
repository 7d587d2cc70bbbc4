//! The accumulator of one measure in one group: exact integer sums of the values and of each
//! history's totals, and what they give (mean, standard deviation, the interval by history).

use serde::{Deserialize, Serialize};

use super::intervals::{clopper_pearson, jeffreys, t975};

/// One unit of a fraction in fixed point: values are stored as `round(x · 2³²)`.
const ONE: f64 = (1u64 << 32) as f64;

/// Below this magnitude a value is quantised through `i64` ([`Acc::quantise`]).
const FAST_QUANTISE: f64 = (1u64 << 62) as f64;

/// The running statistics of one measure in one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acc {
    /// Whole numbers (tokens, compactions) rather than fractions in fixed point.
    pub whole: bool,
    /// Every value lies in [0, 1] (a share, or a flag counted 0 or 1): the interval is the one
    /// for shares (see the module documentation). Absent from states written before it.
    #[serde(default)]
    pub unit: bool,
    /// A value of 0 is a failure (an infeasible cell counts 0): the share's interval also
    /// bounds the share of histories that fail ([`Acc::failure_interval`]). Absent from states
    /// written before it.
    #[serde(default)]
    pub zero_fails: bool,
    /// Values.
    pub n: u64,
    /// Histories with at least one value.
    pub histories: u64,
    #[serde(with = "i128_text")]
    pub(super) sum: i128,
    #[serde(with = "i128_text")]
    sum_sq: i128,
    /// Σ over histories of the history's sum squared, of its count squared, and of the two
    /// multiplied.
    #[serde(with = "i128_text")]
    history_sum_sq: i128,
    #[serde(with = "i128_text")]
    history_n_sq: i128,
    #[serde(with = "i128_text")]
    history_sum_n: i128,
    /// Histories with a value at 0, their values and the sum of those (format 3 on).
    #[serde(default)]
    failing: u64,
    #[serde(default)]
    failing_n: u64,
    #[serde(with = "i128_text", default)]
    failing_sum: i128,
}

/// The values of one measure that one history gives one group, before they join the group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partial {
    pub(super) n: u64,
    pub(super) sum: i128,
    sum_sq: i128,
    /// Values at 0.
    zeros: u64,
}

impl Partial {
    /// Adds one value, in the accumulator's integer form ([`Acc::quantise`]).
    pub fn push(&mut self, q: i128) {
        self.n += 1;
        self.sum += q;
        // A value within i64 squares exactly in one 64 × 64 → 128-bit multiply (below 2¹²⁶, so
        // no saturation): the product the saturating i128 multiply gives, without its checks.
        let square = match i64::try_from(q) {
            Ok(q) => i128::from(q) * i128::from(q),
            Err(_) => q.saturating_mul(q),
        };
        self.sum_sq = self.sum_sq.saturating_add(square);
        self.zeros += u64::from(q == 0);
    }
}

/// [`Acc::quantise`] beyond ±2⁶², out of line: inlined, the compiler computed this software
/// conversion for every value and then chose the fast one (`round` and `__fixdfti` were 5 % of
/// a sweep's profile).
#[cold]
#[inline(never)]
fn quantise_far(whole: bool, x: f64) -> i128 {
    if whole {
        x as i128
    } else {
        (x * ONE).round() as i128
    }
}

impl Acc {
    pub fn new(whole: bool) -> Acc {
        Acc {
            whole,
            ..Acc::default()
        }
    }

    /// An accumulator of a measure whose values all lie in [0, 1].
    pub fn share(whole: bool) -> Acc {
        Acc {
            unit: true,
            ..Acc::new(whole)
        }
    }

    /// An accumulator of a share where a value of 0 is a failure (see [`Acc::zero_fails`]).
    pub fn failure_share(whole: bool) -> Acc {
        Acc {
            zero_fails: true,
            ..Acc::share(whole)
        }
    }

    /// A value in the accumulator's integer form.
    pub fn quantise(&self, x: f64) -> i128 {
        let y = if self.whole { x } else { x * ONE };
        // Within ±2⁶², through `i64`: the same integer as `round() as i128` (or `as i128` for a
        // whole value), without the software conversion to i128 and the call to `round`.
        if y.abs() < FAST_QUANTISE {
            let t = y as i64;
            if self.whole {
                return i128::from(t);
            }
            // Exact: below 2⁵² the fraction is representable, above it y is whole.
            let fraction = y - t as f64;
            let rounded = if fraction >= 0.5 {
                t + 1
            } else if fraction <= -0.5 {
                t - 1
            } else {
                t
            };
            return i128::from(rounded);
        }
        quantise_far(self.whole, x)
    }

    fn scale(&self) -> f64 {
        if self.whole {
            1.0
        } else {
            ONE
        }
    }

    /// The sum of a whole measure's values: for a flag, how many rows have it set.
    pub fn whole_sum(&self) -> u64 {
        debug_assert!(self.whole, "a sum of whole values");
        u64::try_from(self.sum).unwrap_or(0)
    }

    /// Adds the values one history gave this group (exact).
    pub fn add_history(&mut self, p: &Partial) {
        if p.n == 0 {
            return;
        }
        let n = i128::from(p.n);
        self.n += p.n;
        self.histories += 1;
        self.sum += p.sum;
        self.sum_sq = self.sum_sq.saturating_add(p.sum_sq);
        self.history_sum_sq = self
            .history_sum_sq
            .saturating_add(p.sum.saturating_mul(p.sum));
        self.history_n_sq += n * n;
        self.history_sum_n = self.history_sum_n.saturating_add(p.sum.saturating_mul(n));
        if p.zeros > 0 {
            self.failing += 1;
            self.failing_n += p.n;
            self.failing_sum = self.failing_sum.saturating_add(p.sum);
        }
    }

    /// Whether the sums could come from real values: what a shard state read from disk must
    /// satisfy before it is merged (a hand-edited moment would otherwise give a mean
    /// retention of −15.5). The message names the broken rule.
    pub fn check(&self) -> Result<(), String> {
        let n = i128::from(self.n);
        let rules = [
            (self.histories <= self.n, "more histories than values"),
            (
                (self.n == 0) == (self.histories == 0),
                "values without histories",
            ),
            (
                self.sum_sq >= 0 && self.history_sum_sq >= 0,
                "a negative sum of squares",
            ),
            // Σn_h² lies between N (one value per history) and N² (all in one).
            (
                self.history_n_sq >= n && n.checked_mul(n).is_none_or(|nn| self.history_n_sq <= nn),
                "a count of squares that no split of the values gives",
            ),
            // Cauchy–Schwarz: (Σx)² ≤ N·Σx², and (Σs_h)² ≤ H·Σs_h² (unless saturated).
            (
                cauchy_schwarz(self.sum, n, self.sum_sq),
                "a sum too large for its sum of squares",
            ),
            (
                cauchy_schwarz(self.sum, i128::from(self.histories), self.history_sum_sq),
                "a sum too large for its histories' sum of squares",
            ),
            // A share's values lie in [0, 1], so their sum in [0, N].
            (
                !self.unit
                    || (self.sum >= 0
                        && n.checked_mul(self.scale() as i128)
                            .is_none_or(|most| self.sum <= most)),
                "a share whose sum lies outside 0 to its number of values",
            ),
            // The failing histories are some of the histories, with some of the values (at
            // least one each), and of a share they hold part of the sum.
            (
                self.failing <= self.histories
                    && self.failing_n <= self.n
                    && self.failing <= self.failing_n
                    && (self.failing == 0) == (self.failing_n == 0)
                    && (!self.unit || (self.failing_sum >= 0 && self.failing_sum <= self.sum)),
                "failing histories that no split of the values gives",
            ),
        ];
        match rules.iter().find(|(ok, _)| !ok) {
            Some((_, broken)) => Err((*broken).to_string()),
            None => Ok(()),
        }
    }

    /// Adds another accumulator of other histories (exact, order-free).
    pub fn merge(&mut self, o: &Acc) {
        self.n += o.n;
        self.histories += o.histories;
        // Checked states only ever get here, but a sum must saturate rather than wrap.
        self.sum = self.sum.saturating_add(o.sum);
        self.sum_sq = self.sum_sq.saturating_add(o.sum_sq);
        self.history_sum_sq = self.history_sum_sq.saturating_add(o.history_sum_sq);
        self.history_n_sq = self.history_n_sq.saturating_add(o.history_n_sq);
        self.history_sum_n = self.history_sum_n.saturating_add(o.history_sum_n);
        self.failing += o.failing;
        self.failing_n += o.failing_n;
        self.failing_sum = self.failing_sum.saturating_add(o.failing_sum);
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64 / self.scale())
    }

    /// Sample standard deviation of the values (descriptive: it says how spread the cells
    /// are, not how sure the mean is), from the exact `n·Σx² − (Σx)²`.
    pub fn sd(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = self.n as f64;
        let spread = match (
            i128::from(self.n).checked_mul(self.sum_sq),
            self.sum.checked_mul(self.sum),
        ) {
            (Some(a), Some(b)) => (a - b).max(0) as f64,
            _ => (n * self.sum_sq as f64 - (self.sum as f64).powi(2)).max(0.0),
        };
        Some((spread / (n * (n - 1.0))).sqrt() / self.scale())
    }

    /// The 95 % interval of the mean by history (see the module documentation): Jeffreys's
    /// interval on the effective sample for a share, the normal-theory one otherwise; `None`
    /// with fewer than two histories.
    pub fn interval(&self) -> Option<(f64, f64)> {
        if self.histories < 2 {
            return None;
        }
        let mean = self.mean()?;
        let scale = self.scale();
        let variance = self.variance();
        let t = t975(self.histories - 1);
        if self.unit {
            let p = mean.clamp(0.0, 1.0);
            let v = variance / (scale * scale);
            // Korn and Graubard's degrees-of-freedom correction: the effective sample is
            // shrunk so that far from the bounds the interval is as wide as with t(H − 1).
            let df = t975(self.n - 1) / t;
            let (low, high) = jeffreys(p, self.effective_n(p, v) * df * df);
            if self.zero_fails {
                let (f_low, f_high) = self.failure_interval();
                return Some((low.min(f_low), high.max(f_high).min(1.0)));
            }
            return Some((low, high));
        }
        let half = t * variance.sqrt() / scale;
        Some((mean - half, mean + half))
    }

    /// The interval of a share where 0 is a failure, from the share of histories that fail
    /// (see the module documentation): with `F` of the `H` histories failing (a value at 0),
    /// `[φ₋, φ₊]` the Clopper–Pearson interval of `F / H`, `m_ok` the mean of the other
    /// histories' values and `m_fail` the failing ones', each counted with one history more of
    /// `N / H` values at the far bound (all 0 among the failing ones for the low end, all 1
    /// among the others for the high end), it runs from `(1 − φ₊)·m_ok + φ₊·m_fail⁻` to
    /// `(1 − φ₋)·m_ok⁺ + φ₋·m_fail`. Needs `H ≥ 1`.
    fn failure_interval(&self) -> (f64, f64) {
        let scale = self.scale();
        let (h, f) = (self.histories, self.failing);
        let (failing_low, failing_high) = clopper_pearson(f, h);
        let n = self.n as f64;
        let extra = n / h as f64; // one history of average size
        let (n_fail, s_fail) = (self.failing_n as f64, self.failing_sum as f64 / scale);
        let (n_ok, s_ok) = (n - n_fail, (self.sum - self.failing_sum) as f64 / scale);
        let ratio = |s: f64, n: f64| if n > 0.0 { s / n } else { 0.0 };
        let low =
            (1.0 - failing_high) * ratio(s_ok, n_ok) + failing_high * s_fail / (n_fail + extra);
        let high = (1.0 - failing_low) * (s_ok + extra) / (n_ok + extra)
            + failing_low * ratio(s_fail, n_fail);
        (low.clamp(0.0, 1.0), high.clamp(0.0, 1.0))
    }

    /// The CR1 variance of the mean, in the accumulator's units squared.
    fn variance(&self) -> f64 {
        let n = self.n as f64;
        let m = self.sum as f64 / n; // in the accumulator's units
        let residual = (self.history_sum_sq as f64 - 2.0 * m * self.history_sum_n as f64
            + m * m * self.history_n_sq as f64)
            .max(0.0);
        let h = self.histories as f64;
        h / (h - 1.0) * residual / (n * n)
    }

    /// Whether every history has the same mean, decided on the exact sums where they allow
    /// (`s_h = m · n_h` for all h exactly when `(Σ s_h n_h)² = Σ s_h² · Σ n_h²`), so that
    /// rounding in [`Acc::variance`] cannot pass for variation.
    fn histories_agree(&self, variance: f64) -> bool {
        let products = (
            self.history_sum_n.checked_mul(self.history_sum_n),
            self.history_sum_sq.checked_mul(self.history_n_sq),
        );
        match products {
            (Some(a), Some(b))
                if self.history_sum_sq < i128::MAX && self.history_sum_n < i128::MAX =>
            {
                a == b
            }
            _ => variance == 0.0,
        }
    }

    /// The effective sample size `n* = N / deff` of a share's mean `p`: `p(1 − p) / V`, or,
    /// where the histories do not vary, `N² / Σ n_h²` (the history as the unit).
    fn effective_n(&self, p: f64, variance: f64) -> f64 {
        let spread = p * (1.0 - p);
        if spread > 0.0 && variance > 0.0 && !self.histories_agree(variance) {
            spread / variance
        } else {
            let n = self.n as f64;
            n * n / self.history_n_sq as f64
        }
    }
}

/// `sum² ≤ n · sum_sq`, in floating point with a margin (a forged sum is off by far more);
/// a saturated sum of squares cannot be checked.
fn cauchy_schwarz(sum: i128, n: i128, sum_sq: i128) -> bool {
    sum_sq == i128::MAX || (sum as f64).powi(2) <= n as f64 * sum_sq as f64 * (1.0 + 1e-9)
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

#[cfg(test)]
mod share_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference the fast path of `quantise` must equal.
    fn quantise_reference(whole: bool, x: f64) -> i128 {
        if whole {
            x as i128
        } else {
            (x * ONE).round() as i128
        }
    }

    #[test]
    fn quantise_through_i64_gives_the_integer_round_gives() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            1.0 / 3.0,
            -2.0 / 7.0,
            0.49999999999999994,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            -1e300,
            (1u64 << 52) as f64 + 1.0,
            (1u64 << 62) as f64,
            -((1u64 << 62) as f64),
            (1u64 << 62) as f64 - 1024.0,
            4.0e9,
            1.0e12,
        ];
        // Ties of the fixed point: k + 0.5 units.
        values.extend((0..1000).map(|k| (k as f64 + 0.5) / ONE));
        values.extend((0..1000).map(|k| -(k as f64 + 0.5) / ONE));
        // Random doubles of every magnitude, and random shares.
        values.extend((0..200_000).map(|_| f64::from_bits(next())));
        values.extend((0..200_000).map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64));
        for whole in [false, true] {
            let acc = Acc::new(whole);
            for &v in &values {
                assert_eq!(
                    acc.quantise(v),
                    quantise_reference(whole, v),
                    "{v:e}, whole {whole}"
                );
            }
        }
        // The cases worked by hand: 2.5 units rounds away from zero, 2.4999 units down.
        let share = Acc::new(false);
        assert_eq!(share.quantise(2.5 / ONE), 3);
        assert_eq!(share.quantise(-2.5 / ONE), -3);
        assert_eq!(share.quantise(0.5), 1 << 31);
        assert_eq!(Acc::new(true).quantise(-7.9), -7);
    }

    #[test]
    fn a_partial_squares_as_the_saturating_i128_multiply_does() {
        // Within i64 the one-multiply square is exact; beyond it, and at i64's own ends, the
        // square saturates as before.
        let big = i128::from(i64::MAX);
        for q in [
            0,
            1,
            -1,
            3,
            1 << 32,
            -(1 << 40),
            big,
            -big - 1,
            big + 1,
            -big - 2,
            i128::MAX,
            i128::MIN,
        ] {
            let mut p = Partial::default();
            p.push(q);
            p.push(q);
            let square = q.saturating_mul(q);
            assert_eq!(p.sum_sq, square.saturating_add(square), "{q}");
            assert_eq!(p.n, 2);
        }
        // Worked by hand: (2³²)² = 2⁶⁴, twice.
        let mut p = Partial::default();
        p.push(1 << 32);
        p.push(-(1 << 32));
        assert_eq!((p.sum, p.sum_sq), (0, 1 << 65));
    }
}
