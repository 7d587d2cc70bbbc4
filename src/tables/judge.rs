//! The CSV `ctxlab summaries judge --csv` prints: one row per summariser, its figures over the
//! real compaction summaries it was judged on (`crate::summaries_judge`).

use super::Table;

/// One candidate's figures over the summaries it wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateVerdict {
    pub label: String,
    pub summaries: usize,
    /// Mean share of the needed facts kept: the real summaries', the candidate's.
    pub real_kept: f64,
    pub kept: f64,
    pub diff_mean: f64,
    /// t interval of the mean difference over summaries; `None` below two summaries.
    pub diff_ci: Option<(f64, f64)>,
    /// Pearson correlation of the two shares over summaries; `None` when either is constant.
    pub correlation: Option<f64>,
    pub jaccard: f64,
}

/// The verdicts' table, column by column; every figure with six decimals.
pub fn table() -> Table<(), CandidateVerdict> {
    Table::new("judge")
        .text("summariser", |_: &(), _, v: &CandidateVerdict| &v.label)
        .whole("summaries", |_, v| v.summaries as u64)
        .real("real_kept", |_, v| v.real_kept)
        .decimals(6)
        .real("kept", |_, v| v.kept)
        .decimals(6)
        .real("diff_mean", |_, v| v.diff_mean)
        .decimals(6)
        .opt_real("diff_ci_low", |_, v| v.diff_ci.map(|(low, _)| low))
        .decimals(6)
        .opt_real("diff_ci_high", |_, v| v.diff_ci.map(|(_, high)| high))
        .decimals(6)
        .opt_real("correlation", |_, v| v.correlation)
        .decimals(6)
        .real("jaccard", |_, v| v.jaccard)
        .decimals(6)
}
