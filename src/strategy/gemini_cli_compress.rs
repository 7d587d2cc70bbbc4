//! `gemini_cli_compress(threshold=0.5, preserve=0.3, tool_budget=50000, truncate_chars=40000,
//! mask_protect=50000, mask_prunable=30000, env=87)`: Gemini CLI's chat compression and
//! tool-output masking, `google-gemini/gemini-cli` `packages/core/src/context/`
//! `chatCompressionService.ts` and `toolOutputMaskingService.ts` @ `5411f113` (before refactor
//! `fd5c103f99`, 2026-03-31: under `packages/core/src/services/`), run from `processTurn` in
//! `packages/core/src/core/client.ts` (compression, then masking, on every turn).
//!
//! - **Trigger**: the rule runs before every call (`When::EveryCall`), as `processTurn` calls
//!   both services on every turn. Compression: `lastPromptTokenCount >= threshold ×
//!   tokenLimit`; `DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5` since c7b5dcd28f (0.7 before).
//!   Here: the context the next call would send against the window.
//! - **Tool-output masking** (`ToolOutputMaskingService.mask`, every turn): back from the
//!   record before the last call (Gemini's history does not hold the pending output yet, and
//!   `protectLatestTurn` skips the latest model turn), tool outputs fill a protection window
//!   until one takes it over `mask_protect` tokens (`DEFAULT_TOOL_PROTECTION_THRESHOLD =
//!   50 000`); that one and every older one are prunable, and when they add up to at least
//!   `mask_prunable` (`DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD = 30 000`) each is replaced by
//!   `<tool_output_masked>` around its first and last 250 characters (the whole output when it
//!   has at most 500) and the path of the file it was saved to, when that is smaller
//!   ([`MASKED_WRAPPER`], [`masked_cost`]). Outputs of `activate_skill`, `ask_user`,
//!   `enter_plan_mode`, `exit_plan_mode` are exempt; stand-ins already in the view are skipped
//!   (Gemini skips only its own masked outputs). Choices: the shell tool's line-based preview
//!   is taken as the general head-and-tail one; masking runs in the same call only when the
//!   compression changed nothing (after a compression it runs from the next call). The
//!   thresholds are tokens, not shares: on windows under 80 000 it never masks.
//! - **History**: the system instruction is outside Gemini's history and always stays; here the
//!   leading `system` records. Everything after them is history — the task included, which
//!   Gemini compresses with the rest — so the default head is none (`keep_first=0`).
//! - **Environment context**: Gemini's history opens with a user message of its own
//!   (`getInitialChatHistory` / `getEnvironmentContext`, `utils/environmentContext.ts`: date,
//!   platform, temporary directory, directory tree, session memory), built again after every
//!   compression. A replayed transcript does not hold it, so it is not added to the agent's
//!   calls (their inputs stay the transcript's); it is a split point before the first record,
//!   of `env` units (87: the message without directory tree or memory, which depend on the
//!   workspace), counted in the split's sizes and read by the summary call. The transcript's
//!   own first user message is the task, not that message.
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
//!   is not a tool response (the environment message, a `user` record, or an earlier summary,
//!   which Gemini inserts as a user message) at or after `(1 − preserve)` of the truncated
//!   history's size; Gemini counts JSON characters, here cost units (the view has no characters
//!   for stand-ins; under the chars cost model they are characters). None there: everything,
//!   when the last record is an assistant record (a model turn without a function call), else
//!   the last valid split point before the target: on a single-prompt run the task, so the
//!   environment message (and an earlier summary) alone is compressed; the environment
//!   message itself compresses nothing.
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
//!   The fixed acknowledgement Gemini adds after the summary ([`ACK`]) is part of the summary's
//!   cost (so it is billed as written, a departure of its 42 characters); the fresh environment
//!   message costs nothing in the context, as above.
//! - **4. Rejected** when the new history (environment message, summary, acknowledgement, the
//!   rest) would cost more than the last prompt, which also held the system instruction
//!   (`COMPRESSION_FAILED_INFLATED_TOKEN_COUNT`; `calculateRequestTokenCount` of the history's
//!   parts against `getLastPromptTokenCount`): here the new context without the leading
//!   `system` records against the old one with them. The context is left unchanged, truncation
//!   included (infeasible when that does not fit), and the masking service runs. Both model
//!   calls ran before the check, so the session bills them
//!   ([`crate::context::CallReport::rejected_call`]). Gemini then remembers the failure
//!   (`hasFailedCompressionAttempt`, reset only by a new chat): every later automatic
//!   compression of the session skips the model and applies only the tool-output truncation
//!   (step 1), kept when it truncated something
//!   ([`crate::context::FromSession::compression_failed_before`]; a cell has no earlier
//!   attempt).
//! - **Summary size and writer**: [`SummaryRule`] parameters, `summariser=NAME` included (default `simulated`).

