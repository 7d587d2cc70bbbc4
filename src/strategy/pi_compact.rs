//! `pi_compact(reserve_tokens=16384, keep_recent_tokens=20000)`: the compaction of pi's coding
//! agent, `badlogic/pi-mono` @ 83378aad7e74a0e2bb8f37c007a9685fb4609d8a (2026-03-15, the newest
//! commit the search store holds): `packages/coding-agent/src/core/compaction/compaction.ts`
//! (`DEFAULT_COMPACTION_SETTINGS`, `shouldCompact`, `findCutPoint`, `prepareCompaction`,
//! `compact`), `packages/coding-agent/src/core/agent-session.ts` (`_checkCompaction`: when)
//! and `packages/coding-agent/src/core/session-manager.ts` (`buildSessionContext`: what the
//! model sees after).
//!
//! - **Trigger.** `contextTokens > contextWindow − reserveTokens`, where `contextTokens` is the
//!   last call's usage (input, output and cache reads and writes), checked when the agent's
//!   loop ends (`agent_end`) and before a new prompt is sent: here, when a user message follows
//!   the agent's last call. A one-prompt run never reaches that point, so there pi compacts only
//!   on overflow: a context the provider refuses is compacted at once and the call sent again,
//!   once (`_overflowRecoveryAttempted`). In a cell the overflow is the history exceeding the
//!   capacity. A window of at most `reserve_tokens` is refused, naming the smallest that works.
//! - **Cut point** (`findCutPoint`). Over the messages since the last compaction, walking back
//!   from the newest and adding each message's size, the first message at which the sum
//!   reaches `keep_recent_tokens` fixes the cut: the nearest valid cut point at or after it
//!   (a user message or an assistant message, never a tool result, which stays with its call);
//!   if the sum never gets there, or no cut point follows, the cut is the first valid one
//!   (everything is kept). A message is a user message, an agent call's output (its text and
//!   tool calls) or one tool result. Sizes are the cost model's (pi estimates ¼ of the
//!   characters). A cut inside a turn (at an assistant message) is a split turn: pi summarises
//!   the turn's prefix in a second, parallel call and merges both summaries into one; here it
//!   is one summary of everything before the cut, billed as one call.
//! - **Result** (`buildSessionContext`): the system records, the summary, then the messages
//!   from the cut on. **What the previous compaction kept is not summarised again**: pi
//!   summarises only the messages after its previous compaction entry (`boundaryStart`) together
//!   with the previous summary, and the context it rebuilds starts at the new cut, so the
//!   messages the previous compaction kept verbatim are dropped without being summarised. The
//!   session tells the rule what its last compaction left
//!   ([`Context::from_session`](crate::context::FromSession::left_by_compaction)).
//! - **Summary call** (`generateSummary`): pi's own system prompt and instruction
//!   ([`PROMPT_TOKENS`]: `SUMMARIZATION_SYSTEM_PROMPT`, `SUMMARIZATION_PROMPT` and the
//!   `<conversation>` wrapper, 1 229 characters, ¼ of them), the summarised messages and the
//!   previous summary, no shared cache; pi cuts each tool result to 2 000 characters in that
//!   prompt, which is not modelled (the call's input here is an upper bound, and counts the
//!   dropped records the summary no longer carries). Summary size: [`SummaryRule`] parameters;
//!   pi caps its output at `⌊0.8 × reserve_tokens⌋` (13 107), the default `summary_max`; pi
//!   fixes no size, so the default ratio is the one measured on real Claude Code summaries
//!   (4.2 %), an assumption. The read and modified file lists pi appends to it are not modelled.

