//! The end of a run (or a merge): the summary tables, the report stage and the manifest, in
//! the staging folder; and the writer of those small tables.

use super::fault::{self, Fault};
use super::json_file::write_json;
use super::kind::{SweepExperiment, SweepGrid};
use super::options::Stage;
use crate::error::refuse;
use crate::error::Result;
use crate::formats::Formats;
use crate::stats::Summary;
use crate::tables::manifest::{Manifest, RunInputs, MANIFEST};
use crate::tables::summary::{self, GroupRow};
use crate::tables::{Names, Table};
use std::path::Path;
use std::time::Duration;

/// The summary tables, the report stage and the manifest of a finished (or merged) run, all
/// in the staging folder.
pub(crate) struct Finish<'a, G: SweepGrid> {
    pub staging: &'a Path,
    pub grid: &'a G,
    pub rows_table: &'a Table<G, G::Row>,
    pub formats: Formats,
    pub stage: Option<Stage<'a>>,
    pub fault: Option<&'a Fault>,
    /// The flagger's confusion matrix, for the manifest.
    pub flagger: Option<crate::flags::Confusion>,
    /// The files left out whole, for the manifest.
    pub left_out: Vec<crate::history::batch::LeftOut>,
    /// The external strategies' programs, for the manifest.
    pub programs: &'a [crate::strategy::external::ProgramFile],
}

impl<G: SweepGrid> Finish<'_, G> {
    /// Writes the summary tables, runs the report stage, and writes the manifest, which lists
    /// `staged` (the summary tables and what the stage drew are appended to it) and `in_place`
    /// (files of the run already published, such as the shards' parts). The caller publishes.
    pub fn summary_and_manifest<E: SweepExperiment>(
        &self,
        exp: &E,
        summary: &Summary,
        wall: Duration,
        shards: Option<usize>,
        staged: &mut Vec<String>,
        in_place: &[String],
    ) -> Result<()> {
        let table = G::summary_table(self.rows_table);
        let rows: Vec<GroupRow> = summary::group_rows(summary);
        staged.extend(write_table(
            self.staging,
            &table,
            self.grid,
            &rows,
            self.formats,
        )?);
        // Every strategy against every other, cell by cell; `compare` against the baseline.
        if self.grid.strategies() > 1 {
            let all = summary::pair_rows(
                summary,
                self.rows_table,
                self.grid,
                self.grid.labels(),
                None,
            );
            let pairs = G::pairs_table();
            staged.extend(write_table(
                self.staging,
                &pairs,
                self.grid,
                &all,
                self.formats,
            )?);
            if let Some(b) = exp.baseline() {
                let mut compare = G::pairs_table();
                compare.stem = "compare";
                let chosen: Vec<_> = all.into_iter().filter(|r| r.baseline == b).collect();
                staged.extend(write_table(
                    self.staging,
                    &compare,
                    self.grid,
                    &chosen,
                    self.formats,
                )?);
            }
        }
        if rows.len() != self.grid.groups() {
            refuse!(
                "the summary has {} groups where the grid has {}",
                rows.len(),
                self.grid.groups()
            );
        }
        let mut manifest = Manifest {
            kind: G::KIND,
            name: exp.name().to_string(),
            seed: exp.seed(),
            config: exp.resolved_json(),
            config_hash: exp.config_hash(),
            source: exp.origin().to_string(),
            rows: self.grid.rows(),
            histories: self.grid.histories() as u64,
            shards,
            grid: self.grid.axes(),
            files: Vec::new(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            wall_seconds: wall.as_secs_f64(),
            inputs: RunInputs {
                flagger: self.flagger.clone(),
                left_out: self.left_out.clone(),
                programs: self.programs.to_vec(),
            },
        };
        // The report stage reads the staged tables and this draft; the manifest is rewritten
        // with the files it drew.
        manifest.files = staged.iter().chain(in_place).cloned().collect();
        write_json(&self.staging.join(MANIFEST), &manifest)?;
        if let Some(stage) = self.stage {
            for f in stage(self.staging)? {
                staged.push(f.to_string_lossy().into_owned());
            }
            fault::point(self.fault, Fault::Charts);
        }
        manifest.files = staged.iter().chain(in_place).cloned().collect();
        write_json(&self.staging.join(MANIFEST), &manifest)?;
        Ok(())
    }
}

/// Writes a small table (a summary, the pairs) whole, in the formats asked for, into
/// `folder`; returns the file names written.
pub(crate) fn write_table<G: Sync, R: Sync>(
    folder: &Path,
    table: &Table<G, R>,
    grid: &G,
    rows: &[R],
    formats: Formats,
) -> Result<Vec<String>> {
    let mut written = Vec::new();
    for format in formats.iter() {
        let name = format.file_name(table.stem);
        format.write_whole(&folder.join(&name), &table.batch(grid, Names::NONE, rows))?;
        written.push(name);
    }
    Ok(written)
}
