//! Running a sweep: histories in, tables and a manifest out.
//!
//! Histories are evaluated in parallel in chunks of bounded size. After each chunk its rows are
//! written as a part file, added to the running summary, and a checkpoint records the progress,
//! so memory stays bounded by the chunk and a killed run can `--resume` where it stopped.
//! Everything is written into a staging folder and moved into place at the end (the manifest
//! last): an interrupted run never leaves a table that looks complete. The output is the same
//! whatever the thread count, the chunking, or an interruption.

use super::cell::{evaluate_history, CellRow, Scratch};
use super::config::{Experiment, Source};
use super::grid::Grid;
use super::shard::Shard;
use super::summary::Summary;
use super::tables::{self, CellsCsv, Names, ParquetSink};
use crate::error::InputError;
use crate::history::{self, generate, CostedHistory, History};
use anyhow::{bail, Context as _, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use polars::prelude::{ParquetReader, SerReader};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Cells per chunk by default: enough to keep every core busy, few enough to bound memory.
pub const DEFAULT_CHUNK_CELLS: usize = 1 << 18;

/// Which cells go into the cells table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CellsOutput {
    /// No cells table: only the summary (and charts).
    None,
    /// The cells of every 100th history (indices 0, 100, 200, ...).
    Sample,
    /// Every cell.
    #[default]
    All,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    /// No progress bar even on a terminal.
    pub quiet: bool,
    pub cells: CellsOutput,
    pub shard: Option<Shard>,
    /// Finish an interrupted run instead of refusing to touch it.
    pub resume: bool,
    pub chunk_cells: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: None,
            quiet: true,
            cells: CellsOutput::All,
            shard: None,
            resume: false,
            chunk_cells: DEFAULT_CHUNK_CELLS,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunReport {
    pub dir: PathBuf,
    pub cells: u64,
    pub histories: usize,
    pub wall: Duration,
    pub files: Vec<PathBuf>,
    /// Chunks taken over from an interrupted run.
    pub resumed_chunks: usize,
}

/// Progress of a run, saved after every chunk in the staging folder.
#[derive(Debug, Serialize, Deserialize)]
struct Checkpoint {
    config_hash: String,
    shard: Option<(usize, usize)>,
    chunks_total: usize,
    chunks_done: usize,
    summary: Summary,
}

/// What one shard leaves for `ctxlab merge`: its summary and where it came from.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShardState {
    pub config_hash: String,
    pub shard: (usize, usize),
    pub histories: (usize, usize),
    pub cells: u64,
    pub wall_seconds: f64,
    pub config: serde_json::Value,
    pub summary: Summary,
}

/// Where a run's histories come from. Generated histories are made on demand, one at a time,
/// so memory does not grow with their number; loaded ones are read (and checked) up front.
pub enum HistorySource {
    Generated(generate::GenerateConfig),
    Loaded(Vec<History>),
}

impl HistorySource {
    pub fn open(exp: &Experiment) -> Result<HistorySource, InputError> {
        HistorySource::from_source(&exp.source)
    }

    pub fn from_source(source: &Source) -> Result<HistorySource, InputError> {
        Ok(match source {
            Source::Generate(cfg) => HistorySource::Generated(cfg.clone()),
            Source::Files(_) | Source::Transcripts { .. } => {
                HistorySource::Loaded(load_source(source)?)
            }
        })
    }

