//! Running a sweep of either kind: histories in, tables and a manifest out.
//!
//! Histories are evaluated in parallel in chunks of bounded size. After each chunk its rows go
//! to a part file, its groups into the running summary, and a checkpoint records the progress,
//! so memory stays bounded by the chunk and a killed run can `--resume` where it stopped. At
//! the end the tables are written from the parts, their row counts checked against the grid,
//! the report stage (charts, report) runs on the staged tables, and only then is everything
//! published, the manifest last; the parts stay until the manifest is in place. The output is
//! the same whatever the thread count, the chunking, the sharding or an interruption.

use super::checkpoint::{check_staging, prepare_staging, RunKey};
use super::chunks::ChunkLoop;
use super::estimate::{Estimate, EstimateInput};
use super::external::FirstFailure;
use super::folder::Folder;
use super::prepare::{RunHistories, RunLayout};
use super::publish::Publish;
use crate::error::refuse;
use crate::error::{Error, Result};
use crate::formats::TableFormat;
use crate::history::source::HistorySource;
use crate::strategy::external::{program_files, watch};
use crate::tables::manifest::SweepKind;
use crate::tables::summary;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use super::checkpoint::ShardState;
pub use super::kind::{SweepExperiment, SweepGrid};
pub use super::options::{CellsOutput, Progress, RunOptions, Silent, Stage, DEFAULT_CHUNK_CELLS};

#[derive(Debug, Clone)]
pub struct RunReport {
    pub kind: SweepKind,
    pub dir: PathBuf,
    /// Rows (cells or sessions) this run computed.
    pub rows: u64,
    pub histories: usize,
    pub wall: Duration,
    pub files: Vec<PathBuf>,
    /// Chunks taken over from an interrupted run.
    pub resumed_chunks: usize,
    /// The figures worked out before the run.
    pub estimate: Estimate,
    /// The flagger's confusion matrix, when the histories carry flags of their own.
    pub flagger: Option<crate::flags::Confusion>,
    /// The history or transcript files left out whole (`--skip-bad`).
    pub left_out: Vec<crate::history::batch::LeftOut>,
}

/// Runs the sweep (or one shard of it) and publishes its tables into the experiment's folder.
pub fn run<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    thread_pool(opts.threads)?.install(|| run_in_pool(exp, opts))
}

/// A pool of `threads` workers (`None`: one per core).
pub(crate) fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    match threads {
        Some(0) => refuse!("--threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build(),
        None => rayon::ThreadPoolBuilder::new().build(),
    }
    .map_err(|e| Error::Refused(format!("cannot start worker threads: {e}")))
}

/// The run, step by step: what it reads and will write, its estimate, then (unless a dry run)
/// the chunks staged and the tables published.
fn run_in_pool<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let histories = RunHistories::open(exp, opts)?;
    let layout = RunLayout::new(exp, opts, &histories)?;
    let estimate = estimate(exp, opts, &histories, &layout)?;
    let key = run_key(exp, opts, &histories, &layout);
    let report = |dir: PathBuf, rows, wall, files, resumed_chunks| RunReport {
        kind: E::Grid::KIND,
        dir,
        rows,
        histories: histories.range.len(),
        wall,
        files,
        resumed_chunks,
        estimate: estimate.clone(),
        flagger: histories.flagger.clone(),
        left_out: histories.left_out.clone(),
    };
    if opts.dry_run {
        dry_run(exp, opts, &histories, &layout, &key)?;
        let dir = exp.output_dir().to_path_buf();
        return Ok(report(dir, 0, started.elapsed(), Vec::new(), 0));
    }
    let folder = Folder::open(exp.output_dir(), opts.shard.map(|s| s.index), opts.force)?;
    let staging = folder.staging();
    let empty = summary::empty(&layout.rows_table, &layout.grid);
    let mut checkpoint = prepare_staging(&staging, key, empty, opts.resume)?;
    let resumed_chunks = checkpoint.chunks_done;
    let chunks = ChunkLoop {
        exp,
        opts,
        layout: &layout,
        histories: &histories,
        staging: &staging,
    };
    let staged = chunks.stage(&mut checkpoint)?;
    check_staged(exp, &layout, &staging)?;
    let wall = started.elapsed();
    let files = Publish {
        exp,
        opts,
        layout: &layout,
        histories: &histories,
        folder: &folder,
        staging: &staging,
    }
    .publish(staged, checkpoint.summary, wall)?;
    Ok(report(
        folder.dir.clone(),
        layout.shard_rows,
        wall,
        files,
        resumed_chunks,
    ))
}

/// Works out the run's figures, tells the progress, and refuses a run that would not fit the
/// machine's memory or the folder's disk.
fn estimate<E: SweepExperiment>(
    exp: &E,
    opts: &RunOptions,
    histories: &RunHistories,
    layout: &RunLayout<E::Grid>,
) -> Result<Estimate> {
    let estimate = Estimate::new(EstimateInput {
        grid: &layout.grid,
        table: &layout.rows_table,
        plan: &layout.plan,
        source: &histories.source,
        histories: histories.range.len(),
        rows: layout.shard_rows,
        table_rows: if layout.wanted {
            layout.expected_rows
        } else {
            0
        },
        formats: layout.formats,
        rows_formats: layout.rows_formats,
        threads: rayon::current_num_threads(),
        charts: opts.stage.is_some()
            && opts.shard.is_none()
            && layout.formats.has(TableFormat::Parquet),
    });
    let checked = estimate.check(&opts.limits, exp.output_dir());
    opts.progress.estimate(
        &estimate,
        checked.as_ref().map_or(&[][..], |n| n.as_slice()),
    );
    checked?;
    Ok(estimate)
}

