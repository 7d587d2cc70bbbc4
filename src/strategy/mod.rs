//! Strategies: rules that turn (history as seen through flags, capacity, parameters) into a
//! [`Context`]. One enum holds them all, so the sweep's hot loop dispatches without boxing, and
//! one spec syntax (`name(key=value, ...)`) names them everywhere; a strategy's [`label`]
//! (Strategy::label) is that spec in canonical form, so any table row can be re-run by pasting it.
//!
//! `keep_recent` is shared by all strategies: `mask` reads it as the window of intact tool
//! results and `summary` as its verbatim tail; for every other strategy it pins the newest
//! `keep_recent` records (they are kept first, and a cell whose pinned tail alone exceeds the
//! capacity is infeasible). A spec that sets `keep_recent` itself wins over a sweep's axis.

mod context;
mod recent;
mod required;
pub mod spec;
mod view;

pub use context::{Context, Item, Outcome};
pub use spec::Spec;
pub use view::View;

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
    Recent { fill: Fill },
    Required { fill: Fill, overflow: Overflow },
}

/// A strategy: a rule plus an optional explicit `keep_recent`.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    pub rule: Rule,
    pub keep_recent: Option<usize>,
}

/// The strategy names [`Strategy::from_spec`] knows.
pub const NAMES: &[&str] = &["recent", "required"];

impl Strategy {
    /// Parses a spec string such as `required(fill=skip)`.
    pub fn parse(text: &str) -> Result<Strategy, String> {
        Strategy::from_spec(&Spec::parse(text)?)
    }

    pub fn from_spec(spec: &Spec) -> Result<Strategy, String> {
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
            other => {
                return Err(format!(
                    "unknown strategy `{other}`, expected one of {}",
                    NAMES.join(", ")
                ))
            }
        };
        p.finish()?;
        Ok(Strategy { rule, keep_recent })
    }

    pub fn name(&self) -> &'static str {
        match self.rule {
            Rule::Recent { .. } => "recent",
            Rule::Required { .. } => "required",
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
        }
        let mut label = self.name().to_string();
        if !params.is_empty() {
            let _ = write!(label, "({})", params.join(", "));
        }
        label
    }

    /// `keep_recent` when neither the spec nor a sweep axis sets it.
    pub fn default_keep_recent(&self) -> usize {
        0
    }

    /// The `keep_recent` in force for a cell whose sweep axis gives `axis`.
    pub fn effective_keep_recent(&self, axis: Option<usize>) -> usize {
        self.keep_recent
            .or(axis)
            .unwrap_or_else(|| self.default_keep_recent())
    }

    /// Whether the runner must hand this strategy the true labels as its flags (the oracle).
    pub fn sees_truth(&self) -> bool {
        false
    }

    /// The simulated summariser behind the strategy's summaries; `None` for strategies that
    /// never summarise (all of them until `summary` exists).
    pub fn summariser(&self) -> Option<crate::summariser::Summariser> {
        None
    }

    /// Builds the context for `view` under `capacity` into `out`. `stream` keys the strategy's
    /// own random draws (the simulated summariser), so a cell is reproducible on its own.
    pub fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        _stream: u64,
        out: &mut Context,
    ) -> Outcome {
        out.clear(view.len());
        self.apply_with_pinned_tail(view, capacity, keep_recent, out)
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
        }
    }
}

fn fill(p: &mut spec::Params) -> Result<Fill, String> {
    Ok(match p.choice("fill", &["stop", "skip"])? {
        Some(s) if s == "skip" => Fill::Skip,
        _ => Fill::Stop,
    })
}

fn push_fill(params: &mut Vec<String>, fill: Fill) {
    if fill == Fill::Skip {
        params.push("fill=skip".into());
    }
}
