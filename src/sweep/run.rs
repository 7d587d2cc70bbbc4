//! Running a sweep of either kind: histories in, tables and a manifest out.
//!
//! Histories are evaluated in parallel in chunks of bounded size. After each chunk its rows go
//! to a part file, its groups into the running summary, and a checkpoint records the progress,
//! so memory stays bounded by the chunk and a killed run can `--resume` where it stopped. At
//! the end the tables are written from the parts, their row counts checked against the grid,
//! the report stage (charts, report) runs on the staged tables, and only then is everything
//! published, the manifest last; the parts stay until the manifest is in place. The output is
//! the same whatever the thread count, the chunking, the sharding or an interruption.

use super::estimate::{Estimate, EstimateInput, Limits};
use super::fault::{self, Fault};
use super::folder::Folder;
use super::kind::SweepGrid;
use super::plan::{Chunk, Plan};
use super::rows_writer::RowsWriter;
use super::shard::Shard;
use crate::error::{At, Error, Result};
use crate::history::source::{HistorySource, Source};
use crate::history::CostedHistory;
use crate::refuse;
use crate::stats::Summary;
use crate::tables::manifest::{Manifest, SweepKind, MANIFEST};
use crate::tables::summary::{self, GroupRow};
use crate::tables::{Names, Table};
use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Rows per chunk by default: enough to keep every core busy, few enough to bound memory.
pub const DEFAULT_CHUNK_CELLS: usize = 1 << 18;

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
    fn keeps(self, history: usize) -> bool {
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
            stage: None,
            fault: None,
        }
    }
}

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
}

/// What the runner needs of an experiment of either kind.
pub trait SweepExperiment: Sync {
    type Grid: SweepGrid;
    fn name(&self) -> &str;
    fn seed(&self) -> u64;
    fn origin(&self) -> &str;
    fn resolved_json(&self) -> serde_json::Value;
    fn config_hash(&self) -> String;
    fn source(&self) -> &Source;
    /// `histories.flags_file`: the flags an external flagger gave, when there are.
    fn flags_file(&self) -> Option<&Path>;
    fn cost(&self) -> crate::cost::CostModel;
    fn output_dir(&self) -> &Path;
    /// (parquet, csv)
    fn formats(&self) -> (bool, bool);
    fn grid(&self, histories: usize) -> Self::Grid;
    /// `compare.baseline`: the strategy (its index) the sweep's `compare` table is against.
    fn baseline(&self) -> Option<usize>;
    /// Checks the loaded histories (each one's name and whether it records usage) before
    /// anything runs or is written.
    fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), crate::error::InputError>;
}

/// Everything that changes the rows or the files of a run: a resumed run must match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RunKey {
    kind: SweepKind,
    config_hash: String,
    version: String,
    chunk_cells: usize,
    cells: CellsOutput,
    parquet: bool,
    csv: bool,
    shard: Option<(usize, usize)>,
    histories: usize,
    chunks_total: usize,
}

impl RunKey {
    /// The first difference from `other`, as `(what, recorded, now)`.
    fn difference(&self, other: &RunKey) -> Option<(&'static str, String, String)> {
        let lower = |c: CellsOutput| format!("{c:?}").to_lowercase();
        // The settings given on the command line first, the experiment's hash (which also
        // covers output.formats) after them, so the message names what changed.
        [
            (
                "kind of sweep",
                format!("{:?}", other.kind),
                format!("{:?}", self.kind),
            ),
            (
                "ctxlab version",
                other.version.clone(),
                self.version.clone(),
            ),
            (
                "--chunk-cells",
                other.chunk_cells.to_string(),
                self.chunk_cells.to_string(),
            ),
            ("--cells", lower(other.cells), lower(self.cells)),
            ("output.formats", formats(other), formats(self)),
            ("--shard", shard_text(other.shard), shard_text(self.shard)),
            (
                "number of histories",
                other.histories.to_string(),
                self.histories.to_string(),
            ),
            (
                "experiment (config hash)",
                other.config_hash.clone(),
                self.config_hash.clone(),
            ),
            (
                "number of chunks",
                other.chunks_total.to_string(),
                self.chunks_total.to_string(),
            ),
        ]
        .into_iter()
        .find(|(_, was, now)| was != now)
    }
}

