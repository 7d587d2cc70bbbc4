//! `oracle`: the best any strategy could keep verbatim, knowing the true labels (the runner hands
//! it the truth as its flags). It keeps the largest number of required records that fit — the
//! cheapest first, which is optimal for a count under a cost limit; among equal costs the newer
//! first — then fills what is left with the newest other records that fit, skipping those that
//! do not. It never summarises or masks.
//!
//! It ignores `keep_recent`: a pinned tail could only lower its retention, and it is the upper
//! bound of verbatim retention for every strategy at every `keep_recent` in the same cell. (A
//! `summary` can carry more required information than fits verbatim, so its `retention_any` is
//! not bounded by the oracle.)

use super::{Context, Outcome, View};
use std::cmp::Reverse;

pub fn apply(view: View, capacity: u64, out: &mut Context) -> Outcome {
    let n = view.len();
    let sep = view.separator;
    out.order.clear();
    out.order.extend((0..n).filter(|&i| view.flags[i]));
    out.order
        .sort_unstable_by_key(|&i| (view.costs[i], Reverse(i)));
    let mut sum = 0u64;
    let mut count = 0u64;
    for k in 0..out.order.len() {
        let i = out.order[k];
        let c = view.costs[i];
        if out.joined_cost(sum + c, count + 1, sep) > capacity {
            break; // the rest cost at least as much
        }
        out.chosen[i] = true;
        sum += c;
        count += 1;
    }
    for i in (0..n).rev() {
        let c = view.costs[i];
        if !view.flags[i] && out.joined_cost(sum + c, count + 1, sep) <= capacity {
            out.chosen[i] = true;
            sum += c;
            count += 1;
        }
    }
    out.emit_chosen(view.costs, sep);
    Outcome::Feasible
}

/// `oracle`: the best any strategy could do knowing the true labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oracle;

impl super::rule::RuleSpec for Oracle {
    // Reads the true labels, handed as its flags, and draws nothing.
    const DRAWS: bool = false;
    const NAME: &'static str = "oracle";
    const TAIL: super::rule::Tail = super::rule::Tail::None(
        "it takes no parameters, not even `keep_recent`: it is the upper bound whatever the tail",
    );
    fn parse(_: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Oracle)
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        apply(view, capacity, out)
    }
    fn sees_truth(&self) -> bool {
        true
    }
}
