//! The summary rows arranged on the sweep's axes — series (strategy × keep_recent), noise
//! levels and budgets — so charts and report tables look rows up by coordinates and list
//! them in one agreed order.

use super::summary_table::SummaryRow;
use crate::error::InputError;
use crate::figures::labels;
use crate::tables::numbers;
use std::collections::HashMap;
use std::path::Path;

/// One noise level: a noise model, by its label, with its nominal flag error rates.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryNoise {
    /// The model's label, as the `noise` column holds it.
    pub model: String,
    /// The label without the rates of 0 it may leave out, for titles.
    pub short: String,
    /// The model without its rates (see [`crate::noise::NoiseModel::family`]).
    pub family: String,
    /// A `uniform` model, labelled by its rates alone.
    pub uniform: bool,
    pub false_negative: f64,
    pub false_positive: f64,
}

impl SummaryNoise {
    /// The level of the model labelled `model`, with the rates its table reports (a label
    /// that does not parse, from a newer ctxlab, stands as its own family).
    pub fn of(model: &str, false_negative: f64, false_positive: f64) -> SummaryNoise {
        let parsed = crate::noise::NoiseModel::parse(model).ok();
        SummaryNoise {
            model: model.to_string(),
            short: parsed
                .as_ref()
                .map_or(model.to_string(), |m| m.short_label()),
            family: parsed.as_ref().map_or(model.to_string(), |m| m.family()),
            uniform: parsed.as_ref().is_some_and(|m| m.is_uniform()),
            false_negative,
            false_positive,
        }
    }

    /// The level of the model labelled `model`, with its nominal rates.
    pub fn from_label(model: &str) -> SummaryNoise {
        let rates = crate::noise::NoiseModel::parse(model)
            .map(|m| m.nominal())
            .unwrap_or_default();
        SummaryNoise::of(model, rates.false_negative, rates.false_positive)
    }

    /// A short label: `FN 10 % · FP 5 %` for a uniform model, the model's spec (without its
    /// rates of 0) otherwise.
    pub fn label(&self) -> String {
        if self.uniform {
            format!(
                "FN {} · FP {}",
                labels::rate(self.false_negative),
                labels::rate(self.false_positive)
            )
        } else {
            self.short.clone()
        }
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
    /// Noise levels ordered by family (in the order the table lists them), then by
    /// false-positive rate, then false-negative rate.
    pub noise_levels: Vec<SummaryNoise>,
    /// The families of the noise models, in that order.
    pub noise_families: Vec<String>,
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
            .filter(|s| rows.iter().any(|r| r.text("strategy") == s.as_str()))
            .cloned()
            .collect();
        for r in rows {
            if !strategies.iter().any(|s| s == r.text("strategy")) {
                strategies.push(r.text("strategy").to_string());
            }
        }
        let keep_recents = sorted_unique(rows.iter().map(|r| r.whole("keep_recent")));
        let budgets = sorted_unique_f64(rows.iter().map(|r| r.real("budget_percent")));
        let false_negatives = sorted_unique_f64(rows.iter().map(|r| r.real("false_negative")));
        let false_positives = sorted_unique_f64(rows.iter().map(|r| r.real("false_positive")));

        let mut noise_levels: Vec<SummaryNoise> = Vec::new();
        for r in rows {
            if !noise_levels.iter().any(|n| n.model == r.text("noise")) {
                noise_levels.push(noise_of(r));
            }
        }
        let mut noise_families: Vec<String> = Vec::new();
        for n in &noise_levels {
            if !noise_families.contains(&n.family) {
                noise_families.push(n.family.clone());
            }
        }
        let family = |n: &SummaryNoise| noise_families.iter().position(|f| *f == n.family);
        noise_levels.sort_by(|a, b| {
            family(a)
                .cmp(&family(b))
                .then(a.false_positive.total_cmp(&b.false_positive))
                .then(a.false_negative.total_cmp(&b.false_negative))
                .then(a.model.cmp(&b.model))
        });

        let mut series = Vec::new();
        for (si, strategy) in strategies.iter().enumerate() {
            for (ki, &keep_recent) in keep_recents.iter().enumerate() {
                if rows.iter().any(|r| {
                    r.text("strategy") == strategy && r.whole("keep_recent") == keep_recent
                }) {
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
            noise_families,
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
                        r.text("strategy"),
                        r.whole("keep_recent"),
                        numbers::budget(r.real("budget_percent")),
                        noise_of(r).label()
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
            .position(|s| {
                s.strategy == r.text("strategy") && s.keep_recent == r.whole("keep_recent")
            })
            .expect("every row's series is listed");
        let n = self
            .noise_levels
            .iter()
            .position(|n| n.model == r.text("noise"))
            .expect("every row's noise level is listed");
        let b = self
            .budgets
            .iter()
            .position(|&b| b == r.real("budget_percent"))
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

    /// The noise level with these rates, if the table has it (the first, should several
    /// models share them: see [`SummaryGrid::family_noise_index`]).
    pub fn noise_index(&self, false_negative: f64, false_positive: f64) -> Option<usize> {
        self.noise_levels
            .iter()
            .position(|n| n.false_negative == false_negative && n.false_positive == false_positive)
    }

    /// Whether every noise model is of one family (as the uniform grid of the shorthand
    /// axes is): the levels are then told apart by their rates alone.
    pub fn one_noise_family(&self) -> bool {
        self.noise_families.len() <= 1
    }

    /// The noise level of family `family` (an index into `noise_families`) at these rates.
    pub fn family_noise_index(
        &self,
        family: usize,
        false_negative: f64,
        false_positive: f64,
    ) -> Option<usize> {
        self.noise_levels.iter().position(|n| {
            n.family == self.noise_families[family]
                && n.false_negative == false_negative
                && n.false_positive == false_positive
        })
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

/// The noise level of a summary row, with the rates its table reports.
fn noise_of(r: &SummaryRow) -> SummaryNoise {
    SummaryNoise::of(
        r.text("noise"),
        r.real("false_negative"),
        r.real("false_positive"),
    )
}