fn formats(k: &RunKey) -> String {
    match (k.parquet, k.csv) {
        (true, true) => "parquet, csv".into(),
        (true, false) => "parquet".into(),
        (false, true) => "csv".into(),
        (false, false) => "none".into(),
    }
}

fn shard_text(s: Option<(usize, usize)>) -> String {
    s.map(|(i, n)| format!("{i}/{n}"))
        .unwrap_or_else(|| "none".into())
}

/// Progress of a run, saved after every chunk in the staging folder.
#[derive(Debug, Serialize, Deserialize)]
struct Checkpoint {
    key: RunKey,
    chunks_done: usize,
    summary: Summary,
}

/// What one shard leaves for `ctxlab merge`: its summary and where it came from.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShardState {
    pub kind: SweepKind,
    pub config_hash: String,
    pub shard: (usize, usize),
    pub histories: (usize, usize),
    /// Rows (cells or sessions) of this shard.
    pub rows: u64,
    /// Rows of this shard's rows table (all of them, a sample, or none).
    pub rows_written: u64,
    pub wall_seconds: f64,
    pub config: serde_json::Value,
    pub summary: Summary,
    /// The files this shard published besides its state, relative to the folder.
    pub files: Vec<String>,
    /// Per file of `files`, its checksum (see `verify::checksum`): what `merge` checks the
    /// file's bytes against.
    #[serde(default)]
    pub checksums: Vec<(String, String)>,
    /// The flagger's confusion over every history (each shard loads them all), for the
    /// merged manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagger: Option<crate::flags::Confusion>,
}

/// Runs the sweep (or one shard of it) and publishes its tables into the experiment's folder.
pub fn run<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    thread_pool(opts.threads)?.install(|| run_in_pool(exp, opts))
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

/// A pool of `threads` workers (`None`: one per core).
pub(crate) fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    match threads {
        Some(0) => refuse!("--threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build(),
        None => rayon::ThreadPoolBuilder::new().build(),
    }
    .map_err(|e| Error::Refused(format!("cannot start worker threads: {e}")))
}

