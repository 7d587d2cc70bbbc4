//! `gemini_cli_compress(threshold=0.5, preserve=0.3, tool_budget=50000, truncate_chars=40000)`:
//! Gemini CLI's chat compression, `google-gemini/gemini-cli`
//! `packages/core/src/context/chatCompressionService.ts` @ `5411f113` (before refactor
//! `fd5c103f99`, 2026-03-31: `packages/core/src/services/chatCompressionService.ts`).
//!
//! - **Trigger** (`When::Share(threshold)`): `lastPromptTokenCount >= threshold × tokenLimit`,
//!   checked before every user turn; `DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5` since
//!   c7b5dcd28f (0.7 before). Here: the context the next call would send against the window.
//! - **History**: the system instruction is outside Gemini's history and always stays; here the
//!   leading `system` records. Everything after them is history — the task included, which
//!   Gemini compresses with the rest — so the default head is none (`keep_first=0`).
//! - **1. Tool-output truncation** (`truncateHistoryToBudget`): tool results from the newest to
//!   the oldest add up their tokens; one that would take the sum over `tool_budget`
//!   (`COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET = 50 000`) is replaced by its first 20 % and
//!   last 80 % of `T = min(truncate_chars, 4 × (window − context))` characters
//!   (`DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 40 000`) under a header, and the stand-in's
//!   tokens are added instead. Modelled as a `Placeholder` whose cost is the header's cost plus
//!   the kept share of the record's cost, `ceil(cost × T / chars)`; the header's wording here is
//!   ours. Choices: tokens are the cost model's units (Gemini estimates chars/4); an output of at
//!   most `T` characters is left whole (a stand-in would only add the header); a stand-in from
//!   an earlier compression (no text in the view) is never truncated again and counts its cost.
//! - **2. Split** (`findCompressSplitPoint(history, 1 − preserve)`): the first user message that
//!   is not a tool response (here a `user` record, or an earlier summary, which Gemini inserts as
//!   a user message) at or after `(1 − preserve)` of the truncated history's size; Gemini counts
//!   JSON characters, here cost units (the view has no characters for stand-ins; under the chars
//!   cost model they are characters). None there: everything, when the last record is an
//!   assistant record (a model turn without a function call), else the last valid split point
//!   before the target, and none at all compresses nothing.
//! - **3. Summary** of everything before the split, placed right after the system records, the
//!   rest kept (with its truncated outputs). The summariser reads the untruncated records when
//!   they fit the window (`forSumm`), so the summary is sized from them, else from the
//!   truncated ones. Gemini makes **two** model calls (the `<state_snapshot>` and a self-check
//!   that may rewrite it), both on the history before the split under the compression system
//!   instruction (`getCompressionPrompt`, ≈ 3 000 characters, [`PROMPT_TOKENS`]), not under the
//!   agent's system prompt, so neither shares a prefix with the agent's calls; the self-check
//!   sends the first call's prompt again with its snapshot and writes the snapshot again. A
//!   session bills both so ([`SummaryCall::Separate`] with two calls): the second reads the
//!   first's prompt from the provider's prefix cache, and each writes the summary's cost.
//!   The fixed acknowledgement Gemini adds after the summary ("Got it. Thanks for the additional
//!   context!") and the fresh environment-context message are not modelled.
//! - **4. Rejected** when the new context would cost more than the old
//!   (`COMPRESSION_FAILED_INFLATED_TOKEN_COUNT`): the context is left unchanged, truncation
//!   included (infeasible when that does not fit). Gemini then remembers the failure
//!   (`hasFailedCompressionAttempt`, reset only by a new chat): every later automatic
//!   compression of the session skips the model and applies only the tool-output truncation
//!   (step 1), kept when it truncated something ([`Context::compression_failed_before`]; a
//!   cell has no earlier attempt).
//! - **Summary size and writer**: [`Summary`] parameters, `summariser=NAME` included (default `simulated`).

use super::summary_preset::{
    fits, joined, leading_systems, push_if, push_summary, reached, share, unchanged, whole_cost,
};
use super::{spec, Context, Head, Item, Outcome, Summary, SummaryCall, View, When};
use crate::error::ParseError;
use crate::history::Kind;
use crate::summariser::Summariser;

pub const DEFAULT_THRESHOLD: f64 = 0.5;
pub const DEFAULT_PRESERVE: f64 = 0.3;
pub const DEFAULT_TOOL_BUDGET: u64 = 50_000;
pub const DEFAULT_TRUNCATE_CHARS: u64 = 40_000;
/// The compression system instruction, about 3 000 characters: at 4 characters a token, 770
/// tokens (the self-check's short request is taken as part of it).
pub const PROMPT_TOKENS: u64 = 770;

#[derive(Debug, Clone, PartialEq)]
pub struct GeminiCliCompress {
    pub threshold: f64,
    pub preserve: f64,
    pub tool_budget: u64,
    pub truncate_chars: u64,
    pub summary: Summary,
}

/// What the header of a tool output truncated to `t` characters costs (the same for every
/// record: costed once per compaction, not per record, in the context's text buffer).
pub fn header_cost(view: &View, t: u64, out: &mut Context) -> u64 {
    use std::fmt::Write as _;
    let head = t / 5;
    out.text.clear();
    let _ = write!(
        out.text,
        "Output too large. Showing the first {head} and last {} characters; the full output was saved to a file.",
        t - head
    );
    view.model.cost(&out.text)
}

