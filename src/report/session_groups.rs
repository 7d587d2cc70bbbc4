//! The summary of a session sweep read back for its charts: one [`ChartGroup`] per row, read
//! through the declaration the sweep wrote the table from.

use super::summary_grid::SummaryNoise;
use crate::error::InputError;
use crate::tables::read::Checked;
use polars::prelude::DataFrame;
use std::path::Path;

/// One group of the summary, as the charts need it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartGroup {
    pub strategy: String,
    pub window: u64,
    pub ratio: f64,
    pub note_rate: f64,
    /// The cache the group was billed under (empty in tables written before the column).
    pub cache: String,
    pub level: SummaryNoise,
    pub billed_tokens: Option<f64>,
    /// Mean cost per session, in dollars at the experiment's prices.
    pub cost: Option<f64>,
    /// The group's sessions, and the histories they replay.
    pub sessions: u64,
    pub histories: u64,
    pub retention_at_need: Option<f64>,
    pub retention_at_need_ci: Option<(f64, f64)>,
    pub compactions: Option<f64>,
    pub compactions_ci: Option<(f64, f64)>,
    /// The share of the group's sessions that reached their last call.
    pub completed: Option<f64>,
}

impl ChartGroup {
    /// Whether some of the group's sessions ran out of context before their last call.
    pub fn incomplete(&self) -> bool {
        self.completed.is_some_and(|c| c < 1.0)
    }
}

/// The summary's rows, read through its declaration.
pub(crate) fn rows_from_frame(df: DataFrame, path: &Path) -> Result<Vec<ChartGroup>, InputError> {
    // Read through the declaration the sweep wrote the table from.
    let rows = crate::tables::sessions::table();
    let t = Checked::from_frame(
        df,
        path,
        &crate::tables::sessions::summary_table(&rows),
        false,
    )?;
    let both = |a: Option<f64>, b: Option<f64>| Some((a?, b?));
    let (strategy, window) = (t.text("strategy"), t.whole("window"));
    let (ratio, note_rate) = (t.opt_real("ratio"), t.opt_real("note_rate"));
    let noise = t.text("noise");
    let cache = t.text("cache");
    let billed = t.opt_real("billed_tokens_mean");
    let cost = t.opt_real("cost_mean");
    let (sessions, histories) = (t.whole("n"), t.whole("n_histories"));
    let (need, need_low, need_high) = (
        t.opt_real("retention_at_need_mean"),
        t.opt_real("retention_at_need_ci_low"),
        t.opt_real("retention_at_need_ci_high"),
    );
    let (comp, comp_low, comp_high) = (
        t.opt_real("compactions_mean"),
        t.opt_real("compactions_ci_low"),
        t.opt_real("compactions_ci_high"),
    );
    let completed = t.opt_real("completed_mean");
    Ok((0..t.height())
        .map(|i| ChartGroup {
            strategy: strategy[i].clone(),
            window: window[i],
            ratio: ratio[i].unwrap_or_default(),
            note_rate: note_rate[i].unwrap_or_default(),
            cache: cache[i].clone(),
            level: SummaryNoise::from_label(&noise[i]),
            billed_tokens: billed[i],
            cost: cost[i],
            sessions: sessions[i],
            histories: histories[i],
            retention_at_need: need[i],
            retention_at_need_ci: both(need_low[i], need_high[i]),
            compactions: comp[i],
            compactions_ci: both(comp_low[i], comp_high[i]),
            completed: completed[i],
        })
        .collect())
}
