//! What the runner needs of a kind of sweep: its rows, its groups, its tables and its hot loop.
//! Cell sweeps ([`crate::cells`]) and session sweeps ([`crate::sessions`]) are the two kinds;
//! everything else — chunks, checkpoints, shards, merging, staging and publishing — is written
//! once in [`super::run`] and [`super::merge`].

use crate::cells::{self, CellRow, Grid};
use crate::history::CostedHistory;
use crate::sessions::{self, SessionGrid, SessionRow};
use crate::tables::manifest::{Axes, SweepKind};
use crate::tables::summary::{GroupRow, Grouping, PairRow};
use crate::tables::Table;

/// What the runner needs of an experiment of either kind.
pub trait SweepExperiment: Sync {
    type Grid: SweepGrid;
    fn name(&self) -> &str;
    fn seed(&self) -> u64;
    fn origin(&self) -> &str;
    fn resolved_json(&self) -> serde_json::Value;
    fn config_hash(&self) -> String;
    fn source(&self) -> &crate::history::source::Source;
    /// `histories.flags_file`: the flags an external flagger gave, when there are.
    fn flags_file(&self) -> Option<&std::path::Path>;
    fn cost(&self) -> crate::cost::CostModel;
    fn output_dir(&self) -> &std::path::Path;
    /// (parquet, csv)
    fn formats(&self) -> (bool, bool);
    fn grid(&self, histories: usize) -> Self::Grid;
    /// `compare.baseline`: the strategy (its index) the sweep's `compare` table is against.
    fn baseline(&self) -> Option<usize>;
    /// Checks the loaded histories (each one's name and whether it records usage) before
    /// anything runs or is written.
    fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), crate::error::InputError>;
}

/// A kind of sweep, by its grid.
pub trait SweepGrid: Grouping<Self::Row> + Sized + Sync + Send + 'static {
    type Row: Copy + Send + Sync + 'static;
    type Scratch: Default + Send;
    const KIND: SweepKind;

    fn histories(&self) -> usize;
    /// Rows (cells or sessions) of one history.
    fn rows_per_history(&self) -> usize;
    /// Replicates per history: the finest piece a history is split into (a replicate's rows
    /// are consecutive and depend on (history, replicate) only).
    fn replicates(&self) -> u32;
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
    fn rows_table() -> Table<Self, Self::Row>;
    fn summary_table(rows: &Table<Self, Self::Row>) -> Table<Self, GroupRow>;
    fn pairs_table() -> Table<Self, PairRow>;
    /// The strategies' labels, in grid order.
    fn labels(&self) -> &[String];
    /// The strategies, in grid order.
    fn strategy_list(&self) -> &[crate::strategy::Strategy];
    /// The axes, for the manifest.
    fn axes(&self) -> Axes;

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
    fn replicates(&self) -> u32 {
        self.replicates
    }
    fn evaluate_replicates(
        &self,
        index: usize,
        history: &CostedHistory,
        replicates: std::ops::Range<u32>,
        scratch: &mut cells::Scratch,
        out: &mut Vec<CellRow>,
    ) {
        cells::evaluate_replicates(self, index, history, replicates, scratch, out)
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
    fn labels(&self) -> &[String] {
        &self.labels
    }
    fn strategy_list(&self) -> &[crate::strategy::Strategy] {
        &self.strategies
    }
    fn axes(&self) -> Axes {
        Axes {
            histories: self.histories as u64,
            replicates: u64::from(self.replicates),
            false_negative: self.false_negatives(),
            false_positive: self.false_positives(),
            noise: self.noise_labels.clone(),
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
    fn replicates(&self) -> u32 {
        self.replicates
    }
    fn evaluate_replicates(
        &self,
        index: usize,
        history: &CostedHistory,
        replicates: std::ops::Range<u32>,
        scratch: &mut sessions::Scratch,
        out: &mut Vec<SessionRow>,
    ) {
        sessions::evaluate_replicates(self, index, history, replicates, scratch, out)
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
    fn labels(&self) -> &[String] {
        &self.labels
    }
    fn strategy_list(&self) -> &[crate::strategy::Strategy] {
        &self.strategies
    }
    fn axes(&self) -> Axes {
        Axes {
            histories: self.histories as u64,
            replicates: u64::from(self.replicates),
            false_negative: self.false_negatives(),
            false_positive: self.false_positives(),
            noise: self.noise_labels.clone(),
            strategies: self.labels.clone(),
            windows: self.windows.clone(),
            ratios: self.ratios.clone(),
            note_rates: self.note_rates.clone(),
            ..Axes::default()
        }
    }
}

/// Both kinds of experiment carry the same fields the runner reads.
macro_rules! sweep_experiment {
    ($experiment:ty, $grid:ty) => {
        impl SweepExperiment for $experiment {
            type Grid = $grid;
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
                <$experiment>::resolved_json(self)
            }
            fn config_hash(&self) -> String {
                <$experiment>::config_hash(self)
            }
            fn source(&self) -> &crate::history::source::Source {
                &self.source
            }
            fn flags_file(&self) -> Option<&std::path::Path> {
                self.file
                    .histories
                    .flags_file
                    .as_deref()
                    .map(std::path::Path::new)
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
            fn grid(&self, histories: usize) -> $grid {
                <$grid>::new(self, histories)
            }
            fn baseline(&self) -> Option<usize> {
                self.baseline
            }
            fn check_histories(
                &self,
                recorded: &[(&str, bool)],
            ) -> Result<(), crate::error::InputError> {
                <$experiment>::check_histories(self, recorded)
            }
        }
    };
}

sweep_experiment!(crate::experiment::Experiment, Grid);
sweep_experiment!(crate::experiment::SessionExperiment, SessionGrid);
