//! Turning metrics into things people read: tables, charts and reports.

pub mod charts;
pub mod compaction_decay;
pub mod compare;
pub mod complexity_trap;
pub mod cost_by_cache;
pub mod cost_ratio_chart;
pub mod flagger;
pub mod inspect;
pub mod judge_chart;
pub(crate) mod manifest;
pub(crate) mod markdown;
mod markdown_table;
mod noise_choice;
pub(crate) mod publish;
pub mod republish;
pub mod session;
pub mod session_charts;
mod session_groups;
pub mod summary_frontier;
pub(crate) mod summary_grid;
pub mod summary_table;
pub mod table;
pub(crate) mod text_table;

pub use charts::render_all;

use crate::tables::manifest::{Manifest, SweepKind, MANIFEST};
use std::path::{Path, PathBuf};

/// The report stage: draws the charts (and, for a cell sweep, `report.md`) of the results
/// folder `dir` — or of a run's staging folder, before it is published — from its summary
/// table and manifest. Returns the files written, relative to `dir`. A folder without
/// `summary.parquet` (a run that writes only CSV) gets none.
pub fn draw(dir: &Path) -> crate::error::Result<Vec<PathBuf>> {
    if !dir.join("summary.parquet").exists() {
        return Ok(Vec::new());
    }
    let written = match Manifest::read(&dir.join(MANIFEST))?.kind {
        SweepKind::Cells => charts::render_all(dir)?,
        SweepKind::Sessions => session_charts::render_all(dir)?,
    };
    Ok(written
        .into_iter()
        .map(|p| p.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(p))
        .collect())
}
