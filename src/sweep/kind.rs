//! What the runner needs of a kind of sweep: its rows, its groups, its tables and its hot loop.
//! Cell sweeps ([`crate::cells`]) and session sweeps ([`crate::sessions`]) are the two kinds;
//! everything else — chunks, checkpoints, shards, merging, staging and publishing — is written
//! once in [`super::run`] and [`super::merge`].

use super::parts::{Reader, Writer};
use crate::cells::{self, CellRow, Grid};
use crate::history::CostedHistory;
use crate::metrics::Metrics;
use crate::session::SessionMetrics;
use crate::sessions::{self, SessionGrid, SessionRow};
use crate::tables::manifest::{Axes, SweepKind};
use crate::tables::summary::GroupRow;
use crate::tables::Table;

/// A kind of sweep, by its grid.
pub trait SweepGrid: Sized + Sync + Send + 'static {
    type Row: Copy + Send + Sync + 'static;
    type Scratch: Default + Send;
    const KIND: SweepKind;

    fn histories(&self) -> usize;
    /// Rows (cells or sessions) of one history.
    fn rows_per_history(&self) -> usize;
    fn groups(&self) -> usize;
    /// The summary group of a row.
    fn group(&self, row: &Self::Row) -> usize;
    fn history(row: &Self::Row) -> u32;
    /// Appends every row of history `index` to `out`, in table order.
    fn evaluate_history(
        &self,
        index: usize,
        history: &CostedHistory,
        scratch: &mut Self::Scratch,
        out: &mut Vec<Self::Row>,
    );
    fn rows_table() -> Table<Self, Self::Row>;
    fn summary_table(rows: &Table<Self, Self::Row>) -> Table<Self, GroupRow>;
    /// The axes, for the manifest.
    fn axes(&self) -> Axes;
    /// A row in the part files' binary form, and back.
    fn encode(row: &Self::Row, out: &mut Writer);
    fn decode(input: &mut Reader) -> Option<Self::Row>;

    /// Rows of the whole grid.
    fn rows(&self) -> u64 {
        self.histories() as u64 * self.rows_per_history() as u64
    }
}

impl SweepGrid for Grid {
    type Row = CellRow;
    type Scratch = cells::Scratch;
    const KIND: SweepKind = SweepKind::Cells;

    fn histories(&self) -> usize {
        self.histories
    }
    fn rows_per_history(&self) -> usize {
        self.cells_per_history()
    }
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
    fn history(r: &CellRow) -> u32 {
        r.history
    }
    fn evaluate_history(
        &self,
        index: usize,
        history: &CostedHistory,
        scratch: &mut cells::Scratch,
        out: &mut Vec<CellRow>,
    ) {
        cells::evaluate_history(self, index, history, scratch, out)
    }
    fn rows_table() -> Table<Self, CellRow> {
        crate::tables::cells::table()
    }
    fn summary_table(rows: &Table<Self, CellRow>) -> Table<Self, GroupRow> {
        crate::tables::cells::summary_table(rows)
    }
    fn axes(&self) -> Axes {
        Axes {
            histories: self.histories as u64,
            replicates: u64::from(self.replicates),
            false_negative: self.false_negatives(),
            false_positive: self.false_positives(),
            strategies: self.labels.clone(),
            keep_recent: self
                .effective_keep_recent()
                .into_iter()
                .map(|k| k as u64)
                .collect(),
            budgets: self.budgets.clone(),
            ..Axes::default()
        }
    }
    fn encode(r: &CellRow, w: &mut Writer) {
        w.u32(r.history);
        w.u32(r.replicate);
        for x in [r.level, r.strategy, r.keep_recent_axis, r.budget] {
            w.u16(x);
        }
        w.u32(r.keep_recent);
        w.u64(r.capacity);
        w.u64(r.total);
        let m = &r.metrics;
        w.flag(m.feasible);
        w.u64(m.used);
        w.opt_f64(m.reduction);
        w.u32(m.required_total);
        w.u32(m.required_kept);
        w.opt_f64(m.required_retention);
        w.u32(m.required_any);
        w.opt_f64(m.retention_any);
        w.opt_f64(m.exact);
        w.u32(m.placeholders);
        w.u32(m.summarised);
    }
    fn decode(r: &mut Reader) -> Option<CellRow> {
        Some(CellRow {
            history: r.u32()?,
            replicate: r.u32()?,
            level: r.u16()?,
            strategy: r.u16()?,
            keep_recent_axis: r.u16()?,
            budget: r.u16()?,
            keep_recent: r.u32()?,
            capacity: r.u64()?,
            total: r.u64()?,
            metrics: Metrics {
                feasible: r.flag()?,
                used: r.u64()?,
                reduction: r.opt_f64()?,
                required_total: r.u32()?,
                required_kept: r.u32()?,
                required_retention: r.opt_f64()?,
                required_any: r.u32()?,
                retention_any: r.opt_f64()?,
                exact: r.opt_f64()?,
                placeholders: r.u32()?,
                summarised: r.u32()?,
            },
        })
    }
}

impl SweepGrid for SessionGrid {
    type Row = SessionRow;
    type Scratch = sessions::Scratch;
    const KIND: SweepKind = SweepKind::Sessions;