fn run_in_pool<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let source = HistorySource::open(exp.source(), exp.flags_file())?;
    exp.check_histories(&source.recorded())?;
    let flagger = crate::flags::Confusion::of_source(&source);
    let total = source.len();
    let range = match opts.shard {
        Some(s) => s.histories(total),
        None => 0..total,
    };
    let grid = exp.grid(total);
    check_size(&grid, total, opts.max_cells)?;
    let rows_table = E::Grid::rows_table();
    let (parquet, csv) = exp.formats();
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
    let wanted = opts.cells != CellsOutput::None && (parquet || csv);
    let estimate = Estimate::new(EstimateInput {
        grid: &grid,
        table: &rows_table,
        plan: &plan,
        source: &source,
        histories: range.len(),
        rows: shard_rows,
        table_rows: if wanted { expected_rows } else { 0 },
        formats: (parquet, csv),
        threads: rayon::current_num_threads(),
        charts: opts.stage.is_some() && opts.shard.is_none() && parquet,
    });
    let checked = estimate.check(&opts.limits, exp.output_dir());
    opts.progress.estimate(
        &estimate,
        checked.as_ref().map_or(&[][..], |n| n.as_slice()),
    );
    checked?;
    let key = RunKey {
        kind: E::Grid::KIND,
        config_hash: exp.config_hash(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        chunk_cells: opts.chunk_cells,
        cells: opts.cells,
        parquet,
        csv,
        shard: opts.shard.map(|s| (s.index, s.count)),
        histories: total,
        chunks_total: plan.chunks(),
    };
    let shard_index = opts.shard.map(|s| s.index);
    if opts.dry_run {
        // Everything the run checks before its first cell, reading only: the folder (ours, not
        // in use, no link for its lock), its staging folder and what resuming would need.
        let dir = exp.output_dir();
        Folder::check(dir, shard_index, opts.force)?;
        let empty = summary::empty(&rows_table, &grid);
        check_staging(
            &super::folder::staging_path(dir, shard_index),
            &key,
            &empty,
            opts.resume,
        )?;
        return Ok(RunReport {
            kind: E::Grid::KIND,
            dir: exp.output_dir().to_path_buf(),
            rows: 0,
            histories: range.len(),
            wall: started.elapsed(),
            files: Vec::new(),
            resumed_chunks: 0,
            estimate,
            flagger,
        });
    }
    let folder = Folder::open(exp.output_dir(), shard_index, opts.force)?;
    let staging = folder.staging();
    let empty = summary::empty(&rows_table, &grid);
    let mut checkpoint = prepare_staging(&staging, key, empty, opts.resume)?;
    let chunks_total = checkpoint.key.chunks_total;
    let resumed_chunks = checkpoint.chunks_done;

    let unit = match E::Grid::KIND {
        SweepKind::Cells => "cells",
        SweepKind::Sessions => "sessions",
    };
    opts.progress.start(shard_rows, unit);
    opts.progress.advance(plan.rows_before(resumed_chunks));
    // The rows tables are encoded on a thread of their own, within this scope.
    let (mut staged, fault) =
        std::thread::scope(|scope| -> Result<(Vec<String>, Option<&Fault>)> {
            let mut writer = match wanted {
                true => Some(RowsWriter::create(
                    scope,
                    &staging,
                    &grid,
                    &rows_table,
                    (parquet, csv),
                    range.start,
                )?),
                false => None,
            };
            let mut partials = checkpoint.summary.partials();
            let mut costed = CostedCache::default();
            let mut ran = 0;
            for k in 0..chunks_total {
                // A resumed run has the summary of its finished chunks, but the tables are rewritten
                // from the start: their rows are evaluated again (when there are tables to write).
                let finished = k < resumed_chunks;
                if finished && writer.is_none() {
                    continue;
                }
                let chunk = plan.chunk(k);
                let progress = (!finished).then_some(opts.progress);
                let evaluated =
                    evaluate_chunk(&grid, &source, exp.cost(), &chunk, &mut costed, progress);
                for (i, name, pieces) in evaluated {
                    for rows in &pieces {
                        if !finished {
                            summary::gather(
                                &checkpoint.summary,
                                &mut partials,
                                &rows_table,
                                &grid,
                                rows,
                            );
                        }
                    }
                    if !finished && chunk.ends_history {
                        summary::close(&mut checkpoint.summary, &mut partials);
                    }
                    if let Some(w) = writer.as_mut() {
                        let mut name = name;
                        for rows in &pieces {
                            w.push(name.take(), rows, opts.cells.keeps(i))?;
                        }
                    }
                }
                if finished {
                    continue;
                }
                // A checkpoint only where a history ends: the summary of part of a history is
                // not saved, so a resumed run starts that history again.
                if chunk.ends_history {
                    checkpoint.chunks_done = k + 1;
                    write_json(&staging.join(CHECKPOINT), &checkpoint)?;
                }
                ran += 1;
                if opts.fault == Some(Fault::AfterChunks(ran)) {
                    std::process::abort();
                }
            }
            opts.progress.finish();

            let fault = opts.fault.as_ref();
            // The tables are written but their Parquet footer is not: "in the middle of assembly".
            fault::point(fault, Fault::Assembly);
            let staged = match writer {
                Some(w) => w.finish(expected_rows)?,
                None => Vec::new(),
            };
            Ok((staged, fault))
        })?;
    // Summaries a model must still write: the rows rest on stand-ins, so nothing is published.
    let missing = crate::summariser::Missing::of(grid.strategy_list());
    if !missing.is_empty() {
        // Not resumable either: the checkpoint's figures rest on the stand-ins.
        let _ = std::fs::remove_dir_all(&staging);
        return Err(crate::error::InputError::Invalid(missing.error(exp.origin())).into());
    }
    let wall = started.elapsed();
    let summary = checkpoint.summary;
    let stem = rows_table.stem;
    let files = match opts.shard {
        None => {
            Finish {
                staging: &staging,
                grid: &grid,
                rows_table: &rows_table,
                formats: (parquet, csv),
                stage: opts.stage,
                fault,
                flagger: flagger.clone(),
            }
            .summary_and_manifest(exp, &summary, wall, None, &mut staged, &[])?;
            let places: Vec<(String, String)> =
                staged.iter().map(|f| (f.clone(), f.clone())).collect();
            folder.publish(&staging, &places, (MANIFEST, MANIFEST), &[], &[], fault)?
        }
        Some(s) => {
            let part = format!("shard={}", s.index);
            // Shards publish their rows as a hive-partitioned dataset, one part per shard.
            let places: Vec<(String, String)> = staged
                .iter()
                .map(|f| {
                    let to = if f.ends_with(".parquet") {
                        format!("{stem}/{part}/part.parquet")
                    } else {
                        format!("{stem}-csv/{part}/part.csv")
                    };
                    (f.clone(), to)
                })
                .collect();
            let state_path = format!("shards/{part}.json");
            let previous: Vec<String> = std::fs::read_to_string(folder.dir.join(&state_path))
                .ok()
                .and_then(|t| serde_json::from_str::<ShardState>(&t).ok())
                .map(|s| s.files)
                .unwrap_or_default();
            let config_hash = exp.config_hash();
            let checksums = places
                .iter()
                .map(|(from, to)| {
                    let sum = super::verify::checksum(
                        &staging.join(from),
                        &config_hash,
                        (s.index, s.count),
                    )?;
                    Ok((to.clone(), sum))
                })
                .collect::<Result<Vec<_>>>()?;
            let state = ShardState {
                kind: E::Grid::KIND,
                config_hash,
                shard: (s.index, s.count),
                histories: (range.start, range.end),
                rows: shard_rows,
                rows_written: if staged.is_empty() { 0 } else { expected_rows },
                wall_seconds: wall.as_secs_f64(),
                config: exp.resolved_json(),
                summary,
                files: places.iter().map(|(_, to)| to.clone()).collect(),
                checksums,
                flagger: flagger.clone(),
            };
            write_json(&staging.join("state.json"), &state)?;
            folder.publish(
                &staging,
                &places,
                ("state.json", &state_path),
                &[],
                &previous,
                fault,
            )?
        }
    };
    Ok(RunReport {
        kind: E::Grid::KIND,
        dir: folder.dir.clone(),
        rows: shard_rows,
        histories: range.len(),
        wall,
        files,
        resumed_chunks,
        estimate,
        flagger,
    })
}

