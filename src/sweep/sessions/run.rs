//! Running a session sweep: histories in, the sessions table, its summary, a manifest and
//! charts (`report::session_charts`) out.
//!
//! Histories are simulated in parallel, one history (all its sessions) per task; rows come back
//! in history order, so the tables are the same whatever the thread count. Everything is
//! written into a staging folder and moved into place at the end, the manifest last, with the
//! cell sweep's helpers: an interrupted run never leaves a table that looks complete. A session
//! sweep has no checkpoints (sessions are few next to cells: a run is one chunk), so a staging
//! folder left by an interrupted run is simply cleared.

use super::config::SessionExperiment;
use super::eval::{evaluate_history, Scratch, SessionRow};
use super::grid::SessionGrid;
use super::summary::SessionSummary;
use super::tables;
use crate::report::session_charts;
use crate::sweep::run::{
    progress_bar, publish, thread_pool, write_json, CellsOutput, HistorySource,
};
use crate::sweep::tables::write_parquet;
use anyhow::{Context as _, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct SessionRunOptions {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    /// No progress bar even on a terminal.
    pub quiet: bool,
    /// Which sessions go into the sessions table (the summary always has them all).
    pub rows: CellsOutput,
}

impl Default for SessionRunOptions {
    fn default() -> Self {
        SessionRunOptions {
            threads: None,
            quiet: true,
            rows: CellsOutput::All,
        }
    }
}

#[derive(Debug, Clone)]
pub struct SessionRunReport {
    pub dir: PathBuf,
    pub sessions: u64,
    pub histories: usize,
    pub wall: Duration,
    pub files: Vec<PathBuf>,
}

/// The tables of a session sweep, in publishing order (the manifest, the mark of completion,
/// last). The charts are drawn from the published summary afterwards, as a cell sweep's are.
const OUTPUTS: [&str; 5] = [
    "sessions.parquet",
    "sessions.csv",
    "summary.parquet",
    "summary.csv",
    "manifest.json",
];

/// Runs every session of the experiment and writes its tables into `exp.output_dir`.
pub fn run(exp: &SessionExperiment, opts: &SessionRunOptions) -> Result<SessionRunReport> {
    thread_pool(opts.threads)?.install(|| run_in_pool(exp, opts))
}

fn run_in_pool(exp: &SessionExperiment, opts: &SessionRunOptions) -> Result<SessionRunReport> {
    let started = Instant::now();
    let source = HistorySource::from_source(&exp.source)?;
    let grid = SessionGrid::new(exp, source.len());

    let dir = exp.output_dir.clone();
    let staging = dir.join(".partial-sessions");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)
            .with_context(|| format!("{}: cannot clear", staging.display()))?;
    }
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("{}: cannot create", staging.display()))?;

    let bar = progress_bar(grid.sessions(), opts.quiet, "sessions");
    // Histories are costed (or generated) one per task; only their rows are kept.
    let parts = source.evaluate(
        0..source.len(),
        exp.cost,
        &bar,
        |index, history, scratch: &mut Scratch, out: &mut Vec<SessionRow>| {
            out.reserve(grid.sessions_per_history());
            evaluate_history(&grid, index, history, scratch, out);
        },
    );
    bar.finish_and_clear();

    let mut summary = SessionSummary::new(&grid);
    let mut rows: Vec<SessionRow> = Vec::new();
    let mut names: Vec<String> = Vec::with_capacity(parts.len());
    for (index, (name, part)) in parts.into_iter().enumerate() {
        names.push(name);
        summary.add(&grid, &part);
        let kept = match opts.rows {
            CellsOutput::All => true,
            CellsOutput::Sample => index % 100 == 0,
            CellsOutput::None => false,
        };
        if kept {
            rows.extend(part);
        }
    }
    if opts.rows != CellsOutput::None {
        write_sessions(&staging, exp, &grid, &names, &rows)?;
    }
    drop(rows);
    let summary_rows = summary.rows(&grid);
    if exp.parquet {
        let mut df = tables::summary_frame(&summary_rows)?;
        write_parquet(&staging.join("summary.parquet"), &mut df)?;
    }
    if exp.csv {
        tables::write_summary_csv(&staging.join("summary.csv"), &summary_rows)?;
    }
    let wall = started.elapsed();
    write_manifest(&staging, exp, &grid, wall)?;
    let destinations: Vec<(&str, PathBuf)> =
        OUTPUTS.iter().map(|name| (*name, dir.join(name))).collect();
    let mut files = publish(&staging, &destinations)?;
    if exp.parquet {
        files.extend(session_charts::render_all(&dir)?);
    } else {
        eprintln!("note: no charts: they are drawn from summary.parquet; add \"parquet\" to output.formats");
    }
    Ok(SessionRunReport {
        dir,
        sessions: grid.sessions(),
        histories: grid.histories,
        wall,
        files,
    })
}

fn write_sessions(
    staging: &Path,
    exp: &SessionExperiment,
    grid: &SessionGrid,
    names: &[String],
    rows: &[SessionRow],
) -> Result<()> {
    if exp.parquet {
        let mut df = tables::sessions_frame(grid, names, rows)?;
        write_parquet(&staging.join("sessions.parquet"), &mut df)?;
    }
    if exp.csv {
        tables::write_sessions_csv(&staging.join("sessions.csv"), grid, names, rows)?;
    }
    Ok(())
}

fn write_manifest(
    staging: &Path,
    exp: &SessionExperiment,
    grid: &SessionGrid,
    wall: Duration,
) -> Result<()> {
    let manifest = serde_json::json!({
        "kind": "sessions",
        "name": exp.file.name,
        "seed": exp.file.seed,
        "config": exp.resolved_json(),
        "config_hash": exp.config_hash(),
        "source": exp.origin,
        "cells": grid.sessions(),
        "sessions": grid.sessions(),
        "histories": grid.histories,
        "grid": {
            "histories": grid.histories,
            "replicates": grid.replicates,
            "false_negative": exp.false_negative,
            "false_positive": exp.false_positive,
            "strategies": grid.labels,
            "windows": grid.windows,
            "ratios": grid.ratios,
            "note_rates": grid.note_rates,
        },
        "version": env!("CARGO_PKG_VERSION"),
        "wall_seconds": wall.as_secs_f64(),
    });
    write_json(&staging.join("manifest.json"), &manifest)
}
