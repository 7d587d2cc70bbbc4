//! Cases ported from the tests of the harnesses as they ship in 2026 — the OpenHands agent
//! SDK's summarising condenser (`openhands_sdk_summarizing`) and upstream Codex
//! (`codex_compact_2026`) — as `harness_goldens` does for the older presets: each test names the
//! file and commit it comes from, restates its input and expected output in ctxlab's terms
//! (records of `x` repeated; their costs under the cost model each module names), and says where
//! ctxlab departs. Where a source has no test of a rule, the case is worked by hand from the
//! source lines cited.

mod codex;
mod invariants;
mod openhands_sdk;

use ctxlab::context::{Context, Item};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{SessionMetrics, Trace};
use ctxlab::CostModel;

/// Records of the given kinds and lengths (chars) under `model`; tool calls and results are
/// `bash`'s.
pub fn history_in(model: CostModel, spec: &[(Kind, usize)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len))| {
            let r = Record::new(i as u64 + 1, "x".repeat(len)).kind(kind);
            if matches!(kind, Kind::ToolCall | Kind::ToolResult) {
                r.tool("bash")
            } else {
                r
            }
        })
        .collect();
    CostedHistory::new(&History::new("h", records), model)
}

/// `n` records of `kind`, `len` chars each.
pub fn many(kind: Kind, n: usize, len: usize) -> Vec<(Kind, usize)> {
    vec![(kind, len); n]
}

pub use crate::common::records::cell;

/// The history replayed as a session on a window of `window`.
pub fn replay(h: &CostedHistory, spec: &str, window: u64) -> (SessionMetrics, Trace) {
    crate::common::records::session(spec, h, window)
}

pub fn verbatim(range: std::ops::Range<usize>) -> Vec<Item> {
    range.map(Item::Verbatim).collect()
}

/// The range of the context's one summary.
pub fn summary_of(ctx: &Context) -> Option<(usize, usize)> {
    let mut spans = ctx.items.iter().filter_map(|i| match *i {
        Item::Summary { first, end, .. } => Some((first, end)),
        _ => None,
    });
    let span = spans.next();
    assert!(spans.next().is_none(), "one summary");
    span
}

/// The agent calls (1-based) before which a compaction ran.
pub fn compacted_before(t: &Trace) -> Vec<u32> {
    t.compactions.iter().map(|k| k.before_call).collect()
}
