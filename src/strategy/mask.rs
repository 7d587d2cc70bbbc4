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
            (Item::Placeholder(i), view.mask_costs[i])
        } else {
            (Item::Verbatim(i), view.costs[i])
        }
    });
    Outcome::Feasible
}
