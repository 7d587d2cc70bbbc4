//! Strategies: rules that turn (history as seen through flags, capacity, parameters) into a
//! [`Context`]. One enum holds them all, so the sweep's hot loop dispatches without boxing, and
//! one spec syntax (`name(key=value, ...)`) names them everywhere; a strategy's [`label`]
//! (Strategy::label) is that spec in canonical form, so any table row can be re-run by pasting it.
//!
//! `keep_recent` is shared by all strategies: `mask` reads it as the window of intact tool
//! results (default 3) and `summary` as its verbatim tail (default 6); `oracle` ignores it (it is
//! the upper bound whatever the tail, and takes no parameters); for every other strategy it pins
//! the newest `keep_recent` records (default 0: they are kept first, the rule fills what is left
//! from the older ones, and a cell whose pinned tail alone exceeds the capacity is infeasible).
//! A spec that sets `keep_recent` itself wins over a sweep's axis.
//!
//! Each strategy lives in its own file; the semantics chosen where the field is silent are
//! documented there.

mod amortized;
mod clear_tool_uses;
mod context;
mod mask;
mod oracle;
mod pinned;
mod recent;
mod required;
pub mod spec;
mod summary;
mod view;
mod window;

pub use clear_tool_uses::ClearToolUses;
pub use context::{Context, Item, Outcome};
pub use spec::Spec;
pub use summary::{Summary, SummarySize};
pub use view::View;

use crate::error::ParseError;
use crate::summariser::Summariser;

use std::fmt::Write as _;

/// What to do after the first record that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// Stop there (the article's rule).
    #[default]
    Stop,
    /// Keep trying smaller, older records.
    Skip,
}

/// What `required` does when the flagged records alone exceed the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// The cell is infeasible (the article's rule).
    #[default]
    Infeasible,
    /// Drop the oldest flagged records until the rest fit.
    DropOldestFlagged,
}

/// The rule of a strategy, with its own parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// No compaction: the whole history verbatim, infeasible when it does not fit. In a
    /// session it never compacts (the baseline a harness without compaction pays).
    Raw,
    Recent {
        fill: Fill,
    },
    Required {
        fill: Fill,
        overflow: Overflow,
    },
    Pinned {
        keep_first: usize,
    },
    Mask {
        min_chars: u64,
    },
    ClearToolUses(ClearToolUses),
    Summary(Summary),
    Amortized {
        keep_first: usize,
    },
    Oracle,
}

/// `keep_first` of `pinned` and `amortized` when the spec does not set it.
pub const DEFAULT_KEEP_FIRST: usize = 1;

/// A strategy: a rule plus an optional explicit `keep_recent`.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    pub rule: Rule,
    pub keep_recent: Option<usize>,
}

/// The strategy names [`Strategy::from_spec`] knows.
pub const NAMES: &[&str] = &[
    "raw",
    "recent",
    "required",
    "pinned",
    "mask",
    "clear_tool_uses",
    "summary",
    "amortized",
    "oracle",
];

impl Strategy {
    /// Parses a spec string such as `required(fill=skip)`.
    pub fn parse(text: &str) -> Result<Strategy, ParseError> {
        Strategy::from_spec(&Spec::parse(text)?)
    }

