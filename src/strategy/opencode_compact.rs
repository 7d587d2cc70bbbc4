//! `opencode_compact(max_output=32000, prune=false)`: OpenCode's session compaction, from
//! `sst/opencode` @ 31e22f65a23c498639b8cef24b90e6ae193cdcb6 (the newest version of these files
//! the search store holds; the store keeps no date for it, and the same snapshot holds a
//! database migration dated 2026-09-13): `packages/opencode/src/session/compaction.ts` (the
//! summary, its kept tail and the pruning), `packages/opencode/src/session/overflow.ts` (the
//! trigger), `packages/opencode/src/session/prompt.ts` @ 00d0a710 (when each runs) and
//! `packages/core/src/v1/config/config.ts` (the defaults).
//!
//! - **Trigger** (`overflow.ts`, `isOverflow`): after each step OpenCode compares the last
//!   finished call's tokens (its input, output and cache reads and writes: the call's whole
//!   usage) with `usable = context − maxOutputTokens − reserved`, where `maxOutputTokens` is
//!   the model's output limit capped at `OUTPUT_TOKEN_MAX = 32 000` and `reserved` defaults to
//!   `min(COMPACTION_BUFFER = 20 000, maxOutputTokens)`; `count >= usable` compacts before the
//!   next call. `max_output` is the model's output limit as OpenCode caps it (default 32 000,
//!   what every current large model reaches); a model with an input limit of its own
//!   (`limit.input`) is not modelled. A window of at most `max_output + reserved` leaves no
//!   usable context (OpenCode would compact before every call): a session refuses it, naming
//!   the smallest window that works, and a cell there is infeasible. A context the provider
//!   refuses is compacted at once and the call sent again (`result === "compact"` in
//!   `prompt.ts`); OpenCode then moves the last user message after the summary, which a replay
//!   cannot (the records keep their order).
//! - **The kept tail** (`select`, `splitTurn`): the newest whole turns (a turn is a user message
//!   and the messages after it) that fit `preserve_recent_tokens`, by default
//!   `min(15 000, max(2 000, ⌊usable / 4⌋))`, newest first; the first turn that does not fit is
//!   split at the first of its later messages whose suffix fits what is left, and the selection
//!   stops there. `tail_turns` limits how many turns are considered (unlimited by default, 0:
//!   none). A tail that would start at the first message is no tail. A message is a user
//!   message or an agent call with its tool results (OpenCode keeps tool outputs inside the
//!   assistant message). Sizes are the cost model's (OpenCode estimates ¼ of the characters of
//!   the messages as JSON).
//! - **The summary**: everything between the system records and the tail, the previous summary
//!   included (OpenCode passes it as the `<prior-summary>`), becomes one summary, followed by
//!   the tail verbatim (`filterCompacted` sends the summary, then the tail). OpenCode also sends
//!   a short "Continue if you have next steps" user message after an automatic compaction; it
//!   is not in a replayed transcript, so the turn it opens is taken to start at the summary.
//!   The summary call is OpenCode's default `prepend` request: a prompt of its own with no
//!   system prompt and no tools ([`PROMPT_TOKENS`]: the `<conversation>` wrapper, the
//!   instruction and `SUMMARY_TEMPLATE`, ≈ 1 315 characters, ¼ of them), the summarised records
//!   and the previous summary, no shared cache; OpenCode cuts each tool output to 2 000
//!   characters in that prompt, which is not modelled, so its input here is an upper bound.
//!   Summary size: [`SummaryRule`] parameters; OpenCode fixes none, so the default ratio is
//!   the one measured on real Claude Code summaries (4.2 %), an assumption, capped at the
//!   model's output (`max_output`, the call's default `maxOutputTokens`).
//! - **Pruning** (`prune`, opt-in: `compaction.prune` defaults to false at this commit): when
//!   the agent's loop ends (`prompt.ts` calls it after the loop; here: when a user message
//!   follows the agent's last call, over the records before that message), walking back from
//!   the newest message, the two newest user turns are skipped; then every completed tool
//!   output, newest first, counts towards a protected 40 000 (`PRUNE_PROTECT`) and those past
//!   it are marked; the walk stops at a summary or at an output pruned before; the marked
//!   outputs are pruned only if they add up to more than 20 000 (`PRUNE_MINIMUM`). A pruned
//!   output is sent as `[Old tool result content cleared]`. Outputs of the `skill` tool are
//!   never pruned. The failed tool outputs OpenCode skips are counted here like the others.
//! - The newer session runner in `packages/core/src/session/compaction.ts` (keep 8 000 tokens,
//!   no pruning) is a separate path, not the one `prompt.ts` runs; it is not followed.

