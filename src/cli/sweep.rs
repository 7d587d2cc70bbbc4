//! `ctxlab sweep EXPERIMENT`: the main job.

use crate::sweep::{config, run};
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
}

pub fn run(a: SweepArgs) -> Result<()> {
    let mut exp = config::load(&a.experiment, &a.overrides)?;
    if let Some(out) = a.out {
        exp.output_dir = out;
    }
    let report = run::run(
        &exp,
        &run::RunOptions {
            threads: a.threads,
            quiet: a.quiet,
        },
    )?;
    println!(
        "{}: {} cells over {} histories in {:.2} s → {}",
        exp.file.name,
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
