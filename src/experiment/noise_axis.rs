//! The noise axis of an experiment (`sweep.*` or `session.*`): the uniform grid of the shorthand
//! axes `false_negative` × `false_positive`, then the models of `noise`, checked.
//!
//! How they combine: without `noise`, the shorthand axes are the whole axis (each `[0.0]` when
//! absent), as they always were. With `noise`, an absent shorthand adds nothing; a shorthand
//! given beside it adds its uniform grid first, so `--set sweep.noise=[...]` on an experiment
//! with a noise grid adds models to it (a model also in the grid is an error, as is any value
//! twice on an axis).

use super::keys::{check_rates, no_duplicates, non_empty};
use super::limits::MAX_AXIS;
use crate::error::InputError;
use crate::noise::NoiseModel;

/// The noise keys of one table of an experiment file, as written.
pub(crate) struct NoiseKeys<'a> {
    /// `sweep` or `session`: the keys' prefix in messages.
    pub table: &'a str,
    pub false_negative: &'a Option<Vec<f64>>,
    pub false_positive: &'a Option<Vec<f64>>,
    pub noise: &'a Option<Vec<String>>,
}

/// The checked axis.
#[derive(Debug, Clone)]
pub(crate) struct NoiseAxis {
    /// The shorthand's rates (empty when `noise` stands alone).
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    /// Every model in the sweep's order: the shorthand's grid (false-negative major), then
    /// `noise`.
    pub models: Vec<NoiseModel>,
}

impl NoiseKeys<'_> {
    /// Checks sizes first (the other checks are quadratic in an axis's length), then ranges,
    /// specs and duplicates; every error names its key.
    pub fn resolve(&self, origin: &str) -> Result<NoiseAxis, InputError> {
        let key = |name: &str| format!("{}.{name}", self.table);
        let shorthand =
            self.noise.is_none() || self.false_negative.is_some() || self.false_positive.is_some();
        let default = if shorthand { vec![0.0] } else { Vec::new() };
        let false_negative = self
            .false_negative
            .clone()
            .unwrap_or_else(|| default.clone());
        let false_positive = self.false_positive.clone().unwrap_or(default);
        let listed = self.noise.as_deref().unwrap_or_default();
        for (name, len) in [
            ("false_negative", false_negative.len()),
            ("false_positive", false_positive.len()),
            ("noise", listed.len()),
        ] {
            if len > MAX_AXIS {
                return Err(InputError::key(
                    origin,
                    key(name),
                    format!(
                        "{len} values exceed ctxlab's limit of {MAX_AXIS} values per axis (README, \"Limits\"); split the axis over several experiments"
                    ),
                ));
            }
        }
        let (fns, fps) = (false_negative.len(), false_positive.len());
        if fns * fps + listed.len() > MAX_AXIS {
            let (fn_key, fp_key) = (key("false_negative"), key("false_positive"));
            let models = if listed.is_empty() {
                String::new()
            } else {
                format!(" + {} models ({})", listed.len(), key("noise"))
            };
            return Err(InputError::key(
                origin,
                if listed.is_empty() { fp_key.clone() } else { key("noise") },
                format!(
                    "{fns} × {fps} noise levels ({fn_key} × {fp_key}){models} exceed ctxlab's limit of {MAX_AXIS} (README, \"Limits\"); split the rates over several experiments"
                ),
            ));
        }
        if shorthand {
            check_rates(origin, &key("false_negative"), &false_negative)?;
            check_rates(origin, &key("false_positive"), &false_positive)?;
        }
        if self.noise.is_some() {
            non_empty(origin, &key("noise"), listed.len())?;
        }
        let grid = crate::noise::models(&false_negative, &false_positive, &[]);
        let grid_labels: Vec<String> = grid.iter().map(NoiseModel::label).collect();
        let mut models = grid;
        let mut labels = Vec::with_capacity(listed.len());
        for (i, text) in listed.iter().enumerate() {
            let at = format!("{}[{i}]", key("noise"));
            let model = NoiseModel::parse(text).map_err(|m| InputError::key(origin, &at, m))?;
            let label = model.label();
            if grid_labels.contains(&label) {
                return Err(InputError::key(
                    origin,
                    at,
                    format!(
                        "{label} is also in the uniform grid of `{}` × `{}`; each noise level must be distinct",
                        key("false_negative"),
                        key("false_positive")
                    ),
                ));
            }
            labels.push(label);
            models.push(model);
        }
        no_duplicates(origin, &key("noise"), &labels)?;
        Ok(NoiseAxis {
            false_negative: if shorthand {
                false_negative
            } else {
                Vec::new()
            },
            false_positive: if shorthand {
                false_positive
            } else {
                Vec::new()
            },
            models,
        })
    }
}

impl NoiseAxis {
    /// Writes the axis into a resolved experiment's table (`v` is `sweep` or `session`): the
    /// shorthand's rates in force (as the file had them before `noise` existed, so the
    /// fingerprint of an experiment without `noise` is unchanged) and the models of `noise`
    /// in their canonical labels.
    pub fn resolve_json(&self, v: &mut serde_json::Value, listed: bool) {
        if let Some(o) = v.as_object_mut() {
            o.remove("false_negative");
            o.remove("false_positive");
            o.remove("noise");
            if !self.false_negative.is_empty() {
                o.insert("false_negative".into(), self.false_negative.clone().into());
                o.insert("false_positive".into(), self.false_positive.clone().into());
            }
            if listed {
                let grid = self.false_negative.len() * self.false_positive.len();
                let labels: Vec<String> =
                    self.models[grid..].iter().map(NoiseModel::label).collect();
                o.insert("noise".into(), labels.into());
            }
        }
    }
}
