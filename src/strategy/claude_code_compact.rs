//! `claude_code_compact(output_reserve=20000, buffer=13000)`: Claude Code's auto-compact. Claude Code is closed
//! source; what is documented and what is inferred are told apart here.
//!
//! - **Documented** (code.claude.com docs): auto-compact summarises the conversation when the
//!   context nears the limit; `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` sets the percentage of the
//!   window at which it fires and can only lower the default; instructions given only in chat
//!   survive only inside the summary; CLAUDE.md, rules, memory and up to 5 recently read files
//!   are re-injected after it. No default threshold is documented.
//! - **Trigger, reported** (anthropics/claude-code#31806, from deobfuscated code, not official):
//!   the effective window is `window − min(max_output, 20 000)` (the output reserved for the
//!   summary, `MAX_OUTPUT_TOKENS_FOR_SUMMARY`), and auto-compact fires at that less
//!   `AUTOCOMPACT_BUFFER_TOKENS = 13 000`: 167 000 of a 200 000 window. The preset takes that
//!   formula (`When::Below(output_reserve + buffer)`, defaults 20 000 and 13 000: every current
//!   model's `max_output` is at least 20 000). It is positive only on windows above 33 000, so
//!   a session refuses a smaller window with an error naming the smallest one, and a cell on
//!   such a capacity is infeasible: there the harness is undefined, and extrapolating the share
//!   it gives on 200 000 would invent a threshold. A share (`threshold`, what the documented
//!   `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` sets) or an absolute count (`trigger_tokens`) can still
//!   be given instead; the three exclude each other. Older notes say 92–95 %; that threshold has
//!   changed across versions.
//! - **Result, inferred** (third-party analyses): the system prompt and tools stay, then one
//!   summary as a user message; the newest messages are **not** kept verbatim — the task
//!   included, which lives on only in the summary. So the default head is none (`keep_first=0`)
//!   and the rule keeps the leading `system` records verbatim and summarises everything after
//!   them; `keep_first=task` keeps the task too.
//! - **Not modelled**: the re-injected attachments (CLAUDE.md is part of the system records
//!   here; re-read files would be fresh reads, not records of the history), microcompact and the
//!   circuit breaker after 3 failures. The summary is one model call with the whole context as
//!   input and the summary as output. The `claude_code` preset adds the time-based clearing of
//!   tool results and the re-attached files to this compaction.
//! - **Summary size and writer**: [`SummaryRule`] parameters, `summariser=NAME` included (default
//!   `simulated`). The default size is what real Claude Code summaries are: [`SUMMARY_RATIO`] of
//!   what they replaced (the compaction summaries of the shared Claude Code sessions), capped at
//!   `MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20 000` (reported).
//! - **The summary call**: the whole conversation plus the summary request, with the agent's
//!   cache (the default [`SummaryCall::WholeContext`](super::SummaryCall)).

use super::summary_preset::{push_if, share, summarise_after_systems};
use super::{spec, Context, Head, Outcome, SummaryRule, View, When};
use crate::error::ParseError;

/// `min(max_output, 20 000)`: the output Claude Code reserves for its summary.
pub const DEFAULT_OUTPUT_RESERVE: u64 = 20_000;
/// `AUTOCOMPACT_BUFFER_TOKENS`.
pub const DEFAULT_BUFFER: u64 = 13_000;
/// The size of a real Claude Code summary as a share of what it replaced: the median of the 26
/// compaction summaries of the shared Claude Code sessions whose replaced span the files hold
/// whole (`ctxlab calibrate --summaries`), 4.2 % of the characters replaced (quartiles 2.9 %
/// and 4.7 %, range 2.4–6.0 %).
pub const SUMMARY_RATIO: f64 = 0.042;
/// `MAX_OUTPUT_TOKENS_FOR_SUMMARY` (reported).
pub const SUMMARY_MAX: u64 = 20_000;