    pub fn len(&self) -> usize {
        match self {
            HistorySource::Generated(cfg) => cfg.count as usize,
            HistorySource::Loaded(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Costs (or generates) histories `range` in parallel, one per task, and runs `evaluate`
    /// on each with a scratch reused by its worker; returns each history's name and rows, in
    /// history order whatever the thread count.
    pub fn evaluate<S, R, F>(
        &self,
        range: std::ops::Range<usize>,
        cost: crate::cost::CostModel,
        bar: &ProgressBar,
        evaluate: F,
    ) -> Vec<(String, Vec<R>)>
    where
        S: Default + Send,
        R: Send,
        F: Fn(usize, &CostedHistory, &mut S, &mut Vec<R>) + Sync + Send,
    {
        range
            .into_par_iter()
            .map_init(S::default, |scratch, i| {
                let (name, costed) = self.costed(i, cost);
                let mut out = Vec::new();
                evaluate(i, &costed, scratch, &mut out);
                bar.inc(out.len() as u64);
                (name, out)
            })
            .collect()
    }

    /// History `i`'s name and costs (its texts are dropped once costed).
    pub fn costed(&self, i: usize, cost: crate::cost::CostModel) -> (String, CostedHistory) {
        match self {
            HistorySource::Generated(cfg) => {
                let h = generate::generate_one(cfg, i as u32);
                (h.name.clone(), CostedHistory::new(&h, cost))
            }
            HistorySource::Loaded(all) => (all[i].name.clone(), CostedHistory::new(&all[i], cost)),
        }
    }
}

/// The experiment's histories, generated or loaded.
pub fn load_histories(exp: &Experiment) -> Result<Vec<History>, InputError> {
    load_source(&exp.source)
}

/// Histories from a checked source, generated or loaded; names must be unique across files.
pub fn load_source(source: &Source) -> Result<Vec<History>, InputError> {
    let histories = match source {
        Source::Generate(cfg) => generate::generate(cfg),
        Source::Transcripts {
            paths,
            format,
            labels,
        } => crate::import::load_files(paths, *format, labels)?,
        Source::Files(files) => {
            let mut all: Vec<History> = Vec::new();
            let mut origin: std::collections::HashMap<String, PathBuf> = Default::default();
            for f in files {
                for h in history::load_jsonl(f)? {
                    if let Some(first) = origin.insert(h.name.clone(), f.clone()) {
                        return Err(InputError::File {
                            path: f.clone(),
                            message: format!(
                                "history {:?} is also in {}; history names must be unique across files",
                                h.name,
                                first.display()
                            ),
                        });
                    }
                    all.push(h);
                }
            }
            all
        }
    };
    Ok(histories)
}

/// Where a run's files go.
struct Layout {
    dir: PathBuf,
    shard: Option<Shard>,
}

impl Layout {
    fn staging(&self) -> PathBuf {
        match self.shard {
            None => self.dir.join(".partial"),
            // Outside `cells/`, so a half-written shard never shows up in the dataset.
            Some(s) => self.dir.join(format!(".partial-shard={}", s.index)),
        }
    }

    /// Final places of the staged files, in publishing order (the mark of completion last).
    fn destinations(&self) -> Vec<(&'static str, PathBuf)> {
        match self.shard {
            None => vec![
                ("cells.parquet", self.dir.join("cells.parquet")),
                ("cells.csv", self.dir.join("cells.csv")),
                ("summary.parquet", self.dir.join("summary.parquet")),
                ("summary.csv", self.dir.join("summary.csv")),
                ("manifest.json", self.dir.join("manifest.json")),
            ],
            Some(s) => {
                let part = format!("shard={}", s.index);
                vec![
                    (
                        "cells.parquet",
                        self.dir.join("cells").join(&part).join("part.parquet"),
                    ),
                    (
                        "cells.csv",
                        self.dir.join("cells-csv").join(&part).join("part.csv"),
                    ),
                    (
                        "state.json",
                        self.dir.join("shards").join(format!("{part}.json")),
                    ),
                ]
            }
        }
    }
}

/// Runs the sweep (or one shard of it) and writes its tables into `exp.output_dir`.
pub fn run(exp: &Experiment, opts: &RunOptions) -> Result<RunReport> {
    thread_pool(opts.threads)?.install(|| run_in_pool(exp, opts))
}

/// A pool of `threads` workers (`None`: one per core).
pub(crate) fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    Ok(match threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build()?,
        None => rayon::ThreadPoolBuilder::new().build()?,
    })
}

fn run_in_pool(exp: &Experiment, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let config_hash = exp.config_hash();
    let source = HistorySource::open(exp)?;
    let total = source.len();
    let range = match opts.shard {
        Some(s) => s.histories(total),
        None => 0..total,
    };
    let grid = Grid::new(exp, total);

    let layout = Layout {
        dir: exp.output_dir.clone(),
        shard: opts.shard,
    };
    let staging = layout.staging();
    let per_chunk = (opts.chunk_cells.max(1) / grid.cells_per_history().max(1)).max(1);
    let chunks_total = range.len().div_ceil(per_chunk);
    let shard_key = opts.shard.map(|s| (s.index, s.count));
    let mut checkpoint = prepare_staging(
        &staging,
        &config_hash,
        shard_key,
        chunks_total,
        &grid,
        opts.resume,
    )?;
    let resumed_chunks = checkpoint.chunks_done;

    let shard_cells = (range.len() * grid.cells_per_history()) as u64;
    let bar = progress_bar(shard_cells, opts.quiet, "cells");
    bar.inc(
        (resumed_chunks * per_chunk * grid.cells_per_history()).min(shard_cells as usize) as u64,
    );
    let abort_after = test_abort_hook();
    let mut rows: Vec<CellRow> = Vec::new();
    for k in resumed_chunks..chunks_total {
        let start = range.start + k * per_chunk;
        let end = (start + per_chunk).min(range.end);
        // Histories are costed (or generated) chunk by chunk: only the chunk's are in memory.
        let parts = source.evaluate(
            start..end,
            exp.cost,
            &bar,
            |i, costed, scratch: &mut Scratch, out| {
                out.reserve(grid.cells_per_history());
                evaluate_history(&grid, i, costed, scratch, out);
            },
        );
        rows.clear();
        let mut names = Vec::with_capacity(parts.len());
        for (name, p) in parts {
            checkpoint.summary.add(&grid, &p);
            let kept = match opts.cells {
                CellsOutput::All => true,
                CellsOutput::Sample => p.first().is_some_and(|r| r.history % 100 == 0),
                CellsOutput::None => false,
            };
            if kept {
                rows.extend_from_slice(&p);
            }
            names.push(name);
        }
        let names = Names {
            base: start,
            names: &names,
        };
        write_part(&staging, k, exp, &grid, names, &rows)?;
        checkpoint.chunks_done = k + 1;
        save_checkpoint(&staging, &checkpoint)?;
        if abort_after == Some(checkpoint.chunks_done - resumed_chunks) {
            // Test hook: die like `kill -9` right after a checkpoint.
            std::process::abort();
        }
    }
    bar.finish_and_clear();

    assemble_parts(&staging, chunks_total, exp, &grid, opts.cells)?;
    let summary = checkpoint.summary;
    let wall = started.elapsed();
    match opts.shard {
        None => write_summary_and_manifest(&staging, exp, &grid, &summary, wall, None)?,
        Some(s) => {
            let state = ShardState {
                config_hash: config_hash.clone(),
                shard: (s.index, s.count),
                histories: (range.start, range.end),
                cells: shard_cells,
                wall_seconds: wall.as_secs_f64(),
                config: exp.resolved_json(),
                summary,
            };
            write_json(&staging.join("state.json"), &state)?;
        }
    }
    std::fs::remove_file(staging.join("checkpoint.json")).ok();
    let mut files = publish(&staging, &layout.destinations())?;
    if opts.shard.is_none() {
        files.extend(draw_charts(exp, &layout.dir)?);
    }
    Ok(RunReport {
        dir: layout.dir,
        cells: shard_cells,
        histories: range.len(),
        wall,
        files,
        resumed_chunks,
    })
}

/// Makes the staging folder ready: refuses to touch an unfinished run unless resuming, and
/// returns the checkpoint to continue from.
fn prepare_staging(
    staging: &Path,
    config_hash: &str,
    shard: Option<(usize, usize)>,
    chunks_total: usize,
    grid: &Grid,
    resume: bool,
) -> Result<Checkpoint> {
    let fresh = Checkpoint {
        config_hash: config_hash.to_string(),
        shard,
        chunks_total,
        chunks_done: 0,
        summary: Summary::new(grid),
    };
    let path = staging.join("checkpoint.json");
    let previous: Option<Checkpoint> = match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).with_context(|| {
            format!(
                "{}: unreadable checkpoint; delete {} to start over",
                path.display(),
                staging.display()
            )
        })?),
        Err(_) => None,
    };
    match previous {
        Some(p) if !resume => bail!(
            "{} holds an unfinished run ({} of {} chunks done); run again with --resume to finish it, or delete that folder to start over",
            staging.display(),
            p.chunks_done,
            p.chunks_total
        ),
        Some(p) if p.config_hash != config_hash || p.shard != shard || p.chunks_total != chunks_total => bail!(
            "{} holds an unfinished run of a different experiment or shard (config hash {}, this one {}); it cannot be resumed with this one — delete that folder to start over",
            staging.display(),
            p.config_hash,
            config_hash
        ),
        Some(p) => Ok(p),
        None => {
            if staging.exists() {
                std::fs::remove_dir_all(staging).with_context(|| format!("{}: cannot clear", staging.display()))?;
            }
            std::fs::create_dir_all(staging).with_context(|| format!("{}: cannot create", staging.display()))?;
            Ok(fresh)
        }
    }
}

