//! The summary-size axis of a session sweep: `session.summary_ratios` (shares of what a summary
//! replaces, each above 0 and at most 1) and `session.summary_caps` (token caps, each at least
//! 1), either or both.
//!
//! The axis is expanded when the file is read: each strategy whose summaries
//! [`SummaryRule`](crate::strategy::SummaryRule) sizes becomes one strategy per ratio × cap
//! (ratios major), its spec with `summary_ratio` and `summary_max` set, so every row's label
//! is a spec that re-runs it; a key the file leaves out keeps each strategy's own default (the
//! sessions table's `summary_ratio` and `summary_cap` name the values each ran with). A strategy
//! that writes no summary runs once. A strategy whose spec already sets its summary's size
//! (`summary_ratio`, `summary_max` or `summary_size`) is refused: the axis and the spec would
//! each claim the size.

use super::keys::{no_duplicates, non_empty, strategy_spec_of};
use super::limits;
use crate::error::InputError;
use crate::spec::{Spec, SpecValue};
use crate::strategy::Strategy;

/// The spec keys that set a summary's size.
pub const SIZE_KEYS: [&str; 3] = ["summary_ratio", "summary_max", "summary_size"];

/// The axis as the file gives it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SummaryAxis<'a> {
    pub ratios: Option<&'a [f64]>,
    pub caps: Option<&'a [u64]>,
}

impl SummaryAxis<'_> {
    /// Whether the file sweeps the summary's size at all.
    pub fn given(&self) -> bool {
        self.ratios.is_some() || self.caps.is_some()
    }

    /// The axis keys with their lengths, for the size limits.
    pub fn lengths(&self) -> Vec<(&'static str, usize)> {
        let mut axes = Vec::new();
        if let Some(r) = self.ratios {
            axes.push(("session.summary_ratios", r.len()));
        }
        if let Some(c) = self.caps {
            axes.push(("session.summary_caps", c.len()));
        }
        axes
    }

    /// Checks the values: non-empty, distinct, ratios in (0, 1], caps at least 1.
    fn check(&self, origin: &str) -> Result<(), InputError> {
        if let Some(ratios) = self.ratios {
            let key = "session.summary_ratios";
            non_empty(origin, key, ratios.len())?;
            for (i, &r) in ratios.iter().enumerate() {
                if !(r.is_finite() && r > 0.0 && r <= 1.0) {
                    return Err(InputError::key(
                        origin,
                        format!("{key}[{i}]"),
                        format!(
                            "{r} is out of range: expected a share of what the summary replaces, above 0 and at most 1"
                        ),
                    ));
                }
            }
            no_duplicates(origin, key, ratios)?;
        }
        if let Some(caps) = self.caps {
            let key = "session.summary_caps";
            non_empty(origin, key, caps.len())?;
            if let Some(i) = caps.iter().position(|&c| c == 0) {
                return Err(InputError::key(
                    origin,
                    format!("{key}[{i}]"),
                    "0 is out of range: expected a cap on the summary of at least 1 token",
                ));
            }
            no_duplicates(origin, key, caps)?;
        }
        Ok(())
    }

    /// The strategies to run: `strategies` (parsed from `specs`, in order) with each one that
    /// writes a summary expanded into one per size.
    pub fn expand(
        &self,
        origin: &str,
        specs: &[toml::Value],
        strategies: Vec<Strategy>,
    ) -> Result<Vec<Strategy>, InputError> {
        if !self.given() {
            return Ok(strategies);
        }
        self.check(origin)?;
        let ratios: Vec<Option<f64>> = match self.ratios {
            Some(r) => r.iter().copied().map(Some).collect(),
            None => vec![None],
        };
        let caps: Vec<Option<u64>> = match self.caps {
            Some(c) => c.iter().copied().map(Some).collect(),
            None => vec![None],
        };
        let mut out = Vec::new();
        for (i, (strategy, value)) in strategies.into_iter().zip(specs).enumerate() {
            if strategy.summary_size().is_none() {
                out.push(strategy);
                continue;
            }
            let at = |m: String| InputError::key(origin, format!("session.strategies[{i}]"), m);
            let spec = strategy_spec_of(value).map_err(|e| at(e.to_string()))?;
            if let Some((key, _)) = spec
                .params
                .iter()
                .find(|(k, _)| SIZE_KEYS.contains(&k.as_str()))
            {
                return Err(at(format!(
                    "{} sets its summary's size (`{key}`), which the summary-size axis ({}) sweeps; leave `{key}` out of the spec or the axis out of the file",
                    strategy.label(),
                    self.keys()
                )));
            }
            for &ratio in &ratios {
                for &cap in &caps {
                    let sized = sized_spec(&spec, ratio, cap);
                    out.push(Strategy::from_spec(&sized).map_err(|e| at(e.to_string()))?);
                }
            }
        }
        limits::check_axes(origin, &[("session.strategies", out.len())], 1, 1)?;
        let labels: Vec<String> = out.iter().map(Strategy::label).collect();
        no_duplicates(origin, "session.strategies", &labels)?;
        Ok(out)
    }

    /// The keys given, for messages.
    fn keys(&self) -> String {
        let names: Vec<String> = self
            .lengths()
            .iter()
            .map(|(k, _)| format!("`{k}`"))
            .collect();
        names.join(" and ")
    }
}

/// `spec` with the summary's share and cap set where given.
fn sized_spec(spec: &Spec, ratio: Option<f64>, cap: Option<u64>) -> Spec {
    let mut sized = spec.clone();
    if let Some(r) = ratio {
        sized
            .params
            .push(("summary_ratio".into(), SpecValue::Float(r)));
    }
    if let Some(c) = cap {
        let c = i64::try_from(c).unwrap_or(i64::MAX);
        sized.params.push(("summary_max".into(), SpecValue::Int(c)));
    }
    sized
}

/// The summariser family of a strategy label: the strategy without its summary's size, in its
/// canonical label (`summary(summary_ratio=0.2)` → `summary`); `None` for a label that does not
/// parse or a strategy that writes no summary [`SummaryRule`](crate::strategy::SummaryRule)
/// sizes.
pub fn family(label: &str) -> Option<String> {
    let mut spec = Spec::parse(label).ok()?;
    spec.params
        .retain(|(k, _)| !SIZE_KEYS.contains(&k.as_str()));
    let strategy = Strategy::from_spec(&spec).ok()?;
    strategy.summary_size().map(|_| strategy.label())
}
