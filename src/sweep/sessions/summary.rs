//! The summary of a session sweep: per strategy × window × ratio × note rate × noise level,
//! the number of sessions and the mean, standard deviation and 95 % interval of each measure.
//!
//! Whole-number measures (compactions, tokens, ...) are exact integer tallies, fractional ones
//! (cost, retention) the 2⁻³² fixed-point sums of a cell sweep: either way the summary is the
//! same bit for bit whatever the thread count. Retention measures are averaged over the
//! sessions where they are defined (histories with required records; for retention at need,
//! sessions where a required record appeared before a later call), with their own counts.

use super::eval::SessionRow;
use super::grid::SessionGrid;
use crate::session::SessionMetrics;
use crate::sweep::summary::{Running, Tally};

/// The whole-number measures, in column order.
pub const WHOLE_MEASURES: [&str; 11] = [
    "compactions",
    "failed_compactions",
    "storms",
    "guard_tripped",
    "model_calls",
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "billed_tokens",
    "peak_input",
];

fn whole_values(m: &SessionMetrics) -> [u64; 11] {
    [
        u64::from(m.compactions),
        u64::from(m.failed_compactions),
        u64::from(m.storms),
        u64::from(m.guard_tripped),
        u64::from(m.model_calls),
        m.input_tokens,
        m.cache_read_tokens,
        m.cache_write_tokens,
        m.output_tokens,
        billed_tokens(m),
        m.peak_input,
    ]
}

/// The fractional measures, in column order (after the whole ones).
pub const REAL_MEASURES: [&str; 4] = [
    "cost",
    "retention_end",
    "retention_any_end",
    "retention_at_need",
];

fn real_values(m: &SessionMetrics) -> [Option<f64>; 4] {
    [
        Some(m.cost),
        m.retention_end,
        m.retention_any_end,
        m.retention_at_need,
    ]
}

/// Every token a session was billed for, whether read from cache or not: input + output of
/// every model call, compactions included.
pub fn billed_tokens(m: &SessionMetrics) -> u64 {
    m.input_tokens + m.output_tokens
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Group {
    pub n: u64,
    pub whole: [Tally; 11],
    pub real: [Running; 4],
}

/// Accumulates groups from sessions, in any order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub groups: Vec<Group>,
}

impl SessionSummary {
    pub fn new(grid: &SessionGrid) -> Self {
        SessionSummary {
            groups: vec![Group::default(); grid.groups()],
        }
    }

    pub fn add(&mut self, grid: &SessionGrid, rows: &[SessionRow]) {
        for r in rows {
            let g = &mut self.groups[grid.group(r.coordinates())];
            g.n += 1;
            for (t, x) in g.whole.iter_mut().zip(whole_values(&r.metrics)) {
                t.push(x);
            }
            for (acc, x) in g.real.iter_mut().zip(real_values(&r.metrics)) {
                if let Some(x) = x {
                    acc.push(x);
                }
            }
        }
    }

    pub fn rows(&self, grid: &SessionGrid) -> Vec<SummaryRow> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let c = grid.group_coordinates(i);
                let level = grid.levels[c.level];
                let cfg = grid.config(c.window, c.ratio, c.note_rate);
                let stat = |mean, sd, interval: Option<(f64, f64)>| Stat {
                    mean,
                    sd,
                    ci_low: interval.map(|i| i.0),
                    ci_high: interval.map(|i| i.1),
                };
                let mut stats: Vec<Stat> = g
                    .whole
                    .iter()
                    .map(|t| stat(t.mean(), t.sd(), t.interval()))
                    .collect();
                stats.extend(g.real.iter().map(|r| stat(r.mean(), r.sd(), r.interval())));
                SummaryRow {
                    strategy: grid.labels[c.strategy].clone(),
                    window: grid.windows[c.window],
                    ratio: grid.ratios[c.ratio],
                    trigger: cfg.trigger(),
                    note_rate: grid.note_rates[c.note_rate],
                    false_negative: level.false_negative,
                    false_positive: level.false_positive,
                    n: g.n,
                    n_retention: g.real[1].n,
                    n_at_need: g.real[3].n,
                    stats,
                }
            })
            .collect()
    }
}

/// Mean, sample standard deviation and 95 % interval of the mean (normal approximation;
/// `None` below two values, the mean `None` with none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// One row of the summary table. `stats` follow [`WHOLE_MEASURES`] then [`REAL_MEASURES`].
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub strategy: String,
    pub window: u64,
    pub ratio: f64,
    pub trigger: u64,
    pub note_rate: f64,
    pub false_negative: f64,
    pub false_positive: f64,
    pub n: u64,
    /// Sessions of histories with required records (the n of the retention-at-the-end means).
    pub n_retention: u64,
    /// Sessions with retention at need defined.
    pub n_at_need: u64,
    pub stats: Vec<Stat>,
}

impl SummaryRow {
    /// The statistics of a measure by name.
    pub fn stat(&self, measure: &str) -> Option<&Stat> {
        WHOLE_MEASURES
            .iter()
            .chain(&REAL_MEASURES)
            .position(|m| *m == measure)
            .map(|i| &self.stats[i])
    }
}
