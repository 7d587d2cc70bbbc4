//! `ctxlab sweep EXPERIMENT`: the main job.

use crate::sweep::run::{self, CellsOutput, DEFAULT_CHUNK_CELLS};
use crate::sweep::{config, shard::Shard};
use anyhow::Result;
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
    /// Which cells to write: all, a sample (every 100th history), or none (summary only).
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
    /// Cells evaluated between checkpoints (bounds memory).
    #[arg(long, default_value_t = DEFAULT_CHUNK_CELLS, value_name = "N")]
    pub chunk_cells: usize,
}

pub fn run(a: SweepArgs) -> Result<()> {
    let shard = Shard::resolve(a.shard.as_deref(), a.shard_count, |k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    let mut exp = config::load(&a.experiment, &a.overrides)?;
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
            chunk_cells: a.chunk_cells,
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
    for f in &report.files {
        println!("  {}", f.display());
    }
    Ok(())
}