/// The settings a resumed run must match.
fn run_key<E: SweepExperiment>(
    exp: &E,
    opts: &RunOptions,
    histories: &RunHistories,
    layout: &RunLayout<E::Grid>,
) -> RunKey {
    RunKey {
        kind: E::Grid::KIND,
        config_hash: exp.config_hash(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        chunk_cells: opts.chunk_cells,
        cells: opts.cells,
        formats: layout.rows_formats,
        shard: opts.shard.map(|s| (s.index, s.count)),
        histories: histories.source.len(),
        chunks_total: layout.plan.chunks(),
        programs: layout.programs.clone(),
    }
}

/// Everything the run checks before its first cell, reading only: the folder (ours, not in
/// use, no link for its lock), its staging folder and what resuming would need, and the
/// answers the `llm` summarisers would read.
fn dry_run<E: SweepExperiment>(
    exp: &E,
    opts: &RunOptions,
    histories: &RunHistories,
    layout: &RunLayout<E::Grid>,
    key: &RunKey,
) -> Result<()> {
    let dir = exp.output_dir();
    let shard_index = opts.shard.map(|s| s.index);
    Folder::check(dir, shard_index, opts.force)?;
    let empty = summary::empty(&layout.rows_table, &layout.grid);
    check_staging(
        &super::folder::staging_path(dir, shard_index),
        key,
        &empty,
        opts.resume,
    )?;
    check_llm_answers(exp, &layout.grid, &histories.source)
}

/// What must hold of the staged run before anything is published: the external strategies'
/// programs unchanged since the start, and no summary still to be written by a model.
fn check_staged<E: SweepExperiment>(
    exp: &E,
    layout: &RunLayout<E::Grid>,
    staging: &std::path::Path,
) -> Result<()> {
    if program_files(layout.grid.strategy_list())? != layout.programs {
        refuse!(
            "an external strategy's program file changed while the run was going: its rows mix two versions; nothing was published, run again"
        );
    }
    // Summaries a model must still write: the rows rest on stand-ins, so nothing is published.
    let missing = crate::summariser::Missing::of(layout.grid.strategy_list());
    if !missing.is_empty() {
        // Not resumable either: the checkpoint's figures rest on the stand-ins.
        let _ = super::folder::remove_staging(staging, None);
        return Err(crate::error::InputError::Invalid(missing.error(exp.origin())).into());
    }
    Ok(())
}

/// What the `llm` summarisers of an experiment still need: every history evaluated, nothing
/// written (`ctxlab summaries export`).
pub fn missing_summaries<E: SweepExperiment>(
    exp: &E,
    threads: Option<usize>,
) -> Result<crate::summariser::Missing> {
    thread_pool(threads)?.install(|| {
        let source = HistorySource::open(exp.source(), exp.flags_file())?;
        exp.check_histories(&source.recorded())?;
        let grid = exp.grid(source.len());
        needed_summaries(&grid, &source, exp.cost())
    })
}

/// Every history evaluated, nothing kept: what the `llm` summarisers of `grid` still need
/// (an external strategy that fails stops it, as it stops a run).
fn needed_summaries<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
) -> Result<crate::summariser::Missing> {
    let failure = FirstFailure::default();
    source.evaluate(
        0..source.len(),
        cost,
        |i, costed, scratch: &mut G::Scratch| {
            let (rows, failed) = watch(|| {
                let mut rows = Vec::new();
                grid.evaluate_history(i, costed, scratch, &mut rows);
                rows
            });
            if let Some(f) = failed {
                failure.record(i, grid.failure_message(i, &costed.name, &rows, &f));
            }
        },
    )?;
    if let Some(e) = failure.error() {
        return Err(e);
    }
    Ok(crate::summariser::Missing::of(grid.strategy_list()))
}

/// What a dry run checks of the `llm` summarisers: the answers the run would read from their
/// caches are all there (the run would stop for the first one missing). Every history is
/// evaluated to find them, nothing is written. A summariser with an endpoint (`url=`) asks for
/// what its cache lacks as the run goes, so a grid with one is not checked (its evaluation
/// would ask).
fn check_llm_answers<E: SweepExperiment>(
    exp: &E,
    grid: &E::Grid,
    source: &HistorySource,
) -> Result<()> {
    use crate::summariser::Summariser;
    // Per `llm` summariser: whether it has an endpoint.
    let asking: Vec<bool> = grid
        .strategy_list()
        .iter()
        .filter_map(|s| match s.summariser() {
            Some(Summariser::Llm(l)) => Some(l.url.is_some()),
            _ => None,
        })
        .collect();
    if asking.is_empty() || asking.contains(&true) {
        return Ok(());
    }
    let missing = needed_summaries(grid, source, exp.cost())?;
    if missing.is_empty() {
        return Ok(());
    }
    Err(crate::error::InputError::Invalid(missing.error(exp.origin())).into())
}
