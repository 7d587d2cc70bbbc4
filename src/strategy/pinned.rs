//! `pinned`: the first `keep_first` records (the system prompt, the task), then the newest
//! records that fit — OpenHands' recent-events condenser, LangChain's
//! `trim_messages(include_system=True)`.

use super::{Context, Outcome, View};

/// Keeps the head; infeasible when the head alone exceeds the capacity.
pub fn apply(view: View, capacity: u64, keep_first: usize, out: &mut Context) -> Outcome {
    if head_cost(view, keep_first, out) > capacity {
        return Outcome::Infeasible;
    }
    keep_head_and_newest(view, keep_first, capacity, out);
    Outcome::Feasible
}

/// The cost of the first `keep_first` records as this context counts it.
pub fn head_cost(view: View, keep_first: usize, out: &Context) -> u64 {
    let h = keep_first.min(view.len());
    out.joined_cost(view.costs[..h].iter().sum(), h as u64, view.separator)
}

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

/// `pinned`: the first `keep_first` records and the newest that fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    pub keep_first: usize,
}

impl super::rule::RuleSpec for Pinned {
    const NAME: &'static str = "pinned";
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Pinned {
            keep_first: super::keep_first(p)?,
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        super::push_keep_first(params, self.keep_first);
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        apply(view, capacity, self.keep_first, out)
    }
}
