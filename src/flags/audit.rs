//! A flagger's error rates, measured: false-negative and false-positive rates overall, by
//! record kind and by position (quarters of each history), each with a 95 % interval by
//! history, and the parameters of the noise specs that would mimic the flagger.
//!
//! The history is the unit: one flagger errs alike on a history's records, so every interval
//! is the stats module's interval of a share by history ([`crate::stats::Acc::share`]: Jeffreys's
//! on the effective sample the cluster-robust variance gives, inside [0, 1] and with width at
//! a rate of 0 or 1), each history giving its misses and its required records (its false alarms
//! and its unrequired records). The position slope is fitted by ordinary least squares over
//! records (each miss or hit a 1 or 0 at the record's relative position `i/(n−1)`), its ends
//! clamped to [0, 1].

use super::confusion::{kind_index, Counts};
use crate::history::{History, Kind};
use crate::stats::{Acc, Partial};

/// Where a row's records sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    All,
    Kind(Kind),
    /// Quarter `q` (0–3) of each history: records `i` with `floor(4i/n) = q`.
    Quarter(u8),
}

impl Scope {
    pub fn label(&self) -> String {
        match self {
            Scope::All => "all".into(),
            Scope::Kind(k) => format!("kind {k}"),
            Scope::Quarter(q) => format!("quarter {}", q + 1),
        }
    }
}

/// One row of the audit: the counts and the two rates' intervals by history.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRow {
    pub scope: Scope,
    pub counts: Counts,
    /// Histories with required records in the scope (what the FN interval rests on).
    pub fn_histories: u64,
    pub fn_interval: Option<(f64, f64)>,
    /// Histories with unrequired records in the scope.
    pub fp_histories: u64,
    pub fp_interval: Option<(f64, f64)>,
}

/// A straight line over the relative position, fitted by least squares: its values at the
/// start (0) and end (1) of a history.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrendLine {
    pub start: f64,
    pub end: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Audit {
    pub histories: u64,
    pub records: u64,
    /// Overall first, then each kind that occurs, then the four quarters.
    pub rows: Vec<AuditRow>,
    pub fn_line: TrendLine,
    pub fp_line: TrendLine,
}

/// What one scope gathers: counts and the per-history accumulators of misses and false alarms.
#[derive(Clone)]
struct Gather {
    counts: Counts,
    misses: Acc,
    alarms: Acc,
    miss: Partial,
    alarm: Partial,
    seen: bool,
}

impl Gather {
    fn new() -> Gather {
        Gather {
            counts: Counts::default(),
            misses: Acc::share(true),
            alarms: Acc::share(true),
            miss: Partial::default(),
            alarm: Partial::default(),
            seen: false,
        }
    }

    fn add(&mut self, required: bool, flag: bool) {
        self.seen = true;
        self.counts.add(required, flag);
        if required {
            self.miss.push(i128::from(!flag));
        } else {
            self.alarm.push(i128::from(flag));
        }
    }

    /// Closes a history: its values join the accumulators.
    fn close(&mut self) {
        self.misses.add_history(&self.miss);
        self.alarms.add_history(&self.alarm);
        self.miss = Partial::default();
        self.alarm = Partial::default();
        self.counts.histories += u64::from(self.seen);
        self.seen = false;
    }

    fn rates(&self, scope: Scope) -> AuditRow {
        AuditRow {
            scope,
            counts: self.counts,
            fn_histories: self.misses.histories,
            fn_interval: self.misses.interval(),
            fp_histories: self.alarms.histories,
            fp_interval: self.alarms.interval(),
        }
    }
}

/// Sums for a least-squares line through points (x, y).
#[derive(Default)]
struct LineFit {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
}

impl LineFit {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
    }

    /// The fitted line's ends, clamped to [0, 1]; flat at the mean when every x is the same.
    fn line(&self) -> TrendLine {
        if self.n == 0.0 {
            return TrendLine::default();
        }
        let spread = self.n * self.xx - self.x * self.x;
        let slope = if spread > 1e-12 {
            (self.n * self.xy - self.x * self.y) / spread
        } else {
            0.0
        };
        let intercept = (self.y - slope * self.x) / self.n;
        TrendLine {
            start: intercept.clamp(0.0, 1.0),
            end: (intercept + slope).clamp(0.0, 1.0),
        }
    }
}

