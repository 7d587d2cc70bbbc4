//! `openhands_observation_masking(attention_window=100)`: OpenHands' `ObservationMaskingCondenser`
//! (`type: observation_masking`), from `OpenHands/OpenHands`
//! `openhands/memory/condenser/impl/observation_masking_condenser.py` @
//! d6fab190bfb55f07cc380993b45ec4f781706a92 (and @ 76483ad8f5f51b47b20f29acf2fa51c770a5aa67),
//! with the default of `openhands/core/config/condenser_config.py` @
//! d074f47c428b6dbd0a9669f9b2112444f68eb80d.
//!
//! - **The rule.** `for i, event in enumerate(view): <MASKED> if isinstance(event, Observation)
//!   and i < len(view) - attention_window`: every observation (our `tool_result` records) at
//!   least `attention_window` positions from the end is replaced by `<MASKED>`; actions of any
//!   kind (the system prompt, user messages, the agent's messages and tool calls) never are.
//! - **Unit.** Events, counted over **all** records of the context (the head included, which
//!   shifts both `i` and `len(view)` alike), not over observations: a window of 100 keeps about
//!   50 tool results. OpenHands stores an agent's thought and its tool call as one action; a
//!   history that keeps them as two records counts one event more per such call.
//! - **Masked steps as OpenHands sends them.** A masked observation is a new
//!   `AgentCondensationObservation` without tool-call metadata, sent as a user message holding
//!   `<MASKED>` (cost: what `<MASKED>` costs under the history's model). The action that called
//!   the tool is held back by OpenHands' message layer until every one of its tool calls has a
//!   response (`openhands/memory/conversation_memory.py` @ d6fab190, `process_events`:
//!   `pending_tool_call_action_messages` are emitted only when all their `tool_call.id`s are
//!   answered), so it is never sent: the agent call's records (the assistant record and its tool
//!   calls) become stand-ins that cost nothing, and its other results, orphans now, are masked
//!   too (`_filter_unmatched_tool_calls`). They stay in the context at cost 0, so the events
//!   counted are OpenHands' (each still pays its separator: a per-message framing that
//!   OpenHands does not send, a small overcount). An agent call without tool results (a final
//!   message) is an ordinary message and stays.
//! - **Defaults.** The config's `attention_window=100` (`ge=1`), which a configured run gets;
//!   the class default is 5 (`openhands_observation_masking(attention_window=5)`).
//! - **Trigger.** Every call ([`When::EveryCall`]): a per-call view, never a condensation.
//!   Re-applied in a session to the context it masked before it gives the same result (a masked
//!   record stays masked at the same cost; the set only grows).
//! - **Cell.** The rule on the whole history; infeasible when the result exceeds the capacity.
//!   `keep_recent` is ignored (`attention_window` is the window).

use super::preset::{at_least, push_whole, stand_in_cost};
use super::rule::{RuleSpec, Tail};
use super::{spec, Context, Item, Outcome, View, When};
use crate::error::ParseError;
use crate::history::starts_call;
use crate::history::Kind;

pub const DEFAULT_ATTENTION_WINDOW: usize = 100;

/// Marks in `marks` every agent call (its assistant record and tool calls) with a tool result
/// before `masked_before`, and all that call's tool results.
fn mark_masked_steps(view: &View, masked_before: usize, marks: &mut [bool]) {
    let kinds = view.kinds;
    let n = view.len();
    let mut i = 0;
    while i < n {
        if !starts_call(kinds, i) {
            // Results before any call in the view (no call to hold back) are masked alone.
            marks[i] = kinds[i] == Kind::ToolResult && i < masked_before;
            i += 1;
            continue;
        }
        let mut calls_end = i + 1;
        while calls_end < n && kinds[calls_end] == Kind::ToolCall {
            calls_end += 1;
        }
        let mut end = calls_end;
        while end < n && kinds[end] == Kind::ToolResult {
            end += 1;
        }
        let masked = end > calls_end && calls_end < masked_before;
        marks[i..end].fill(masked);
        i = end;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenHandsObservationMasking {
    /// Events (records) at the end of the context whose observations stay intact.
    pub attention_window: usize,
}

impl RuleSpec for OpenHandsObservationMasking {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "openhands_observation_masking";
    const TAIL: Tail = Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let attention_window =
            at_least(p, "attention_window", 1, " (events)")?.unwrap_or(DEFAULT_ATTENTION_WINDOW);
        Ok(OpenHandsObservationMasking { attention_window })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        if self.attention_window != DEFAULT_ATTENTION_WINDOW {
            params.push(format!("attention_window={}", self.attention_window));
        }
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        // `i < len(view) - attention_window` over the whole context is the same test over the
        // records after the head: the head's length is on both sides.
        let masked_before = view.len().saturating_sub(self.attention_window);
        // `chosen`: the records of agent calls one of whose tool results is masked, and those
        // results (the step OpenHands no longer sends as a tool exchange).
        mark_masked_steps(&view, masked_before, &mut out.chosen);
        let dropped = std::mem::take(&mut out.chosen);
        let outcome = push_whole(view, capacity, out, |i| match view.kinds[i] {
            Kind::ToolResult if dropped[i] => (
                Item::Placeholder(i),
                stand_in_cost(&view, i, || view.stand_ins.masked_cost),
            ),
            _ if dropped[i] => (Item::Placeholder(i), stand_in_cost(&view, i, || 0)),
            _ => (Item::Verbatim(i), view.costs[i]),
        });
        out.chosen = dropped;
        outcome
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }
}
