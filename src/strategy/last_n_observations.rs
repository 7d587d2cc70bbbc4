//! The observation-masking step of SWE-agent's `LastNObservations` (`type: last_n_observations`,
//! `SWE-agent/SWE-agent` `sweagent/agent/history_processors.py` @ `318f9091d5f5522e2a3013b46623358e46157f7a`)
//! with `polling=1`, as the Complexity Trap's hybrid runs it after its summary: every tool
//! result older than the newest `n` becomes `Old environment output: (N lines omitted)`, N the
//! record's lines. The first observation (the task) is never elided; it sits in the head here.
//!
//! A record with no text in the view but a cost is a stand-in already (an earlier call masked
//! it; a session's view shows stand-ins without text): it stays one at the cost it has, so
//! masking again changes nothing. An empty output that costs nothing is masked like any other;
//! one that costs something without text (a per-message overhead) is left at its cost, as if it
//! were a stand-in — it carries nothing either way.
//!
//! This is a local step for `complexity_trap_hybrid`; a `swe_agent_last_n` preset may share it.

use super::window::window_start;
use super::{Item, View};
use crate::history::Kind;

/// The item and cost of record `i` (of a view whose tool results from `intact_from` on are the
/// newest `n`): a stand-in for an older tool result, the record itself otherwise.
pub fn masked(view: &View, i: usize, intact_from: usize) -> (Item, u64) {
    if view.kinds[i] != Kind::ToolResult || i >= intact_from {
        return (Item::Verbatim(i), view.costs[i]);
    }
    if view.chars[i] == 0 && view.lines[i] == 0 && view.costs[i] > 0 {
        return (Item::Placeholder(i), view.costs[i]);
    }
    // `Old environment output: (N lines omitted)`, costed once per history.
    (Item::Placeholder(i), view.stand_ins.omitted_costs[i])
}

/// Where the newest `n` tool results of `kinds` begin (every one is older with `n = 0`).
pub fn intact_from(kinds: &[Kind], n: usize) -> usize {
    window_start(kinds, Kind::ToolResult, n)
}
