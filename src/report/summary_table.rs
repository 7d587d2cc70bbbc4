//! Reading a sweep's `summary.parquet` back into typed rows, for charts and reports.
//!
//! The table is checked column by column before any row is built, so a missing column, a
//! column of the wrong type or a null where a value is required is one error naming the file
//! and the column, and nothing downstream sees a half-read table.

use crate::error::InputError;
use crate::tables::read::{Checked, ReadRow};
use crate::tables::summary::Stats;
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
/// budget × noise level. Its columns are the declaration's (`tables::cells::summary_table`),
/// read by name where they are used, so a new summary column needs no edit here.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    record: ReadRow,
    /// Which retention [`SummaryRow::retention`] reads.
    drawn: Retention,
}

/// The row's columns by name (`text`, `whole`, `real`, `stats`), as the declaration holds them.
impl std::ops::Deref for SummaryRow {
    type Target = ReadRow;
    fn deref(&self) -> &ReadRow {
        &self.record
    }
}

impl SummaryRow {
    /// The statistics of the retention drawn (see [`Retention`]).
    pub fn retention(&self) -> Stats {
        self.stats(self.drawn.measure())
    }
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
    t.rows()
        .into_iter()
        .map(|record| SummaryRow {
            record,
            drawn: retention,
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
        assert_eq!(rows[0].stats("reduction_feasible").mean, Some(0.5));
        assert_eq!(rows[1].stats("reduction_feasible").mean, None);
        // Read by name: a key, a count and the retention drawn.
        assert_eq!(rows[0].text("strategy"), "recent");
        assert_eq!(rows[0].real("budget_percent"), 50.0);
        assert_eq!(rows[0].whole("n_histories"), 4);
        assert_eq!(rows[1].retention().ci_low, None);
        assert_eq!(rows[0].retention().interval(), Some((0.5, 0.5)));

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