fn save_checkpoint(staging: &Path, c: &Checkpoint) -> Result<()> {
    write_json(&staging.join("checkpoint.json"), c)
}

/// Writes JSON through a temporary file and a rename, so a reader never sees half of it.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value)? + "\n";
    std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))
}

fn part_name(k: usize, ext: &str) -> String {
    format!("part-{k:06}.{ext}")
}

/// One chunk's rows as part files (overwritten when a resumed run redoes the chunk).
fn write_part(
    staging: &Path,
    k: usize,
    exp: &Experiment,
    grid: &Grid,
    names: Names,
    rows: &[CellRow],
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    if exp.parquet {
        let mut df = tables::cells_frame(grid, names, rows)?;
        tables::write_parquet(&staging.join(part_name(k, "parquet")), &mut df)?;
    }
    if exp.csv {
        let mut w = CellsCsv::create_headless(&staging.join(part_name(k, "csv")))?;
        w.write(grid, names, rows)?;
        w.finish()?;
    }
    Ok(())
}

/// Joins the part files into the final cells tables, in chunk order, and removes the parts.
fn assemble_parts(
    staging: &Path,
    chunks: usize,
    exp: &Experiment,
    grid: &Grid,
    cells: CellsOutput,
) -> Result<()> {
    if cells == CellsOutput::None {
        return Ok(());
    }
    let existing = |ext: &str| -> Vec<PathBuf> {
        (0..chunks)
            .map(|k| staging.join(part_name(k, ext)))
            .filter(|p| p.exists())
            .collect()
    };
    if exp.parquet {
        let parts = existing("parquet");
        let target = staging.join("cells.parquet");
        if parts.is_empty() {
            let mut df = tables::cells_frame(
                grid,
                Names {
                    base: 0,
                    names: &[],
                },
                &[],
            )?;
            tables::write_parquet(&target, &mut df)?;
        }
        let mut sink: Option<ParquetSink> = None;
        for p in &parts {
            let file =
                std::fs::File::open(p).with_context(|| format!("{}: cannot read", p.display()))?;
            let df = ParquetReader::new(file)
                .finish()
                .map_err(|e| anyhow::anyhow!("{}: cannot read Parquet: {e}", p.display()))?;
            if sink.is_none() {
                sink = Some(ParquetSink::create(&target, df.schema())?);
            }
            sink.as_mut().expect("created above").write(&df)?;
            std::fs::remove_file(p).ok();
        }
        if let Some(s) = sink {
            s.finish()?;
        }
    }
    if exp.csv {
        let target = staging.join("cells.csv");
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&target)
                .with_context(|| format!("{}: cannot create", target.display()))?,
        );
        use std::io::Write as _;
        writeln!(out, "{}", tables::CELL_COLUMNS.join(","))?;
        for p in existing("csv") {
            let mut f =
                std::fs::File::open(&p).with_context(|| format!("{}: cannot read", p.display()))?;
            std::io::copy(&mut f, &mut out)
                .with_context(|| format!("{}: cannot write", target.display()))?;
            std::fs::remove_file(&p).ok();
        }
        out.flush()
            .with_context(|| format!("{}: cannot write", target.display()))?;
    }
    Ok(())
}

