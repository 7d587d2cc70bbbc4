//! Steps shared by the summarising presets (`openhands_llm_summarizing`, `codex_compact`,
//! `claude_code_compact`, `gemini_cli_compress`, `complexity_trap_*`): whether a harness's own
//! trigger is reached, keeping a context unchanged, writing one summary with the project's
//! simulated summariser, and reading parameters with a range.
//!
//! A preset's rule holds its trigger as well: a session calls it only once `When` says so, but
//! a cell has no time and applies the rule to the whole history under the cell's capacity (the
//! capacity is the window), so the rule itself decides whether its harness would have compacted
//! there. A result, compacted or not, that does not fit the capacity is infeasible: the harness
//! would exceed that budget. In a session the rule sees the context without the notes read
//! back, so with notes on a share trigger can fire on a context whose view alone is under it;
//! the rule then leaves it unchanged.
//!
//! The presets keep no verbatim tail of `keep_recent` records: what they keep is their source's
//! rule (`Tail::Own`, and the parameter is not read).

use super::spec::{Params, SpecValue};
use super::threshold;
use super::{Context, Item, Outcome, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

/// The cost of the whole context: the head `Strategy::apply` keeps before the view, and the view.
pub fn whole_cost(view: &View, out: &Context) -> u64 {
    out.head_cost + out.joined_cost(view.costs.iter().sum(), view.len() as u64, view.separator)
}

/// Whether `when` is reached by this context, as a session checks it (the window is the rule's
/// capacity plus what the head took, the events are the head's and the view's records).
pub fn reached(when: When, view: &View, capacity: u64, out: &Context) -> bool {
    match when {
        When::EveryCall => true,
        When::Tokens(n) => view.fixed_prefix + whole_cost(view, out) >= n,
        When::Share(f) => whole_cost(view, out) >= threshold(capacity + out.head_cost, f),
        When::LastCall(f) => last_call_cost(view, out) >= threshold(capacity + out.head_cost, f),
        When::Below(reserve) => {
            whole_cost(view, out) >= (capacity + out.head_cost).saturating_sub(reserve)
        }
        When::Events(n) => out.head_len + view.len() > n,
    }
}

/// The usage of the last agent call of a context: the head and the records up to the end of
/// that call's output (the tool results after it came later). A cell has no calls but this.
pub fn last_call_cost(view: &View, out: &Context) -> u64 {
    let end = view
        .kinds
        .iter()
        .rposition(|k| matches!(k, Kind::Assistant | Kind::ToolCall))
        .map_or(0, |r| r + 1);
    let records = joined(view.separator, view.costs[..end].iter().copied());
    match (out.head_len, end) {
        (_, 0) => out.head_cost,
        (0, _) => records,
        _ => out.head_cost + view.separator + records,
    }
}

/// The context left as it is: every record verbatim, infeasible when it does not fit.
pub fn unchanged(view: &View, capacity: u64, out: &mut Context) -> Outcome {
    let sep = view.separator;
    for i in 0..view.len() {
        out.push(Item::Verbatim(i), view.costs[i], sep);
    }
    fits(out, capacity)
}

/// Feasible when what the rule built fits its capacity (the head is already taken out of it).
pub use super::preset::fits;

/// The leading `system` records of a view: the system prompt a harness keeps outside what it
/// compacts (Codex's initial context, Claude Code's system prompt, Gemini's system instruction).
pub fn leading_systems(kinds: &[Kind]) -> usize {
    kinds.iter().take_while(|k| **k == Kind::System).count()
}

/// The joined cost of records of the given costs, the size a summary of them is drawn from.
pub fn joined(separator: u64, costs: impl Iterator<Item = u64>) -> u64 {
    let (sum, count) = costs.fold((0u64, 0u64), |(s, c), x| (s + x, c + 1));
    sum + separator * count.saturating_sub(1)
}

/// Pushes one summary of at most `budget` standing for records `first..end`, written by the
/// strategy's summariser from the records `carried` selects (the others are kept verbatim
/// elsewhere in the context).
pub fn push_summary(
    summary: &SummaryRule,
    view: &View,
    (first, end): (usize, usize),
    carried: impl Fn(usize) -> bool,
    budget: u64,
    stream: u64,
    out: &mut Context,
) {
    let cost = summary
        .summariser
        .write(view, (first, end), carried, budget, stream, out);
    out.push(Item::Summary { first, end, cost }, cost, view.separator);
}

/// What a harness that keeps only its system prompt leaves once `when` is reached (Claude
/// Code, Anthropic's server-side compaction): the leading `system` records, then one summary of
/// everything after them; the context unchanged before, or when it holds nothing else.
pub fn summarise_after_systems(
    when: When,
    summary: &SummaryRule,
    view: &View,
    capacity: u64,
    stream: u64,
    out: &mut Context,
) -> Outcome {
    let n = view.len();
    let systems = leading_systems(view.kinds);
    if !reached(when, view, capacity, out) || systems == n {
        return unchanged(view, capacity, out);
    }
    for i in 0..systems {
        out.push(Item::Verbatim(i), view.costs[i], view.separator);
    }
    summarise_span(summary, view, (systems, n), stream, out);
    fits(out, capacity)
}

/// Every record of the view in order, those `marked` replaced by a stand-in costing `stand`
/// (a record that is a stand-in already keeps its cost): a clearing that drops nothing.
pub fn push_marked(
    view: &View,
    marked: &[bool],
    stand: u64,
    capacity: u64,
    out: &mut Context,
) -> Outcome {
    for (i, &m) in marked.iter().enumerate().take(view.len()) {
        let (item, cost) = if m {
            (
                Item::Placeholder(i),
                super::preset::stand_in_cost(view, i, || stand),
            )
        } else {
            (Item::Verbatim(i), view.costs[i])
        };
        out.push(item, cost, view.separator);
    }
    fits(out, capacity)
}

/// Pushes one summary of records `first..end`, sized by their joined cost.
pub fn summarise_span(
    summary: &SummaryRule,
    view: &View,
    (first, end): (usize, usize),
    stream: u64,
    out: &mut Context,
) {
    let cost = summary.size.cost(view.span_cost(first..end));
    push_summary(summary, view, (first, end), |_| true, cost, stream, out);
}

/// A whole-number parameter of at least `min`, `default` when absent.
pub fn at_least(
    p: &mut Params,
    key: &'static str,
    min: usize,
    default: usize,
) -> Result<usize, ParseError> {
    Ok(super::preset::at_least(p, key, min, "")?.unwrap_or(default))
}

/// A share of the window above 0 and at most 1, if given.
pub fn share(p: &mut Params, key: &'static str) -> Result<Option<f64>, ParseError> {
    match p.fraction(key, 0.0, 1.0)? {
        Some(v) if v <= 0.0 => {
            Err(p.bad(key, "a number above 0 and at most 1", &SpecValue::Float(v)))
        }
        v => Ok(v),
    }
}

/// Pushes `key=value` when the value is not the default.
pub fn push_if<T: PartialEq + std::fmt::Display>(
    params: &mut Vec<String>,
    key: &str,
    value: T,
    default: T,
) {
    if value != default {
        params.push(format!("{key}={value}"));
    }
}