/// What a truncated tool output costs: its header (`header`, from [`header_cost`]) and the `t`
/// characters it keeps of the record's `chars`, at the record's own cost per character.
pub fn truncated_cost(view: &View, i: usize, t: u64, header: u64) -> u64 {
    let kept = (u128::from(view.costs[i]) * u128::from(t)).div_ceil(u128::from(view.chars[i]));
    header + kept as u64
}

impl GeminiCliCompress {
    /// Marks in `out.chosen` the tool results after `from` that truncation replaces, newest
    /// first against the budget, with `t` characters kept of each.
    fn truncate(&self, view: &View, from: usize, (t, header): (u64, u64), out: &mut Context) {
        let mut counter = 0u64;
        for i in (from..view.len()).rev() {
            if view.kinds[i] != Kind::ToolResult {
                continue;
            }
            let tokens = view.costs[i];
            if counter + tokens > self.tool_budget && view.chars[i] > t {
                out.chosen[i] = true;
                counter += truncated_cost(view, i, t, header);
            } else {
                counter += tokens;
            }
        }
    }

    /// The split point in `from..n` given each record's size after truncation (`n` compresses
    /// everything, `from` nothing).
    fn split(&self, view: &View, from: usize, size: &impl Fn(usize) -> u64) -> usize {
        let n = view.len();
        let total: u64 = (from..n).map(size).sum();
        let target = (1.0 - self.preserve) * total as f64;
        let mut cum = 0u64;
        let mut last = from;
        for i in from..n {
            if matches!(view.kinds[i], Kind::User | Kind::Summary) {
                if cum as f64 >= target {
                    return i;
                }
                last = i;
            }
            cum += size(i);
        }
        if view.kinds.last() == Some(&Kind::Assistant) {
            n
        } else {
            last
        }
    }
}

impl super::rule::RuleSpec for GeminiCliCompress {
    const NAME: &'static str = "gemini_cli_compress";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(GeminiCliCompress {
            threshold: share(p, "threshold")?.unwrap_or(DEFAULT_THRESHOLD),
            preserve: p
                .fraction("preserve", 0.0, 1.0)?
                .unwrap_or(DEFAULT_PRESERVE),
            tool_budget: p.u64("tool_budget")?.unwrap_or(DEFAULT_TOOL_BUDGET),
            truncate_chars: p.u64("truncate_chars")?.unwrap_or(DEFAULT_TRUNCATE_CHARS),
            summary: Summary::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "threshold", self.threshold, DEFAULT_THRESHOLD);
        push_if(params, "preserve", self.preserve, DEFAULT_PRESERVE);
        push_if(params, "tool_budget", self.tool_budget, DEFAULT_TOOL_BUDGET);
        push_if(
            params,
            "truncate_chars",
            self.truncate_chars,
            DEFAULT_TRUNCATE_CHARS,
        );
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
        if !reached(When::Share(self.threshold), &view, capacity, out) {
            return unchanged(&view, capacity, out);
        }
        let window = capacity + out.head_cost;
        let before = whole_cost(&view, out);
        let t = self.truncate_chars.min(4 * window.saturating_sub(before));
        let header = header_cost(&view, t, out);
        self.truncate(&view, systems, (t, header), out);
        let chosen = std::mem::take(&mut out.chosen);
        let size = |i: usize| {
            if chosen[i] {
                truncated_cost(&view, i, t, header)
            } else {
                view.costs[i]
            }
        };
        if out.compression_failed_before {
            // Truncation only, no model call.
            let outcome = if chosen.iter().take(n).any(|&c| c) {
                for (i, &truncated) in chosen.iter().enumerate().take(n) {
                    let item = if truncated {
                        Item::Placeholder(i)
                    } else {
                        Item::Verbatim(i)
                    };
                    out.push(item, size(i), sep);
                }
                fits(out, capacity)
            } else {
                unchanged(&view, capacity, out)
            };
            out.chosen = chosen;
            return outcome;
        }
        let split = self.split(&view, systems, &size);
        let original = view.span_cost(systems..split);
        let replaced = if original < window {
            original
        } else {
            joined(sep, (systems..split).map(size))
        };
        let summary = self.summary.size.cost(replaced);
        let kept = (0..systems).map(|i| view.costs[i]);
        let after = out.head_cost
            + out.joined_cost(
                kept.chain(std::iter::once(summary))
                    .chain((split..n).map(size))
                    .sum(),
                (systems + 1 + n - split) as u64,
                sep,
            );
        let outcome = if split == systems || after > before {
            // Nothing before the split, or a compression that would grow the context, which
            // Gemini remembers as a failed attempt.
            out.compression_failed = split != systems;
            unchanged(&view, capacity, out)
        } else {
            for i in 0..systems {
                out.push(Item::Verbatim(i), view.costs[i], sep);
            }
            push_summary(
                &self.summary,
                &view,
                (systems, split),
                |_| true,
                summary,
                stream,
                out,
            );
            for (i, &truncated) in chosen.iter().enumerate().take(n).skip(split) {
                let item = if truncated {
                    Item::Placeholder(i)
                } else {
                    Item::Verbatim(i)
                };
                out.push(item, size(i), sep);
            }
            fits(out, capacity)
        };
        out.chosen = chosen;
        outcome
    }

    fn when(&self) -> Option<When> {
        Some(When::Share(self.threshold))
    }

    fn summary_call(&self) -> SummaryCall {
        SummaryCall::Separate {
            prompt: PROMPT_TOKENS,
            calls: 2,
            cached: true,
        }
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summary.summariser)
    }
}
