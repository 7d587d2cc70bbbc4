//! `ctxlab sweep EXPERIMENT`: the main job. A `[sweep]` table runs cells, a `[session]` table
//! runs sessions.

use crate::cli::args::given_flags;
use crate::sweep::config::{self, AnyExperiment, Experiment};
use crate::sweep::run::{self, CellsOutput, DEFAULT_CHUNK_CELLS};
use crate::sweep::sessions::{self, SessionExperiment};
use crate::sweep::shard::Shard;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

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
    /// Cells evaluated between checkpoints (bounds memory) [default: 262144].
    #[arg(long, value_name = "N")]
    pub chunk_cells: Option<usize>,
}

pub fn run(a: SweepArgs) -> Result<()> {
    let shard = Shard::resolve(a.shard.as_deref(), a.shard_count, |k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    match config::load_any(&a.experiment, &a.overrides)? {
        AnyExperiment::Cells(exp) => run_cells(exp, shard, a),
        AnyExperiment::Sessions(exp) => run_sessions(exp, shard, a),
    }
}

fn run_cells(mut exp: Experiment, shard: Option<Shard>, a: SweepArgs) -> Result<()> {
    if let Some(out) = a.out {
        exp.output_dir = out;
    }
    let report = run::run(
        &exp,
        &run::RunOptions {
            threads: a.threads,
            quiet: a.quiet,
            cells: a.cells,
            shard,
            resume: a.resume,
            chunk_cells: a.chunk_cells.unwrap_or(DEFAULT_CHUNK_CELLS),
        },
    )?;
    let what = match shard {
        Some(s) => format!("{} shard {s}", exp.file.name),
        None => exp.file.name.clone(),
    };
    let resumed = if report.resumed_chunks > 0 {
        format!(" (resumed after {} finished chunks)", report.resumed_chunks)
    } else {
        String::new()
    };
    println!(
        "{what}: {} cells over {} histories in {:.2} s{resumed} → {}",
        report.cells,
        report.histories,
        report.wall.as_secs_f64(),
        report.dir.display()
    );
    print_files(&report.files);
    Ok(())
}

fn print_files(files: &[std::path::PathBuf]) {
    for f in files {
        println!("  {}", f.display());
    }
}

fn run_sessions(mut exp: SessionExperiment, shard: Option<Shard>, a: SweepArgs) -> Result<()> {
    // A session sweep runs whole: refuse what only a cell sweep does rather than ignore it.
    let only_cells = [
        ("--shard (or a scheduler's array index)", shard.is_some()),
        ("--resume", a.resume),
        ("--chunk-cells", a.chunk_cells.is_some()),
    ];
    if let Some((flags, verb)) = given_flags(&only_cells) {
        bail!(
            "{}: {flags} only {verb} to cell sweeps ([sweep]); a session sweep ([session]) runs whole",
            a.experiment.display()
        );
    }
    if let Some(out) = a.out {
        exp.output_dir = out;
    }
    let report = sessions::run(
        &exp,
        &sessions::SessionRunOptions {
            threads: a.threads,
            quiet: a.quiet,
            rows: a.cells,
        },
    )?;
    println!(
        "{}: {} sessions over {} histories in {:.2} s → {}",
        exp.file.name,
        report.sessions,
        report.histories,
        report.wall.as_secs_f64(),
        report.dir.display()
    );
    print_files(&report.files);
    Ok(())
}