    fn histories(&self) -> usize {
        self.histories
    }
    fn rows_per_history(&self) -> usize {
        self.sessions_per_history()
    }
    fn groups(&self) -> usize {
        SessionGrid::groups(self)
    }
    fn group(&self, r: &SessionRow) -> usize {
        SessionGrid::group(self, r.coordinates())
    }
    fn history(r: &SessionRow) -> u32 {
        r.history
    }
    fn evaluate_history(
        &self,
        index: usize,
        history: &CostedHistory,
        scratch: &mut sessions::Scratch,
        out: &mut Vec<SessionRow>,
    ) {
        sessions::evaluate_history(self, index, history, scratch, out)
    }
    fn rows_table() -> Table<Self, SessionRow> {
        crate::tables::sessions::table()
    }
    fn summary_table(rows: &Table<Self, SessionRow>) -> Table<Self, GroupRow> {
        crate::tables::sessions::summary_table(rows)
    }
    fn axes(&self) -> Axes {
        Axes {
            histories: self.histories as u64,
            replicates: u64::from(self.replicates),
            false_negative: self.false_negatives(),
            false_positive: self.false_positives(),
            strategies: self.labels.clone(),
            windows: self.windows.clone(),
            ratios: self.ratios.clone(),
            note_rates: self.note_rates.clone(),
            ..Axes::default()
        }
    }
    fn encode(r: &SessionRow, w: &mut Writer) {
        w.u32(r.history);
        w.u32(r.replicate);
        for x in [r.level, r.strategy, r.window, r.ratio, r.note_rate] {
            w.u16(x);
        }
        let m = &r.metrics;
        for x in [
            m.records,
            m.calls,
            m.compactions,
            m.failed_compactions,
            m.model_calls,
            m.storms,
        ] {
            w.u32(x);
        }
        w.flag(m.guard_tripped);
        w.u32(m.over_window_calls);
        for x in [
            m.input_tokens,
            m.cache_read_tokens,
            m.cache_write_tokens,
            m.output_tokens,
        ] {
            w.u64(x);
        }
        w.f64(m.cost);
        for x in [m.peak_input, m.final_context, m.final_usage] {
            w.u64(x);
        }
        for x in [
            m.noted,
            m.required_total,
            m.required_verbatim,
            m.required_any,
        ] {
            w.u32(x);
        }
        w.opt_f64(m.retention_end);
        w.opt_f64(m.retention_any_end);
        w.opt_f64(m.retention_at_need);
    }
    fn decode(r: &mut Reader) -> Option<SessionRow> {
        Some(SessionRow {
            history: r.u32()?,
            replicate: r.u32()?,
            level: r.u16()?,
            strategy: r.u16()?,
            window: r.u16()?,
            ratio: r.u16()?,
            note_rate: r.u16()?,
            metrics: SessionMetrics {
                records: r.u32()?,
                calls: r.u32()?,
                compactions: r.u32()?,
                failed_compactions: r.u32()?,
                model_calls: r.u32()?,
                storms: r.u32()?,
                guard_tripped: r.flag()?,
                over_window_calls: r.u32()?,
                input_tokens: r.u64()?,
                cache_read_tokens: r.u64()?,
                cache_write_tokens: r.u64()?,
                output_tokens: r.u64()?,
                cost: r.f64()?,
                peak_input: r.u64()?,
                final_context: r.u64()?,
                final_usage: r.u64()?,
                noted: r.u32()?,
                required_total: r.u32()?,
                required_verbatim: r.u32()?,
                required_any: r.u32()?,
                retention_end: r.opt_f64()?,
                retention_any_end: r.opt_f64()?,
                retention_at_need: r.opt_f64()?,
            },
        })
    }
}

impl super::run::SweepExperiment for crate::experiment::Experiment {
    type Grid = Grid;
    fn name(&self) -> &str {
        &self.file.name
    }
    fn seed(&self) -> u64 {
        self.file.seed
    }
    fn origin(&self) -> &str {
        &self.origin
    }
    fn resolved_json(&self) -> serde_json::Value {
        crate::experiment::Experiment::resolved_json(self)
    }
    fn config_hash(&self) -> String {
        crate::experiment::Experiment::config_hash(self)
    }
    fn source(&self) -> &crate::history::source::Source {
        &self.source
    }
    fn cost(&self) -> crate::cost::CostModel {
        self.cost
    }
    fn output_dir(&self) -> &std::path::Path {
        &self.output_dir
    }
    fn formats(&self) -> (bool, bool) {
        (self.parquet, self.csv)
    }
    fn grid(&self, histories: usize) -> Grid {
        Grid::new(self, histories)
    }
}

impl super::run::SweepExperiment for crate::experiment::SessionExperiment {
    type Grid = SessionGrid;
    fn name(&self) -> &str {
        &self.file.name
    }
    fn seed(&self) -> u64 {
        self.file.seed
    }
    fn origin(&self) -> &str {
        &self.origin
    }
    fn resolved_json(&self) -> serde_json::Value {
        crate::experiment::SessionExperiment::resolved_json(self)
    }
    fn config_hash(&self) -> String {
        crate::experiment::SessionExperiment::config_hash(self)
    }
    fn source(&self) -> &crate::history::source::Source {
        &self.source
    }
    fn cost(&self) -> crate::cost::CostModel {
        self.cost
    }
    fn output_dir(&self) -> &std::path::Path {
        &self.output_dir
    }
    fn formats(&self) -> (bool, bool) {
        (self.parquet, self.csv)
    }
    fn grid(&self, histories: usize) -> SessionGrid {
        SessionGrid::new(self, histories)
    }
}
