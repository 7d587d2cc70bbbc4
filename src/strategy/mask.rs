//! `mask`: observation masking. Tool results older than the newest `keep_recent` tool results
//! are replaced by a short placeholder naming their tool (`[Previous: used bash]`) when their
//! text is longer than `min_chars` characters; everything else stays verbatim. This happens on
//! every call, whether or not the history is over the capacity, as the harnesses it comes from
//! (a teaching agent's micro compact, SWE-agent's `last_n_observations`, OpenHands' `<MASKED>`)
//! do on every turn. If the masked history is still over the capacity, the oldest items are
//! dropped until it fits, so a `mask` cell is never infeasible.

use super::window::{push_dropping_oldest, window_start};
use super::{Context, Item, Outcome, View};
use crate::history::Kind;

pub const DEFAULT_KEEP_RECENT: usize = 3;
pub const DEFAULT_MIN_CHARS: u64 = 100;

pub fn apply(
    view: View,
    capacity: u64,
    keep_recent: usize,
    min_chars: u64,
    out: &mut Context,
) -> Outcome {
    let intact_from = window_start(view.kinds, Kind::ToolResult, keep_recent);
    push_dropping_oldest(view, capacity, out, |i| {
        let masked =
            view.kinds[i] == Kind::ToolResult && i < intact_from && view.chars[i] > min_chars;
        if masked {
            (Item::Placeholder(i), view.stand_ins.mask_costs[i])
        } else {
            (Item::Verbatim(i), view.costs[i])
        }
    });
    Outcome::Feasible
}

/// `mask`: tool results older than the newest `keep_recent` become placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mask {
    pub min_chars: u64,
}

impl super::rule::RuleSpec for Mask {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "mask";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_KEEP_RECENT: usize = DEFAULT_KEEP_RECENT;
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Mask {
            min_chars: p.u64("min_chars")?.unwrap_or(DEFAULT_MIN_CHARS),
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        if self.min_chars != DEFAULT_MIN_CHARS {
            params.push(format!("min_chars={}", self.min_chars));
        }
    }
    fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        _: u64,
        out: &mut Context,
    ) -> Outcome {
        apply(view, capacity, keep_recent, self.min_chars, out)
    }
}
