//! `openhands_llm_summarizing(max_size=100, keep_first=1)`: OpenHands' `LLMSummarizingCondenser`
//! (`OpenHands/OpenHands` `openhands/memory/condenser/impl/llm_summarizing_condenser.py` @
//! `76483ad8f5f51b47b20f29acf2fa51c770a5aa67`, L51–161; defaults from
//! `openhands/core/config/condenser_config.py` @ `d074f47c428b6dbd0a9669f9b2112444f68eb80d`).
//!
//! - **Trigger** (`When::Events(max_size)`): the view holds more than `max_size` events
//!   (`len(view) > max_size`). Every context entry is one event here: records, the summary.
//! - **Rule**: `target = max_size // 2`; the head is the first `keep_first` events (the generic
//!   `keep_first`, default 1 as in the config); the newest `target − keep_first − 1` events stay
//!   (`events_from_tail`, the 1 is the summary, L54–57); everything between head and tail, the
//!   previous summary included (it is fed to the summariser as `<PREVIOUS SUMMARY>`), becomes one
//!   summary placed right after the head. The view becomes `target` events, and the task
//!   OpenHands re-inserts is sent on top of them (below).
//! - **Condensation request**: `should_condense` is `len(view) > max_size or
//!   view.unhandled_condensation_request` (L154–155). OpenHands' agent controller
//!   (`openhands/controller/agent_controller.py`, `_react_to_exception`) turns the provider's
//!   context-window error into a `CondensationRequestAction` when `enable_history_truncation`
//!   is on (its default in `openhands/core/config/agent_config.py`), and the agent steps again.
//!   So in a session a call the window refuses is condensed at once, under the same rule, and
//!   sent again; a condensation that changes nothing (fewer events than head and tail, where
//!   OpenHands' `min()` of no forgotten ids raises) or leaves it too long ends the run.
//! - **The summary call** (`from_config`, L160–169): a prompt of its own, one user message with
//!   the instruction (≈ 2 070 characters, [`PROMPT_TOKENS`]), the previous summary and the
//!   forgotten events, sent with `caching_prompt = False`: billed as uncached input of the
//!   prompt plus the summarised records, not as a call on the agent's context.
//! - **Persistent**: the condensation is stored, so later views build on it (a session replaces
//!   its context); the summary is one call of the condenser LLM.
//! - **Deployed default**: the OpenHands server runs this condenser with `keep_first=4,
//!   max_size=120` inside a pipeline (`openhands/server/session/session.py` L219–249), as the V1
//!   SDK then did (`openhands_llm_summarizing(max_size=120, keep_first=4)`; the SDK's condenser
//!   as it ships now is `openhands_sdk_summarizing`); the
//!   class and config defaults are 100/1, which this preset follows.
//! - **Where the source is silent or crashes**: when `target − keep_first − 1` is 0 the Python
//!   slice `view[keep_first:-0]` is empty and `min()` of no ids raises; here everything after the
//!   head is summarised. When it is negative (`keep_first ≥ max_size // 2`, which the source's
//!   constructor refuses) the tail is empty too.
//! - **The task survives**: OpenHands' `ConversationMemory` (`_ensure_initial_user_message`)
//!   re-inserts the first user message when the view lost it, so the task always reaches the
//!   model although `keep_first=1` keeps only the system prompt event; here the leading system
//!   records and the first user message right after the head stay verbatim, outside the event
//!   count, as in `openhands_recent`; the tail has OpenHands' `events_from_tail`, so the context
//!   holds what OpenHands sends. Departure: the session's event trigger counts the re-inserted
//!   task as an event, so after the first condensation it fires one event before OpenHands'.
//!   `max_event_length` (10 000 chars per event in the summariser's prompt) does not change
//!   what the simulated summariser keeps, nor the summary prompt billed.
//! - **Summary**: [`SummaryRule`] parameters, `summariser=NAME` included (`summary_size` or
//!   `summary_ratio`/`summary_max`, then the summariser's own).

use super::summary_preset::{at_least, fits, push_if, reached, summarise_span, unchanged};
use super::{spec, Context, Head, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;

pub const DEFAULT_MAX_SIZE: usize = 100;
/// The summary instruction of `get_condensation` (L69–115 with the `<PREVIOUS SUMMARY>` frame
/// and the closing line), about 2 065 characters: at 4 characters a token, 520 tokens.
pub const PROMPT_TOKENS: u64 = 520;

#[derive(Debug, Clone, PartialEq)]
pub struct OpenHandsLlmSummarizing {
    pub max_size: usize,
    pub summary: SummaryRule,
}

impl super::rule::RuleSpec for OpenHandsLlmSummarizing {
    const NAME: &'static str = "openhands_llm_summarizing";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(1);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(OpenHandsLlmSummarizing {
            // The config's `ge=2`.
            max_size: at_least(p, "max_size", 2, DEFAULT_MAX_SIZE)?,
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "max_size", self.max_size, DEFAULT_MAX_SIZE);
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
        // The task OpenHands' message layer re-inserts after the head: kept verbatim, outside
        // the event count, as `openhands_recent` keeps it.
        let pre = super::openhands_recent::reinserted(&view);
        // `events_from_tail = target_size - len(head) - 1`: the re-inserted task comes on top.
        let tail = (self.max_size / 2).saturating_sub(out.head_len + 1);
        // Over max_size events, at most max_size/2 of them head or tail: n > tail (a head over
        // max_size alone leaves nothing to summarise).
        let end = n.saturating_sub(tail).max(pre);
        let due = out.from_session.condensation_requested
            || reached(When::Events(self.max_size), &view, capacity, out);
        if !due || end == pre {
            return unchanged(&view, capacity, out);
        }
        for i in 0..pre {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        summarise_span(&self.summary, &view, (pre, end), stream, out);
        for i in end..n {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::Events(self.max_size))
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
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
}
