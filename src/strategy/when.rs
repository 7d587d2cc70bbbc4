//! When a harness compacts, for strategies that carry their harness's own rule for it (the
//! presets). A session uses it in place of its `window × ratio` threshold; a cell has no time
//! and ignores it.

/// A preset's trigger, checked before each agent call (after the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// Before every call: a per-call view of the history (SWE-agent's history processors,
    /// OpenHands' masking and recent-events condensers, Anthropic's server-side clearing).
    EveryCall,
    /// When the context the next call would send reaches this many units of the cost model.
    Tokens(u64),
    /// When it reaches this share of the window.
    Share(f64),
    /// When the last agent call's usage (its input and output) reaches this share of the
    /// window (Codex reads the usage the last response reported).
    LastCall(f64),
    /// When it reaches the window less this many units (Claude Code's reserves); undefined on a
    /// window of at most this many, which the strategy refuses.
    Below(u64),
    /// When the context holds more than this many entries (events, as OpenHands counts them).
    Events(usize),
}

/// `ceil(window × ratio)`, with products within floating-point noise of a whole number taken
/// as that number: a session's `window × ratio` threshold, and a preset's [`When::Share`].
pub fn threshold(window: u64, ratio: f64) -> u64 {
    let x = window as f64 * ratio;
    whole(x).unwrap_or(x.ceil() as u64)
}

/// `floor(window × ratio)`, with the same tolerance: a limit its harness computes in integers
/// (Codex's `context_window * 9 / 10`).
pub fn floor_threshold(window: u64, ratio: f64) -> u64 {
    let x = window as f64 * ratio;
    whole(x).unwrap_or(x.floor() as u64)
}

/// The whole number `x` is, within floating-point noise.
fn whole(x: f64) -> Option<u64> {
    let r = x.round();
    ((x - r).abs() <= 1e-9 * x.max(1.0)).then_some(r as u64)
}