#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeCodeCompact {
    /// `When::Below(output_reserve + buffer)`, `When::Share(threshold)` or
    /// `When::Tokens(trigger_tokens)`.
    pub trigger: When,
    /// The output reserve of the formula (kept to write the label back).
    pub output_reserve: u64,
    pub summary: SummaryRule,
}

impl super::rule::RuleSpec for ClaudeCodeCompact {
    const NAME: &'static str = "claude_code_compact";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let (trigger, output_reserve) = parse_trigger(p)?;
        Ok(ClaudeCodeCompact {
            trigger,
            output_reserve,
            summary: SummaryRule::from_params_or(p, SUMMARY_RATIO, SUMMARY_MAX)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_trigger(params, self.trigger, self.output_reserve);
        self.summary
            .push_params_or(params, SUMMARY_RATIO, SUMMARY_MAX);
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        if undefined_on(self.trigger, capacity + out.head_cost) {
            // The harness is undefined on this window (see the module documentation).
            return Outcome::Infeasible;
        }
        summarise_after_systems(self.trigger, &self.summary, &view, capacity, stream, out)
    }

    fn when(&self) -> Option<When> {
        Some(self.trigger)
    }

    fn check_window(&self, window: u64) -> Result<(), String> {
        check_trigger_window(self.trigger, window)
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}

/// Reads Claude Code's auto-compact trigger: `threshold` (a share of the window),
/// `trigger_tokens` (a count) or `output_reserve`/`buffer` (the window less them, the default);
/// with the output reserve, to write the label back.
pub(super) fn parse_trigger(p: &mut spec::Params) -> Result<(When, u64), ParseError> {
    let tokens = p.u64("trigger_tokens")?;
    let share = share(p, "threshold")?;
    let output_reserve = p.u64("output_reserve")?;
    let buffer = p.u64("buffer")?;
    let formula = output_reserve.is_some() || buffer.is_some();
    let trigger = match (tokens, share, formula) {
        (Some(n), None, false) => When::Tokens(n),
        (None, Some(f), false) => When::Share(f),
        (None, None, _) => When::Below(
            output_reserve.unwrap_or(DEFAULT_OUTPUT_RESERVE) + buffer.unwrap_or(DEFAULT_BUFFER),
        ),
        _ => {
            return Err(format!(
                "strategy `{}`: give one trigger: `threshold` (a share of the window), \
                 `trigger_tokens` (a count) or `output_reserve`/`buffer` (the window less them)",
                p.strategy()
            )
            .into())
        }
    };
    Ok((trigger, output_reserve.unwrap_or(DEFAULT_OUTPUT_RESERVE)))
}

/// Writes back the trigger [`parse_trigger`] read, as the parameters that differ from the
/// defaults.
pub(super) fn push_trigger(params: &mut Vec<String>, trigger: When, output_reserve: u64) {
    match trigger {
        When::Share(f) => params.push(format!("threshold={f}")),
        When::Tokens(n) => params.push(format!("trigger_tokens={n}")),
        When::Below(reserve) => {
            push_if(
                params,
                "output_reserve",
                output_reserve,
                DEFAULT_OUTPUT_RESERVE,
            );
            push_if(params, "buffer", reserve - output_reserve, DEFAULT_BUFFER);
        }
        _ => {}
    }
}

/// Whether the trigger is undefined on a window of `window` units (the reserves take it all).
pub(super) fn undefined_on(trigger: When, window: u64) -> bool {
    matches!(trigger, When::Below(reserve) if window <= reserve)
}

/// Why Claude Code's trigger is undefined on a window of `window` units, if it is.
pub(super) fn check_trigger_window(trigger: When, window: u64) -> Result<(), String> {
    match trigger {
        When::Below(reserve) if window <= reserve => Err(format!(
            "Claude Code's auto-compact threshold, the window less {reserve} (the output \
             reserved for the summary and the auto-compact buffer), is not positive on a \
             window of {window}: the smallest window it is defined on is {}",
            reserve + 1
        )),
        _ => Ok(()),
    }
}
