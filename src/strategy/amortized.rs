//! `amortized`: OpenHands' amortized forgetting. While the history fits it is kept whole
//! (append-only); once it exceeds the capacity it is cut to half the capacity, keeping the head (the first
//! `keep_first` records) and the newest that fit, so the next cut is far away.
//!
//! One cell evaluates one cut: the result is what a harness that forgets this way holds right
//! after it reaches this history and cuts. A session replaying the history turn by turn sees the
//! append-only phases between cuts.

use super::pinned::keep_head_and_newest;
use super::{Context, Outcome, View};

/// The records after the head (which `Strategy::apply` keeps): all of them while they fit,
/// else the newest that fit half the room the head leaves.
pub fn apply(view: View, capacity: u64, out: &mut Context) -> Outcome {
    let n = view.len();
    let whole = out.joined_cost(view.costs.iter().sum(), n as u64, view.separator);
    if whole <= capacity {
        keep_head_and_newest(view, n, capacity, out);
    } else {
        keep_head_and_newest(view, 0, capacity / 2, out);
    }
    Outcome::Feasible
}

/// `amortized`: when over capacity, cut to half, keeping the head (`keep_first`: the system
/// prompt and the task by default) and the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amortized;

impl super::rule::RuleSpec for Amortized {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "amortized";
    fn parse(_: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Amortized)
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        apply(view, capacity, out)
    }
}
