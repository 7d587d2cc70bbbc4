//! What the runner needs of a kind of sweep: its rows, its groups, its tables and its hot loop.
//! Cell sweeps ([`crate::cells`]) and session sweeps ([`crate::sessions`]) are the two kinds;
//! everything else — chunks, checkpoints, shards, merging, staging and publishing — is written
//! once in [`super::run`] and [`super::merge`].

use crate::cells::{self, CellRow, Grid};
use crate::experiment::outer::OuterAxes;
use crate::experiment::{Experiment, Frame, FrameFile, SessionExperiment};
use crate::formats::Formats;
use crate::history::CostedHistory;
use crate::sessions::{self, SessionGrid, SessionRow};
use crate::strategy::external::Failure;
use crate::tables::manifest::{Axes, SweepKind};
use crate::tables::summary::{GroupRow, Grouping, PairRow};
use crate::tables::Table;

/// What the runner needs of an experiment of either kind: its frame, read through these
/// accessors, and what the kind resolves itself.
pub trait SweepExperiment: Sync {
    type Grid: SweepGrid;
    /// The keys every experiment file has, as written.
    fn file(&self) -> &FrameFile;
    /// What they hold, checked.
    fn frame(&self) -> &Frame;
    fn resolved_json(&self) -> serde_json::Value;
    fn grid(&self, histories: usize) -> Self::Grid;
    /// Checks the loaded histories (each one's name and whether it records usage) before
    /// anything runs or is written.
    fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), crate::error::InputError>;

    fn name(&self) -> &str {
        &self.file().name
    }
    fn seed(&self) -> u64 {
        self.file().seed
    }
    fn origin(&self) -> &str {
        &self.frame().origin
    }
    fn config_hash(&self) -> String {
        Frame::config_hash(self.resolved_json())
    }
    fn source(&self) -> &crate::history::source::Source {
        &self.frame().source
    }
    /// `histories.flags_file`: the flags an external flagger gave, when there are.
    fn flags_file(&self) -> Option<&std::path::Path> {
        self.frame().flags_file(self.file())
    }
    fn cost(&self) -> crate::cost::CostModel {
        self.frame().cost
    }
    fn output_dir(&self) -> &std::path::Path {
        &self.frame().output_dir
    }
    /// The table formats written.
    fn formats(&self) -> Formats {
        self.frame().formats
    }
    /// The formats the rows table is written in.
    fn rows_formats(&self) -> Formats {
        self.frame().rows_formats
    }
    /// `compare.baseline`: the strategy (its index) the sweep's `compare` table is against.
    fn baseline(&self) -> Option<usize> {
        self.frame().baseline
    }
}

/// A kind of sweep, by its grid.
pub trait SweepGrid: Grouping<Self::Row> + Sized + Sync + Send + 'static {
    type Row: Copy + Send + Sync + 'static;
    /// A row of the events table written beside the rows table (a session's compactions).
    type Event: Copy + Send + Sync + 'static;
    type Scratch: Default + Send;
    const KIND: SweepKind;

    /// The events table, for a kind that writes one.
    fn events_table() -> Option<Table<Self, Self::Event>> {
        None
    }
    /// Moves the events of the last evaluation in `scratch` into `out`, in row order.
    fn take_events(_scratch: &mut Self::Scratch, _out: &mut Vec<Self::Event>) {}

    /// The axes both kinds share.
    fn outer(&self) -> &OuterAxes;
    fn histories(&self) -> usize {
        self.outer().histories
    }
    /// Rows (cells or sessions) of one history.
    fn rows_per_history(&self) -> usize;
    /// Replicates per history: the finest piece a history is split into (a replicate's rows
    /// are consecutive and depend on (history, replicate) only).
    fn replicates(&self) -> u32 {
        self.outer().replicates
    }
    /// Appends the rows of `replicates` of history `index` to `out`, in table order.
    fn evaluate_replicates(
        &self,
        index: usize,
        history: &CostedHistory,
        replicates: std::ops::Range<u32>,
        scratch: &mut Self::Scratch,
        out: &mut Vec<Self::Row>,
    );
    /// Appends every row of history `index` to `out`, in table order.
    fn evaluate_history(
        &self,
        index: usize,
        history: &CostedHistory,
        scratch: &mut Self::Scratch,
        out: &mut Vec<Self::Row>,
    ) {
        self.evaluate_replicates(index, history, 0..self.replicates(), scratch, out)
    }
    /// The message of an external program's failure in `rows`, the rows of the evaluation of
    /// history `index` (`name`) it happened in: which cell or session it was.
    fn failure_message(&self, index: usize, name: &str, rows: &[Self::Row], f: &Failure) -> String;
    fn rows_table() -> Table<Self, Self::Row>;
    fn summary_table(rows: &Table<Self, Self::Row>) -> Table<Self, GroupRow>;
    fn pairs_table() -> Table<Self, PairRow>;
    /// The strategies' labels, in grid order.
    fn labels(&self) -> &[String] {
        &self.outer().labels
    }
    /// The strategies, in grid order.
    fn strategy_list(&self) -> &[crate::strategy::Strategy] {
        &self.outer().strategies
    }
    /// The axes, for the manifest.
    fn axes(&self) -> Axes;

    /// Rows of the whole grid.
    fn rows(&self) -> u64 {
        self.histories() as u64 * self.rows_per_history() as u64
    }
}