use super::preset::{fits, is_stand_in};
use super::rule::{RuleSpec, Tail};
use super::summary_preset::{
    last_call_cost, leading_systems, push_if, push_summary, unchanged, whole_cost,
};
use super::turns::{opens_message, turn_end};
use super::{spec, Context, Head, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

/// `DEFAULT_COMPACTION_SETTINGS.reserveTokens`.
pub const RESERVE_TOKENS: u64 = 16_384;
/// `DEFAULT_COMPACTION_SETTINGS.keepRecentTokens`.
pub const KEEP_RECENT_TOKENS: u64 = 20_000;
/// The summary request's own text, ¼ of its 1 229 characters as pi's `estimateTokens` counts.
pub const PROMPT_TOKENS: u64 = 308;

#[derive(Debug, Clone, PartialEq)]
pub struct PiCompact {
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
    pub summary: SummaryRule,
}

/// `generateSummary`'s `maxTokens`: 0.8 of the reserve.
fn summary_cap(reserve: u64) -> u64 {
    reserve * 4 / 5
}

impl PiCompact {
    /// `findCutPoint` over records `start..end`: the first record kept.
    fn cut_point(&self, view: &View, start: usize, end: usize) -> usize {
        let kinds = view.kinds;
        let opens = |i: usize| i == start || opens_message(kinds, i, true);
        // A user message or an agent call's output, never a tool result.
        let valid = |i: usize| {
            opens(i)
                && matches!(
                    kinds[i],
                    Kind::User | Kind::Summary | Kind::Assistant | Kind::ToolCall
                )
        };
        let Some(first) = (start..end).find(|&i| valid(i)) else {
            return start;
        };
        // Back from the newest record, message by message (a gap inside a message counts).
        let mut sum = 0;
        for i in (start..end).rev() {
            sum += view.costs[i];
            if i + 1 < end && !opens(i + 1) {
                sum += view.separator;
            }
            if opens(i) && sum >= self.keep_recent_tokens {
                return (i..end).find(|&c| valid(c)).unwrap_or(first);
            }
        }
        first
    }

    /// The compaction: the system records, one summary standing for the previous summary and the
    /// messages since the last compaction up to the cut, then the messages from the cut on.
    fn compact(&self, view: &View, capacity: u64, stream: u64, out: &mut Context) -> Outcome {
        let n = view.len();
        let kinds = view.kinds;
        let from = leading_systems(kinds);
        let boundary = out
            .from_session
            .left_by_compaction
            .saturating_sub(out.head_len)
            .clamp(from, n);
        // The previous summary opens what the last compaction left.
        let previous = (from < boundary && kinds[from] == Kind::Summary).then_some(from);
        if boundary >= n {
            // Nothing since the last compaction ("Already compacted").
            return unchanged(view, capacity, out);
        }
        let cut = self.cut_point(view, boundary, n);
        if cut == boundary && previous.is_none() {
            return unchanged(view, capacity, out);
        }
        for i in 0..from {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        let summarised = |i: usize| i >= boundary || Some(i) == previous;
        let carried = |i: usize| summarised(i) && !is_stand_in(view, i);
        let (sum, count) = (from..cut)
            .filter(|&i| summarised(i))
            .fold((0, 0u64), |(s, c), i| (s + view.costs[i], c + 1));
        let replaced = sum + view.separator * count.saturating_sub(1);
        let budget = self.summary.size.cost(replaced);
        push_summary(
            &self.summary,
            view,
            (from, cut),
            carried,
            budget,
            stream,
            out,
        );
        for i in cut..n {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        fits(out, capacity)
    }
}

impl RuleSpec for PiCompact {
    const NAME: &'static str = "pi_compact";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let reserve_tokens = p.u64("reserve_tokens")?.unwrap_or(RESERVE_TOKENS);
        Ok(PiCompact {
            reserve_tokens,
            keep_recent_tokens: p.u64("keep_recent_tokens")?.unwrap_or(KEEP_RECENT_TOKENS),
            summary: SummaryRule::from_params_or(
                p,
                super::claude_code_compact::SUMMARY_RATIO,
                summary_cap(reserve_tokens),
            )?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(
            params,
            "reserve_tokens",
            self.reserve_tokens,
            RESERVE_TOKENS,
        );
        push_if(
            params,
            "keep_recent_tokens",
            self.keep_recent_tokens,
            KEEP_RECENT_TOKENS,
        );
        self.summary.push_params_or(
            params,
            super::claude_code_compact::SUMMARY_RATIO,
            summary_cap(self.reserve_tokens),
        );
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let window = capacity + out.head_cost;
        if window <= self.reserve_tokens {
            // pi is undefined on this window (see the module documentation).
            return Outcome::Infeasible;
        }
        let overflow = out.from_session.condensation_requested || whole_cost(&view, out) > window;
        let threshold = turn_end(view.kinds).is_some()
            && last_call_cost(&view, out) > window - self.reserve_tokens;
        if overflow || threshold {
            self.compact(&view, capacity, stream, out)
        } else {
            unchanged(&view, capacity, out)
        }
    }

    fn when(&self) -> Option<When> {
        // The rule checks the loop's end and the last call's usage itself.
        Some(When::EveryCall)
    }

    fn summary_call(&self) -> SummaryCall {
        SummaryCall::Separate {
            prompt: PROMPT_TOKENS,
            calls: 1,
            cached: false,
        }
    }

    fn honours_condensation_request(&self) -> bool {
        true
    }

    fn check_window(&self, window: u64) -> Result<(), String> {
        if window > self.reserve_tokens {
            return Ok(());
        }
        Err(format!(
            "pi compacts when the context passes the window less its reserve of {}, which is not \
             positive on a window of {window}: the smallest window it is defined on is {}",
            self.reserve_tokens,
            self.reserve_tokens + 1
        ))
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
