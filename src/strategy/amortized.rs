//! `amortized`: OpenHands' amortized forgetting. While the history fits it is kept whole
//! (append-only); once it exceeds the capacity it is cut to half the capacity, keeping the first
//! `keep_first` records and the newest that fit, so the next cut is far away.
//!
//! One cell evaluates one cut: the result is what a harness that forgets this way holds right
//! after it reaches this history and cuts. A session replaying the history turn by turn sees the
//! append-only phases between cuts.

use super::pinned::{head_cost, keep_head_and_newest};
use super::{Context, Outcome, View};

pub fn apply(view: View, capacity: u64, keep_first: usize, out: &mut Context) -> Outcome {
    let n = view.len();
    let whole = out.joined_cost(view.costs.iter().sum(), n as u64, view.separator);
    if whole <= capacity {
        keep_head_and_newest(view, n, capacity, out);
        return Outcome::Feasible;
    }
    if head_cost(view, keep_first, out) > capacity {
        return Outcome::Infeasible;
    }
    // A head larger than half the capacity is still kept whole (it fits the capacity); the
    // newest records then get no room.
    keep_head_and_newest(view, keep_first, capacity / 2, out);
    Outcome::Feasible
}

/// `amortized`: when over capacity, cut to half, keeping `keep_first` and the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amortized {
    pub keep_first: usize,
}

impl super::rule::RuleSpec for Amortized {
    const NAME: &'static str = "amortized";
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Amortized {
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
