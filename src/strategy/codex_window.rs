//! When Codex compacts now: the token status of `codex-rs/core/src/session/context_window.rs`
//! (`openai/codex` @ faae6d98619eacda6089e6e9f3b3ce39be2b895f, after openai/codex#29665 of
//! 2026-06-23) on the usage `ContextManager::get_total_token_usage` reports
//! (`codex-rs/core/src/context_manager/history.rs` @ a20bf059710752cb1606ac1635ab8af68b214afe),
//! read at one check of the preset `codex_compact_2026`.
//!
//! - **Usage** (`get_total_token_usage`): the tokens the last response reported (its input and
//!   output) plus Codex's estimate of the items recorded after the last model-generated item —
//!   the tool outputs that came back since, at `ceil(bytes / 4)` each
//!   (`estimate_item_token_count`; the record's characters here, not its serialised JSON).
//! - **Where the check sits** (`session/turn.rs` @ 000c857ecc17e5ab40a985bdaa40816450ee5ebf,
//!   `run_turn`): after a sampling request that needs a follow-up, *mid-turn*; or before a new
//!   user turn is recorded, *pre-turn*, the incoming user message not yet in the history nor
//!   in the usage. A check whose view holds a `user` record after the last agent call is the
//!   pre-turn one; every other check is mid-turn (a check always precedes a further call).
//! - **UsageScope `total`** (the default): compact when the usage reaches the auto-compact limit,
//!   `min(model_auto_compact_token_limit, context_window × 9 / 10)`
//!   (`ModelInfo::auto_compact_token_limit`, the configured limit clamped to the window).
//! - **UsageScope `body_after_prefix`** (openai/codex#22870, 2026-05-15): only what was added after the
//!   window's prefill counts — the usage less the input of the first call of the current
//!   compaction window (the session's first call, or the first call after the last compaction);
//!   the limit is the configured one unclamped (else 90 % of the window); and the usage
//!   reaching the usable window, `context_window × effective_context_window_percent / 100`,
//!   compacts whatever the scope.

use super::codex_compact::approx_tokens;
use super::{floor_threshold, View};
use crate::history::Kind;

/// Which usage the auto-compact limit is counted against (`AutoCompactTokenLimitScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageScope {
    Total,
    BodyAfterPrefix,
}

/// Where a check sits and what Codex counts there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// The history a compaction here works on is `0..stop`; from `stop` on come the incoming
    /// user message and what follows it (pre-turn), or nothing (mid-turn).
    pub stop: usize,
    pub pre_turn: bool,
    /// `get_total_token_usage` at the check.
    pub usage: u64,
    /// The input of the first call of the current compaction window, if one was made.
    pub prefill: Option<u64>,
}

/// The joined cost of the view's first `end` records (a call's input when its output starts
/// there).
fn prefix_cost(view: &View, end: usize) -> u64 {
    view.span_cost(0..end)
}

fn is_output(kind: Kind) -> bool {
    matches!(kind, Kind::Assistant | Kind::ToolCall)
}

/// Reads the check of `view` (the context before the next agent call).
pub fn check(view: &View) -> Check {
    let n = view.len();
    let kinds = view.kinds;
    let out_end = kinds
        .iter()
        .rposition(|&k| is_output(k))
        .map_or(0, |r| r + 1);
    let incoming = (out_end..n).find(|&i| kinds[i] == Kind::User);
    let stop = incoming.unwrap_or(n);
    // No response yet: Codex has no usage to report and counts nothing after it.
    // The provider's usage counts what every call sends ahead of the view too.
    let usage = if out_end == 0 {
        0
    } else {
        view.fixed_prefix
            + prefix_cost(view, out_end)
            + (out_end..stop)
                .map(|i| approx_tokens(view.chars[i]))
                .sum::<u64>()
    };
    // The current window starts after the last summary; its prefill is the first call's input.
    let from = kinds[..stop]
        .iter()
        .rposition(|&k| k == Kind::Summary)
        .map_or(0, |s| s + 1);
    let prefill = (from..stop)
        .find(|&i| is_output(kinds[i]))
        .map(|first| view.fixed_prefix + prefix_cost(view, first));
    Check {
        stop,
        pre_turn: incoming.is_some(),
        usage,
        prefill,
    }
}

/// The limits of one check: the auto-compact limit (`threshold` of the window, the configured
/// `limit` if any) and the usable window (`effective_percent` of it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactLimits {
    pub scope: UsageScope,
    pub threshold: f64,
    pub limit: Option<u64>,
    pub effective_percent: u64,
}

impl CompactLimits {
    /// `token_limit_reached` of `context_window_token_status`.
    pub fn reached(&self, check: &Check, window: u64) -> bool {
        let context_limit = floor_threshold(window, self.threshold);
        match self.scope {
            UsageScope::Total => {
                let limit = self.limit.map_or(context_limit, |l| l.min(context_limit));
                check.usage >= limit
            }
            UsageScope::BodyAfterPrefix => {
                let baseline = check.prefill.unwrap_or(check.usage);
                let scope_tokens = check.usage.saturating_sub(baseline);
                let full = window * self.effective_percent / 100;
                scope_tokens >= self.limit.unwrap_or(context_limit) || check.usage >= full
            }
        }
    }

    /// `model_context_window()`: the window less what the model keeps for itself.
    pub fn usable(&self, window: u64) -> u64 {
        window * self.effective_percent / 100
    }
}
