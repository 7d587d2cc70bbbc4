//! The summary of a session sweep read back for its charts: one [`ChartGroup`] per row, read
//! through the declaration the sweep wrote the table from.

use super::summary_grid::SummaryNoise;
use crate::error::InputError;
use crate::sessions::SessionGrid;
use crate::tables::read::{Checked, ReadRow};
use crate::tables::summary::GroupRow;
use crate::tables::Table;
use polars::prelude::DataFrame;
use std::path::Path;

/// One group of the summary (a strategy × window × ratio × note rate × cache × noise level),
/// as the charts read it. Its columns are the declaration's
/// (`tables::sessions::summary_table`), read by name where they are used, so a new summary
/// column needs no edit here.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartGroup {
    record: ReadRow,
}

/// The row's columns by name (`text`, `whole`, `real`, `stats`), as the declaration holds them.
impl std::ops::Deref for ChartGroup {
    type Target = ReadRow;
    fn deref(&self) -> &ReadRow {
        &self.record
    }
}

impl ChartGroup {
    /// The group's noise level, from its `noise` label.
    pub fn level(&self) -> SummaryNoise {
        SummaryNoise::from_label(self.text("noise"))
    }

    /// Whether some of the group's sessions ran out of context before their last call (the
    /// share that reached it, `completed_mean`, is below 1).
    pub fn incomplete(&self) -> bool {
        self.stats("completed").mean.is_some_and(|c| c < 1.0)
    }
}

/// The session summary's declaration, which the sweep writes the table from.
fn declared() -> Table<SessionGrid, GroupRow> {
    crate::tables::sessions::summary_table(&crate::tables::sessions::table())
}

/// The summary's rows, read through its declaration.
pub(crate) fn rows_from_frame(df: DataFrame, path: &Path) -> Result<Vec<ChartGroup>, InputError> {
    let t = Checked::from_frame(df, path, &declared(), false)?;
    Ok(t.rows()
        .into_iter()
        .map(|record| ChartGroup { record })
        .collect())
}

/// Groups for tests, built as a summary table is read: one row per JSON object, whose keys
/// name declared columns; every column it leaves out holds 0, an empty text or (where the
/// declaration allows it) a null.
#[cfg(test)]
pub(crate) fn groups_for_test(rows: &[serde_json::Value]) -> Vec<ChartGroup> {
    use crate::tables::Type;
    use polars::prelude::Column;
    let table = declared();
    for row in rows {
        let object = row.as_object().expect("a row is a JSON object");
        for key in object.keys() {
            // A misspelt column would otherwise leave its default in place unnoticed.
            assert!(
                table.columns.iter().any(|c| c.name == *key),
                "`{key}` is not a declared summary column"
            );
        }
    }
    let columns: Vec<Column> = table
        .columns
        .iter()
        .map(|c| {
            let name = c.name.as_str();
            let values = rows.iter().map(|r| &r[name]);
            match (c.ty(), c.nullable()) {
                (Type::Text, _) => {
                    let v: Vec<&str> = values.map(|v| v.as_str().unwrap_or_default()).collect();
                    Column::new(name.into(), v)
                }
                (Type::Whole, _) => {
                    let v: Vec<u64> = values.map(|v| v.as_u64().unwrap_or_default()).collect();
                    Column::new(name.into(), v)
                }
                (Type::Real, false) => {
                    let v: Vec<f64> = values.map(|v| v.as_f64().unwrap_or_default()).collect();
                    Column::new(name.into(), v)
                }
                (Type::Real, true) => {
                    let v: Vec<Option<f64>> = values.map(serde_json::Value::as_f64).collect();
                    Column::new(name.into(), v)
                }
                (Type::Flag, _) => {
                    let v: Vec<bool> = values.map(|v| v.as_bool().unwrap_or_default()).collect();
                    Column::new(name.into(), v)
                }
            }
        })
        .collect();
    let frame = DataFrame::new_infer_height(columns).expect("columns of one height");
    rows_from_frame(frame, Path::new("summary.parquet")).expect("a declared frame")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Columns read by name, and the values the charts derive from them.
    #[test]
    fn groups_read_their_columns_by_name() {
        let rows = groups_for_test(&[
            json!({"strategy": "recent", "window": 8000, "ratio": 0.6, "n_histories": 4,
                "noise": "uniform(fn=0.2, fp=0)", "cache": "anthropic",
                "compactions_mean": 3.0, "compactions_ci_low": 2.5,
                "compactions_ci_high": 3.5, "completed_mean": 0.75}),
            json!({"strategy": "summary", "completed_mean": 1.0, "compactions_ci_low": 1.0}),
        ]);
        assert_eq!(rows.len(), 2);
        let (a, b) = (&rows[0], &rows[1]);
        assert_eq!(
            (a.text("strategy"), a.whole("window"), a.real("ratio")),
            ("recent", 8000, 0.6)
        );
        assert_eq!((a.whole("n_histories"), a.text("cache")), (4, "anthropic"));
        assert_eq!(a.level(), SummaryNoise::from_label("uniform(fn=0.2, fp=0)"));
        assert_eq!(a.stats("compactions").mean, Some(3.0));
        assert_eq!(a.stats("compactions").interval(), Some((2.5, 3.5)));
        // An interval needs both its ends.
        assert_eq!(b.stats("compactions").interval(), None);
        assert!(a.incomplete() && !b.incomplete());
        // Left out: a null measure, and a group with no completed share is not incomplete.
        assert_eq!(b.stats("retention_at_need").mean, None);
        assert!(!groups_for_test(&[json!({})])[0].incomplete());
    }
}
