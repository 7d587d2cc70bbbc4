//! An experiment of either kind, told apart by its table: `[sweep]` (cells) or `[session]`.

use super::cells::{self, Experiment};
use super::engine::{apply_overrides, parse_table, read_file, resolved_table};
use super::sessions::{self, SessionExperiment};
use crate::error::InputError;
use std::path::Path;

/// An experiment of either kind: a sweep of cells (`[sweep]`) or of sessions (`[session]`).
#[derive(Debug, Clone)]
// One experiment is built per run, so the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyExperiment {
    Cells(Experiment),
    Sessions(SessionExperiment),
}

/// Reads, overrides and validates an experiment file of either kind.
pub fn load_any(path: &Path, overrides: &[String]) -> Result<AnyExperiment, InputError> {
    let text = read_file(path)?;
    parse_any(&path.display().to_string(), &text, overrides)
}

/// Parses experiment text of either kind, dispatching on the table present after the
/// overrides (so `--set session.windows=[...]` cannot turn a cell sweep into a session one
/// silently: both tables present is an error).
pub fn parse_any(
    origin: &str,
    text: &str,
    overrides: &[String],
) -> Result<AnyExperiment, InputError> {
    let mut table = parse_table(origin, text)?;
    apply_overrides(&mut table, overrides)?;
    match (table.contains_key("sweep"), table.contains_key("session")) {
        (true, true) => Err(InputError::key(
            origin,
            "session",
            "an experiment has either a [sweep] table (cells) or a [session] table (sessions), not both",
        )),
        (false, true) => {
            sessions::from_table(origin, table, true).map(AnyExperiment::Sessions)
        }
        _ => cells::from_table(origin, table, &[], true).map(AnyExperiment::Cells),
    }
}

/// [`from_resolved`] for an experiment of either kind.
pub fn from_resolved_any(
    origin: &str,
    resolved: &serde_json::Value,
) -> Result<AnyExperiment, InputError> {
    let table = resolved_table(origin, resolved)?;
    if table.contains_key("session") {
        sessions::from_table(origin, table, false).map(AnyExperiment::Sessions)
    } else {
        cells::from_table(origin, table, &[], false).map(AnyExperiment::Cells)
    }
}

impl AnyExperiment {
    /// Sends the tables to another folder (`--out`).
    pub fn set_output_dir(&mut self, dir: &Path) {
        match self {
            AnyExperiment::Cells(e) => e.frame.output_dir = dir.to_path_buf(),
            AnyExperiment::Sessions(e) => e.frame.output_dir = dir.to_path_buf(),
        }
    }
}
