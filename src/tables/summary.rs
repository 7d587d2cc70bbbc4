//! The summary table of a sweep, derived from its rows table: the group's keys and counts
//! (declared by each kind of sweep), then, for every measure column of the rows table,
//! `{measure}_mean`, `{measure}_sd`, `{measure}_ci_low` and `{measure}_ci_high`.
//!
//! A measure is averaged over the rows where it is defined; its own count is a key column where
//! the kind of sweep names it (`n_feasible` for cells, `n_retention` for sessions).

use super::read::ReadRow;
use super::Table;
use crate::stats::{GroupAcc, HistoryPartials, PairAcc, Summary};

/// The suffixes of the statistics every measure gets, in column order.
pub const STATS: [&str; 4] = ["mean", "sd", "ci_low", "ci_high"];

/// One measure's statistics in a summary row read back: its columns `{measure}_mean`,
/// `{measure}_sd`, `{measure}_ci_low` and `{measure}_ci_high` ([`STATS`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

impl ReadRow {
    /// The statistics of a measure, by its summary name (`reduction_feasible`, `cost`).
    pub fn stats(&self, measure: &str) -> Stats {
        Stats::of(self, measure)
    }
}

impl Stats {
    /// The statistics of `measure` (its summary name, e.g. `reduction_feasible`) in `row`.
    pub fn of(row: &ReadRow, measure: &str) -> Stats {
        let [mean, sd, ci_low, ci_high] = STATS.map(|s| row.opt_real(&format!("{measure}_{s}")));
        Stats {
            mean,
            sd,
            ci_low,
            ci_high,
        }
    }

    /// The interval, when both its ends are defined.
    pub fn interval(&self) -> Option<(f64, f64)> {
        Some((self.ci_low?, self.ci_high?))
    }
}

/// One group of the summary, as accumulated.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    /// The group's index on the grid (the grid turns it into keys).
    pub index: usize,
    pub acc: GroupAcc,
    /// Each measure's interval, worked out once (a share's takes a quantile search) for the
    /// two columns and every format that show it.
    pub intervals: Vec<Option<(f64, f64)>>,
}

/// A row that belongs to a summary group (its keys come from the group).
pub trait Keyed {
    fn group(&self) -> usize;
}

impl Keyed for GroupRow {
    fn group(&self) -> usize {
        self.index
    }
}

/// One paired comparison: a group (its strategy and the other axes), a baseline strategy,
/// and a measure, with the differences strategy − baseline over the cells both define.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRow {
    pub group: usize,
    pub baseline: usize,
    pub baseline_label: String,
    pub measure: String,
    pub acc: PairAcc,
}

impl Keyed for PairRow {
    fn group(&self) -> usize {
        self.group
    }
}

impl PairRow {
    fn share(&self, count: u64) -> Option<f64> {
        (self.acc.diff.histories > 0).then(|| count as f64 / self.acc.diff.histories as f64)
    }
}

/// The pairs of `summary` as rows (every strategy against every other one, or against
/// `baseline` alone), in group order; `labels` names the strategies.
pub fn pair_rows<G: Grouping<R>, R>(
    summary: &Summary,
    rows: &Table<G, R>,
    grid: &G,
    labels: &[String],
    baseline: Option<usize>,
) -> Vec<PairRow> {
    let measures: Vec<&str> = rows.paired_columns().map(|c| c.name.as_str()).collect();
    let (s, p) = (grid.strategies(), measures.len());
    let mut out = Vec::new();
    for g in 0..grid.groups() {
        for (b, label) in labels.iter().enumerate().take(s) {
            if b == grid.group_strategy(g) || baseline.is_some_and(|x| x != b) {
                continue;
            }
            for (m, name) in measures.iter().enumerate() {
                out.push(PairRow {
                    group: g,
                    baseline: b,
                    baseline_label: label.clone(),
                    measure: name.to_string(),
                    acc: summary.pairs[(g * s + b) * p + m],
                });
            }
        }
    }
    out
}

