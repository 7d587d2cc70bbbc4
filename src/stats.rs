//! The statistics behind every summary table: per group and measure, the number of values and
//! of histories, the mean, the standard deviation of the values, and a 95 % interval of the
//! mean that treats the **history** as the unit.
//!
//! Replicates, budgets and strategies of one history share that history, so their values are
//! correlated (a strategy that ignores flags gives identical replicates). The interval is
//! therefore cluster-robust: with `s_h` and `n_h` the sum and count of history `h`'s values,
//! `H` histories and `N = Σ n_h`, the mean is `m = Σ s_h / N`, its variance
//! `V = H / (H − 1) · Σ_h (s_h − m·n_h)² / N²` (the CR1 sandwich estimator of a ratio mean), and
//! the interval `m ± t(0.975, H − 1) · √V`. A group whose values all come from one history has
//! no interval (`None`, and `n_histories = 1` says why).
//!
//! Everything is kept as exact integer sums: values as integers (whole measures) or in fixed
//! point (fractions, 2⁻³² resolution), and the per-history totals `Σ s_h`, `Σ s_h²`, `Σ n_h²`,
//! `Σ s_h·n_h` as 128-bit integers. Integer addition is associative, so the summary — interval
//! included — is the same bit for bit whatever the thread count, the chunking, or how shards
//! split the histories (a history never spans two shards), and no row needs to stay in memory.

use serde::{Deserialize, Serialize};

/// One unit of a fraction in fixed point: values are stored as `round(x · 2³²)`.
const ONE: f64 = (1u64 << 32) as f64;

/// The running statistics of one measure in one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acc {
    /// Whole numbers (tokens, compactions) rather than fractions in fixed point.
    pub whole: bool,
    /// Values.
    pub n: u64,
    /// Histories with at least one value.
    pub histories: u64,
    #[serde(with = "i128_text")]
    sum: i128,
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
}

/// The values of one measure that one history gives one group, before they join the group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partial {
    n: u64,
    sum: i128,
    sum_sq: i128,
}

impl Partial {
    /// Adds one value, in the accumulator's integer form ([`Acc::quantise`]).
    pub fn push(&mut self, q: i128) {
        self.n += 1;
        self.sum += q;
        self.sum_sq = self.sum_sq.saturating_add(q.saturating_mul(q));
    }
}

impl Acc {
    pub fn new(whole: bool) -> Acc {
        Acc {
            whole,
            ..Acc::default()
        }
    }

    /// A value in the accumulator's integer form.
    pub fn quantise(&self, x: f64) -> i128 {
        if self.whole {
            x as i128
        } else {
            (x * ONE).round() as i128
        }
    }

