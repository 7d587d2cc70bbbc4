//! The running summary of a sweep: an accumulator per group and measure, the paired
//! comparisons, and what one history gathers before it joins them.

use serde::{Deserialize, Serialize};

use super::acc::{Acc, Partial};

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
/// histories come out better, worse or tied on average (the three add up to the histories).
///
/// A history ties when its differences sum to exactly 0; for fractions, whose differences are
/// each rounded to the fixed point, when the sum is within one unit (2⁻³²) per difference of 0:
/// that is as far as the rounding can carry differences whose exact sum is 0 (thirds: three
/// differences of ⅓ and one of −1 round to a sum of −1 unit), and no mean difference other
/// than 0 is that small in practice (it would be below 2.4 × 10⁻¹⁰).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairAcc {
    pub diff: Acc,
    pub better: u64,
    pub worse: u64,
    /// Pairs of rows left out (a cost measure where a run did not complete).
    #[serde(default)]
    pub excluded: u64,
    /// Absent from states written before ties were counted.
    #[serde(default)]
    pub tied: u64,
}

/// The running summary of a sweep: one [`GroupAcc`] per group, in group order, and the paired
/// comparisons of every group with every other strategy. It is what a checkpoint and a shard
/// state carry, and merging two is exact and order-free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// [`Summary::FORMAT`] when written by this version; a state of another format is refused
    /// ([`Summary::check_format`]) rather than merged with different rules.
    #[serde(default = "format_before_versions")]
    pub format: u32,
    pub groups: Vec<GroupAcc>,
    /// Indexed `(group × strategies + baseline) × paired measures + measure`.
    #[serde(default)]
    pub pairs: Vec<PairAcc>,
}

/// The format of states written before the summary carried one: no share intervals, no ties.
fn format_before_versions() -> u32 {
    1
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
    /// A buffer the rows' values are read into, kept from history to history.
    values: Vec<Option<f64>>,
}

impl HistoryPartials {
    /// The buffer of values, to be given back with [`HistoryPartials::put_values`].
    pub fn take_values(&mut self) -> Vec<Option<f64>> {
        std::mem::take(&mut self.values)
    }

