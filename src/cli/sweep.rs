//! `ctxlab sweep EXPERIMENT`: the main job. A `[sweep]` table runs cells, a `[session]` table
//! runs sessions; both go through the one runner.

use crate::experiment::{self, AnyExperiment};
use crate::sweep::fault::Fault;
use crate::sweep::run::{self, CellsOutput, Progress, RunOptions, DEFAULT_CHUNK_CELLS};
use crate::sweep::shard::Shard;
use anyhow::{anyhow, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The experiment file (TOML).
    pub experiment: PathBuf,
    /// Override any key of the experiment, e.g. `--set sweep.budgets=[25,50]` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (overrides `output.dir`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: one per core). The tables are the same at any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Which cells (or sessions) to write: all, a sample (every 100th history), or none
    /// (summary only).
    #[arg(long, value_enum, default_value = "all")]
    pub cells: CellsOutput,
    /// Run shard i of n (by history), e.g. `--shard 3/8`; default from SLURM_ARRAY_TASK_ID /
    /// SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX with --shard-count.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// The shard count for Kubernetes indexed Jobs (JOB_COMPLETION_INDEX gives the index).
    #[arg(long, value_name = "N")]
    pub shard_count: Option<usize>,
    /// Finish a run that was interrupted, keeping its finished chunks.
    #[arg(long)]
    pub resume: bool,
    /// Cells (or sessions) evaluated between checkpoints (bounds memory).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CHUNK_CELLS)]
    pub chunk_cells: usize,
    /// Write into a non-empty folder that ctxlab did not write (it removes only its own files).
    #[arg(long)]
    pub force: bool,
    /// Refuse a sweep of more cells (or sessions) than this, before anything runs.
    #[arg(long, value_name = "N", default_value_t = crate::experiment::limits::DEFAULT_MAX_CELLS)]
    pub max_cells: u64,
}

pub fn run(a: SweepArgs) -> Result<()> {
    let shard = Shard::resolve(a.shard.as_deref(), a.shard_count, |k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    let mut exp = experiment::load_any(&a.experiment, &a.overrides)?;
    if let Some(out) = &a.out {
        exp.set_output_dir(out);
    }
    let bar = Bar::new(a.quiet);
    let stage = |dir: &Path| crate::report::draw(dir);
    let opts = RunOptions {
        threads: a.threads,
        cells: a.cells,
        shard,
        resume: a.resume,
        force: a.force,
        chunk_cells: a.chunk_cells,
        max_cells: a.max_cells,
        progress: &bar,
        stage: Some(&stage),
        fault: fault_from_env()?,
    };
    let (name, report) = match &exp {
        AnyExperiment::Cells(e) => (&e.file.name, run::run(e, &opts)?),
        AnyExperiment::Sessions(e) => (&e.file.name, run::run(e, &opts)?),
    };
    let what = match shard {
        Some(s) => format!("{name} shard {s}"),
        None => name.clone(),
    };
    let resumed = if report.resumed_chunks > 0 {
        format!(" (resumed after {} finished chunks)", report.resumed_chunks)
    } else {
        String::new()
    };
    let unit = unit(report.kind);
    crate::sayln!(
        "{what}: {} {unit} over {} histories in {:.2} s{resumed} → {}",
        report.rows,
        report.histories,
        report.wall.as_secs_f64(),
        report.dir.display()
    );
    for f in &report.files {
        crate::sayln!("  {}", f.display());
    }
    Ok(())
}

/// What the rows of a kind of sweep are called.
pub(crate) fn unit(kind: crate::tables::manifest::SweepKind) -> &'static str {
    match kind {
        crate::tables::manifest::SweepKind::Cells => "cells",
        crate::tables::manifest::SweepKind::Sessions => "sessions",
    }
}

/// `CTXLAB_FAULT=chunks:K|assembly|charts|publish|manifest` makes the run abort there: how
/// the tests interrupt a sweep at a known point.
pub(crate) fn fault_from_env() -> Result<Option<Fault>> {
    match std::env::var("CTXLAB_FAULT") {
        Ok(v) => v
            .parse()
            .map(Some)
            .map_err(|e: crate::error::ParseError| anyhow!("CTXLAB_FAULT: {e}")),
        Err(_) => Ok(None),
    }
}

/// A progress bar on a terminal (nothing otherwise, or when quiet).
pub(crate) struct Bar(ProgressBar);

impl Bar {
    pub(crate) fn new(quiet: bool) -> Bar {
        if quiet || !std::io::stderr().is_terminal() {
            return Bar(ProgressBar::hidden());
        }
        Bar(ProgressBar::with_draw_target(
            None,
            ProgressDrawTarget::stderr(),
        ))
    }
}

impl Progress for Bar {
    fn start(&self, total: u64, unit: &str) {
        self.0.set_length(total);
        self.0.set_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{per_sec:0}}, ETA {{eta}})"
            ))
            .expect("valid template"),
        );
    }
    fn advance(&self, rows: u64) {
        self.0.inc(rows);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
