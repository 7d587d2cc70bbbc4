//! The summary table of a sweep, derived from its rows table: the group's keys and counts
//! (declared by each kind of sweep), then, for every measure column of the rows table,
//! `{measure}_mean`, `{measure}_sd`, `{measure}_ci_low` and `{measure}_ci_high`.
//!
//! A measure is averaged over the rows where it is defined; its own count is a key column where
//! the kind of sweep names it (`n_feasible` for cells, `n_retention` for sessions).

use super::{Table, Value};
use crate::stats::{GroupAcc, HistoryPartials, Summary};

/// The suffixes of the statistics every measure gets, in column order.
pub const STATS: [&str; 4] = ["mean", "sd", "ci_low", "ci_high"];

/// One group of the summary, as accumulated.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    /// The group's index on the grid (the grid turns it into keys).
    pub index: usize,
    pub acc: GroupAcc,
}

impl GroupRow {
    /// The number of rows where measure `k` (in table order) is defined.
    pub fn count(&self, k: usize) -> u64 {
        self.acc.measures[k].n
    }
}

/// The position of measure `name` among the measures of `rows`; a declaration error if absent.
pub fn measure_index<G, R>(rows: &Table<G, R>, name: &str) -> usize {
    rows.measures()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("`{name}` is not a measure of the {} table", rows.stem))
}

/// An empty summary for `rows`' measures over `groups` groups.
pub fn empty<G, R>(rows: &Table<G, R>, groups: usize) -> Summary {
    let whole: Vec<bool> = rows.measures().map(|c| c.whole()).collect();
    Summary::new(groups, &whole)
}

/// Adds the rows of one history to `summary`; `group` places a row in its group, `scratch`
/// (from `summary.partials()`) gathers the history's totals per group.
pub fn add<G, R>(
    summary: &mut Summary,
    scratch: &mut HistoryPartials,
    table: &Table<G, R>,
    grid: &G,
    rows: &[R],
    group: impl Fn(&G, &R) -> usize,
) {
    let measures: Vec<_> = table.measures().collect();
    summary.add_history(
        scratch,
        rows.iter().map(|r| {
            let values = measures.iter().map(move |c| match c.value(grid, r) {
                Value::Whole(x) => x.map(|x| x as f64),
                Value::Real(x) => x,
            });
            (group(grid, r), values)
        }),
    );
}

/// The summary's groups as rows of the summary table, in group order.
pub fn group_rows(summary: &Summary) -> Vec<GroupRow> {
    summary
        .groups
        .iter()
        .enumerate()
        .map(|(index, acc)| GroupRow {
            index,
            acc: acc.clone(),
        })
        .collect()
}

/// The summary table: `keys`, then the statistics of every measure of `rows`.
pub fn table<G: 'static, R>(rows: &Table<G, R>, keys: Table<G, GroupRow>) -> Table<G, GroupRow> {
    let mut t = keys;
    for (k, column) in rows.measures().enumerate() {
        let name = column.summary_name();
        t = t
            .opt_real(format!("{name}_mean"), move |_, r: &GroupRow| {
                r.acc.measures[k].mean()
            })
            .opt_real(format!("{name}_sd"), move |_, r: &GroupRow| {
                r.acc.measures[k].sd()
            })
            .opt_real(format!("{name}_ci_low"), move |_, r: &GroupRow| {
                r.acc.measures[k].interval().map(|i| i.0)
            })
            .opt_real(format!("{name}_ci_high"), move |_, r: &GroupRow| {
                r.acc.measures[k].interval().map(|i| i.1)
            });
    }
    t
}
