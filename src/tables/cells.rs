//! The cells table (one row per cell) and the keys of its summary (one row per strategy ×
//! keep_recent × budget × noise level).

use super::summary::{self, measure_index, GroupRow, Grouping, Keyed, PairRow};
use super::Table;
use crate::cells::{CellRow, Grid};

impl Grouping<CellRow> for Grid {
    fn groups(&self) -> usize {
        Grid::groups(self)
    }
    fn group(&self, r: &CellRow) -> usize {
        Grid::group(
            self,
            r.strategy as usize,
            r.keep_recent_axis as usize,
            r.budget as usize,
            r.level as usize,
        )
    }
    fn strategies(&self) -> usize {
        self.strategies.len()
    }
    fn strategy(&self, r: &CellRow) -> usize {
        r.strategy as usize
    }
    // Cells run strategy, keep_recent, budget within a replicate and noise level.
    fn strategy_stride(&self) -> usize {
        self.keep_recent.axis_len() * self.budgets.len()
    }
    fn group_strategy(&self, group: usize) -> usize {
        self.group_coordinates(group).0
    }
}

/// The cells table, column by column, a topic at a time. Measures (`.measure()`) are
/// summarised per group.
pub fn table() -> Table<Grid, CellRow> {
    let t = coordinates(Table::new("cells"));
    recovery(any_record(form(facts(records(size(t))))))
}

/// Whether the cell's context fitted its budget: the cell's own measures are null otherwise.
fn feasible(r: &CellRow) -> bool {
    r.metrics.feasible
}

/// Where the cell sits: its history, replicate, noise level, strategy, keep_recent and budget,
/// and the capacity the budget gives.
fn coordinates(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t.text("history", |_: &Grid, names, r: &CellRow| {
        names.get(r.history)
    })
    .whole("replicate", |_, r| u64::from(r.replicate))
    .text("noise", |g, _, r| &g.noise_labels[r.level as usize])
    .real("false_negative", |g, r| {
        g.levels[r.level as usize].false_negative
    })
    .real("false_positive", |g, r| {
        g.levels[r.level as usize].false_positive
    })
    // The rates the flags realised on this history (nominal rates above, see `noise`).
    .realised(|r: &CellRow| r.realised)
    .text("strategy", |g, _, r| &g.labels[r.strategy as usize])
    .whole("keep_recent", |_, r| u64::from(r.keep_recent))
    .percent("budget_percent", |g, r| g.budgets[r.budget as usize])
    .whole("capacity", |_, r| r.capacity)
}

/// What the context costs against the history, over feasible cells.
fn size(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t.whole("total", |_, r| r.metrics.total)
        .opt_whole("used", |_, r| feasible(r).then_some(r.metrics.used))
        .opt_real("reduction", |_, r| r.metrics.reduction())
        .share()
        .measure_as("reduction_feasible")
        .paired()
}

/// Required records kept, over feasible cells and over all cells.
fn records(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t.whole("required_total", |_, r| u64::from(r.metrics.required_total))
        .opt_whole("required_kept", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.required_kept))
        })
        .opt_real("required_retention", |_, r| r.metrics.required_retention())
        .share()
        .measure_as("required_retention_feasible")
        // Over every cell of a history with required records: an infeasible cell keeps
        // nothing (the harness could not build a context within the budget).
        .opt_real("required_retention_all", |_, r| {
            all_cells(r, r.metrics.required_retention())
        })
        .share()
        .zero_fails()
        .measure()
        .paired()
        .opt_real("retention_any", |_, r| r.metrics.retention_any())
        .share()
        .measure_as("retention_any_feasible")
        .opt_real("retention_any_all", |_, r| {
            all_cells(r, r.metrics.retention_any())
        })
        .share()
        .zero_fails()
        .measure()
}

/// Facts of the required records kept, and the needed ones (a later record uses them again).
fn facts(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t.whole("facts_total", |_, r| u64::from(r.metrics.facts.facts_total))
        .opt_whole("facts_kept", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.facts.facts_kept))
        })
        .opt_real("fact_retention", |_, r| r.metrics.fact_retention())
        .share()
        .measure_as("fact_retention_feasible")
        // As for records: an infeasible cell keeps no fact; undefined without facts.
        .opt_real("fact_retention_all", |_, r| {
            if r.metrics.facts.facts_total == 0 {
                None
            } else {
                all_cells(r, r.metrics.fact_retention())
            }
        })
        .share()
        .zero_fails()
        .measure()
        // The facts a later record uses again (`crate::history::facts`): the information that matters.
        .whole("needed_facts_total", |_, r| {
            u64::from(r.metrics.facts.needed_facts_total)
        })
        .opt_whole("needed_facts_kept", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.facts.needed_facts_kept))
        })
        .opt_real("needed_fact_retention", |_, r| {
            r.metrics.needed_fact_retention()
        })
        .measure_as("needed_fact_retention_feasible")
        .share()
        .opt_real("needed_fact_retention_all", |_, r| {
            if r.metrics.facts.needed_facts_total == 0 {
                None
            } else {
                all_cells(r, r.metrics.needed_fact_retention())
            }
        })
        .measure()
        .share()
        .zero_fails()
        .paired()
}

