//! Scoring a context against the true labels.

use crate::history::CostedHistory;
use crate::strategy::{Context, Item, Outcome};

/// The measures of one cell. Fractions are `None` where they are undefined: every measure of an
/// infeasible cell, and retention when the history has no required record.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Metrics {
    pub feasible: bool,
    /// Cost of the context, separators included.
    pub used: u64,
    /// `1 − used / total`.
    pub reduction: Option<f64>,
    pub required_total: u32,
    /// Required records kept verbatim.
    pub required_kept: u32,
    /// `required_kept / required_total`.
    pub required_retention: Option<f64>,
    /// Required records whose information is present verbatim or inside a summary.
    pub required_any: u32,
    pub retention_any: Option<f64>,
    /// Share of the context's items that are original text verbatim (1 when nothing is kept).
    pub exact: Option<f64>,
    pub placeholders: u32,
    /// Records replaced by a summary.
    pub summarised: u32,
}

/// Scores `context` (the outcome of a strategy) against `history`'s true labels.
pub fn score(history: &CostedHistory, outcome: Outcome, context: &Context) -> Metrics {
    let required_total = history.truth.iter().filter(|&&t| t).count() as u32;
    if outcome == Outcome::Infeasible {
        return Metrics {
            required_total,
            ..Metrics::default()
        };
    }
    let mut m = Metrics {
        feasible: true,
        used: context.cost,
        required_total,
        ..Metrics::default()
    };
    let mut verbatim = 0u32;
    for item in &context.items {
        match *item {
            Item::Verbatim(i) => {
                verbatim += 1;
                if history.truth[i] {
                    m.required_kept += 1;
                    m.required_any += 1;
                }
            }
            Item::Placeholder(_) => m.placeholders += 1,
            Item::Summary { first, end, .. } => {
                m.summarised += (end - first) as u32;
                m.required_any += (first..end)
                    .filter(|&i| history.truth[i] && context.summary_kept[i])
                    .count() as u32;
            }
        }
    }
    m.reduction = Some(if history.total == 0 {
        0.0
    } else {
        1.0 - m.used as f64 / history.total as f64
    });
    let share = |part: u32| (required_total > 0).then(|| part as f64 / required_total as f64);
    m.required_retention = share(m.required_kept);
    m.retention_any = share(m.required_any);
    m.exact = Some(if context.items.is_empty() {
        1.0
    } else {
        verbatim as f64 / context.items.len() as f64
    });
    m
}
