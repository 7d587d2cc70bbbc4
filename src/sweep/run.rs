//! Running a sweep: histories in, tables and a manifest out.
//!
//! Histories are evaluated in parallel in chunks of bounded size; each chunk's rows are fed, in
//! grid order, to the summary and to the table writers, so memory stays bounded by the chunk
//! and the output is the same whatever the thread count. Everything is written into a staging
//! folder and renamed into place at the end: an interrupted run never leaves a table that
//! looks complete.

use super::cell::{evaluate_history, CellRow, Scratch};
use super::config::{Experiment, Source};
use super::grid::Grid;
use super::summary::Summary;
use super::tables::{self, CellsCsv, ParquetSink};
use crate::error::InputError;
use crate::history::{self, generate, CostedHistory, History};
use anyhow::{bail, Context as _, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Rows per chunk: enough to keep every core busy, few enough to bound memory (~40 MB).
const CHUNK_CELLS: usize = 1 << 18;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    /// No progress bar even on a terminal.
    pub quiet: bool,
}

#[derive(Debug, Clone)]
pub struct RunReport {
    pub dir: PathBuf,
    pub cells: u64,
    pub histories: usize,
    pub wall: Duration,
    pub files: Vec<PathBuf>,
}

/// The experiment's histories, generated or loaded.
pub fn load_histories(exp: &Experiment) -> Result<Vec<History>, InputError> {
    let histories = match &exp.source {
        Source::Generate(cfg) => generate::generate(cfg),
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

/// Runs the sweep and writes its tables into `exp.output_dir`.
pub fn run(exp: &Experiment, opts: &RunOptions) -> Result<RunReport> {
    let pool = match opts.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build()?,
        None => rayon::ThreadPoolBuilder::new().build()?,
    };
    pool.install(|| run_in_pool(exp, opts))
}

fn run_in_pool(exp: &Experiment, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let histories = load_histories(exp)?;
    let costed: Vec<CostedHistory> = histories
        .par_iter()
        .map(|h| CostedHistory::new(h, exp.cost))
        .collect();
    let names: Vec<String> = histories.iter().map(|h| h.name.clone()).collect();
    drop(histories);
    let grid = Grid::new(exp, costed.len());

    let dir = &exp.output_dir;
    let staging = dir.join(".partial");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("{}: cannot clear", staging.display()))?;
    }
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("{}: cannot create", staging.display()))?;

    let bar = progress_bar(grid.cells(), opts.quiet);
    let mut parquet: Option<ParquetSink> = None;
    let mut csv = if exp.csv {
        Some(CellsCsv::create(&staging.join("cells.csv"))?)
    } else {
        None
    };
    let mut summary = Summary::new(&grid);
    let per_chunk = (CHUNK_CELLS / grid.cells_per_history().max(1)).max(1);
    let mut rows: Vec<CellRow> = Vec::new();
    for (chunk_index, chunk) in costed.chunks(per_chunk).enumerate() {
        let base = chunk_index * per_chunk;
        let parts: Vec<Vec<CellRow>> = chunk
            .par_iter()
            .enumerate()
            .map_init(Scratch::default, |scratch, (j, h)| {
                let mut out = Vec::with_capacity(grid.cells_per_history());
                evaluate_history(&grid, base + j, h, scratch, &mut out);
                bar.inc(out.len() as u64);
                out
            })
            .collect();
        rows.clear();
        for p in &parts {
            rows.extend_from_slice(p);
        }
        summary.add(&grid, &rows);
        if exp.parquet {
            let df = tables::cells_frame(&grid, &names, &rows)?;
            if parquet.is_none() {
                parquet = Some(ParquetSink::create(
                    &staging.join("cells.parquet"),
                    df.schema(),
                )?);
            }
            parquet.as_mut().expect("created above").write(&df)?;
        }
        if let Some(c) = csv.as_mut() {
            c.write(&grid, &names, &rows)?;
        }
    }
    bar.finish_and_clear();
    if let Some(p) = parquet {
        p.finish()?;
    }
    if let Some(c) = csv {
        c.finish()?;
    }
    let summary_rows = summary.rows(&grid);
    if exp.parquet {
        let mut df = tables::summary_frame(&summary_rows)?;
        tables::write_parquet(&staging.join("summary.parquet"), &mut df)?;
    }
    if exp.csv {
        tables::write_summary_csv(&staging.join("summary.csv"), &summary_rows)?;
    }
    let wall = started.elapsed();
    write_manifest(&staging.join("manifest.json"), exp, &grid, wall)?;
    let files = publish(&staging, dir)?;
    Ok(RunReport {
        dir: dir.clone(),
        cells: grid.cells(),
        histories: grid.histories,
        wall,
        files,
    })
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} cells ({per_sec}, ETA {eta})",
        )
        .expect("valid template"),
    );
    bar
}

fn write_manifest(path: &Path, exp: &Experiment, grid: &Grid, wall: Duration) -> Result<()> {
    let manifest = serde_json::json!({
        "name": exp.file.name,
        "seed": exp.file.seed,
        "config": exp.resolved_json(),
        "source": exp.origin,
        "cells": grid.cells(),
        "histories": grid.histories,
        "grid": {
            "histories": grid.histories,
            "replicates": grid.replicates,
            "false_negative": exp.false_negative,
            "false_positive": exp.false_positive,
            "strategies": grid.labels,
            "keep_recent": exp.keep_recent,
            "budgets": grid.budgets,
        },
        "version": env!("CARGO_PKG_VERSION"),
        "wall_seconds": wall.as_secs_f64(),
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    std::fs::write(path, text).with_context(|| format!("{}: cannot write", path.display()))
}

/// Moves every staged file into `dir` (the manifest last, as the mark of a complete run) and
/// removes the staging folder.
fn publish(staging: &Path, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut names: Vec<_> = std::fs::read_dir(staging)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort_by_key(|n| (n == "manifest.json", n.clone()));
    let mut files = Vec::new();
    for n in names {
        let to = dir.join(&n);
        std::fs::rename(staging.join(&n), &to)
            .with_context(|| format!("{}: cannot move into place", to.display()))?;
        files.push(to);
    }
    std::fs::remove_dir(staging).ok();
    Ok(files)
}