/// Writes the summary tables and the manifest into `staging`.
pub fn write_summary_and_manifest(
    staging: &Path,
    exp: &Experiment,
    grid: &Grid,
    summary: &Summary,
    wall: Duration,
    shards: Option<usize>,
) -> Result<()> {
    let rows = summary.rows(grid);
    if exp.parquet {
        let mut df = tables::summary_frame(&rows)?;
        tables::write_parquet(&staging.join("summary.parquet"), &mut df)?;
    }
    if exp.csv {
        tables::write_summary_csv(&staging.join("summary.csv"), &rows)?;
    }
    let manifest = serde_json::json!({
        "name": exp.file.name,
        "seed": exp.file.seed,
        "config": exp.resolved_json(),
        "config_hash": exp.config_hash(),
        "source": exp.origin,
        "cells": grid.cells(),
        "histories": grid.histories,
        "shards": shards,
        "grid": {
            "histories": grid.histories,
            "replicates": grid.replicates,
            "false_negative": exp.false_negative,
            "false_positive": exp.false_positive,
            "strategies": grid.labels,
            // The values in force: the axis, or each strategy's own default when it is absent.
            "keep_recent": grid.effective_keep_recent(),
            "budgets": grid.budgets,
        },
        "version": env!("CARGO_PKG_VERSION"),
        "wall_seconds": wall.as_secs_f64(),
    });
    write_json(&staging.join("manifest.json"), &manifest)
}

