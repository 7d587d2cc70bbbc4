//! `codex_compact(user_tokens=20000, threshold=0.9)`: Codex's local ("inline") auto-compaction,
//! `openai/codex` `codex-rs/core/src/compact.rs`. Of the two versions the research read this
//! follows the OLD one (@ `0100b103`), where the initial context goes first:
//! `history = initial_context ++ selected user messages ++ [user(SUMMARY_PREFIX + summary)]`.
//! (The NEW one, @ `e06dd0e5`, leaves the initial context out of a pre-turn replacement and
//! re-injects it at the next turn, or splices it before the last user message mid-turn; for
//! OpenAI providers it compacts server-side instead: `codex_compact_2026` replays it.)
//!
//! - **Trigger** (`When::LastCall(threshold)`, default 0.9): `auto_compact_token_limit`
//!   defaults to `context_window * 9 / 10` (`codex-rs/protocol/src/openai_models.rs` @
//!   `0d4367d`), compared right after each sampling request with `get_total_token_usage()`,
//!   the tokens the last response reported (its input and output,
//!   `codex-rs/core/src/codex.rs`, `token_limit_reached = total_usage_tokens >=
//!   auto_compact_limit`): the tool outputs appended after that call do not count yet. After a
//!   compaction Codex recomputes the usage from the new history (`recompute_token_usage`), so
//!   a session takes the compacted context as the usage until the next call. In a cell (no
//!   calls) the usage is the cost up to the end of the last agent call's output.
//! - **Initial context**: the leading `system` records (Codex's developer/permissions,
//!   `AGENTS.md` and environment-context messages are not user messages and go first). The
//!   preset's default head is therefore no head at all (`keep_first=0`): the task is a real user
//!   message, kept when it is among the newest user messages that fit, as in Codex.
//! - **User messages**: the records of kind `user` after the initial context (not tool results,
//!   not assistant records, not earlier summaries, which `collect_user_messages` skips), newest
//!   first while they fit `user_tokens` (`COMPACT_USER_MESSAGE_MAX_TOKENS`, a constant in
//!   Codex). A message costs `ceil(chars / 4)` — Codex's `approx_token_count` is
//!   `ceil(utf8 bytes / 4)`; the view has chars, not bytes, which agree for ASCII text — not the
//!   cost model's tokens, since the budget is Codex's own estimate.
//! - **The one that does not fit** (`build_compacted_history_with_limit`): Codex keeps it,
//!   middle-truncated to the tokens left (`truncate_text(message, Tokens(remaining))`), and
//!   stops: older user messages are left out. Here it is a stand-in in its place among the kept
//!   messages, costing the share of the record that `remaining` of its `approx_tokens` keep,
//!   `ceil(cost × remaining / tokens)`, plus the truncation marker (`…N tokens truncated…`,
//!   wording approximated); it carries nothing verbatim, and the summary stands for it like any
//!   unselected record.
//! - **Summary**: one summary of everything else (assistant records, tool calls and results,
//!   unselected user messages, earlier summaries), placed **last**, after the kept user messages
//!   — so its range `first..end` encloses the kept user messages it does not carry
//!   (`summary_kept` is false for them). It is one model call with the whole context as input.
//!   Nothing to summarise (only user messages left) leaves the context unchanged.
//! - **Summary size and writer**: [`SummaryRule`] parameters, `summariser=NAME` included (default
//!   `simulated`); Codex fixes no size. The summary call is the whole history plus the
//!   summarisation prompt (`history.record_items(prompt)`, then one sampling request), with the
//!   agent's cache: the default [`SummaryCall::WholeContext`](super::SummaryCall).

use super::summary_preset::{
    fits, joined, leading_systems, push_if, push_summary, reached, share, unchanged,
};
use super::{spec, Context, Head, Item, Outcome, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

pub const DEFAULT_USER_TOKENS: u64 = 20_000;
pub const DEFAULT_THRESHOLD: f64 = 0.9;

/// Codex's token estimate of a text of `chars` characters (`APPROX_BYTES_PER_TOKEN = 4`).
pub fn approx_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

#[derive(Debug, Clone, PartialEq)]
pub struct CodexCompact {
    pub user_tokens: u64,
    pub threshold: f64,
    pub summary: SummaryRule,
}

/// `build_compacted_history_with_limit`'s selection: marks in `out.chosen` the newest user
/// messages of `range` that fit `budget` tokens, and returns the one Codex truncates to what is
/// left (its index and the tokens it keeps).
pub fn select_user_messages(
    view: &View,
    range: std::ops::Range<usize>,
    budget: u64,
    out: &mut Context,
) -> Option<(usize, u64)> {
    let mut remaining = budget;
    for i in range.rev() {
        if view.kinds[i] != Kind::User {
            continue;
        }
        if remaining == 0 {
            break;
        }
        let t = approx_tokens(view.chars[i]);
        if t > remaining {
            return Some((i, remaining));
        }
        out.chosen[i] = true;
        remaining -= t;
    }
    None
}

/// What user message `i`, middle-truncated to `kept` of its tokens, costs: the kept share of
/// its cost and the marker Codex puts in the middle.
pub fn truncated_cost(view: &View, i: usize, kept: u64, out: &mut Context) -> u64 {
    use std::fmt::Write as _;
    let tokens = approx_tokens(view.chars[i]);
    out.text.clear();
    let _ = write!(out.text, "…{} tokens truncated…", tokens - kept);
    let marker = view.model.cost(&out.text);
    let share = (u128::from(view.costs[i]) * u128::from(kept)).div_ceil(u128::from(tokens));
    share as u64 + marker
}

impl super::rule::RuleSpec for CodexCompact {
    const NAME: &'static str = "codex_compact";
    // For `inspect`: the one stand-in is a user message truncated in the middle.
    const STAND_IN: &'static str = "truncated";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(CodexCompact {
            user_tokens: p.u64("user_tokens")?.unwrap_or(DEFAULT_USER_TOKENS),
            threshold: share(p, "threshold")?.unwrap_or(DEFAULT_THRESHOLD),
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "user_tokens", self.user_tokens, DEFAULT_USER_TOKENS);
        push_if(params, "threshold", self.threshold, DEFAULT_THRESHOLD);
        self.summary.push_params(params);
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        let systems = leading_systems(view.kinds);
        if !reached(When::LastCall(self.threshold), &view, capacity, out) {
            return unchanged(&view, capacity, out);
        }
        let truncated = select_user_messages(&view, systems..n, self.user_tokens, out);
        if (systems..n).all(|i| out.chosen[i]) {
            return unchanged(&view, capacity, out);
        }
        let truncated = truncated.map(|(i, kept)| (i, truncated_cost(&view, i, kept, out)));
        for i in 0..n {
            if i < systems || out.chosen[i] {
                out.push(Item::Verbatim(i), view.costs[i], sep);
            } else if let Some((t, cost)) = truncated.filter(|&(t, _)| t == i) {
                out.push(Item::Placeholder(t), cost, sep);
            }
        }
        let chosen = std::mem::take(&mut out.chosen);
        let replaced = joined(
            sep,
            (systems..n).filter(|&i| !chosen[i]).map(|i| view.costs[i]),
        );
        let cost = self.summary.size.cost(replaced);
        push_summary(
            &self.summary,
            &view,
            (systems, n),
            |i| !chosen[i],
            cost,
            stream,
            out,
        );
        out.chosen = chosen;
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::LastCall(self.threshold))
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