use super::preset::{at_least, fits, is_stand_in, stand_in_cost};
use super::rule::{RuleSpec, Tail};
use super::summary_preset::{
    last_call_cost, leading_systems, push_if, push_marked, push_summary, unchanged,
};
use super::turns::{message_starts, turn_end};
use super::{spec, Context, Head, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

/// `OUTPUT_TOKEN_MAX`: the cap OpenCode puts on a model's output limit.
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;
/// `COMPACTION_BUFFER`: `reserved` is the smaller of it and the output limit.
pub const COMPACTION_BUFFER: u64 = 20_000;
/// `MIN_PRESERVE_RECENT_TOKENS`, `MAX_PRESERVE_RECENT_TOKENS`.
pub const MIN_PRESERVE: u64 = 2_000;
pub const MAX_PRESERVE: u64 = 15_000;
/// `PRUNE_PROTECT`, `PRUNE_MINIMUM`.
pub const PRUNE_PROTECT: u64 = 40_000;
pub const PRUNE_MINIMUM: u64 = 20_000;
/// `PRUNE_PROTECTED_TOOLS`.
pub const PROTECTED_TOOLS: [&str; 1] = ["skill"];
/// What a pruned tool output is sent as.
pub const CLEARED: &str = "[Old tool result content cleared]";
/// The summary request's own text (`buildPrompt` with `SUMMARY_TEMPLATE`), ¼ of its 1 315
/// characters as OpenCode's `Token.estimate` counts.
pub const PROMPT_TOKENS: u64 = 329;

#[derive(Debug, Clone, PartialEq)]
pub struct OpenCodeCompact {
    /// The model's output limit as OpenCode caps it (`maxOutputTokens`).
    pub max_output: u64,
    /// `compaction.reserved` (`None`: `min(COMPACTION_BUFFER, max_output)`).
    pub reserved: Option<u64>,
    /// `compaction.preserve_recent_tokens` (`None`: a quarter of the usable context, clamped).
    pub preserve_recent_tokens: Option<u64>,
    /// `compaction.tail_turns` (`None`: every turn may be kept).
    pub tail_turns: Option<usize>,
    /// `compaction.prune`.
    pub prune: bool,
    pub summary: SummaryRule,
}

impl OpenCodeCompact {
    fn reserved(&self) -> u64 {
        self.reserved
            .unwrap_or(COMPACTION_BUFFER.min(self.max_output))
    }

    /// `usable`: what the window leaves once the output and the buffer are set aside (`None`:
    /// nothing, the window is too small).
    pub fn usable(&self, window: u64) -> Option<u64> {
        window
            .checked_sub(self.max_output + self.reserved())
            .filter(|&u| u > 0)
    }

    /// The budget of the kept tail.
    fn preserve(&self, usable: u64) -> u64 {
        self.preserve_recent_tokens
            .unwrap_or((usable / 4).clamp(MIN_PRESERVE, MAX_PRESERVE))
    }

    /// Marks in `pruned` the tool outputs OpenCode's `prune` clears at the end of the agent's
    /// loop; `false` (and nothing marked) when the loop has not ended or too little would go.
    fn mark_prune(&self, view: &View, pruned: &mut [bool]) -> bool {
        let kinds = view.kinds;
        let Some(end) = turn_end(kinds) else {
            return false;
        };
        let (mut turns, mut total, mut freed) = (0, 0u64, 0u64);
        for i in (0..end).rev() {
            match kinds[i] {
                Kind::User => turns += 1,
                _ if turns < 2 => {}
                Kind::Summary => break,
                Kind::ToolResult => {
                    if view.tools[i]
                        .as_deref()
                        .is_some_and(|t| PROTECTED_TOOLS.contains(&t))
                    {
                        continue;
                    }
                    if is_stand_in(view, i) {
                        break;
                    }
                    total += view.costs[i];
                    if total > PRUNE_PROTECT {
                        freed += view.costs[i];
                        pruned[i] = true;
                    }
                }
                _ => {}
            }
        }
        if freed > PRUNE_MINIMUM {
            true
        } else {
            pruned.fill(false);
            false
        }
    }

    /// Where the kept tail starts (`select`), `None` for no tail. Messages after the system
    /// records `from`; a turn starts at each user message and at a summary (the continuation
    /// OpenCode sends after it), which itself is not a message.
    fn tail_start(
        &self,
        view: &View,
        from: usize,
        usable: u64,
        cost: &dyn Fn(usize) -> u64,
    ) -> Option<usize> {
        let kinds = view.kinds;
        let n = view.len();
        let sep = view.separator;
        let span = |a: usize, b: usize| -> u64 {
            (a..b).map(cost).sum::<u64>() + sep * (b - a).saturating_sub(1) as u64
        };
        let budget = self.preserve(usable);
        let (mut total, mut keep, mut turns, mut end) = (0u64, None, 0, n);
        let starts = (from..n)
            .rev()
            .filter(|&i| matches!(kinds[i], Kind::User | Kind::Summary));
        for start in starts {
            if self.tail_turns.is_some_and(|k| turns == k) {
                break;
            }
            turns += 1;
            let continuation = kinds[start] == Kind::Summary;
            let first = if continuation { start + 1 } else { start };
            let stop = std::mem::replace(&mut end, start);
            if first >= stop {
                continue;
            }
            let size = span(first, stop);
            if total + size <= budget {
                total += size;
                keep = Some(first);
                continue;
            }
            // `splitTurn`: the oldest of the turn's later messages (the user message, real or
            // not, excluded) whose suffix fits what is left; suffixes only grow backwards.
            let remaining = budget - total;
            let mut suffix = 0u64;
            let mut next = stop;
            for m in message_starts(kinds, first, stop, false).rev() {
                if m == first && !continuation {
                    break;
                }
                suffix += span(m, next) + if next < stop { sep } else { 0 };
                next = m;
                if suffix > remaining {
                    break;
                }
                keep = Some(m);
            }
            break;
        }
        // A tail from the very first message would leave nothing to summarise: none.
        let first_message = (from..n).find(|&i| kinds[i] != Kind::Summary);
        keep.filter(|&k| Some(k) != first_message)
    }

    /// The compaction: the system records, one summary of everything up to the tail, the tail.
    fn summarise(
        &self,
        view: &View,
        (capacity, usable): (u64, u64),
        pruned: &[bool],
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let cleared = view.model.cost(CLEARED);
        let cost = |i: usize| {
            if pruned[i] {
                stand_in_cost(view, i, || cleared)
            } else {
                view.costs[i]
            }
        };
        let from = leading_systems(view.kinds);
        let end = self.tail_start(view, from, usable, &cost).unwrap_or(n);
        if end <= from {
            return unchanged(view, capacity, out);
        }
        for i in 0..from {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        let replaced = (from..end).map(cost).sum::<u64>()
            + view.separator * (end - from).saturating_sub(1) as u64;
        let budget = self.summary.size.cost(replaced);
        let carried = |i: usize| !pruned[i] && !is_stand_in(view, i);
        push_summary(
            &self.summary,
            view,
            (from, end),
            carried,
            budget,
            stream,
            out,
        );
        for (i, &p) in pruned.iter().enumerate().take(n).skip(end) {
            let item = if p {
                Item::Placeholder(i)
            } else {
                Item::Verbatim(i)
            };
            out.push(item, cost(i), view.separator);
        }
        fits(out, capacity)
    }
}

impl RuleSpec for OpenCodeCompact {
    const NAME: &'static str = "opencode_compact";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);
    // For `inspect`: pruned tool outputs stand in as OpenCode's cleared-content text.
    const STAND_IN: &'static str = "cleared";

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let max_output =
            at_least(p, "max_output", 1, " tokens")?.map_or(OUTPUT_TOKEN_MAX, |v| v as u64);
        Ok(OpenCodeCompact {
            max_output,
            reserved: p.u64("reserved")?,
            preserve_recent_tokens: p.u64("preserve_recent_tokens")?,
            tail_turns: p.usize("tail_turns")?,
            prune: p.bool("prune")?.unwrap_or(false),
            summary: SummaryRule::from_params_or(
                p,
                super::claude_code_compact::SUMMARY_RATIO,
                max_output,
            )?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "max_output", self.max_output, OUTPUT_TOKEN_MAX);
        if let Some(r) = self.reserved {
            params.push(format!("reserved={r}"));
        }
        if let Some(t) = self.preserve_recent_tokens {
            params.push(format!("preserve_recent_tokens={t}"));
        }
        if let Some(t) = self.tail_turns {
            params.push(format!("tail_turns={t}"));
        }
        push_if(params, "prune", self.prune, false);
        self.summary.push_params_or(
            params,
            super::claude_code_compact::SUMMARY_RATIO,
            self.max_output,
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
        let Some(usable) = self.usable(capacity + out.head_cost) else {
            // OpenCode is undefined on this window (see the module documentation).
            return Outcome::Infeasible;
        };
        // `out.chosen` holds the pruned outputs (taken while the context is written).
        let mut pruned = std::mem::take(&mut out.chosen);
        let did_prune = self.prune && self.mark_prune(&view, &mut pruned[..view.len()]);
        let outcome =
            if out.from_session.condensation_requested || last_call_cost(&view, out) >= usable {
                self.summarise(&view, (capacity, usable), &pruned, stream, out)
            } else if did_prune {
                let cleared = view.model.cost(CLEARED);
                push_marked(&view, &pruned[..view.len()], cleared, capacity, out)
            } else {
                unchanged(&view, capacity, out)
            };
        out.chosen = pruned;
        outcome
    }

    fn when(&self) -> Option<When> {
        // The rule checks the last call's usage and the loop's end itself.
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
        let reserve = self.max_output + self.reserved();
        match self.usable(window) {
            Some(_) => Ok(()),
            None => Err(format!(
                "OpenCode's usable context, the window less {reserve} (the model's output limit \
                 {} and the compaction buffer {}), is not positive on a window of {window}: the \
                 smallest window it is defined on is {}",
                self.max_output,
                self.reserved(),
                reserve + 1
            )),
        }
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
