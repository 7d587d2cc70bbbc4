//! The CSV `ctxlab calibrate --stale-tasks --csv` prints: the counts pooled over every real
//! compaction summary (`crate::calibrate_stale_tasks`), one row.

use super::Table;

/// Counts pooled over compactions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StaleCounts {
    pub compactions: usize,
    /// Compactions with at least one completed task before them.
    pub with_completed: usize,
    pub completed: usize,
    pub named: usize,
    pub stale: usize,
    /// Compactions whose summary presents at least one completed task as open.
    pub with_stale: usize,
}

/// The pooled row, column by column.
pub fn table() -> Table<(), StaleCounts> {
    Table::new("stale_tasks")
        .whole("compactions", |_: &(), p: &StaleCounts| {
            p.compactions as u64
        })
        .whole("with_completed", |_, p| p.with_completed as u64)
        .whole("completed", |_, p| p.completed as u64)
        .whole("named", |_, p| p.named as u64)
        .whole("stale", |_, p| p.stale as u64)
        .whole("with_stale", |_, p| p.with_stale as u64)
}
