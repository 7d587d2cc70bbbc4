//! `ctxlab plot RESULTS_DIR`: redraws the charts and the report of a sweep from its tables.

use crate::report::charts;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A results folder written by `ctxlab sweep` (holding summary.parquet and manifest.json).
    pub results_dir: PathBuf,
}

pub fn run(a: PlotArgs) -> Result<()> {
    let written = charts::render_all(&a.results_dir)?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
