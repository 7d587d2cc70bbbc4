//! What the report reads of a run's manifest (the one type the runner writes,
//! [`crate::tables::manifest::Manifest`]) beyond its fields: the noise chart's budget.

use super::summary_table::Retention;
use crate::error::InputError;
pub use crate::tables::manifest::Manifest;
use std::path::Path;

/// The budget of the retention-against-noise chart when the experiment does not name one.
pub const DEFAULT_NOISE_BUDGET: f64 = 50.0;

/// Where the noise chart's budget comes from: the experiment, or the default.
#[derive(Debug, Clone, PartialEq)]
pub enum NoiseBudget {
    /// `config.charts.noise_budget` was set, to this value as the manifest holds it (checked
    /// against the budgets drawn by [`crate::experiment::check_noise_budget`]).
    Configured(serde_json::Value),
    /// Not set: [`DEFAULT_NOISE_BUDGET`].
    Default,
}

/// Reads a manifest and checks what the charts take from it.
pub fn read(path: &Path) -> Result<Manifest, InputError> {
    let manifest = Manifest::read(path)?;
    retention(&manifest, path)?;
    Ok(manifest)
}

/// `config.charts.retention`: `"all"` (the default) or `"feasible"`.
pub fn retention(manifest: &Manifest, path: &Path) -> Result<Retention, InputError> {
    chosen_retention(manifest).map_err(|v| {
        InputError::key(
            path.display().to_string(),
            "config.charts.retention",
            format!("{v}: expected \"all\" or \"feasible\""),
        )
    })
}

/// The retention the charts draw (checked when the manifest was read).
pub fn retention_drawn(manifest: &Manifest) -> Retention {
    chosen_retention(manifest).unwrap_or_default()
}

/// The retention the manifest's experiment chooses; the value itself when it is not one.
fn chosen_retention(manifest: &Manifest) -> Result<Retention, &serde_json::Value> {
    match manifest
        .config
        .get("charts")
        .and_then(|c| c.get("retention"))
    {
        None | Some(serde_json::Value::Null) => Ok(Retention::All),
        Some(v) => match v.as_str() {
            Some("all") => Ok(Retention::All),
            Some("feasible") => Ok(Retention::Feasible),
            _ => Err(v),
        },
    }
}

/// `config.charts.noise_budget` as the manifest holds it, if set.
pub fn noise_budget(manifest: &Manifest) -> NoiseBudget {
    match manifest
        .config
        .get("charts")
        .and_then(|c| c.get("noise_budget"))
    {
        None | Some(serde_json::Value::Null) => NoiseBudget::Default,
        Some(v) => NoiseBudget::Configured(v.clone()),
    }
}

/// What the flags of a run over transcripts rest on, for the report: the flag rules and, when
/// they include `hindsight`, a warning that the strategies were told the future. `None` for
/// generated or JSONL histories, whose flags start from their own `required`.
pub fn flags_note(manifest: &Manifest) -> Option<String> {
    let histories = manifest.config.get("histories")?;
    let format = histories.get("format").and_then(|f| f.as_str())?;
    if format == "jsonl" {
        return None;
    }
    let labels = histories
        .get("labels")
        .and_then(|l| l.as_str())
        .unwrap_or(crate::experiment::DEFAULT_TRANSCRIPT_LABELS);
    let flags = histories
        .get("flags")
        .and_then(|l| l.as_str())
        .unwrap_or(crate::experiment::DEFAULT_TRANSCRIPT_FLAGS);
    let mut note = format!(
        "The histories are `{format}` transcripts: required records (the truth scores are against) \
         come from the label rules `{labels}`, the flags strategies and summarisers see from the \
         rules `{flags}`, before label noise."
    );
    if flags.contains("hindsight") {
        note.push_str(
            " **Warning:** the flags include `hindsight`, whose marks are defined by what the \
             agent used later: the strategies were told the future, which no harness knows when \
             it compacts.",
        );
    }
    Some(note)
}
