//! Reading a sweep's `manifest.json`: what was run, on what grid, how long it took.

use super::summary_table::sweep_output_error;
use crate::error::InputError;
use serde::Deserialize;
use std::path::Path;

/// The budget of the retention-against-noise chart when the experiment does not name one.
pub const DEFAULT_NOISE_BUDGET: f64 = 50.0;

/// The manifest a sweep writes beside its tables. Unknown keys are ignored so that later
/// additions to the manifest do not break reports of older runs.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub seed: u64,
    /// The resolved experiment (after overrides), kept as JSON so the report can print it whole.
    pub config: serde_json::Value,
    pub cells: u64,
    pub histories: u64,
    pub grid: Grid,
    pub version: String,
    pub wall_seconds: f64,
}

/// The axes of the sweep.
#[derive(Debug, Clone, Deserialize)]
pub struct Grid {
    pub histories: u64,
    pub replicates: u64,
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    pub strategies: Vec<String>,
    pub keep_recent: Vec<u64>,
    pub budgets: Vec<f64>,
}

/// Where the noise chart's budget comes from: the experiment, or the default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoiseBudget {
    /// `config.charts.noise_budget` was set.
    Configured(f64),
    /// Not set: [`DEFAULT_NOISE_BUDGET`].
    Default,
}

impl Manifest {
    /// Reads and checks a manifest file.
    pub fn read(path: &Path) -> Result<Manifest, InputError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| sweep_output_error(path, e, "manifest"))?;
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| InputError::line(path, e.line(), format!("not a ctxlab manifest: {e}")))?;
        manifest.noise_budget(path)?;
        Ok(manifest)
    }

    /// `config.charts.noise_budget`, checked to be a percentage when present.
    pub fn noise_budget(&self, path: &Path) -> Result<NoiseBudget, InputError> {
        let value = self
            .config
            .get("charts")
            .and_then(|c| c.get("noise_budget"));
        match value {
            None | Some(serde_json::Value::Null) => Ok(NoiseBudget::Default),
            Some(v) => match v.as_f64() {
                Some(b) if (0.0..=100.0).contains(&b) => Ok(NoiseBudget::Configured(b)),
                _ => Err(InputError::key(
                    path.display().to_string(),
                    "config.charts.noise_budget",
                    format!("{v} is not a budget: expected a percentage from 0 to 100"),
                )),
            },
        }
    }
}
