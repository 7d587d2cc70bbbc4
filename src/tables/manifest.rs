//! `manifest.json`: what a run computed, on what grid, which files it wrote, how long it took.
//! One serde type, written by the runner and by `merge`, read by the report stage and by the
//! next run into the same folder (which removes the files of this list it does not write
//! again). Written last: a folder with a manifest holds a finished run.

use super::read::sweep_output_error;
use crate::error::InputError;
use crate::noise::NoiseModel;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name of the manifest inside a results folder.
pub const MANIFEST: &str = "manifest.json";

/// Which kind of sweep wrote a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepKind {
    /// A `[sweep]` experiment: one row per cell.
    Cells,
    /// A `[session]` experiment: one row per session.
    Sessions,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub kind: SweepKind,
    pub name: String,
    pub seed: u64,
    /// The resolved experiment (after overrides), so a report can print it whole and `merge`
    /// can rebuild the grid.
    pub config: serde_json::Value,
    pub config_hash: String,
    /// The experiment file (or the shard state) the run came from.
    pub source: String,
    /// Rows of the grid: cells, or sessions for a session sweep.
    pub rows: u64,
    pub histories: u64,
    /// The number of shards merged, for a merged run.
    pub shards: Option<usize>,
    pub grid: Axes,
    /// Every file the run wrote besides this manifest, relative to the folder.
    pub files: Vec<String>,
    pub version: String,
    pub wall_seconds: f64,
    /// What the run read besides the experiment, written at the manifest's top level.
    #[serde(flatten)]
    pub inputs: RunInputs,
}

/// What a run's rows rest on besides the experiment file: the flags the histories carried,
/// the files left out, the external programs run. Each is absent from the manifest when
/// there is nothing to say.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunInputs {
    /// The flagger's confusion matrix against the truth, over every history of the sweep,
    /// when the histories carry flags of their own (a flags file, `flag` fields, transcript
    /// flag rules); absent when the flags start from the truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagger: Option<crate::flags::Confusion>,
    /// The history or transcript files left out whole (`--skip-bad`), each with its reason;
    /// absent when every file was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<crate::history::batch::LeftOut>,
    /// The programs of the external strategies: each command, the program file it names and
    /// that file's SHA-256 when the run started (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<crate::strategy::external::ProgramFile>,
}

/// The axes of the grid. The cell axes are empty for a session sweep and the session axes
/// for a cell sweep.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Axes {
    pub histories: u64,
    pub replicates: u64,
    /// The shorthand's uniform grid (empty when `noise` stands alone).
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    /// Every noise model's label, in the sweep's order (absent from manifests written before
    /// noise models: the uniform grid of the two rates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<String>,
    pub strategies: Vec<String>,
    /// The values in force: the axis, or each strategy's own default when it is absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep_recent: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note_rates: Vec<f64>,
    /// The caches a session sweep bills under, as canonical specs (absent from manifests
    /// written before the axis: the one `session.cache` of the config).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<String>,
}

impl Axes {
    /// The noise models' labels in the sweep's order.
    pub fn noise_labels(&self) -> Vec<String> {
        if !self.noise.is_empty() {
            return self.noise.clone();
        }
        crate::noise::models(&self.false_negative, &self.false_positive, &[])
            .iter()
            .map(NoiseModel::label)
            .collect()
    }
}

impl Manifest {
    /// Reads a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, InputError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| sweep_output_error(path, e, "manifest"))?;
        serde_json::from_str(&text)
            .map_err(|e| InputError::line(path, e.line(), format!("not a ctxlab manifest: {e}")))
    }

    /// The manifest of `dir`, when it holds one that reads.
    pub fn in_folder(dir: &Path) -> Option<Manifest> {
        Manifest::read(&dir.join(MANIFEST)).ok()
    }
}
