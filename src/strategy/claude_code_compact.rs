//! `claude_code_compact(threshold=0.835)`: Claude Code's auto-compact. Claude Code is closed
//! source; what is documented and what is inferred are told apart here.
//!
//! - **Documented** (code.claude.com docs): auto-compact summarises the conversation when the
//!   context nears the limit; `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` sets the percentage of the
//!   window at which it fires and can only lower the default; instructions given only in chat
//!   survive only inside the summary; CLAUDE.md, rules, memory and up to 5 recently read files
//!   are re-injected after it. No default threshold is documented.
//! - **Trigger, reported** (anthropics/claude-code#31806, from deobfuscated code, not official):
//!   `window − min(max_output, 20 000) − 13 000` (`AUTOCOMPACT_BUFFER_TOKENS`), 167 000 of a
//!   200 000 window. A window-relative subtraction is no `When`, so the preset takes it as a share,
//!   `threshold` (default 0.835 = 167 000 / 200 000), or as an absolute count, `trigger_tokens`
//!   (`When::Tokens`, e.g. 167000 for a 200k window); the two exclude each other. Older notes say
//!   92–95 %; that threshold has changed across versions.
//! - **Result, inferred** (third-party analyses): the system prompt and tools stay, then one
//!   summary as a user message; the newest messages are **not** kept verbatim — the task
//!   included, which lives on only in the summary. So the default head is none (`keep_first=0`)
//!   and the rule keeps the leading `system` records verbatim and summarises everything after
//!   them; `keep_first=task` keeps the task too.
//! - **Not modelled**: the re-injected attachments (CLAUDE.md is part of the system records
//!   here; re-read files would be fresh reads, not records of the history), microcompact and the
//!   circuit breaker after 3 failures. The summary is one model call with the whole context as
//!   input and the summary as output.
//! - **Summary size and writer**: [`Summary`] parameters, `summariser=NAME` included (default `simulated`);
//!   Claude Code caps its summary at `MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20 000` (reported), which
//!   `summary_max=20000` expresses.

use super::summary_preset::{fits, leading_systems, reached, share, summarise_span, unchanged};
use super::{spec, Context, Head, Item, Outcome, Summary, View, When};
use crate::error::ParseError;
use crate::summariser::Summariser;

pub const DEFAULT_THRESHOLD: f64 = 0.835;

#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeCodeCompact {
    /// `When::Share(threshold)` or `When::Tokens(trigger_tokens)`.
    pub trigger: When,
    pub summary: Summary,
}

impl super::rule::RuleSpec for ClaudeCodeCompact {
    const NAME: &'static str = "claude_code_compact";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let tokens = p.u64("trigger_tokens")?;
        let trigger = match (tokens, share(p, "threshold")?) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "strategy `{}`: give either `threshold` (a share of the window) or \
                     `trigger_tokens` (a count), not both",
                    p.strategy()
                )
                .into())
            }
            (Some(n), None) => When::Tokens(n),
            (None, f) => When::Share(f.unwrap_or(DEFAULT_THRESHOLD)),
        };
        Ok(ClaudeCodeCompact {
            trigger,
            summary: Summary::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        match self.trigger {
            When::Share(f) if f != DEFAULT_THRESHOLD => params.push(format!("threshold={f}")),
            When::Tokens(n) => params.push(format!("trigger_tokens={n}")),
            _ => {}
        }
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
        let systems = leading_systems(view.kinds);
        if !reached(self.trigger, &view, capacity, out) || systems == n {
            return unchanged(&view, capacity, out);
        }
        for i in 0..systems {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        summarise_span(&self.summary, &view, (systems, n), stream, out);
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(self.trigger)
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summary.summariser)
    }
}