impl SweepGrid for Grid {
    type Row = CellRow;
    type Event = ();
    type Scratch = cells::CellScratch;
    const KIND: SweepKind = SweepKind::Cells;

    fn outer(&self) -> &OuterAxes {
        &self.outer
    }
    fn rows_per_history(&self) -> usize {
        self.cells_per_history()
    }
    fn evaluate_replicates(
        &self,
        index: usize,
        history: &CostedHistory,
        replicates: std::ops::Range<u32>,
        scratch: &mut cells::CellScratch,
        out: &mut Vec<CellRow>,
    ) {
        cells::evaluate_replicates(self, index, history, replicates, scratch, out)
    }
    fn failure_message(&self, index: usize, name: &str, rows: &[CellRow], f: &Failure) -> String {
        super::external::cell_failure(self, index, name, rows, f)
    }
    fn rows_table() -> Table<Self, CellRow> {
        crate::tables::cells::table()
    }
    fn summary_table(rows: &Table<Self, CellRow>) -> Table<Self, GroupRow> {
        crate::tables::cells::summary_table(rows)
    }
    fn pairs_table() -> Table<Self, PairRow> {
        crate::tables::cells::pairs_table()
    }
    fn axes(&self) -> Axes {
        Axes {
            keep_recent: self
                .keep_recent
                .distinct()
                .into_iter()
                .map(|k| k as u64)
                .collect(),
            budgets: self.budgets.clone(),
            ..outer_axes(&self.outer)
        }
    }
}

impl SweepGrid for SessionGrid {
    type Row = SessionRow;
    type Event = sessions::EventRow;
    type Scratch = sessions::SessionGridScratch;
    const KIND: SweepKind = SweepKind::Sessions;

    fn events_table() -> Option<Table<Self, sessions::EventRow>> {
        Some(crate::tables::compactions::table())
    }
    fn take_events(scratch: &mut Self::Scratch, out: &mut Vec<sessions::EventRow>) {
        sessions::take_events(scratch, out)
    }

    fn outer(&self) -> &OuterAxes {
        &self.outer
    }
    fn rows_per_history(&self) -> usize {
        self.sessions_per_history()
    }
    fn evaluate_replicates(
        &self,
        index: usize,
        history: &CostedHistory,
        replicates: std::ops::Range<u32>,
        scratch: &mut sessions::SessionGridScratch,
        out: &mut Vec<SessionRow>,
    ) {
        sessions::evaluate_replicates(self, index, history, replicates, scratch, out)
    }
    fn failure_message(
        &self,
        index: usize,
        name: &str,
        rows: &[SessionRow],
        f: &Failure,
    ) -> String {
        super::external::session_failure(self, index, name, rows, f)
    }
    fn rows_table() -> Table<Self, SessionRow> {
        crate::tables::sessions::table()
    }
    fn summary_table(rows: &Table<Self, SessionRow>) -> Table<Self, GroupRow> {
        crate::tables::sessions::summary_table(rows)
    }
    fn pairs_table() -> Table<Self, PairRow> {
        crate::tables::sessions::pairs_table()
    }
    fn axes(&self) -> Axes {
        Axes {
            windows: self.windows.clone(),
            ratios: self.ratios.clone(),
            note_rates: self.note_rates.clone(),
            caches: self.caches.clone(),
            ..outer_axes(&self.outer)
        }
    }
}

impl SweepExperiment for Experiment {
    type Grid = Grid;
    fn file(&self) -> &FrameFile {
        &self.file
    }
    fn frame(&self) -> &Frame {
        &self.frame
    }
    fn resolved_json(&self) -> serde_json::Value {
        Experiment::resolved_json(self)
    }
    fn grid(&self, histories: usize) -> Grid {
        Grid::new(self, histories)
    }
    fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), crate::error::InputError> {
        Experiment::check_histories(self, recorded)
    }
}

impl SweepExperiment for SessionExperiment {
    type Grid = SessionGrid;
    fn file(&self) -> &FrameFile {
        &self.file
    }
    fn frame(&self) -> &Frame {
        &self.frame
    }
    fn resolved_json(&self) -> serde_json::Value {
        SessionExperiment::resolved_json(self)
    }
    fn grid(&self, histories: usize) -> SessionGrid {
        SessionGrid::new(self, histories)
    }
    fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), crate::error::InputError> {
        SessionExperiment::check_histories(self, recorded)
    }
}

/// The outer axes (histories, replicates, noise, strategies) as the manifest records them;
/// each kind fills in its own.
fn outer_axes(o: &OuterAxes) -> Axes {
    Axes {
        histories: o.histories as u64,
        replicates: u64::from(o.replicates),
        false_negative: o.false_negatives(),
        false_positive: o.false_positives(),
        noise: o.noise_labels.clone(),
        strategies: o.labels.clone(),
        ..Axes::default()
    }
}