/// The form the context keeps records in, and whether the cell fitted its budget.
fn form(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t.opt_real("exact", |_, r| r.metrics.exact())
        .share()
        .measure_as("exact_feasible")
        .opt_whole("placeholders", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.placeholders))
        })
        .opt_whole("summarised", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.summarised))
        })
        .flag("feasible", |_, r| feasible(r))
        .zero_fails()
        .measure()
}

/// The old crediting of needed facts, kept under its own names.
fn any_record(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t
        // The old crediting of needed facts, under its own name: a needed fact whose token any
        // record of the context holds, a later one that merely repeats it included.
        .opt_whole("needed_facts_any_record", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.facts.needed_facts_any_record))
        })
        .opt_real("needed_fact_retention_any_record", |_, r| {
            r.metrics.needed_fact_retention_any_record()
        })
        .measure_as("needed_fact_retention_any_record_feasible")
        .share()
        .opt_real("needed_fact_retention_any_record_all", |_, r| {
            if r.metrics.facts.needed_facts_total == 0 {
                None
            } else {
                all_cells(r, r.metrics.needed_fact_retention_any_record())
            }
        })
        .measure()
        .share()
        .zero_fails()
}

/// What the agent could get back of what was dropped, and the stale decisions held.
fn recovery(t: Table<Grid, CellRow>) -> Table<Grid, CellRow> {
    t
        // What the agent could get back of what was dropped (`crate::history::recovery`).
        .opt_whole("required_dropped_recoverable", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.required_dropped_recoverable))
        })
        .opt_real("dropped_recoverable_share", |_, r| {
            r.metrics.dropped_recoverable_share()
        })
        .measure_as("dropped_recoverable_share_feasible")
        .share()
        // Supersessions the context holds the old side of without the new (`crate::stale`);
        // 0 for every history without planted supersessions.
        .opt_whole("stale", |_, r| {
            feasible(r).then_some(u64::from(r.metrics.stale))
        })
        .measure_as("stale_feasible")
}

/// A retention over all cells: the feasible cell's own, 0 for an infeasible one, undefined
/// for a history without required records.
fn all_cells(r: &CellRow, feasible: Option<f64>) -> Option<f64> {
    if r.metrics.required_total == 0 {
        None
    } else if r.metrics.feasible {
        feasible
    } else {
        Some(0.0)
    }
}

/// The keys of a cell group, for the summary and the pairs tables.
fn keys<R: Keyed + 'static>() -> Table<Grid, R> {
    Table::new("summary")
        .text("strategy", |g: &Grid, _, r: &R| {
            &g.labels[g.group_coordinates(r.group()).0]
        })
        .whole("keep_recent", |g, r| {
            let (s, k, _, _) = g.group_coordinates(r.group());
            g.keep_recent.of(s, k) as u64
        })
        .percent("budget_percent", |g, r| {
            g.budgets[g.group_coordinates(r.group()).2]
        })
        .text("noise", |g, _, r| {
            &g.noise_labels[g.group_coordinates(r.group()).3]
        })
        .real("false_negative", |g, r| {
            g.levels[g.group_coordinates(r.group()).3].false_negative
        })
        .real("false_positive", |g, r| {
            g.levels[g.group_coordinates(r.group()).3].false_positive
        })
}

/// The cell summary: the group's keys, its counts, then every measure's statistics.
pub fn summary_table(cells: &Table<Grid, CellRow>) -> Table<Grid, GroupRow> {
    // Feasible cells are exactly those with a reduction.
    let feasible = measure_index(cells, "reduction");
    let keys = keys::<GroupRow>()
        .whole("n", |_, r| r.acc.n)
        // The independent units the intervals rest on.
        .whole("n_histories", |_, r| r.acc.histories)
        .whole("n_feasible", move |_, r| r.count(feasible))
        // The histories the means over feasible cells rest on.
        .whole("n_feasible_histories", move |_, r| {
            r.acc.measures[feasible].histories
        })
        .real("feasible_share", move |_, r| {
            if r.acc.n == 0 {
                0.0
            } else {
                r.count(feasible) as f64 / r.acc.n as f64
            }
        });
    summary::table(cells, keys)
}

/// The pairs table of a cell sweep: each group against each other strategy's group at the
/// same keep_recent, budget and noise level.
pub fn pairs_table() -> Table<Grid, PairRow> {
    summary::pairs_table(keys::<PairRow>())
}