    pub fn from_spec(spec: &Spec) -> Result<Strategy, ParseError> {
        if let ("raw", Some((key, _))) = (spec.name.as_str(), spec.params.first()) {
            return Err(format!(
                "strategy `raw`: unknown parameter `{key}` (it takes no parameters: it keeps everything)"
            ).into());
        }
        if let ("oracle", Some((key, _))) = (spec.name.as_str(), spec.params.first()) {
            return Err(format!(
                "strategy `oracle`: unknown parameter `{key}` (it takes no parameters, not even \
                 `keep_recent`: it is the upper bound whatever the tail)"
            )
            .into());
        }
        let mut p = spec.reader();
        let keep_recent = p.usize("keep_recent")?;
        let rule = match spec.name.as_str() {
            "recent" => Rule::Recent {
                fill: fill(&mut p)?,
            },
            "required" => Rule::Required {
                fill: fill(&mut p)?,
                overflow: match p.choice("on_overflow", &["infeasible", "drop-oldest-flagged"])? {
                    Some(s) if s == "drop-oldest-flagged" => Overflow::DropOldestFlagged,
                    _ => Overflow::Infeasible,
                },
            },
            "pinned" => Rule::Pinned {
                keep_first: keep_first(&mut p)?,
            },
            "mask" => Rule::Mask {
                min_chars: p.u64("min_chars")?.unwrap_or(mask::DEFAULT_MIN_CHARS),
            },
            "clear_tool_uses" => Rule::ClearToolUses(ClearToolUses::from_params(&mut p)?),
            "summary" => Rule::Summary(Summary::from_params(&mut p)?),
            "amortized" => Rule::Amortized {
                keep_first: keep_first(&mut p)?,
            },
            "oracle" => Rule::Oracle,
            "raw" => Rule::Raw,
            other => {
                return Err(format!(
                    "unknown strategy `{other}`, expected one of {}",
                    NAMES.join(", ")
                )
                .into())
            }
        };
        p.finish()?;
        Ok(Strategy { rule, keep_recent })
    }

