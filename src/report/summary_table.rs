//! Reading a sweep's `summary.parquet` back into typed rows, for charts and reports.
//!
//! The table is checked column by column before any row is built, so a missing column, a
//! column of the wrong type or a null where a value is required is one error naming the file
//! and the column, and nothing downstream sees a half-read table.

use crate::error::InputError;
use crate::tables::read::Checked;
use std::path::Path;

pub use crate::tables::read::{read_frame, sweep_output_error};

/// Which retention the charts draw (`charts.retention`): over all cells, an infeasible cell
/// counting as nothing kept (the default), or over feasible cells only (conditional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retention {
    #[default]
    All,
    Feasible,
}

impl Retention {
    /// The summary's name of the retention measure drawn.
    pub fn measure(self) -> &'static str {
        match self {
            Retention::All => "required_retention_all",
            Retention::Feasible => "required_retention_feasible",
        }
    }

    /// What a reader must know about the figure drawn.
    pub fn meaning(self) -> &'static str {
        match self {
            Retention::All => "over all cells (an infeasible cell keeps nothing)",
            Retention::Feasible => "over feasible cells only (conditional on fitting the budget)",
        }
    }
}

/// One group of cells, as the charts and the report read it: a strategy × keep_recent ×
/// budget × noise level.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub strategy: String,
    pub keep_recent: u64,
    pub budget_percent: f64,
    /// The noise model's label.
    pub noise: String,
    /// The model's nominal rates.
    pub false_negative: f64,
    pub false_positive: f64,
    /// The rates its flags realised on the group's histories (means over the group's cells).
    pub fn_realised_mean: Option<f64>,
    pub fp_realised_mean: Option<f64>,
    pub n: u64,
    /// Histories the group's cells come from: the unit of every interval.
    pub n_histories: u64,
    pub n_feasible: u64,
    /// Histories with a feasible cell in the group: what a mean over feasible cells rests on.
    pub n_feasible_histories: u64,
    pub feasible_share: f64,
    /// The feasible share's interval by history.
    pub feasible_ci_low: Option<f64>,
    pub feasible_ci_high: Option<f64>,
    /// Over feasible cells.
    pub reduction_mean: Option<f64>,
    pub reduction_sd: Option<f64>,
    /// The retention drawn (see [`Retention`]): mean, sd and interval by history.
    pub required_retention_mean: Option<f64>,
    pub required_retention_sd: Option<f64>,
    pub required_retention_ci_low: Option<f64>,
    pub required_retention_ci_high: Option<f64>,
    /// Over feasible cells only, whichever is drawn.
    pub required_retention_feasible_mean: Option<f64>,
    pub retention_any_mean: Option<f64>,
    pub retention_any_ci_low: Option<f64>,
    pub retention_any_ci_high: Option<f64>,
    /// Over feasible cells.
    pub exact_mean: Option<f64>,
}

/// The cell summary's declaration, which the sweep writes the table from.
pub fn declared() -> crate::tables::Table<crate::cells::Grid, crate::tables::summary::GroupRow> {
    crate::tables::cells::summary_table(&crate::tables::cells::table())
}

/// The names of the columns a summary table must have, in order.
pub fn required_columns() -> Vec<String> {
    declared().columns.into_iter().map(|c| c.name).collect()
}

/// A summary table read and checked against its declaration.
pub struct SummaryTable(Checked);

impl SummaryTable {
    /// Its rows, with the retention `retention` says drawn.
    pub fn rows(&self, retention: Retention) -> Vec<SummaryRow> {
        rows_from(&self.0, retention)
    }
}

/// Reads a summary table. Extra columns are ignored; missing or mistyped ones are errors.
pub fn read_summary(path: &Path) -> Result<SummaryTable, InputError> {
    Ok(SummaryTable(Checked::read(path, &declared(), true)?))
}