/// Draws the charts and the report from the published summary (they read `summary.parquet`,
/// so a run that writes only CSV has none).
pub fn draw_charts(exp: &Experiment, dir: &Path) -> Result<Vec<PathBuf>> {
    if !exp.parquet {
        eprintln!("note: no charts: they are drawn from summary.parquet; add \"parquet\" to output.formats");
        return Ok(Vec::new());
    }
    crate::report::render_all(dir)
}

/// Moves the staged files to their final places, in the order given (the mark of completion
/// last), and removes the staging folder. Files that were not staged are skipped.
pub(crate) fn publish(staging: &Path, destinations: &[(&str, PathBuf)]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (name, to) in destinations {
        let from = staging.join(name);
        if !from.exists() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        std::fs::rename(&from, to)
            .with_context(|| format!("{}: cannot move into place", to.display()))?;
        files.push(to.clone());
    }
    std::fs::remove_dir_all(staging).ok();
    Ok(files)
}

/// A progress bar on a terminal (hidden otherwise or when `quiet`), counting `unit`.
pub(crate) fn progress_bar(total: u64, quiet: bool, unit: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            &format!("{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{per_sec:0}}, ETA {{eta}})"),
        )
        .expect("valid template"),
    );
    bar
}

/// `CTXLAB_ABORT_AFTER_CHUNKS=k` makes the process abort after k checkpoints: how the tests
/// kill a sweep at a known point.
fn test_abort_hook() -> Option<usize> {
    std::env::var("CTXLAB_ABORT_AFTER_CHUNKS")
        .ok()?
        .parse()
        .ok()
}
