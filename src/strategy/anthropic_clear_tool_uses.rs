//! `anthropic_clear_tool_uses(trigger=100000, keep=3, clear_at_least=0, exclude_tools=[],
//! clear_tool_inputs=false)`: Anthropic's context editing, `clear_tool_uses_20250919`, from the
//! documentation page https://docs.claude.com/en/docs/build-with-claude/context-editing ("Tool
//! result clearing", "Configuration options for tool result clearing") and the SDK type
//! `anthropics/anthropic-sdk-python`
//! `src/anthropic/types/beta/beta_clear_tool_uses_20250919_edit_param.py` @
//! 887ee67f90b7bbaa97ade97ae892cc34d2c9fa45. Anthropic's server code is not public.
//!
//! - **The rule.** Once the prompt exceeds `trigger` input tokens, the API "clears the oldest
//!   tool results in chronological order", all but the newest `keep` tool uses, each replaced
//!   by placeholder text; tool calls too with `clear_tool_inputs`; never those of
//!   `exclude_tools`; and not at all unless it can clear at least `clear_at_least` tokens (a
//!   gate, not an amount). It never drops a message. Which records, the gate and the stand-in
//!   are those of the generic `clear_tool_uses` (`keep` counts tool results over all tools,
//!   excluded ones included; the docs leave that open).
//! - **The stand-in.** The docs publish no text ("placeholder text so Claude knows it was
//!   removed"): we use ctxlab's [`CLEARED_PLACEHOLDER`](crate::history::CLEARED_PLACEHOLDER),
//!   `[cleared to save context]`, an assumption (LangChain's emulation writes `[cleared]`).
//! - **Defaults.** `trigger` 100 000 input tokens, `keep` 3 tool uses, `clear_at_least` none
//!   (0 here: no gate), `exclude_tools` none, `clear_tool_inputs` false. The API's other trigger
//!   type (a count of tool uses) and `clear_tool_inputs` as a list of tools are not modelled.
//!   "Exceeds" is strict: the edit applies when the prompt is over `trigger`, not at it.
//! - **Full history, server side.** The client keeps sending the full, unedited history; the
//!   server edits each request. So the trigger and the gate are measured on the full history
//!   (an inference the docs support: `count_tokens` reports `original_input_tokens`), which
//!   only grows: once a request was edited, every later one is edited too, and the results
//!   cleared before are cleared again. A session here re-applies the rule to the context it
//!   edited before, which is smaller; measured on it, the trigger could fall back under
//!   `trigger` and the newest results would stay until the context grew past it again. Hence the
//!   rule runs on every call ([`When::EveryCall`]) and decides itself: it clears when the
//!   context exceeds `trigger` **or** holds a stand-in it wrote before (the full history was over
//!   the trigger then, so it is now), and a stand-in also means the gate was met (what can be
//!   cleared of the full history only grows). That is the documented behaviour on the
//!   unedited history; what differs is what we cannot see: the tokens the API would report as
//!   cleared again each request (we count what the context holds) and the prompt cache, which
//!   we bill from the context we send, as the API's cache sees the edited prompt.
//! - **Cell.** The rule on the whole history: cleared if it exceeds `trigger` and the gate
//!   allows; infeasible when the result exceeds the capacity. `keep_recent` is ignored.

use super::clear_tool_uses::ClearToolUses;
use super::preset::{is_stand_in, push_whole, stand_in_cost};
use super::rule::{RuleSpec, Tail};
use super::{spec, Context, Item, Outcome, View, When};
use crate::error::ParseError;
use crate::history::Kind;

pub const DEFAULT_TRIGGER: u64 = 100_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicClearToolUses {
    /// Input tokens (cost units) the prompt must exceed.
    pub trigger: u64,
    /// What is cleared once it does (`clear_inputs` is the API's `clear_tool_inputs`).
    pub edit: ClearToolUses,
}

impl RuleSpec for AnthropicClearToolUses {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "anthropic_clear_tool_uses";
    // For `inspect`: cleared tool results (and inputs) stand in as placeholder text.
    const STAND_IN: &'static str = "cleared";
    const TAIL: Tail = Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(AnthropicClearToolUses {
            trigger: p.u64("trigger")?.unwrap_or(DEFAULT_TRIGGER),
            edit: ClearToolUses::from_params_named(p, "clear_tool_inputs")?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        if self.trigger != DEFAULT_TRIGGER {
            params.push(format!("trigger={}", self.trigger));
        }
        self.edit.push_params_named(params, "clear_tool_inputs");
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        let gap = if out.head_len > 0 && n > 0 { sep } else { 0 };
        // The API counts the whole prompt, the system prompt and tool definitions included.
        let prompt = view.fixed_prefix + out.head_cost + gap + view.span_cost(0..n);
        let edited_before = (0..n).any(|i| {
            matches!(view.kinds[i], Kind::ToolResult | Kind::ToolCall) && is_stand_in(&view, i)
        });
        let plan = self.edit.plan(&view);
        let clear = edited_before
            || (prompt > self.trigger
                && (self.edit.clear_at_least == 0
                    || self.edit.freed(&view, plan) >= i128::from(self.edit.clear_at_least)));
        push_whole(view, capacity, out, |i| {
            if clear && self.edit.clearable(&view, plan, i) {
                (
                    Item::Placeholder(i),
                    stand_in_cost(&view, i, || view.stand_ins.clear_cost),
                )
            } else {
                (Item::Verbatim(i), view.costs[i])
            }
        })
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }
}
