//! The table `ctxlab table --format csv` writes: every strategy at every budget on one history
//! (the rows are evaluated by `crate::cells::table_rows`, the sweep's own code).

use super::Table;
use crate::cells::TableRow;

/// The budget table, column by column; its values are written as the cells table writes them.
pub fn table() -> Table<(), TableRow> {
    Table::new("table")
        .percent("budget_percent", |_: &(), r: &TableRow| r.budget_percent)
        .text("strategy", |_, _, r| &r.strategy)
        .whole("capacity", |_, r| r.capacity)
        .opt_whole("used", |_, r| r.metrics.feasible.then_some(r.metrics.used))
        .opt_real("reduction", |_, r| r.metrics.reduction())
        .opt_real("required_retention", |_, r| r.metrics.required_retention())
        .opt_real("exact", |_, r| r.metrics.exact())
        .flag("feasible", |_, r| r.metrics.feasible)
}
