//! `raw`: no compaction. The whole history verbatim, infeasible when it does not fit; in a
//! session it never compacts (the baseline a harness without compaction pays) and ends with
//! the provider's context-length error when the context outgrows the window.
//!
//! `raw(window=none)` is the agent as it ran: no window, so it never ends early. It is the
//! baseline a cost comparison needs, since a run that ended early stopped billing (a saving
//! that is a failure); in a cell sweep it is `raw`.

use super::{Context, Item, Outcome, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw {
    /// `window=none`: a session ignores the window.
    pub unbounded: bool,
}

impl super::rule::RuleSpec for Raw {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "raw";
    const TAIL: super::rule::Tail =
        super::rule::Tail::None("it takes no parameters but `window=none`: it keeps everything");
    fn takes_own(key: &str) -> bool {
        key == "window"
    }
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Raw {
            unbounded: p.choice("window", &["none"])?.is_some(),
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        if self.unbounded {
            params.push("window=none".into());
        }
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
    fn unbounded(&self) -> bool {
        self.unbounded
    }
}