use super::summary_preset::{
    fits, joined, leading_systems, push_if, push_summary, reached, share, unchanged, whole_cost,
};
use super::{spec, Context, Head, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

pub const DEFAULT_THRESHOLD: f64 = 0.5;
pub const DEFAULT_PRESERVE: f64 = 0.3;
pub const DEFAULT_TOOL_BUDGET: u64 = 50_000;
pub const DEFAULT_TRUNCATE_CHARS: u64 = 40_000;
/// The compression system instruction, about 3 000 characters: at 4 characters a token, 770
/// tokens (the self-check's short request is taken as part of it).
pub const PROMPT_TOKENS: u64 = 770;
/// The masking service's protection window: the newest tool outputs up to this many tokens
/// are never masked (`DEFAULT_TOOL_PROTECTION_THRESHOLD`).
pub const DEFAULT_MASK_PROTECT: u64 = 50_000;
/// It masks only when the outputs past the window add up to at least this many tokens
/// (`DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD`).
pub const DEFAULT_MASK_PRUNABLE: u64 = 30_000;
/// The environment-context message as `getEnvironmentContext` renders it without a directory
/// tree or session memory (date, platform, temporary directory): 348 characters, at 4
/// characters a token 87.
pub const DEFAULT_ENV: u64 = 87;
/// The model turn Gemini adds after the summary.
pub const ACK: &str = "Got it. Thanks for the additional context!";
/// A masked output's stand-in around its preview (`formatMaskedSnippet`, with the general
/// tools' head-and-tail separator and a path of the length Gemini writes).
pub const MASKED_WRAPPER: &str = "<tool_output_masked>\n\n... [TRUNCATED] ...\n\n\nOutput too large. Full output available at: /home/user/.gemini/tmp/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/tool-outputs/session-01234567-89ab-cdef-0123-456789abcdef/run_shell_command_0123456789abcd_0a1b2c.txt\n</tool_output_masked>";
/// The preview a masked output keeps: its first and last 250 characters, when it has more
/// than 500.
pub const PREVIEW_CHARS: u64 = 500;
/// Tools whose outputs the masking service never masks (`EXEMPT_TOOLS`).
const EXEMPT_TOOLS: [&str; 4] = [
    "activate_skill",
    "ask_user",
    "enter_plan_mode",
    "exit_plan_mode",
];

#[derive(Debug, Clone, PartialEq)]
pub struct GeminiCliCompress {
    pub threshold: f64,
    pub preserve: f64,
    pub tool_budget: u64,
    pub truncate_chars: u64,
    pub mask_protect: u64,
    pub mask_prunable: u64,
    pub env: u64,
    pub summary: SummaryRule,
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

/// What a masked tool output costs: the stand-in's wrapper (`wrapper`, the cost of
/// [`MASKED_WRAPPER`]) and its preview, the first and last 250 characters of an output of more
/// than 500, else the whole output.
pub fn masked_cost(view: &View, i: usize, wrapper: u64) -> u64 {
    if view.chars[i] > PREVIEW_CHARS {
        truncated_cost(view, i, PREVIEW_CHARS, wrapper)
    } else {
        wrapper + view.costs[i]
    }
}

/// Pushes the records from `from` on, each truncated one (marked in `chosen`) as a stand-in
/// of its truncated size.
fn push_truncated(
    view: &View,
    chosen: &[bool],
    from: usize,
    size: &impl Fn(usize) -> u64,
    out: &mut Context,
) {
    for (i, &truncated) in chosen.iter().enumerate().take(view.len()).skip(from) {
        let item = if truncated {
            Item::Placeholder(i)
        } else {
            Item::Verbatim(i)
        };
        out.push(item, size(i), view.separator);
    }
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

    /// The split point given each record's size after truncation, with the environment-context
    /// message (`env` units, not in the view) before record `from`: `None` at that message
    /// (nothing to compress), `Some(i)` compresses it and records `from..i` (`Some(n)` all).
    fn split(&self, view: &View, from: usize, size: &impl Fn(usize) -> u64) -> Option<usize> {
        let n = view.len();
        let total: u64 = self.env + (from..n).map(size).sum::<u64>();
        let target = (1.0 - self.preserve) * total as f64;
        let mut cum = self.env;
        let mut last = None;
        for i in from..n {
            if matches!(view.kinds[i], Kind::User | Kind::Summary) {
                if cum as f64 >= target {
                    return Some(i);
                }
                last = Some(i);
            }
            cum += size(i);
        }
        if view.kinds.last() == Some(&Kind::Assistant) {
            Some(n)
        } else {
            last
        }
    }

    /// Marks in `out.chosen` the tool outputs the masking service replaces: scanning back from
    /// the record before the last call (the pending output is not in Gemini's history yet and
    /// the latest turn is protected), outputs count into the protection window until one takes
    /// it over `mask_protect`; that one and every older one are prunable, and they are masked
    /// when they add up to at least `mask_prunable`, each whose stand-in is smaller. Stand-ins
    /// already in the view and exempt tools' outputs are skipped. Returns whether any is.
    fn mask(&self, view: &View, from: usize, wrapper: u64, out: &mut Context) -> bool {
        let end = view.len().saturating_sub(2);
        let (mut protected, mut prunable, mut boundary) = (0u64, 0u64, false);
        for i in (from..end).rev() {
            let exempt = view.tools[i]
                .as_deref()
                .is_some_and(|t| EXEMPT_TOOLS.contains(&t));
            if view.kinds[i] != Kind::ToolResult || !view.texts.is_record(i) || exempt {
                continue;
            }
            if !boundary {
                protected += view.costs[i];
                boundary = protected > self.mask_protect;
                if !boundary {
                    continue;
                }
            }
            prunable += view.costs[i];
            out.chosen[i] = true;
        }
        let mut any = false;
        for i in from..end {
            if out.chosen[i] {
                let saves = masked_cost(view, i, wrapper) < view.costs[i];
                out.chosen[i] = prunable >= self.mask_prunable && saves;
                any |= out.chosen[i];
            }
        }
        any
    }

    /// The compression itself, on the records' sizes after truncation (`size`, `chosen` marking
    /// the truncated ones): the records before the split (and the environment message) become
    /// one summary, unless there is no split or the new history would be larger than the
    /// prompt it replaces (`before`, in a `window`). Returns whether it pushed the context;
    /// when not, the masking service alone runs.
    fn compress(
        &self,
        view: &View,
        systems: usize,
        (window, before): (u64, u64),
        (chosen, size): (&[bool], &impl Fn(usize) -> u64),
        stream: u64,
        out: &mut Context,
    ) -> bool {
        let (n, sep) = (view.len(), view.separator);
        let Some(split) = self.split(view, systems, size) else {
            return false;
        };
        // The environment message is summarised with the records before the split.
        let env = self.env
            + if self.env > 0 && split > systems {
                sep
            } else {
                0
            };
        let original = env + view.span_cost(systems..split);
        let replaced = if original < window {
            original
        } else {
            env + joined(sep, (systems..split).map(size))
        };
        let written = self.summary.size.cost(replaced);
        // The summary stands for itself and the acknowledgement after it.
        let summary = written + view.model.cost(ACK) + sep;
        // Gemini counts the new history (a fresh environment message, the summary, the
        // acknowledgement and what is kept) against the last prompt, which also held the
        // system instruction: the system records count only before.
        let after = out.head_cost
            + out.joined_cost(
                summary + (split..n).map(size).sum::<u64>(),
                (1 + n - split) as u64,
                sep,
            );
        if after > before {
            // Inflated: both calls ran; Gemini remembers the failure.
            out.call_report.compression_failed = true;
            out.call_report.rejected_call = Some((original, written));
            return false;
        }
        out.call_report.summary_read_extra = env;
        for i in 0..systems {
            out.push(Item::Verbatim(i), view.costs[i], sep);
        }
        push_summary(
            &self.summary,
            view,
            (systems, split),
            |_| true,
            summary,
            stream,
            out,
        );
        push_truncated(view, chosen, split, size, out);
        true
    }

    /// The context after the masking service alone (every call, after the compression check
    /// changed nothing).
    fn masked(&self, view: &View, from: usize, capacity: u64, out: &mut Context) -> Outcome {
        let wrapper = view.model.cost(MASKED_WRAPPER);
        out.chosen.iter_mut().for_each(|c| *c = false);
        if !self.mask(view, from, wrapper, out) {
            return unchanged(view, capacity, out);
        }
        for i in 0..view.len() {
            if out.chosen[i] {
                out.push(
                    Item::Placeholder(i),
                    masked_cost(view, i, wrapper),
                    view.separator,
                );
            } else {
                out.push(Item::Verbatim(i), view.costs[i], view.separator);
            }
        }
        fits(out, capacity)
    }
}

impl super::rule::RuleSpec for GeminiCliCompress {
    const NAME: &'static str = "gemini_cli_compress";
    // For `inspect`: a stand-in is a masked tool output or one truncated to the budget.
    const STAND_IN: &'static str = "masked or truncated";
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
            mask_protect: p.u64("mask_protect")?.unwrap_or(DEFAULT_MASK_PROTECT),
            mask_prunable: p.u64("mask_prunable")?.unwrap_or(DEFAULT_MASK_PRUNABLE),
            env: p.u64("env")?.unwrap_or(DEFAULT_ENV),
            summary: SummaryRule::from_params(p)?,
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
        push_if(
            params,
            "mask_protect",
            self.mask_protect,
            DEFAULT_MASK_PROTECT,
        );
        push_if(
            params,
            "mask_prunable",
            self.mask_prunable,
            DEFAULT_MASK_PRUNABLE,
        );
        push_if(params, "env", self.env, DEFAULT_ENV);
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
        let systems = leading_systems(view.kinds);
        if !reached(When::Share(self.threshold), &view, capacity, out) {
            return self.masked(&view, systems, capacity, out);
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
        let pushed = if out.from_session.compression_failed_before {
            // Truncation only, no model call.
            let any = chosen.iter().take(view.len()).any(|&c| c);
            if any {
                push_truncated(&view, &chosen, 0, &size, out);
            }
            any
        } else {
            self.compress(
                &view,
                systems,
                (window, before),
                (&chosen, &size),
                stream,
                out,
            )
        };
        out.chosen = chosen;
        if pushed {
            fits(out, capacity)
        } else {
            self.masked(&view, systems, capacity, out)
        }
    }

    fn when(&self) -> Option<When> {
        // The masking service runs on every turn; the compression checks its share inside.
        Some(When::EveryCall)
    }

    fn summary_call(&self) -> SummaryCall {
        SummaryCall::Separate {
            prompt: PROMPT_TOKENS,
            calls: 2,
            cached: true,
        }
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