/// Audits the flag bases of `histories` against their truth.
pub fn audit<'a>(histories: impl IntoIterator<Item = &'a History>) -> Audit {
    let mut all = Gather::new();
    let mut kinds = vec![Gather::new(); Kind::ALL.len()];
    let mut quarters = vec![Gather::new(); 4];
    let (mut fn_fit, mut fp_fit) = (LineFit::default(), LineFit::default());
    let (mut n_histories, mut n_records) = (0u64, 0u64);
    for h in histories {
        let flags = h.flag_base();
        let n = h.len();
        n_histories += u64::from(n > 0);
        n_records += n as u64;
        for (i, (r, &flag)) in h.records.iter().zip(&flags).enumerate() {
            all.add(r.required, flag);
            kinds[kind_index(r.kind)].add(r.required, flag);
            quarters[(4 * i / n).min(3)].add(r.required, flag);
            let x = if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.0
            };
            if r.required {
                fn_fit.add(x, f64::from(u8::from(!flag)));
            } else {
                fp_fit.add(x, f64::from(u8::from(flag)));
            }
        }
        for g in std::iter::once(&mut all)
            .chain(kinds.iter_mut())
            .chain(quarters.iter_mut())
        {
            g.close();
        }
    }
    let mut rows = vec![all.rates(Scope::All)];
    rows.extend(
        Kind::ALL
            .into_iter()
            .zip(&kinds)
            .filter(|(_, g)| g.counts.records > 0)
            .map(|(k, g)| g.rates(Scope::Kind(k))),
    );
    rows.extend(
        quarters
            .iter()
            .enumerate()
            .map(|(q, g)| g.rates(Scope::Quarter(q as u8))),
    );
    Audit {
        histories: n_histories,
        records: n_records,
        rows,
        fn_line: fn_fit.line(),
        fp_line: fp_fit.line(),
    }
}

/// A rate as a spec writes it: at most three decimals, no trailing zeros (`0.25`, `0`).
pub fn spec_number(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

impl Audit {
    fn overall(&self) -> &Counts {
        &self.rows[0].counts
    }

    /// `uniform(fn=.., fp=..)` at the overall rates (0 where there is nothing to err on).
    pub fn uniform_spec(&self) -> String {
        let c = self.overall();
        format!(
            "uniform(fn={}, fp={})",
            spec_number(c.false_negative_rate().unwrap_or(0.0)),
            spec_number(c.false_positive_rate().unwrap_or(0.0))
        )
    }

    /// `by_kind(fn=.., fp=.., fn_<kind>=.., fp_<kind>=..)`: the overall rates as defaults and
    /// each kind's own where it has records to err on.
    pub fn by_kind_spec(&self) -> String {
        let c = self.overall();
        let mut parts = vec![
            format!("fn={}", spec_number(c.false_negative_rate().unwrap_or(0.0))),
            format!("fp={}", spec_number(c.false_positive_rate().unwrap_or(0.0))),
        ];
        for row in &self.rows {
            let Scope::Kind(k) = row.scope else { continue };
            if let Some(r) = row.counts.false_negative_rate() {
                parts.push(format!("fn_{k}={}", spec_number(r)));
            }
            if let Some(r) = row.counts.false_positive_rate() {
                parts.push(format!("fp_{k}={}", spec_number(r)));
            }
        }
        format!("by_kind({})", parts.join(", "))
    }

    /// `by_position(fn_start=.., fn_end=.., fp_start=.., fp_end=..)` from the least-squares
    /// lines.
    pub fn by_position_spec(&self) -> String {
        format!(
            "by_position(fn_start={}, fn_end={}, fp_start={}, fp_end={})",
            spec_number(self.fn_line.start),
            spec_number(self.fn_line.end),
            spec_number(self.fp_line.start),
            spec_number(self.fp_line.end)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    #[test]
    fn spec_numbers_are_short() {
        assert_eq!(spec_number(0.25), "0.25");
        assert_eq!(spec_number(0.0), "0");
        assert_eq!(spec_number(1.0), "1");
        assert_eq!(spec_number(1.0 / 3.0), "0.333");
    }

    #[test]
    fn a_line_through_misses_that_grow_along_the_history() {
        // Four required records at x = 0, 1/3, 2/3, 1, missed at the second and fourth
        // (y = 0, 1, 0, 1): x̄ = ȳ = 0.5, Σ(x−x̄)² = 1/4 + 1/36 + 1/36 + 1/4 = 5/9 and
        // Σ(x−x̄)(y−ȳ) = 1/4 − 1/12 − 1/12 + 1/4 = 1/3, so slope = (1/3)/(5/9) = 0.6 and
        // intercept 0.5 − 0.6 · 0.5 = 0.2: the line runs from 0.2 to 0.8.
        let mut h = History::new(
            "h",
            (1..=4).map(|i| Record::new(i, "").required(true)).collect(),
        );
        h.flags = Some(vec![true, false, true, false]);
        let a = audit([&h]);
        assert!((a.fn_line.start - 0.2).abs() < 1e-12, "{:?}", a.fn_line);
        assert!((a.fn_line.end - 0.8).abs() < 1e-12, "{:?}", a.fn_line);
        assert_eq!(
            a.by_position_spec(),
            "by_position(fn_start=0.2, fn_end=0.8, fp_start=0, fp_end=0)"
        );
        // One history: no interval.
        assert_eq!(a.rows[0].fn_interval, None);
        // Missed at the last two (y = 0, 0, 1, 1): Σ(x−x̄)(y−ȳ) = 1/4 + 1/12 + 1/12 + 1/4 =
        // 2/3, slope 1.2, intercept −0.1: both ends clamped, to 0 and 1.
        h.flags = Some(vec![true, true, false, false]);
        assert_eq!(
            audit([&h]).fn_line,
            TrendLine {
                start: 0.0,
                end: 1.0
            }
        );
    }
}
