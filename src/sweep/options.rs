//! How a run is asked for: the command line's settings ([`RunOptions`]) and what the runner
//! reports as it goes ([`Progress`]).

use super::estimate::{Estimate, Limits};
use super::fault::Fault;
use super::shard::Shard;
use crate::error::Result;
use crate::history::batch::BadFiles;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Rows per chunk by default: enough to keep every core busy, few enough to bound memory.
pub const DEFAULT_CHUNK_CELLS: usize = 1 << 16;

/// Which rows go into the cells (or sessions) table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CellsOutput {
    /// No rows table: only the summary (and charts).
    None,
    /// The rows of every 100th history (indices 0, 100, 200, ...).
    Sample,
    /// Every row.
    #[default]
    All,
}

impl CellsOutput {
    pub(crate) fn keeps(self, history: usize) -> bool {
        match self {
            CellsOutput::All => true,
            CellsOutput::Sample => history.is_multiple_of(100),
            CellsOutput::None => false,
        }
    }
}

/// Told how far a run has come; the CLI draws a bar or prints lines, the library prints
/// nothing.
pub trait Progress: Sync {
    /// The sweep's figures, before it runs (and before it is refused for them), with notes on
    /// the limits that could not be checked.
    fn estimate(&self, _estimate: &Estimate, _notes: &[String]) {}
    fn start(&self, _total: u64, _unit: &str) {}
    fn advance(&self, _rows: u64) {}
    fn finish(&self) {}
}

/// No progress reports.
pub struct Silent;
impl Progress for Silent {}

/// The report stage: given the staging folder with the summary and a draft manifest, it draws
/// what it draws there and returns the files it wrote (relative to that folder).
pub type Stage<'a> = &'a (dyn Fn(&Path) -> Result<Vec<PathBuf>> + Sync);

pub struct RunOptions<'a> {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    pub cells: CellsOutput,
    pub shard: Option<Shard>,
    /// Finish an interrupted run instead of refusing to touch it.
    pub resume: bool,
    /// Write into a folder that holds files ctxlab did not write.
    pub force: bool,
    pub chunk_cells: usize,
    /// The most cells (or sessions) a run may have (`--max-cells`).
    pub max_cells: u64,
    /// The memory and disk the estimate is checked against (`--max-memory`, `--max-disk`).
    pub limits: Limits,
    /// Estimate and check, then stop: nothing is written (`--dry-run`).
    pub dry_run: bool,
    pub progress: &'a dyn Progress,
    /// What a bad history or transcript file does: refuse the run (naming every one) or, with
    /// `--skip-bad`, be left out whole (listed in the manifest).
    pub bad_files: BadFiles,
    /// Charts and report, drawn before publishing (`None`: tables only).
    pub stage: Option<Stage<'a>>,
    pub fault: Option<Fault>,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            threads: None,
            cells: CellsOutput::All,
            shard: None,
            resume: false,
            force: false,
            chunk_cells: DEFAULT_CHUNK_CELLS,
            max_cells: crate::experiment::limits::DEFAULT_MAX_CELLS,
            limits: Limits::default(),
            dry_run: false,
            progress: &Silent,
            bad_files: BadFiles::Refuse,
            stage: None,
            fault: None,
        }
    }
}