/// The pairs table: the group's keys, the baseline and the measure, then the differences.
pub fn pairs_table<G: 'static>(keys: Table<G, PairRow>) -> Table<G, PairRow> {
    let mut t = keys
        .text("baseline", |_, _, r: &PairRow| &r.baseline_label)
        .text("measure", |_, _, r: &PairRow| &r.measure)
        .whole("n", |_, r| r.acc.diff.n)
        .whole("n_histories", |_, r| r.acc.diff.histories)
        // Pairs left out: a cost measure compares only sessions that both completed.
        .whole("n_excluded", |_, r| r.acc.excluded)
        .opt_real("diff_mean", |_, r| r.acc.diff.mean())
        .opt_real("diff_ci_low", |_, r| r.acc.diff.interval().map(|i| i.0))
        .opt_real("diff_ci_high", |_, r| r.acc.diff.interval().map(|i| i.1))
        .opt_real("share_better", |_, r| r.share(r.acc.better))
        .opt_real("share_worse", |_, r| r.share(r.acc.worse))
        .opt_real("share_tied", |_, r| r.share(r.acc.tied));
    t.stem = "pairs";
    t
}

impl GroupRow {
    /// The number of rows where measure `k` (in table order) is defined.
    pub fn count(&self, k: usize) -> u64 {
        self.acc.measures[k].n
    }

    /// The sum of whole measure `k` over the group: for a flag, the rows that have it.
    pub fn sum_whole(&self, k: usize) -> u64 {
        self.acc.measures[k].whole_sum()
    }
}

/// The position of measure `name` among the measures of `rows`; a declaration error if absent.
pub fn measure_index<G, R>(rows: &Table<G, R>, name: &str) -> usize {
    rows.measures()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("`{name}` is not a measure of the {} table", rows.stem))
}

/// Where a kind of sweep's rows sit, as the summary needs it: each row's group and strategy,
/// and how to find the row of another strategy at the same coordinates.
pub trait Grouping<R> {
    fn groups(&self) -> usize;
    fn group(&self, row: &R) -> usize;
    fn strategies(&self) -> usize;
    fn strategy(&self, row: &R) -> usize;
    /// Within one history's rows, the distance between the rows of two neighbouring
    /// strategies at the same other coordinates.
    fn strategy_stride(&self) -> usize;
    fn group_strategy(&self, group: usize) -> usize;
    /// Whether the row's run completed (a cell always does).
    fn completed(&self, _row: &R) -> bool {
        true
    }
}

/// An empty summary for `rows`' measures and pairs over `grid`'s groups.
pub fn empty<G: Grouping<R>, R>(rows: &Table<G, R>, grid: &G) -> Summary {
    let whole: Vec<bool> = rows.measures().map(|c| c.whole()).collect();
    let unit: Vec<bool> = rows.measures().map(|c| c.unit()).collect();
    let fails: Vec<bool> = rows.measures().map(|c| c.zero_fails).collect();
    let paired: Vec<bool> = rows.paired_columns().map(|c| c.whole()).collect();
    Summary::new(grid.groups(), &whole, grid.strategies(), &paired)
        .with_units(&unit)
        .with_failures(&fails)
}

/// Adds the rows of one history to `summary`: their groups, and the paired differences of
/// every row with the row of each other strategy at the same coordinates. `scratch` (from
/// `summary.partials()`) gathers the history's totals.
pub fn add<G: Grouping<R>, R>(
    summary: &mut Summary,
    scratch: &mut HistoryPartials,
    table: &Table<G, R>,
    grid: &G,
    rows: &[R],
) {
    gather(summary, scratch, table, grid, rows);
    close(summary, scratch);
}

/// Adds the rows gathered by [`gather`] since the history began, as one history.
pub fn close(summary: &mut Summary, scratch: &mut HistoryPartials) {
    summary.close_history(scratch);
    summary.close_pairs(scratch);
}