    pub fn put_values(&mut self, values: Vec<Option<f64>>) {
        self.values = values;
    }

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
    /// The format this version writes: 2 added the measures in [0, 1] (`unit`) and the tied
    /// histories of pairs (`tied`), counted with the rounding-aware rule; 3 the histories with
    /// a value at 0 (`failing`, `failing_n`, `failing_sum`) and the measures where 0 is a
    /// failure (`zero_fails`).
    pub const FORMAT: u32 = 3;

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
                tied: 0,
            })
            .collect();
        Summary {
            format: Summary::FORMAT,
            groups: vec![empty; groups],
            pairs,
        }
    }

    /// Marks the measures whose values all lie in [0, 1] (`unit`, one per measure, in order):
    /// their intervals are the ones for shares.
    pub fn with_units(mut self, unit: &[bool]) -> Self {
        for group in &mut self.groups {
            for (acc, &u) in group.measures.iter_mut().zip(unit) {
                acc.unit = u;
            }
        }
        self
    }

    /// Marks the measures where a value of 0 is a failure (`fails`, one per measure, in
    /// order; shares only): their intervals also bound the share of histories that fail.
    pub fn with_failures(mut self, fails: &[bool]) -> Self {
        for group in &mut self.groups {
            for (acc, &f) in group.measures.iter_mut().zip(fails) {
                acc.zero_fails = f && acc.unit;
            }
        }
        self
    }

    /// Refuses a state written by a version that kept other statistics (its intervals of
    /// shares and its ties would not be this version's), saying so.
    pub fn check_format(&self) -> Result<(), String> {
        if self.format == Summary::FORMAT {
            Ok(())
        } else {
            Err(format!(
                "its summary is of format {} where this ctxlab reads format {} (intervals of shares, tied pairs, and the failing histories the intervals of measures that count a failure as 0 rest on were added); it was written by another ctxlab version: run it again with this one",
                self.format,
                Summary::FORMAT
            ))
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
            // Whole differences are exact; a fraction's are rounded, one unit at most each
            // (see [`PairAcc`]).
            let rounding = if acc.diff.whole { 0 } else { i128::from(p.n) };
            if p.sum > rounding {
                acc.better += 1;
            } else if p.sum < -rounding {
                acc.worse += 1;
            } else {
                acc.tied += 1;
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
            values: Vec::new(),
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
        self.format == other.format
            && self.pairs.len() == other.pairs.len()
            && self
                .pairs
                .iter()
                .zip(&other.pairs)
                .all(|(a, b)| a.diff.whole == b.diff.whole)
            && self.groups.len() == other.groups.len()
            && self.groups.iter().zip(&other.groups).all(|(a, b)| {
                a.measures.len() == b.measures.len()
                    && a.measures.iter().zip(&b.measures).all(|(x, y)| {
                        x.whole == y.whole && x.unit == y.unit && x.zero_fails == y.zero_fails
                    })
            })
    }

    /// Checks a summary read from disk that covers `histories` histories and `rows` rows:
    /// every group's counts fit, every accumulator passes [`Acc::check`]. The message names
    /// the group (or pair) and the rule.
    pub fn check(&self, histories: u64, rows: u64) -> Result<(), String> {
        self.check_format()?;
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
                    .and_then(|b| b.checked_add(pair.tied))
                    .is_none_or(|b| b != pair.diff.histories)
            {
                return Err(format!(
                    "pair {i}: {} better, {} worse and {} tied histories where it has {}",
                    pair.better, pair.worse, pair.tied, pair.diff.histories
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
            a.tied += b.tied;
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
    fn ties_are_exact_despite_rounding() {
        // One pair (whole = false); history A: differences ⅓, ⅓, ⅓, −1 (exact sum 0, rounded
        // −1 unit); B: 0.25, −0.25 (0); C: 0.5 (better); D: −2⁻²⁰ (worse, far above rounding).
        let mut s = Summary::new(1, &[false], 2, &[false, true]);
        let mut scratch = s.partials();
        let third = 1.0 / 3.0;
        for diffs in [
            vec![third, third, third, -1.0],
            vec![0.25, -0.25],
            vec![0.5],
            vec![-(2f64.powi(-20))],
        ] {
            s.add_pairs(&mut scratch, diffs.into_iter().map(|d| (0, Some(d))));
        }
        let acc = s.pairs[0].diff;
        assert_eq!(
            (s.pairs[0].better, s.pairs[0].worse, s.pairs[0].tied),
            (1, 1, 2)
        );
        assert_eq!(acc.histories, 4);
        // The rounding the rule absorbs: three thirds and −1 sum to −1 unit, not 0.
        let q = |x: f64| acc.quantise(x);
        assert_eq!(3 * q(third) + q(-1.0), -1);
        // Whole differences are exact: a total of +1 token is better, 0 tied.
        for (diffs, expect) in [(vec![3.0, -2.0], (1, 0, 0)), (vec![3.0, -3.0], (0, 0, 1))] {
            let mut s = Summary::new(1, &[false], 2, &[false, true]);
            let mut scratch = s.partials();
            s.add_pairs(&mut scratch, diffs.into_iter().map(|d| (1, Some(d))));
            let p = s.pairs[1];
            assert_eq!((p.better, p.worse, p.tied), expect);
        }
    }

    #[test]
    fn states_of_another_format_are_refused() {
        let s = summary_of(false, &[&[0.5], &[0.7]]);
        assert_eq!(s.check(2, 2), Ok(()));
        let mut json: serde_json::Value = serde_json::to_value(&s).unwrap();
        json.as_object_mut().unwrap().remove("format");
        let old: Summary = serde_json::from_value(json).unwrap();
        assert_eq!(old.format, 1);
        let e = old.check(2, 2).unwrap_err();
        assert!(
            e.contains("format 1 where this ctxlab reads format 3"),
            "{e}"
        );
        assert!(!old.same_shape(&s));
        // A share whose sum exceeds its count is no state a run writes.
        let mut forged = Summary::new(1, &[true], 1, &[]).with_units(&[true]);
        forged.groups[0].n = 2;
        forged.groups[0].histories = 2;
        let mut scratch = forged.partials();
        let mut bad = forged.clone();
        bad.add_history(&mut scratch, [(0, [Some(2.0)])]);
        bad.add_history(&mut scratch, [(0, [Some(3.0)])]);
        bad.groups[0].n = 2;
        bad.groups[0].histories = 2;
        let e = bad.check(2, 2).unwrap_err();
        assert!(e.contains("a share whose sum lies outside"), "{e}");
    }
}