    fn scale(&self) -> f64 {
        if self.whole {
            1.0
        } else {
            ONE
        }
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

    /// The 95 % interval of the mean by history (see the module documentation); `None` with
    /// fewer than two histories.
    pub fn interval(&self) -> Option<(f64, f64)> {
        if self.histories < 2 {
            return None;
        }
        let mean = self.mean()?;
        let scale = self.scale();
        let n = self.n as f64;
        let m = self.sum as f64 / n; // in the accumulator's units
        let residual = (self.history_sum_sq as f64 - 2.0 * m * self.history_sum_n as f64
            + m * m * self.history_n_sq as f64)
            .max(0.0);
        let h = self.histories as f64;
        let variance = h / (h - 1.0) * residual / (n * n);
        let half = t975(self.histories - 1) * variance.sqrt() / scale;
        Some((mean - half, mean + half))
    }
}

/// `sum² ≤ n · sum_sq`, in floating point with a margin (a forged sum is off by far more);
/// a saturated sum of squares cannot be checked.
fn cauchy_schwarz(sum: i128, n: i128, sum_sq: i128) -> bool {
    sum_sq == i128::MAX || (sum as f64).powi(2) <= n as f64 * sum_sq as f64 * (1.0 + 1e-9)
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (exact table to 30, then the
/// Cornish–Fisher expansion, within 10⁻⁴ of the exact value).
pub fn t975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z: f64 = 1.959_964;
            let v = df as f64;
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// The 95 % Wilson score interval of a share of `kept` successes in `of` independent trials;
/// `None` for none. Unlike the normal approximation it stays within 0 to 1 and has width at a
/// share of 0 or 1.
pub fn wilson(kept: u64, of: u64) -> Option<(f64, f64)> {
    if of == 0 {
        return None;
    }
    let z = 1.959_964_f64;
    let (n, p) = (of as f64, kept as f64 / of as f64);
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some((centre - half, centre + half))
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

/// One summary group: its number of rows and an accumulator per measure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupAcc {
    pub n: u64,
    /// Histories with at least one row in the group.
    pub histories: u64,
    pub measures: Vec<Acc>,
}

/// A paired comparison: the differences (strategy − baseline) of one measure over the cells
/// both define, cell by cell on the same (history, replicate, ...) coordinates, and how many
/// histories come out better or worse on average.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairAcc {
    pub diff: Acc,
    pub better: u64,
    pub worse: u64,
    /// Pairs of rows left out (a cost measure where a run did not complete).
    #[serde(default)]
    pub excluded: u64,
}

/// The running summary of a sweep: one [`GroupAcc`] per group, in group order, and the paired
/// comparisons of every group with every other strategy. It is what a checkpoint and a shard
/// state carry, and merging two is exact and order-free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub groups: Vec<GroupAcc>,
    /// Indexed `(group × strategies + baseline) × paired measures + measure`.
    #[serde(default)]
    pub pairs: Vec<PairAcc>,
}

/// What one history gives the groups, gathered before it joins the summary: a partial per
/// group and measure, and the groups it touched (so clearing costs what was touched).
#[derive(Debug, Clone, Default)]
pub struct HistoryPartials {
    measures: usize,
    rows: Vec<u64>,
    partials: Vec<Partial>,
    touched: Vec<usize>,
    pairs: Vec<Partial>,
    pairs_touched: Vec<usize>,
    /// Per pair: row pairs left out (see [`PairAcc::excluded`]).
    pairs_excluded: Vec<u64>,
}

impl HistoryPartials {
    /// Records that the history has a row in `group`; returns where its measures go.
    fn row(&mut self, group: usize) -> &mut [Partial] {
        if self.rows[group] == 0 {
            self.touched.push(group);
        }
        self.rows[group] += 1;
        let m = self.measures;
        &mut self.partials[group * m..(group + 1) * m]
    }
}

impl Summary {
    /// An empty summary of `groups` groups whose measures are whole (`true`) or fractional,
    /// with pairs for `strategies` baselines of the `paired` measures (whole or not).
    pub fn new(groups: usize, whole: &[bool], strategies: usize, paired: &[bool]) -> Self {
        let empty = GroupAcc {
            n: 0,
            histories: 0,
            measures: whole.iter().map(|&w| Acc::new(w)).collect(),
        };
        let pairs = (0..groups * strategies)
            .flat_map(|_| paired.iter())
            .map(|&w| PairAcc {
                diff: Acc::new(w),
                better: 0,
                worse: 0,
                excluded: 0,
            })
            .collect();
        Summary {
            groups: vec![empty; groups],
            pairs,
        }
    }

    /// Adds one history's differences: `(pair index, strategy − baseline)` per pair of cells
    /// (`None`: a pair left out). Call it once per history, after [`Summary::add_history`] with
    /// the same scratch.
    pub fn add_pairs(
        &mut self,
        scratch: &mut HistoryPartials,
        diffs: impl IntoIterator<Item = (usize, Option<f64>)>,
    ) {
        self.gather_pairs(scratch, diffs);
        self.close_pairs(scratch);
    }

    /// Gathers differences of part of a history into `scratch`, to join the summary at
    /// [`Summary::close_pairs`]: a history evaluated in pieces adds exactly what it adds whole
    /// (the partial sums are whole numbers).
    pub fn gather_pairs(
        &self,
        scratch: &mut HistoryPartials,
        diffs: impl IntoIterator<Item = (usize, Option<f64>)>,
    ) {
        for (pair, d) in diffs {
            let p = &mut scratch.pairs[pair];
            if p.n == 0 && scratch.pairs_excluded[pair] == 0 {
                scratch.pairs_touched.push(pair);
            }
            match d {
                Some(d) => p.push(self.pairs[pair].diff.quantise(d)),
                None => scratch.pairs_excluded[pair] += 1,
            }
        }
    }

    /// Adds the differences gathered since the history began.
    pub fn close_pairs(&mut self, scratch: &mut HistoryPartials) {
        for &i in &scratch.pairs_touched {
            let p = std::mem::take(&mut scratch.pairs[i]);
            let acc = &mut self.pairs[i];
            acc.excluded += std::mem::take(&mut scratch.pairs_excluded[i]);
            if p.n == 0 {
                continue;
            }
            acc.diff.add_history(&p);
            match p.sum.cmp(&0) {
                std::cmp::Ordering::Greater => acc.better += 1,
                std::cmp::Ordering::Less => acc.worse += 1,
                std::cmp::Ordering::Equal => {}
            }
        }
        scratch.pairs_touched.clear();
    }

    /// A scratch for [`Summary::add_history`], sized for this summary.
    pub fn partials(&self) -> HistoryPartials {
        let measures = self.groups.first().map_or(0, |g| g.measures.len());
        HistoryPartials {
            measures,
            rows: vec![0; self.groups.len()],
            partials: vec![Partial::default(); self.groups.len() * measures],
            touched: Vec::new(),
            pairs: vec![Partial::default(); self.pairs.len()],
            pairs_touched: Vec::new(),
            pairs_excluded: vec![0; self.pairs.len()],
        }
    }