/// Gathers some whole replicates of one history (`rows` starts at a replicate, so a row's
/// baseline rows are in it) into `scratch`; [`close`] adds them when the history ends.
pub fn gather<G: Grouping<R>, R>(
    summary: &Summary,
    scratch: &mut HistoryPartials,
    table: &Table<G, R>,
    grid: &G,
    rows: &[R],
) {
    // Each row's values of the measure and paired columns, read once (a block of rows per
    // call through the declared table): the pairs read every row again for each other
    // strategy.
    let read: Vec<usize> = (0..table.columns.len())
        .filter(|&c| table.columns[c].measure || table.columns[c].paired)
        .collect();
    let at = |column: usize| read.iter().position(|&c| c == column).expect("read");
    let measures: Vec<usize> = read
        .iter()
        .filter(|&&c| table.columns[c].measure)
        .map(|&c| at(c))
        .collect();
    let paired: Vec<(usize, bool)> = read
        .iter()
        .filter(|&&c| table.columns[c].paired)
        .map(|&c| (at(c), table.columns[c].completed_only))
        .collect();
    let (strategies, stride, p) = (grid.strategies(), grid.strategy_stride(), paired.len());
    // A block of rows holds every strategy at the same other coordinates, so a row's baseline
    // rows are in its block: read and gathered block by block, the values are still in the
    // cache when they are added and paired (the whole history's values outgrow it).
    let block = match strategies * stride {
        b if b > 0 && rows.len().is_multiple_of(b) => b,
        _ => rows.len().max(1),
    };
    let mut values = scratch.take_values();
    for rows in rows.chunks(block) {
        // Column by column: value `j` of row `i` is `values[j * n + i]`.
        let n = rows.len();
        values.clear();
        for &c in &read {
            table.columns[c].numbers(grid, rows, &mut values);
        }
        let values = &values;
        summary.gather(
            scratch,
            rows.iter().enumerate().map(|(i, r)| {
                (
                    grid.group(r),
                    measures.iter().map(move |&j| values[j * n + i]),
                )
            }),
        );
        if strategies < 2 || p == 0 {
            continue;
        }
        for (i, r) in rows.iter().enumerate() {
            let (s, g) = (grid.strategy(r), grid.group(r));
            for b in (0..strategies).filter(|&b| b != s) {
                // The baseline's row: same history, replicate and other axes, strategy b.
                let o = i + b * stride - s * stride;
                let completed = grid.completed(r) && grid.completed(&rows[o]);
                for (m, &(j, completed_only)) in paired.iter().enumerate() {
                    let pair = ((g * strategies) + b) * p + m;
                    let diff = if completed_only && !completed {
                        (pair, None)
                    } else {
                        match (values[j * n + i], values[j * n + o]) {
                            (Some(x), Some(y)) => (pair, Some(x - y)),
                            _ => continue,
                        }
                    };
                    summary.gather_pairs(scratch, [diff]);
                }
            }
        }
    }
    scratch.put_values(values);
}

/// The summary's groups as rows of the summary table, in group order. On every core: a
/// share's interval is a Beta quantile search, and the main job's 480 groups of 13 measures
/// took 40 ms on one thread while the other waited (each row is a pure function of its group,
/// so the rows are the same whatever the threads).
pub fn group_rows(summary: &Summary) -> Vec<GroupRow> {
    use rayon::prelude::*;
    summary
        .groups
        .par_iter()
        .enumerate()
        .map(|(index, acc)| GroupRow {
            index,
            acc: acc.clone(),
            intervals: acc.measures.iter().map(|m| m.interval()).collect(),
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
                r.intervals[k].map(|i| i.0)
            })
            .opt_real(format!("{name}_ci_high"), move |_, r: &GroupRow| {
                r.intervals[k].map(|i| i.1)
            });
    }
    t
}
