//! The CSV `ctxlab calibrate --rereads --csv` prints: the re-reads ctxlab predicts against
//! those the agent made, pooled over every real compaction (`crate::calibrate_rereads`), one
//! row.

use super::Table;

/// Counts pooled over compactions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RereadCounts {
    pub compactions: usize,
    pub observed: usize,
    pub predicted: usize,
    pub hits: usize,
    pub observed_tokens: u64,
    pub predicted_tokens: u64,
}

impl RereadCounts {
    pub fn precision(&self) -> Option<f64> {
        (self.predicted > 0).then(|| self.hits as f64 / self.predicted as f64)
    }

    pub fn recall(&self) -> Option<f64> {
        (self.observed > 0).then(|| self.hits as f64 / self.observed as f64)
    }
}

/// The pooled row, column by column; precision and recall with six decimals.
pub fn table() -> Table<(), RereadCounts> {
    Table::new("rereads")
        .whole("compactions", |_: &(), p: &RereadCounts| {
            p.compactions as u64
        })
        .whole("observed", |_, p| p.observed as u64)
        .whole("predicted", |_, p| p.predicted as u64)
        .whole("hits", |_, p| p.hits as u64)
        .opt_real("precision", |_, p| p.precision())
        .decimals(6)
        .opt_real("recall", |_, p| p.recall())
        .decimals(6)
        .whole("observed_tokens", |_, p| p.observed_tokens)
        .whole("predicted_tokens", |_, p| p.predicted_tokens)
}
