//! What a run leaves behind to be resumed or merged: the checkpoint in its staging folder (with
//! the settings a resumed run must match) and, per shard, its state.

use super::options::CellsOutput;
use crate::error::refuse;
use crate::error::{Error, Result};
use crate::formats::Formats;
use crate::stats::Summary;
use crate::strategy::external::{resume_refusal, ProgramFile};
use crate::tables::manifest::SweepKind;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Everything that changes the rows or the files of a run: a resumed run must match it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunKey {
    pub(crate) kind: SweepKind,
    pub(crate) config_hash: String,
    pub(crate) version: String,
    pub(crate) chunk_cells: usize,
    pub(crate) cells: CellsOutput,
    pub(crate) formats: Formats,
    pub(crate) shard: Option<(usize, usize)>,
    pub(crate) histories: usize,
    pub(crate) chunks_total: usize,
    /// The external strategies' programs (absent from checkpoints written before them).
    #[serde(default)]
    pub(crate) programs: Vec<ProgramFile>,
}

impl RunKey {
    /// The first difference from `other`, as `(what, recorded, now)`.
    fn difference(&self, other: &RunKey) -> Option<(&'static str, String, String)> {
        let lower = |c: CellsOutput| format!("{c:?}").to_lowercase();
        // The settings given on the command line first, the experiment's hash (which also
        // covers output.formats) after them, so the message names what changed.
        [
            (
                "kind of sweep",
                format!("{:?}", other.kind),
                format!("{:?}", self.kind),
            ),
            (
                "ctxlab version",
                other.version.clone(),
                self.version.clone(),
            ),
            (
                "--chunk-cells",
                other.chunk_cells.to_string(),
                self.chunk_cells.to_string(),
            ),
            ("--cells", lower(other.cells), lower(self.cells)),
            (
                "output.formats",
                other.formats.to_string(),
                self.formats.to_string(),
            ),
            ("--shard", shard_text(other.shard), shard_text(self.shard)),
            (
                "number of histories",
                other.histories.to_string(),
                self.histories.to_string(),
            ),
            (
                "experiment (config hash)",
                other.config_hash.clone(),
                self.config_hash.clone(),
            ),
            (
                "number of chunks",
                other.chunks_total.to_string(),
                self.chunks_total.to_string(),
            ),
        ]
        .into_iter()
        .find(|(_, was, now)| was != now)
    }
}

fn shard_text(s: Option<(usize, usize)>) -> String {
    s.map(|(i, n)| format!("{i}/{n}"))
        .unwrap_or_else(|| "none".into())
}

/// Progress of a run, saved in the staging folder where a history ends, at most every
/// [`super::chunks::CHECKPOINT_SECONDS`] and after the last chunk.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    pub(crate) key: RunKey,
    pub(crate) chunks_done: usize,
    pub(crate) summary: Summary,
}

/// What one shard leaves for `ctxlab merge`: its summary and where it came from.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShardState {
    pub kind: SweepKind,
    pub config_hash: String,
    pub shard: (usize, usize),
    pub histories: (usize, usize),
    /// Rows (cells or sessions) of this shard.
    pub rows: u64,
    /// Rows of this shard's rows table (all of them, a sample, or none).
    pub rows_written: u64,
    /// Rows of this shard's events table (a session sweep's compactions), for the same
    /// histories as its rows table.
    #[serde(default)]
    pub events_written: u64,
    pub wall_seconds: f64,
    pub config: serde_json::Value,
    pub summary: Summary,
    /// The files this shard published besides its state, relative to the folder.
    pub files: Vec<String>,
    /// Per file of `files`, its checksum (see `verify::checksum`): what `merge` checks the
    /// file's bytes against.
    #[serde(default)]
    pub checksums: Vec<(String, String)>,
    /// The flagger's confusion over every history (each shard loads them all), for the
    /// merged manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagger: Option<crate::flags::Confusion>,
    /// The files left out whole (`--skip-bad`; each shard reads them all), for the merged
    /// manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<crate::history::batch::LeftOut>,
    /// The external strategies' programs this shard ran, for the merged manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramFile>,
}

pub(crate) use super::folder::CHECKPOINT;

/// Makes the staging folder ready: refuses to touch an unfinished run unless resuming, refuses
/// to resume a run made with other settings, and returns the checkpoint to continue from.
pub(crate) fn prepare_staging(
    staging: &Path,
    key: RunKey,
    empty: Summary,
    resume: bool,
) -> Result<Checkpoint> {
    match check_staging(staging, &key, &empty, resume)? {
        Some(p) => Ok(p),
        None => {
            super::folder::clear_staging(staging)?;
            super::folder::make_staging(staging)?;
            Ok(Checkpoint {
                key,
                chunks_done: 0,
                summary: empty,
            })
        }
    }
}

/// What [`prepare_staging`] checks, reading only (a dry run checks this too): the
/// checkpoint to continue from, `None` to start over.
pub(crate) fn check_staging(
    staging: &Path,
    key: &RunKey,
    empty: &Summary,
    resume: bool,
) -> Result<Option<Checkpoint>> {
    let path = staging.join(CHECKPOINT);
    // A link planted for the staging folder (or its checkpoint) is refused before anything
    // in it is read or written, and so is a folder of that name ctxlab did not make.
    crate::links::refuse_link(staging)?;
    super::folder::refuse_foreign_staging(staging)?;
    crate::links::refuse_link(&path)?;
    let previous: Option<Checkpoint> = match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
            Error::Refused(format!(
                "{}: unreadable checkpoint ({e}); delete {} to start over",
                path.display(),
                staging.display()
            ))
        })?),
        Err(_) => None,
    };
    match previous {
        Some(p) if !resume => refuse!(
            "{} holds an unfinished run ({} of {} chunks done); run again with --resume to finish it, or delete that folder to start over",
            staging.display(),
            p.chunks_done,
            p.key.chunks_total
        ),
        Some(p) => {
            if let Some(why) = resume_refusal(&p.key.programs, &key.programs) {
                refuse!(
                    "{}: cannot resume: {why}; delete that folder to start over",
                    staging.display()
                );
            }
            if let Some((what, was, now)) = key.difference(&p.key) {
                refuse!(
                    "{}: cannot resume: the unfinished run has another {what} ({was}; this run: {now}); resume with the same settings, or delete that folder to start over",
                    staging.display()
                );
            }
            if let Err(e) = p.summary.check_format() {
                refuse!("{}: the unfinished run cannot be resumed: {e}; delete {} to start over", path.display(), staging.display());
            }
            if !p.summary.same_shape(empty) {
                refuse!("{}: the checkpoint's summary does not fit this grid; delete that folder to start over", path.display());
            }
            Ok(Some(p))
        }
        None => Ok(None),
    }
}