    pub fn name(&self) -> &'static str {
        match self.rule {
            Rule::Recent { .. } => "recent",
            Rule::Required { .. } => "required",
            Rule::Pinned { .. } => "pinned",
            Rule::Mask { .. } => "mask",
            Rule::ClearToolUses(_) => "clear_tool_uses",
            Rule::Summary(_) => "summary",
            Rule::Amortized { .. } => "amortized",
            Rule::Oracle => "oracle",
            Rule::Raw => "raw",
        }
    }

    /// The canonical spec: the name and every parameter that differs from its default.
    pub fn label(&self) -> String {
        let mut params: Vec<String> = Vec::new();
        if let Some(k) = self.keep_recent {
            params.push(format!("keep_recent={k}"));
        }
        match &self.rule {
            Rule::Recent { fill } => push_fill(&mut params, *fill),
            Rule::Required { fill, overflow } => {
                push_fill(&mut params, *fill);
                if *overflow == Overflow::DropOldestFlagged {
                    params.push("on_overflow=drop-oldest-flagged".into());
                }
            }
            Rule::Pinned { keep_first } | Rule::Amortized { keep_first } => {
                if *keep_first != DEFAULT_KEEP_FIRST {
                    params.push(format!("keep_first={keep_first}"));
                }
            }
            Rule::Mask { min_chars } => {
                if *min_chars != mask::DEFAULT_MIN_CHARS {
                    params.push(format!("min_chars={min_chars}"));
                }
            }
            Rule::ClearToolUses(c) => c.push_params(&mut params),
            Rule::Summary(s) => s.push_params(&mut params),
            Rule::Oracle | Rule::Raw => {}
        }
        let mut label = self.name().to_string();
        if !params.is_empty() {
            let _ = write!(label, "({})", params.join(", "));
        }
        label
    }

    /// `keep_recent` when neither the spec nor a sweep axis sets it.
    pub fn default_keep_recent(&self) -> usize {
        match self.rule {
            Rule::Mask { .. } => mask::DEFAULT_KEEP_RECENT,
            Rule::Summary(_) => summary::DEFAULT_KEEP_RECENT,
            _ => 0,
        }
    }

    /// The `keep_recent` in force for a cell whose sweep axis gives `axis`.
    pub fn effective_keep_recent(&self, axis: Option<usize>) -> usize {
        self.keep_recent
            .or(axis)
            .unwrap_or_else(|| self.default_keep_recent())
    }

    /// Whether the runner must hand this strategy the true labels as its flags (the oracle).
    pub fn sees_truth(&self) -> bool {
        matches!(self.rule, Rule::Oracle)
    }

    /// The flags this strategy is handed: the true labels for the oracle, the noisy flags for
    /// every other strategy.
    pub fn flags<'a>(&self, truth: &'a [bool], noisy: &'a [bool]) -> &'a [bool] {
        if self.sees_truth() {
            truth
        } else {
            noisy
        }
    }

    /// Whether the strategy ever changes a context: `raw` does not, so a session under it never
    /// compacts.
    pub fn compacts(&self) -> bool {
        !matches!(self.rule, Rule::Raw)
    }

    /// The simulated summariser of a summarising strategy, so a session can apply recall again
    /// to what an earlier summary carries (summarising a summary compounds loss).
    pub fn summariser(&self) -> Option<Summariser> {
        match &self.rule {
            Rule::Summary(s) => Some(s.summariser),
            _ => None,
        }
    }

    /// Builds the context for `view` under `capacity` into `out`. `stream` keys the strategy's
    /// own random draws (the simulated summariser), so a cell is reproducible on its own.
    pub fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        out.clear(view.len());
        let outcome = match &self.rule {
            // These read `keep_recent` natively (or ignore it) instead of pinning a tail.
            Rule::Mask { min_chars } => mask::apply(view, capacity, keep_recent, *min_chars, out),
            Rule::Summary(s) => s.apply(view, capacity, keep_recent, stream, out),
            Rule::Oracle => oracle::apply(view, capacity, out),
            Rule::Raw => keep_everything(view, capacity, out),
            _ => self.apply_with_pinned_tail(view, capacity, keep_recent, out),
        };
        if outcome == Outcome::Infeasible {
            out.items.clear();
            out.cost = 0;
        }
        outcome
    }

    /// Keeps the newest `keep_recent` records, then lets the rule fill what is left of the
    /// capacity from the older ones.
    fn apply_with_pinned_tail(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let k = keep_recent.min(n);
        let head = n - k;
        let tail_cost = view.span_cost(head..n);
        if tail_cost > capacity {
            return Outcome::Infeasible;
        }
        if k > 0 {
            out.gap_to_tail = view.separator;
        }
        if self.apply_rule(view.prefix(head), capacity - tail_cost, out) == Outcome::Infeasible {
            out.items.clear();
            out.cost = 0;
            return Outcome::Infeasible;
        }
        // From here on the gap is an ordinary separator between the head and the tail.
        if !out.items.is_empty() {
            out.cost -= out.gap_to_tail;
        }
        out.gap_to_tail = 0;
        for i in head..n {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        Outcome::Feasible
    }

    fn apply_rule(&self, view: View, capacity: u64, out: &mut Context) -> Outcome {
        match self.rule {
            Rule::Recent { fill } => recent::apply(view, capacity, fill, out),
            Rule::Required { fill, overflow } => {
                required::apply(view, capacity, fill, overflow, out)
            }
            Rule::Pinned { keep_first } => pinned::apply(view, capacity, keep_first, out),
            Rule::Amortized { keep_first } => amortized::apply(view, capacity, keep_first, out),
            Rule::ClearToolUses(ref c) => c.apply(view, capacity, out),
            Rule::Mask { .. } | Rule::Summary(_) | Rule::Oracle | Rule::Raw => {
                unreachable!("applied without a pinned tail")
            }
        }
    }
}

/// `raw`: every record verbatim, or infeasible.
fn keep_everything(view: View, capacity: u64, out: &mut Context) -> Outcome {
    if view.span_cost(0..view.len()) > capacity {
        return Outcome::Infeasible;
    }
    for (i, &cost) in view.costs.iter().enumerate() {
        out.push(Item::Verbatim(i), cost, view.separator);
    }
    Outcome::Feasible
}

fn fill(p: &mut spec::Params) -> Result<Fill, ParseError> {
    Ok(match p.choice("fill", &["stop", "skip"])? {
        Some(s) if s == "skip" => Fill::Skip,
        _ => Fill::Stop,
    })
}

fn keep_first(p: &mut spec::Params) -> Result<usize, ParseError> {
    Ok(p.usize("keep_first")?.unwrap_or(DEFAULT_KEEP_FIRST))
}

fn push_fill(params: &mut Vec<String>, fill: Fill) {
    if fill == Fill::Skip {
        params.push("fill=skip".into());
    }
}
