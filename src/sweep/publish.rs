//! The end of a run: its staged tables published into the folder, with the summary tables,
//! the report stage and the manifest for a whole run, or as a shard's part of a
//! hive-partitioned dataset with the shard's state.

use super::checkpoint::ShardState;
use super::chunks::StagedTables;
use super::finish::Finish;
use super::folder::Folder;
use super::json_file::write_json;
use super::kind::{SweepExperiment, SweepGrid};
use super::options::RunOptions;
use super::prepare::{RunHistories, RunLayout};
use super::shard::Shard;
use crate::error::Result;
use crate::formats::TableFormat;
use crate::stats::Summary;
use crate::tables::manifest::MANIFEST;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What publishing a finished run reads: the run's settings, layout and histories, its folder
/// and the staging folder its files are in.
pub(super) struct Publish<'a, E: SweepExperiment> {
    pub(super) exp: &'a E,
    pub(super) opts: &'a RunOptions<'a>,
    pub(super) layout: &'a RunLayout<E::Grid>,
    pub(super) histories: &'a RunHistories,
    pub(super) folder: &'a Folder,
    pub(super) staging: &'a Path,
}

impl<E: SweepExperiment> Publish<'_, E> {
    /// Publishes the run (or its shard) and returns the files it put in place.
    pub(super) fn publish(
        &self,
        staged: StagedTables,
        summary: Summary,
        wall: Duration,
    ) -> Result<Vec<PathBuf>> {
        match self.opts.shard {
            None => self.whole(staged, &summary, wall),
            Some(s) => self.shard(s, staged, summary, wall),
        }
    }

    /// A whole run: the summary tables, the report stage and the manifest, then everything
    /// moved into place, the manifest last.
    fn whole(
        &self,
        staged: StagedTables,
        summary: &Summary,
        wall: Duration,
    ) -> Result<Vec<PathBuf>> {
        let layout = self.layout;
        let fault = self.opts.fault.as_ref();
        let mut staged_files = staged.rows;
        // Listed in the manifest and read by the report stage like the rows table.
        staged_files.extend(staged.events);
        Finish {
            staging: self.staging,
            grid: &layout.grid,
            rows_table: &layout.rows_table,
            formats: layout.formats,
            stage: self.opts.stage,
            fault,
            flagger: self.histories.flagger.clone(),
            left_out: self.histories.left_out.clone(),
            programs: &layout.programs,
        }
        .summary_and_manifest(self.exp, summary, wall, None, &mut staged_files, &[])?;
        let places: Vec<(String, String)> = staged_files
            .iter()
            .map(|f| (f.clone(), f.clone()))
            .collect();
        self.folder
            .publish(self.staging, &places, (MANIFEST, MANIFEST), &[], &[], fault)
    }

    /// One shard: its rows as its part of a hive-partitioned dataset, then its state (what
    /// `merge` reads) in place of the manifest.
    fn shard(
        &self,
        s: Shard,
        staged: StagedTables,
        summary: Summary,
        wall: Duration,
    ) -> Result<Vec<PathBuf>> {
        let layout = self.layout;
        let part = format!("shard={}", s.index);
        let place = |stem: &str, f: &String| {
            let format = TableFormat::of_file(f).expect("a rows table is in a format");
            (f.clone(), format.shard_place(stem, &part))
        };
        let stem = layout.rows_table.stem;
        let mut places: Vec<(String, String)> =
            staged.rows.iter().map(|f| place(stem, f)).collect();
        if let Some(t) = &layout.events_table {
            places.extend(staged.events.iter().map(|f| place(t.stem, f)));
        }
        let state_path = format!("shards/{part}.json");
        let previous: Vec<String> = std::fs::read_to_string(self.folder.dir.join(&state_path))
            .ok()
            .and_then(|t| serde_json::from_str::<ShardState>(&t).ok())
            .map(|s| s.files)
            .unwrap_or_default();
        let config_hash = self.exp.config_hash();
        let checksums = places
            .iter()
            .map(|(from, to)| {
                let sum = super::verify::checksum(
                    &self.staging.join(from),
                    &config_hash,
                    (s.index, s.count),
                )?;
                Ok((to.clone(), sum))
            })
            .collect::<Result<Vec<_>>>()?;
        let histories = &self.histories.range;
        let state = ShardState {
            kind: E::Grid::KIND,
            config_hash,
            shard: (s.index, s.count),
            histories: (histories.start, histories.end),
            rows: layout.shard_rows,
            rows_written: if staged.rows.is_empty() {
                0
            } else {
                layout.expected_rows
            },
            events_written: staged.events_written,
            wall_seconds: wall.as_secs_f64(),
            config: self.exp.resolved_json(),
            summary,
            files: places.iter().map(|(_, to)| to.clone()).collect(),
            checksums,
            flagger: self.histories.flagger.clone(),
            left_out: self.histories.left_out.clone(),
            programs: layout.programs.clone(),
        };
        write_json(&self.staging.join("state.json"), &state)?;
        self.folder.publish(
            self.staging,
            &places,
            ("state.json", &state_path),
            &[],
            &previous,
            self.opts.fault.as_ref(),
        )
    }
}
