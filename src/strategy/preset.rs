//! Steps shared by the harness presets: recognising a stand-in written at an earlier call of a
//! session (the stand-ins' own costs are computed once per history, see `CostedHistory`), and
//! emitting a whole rewritten view
//! under a capacity (a preset never drops to fit: its harness would send what it sends, so a
//! context over the capacity is infeasible).

use super::spec::{Params, SpecValue};
use super::{Context, Item, Outcome, View};
use crate::error::ParseError;
use crate::history::Kind;

/// Reads `key` as a whole number of at least `min` (`what` names its unit in the message).
pub fn at_least(
    p: &mut Params,
    key: &'static str,
    min: usize,
    what: &str,
) -> Result<Option<usize>, ParseError> {
    match p.value(key) {
        None => Ok(None),
        Some(SpecValue::Int(v)) if v >= min as i64 => Ok(Some(v as usize)),
        Some(v) => Err(p.bad(key, &format!("a whole number ≥ {min}{what}"), &v)),
    }
}

/// Whether record `i` of the view is a stand-in an earlier compaction of the session wrote: a
/// session shows one with no text (`chars` and `lines` 0) at its stand-in's cost, which it also
/// gives as its mask cost. A real record with no text costs less than its mask placeholder
/// (`[Previous: used …]` is never free), so it is never taken for one.
pub fn is_stand_in(view: &View, i: usize) -> bool {
    view.chars[i] == 0 && view.lines[i] == 0 && view.costs[i] == view.stand_ins.mask_costs[i]
}

/// The cost of the stand-in for record `i`: what it already costs if it is one (masking a
/// masked record again keeps it as it is), else what `text` costs under the view's model.
pub fn stand_in_cost(view: &View, i: usize, text: impl FnOnce() -> u64) -> u64 {
    if is_stand_in(view, i) {
        view.costs[i]
    } else {
        text()
    }
}

/// Emits `item_of(i)` for every record of the view, in order: infeasible when the result
/// (with the head and separators) exceeds `capacity`.
pub fn push_whole(
    view: View,
    capacity: u64,
    out: &mut Context,
    item_of: impl Fn(usize) -> (Item, u64),
) -> Outcome {
    for i in 0..view.len() {
        let (item, cost) = item_of(i);
        out.push(item, cost, view.separator);
    }
    fits(out, capacity)
}

/// Keeps the first `pre` records of the view and the newest `tail` of the records after them,
/// verbatim and in order, leaving out the tool results that open the tail when the call they
/// answer was cut off (OpenHands' `ConversationMemory` sends no tool result without its tool
/// call): infeasible when they exceed `capacity`.
pub fn push_first_and_newest(
    view: View,
    pre: usize,
    tail: usize,
    capacity: u64,
    out: &mut Context,
) -> Outcome {
    let n = view.len();
    let pre = pre.min(n);
    let mut from = n.saturating_sub(tail).max(pre);
    if from > pre {
        while from < n && view.kinds[from] == Kind::ToolResult {
            from += 1;
        }
    }
    for i in (0..pre).chain(from..n) {
        out.push(Item::Verbatim(i), view.costs[i], view.separator);
    }
    fits(out, capacity)
}

pub fn fits(out: &Context, capacity: u64) -> Outcome {
    if out.cost <= capacity {
        Outcome::Feasible
    } else {
        Outcome::Infeasible
    }
}
