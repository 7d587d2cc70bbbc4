//! `summary`: the compaction of Codex, Claude Code, OpenHands, Letta, Aider and a teaching
//! agent's auto compact. It acts only when the history is over the capacity (the trigger); then
//! everything but the newest `keep_recent` records is replaced by one summary.
//!
//! - **Cost of the summary.** `summary_size=N` gives a fixed cost of N cost units. Otherwise the
//!   summary costs `ceil(summary_ratio × R)` capped at `summary_max`, where R is the cost of
//!   what it replaces (separators included); defaults `summary_ratio=0.1`, `summary_max=2000`.
//!   `summary_size` and `summary_ratio`/`summary_max` exclude each other. A harness preset
//!   whose source or real summaries fix a size has its own defaults (`claude_code_compact`);
//!   the others keep these.
//! - **The summary call** is billed as today's rule: one call on the whole current context with
//!   the provider's cache ([`super::SummaryCall::WholeContext`], the default).
//! - **What it keeps.** Its summariser (`summariser=NAME`, see [`crate::summariser`])
//!   writes the summary within that size. The default, `simulated`, keeps each replaced record
//!   with a measured recall by its flag, drawn from the cell's `stream` at the record's
//!   position: the same cell always keeps the same records, and every strategy and budget of a
//!   cell draws the same numbers. What a summary holds counts for `retention_any` and
//!   `fact_retention`, not for `exact`.
//! - **When summary and tail do not fit.** The oldest records of the verbatim tail are folded into
//!   the summary one by one until summary and tail fit (a harness that cannot keep its tail
//!   summarises more, it does not forget). If even a summary of the whole history exceeds the
//!   capacity, the cell is infeasible.
//! - **When the history has fewer than `keep_recent` records but is over the capacity**, the same
//!   folding applies: at least the oldest record is summarised.

use super::{spec, Context, Item, Outcome, SummaryRule, View};
use crate::error::ParseError;

pub const DEFAULT_KEEP_RECENT: usize = 6;

impl SummaryRule {
    pub fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        if keep_all_if_fits(&view, capacity, out) {
            return Outcome::Feasible;
        }
        // Over capacity, so n ≥ 1: summarise records 0..end, at least one.
        let mut end = n.saturating_sub(keep_recent).max(1);
        let mut head_sum: u64 = view.costs[..end].iter().sum();
        let mut tail_sum: u64 = view.costs[end..].iter().sum();
        let summary_cost = loop {
            let replaced = head_sum + sep * (end as u64 - 1);
            let summary = self.size.cost(replaced);
            let tail = match n - end {
                0 => 0,
                t => sep + tail_sum + sep * (t as u64 - 1),
            };
            if out.gap_to_tail + summary + tail <= capacity {
                break summary;
            }
            if end == n {
                return Outcome::Infeasible;
            }
            head_sum += view.costs[end];
            tail_sum -= view.costs[end];
            end += 1;
        };
        let cost = self
            .summariser
            .write(&view, (0, end), |_| true, summary_cost, stream, out);
        out.push(
            Item::Summary {
                first: 0,
                end,
                cost,
            },
            cost,
            sep,
        );
        for i in end..n {
            out.push(Item::Verbatim(i), view.costs[i], sep);
        }
        Outcome::Feasible
    }
}

/// Under the trigger (the whole view fits the capacity), every record verbatim: whether it did.
/// A head kept before the view costs one separator more (`gap_to_tail`).
pub(super) fn keep_all_if_fits(view: &View, capacity: u64, out: &mut Context) -> bool {
    let (n, sep) = (view.len(), view.separator);
    if out.joined_cost(view.costs.iter().sum(), n as u64, sep) > capacity {
        return false;
    }
    for i in 0..n {
        out.push(Item::Verbatim(i), view.costs[i], sep);
    }
    true
}

impl super::rule::RuleSpec for SummaryRule {
    const NAME: &'static str = "summary";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_KEEP_RECENT: usize = DEFAULT_KEEP_RECENT;
    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        SummaryRule::from_params(p)
    }
    fn push_params(&self, params: &mut Vec<String>) {
        SummaryRule::push_params(self, params)
    }
    fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        SummaryRule::apply(self, view, capacity, keep_recent, stream, out)
    }
    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(self)
    }
}