/// The costed history the chunks of a split history share, so it is costed once.
#[derive(Default)]
struct CostedCache(Option<(usize, String, CostedHistory)>);

/// The rows of one chunk: per history, its index, its name when the chunk starts it, and its
/// rows in order (in pieces).
type Evaluated<R> = Vec<(usize, Option<String>, Vec<Vec<R>>)>;

/// Evaluates a chunk in parallel: its histories, one per task, or (a chunk of part of one
/// history) runs of its replicates, one run per task, in order whatever the thread count.
fn evaluate_chunk<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
    chunk: &Chunk,
    cache: &mut CostedCache,
    progress: Option<&dyn Progress>,
) -> Evaluated<G::Row> {
    use rayon::prelude::*;
    if chunk.replicates == (0..grid.replicates()) {
        // Histories are costed (or generated) chunk by chunk: only the chunk's are in memory.
        let evaluated = source.evaluate(
            chunk.histories.clone(),
            cost,
            |i, costed, scratch: &mut G::Scratch, out| {
                out.reserve(grid.rows_per_history());
                grid.evaluate_history(i, costed, scratch, out);
                if let Some(p) = progress {
                    p.advance(out.len() as u64);
                }
            },
        );
        return chunk
            .histories
            .clone()
            .zip(evaluated)
            .map(|(i, (name, rows))| (i, Some(name), vec![rows]))
            .collect();
    }
    let i = chunk.histories.start;
    let (name, history) = match cache.0.take() {
        Some((at, name, history)) if at == i => (name, history),
        _ => source.costed(i, cost),
    };
    let per_replicate = grid.rows_per_history() / grid.replicates().max(1) as usize;
    // A few runs per worker, so the workers stay busy to the end of the chunk.
    let runs = (rayon::current_num_threads() * 4).max(1) as u32;
    let step = chunk.replicates.len().div_ceil(runs as usize).max(1) as u32;
    let starts: Vec<u32> = chunk.replicates.clone().step_by(step as usize).collect();
    let pieces: Vec<Vec<G::Row>> = starts
        .into_par_iter()
        .map_init(G::Scratch::default, |scratch, start| {
            let end = start.saturating_add(step).min(chunk.replicates.end);
            let mut out = Vec::with_capacity((end - start) as usize * per_replicate);
            grid.evaluate_replicates(i, &history, start..end, scratch, &mut out);
            if let Some(p) = progress {
                p.advance(out.len() as u64);
            }
            out
        })
        .collect();
    let first = chunk.starts_history.then(|| name.clone());
    if !chunk.ends_history {
        cache.0 = Some((i, name, history));
    }
    vec![(i, first, pieces)]
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
        let total = source.len();
        let grid = exp.grid(total);
        source.evaluate(
            0..total,
            exp.cost(),
            |i, costed, scratch: &mut <E::Grid as SweepGrid>::Scratch, out| {
                grid.evaluate_history(i, costed, scratch, out);
                out.clear();
            },
        );
        Ok(crate::summariser::Missing::of(grid.strategy_list()))
    })
}

