//! `raw`: no compaction. The whole history verbatim, infeasible when it does not fit; in a
//! session it never compacts (the baseline a harness without compaction pays).

use super::{Context, Item, Outcome, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw;

impl super::rule::RuleSpec for Raw {
    const NAME: &'static str = "raw";
    const TAIL: super::rule::Tail =
        super::rule::Tail::None("it takes no parameters: it keeps everything");
    fn parse(_: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Raw)
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        if view.span_cost(0..view.len()) > capacity {
            return Outcome::Infeasible;
        }
        for (i, &cost) in view.costs.iter().enumerate() {
            out.push(Item::Verbatim(i), cost, view.separator);
        }
        Outcome::Feasible
    }
    fn compacts(&self) -> bool {
        false
    }
}