    /// Adds the rows of **one history**: `rows` yields each row's group and its measures'
    /// values (`None` where undefined). `scratch` comes from [`Summary::partials`].
    pub fn add_history<I, V>(&mut self, scratch: &mut HistoryPartials, rows: I)
    where
        I: IntoIterator<Item = (usize, V)>,
        V: IntoIterator<Item = Option<f64>>,
    {
        self.gather(scratch, rows);
        self.close_history(scratch);
    }

    /// Gathers rows of part of a history into `scratch`, to join the summary at
    /// [`Summary::close_history`]; pieces gathered in any split add what the whole adds.
    pub fn gather<I, V>(&self, scratch: &mut HistoryPartials, rows: I)
    where
        I: IntoIterator<Item = (usize, V)>,
        V: IntoIterator<Item = Option<f64>>,
    {
        for (group, values) in rows {
            let accs = &self.groups[group].measures;
            let partials = scratch.row(group);
            for ((p, acc), x) in partials.iter_mut().zip(accs).zip(values) {
                if let Some(x) = x {
                    p.push(acc.quantise(x));
                }
            }
        }
    }

    /// Adds the rows gathered since the history began, as one history.
    pub fn close_history(&mut self, scratch: &mut HistoryPartials) {
        for &g in &scratch.touched {
            let group = &mut self.groups[g];
            group.n += scratch.rows[g];
            group.histories += 1;
            let m = scratch.measures;
            for (acc, p) in group
                .measures
                .iter_mut()
                .zip(&mut scratch.partials[g * m..(g + 1) * m])
            {
                acc.add_history(p);
                *p = Partial::default();
            }
            scratch.rows[g] = 0;
        }
        scratch.touched.clear();
    }

    /// Whether `other` has the same shape (groups and measure kinds) as `self`.
    pub fn same_shape(&self, other: &Summary) -> bool {
        self.pairs.len() == other.pairs.len()
            && self
                .pairs
                .iter()
                .zip(&other.pairs)
                .all(|(a, b)| a.diff.whole == b.diff.whole)
            && self.groups.len() == other.groups.len()
            && self.groups.iter().zip(&other.groups).all(|(a, b)| {
                a.measures.len() == b.measures.len()
                    && a.measures
                        .iter()
                        .zip(&b.measures)
                        .all(|(x, y)| x.whole == y.whole)
            })
    }

    /// Checks a summary read from disk that covers `histories` histories and `rows` rows:
    /// every group's counts fit, every accumulator passes [`Acc::check`]. The message names
    /// the group (or pair) and the rule.
    pub fn check(&self, histories: u64, rows: u64) -> Result<(), String> {
        let mut total = 0u64;
        for (g, group) in self.groups.iter().enumerate() {
            total = total
                .checked_add(group.n)
                .ok_or_else(|| format!("group {g}: counts add up beyond 2^64 − 1"))?;
            if group.histories > histories || group.histories > group.n {
                return Err(format!(
                    "group {g}: {} histories of {} values, where the shard has {histories} histories",
                    group.histories, group.n
                ));
            }
            for (m, acc) in group.measures.iter().enumerate() {
                if acc.n > group.n || acc.histories > group.histories {
                    return Err(format!(
                        "group {g}, measure {m}: {} values where the group has {}",
                        acc.n, group.n
                    ));
                }
                // Whole measures are counts and sizes; only differences (pairs) go negative.
                let negative = acc.whole && acc.sum < 0;
                acc.check()
                    .and_then(|()| match negative {
                        true => Err("a negative sum of whole numbers".to_string()),
                        false => Ok(()),
                    })
                    .map_err(|e| format!("group {g}, measure {m}: {e}"))?;
            }
        }
        if total != rows {
            return Err(format!(
                "its groups count {total} rows where the state says {rows}"
            ));
        }
        for (i, pair) in self.pairs.iter().enumerate() {
            pair.diff.check().map_err(|e| format!("pair {i}: {e}"))?;
            if pair.diff.n > rows
                || pair.excluded > rows
                || pair
                    .better
                    .checked_add(pair.worse)
                    .is_none_or(|b| b > pair.diff.histories)
            {
                return Err(format!(
                    "pair {i}: {} better and {} worse histories of {}",
                    pair.better, pair.worse, pair.diff.histories
                ));
            }
        }
        Ok(())
    }