const CHECKPOINT: &str = "checkpoint.json";

/// Makes the staging folder ready: refuses to touch an unfinished run unless resuming, refuses
/// to resume a run made with other settings, and returns the checkpoint to continue from.
fn prepare_staging(
    staging: &Path,
    key: RunKey,
    empty: Summary,
    resume: bool,
) -> Result<Checkpoint> {
    match check_staging(staging, &key, &empty, resume)? {
        Some(p) => Ok(p),
        None => {
            super::folder::clear_staging(staging)?;
            super::folder::make_staging(staging)?;
            Ok(Checkpoint {
                key,
                chunks_done: 0,
                summary: empty,
            })
        }
    }
}

/// What [`prepare_staging`] checks, reading only (a dry run checks this too): the
/// checkpoint to continue from, `None` to start over.
fn check_staging(
    staging: &Path,
    key: &RunKey,
    empty: &Summary,
    resume: bool,
) -> Result<Option<Checkpoint>> {
    let path = staging.join(CHECKPOINT);
    // A link planted for the staging folder (or its checkpoint) is refused before anything
    // in it is read or written, and so is a folder of that name ctxlab did not make.
    crate::links::refuse_link(staging)?;
    super::folder::refuse_foreign_staging(staging)?;
    crate::links::refuse_link(&path)?;
    let previous: Option<Checkpoint> = match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
            Error::Refused(format!(
                "{}: unreadable checkpoint ({e}); delete {} to start over",
                path.display(),
                staging.display()
            ))
        })?),
        Err(_) => None,
    };
    match previous {
        Some(p) if !resume => refuse!(
            "{} holds an unfinished run ({} of {} chunks done); run again with --resume to finish it, or delete that folder to start over",
            staging.display(),
            p.chunks_done,
            p.key.chunks_total
        ),
        Some(p) => {
            if let Some((what, was, now)) = key.difference(&p.key) {
                refuse!(
                    "{}: cannot resume: the unfinished run has another {what} ({was}; this run: {now}); resume with the same settings, or delete that folder to start over",
                    staging.display()
                );
            }
            if let Err(e) = p.summary.check_format() {
                refuse!("{}: the unfinished run cannot be resumed: {e}; delete {} to start over", path.display(), staging.display());
            }
            if !p.summary.same_shape(empty) {
                refuse!("{}: the checkpoint's summary does not fit this grid; delete that folder to start over", path.display());
            }
            Ok(Some(p))
        }
        None => Ok(None),
    }
}

/// Writes JSON through a temporary file and a rename, so a reader never sees half of it.
/// Manifests are indented for people; checkpoints and shard states, which carry the whole
/// summary after every chunk, are compact.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let pretty = path.file_name().is_some_and(|n| n == MANIFEST);
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .at(path, "encode")?
        + "\n";
    crate::links::write(&tmp, text.as_bytes())?;
    std::fs::rename(&tmp, path).at(path, "write")
}

/// The summary tables, the report stage and the manifest of a finished (or merged) run, all
/// in the staging folder.
pub(crate) struct Finish<'a, G: SweepGrid> {
    pub staging: &'a Path,
    pub grid: &'a G,
    pub rows_table: &'a Table<G, G::Row>,
    pub formats: (bool, bool),
    pub stage: Option<Stage<'a>>,
    pub fault: Option<&'a Fault>,
    /// The flagger's confusion matrix, for the manifest.
    pub flagger: Option<crate::flags::Confusion>,
}

