//! What a run works out before its first cell, reading only: the histories it reads and the
//! shape of what it will write.

use super::kind::{SweepExperiment, SweepGrid};
use super::options::{CellsOutput, RunOptions};
use super::plan::Plan;
use crate::error::refuse;
use crate::error::Result;
use crate::flags::Confusion;
use crate::formats::Formats;
use crate::history::batch::LeftOut;
use crate::history::source::HistorySource;
use crate::strategy::external::{program_files, ProgramFile};
use crate::tables::Table;
use std::ops::Range;

/// The histories a run reads, and what reading them found.
pub(super) struct RunHistories {
    pub(super) source: HistorySource,
    /// The history or transcript files left out whole (`--skip-bad`).
    pub(super) left_out: Vec<LeftOut>,
    /// The flagger's confusion matrix, when the histories carry flags of their own.
    pub(super) flagger: Option<Confusion>,
    /// The histories of this run: a shard's, or all of them.
    pub(super) range: Range<usize>,
}

impl RunHistories {
    /// Opens and checks the experiment's histories and picks this run's share of them.
    pub(super) fn open<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<Self> {
        let (source, left_out) =
            HistorySource::open_batch(exp.source(), exp.flags_file(), opts.bad_files)?;
        exp.check_histories(&source.recorded())?;
        let flagger = Confusion::of_source(&source);
        let total = source.len();
        let range = match opts.shard {
            Some(s) => s.histories(total),
            None => 0..total,
        };
        Ok(RunHistories {
            source,
            left_out,
            flagger,
            range,
        })
    }
}

/// What a run will write, worked out before its first cell: its grid and tables, its chunks
/// and how many rows it computes and keeps.
pub(super) struct RunLayout<G: SweepGrid> {
    pub(super) grid: G,
    pub(super) rows_table: Table<G, G::Row>,
    /// The events table (a session sweep's compactions), for a kind that writes one.
    pub(super) events_table: Option<Table<G, G::Event>>,
    /// The small tables' formats, and the rows table's.
    pub(super) formats: Formats,
    pub(super) rows_formats: Formats,
    pub(super) plan: Plan,
    /// Rows (cells or sessions) this run computes.
    pub(super) shard_rows: u64,
    /// Rows its rows table keeps (all of them, a sample, or none).
    pub(super) expected_rows: u64,
    /// Whether a rows table is written at all.
    pub(super) wanted: bool,
    /// The programs of external strategies, hashed before the first cell: a resumed run must
    /// run the same ones, and they must not change while it runs.
    pub(super) programs: Vec<ProgramFile>,
}

impl<G: SweepGrid> RunLayout<G> {
    /// The layout of `exp`'s run over `histories`; refuses a sweep too large to run.
    pub(super) fn new<E: SweepExperiment<Grid = G>>(
        exp: &E,
        opts: &RunOptions,
        histories: &RunHistories,
    ) -> Result<Self> {
        let total = histories.source.len();
        let range = histories.range.clone();
        let grid = exp.grid(total);
        check_size(&grid, total, opts.max_cells)?;
        let programs = program_files(grid.strategy_list())?;
        let rows_formats = exp.rows_formats();
        let per_replicate = grid.rows_per_history() / (grid.replicates().max(1) as usize);
        let plan = Plan::new(
            range.clone(),
            grid.replicates(),
            per_replicate,
            opts.chunk_cells,
        );
        let shard_rows = (range.len() * grid.rows_per_history()) as u64;
        let expected_rows = (range.clone()).filter(|&i| opts.cells.keeps(i)).count() as u64
            * grid.rows_per_history() as u64;
        let wanted = opts.cells != CellsOutput::None && !rows_formats.is_empty();
        Ok(RunLayout {
            grid,
            rows_table: G::rows_table(),
            events_table: G::events_table(),
            formats: exp.formats(),
            rows_formats,
            plan,
            shard_rows,
            expected_rows,
            wanted,
            programs,
        })
    }
}

/// Refuses, before the folder is touched, a sweep whose cells overflow `u64` or exceed
/// `--max-cells` (the axes themselves were bounded when the experiment was read).
fn check_size<G: SweepGrid>(grid: &G, histories: usize, max_cells: u64) -> Result<()> {
    let per_history = grid.rows_per_history() as u64;
    match (histories as u64).checked_mul(per_history) {
        Some(rows) if rows <= max_cells => Ok(()),
        rows => refuse!(
            "the sweep has {} cells ({histories} histories × {per_history} per history), more than --max-cells {max_cells}; pass a larger --max-cells to run it anyway, or shrink the axes",
            rows.map_or("more than 2^64 − 1".to_string(), |r| r.to_string())
        ),
    }
}
