//! `required_summary`: the flagged records kept verbatim, everything else but the newest
//! `keep_recent` summarised: `summary` that leaves what the flags mark out of its summary. It
//! acts only when the history is over the capacity (the trigger), like `summary`.
//!
//! - **What stays verbatim.** The records the strategy sees flagged, in their order, and the
//!   newest `keep_recent` records (default 6, `summary`'s), after the head (`keep_first`,
//!   default the task, as `summary`).
//! - **What is summarised.** Every other record before the tail, an earlier summary included
//!   even when it is flagged (it carries flagged records only once they overflowed, below):
//!   one summary, first in the context, standing for the stretch from the first record to the
//!   tail; the flagged records it encloses are kept verbatim after it, not carried by it. Its
//!   size and writer are [`SummaryRule`]'s parameters (`summary_ratio` of what it replaces,
//!   capped by `summary_max`, or `summary_size`; `summariser=NAME`), the size taken over the
//!   records it replaces only.
//! - **When flagged records, summary and tail do not fit.** First the tail is folded, oldest
//!   first, as `summary` does (a flagged tail record stays verbatim, the others join the
//!   summary); then the oldest flagged records join the summary one by one, summarised rather
//!   than dropped (`required(on_overflow=drop-oldest-flagged)` drops them). If a summary of
//!   everything still exceeds the capacity, the cell is infeasible.

use super::{spec, Context, Item, Outcome, SummaryRule, View};
use crate::error::ParseError;
use crate::history::Kind;

#[derive(Debug, Clone, PartialEq)]
pub struct RequiredSummary {
    pub summary: SummaryRule,
}

/// A running count and joined-cost sum of one group of records.
#[derive(Debug, Clone, Copy, Default)]
struct Stretch {
    sum: u64,
    count: u64,
}

impl Stretch {
    fn add(&mut self, cost: u64) {
        self.sum += cost;
        self.count += 1;
    }
    fn remove(&mut self, cost: u64) {
        self.sum -= cost;
        self.count -= 1;
    }
    /// The joined cost of the group's records (what a summary of them replaces).
    fn joined(&self, sep: u64) -> u64 {
        Context::joined(self.sum, self.count, sep, 0)
    }
}

impl super::rule::RuleSpec for RequiredSummary {
    const NAME: &'static str = "required_summary";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_KEEP_RECENT: usize = super::summary::DEFAULT_KEEP_RECENT;
    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(RequiredSummary {
            summary: SummaryRule::from_params(p)?,
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        self.summary.push_params(params)
    }
    fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        if super::summary::keep_all_if_fits(&view, capacity, out) {
            return Outcome::Feasible;
        }
        // Over capacity, so n ≥ 1. `out.chosen[i]`, for i before `end`: kept verbatim.
        let keeps = |i: usize| view.flags[i] && view.kinds[i] != Kind::Summary;
        let mut end = n.saturating_sub(keep_recent).max(1);
        let (mut kept, mut replaced, mut tail) =
            (Stretch::default(), Stretch::default(), Stretch::default());
        for i in 0..n {
            let cost = view.costs[i];
            if i >= end {
                tail.add(cost);
            } else if keeps(i) {
                out.chosen[i] = true;
                kept.add(cost);
            } else {
                replaced.add(cost);
            }
        }
        let mut oldest = 0;
        let summary_cost = loop {
            let summary =
                (replaced.count > 0).then(|| self.summary.size.cost(replaced.joined(sep)));
            let items = u64::from(summary.is_some()) + kept.count + tail.count;
            let sum = summary.unwrap_or(0) + kept.sum + tail.sum;
            if Context::joined(sum, items, sep, out.gap_to_tail) <= capacity {
                break summary;
            }
            if end < n {
                let cost = view.costs[end];
                tail.remove(cost);
                if keeps(end) {
                    out.chosen[end] = true;
                    kept.add(cost);
                } else {
                    replaced.add(cost);
                }
                end += 1;
                continue;
            }
            while oldest < end && !out.chosen[oldest] {
                oldest += 1;
            }
            if oldest == end {
                return Outcome::Infeasible;
            }
            out.chosen[oldest] = false;
            kept.remove(view.costs[oldest]);
            replaced.add(view.costs[oldest]);
        };
        let chosen = std::mem::take(&mut out.chosen);
        if let Some(cost) = summary_cost {
            super::summary_preset::push_summary(
                &self.summary,
                &view,
                (0, end),
                |i| !chosen[i],
                cost,
                stream,
                out,
            );
        }
        for i in (0..end).filter(|&i| chosen[i]).chain(end..n) {
            out.push(Item::Verbatim(i), view.costs[i], sep);
        }
        out.chosen = chosen;
        Outcome::Feasible
    }
    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
