//! `pinned`: the head (`keep_first`: the system prompt and the task), then the newest
//! records that fit — OpenHands' recent-events condenser, LangChain's
//! `trim_messages(include_system=True)`.

use super::{Context, Outcome, View};

/// Keeps the first `keep_first` records whatever their cost, then walks from the newest record
/// backwards adding each while the context stays within `limit`, stopping at the first that
/// does not fit (the article's `recent` rule), and emits both in original order.
pub fn keep_head_and_newest(view: View, keep_first: usize, limit: u64, out: &mut Context) {
    let n = view.len();
    let sep = view.separator;
    let h = keep_first.min(n);
    let mut sum: u64 = view.costs[..h].iter().sum();
    out.chosen[..h].iter_mut().for_each(|c| *c = true);
    // The k-th newest record joins a context of h + k records.
    for (k, i) in (h..n).rev().enumerate() {
        let c = view.costs[i];
        if out.joined_cost(sum + c, (h + k + 1) as u64, sep) > limit {
            break;
        }
        out.chosen[i] = true;
        sum += c;
    }
    out.emit_chosen(view.costs, sep);
}

/// `pinned`: the head (`keep_first`: the system prompt and the task by default, or the first N
/// records) and the newest records that fit — `recent` with a head, under the name the field
/// knows it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned;

impl super::rule::RuleSpec for Pinned {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "pinned";
    fn parse(_: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Pinned)
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        // The head is kept by `Strategy::apply`; the newest that fit come from what is left.
        keep_head_and_newest(view, 0, capacity, out);
        Outcome::Feasible
    }
}
