//! Reading a sweep's `summary.parquet` back into typed rows, for charts and reports.
//!
//! The table is checked column by column before any row is built, so a missing column, a
//! column of the wrong type or a null where a value is required is one error naming the file
//! and the column, and nothing downstream sees a half-read table.

use crate::error::InputError;
use polars::prelude::*;
use std::fs::File;
use std::path::Path;

/// One group of cells: a strategy × keep_recent × budget × noise level (the sweep's own row
/// type, read back).
pub use crate::sweep::summary::SummaryRow;

/// The type a column must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Type {
    String,
    UInt64,
    Float64,
}

impl Type {
    fn name(self) -> &'static str {
        match self {
            Type::String => "String",
            Type::UInt64 => "UInt64",
            Type::Float64 => "Float64",
        }
    }

    fn matches(self, dtype: &DataType) -> bool {
        matches!(
            (self, dtype),
            (Type::String, DataType::String)
                | (Type::UInt64, DataType::UInt64)
                | (Type::Float64, DataType::Float64)
        )
    }
}

/// Every column the charts and the report read: name, type, and whether nulls are allowed.
const COLUMNS: &[(&str, Type, bool)] = &[
    ("strategy", Type::String, false),
    ("keep_recent", Type::UInt64, false),
    ("budget_percent", Type::Float64, false),
    ("false_negative", Type::Float64, false),
    ("false_positive", Type::Float64, false),
    ("n", Type::UInt64, false),
    ("n_feasible", Type::UInt64, false),
    ("feasible_share", Type::Float64, false),
    ("reduction_mean", Type::Float64, true),
    ("reduction_sd", Type::Float64, true),
    ("required_retention_mean", Type::Float64, true),
    ("required_retention_sd", Type::Float64, true),
    ("required_retention_ci_low", Type::Float64, true),
    ("required_retention_ci_high", Type::Float64, true),
    ("retention_any_mean", Type::Float64, true),
    ("retention_any_ci_low", Type::Float64, true),
    ("retention_any_ci_high", Type::Float64, true),
    ("exact_mean", Type::Float64, true),
];

/// The names of the columns a summary table must have, in order.
pub fn required_columns() -> impl Iterator<Item = &'static str> {
    COLUMNS.iter().map(|(name, _, _)| *name)
}

/// The error for an output of `ctxlab sweep` that cannot be opened: a missing file says what
/// should have been there.
pub(crate) fn sweep_output_error(path: &Path, e: std::io::Error, what: &str) -> InputError {
    if e.kind() == std::io::ErrorKind::NotFound {
        InputError::File {
            path: path.into(),
            message: format!("not found: expected the {what} `ctxlab sweep` writes"),
        }
    } else {
        InputError::io(path, e)
    }
}

/// Reads a summary table. Extra columns are ignored; missing or mistyped ones are errors.
pub fn read_summary(path: &Path) -> Result<Vec<SummaryRow>, InputError> {
    rows_from_frame(&read_frame(path)?, path)
}

/// Reads a Parquet table `ctxlab sweep` wrote.
pub(crate) fn read_frame(path: &Path) -> Result<DataFrame, InputError> {
    let file = File::open(path).map_err(|e| sweep_output_error(path, e, "summary table"))?;
    ParquetReader::new(file)
        .finish()
        .map_err(|e| InputError::File {
            path: path.into(),
            message: format!("not a readable Parquet table: {e}"),
        })
}

/// Checks that `df` has every column of `columns` (name, type, whether nulls are allowed),
/// finite numbers, and at least one row; the error names the file, the column and the row.
pub(crate) fn check_columns(
    df: &DataFrame,
    path: &Path,
    columns: &[(&str, Type, bool)],
) -> Result<(), InputError> {
    let fail = |message: String| InputError::File {
        path: path.into(),
        message,
    };
    for &(name, ty, nullable) in columns {
        let column = df.column(name).map_err(|_| {
            fail(format!(
                "column `{name}` is missing (expected type {})",
                ty.name()
            ))
        })?;
        if !ty.matches(column.dtype()) {
            return Err(fail(format!(
                "column `{name}` has type {:?}, expected {}",
                column.dtype(),
                ty.name()
            )));
        }
        if !nullable && column.null_count() > 0 {
            let row = (0..column.len())
                .find(|&i| column.get(i).map(|v| v.is_null()).unwrap_or(false))
                .unwrap_or(0);
            return Err(fail(format!(
                "column `{name}` row {}: null, expected a {} value",
                row + 1,
                ty.name()
            )));
        }
        if ty == Type::Float64 {
            let ca = column.f64().expect("checked type");
            if let Some(row) = ca.iter().position(|v| v.is_some_and(|x| !x.is_finite())) {
                return Err(fail(format!(
                    "column `{name}` row {}: not a finite number",
                    row + 1
                )));
            }
        }
    }

    if df.height() == 0 {
        return Err(fail("holds no rows: nothing to draw".into()));
    }
    Ok(())
}