    /// Adds another summary of the same shape, over other histories (exact, order-free).
    pub fn merge(&mut self, other: &Summary) {
        for (a, b) in self.groups.iter_mut().zip(&other.groups) {
            a.n += b.n;
            a.histories += b.histories;
            for (x, y) in a.measures.iter_mut().zip(&b.measures) {
                x.merge(y);
            }
        }
        for (a, b) in self.pairs.iter_mut().zip(&other.pairs) {
            a.diff.merge(&b.diff);
            a.better += b.better;
            a.worse += b.worse;
            a.excluded += b.excluded;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One group, one measure, and each history's values.
    fn summary_of(whole: bool, histories: &[&[f64]]) -> Summary {
        let mut s = Summary::new(1, &[whole], 1, &[]);
        let mut scratch = s.partials();
        for values in histories {
            s.add_history(&mut scratch, values.iter().map(|&x| (0, [Some(x)])));
        }
        s
    }

    #[test]
    fn wilson_intervals_match_the_textbook() {
        // 5 of 10: centre 0.5, half 1.96·√(0.025 + 1.96²/400) / (1 + 1.96²/10) = 0.2634.
        let (a, b) = wilson(5, 10).unwrap();
        assert!(
            (a - 0.2366).abs() < 1e-4 && (b - 0.7634).abs() < 1e-4,
            "{a} {b}"
        );
        // 0 of 10: from 0 to 2·0.1388 = 0.2775, not the normal approximation's 0–0.
        let (a, b) = wilson(0, 10).unwrap();
        assert!(a.abs() < 1e-12 && (b - 0.2775).abs() < 1e-4, "{a} {b}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn mean_sd_and_the_interval_by_history_match_hand_computation() {
        // Three histories: sums 6, 4, 9 over 2, 2, 3 values; N = 7, mean 19/7.
        let s = summary_of(false, &[&[2.0, 4.0], &[1.0, 3.0], &[2.0, 3.0, 4.0]]);
        let acc = &s.groups[0].measures[0];
        assert_eq!((acc.n, acc.histories), (7, 3));
        let m = 19.0 / 7.0;
        assert!((acc.mean().unwrap() - m).abs() < 1e-12);
        // Values 2,4,1,3,2,3,4: Σx² = 59, sample variance (59 − 7m²)/6.
        let sd = ((59.0 - 7.0 * m * m) / 6.0f64).sqrt();
        assert!((acc.sd().unwrap() - sd).abs() < 1e-9);
        // Residuals s_h − m·n_h: 6 − 2m, 4 − 2m, 9 − 3m.
        let r: f64 = [(6.0, 2.0), (4.0, 2.0), (9.0, 3.0)]
            .iter()
            .map(|&(s, n): &(f64, f64)| (s - m * n).powi(2))
            .sum();
        let half = 4.3027 * (1.5 * r / 49.0).sqrt();
        let (lo, hi) = acc.interval().unwrap();
        assert!((lo - (m - half)).abs() < 1e-9 && (hi - (m + half)).abs() < 1e-9);
        // One history: a mean, no interval.
        let one = summary_of(false, &[&[0.5, 0.7]]);
        let acc = &one.groups[0].measures[0];
        assert_eq!(acc.histories, 1);
        assert!(acc.mean().is_some() && acc.interval().is_none());
    }

    #[test]
    fn merging_in_any_split_gives_the_same_bits() {
        let histories: Vec<Vec<f64>> = (0..200)
            .map(|h| {
                (0..5)
                    .map(|i| ((h * 7919 + i * 31) % 1000) as f64 / 997.0)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = histories.iter().map(Vec::as_slice).collect();
        let whole = summary_of(false, &refs);
        for split in [1, 13, 100, 199] {
            let mut a = summary_of(false, &refs[..split]);
            let b = summary_of(false, &refs[split..]);
            a.merge(&b);
            assert_eq!(a, whole);
        }
        let json = serde_json::to_string(&whole).unwrap();
        assert_eq!(serde_json::from_str::<Summary>(&json).unwrap(), whole);
    }

    #[test]
    fn whole_measures_are_exact_on_large_numbers() {
        let values: Vec<Vec<f64>> = (0..10_000u64)
            .map(|i| vec![(10_000_000_000 + i) as f64])
            .collect();
        let refs: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
        let s = summary_of(true, &refs);
        let acc = &s.groups[0].measures[0];
        assert_eq!(acc.mean(), Some(10_000_004_999.5));
        assert!((acc.sd().unwrap() - (10_000.0f64 * 10_001.0 / 12.0).sqrt()).abs() < 1e-6);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1), 12.7062);
        assert_eq!(t975(30), 2.0423);
        // Exact values 2.0211 (40), 2.0086 (50), 1.9840 (100).
        assert!((t975(40) - 2.0211).abs() < 1e-3);
        assert!((t975(100) - 1.9840).abs() < 1e-3);
    }
}
