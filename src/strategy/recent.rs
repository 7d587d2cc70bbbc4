//! `recent`: the newest records that fit (the article's baseline).

use super::{Context, Fill, Item, Outcome, View};

/// Walks from the newest record backwards, adding each while the context fits; with
/// [`Fill::Stop`] (the article's rule) it stops at the first record that does not fit, with
/// [`Fill::Skip`] it goes on looking for smaller, older ones.
pub fn apply(view: View, capacity: u64, fill: Fill, out: &mut Context) -> Outcome {
    for i in (0..view.len()).rev() {
        let cost = view.costs[i];
        if out.cost_with(cost, view.separator) <= capacity {
            out.push(Item::Verbatim(i), cost, view.separator);
        } else if fill == Fill::Stop {
            break;
        }
    }
    out.reverse();
    Outcome::Feasible
}

/// `recent`: the newest records that fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recent {
    pub fill: Fill,
}

impl super::rule::RuleSpec for Recent {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "recent";
    // The article's rule, whose spec keeps no head: it is the baseline that shows what dropping
    // the early records costs (`keep_first=task` keeps the task like the harnesses).
    const DEFAULT_HEAD: super::Head = super::Head::First(0);
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Recent {
            fill: super::fill(p)?,
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        super::push_fill(params, self.fill);
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        apply(view, capacity, self.fill, out)
    }
}
