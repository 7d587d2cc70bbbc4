//! The summary rows arranged on the sweep's axes — series (strategy × keep_recent), noise
//! levels and budgets — so charts and report tables look rows up by coordinates and list
//! them in one agreed order.

use super::labels;
use super::summary_table::SummaryRow;
use crate::error::InputError;
use crate::tables::numbers;
use std::collections::HashMap;
use std::path::Path;

/// One noise level: the two flag error rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseLevel {
    pub false_negative: f64,
    pub false_positive: f64,
}

impl NoiseLevel {
    /// A short label such as `FN 10 % · FP 5 %`.
    pub fn label(&self) -> String {
        format!(
            "FN {} · FP {}",
            labels::rate(self.false_negative),
            labels::rate(self.false_positive)
        )
    }
}

/// One line on a chart: a strategy at one keep_recent.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub strategy: String,
    pub keep_recent: u64,
    /// Position of the strategy among the strategies (its colour).
    pub strategy_index: usize,
    /// Position of keep_recent among its values (its marker and dash).
    pub keep_recent_index: usize,
}

/// The rows of a summary table indexed by (series, noise level, budget).
#[derive(Debug)]
pub struct SummaryGrid<'a> {
    pub rows: &'a [SummaryRow],
    /// Strategies in the experiment's order, then any the experiment did not list.
    pub strategies: Vec<String>,
    /// keep_recent values, ascending.
    pub keep_recents: Vec<u64>,
    /// Series: strategies in order, each with its keep_recent values ascending.
    pub series: Vec<Series>,
    /// Noise levels ordered by false-positive rate, then false-negative rate.
    pub noise_levels: Vec<NoiseLevel>,
    pub false_negatives: Vec<f64>,
    pub false_positives: Vec<f64>,
    /// Budgets, ascending.
    pub budgets: Vec<f64>,
    index: HashMap<(usize, usize, usize), usize>,
}

impl<'a> SummaryGrid<'a> {
    /// Arranges `rows`; `strategy_order` (the experiment's list) fixes the order of strategies
    /// and so their colours. Two rows with the same coordinates are an error.
    pub fn new(
        rows: &'a [SummaryRow],
        strategy_order: &[String],
        path: &Path,
    ) -> Result<Self, InputError> {
        let mut strategies: Vec<String> = strategy_order
            .iter()
            .filter(|s| rows.iter().any(|r| &r.strategy == *s))
            .cloned()
            .collect();
        for r in rows {
            if !strategies.contains(&r.strategy) {
                strategies.push(r.strategy.clone());
            }
        }
        let keep_recents = sorted_unique(rows.iter().map(|r| r.keep_recent));
        let budgets = sorted_unique_f64(rows.iter().map(|r| r.budget_percent));
        let false_negatives = sorted_unique_f64(rows.iter().map(|r| r.false_negative));
        let false_positives = sorted_unique_f64(rows.iter().map(|r| r.false_positive));

        let mut noise_levels: Vec<NoiseLevel> = Vec::new();
        for r in rows {
            let level = NoiseLevel {
                false_negative: r.false_negative,
                false_positive: r.false_positive,
            };
            if !noise_levels.contains(&level) {
                noise_levels.push(level);
            }
        }
        noise_levels.sort_by(|a, b| {
            a.false_positive
                .total_cmp(&b.false_positive)
                .then(a.false_negative.total_cmp(&b.false_negative))
        });

        let mut series = Vec::new();
        for (si, strategy) in strategies.iter().enumerate() {
            for (ki, &keep_recent) in keep_recents.iter().enumerate() {
                if rows
                    .iter()
                    .any(|r| &r.strategy == strategy && r.keep_recent == keep_recent)
                {
                    series.push(Series {
                        strategy: strategy.clone(),
                        keep_recent,
                        strategy_index: si,
                        keep_recent_index: ki,
                    });
                }
            }
        }

        let mut grid = SummaryGrid {
            rows,
            strategies,
            keep_recents,
            series,
            noise_levels,
            false_negatives,
            false_positives,
            budgets,
            index: HashMap::new(),
        };
        for (i, r) in rows.iter().enumerate() {
            let key = grid.key_of(r);
            if let Some(first) = grid.index.insert(key, i) {
                return Err(InputError::File {
                    path: path.into(),
                    message: format!(
                        "rows {} and {} both hold strategy {:?}, keep_recent {}, budget {} %, {}: \
                         expected one row per group",
                        first + 1,
                        i + 1,
                        r.strategy,
                        r.keep_recent,
                        numbers::budget(r.budget_percent),
                        NoiseLevel {
                            false_negative: r.false_negative,
                            false_positive: r.false_positive
                        }
                        .label()
                    ),
                });
            }
        }
        Ok(grid)
    }

    fn key_of(&self, r: &SummaryRow) -> (usize, usize, usize) {
        let s = self
            .series
            .iter()
            .position(|s| s.strategy == r.strategy && s.keep_recent == r.keep_recent)
            .expect("every row's series is listed");
        let n = self
            .noise_levels
            .iter()
            .position(|n| {
                n.false_negative == r.false_negative && n.false_positive == r.false_positive
            })
            .expect("every row's noise level is listed");
        let b = self
            .budgets
            .iter()
            .position(|&b| b == r.budget_percent)
            .expect("every row's budget is listed");
        (s, n, b)
    }

    /// The row of series `s` at noise level `n` and budget `b` (indices), if the table has it.
    pub fn get(&self, s: usize, n: usize, b: usize) -> Option<&'a SummaryRow> {
        self.index.get(&(s, n, b)).map(|&i| &self.rows[i])
    }

    /// Whether keep_recent varies, so labels must name it.
    pub fn shows_keep_recent(&self) -> bool {
        self.keep_recents.len() > 1
    }

    /// The label of series `s`: the strategy spec, with keep_recent when it varies.
    pub fn series_label(&self, s: usize) -> String {
        let series = &self.series[s];
        if self.shows_keep_recent() {
            format!("{} · keep_recent={}", series.strategy, series.keep_recent)
        } else {
            series.strategy.clone()
        }
    }

    /// The noise level with these rates, if the table has it.
    pub fn noise_index(&self, false_negative: f64, false_positive: f64) -> Option<usize> {
        self.noise_levels
            .iter()
            .position(|n| n.false_negative == false_negative && n.false_positive == false_positive)
    }
}

fn sorted_unique(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn sorted_unique_f64(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}
