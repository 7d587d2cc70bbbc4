//! How large a summary is and who writes it: the parameters every summarising strategy reads
//! (`summary`, `required_summary` and the harness presets), the cost rule they size a summary by,
//! and its writer.
//!
//! `summary_size=N` gives a fixed cost of N cost units. Otherwise a summary costs
//! `ceil(summary_ratio × R)` capped at `summary_max`, where R is the cost of what it replaces
//! (separators included); defaults `summary_ratio=0.1`, `summary_max=2000`, or a harness's own.
//! `summary_size` and `summary_ratio`/`summary_max` exclude each other. `summariser=NAME` names
//! the writer ([`crate::summariser`]).

use super::spec;
use crate::error::ParseError;
use crate::summariser::Summariser;

pub const DEFAULT_RATIO: f64 = 0.1;
pub const DEFAULT_MAX: u64 = 2000;

/// How much a summary costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SummarySize {
    /// A fixed cost, whatever it replaces.
    Fixed(u64),
    /// `ceil(ratio × replaced)`, at most `max`.
    Ratio { ratio: f64, max: u64 },
}

impl SummarySize {
    /// The cost of a summary that replaces records costing `replaced` (separators included).
    pub fn cost(self, replaced: u64) -> u64 {
        match self {
            SummarySize::Fixed(size) => size,
            SummarySize::Ratio { ratio, max } => ((ratio * replaced as f64).ceil() as u64).min(max),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRule {
    pub size: SummarySize,
    pub summariser: Summariser,
}

impl Default for SummaryRule {
    fn default() -> Self {
        SummaryRule {
            size: SummarySize::Ratio {
                ratio: DEFAULT_RATIO,
                max: DEFAULT_MAX,
            },
            summariser: Summariser::default(),
        }
    }
}

impl SummaryRule {
    pub fn from_params(p: &mut spec::Params) -> Result<Self, ParseError> {
        SummaryRule::from_params_or(p, DEFAULT_RATIO, DEFAULT_MAX)
    }

    /// Reads the summary parameters, with `summary_ratio`/`summary_max` defaulting to a
    /// harness's own (`ratio`, `max`).
    pub fn from_params_or(
        p: &mut spec::Params,
        default_ratio: f64,
        default_max: u64,
    ) -> Result<Self, ParseError> {
        let fixed = p.u64("summary_size")?;
        let ratio = p.fraction("summary_ratio", 0.0, 1.0)?;
        let max = p.u64("summary_max")?;
        let size = match (fixed, ratio, max) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(format!(
                    "strategy `{}`: give either `summary_size` (a fixed cost) or \
                     `summary_ratio`/`summary_max` (a share of what it replaces, capped), not both",
                    p.strategy()
                )
                .into())
            }
            (Some(size), None, None) => SummarySize::Fixed(size),
            (None, ratio, max) => SummarySize::Ratio {
                ratio: ratio.unwrap_or(default_ratio),
                max: max.unwrap_or(default_max),
            },
        };
        Ok(SummaryRule {
            size,
            summariser: Summariser::from_params(p)?,
        })
    }

    /// The parameters that differ from the defaults, in canonical order.
    pub fn push_params(&self, params: &mut Vec<String>) {
        self.push_params_or(params, DEFAULT_RATIO, DEFAULT_MAX)
    }

    /// The parameters that differ from a harness's own defaults (`ratio`, `max`).
    pub fn push_params_or(&self, params: &mut Vec<String>, default_ratio: f64, default_max: u64) {
        match self.size {
            SummarySize::Fixed(size) => params.push(format!("summary_size={size}")),
            SummarySize::Ratio { ratio, max } => {
                if ratio != default_ratio {
                    params.push(format!("summary_ratio={ratio}"));
                }
                if max != default_max {
                    params.push(format!("summary_max={max}"));
                }
            }
        }
        self.summariser.push_params(params);
    }
}