/// Builds rows from a frame already read, checking every column first.
fn rows_from_frame(df: &DataFrame, path: &Path) -> Result<Vec<SummaryRow>, InputError> {
    check_columns(df, path, COLUMNS)?;

    // The checks above make every accessor below succeed; `expect` documents that.
    let strings = |name: &str| -> Vec<String> {
        let ca = df.column(name).and_then(|c| c.str()).expect("checked type");
        ca.iter()
            .map(|v| v.expect("checked non-null").to_string())
            .collect()
    };
    let counts = |name: &str| -> Vec<u64> {
        let ca = df.column(name).and_then(|c| c.u64()).expect("checked type");
        ca.iter().map(|v| v.expect("checked non-null")).collect()
    };
    let optional = |name: &str| -> Vec<Option<f64>> {
        let ca = df.column(name).and_then(|c| c.f64()).expect("checked type");
        ca.iter().collect()
    };
    let values = |name: &str| -> Vec<f64> {
        optional(name)
            .into_iter()
            .map(|v| v.expect("checked non-null"))
            .collect()
    };

    let strategy = strings("strategy");
    let keep_recent = counts("keep_recent");
    let budget_percent = values("budget_percent");
    let false_negative = values("false_negative");
    let false_positive = values("false_positive");
    let n = counts("n");
    let n_feasible = counts("n_feasible");
    let feasible_share = values("feasible_share");
    let reduction_mean = optional("reduction_mean");
    let reduction_sd = optional("reduction_sd");
    let rr_mean = optional("required_retention_mean");
    let rr_sd = optional("required_retention_sd");
    let rr_low = optional("required_retention_ci_low");
    let rr_high = optional("required_retention_ci_high");
    let any_mean = optional("retention_any_mean");
    let any_low = optional("retention_any_ci_low");
    let any_high = optional("retention_any_ci_high");
    let exact_mean = optional("exact_mean");

    let rows = (0..df.height())
        .map(|i| SummaryRow {
            strategy: strategy[i].clone(),
            keep_recent: keep_recent[i],
            budget_percent: budget_percent[i],
            false_negative: false_negative[i],
            false_positive: false_positive[i],
            n: n[i],
            n_feasible: n_feasible[i],
            feasible_share: feasible_share[i],
            reduction_mean: reduction_mean[i],
            reduction_sd: reduction_sd[i],
            required_retention_mean: rr_mean[i],
            required_retention_sd: rr_sd[i],
            required_retention_ci_low: rr_low[i],
            required_retention_ci_high: rr_high[i],
            retention_any_mean: any_mean[i],
            retention_any_ci_low: any_low[i],
            retention_any_ci_high: any_high[i],
            exact_mean: exact_mean[i],
        })
        .collect();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-row frame with every column, `n` replaced by `n_column`.
    fn frame(n_column: Column, budget: f64) -> DataFrame {
        let mut columns = Vec::new();
        for &(name, ty, nullable) in COLUMNS {
            let column = match (name, ty, nullable) {
                ("n", _, _) => n_column.clone(),
                ("budget_percent", _, _) => Column::new(name.into(), [budget, budget]),
                (_, Type::String, _) => Column::new(name.into(), ["recent", "recent"]),
                (_, Type::UInt64, _) => Column::new(name.into(), [4u64, 4]),
                (_, Type::Float64, false) => Column::new(name.into(), [0.1, 0.1]),
                (_, Type::Float64, true) => Column::new(name.into(), [Some(0.5), None]),
            };
            columns.push(column);
        }
        DataFrame::new_infer_height(columns).unwrap()
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
