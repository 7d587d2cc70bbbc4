//! Small histories for the golden cases of the harness presets: records of given kinds and
//! texts under the chars cost model (a record costs its characters, a gap between two costs 1),
//! and one cell or one session of a preset on them.

use ctxlab::context::{Context, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record, Time};
use ctxlab::session::{simulate_with, SessionConfig, SessionMetrics, SessionScratch, Trace};
use ctxlab::view::View;
use ctxlab::{CostModel, Strategy};

/// A record of `kind` holding `text`; tool calls and results are of the tool `bash`.
pub fn rec(kind: Kind, text: impl Into<String>) -> Record {
    let r = Record::new(0, text).kind(kind);
    match kind {
        Kind::ToolCall | Kind::ToolResult => r.tool("bash"),
        _ => r,
    }
}

/// A record of `kind` holding `n` times `x`.
pub fn xs(kind: Kind, n: usize) -> Record {
    rec(kind, "x".repeat(n))
}

/// The same record written `seconds` after the epoch.
pub fn at(r: Record, seconds: i64) -> Record {
    r.at(Time(seconds * 1000))
}

/// The records as one history (ids renumbered 1, 2, …), costed in characters.
pub fn costed(records: Vec<Record>) -> CostedHistory {
    let records = records
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.id = i as u64 + 1;
            r
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// One cell of `spec` on the whole history under `capacity`; `requested` as when the provider
/// refused the context (a condensation request).
pub fn cell(spec: &str, h: &CostedHistory, capacity: u64, requested: bool) -> (Outcome, Context) {
    let s = Strategy::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut ctx = Context::default();
    ctx.from_session.condensation_requested = requested;
    let keep = s.effective_keep_recent(None);
    let o = s.apply(View::new(h, &h.truth), capacity, keep, 7, &mut ctx);
    (o, ctx)
}

/// One session of `spec` on a window of `window`, with its trace.
pub fn session(spec: &str, h: &CostedHistory, window: u64) -> (SessionMetrics, Trace) {
    let s = Strategy::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let cfg = SessionConfig {
        window,
        ..SessionConfig::default()
    };
    let mut trace = Trace::default();
    let m = simulate_with(
        h,
        &h.truth,
        &s,
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    (m, trace)
}
