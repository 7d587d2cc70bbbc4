//! `ctxlab plot RESULTS_DIR`: redraws the charts and the report of a sweep from its tables
//! (or, for a session sweep, its charts).

use crate::report::{charts, republish, session_charts};
use crate::tables::manifest::MANIFEST;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A results folder written by `ctxlab sweep` (holding summary.parquet and manifest.json).
    pub results_dir: PathBuf,
}

pub fn run(a: PlotArgs) -> Result<()> {
    let dir = &a.results_dir;
    let written = match republish::take(dir)? {
        // Under the folder's lock, staged and published like a sweep's files.
        Some(folder) if dir.join("summary.parquet").exists() => {
            let manifest = crate::tables::manifest::Manifest::read(&dir.join(MANIFEST))?;
            republish::publish(
                &folder,
                ".partial-plot",
                manifest,
                Vec::new(),
                |_| republish::drawn(dir, &dir.join("compare.parquet")),
                &[],
                super::sweep::fault_from_env()?.as_ref(),
            )?
        }
        // No manifest: the reading names what is missing; nothing is written.
        _ if session_charts::is_session_results(dir) => session_charts::render_all(dir)?,
        _ => charts::render_all(dir)?,
    };
    for path in written {
        crate::sayln!("{}", path.display());
    }
    Ok(())
}