impl<G: SweepGrid> Finish<'_, G> {
    /// Writes the summary tables, runs the report stage, and writes the manifest, which lists
    /// `staged` (the summary tables and what the stage drew are appended to it) and `in_place`
    /// (files of the run already published, such as the shards' parts). The caller publishes.
    pub fn summary_and_manifest<E: SweepExperiment>(
        &self,
        exp: &E,
        summary: &Summary,
        wall: Duration,
        shards: Option<usize>,
        staged: &mut Vec<String>,
        in_place: &[String],
    ) -> Result<()> {
        let table = G::summary_table(self.rows_table);
        let rows: Vec<GroupRow> = summary::group_rows(summary);
        staged.extend(write_table(
            self.staging,
            &table,
            self.grid,
            &rows,
            self.formats,
        )?);
        // Every strategy against every other, cell by cell; `compare` against the baseline.
        if self.grid.strategies() > 1 {
            let all = summary::pair_rows(
                summary,
                self.rows_table,
                self.grid,
                self.grid.labels(),
                None,
            );
            let pairs = G::pairs_table();
            staged.extend(write_table(
                self.staging,
                &pairs,
                self.grid,
                &all,
                self.formats,
            )?);
            if let Some(b) = exp.baseline() {
                let mut compare = G::pairs_table();
                compare.stem = "compare";
                let chosen: Vec<_> = all.into_iter().filter(|r| r.baseline == b).collect();
                staged.extend(write_table(
                    self.staging,
                    &compare,
                    self.grid,
                    &chosen,
                    self.formats,
                )?);
            }
        }
        if rows.len() != self.grid.groups() {
            refuse!(
                "the summary has {} groups where the grid has {}",
                rows.len(),
                self.grid.groups()
            );
        }
        let mut manifest = Manifest {
            kind: G::KIND,
            name: exp.name().to_string(),
            seed: exp.seed(),
            config: exp.resolved_json(),
            config_hash: exp.config_hash(),
            source: exp.origin().to_string(),
            rows: self.grid.rows(),
            histories: self.grid.histories() as u64,
            shards,
            grid: self.grid.axes(),
            files: Vec::new(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            wall_seconds: wall.as_secs_f64(),
            flagger: self.flagger.clone(),
        };
        // The report stage reads the staged tables and this draft; the manifest is rewritten
        // with the files it drew.
        manifest.files = staged.iter().chain(in_place).cloned().collect();
        write_json(&self.staging.join(MANIFEST), &manifest)?;
        if let Some(stage) = self.stage {
            for f in stage(self.staging)? {
                staged.push(f.to_string_lossy().into_owned());
            }
            fault::point(self.fault, Fault::Charts);
        }
        manifest.files = staged.iter().chain(in_place).cloned().collect();
        write_json(&self.staging.join(MANIFEST), &manifest)?;
        Ok(())
    }
}

/// Writes a small table (a summary, the pairs) whole, in the formats asked for, into
/// `folder`; returns the file names written.
pub(crate) fn write_table<G: Sync, R: Sync>(
    folder: &Path,
    table: &Table<G, R>,
    grid: &G,
    rows: &[R],
    (parquet, csv): (bool, bool),
) -> Result<Vec<String>> {
    let mut written = Vec::new();
    if parquet {
        let path = folder.join(table.parquet_name());
        let mut df = table.frame(grid, Names::NONE, rows).at(&path, "build")?;
        write_parquet(&path, &mut df)?;
        written.push(table.parquet_name());
    }
    if csv {
        let path = folder.join(table.csv_name());
        let mut w = super::rows_writer::create_csv(&path, table)?;
        table
            .write_csv(grid, Names::NONE, rows, &mut w, &mut Vec::new())
            .at(&path, "write")?;
        w.flush().at(&path, "write")?;
        written.push(table.csv_name());
    }
    Ok(written)
}

/// Writes a whole DataFrame as one Parquet file.
pub fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    let file = crate::links::create(path)?;
    ParquetWriter::new(BufWriter::new(file))
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .at(path, "write Parquet")?;
    Ok(())
}
