//! `anthropic_compact(trigger=150000)`: Anthropic's server-side compaction at a token
//! threshold, the `compact_20260112` edit (beta `compact-2026-01-12`), from the documentation
//! page https://platform.claude.com/docs/en/build-with-claude/compaction-threshold and the SDK
//! type `BetaCompact20260112Edit` (`trigger`, `pause_after_compaction`, `instructions`).
//! Anthropic's server code is not public.
//!
//! - **Trigger.** Compaction starts when a request's input tokens reach `trigger`
//!   (`{"type": "input_tokens", "value": 150000}` by default; the API takes no value under
//!   50 000, and neither does the preset). A window of at most `trigger` would end every run
//!   before the threshold is reached: refused, naming the smallest window that works.
//! - **What the summary replaces.** The API summarises the conversation, returns a `compaction`
//!   block first in the response and continues from it; on the next requests it drops every
//!   content block before that block. The system prompt is not a message and stays: the
//!   leading `system` records are kept, everything after them becomes one summary, the task
//!   included (no message is kept verbatim). A later compaction summarises the previous
//!   summary with what came after it.
//! - **Billing.** The summarising step is an extra sampling iteration of the same request: it
//!   reads the whole conversation (with the prompt cache, as any iteration of the request) and
//!   writes the summary, and the response then reads the compacted context. The iterations are
//!   listed in `usage.iterations`; the top-level usage leaves the summarising one out, so a
//!   client that adds up top-level usage undercounts. Here it is one model call on the whole
//!   context with the agent's cache ([`SummaryCall::WholeContext`](super::SummaryCall)).
//! - **Not modelled.** `instructions` (a prompt that replaces the default summarisation prompt)
//!   changes what the summary says, which ctxlab's summarisers model on their own terms
//!   (`summariser=NAME`); `pause_after_compaction` returns after the summary so the client can
//!   add messages before going on, which is the application's rule, not the API's. Summary
//!   size: [`SummaryRule`] parameters; the documentation fixes none, so the defaults are those
//!   measured on real Claude Code summaries (4.2 % of what they replace, at most 20 000), which
//!   the same models write, an assumption.

use super::claude_code_compact::{SUMMARY_MAX, SUMMARY_RATIO};
use super::rule::{RuleSpec, Tail};
use super::summary_preset::{push_if, summarise_after_systems};
use super::{spec, Context, Head, Outcome, SummaryRule, View, When};
use crate::error::ParseError;

pub const DEFAULT_TRIGGER: u64 = 150_000;
/// The smallest `trigger` the API accepts.
pub const MIN_TRIGGER: u64 = 50_000;

#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicCompact {
    /// Input tokens (cost units) a request must reach.
    pub trigger: u64,
    pub summary: SummaryRule,
}

impl RuleSpec for AnthropicCompact {
    const NAME: &'static str = "anthropic_compact";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let trigger = match p.value("trigger") {
            None => DEFAULT_TRIGGER,
            Some(spec::SpecValue::Int(v)) if v >= MIN_TRIGGER as i64 => v as u64,
            Some(v) => {
                return Err(p.bad(
                    "trigger",
                    &format!("a whole number of input tokens ≥ {MIN_TRIGGER} (the API's minimum)"),
                    &v,
                ))
            }
        };
        Ok(AnthropicCompact {
            trigger,
            summary: SummaryRule::from_params_or(p, SUMMARY_RATIO, SUMMARY_MAX)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "trigger", self.trigger, DEFAULT_TRIGGER);
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
        let when = When::Tokens(self.trigger);
        summarise_after_systems(when, &self.summary, &view, capacity, stream, out)
    }

    fn when(&self) -> Option<When> {
        Some(When::Tokens(self.trigger))
    }

    fn check_window(&self, window: u64) -> Result<(), String> {
        if window > self.trigger {
            return Ok(());
        }
        Err(format!(
            "the compaction threshold ({} input tokens) is not below the window of {window}: no \
             request can reach it before the provider refuses the context; the smallest window \
             it is defined on is {} (or give a smaller `trigger`, at least {MIN_TRIGGER})",
            self.trigger,
            self.trigger + 1
        ))
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