/// Builds rows from a table already read and checked against the declaration.
fn rows_from(t: &Checked, retention: Retention) -> Vec<SummaryRow> {
    let drawn = retention.measure();
    let any = match retention {
        Retention::All => "retention_any_all",
        Retention::Feasible => "retention_any_feasible",
    };
    let strategy = t.text("strategy");
    let keep_recent = t.whole("keep_recent");
    let budget_percent = t.real("budget_percent");
    let noise = t.text("noise");
    let false_negative = t.real("false_negative");
    let false_positive = t.real("false_positive");
    let fn_realised = t.opt_real("fn_realised_mean");
    let fp_realised = t.opt_real("fp_realised_mean");
    let n = t.whole("n");
    let n_histories = t.whole("n_histories");
    let n_feasible = t.whole("n_feasible");
    let n_feasible_histories = t.whole("n_feasible_histories");
    let feasible_share = t.real("feasible_share");
    let feasible_low = t.opt_real("feasible_ci_low");
    let feasible_high = t.opt_real("feasible_ci_high");
    let reduction_mean = t.opt_real("reduction_feasible_mean");
    let reduction_sd = t.opt_real("reduction_feasible_sd");
    let rr_mean = t.opt_real(&format!("{drawn}_mean"));
    let rr_sd = t.opt_real(&format!("{drawn}_sd"));
    let rr_low = t.opt_real(&format!("{drawn}_ci_low"));
    let rr_high = t.opt_real(&format!("{drawn}_ci_high"));
    let rr_feasible = t.opt_real("required_retention_feasible_mean");
    let any_mean = t.opt_real(&format!("{any}_mean"));
    let any_low = t.opt_real(&format!("{any}_ci_low"));
    let any_high = t.opt_real(&format!("{any}_ci_high"));
    let exact_mean = t.opt_real("exact_feasible_mean");
    (0..t.height())
        .map(|i| SummaryRow {
            strategy: strategy[i].clone(),
            keep_recent: keep_recent[i],
            budget_percent: budget_percent[i],
            noise: noise[i].clone(),
            false_negative: false_negative[i],
            false_positive: false_positive[i],
            fn_realised_mean: fn_realised[i],
            fp_realised_mean: fp_realised[i],
            n: n[i],
            n_histories: n_histories[i],
            n_feasible: n_feasible[i],
            n_feasible_histories: n_feasible_histories[i],
            feasible_share: feasible_share[i],
            feasible_ci_low: feasible_low[i],
            feasible_ci_high: feasible_high[i],
            reduction_mean: reduction_mean[i],
            reduction_sd: reduction_sd[i],
            required_retention_mean: rr_mean[i],
            required_retention_sd: rr_sd[i],
            required_retention_ci_low: rr_low[i],
            required_retention_ci_high: rr_high[i],
            required_retention_feasible_mean: rr_feasible[i],
            retention_any_mean: any_mean[i],
            retention_any_ci_low: any_low[i],
            retention_any_ci_high: any_high[i],
            exact_mean: exact_mean[i],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tables::Type;
    use polars::prelude::{Column, DataFrame};

    /// A two-row frame with every declared column, `n` replaced by `n_column`.
    fn frame(n_column: Column, budget: f64) -> DataFrame {
        let mut columns = Vec::new();
        for c in &declared().columns {
            let name = c.name.as_str();
            let column = match (name, c.ty(), c.nullable()) {
                ("n", _, _) => n_column.clone(),
                ("budget_percent", _, _) => Column::new(name.into(), [budget, budget]),
                (_, Type::Text, _) => Column::new(name.into(), ["recent", "recent"]),
                (_, Type::Whole, _) => Column::new(name.into(), [4u64, 4]),
                (_, Type::Real, false) => Column::new(name.into(), [0.1, 0.1]),
                (_, Type::Real, true) => Column::new(name.into(), [Some(0.5), None]),
                (_, Type::Flag, _) => Column::new(name.into(), [true, true]),
            };
            columns.push(column);
        }
        DataFrame::new_infer_height(columns).unwrap()
    }

    fn rows_from_frame(df: &DataFrame, path: &Path) -> Result<Vec<SummaryRow>, InputError> {
        let checked = Checked::from_frame(df.clone(), path, &declared(), true)?;
        Ok(rows_from(&checked, Retention::All))
    }

    #[test]
    fn nulls_and_non_finite_numbers_are_named_by_column_and_row() {
        let path = Path::new("results/summary.parquet");
        let ok = frame(Column::new("n".into(), [4u64, 4]), 50.0);
        let rows = rows_from_frame(&ok, path).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].reduction_mean, Some(0.5));
        assert_eq!(rows[1].reduction_mean, None);

        let null_n = frame(Column::new("n".into(), [Some(4u64), None]), 50.0);
        let e = rows_from_frame(&null_n, path).unwrap_err().to_string();
        assert_eq!(
            e,
            "results/summary.parquet: column `n` row 2: null, expected a UInt64 value"
        );

        let nan = frame(Column::new("n".into(), [4u64, 4]), f64::NAN);
        let e = rows_from_frame(&nan, path).unwrap_err().to_string();
        assert_eq!(
            e,
            "results/summary.parquet: column `budget_percent` row 1: not a finite number"
        );
    }
}
