//! `ctxlab plot RESULTS_DIR`: redraws the charts and the report of a sweep from its tables
//! (or, for a session sweep, its charts).

use crate::report::{charts, session_charts};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A results folder written by `ctxlab sweep` (holding summary.parquet and manifest.json).
    pub results_dir: PathBuf,
}

pub fn run(a: PlotArgs) -> Result<()> {
    let written = if session_charts::is_session_results(&a.results_dir) {
        session_charts::render_all(&a.results_dir)?
    } else {
        charts::render_all(&a.results_dir)?
    };
    for path in written {
        crate::sayln!("{}", path.display());
    }
    Ok(())
}
