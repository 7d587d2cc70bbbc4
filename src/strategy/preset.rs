//! Steps shared by the harness presets: recognising a stand-in written at an earlier call of a
//! session, what a stand-in text costs without allocating, and emitting a whole rewritten view
//! under a capacity (a preset never drops to fit: its harness would send what it sends, so a
//! context over the capacity is infeasible).

use super::spec::{Params, Value};
use super::{Context, Item, Outcome, View};
use crate::cost::CostModel;
use crate::error::ParseError;
use std::fmt::{self, Write as _};

/// Reads `key` as a whole number of at least `min` (`what` names its unit in the message).
pub fn at_least(
    p: &mut Params,
    key: &'static str,
    min: usize,
    what: &str,
) -> Result<Option<usize>, ParseError> {
    match p.value(key) {
        None => Ok(None),
        Some(Value::Int(v)) if v >= min as i64 => Ok(Some(v as usize)),
        Some(v) => Err(p.bad(key, &format!("a whole number ≥ {min}{what}"), &v)),
    }
}

/// Whether record `i` of the view is a stand-in an earlier compaction of the session wrote: a
/// session shows one with no text (`chars` and `lines` 0) at its stand-in's cost, which it also
/// gives as its mask cost. A real record with no text costs less than its mask placeholder
/// (`[Previous: used …]` is never free), so it is never taken for one.
pub fn is_stand_in(view: &View, i: usize) -> bool {
    view.chars[i] == 0 && view.lines[i] == 0 && view.costs[i] == view.mask_costs[i]
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

/// The cost of a short formatted text under `model`, formatted on the stack (the sweep's hot
/// loop does not allocate); a text too long for the buffer is formatted on the heap.
pub fn formatted_cost(model: CostModel, args: fmt::Arguments) -> u64 {
    let mut buf = StackText {
        bytes: [0; 96],
        len: 0,
    };
    match buf.write_fmt(args) {
        Ok(()) => model.cost(buf.as_str()),
        Err(_) => model.cost(&fmt::format(args)),
    }
}

struct StackText {
    bytes: [u8; 96],
    len: usize,
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `str`s are ever copied in.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
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
/// verbatim and in order: infeasible when they exceed `capacity`.
pub fn push_first_and_newest(
    view: View,
    pre: usize,
    tail: usize,
    capacity: u64,
    out: &mut Context,
) -> Outcome {
    let n = view.len();
    let pre = pre.min(n);
    let from = n.saturating_sub(tail).max(pre);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_costs_match_the_text() {
        let cost = formatted_cost(
            CostModel::Chars,
            format_args!("Old environment output: ({} lines omitted)", 12),
        );
        assert_eq!(
            cost,
            "Old environment output: (12 lines omitted)".len() as u64
        );
        let long = formatted_cost(CostModel::Chars, format_args!("{}", "x".repeat(200)));
        assert_eq!(long, 200);
    }
}
