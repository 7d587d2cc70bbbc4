//! `anthropic_clear_thinking(keep=1)`: Anthropic's context editing of thinking blocks,
//! `clear_thinking_20251015`, from the documentation page
//! https://platform.claude.com/docs/en/build-with-claude/context-editing ("Thinking block
//! clearing") and the SDK type `BetaClearThinking20251015Edit` (`keep`: "Number of most recent
//! assistant turns to keep thinking blocks for"). Anthropic's server code is not public.
//!
//! - **The rule.** On every request the API removes the thinking blocks of all but the newest
//!   `keep` assistant turns (`{"type": "thinking_turns", "value": 1}` by default; `"all"` keeps
//!   every one, which is `raw`). An assistant turn is the model's whole answer to one user
//!   message: every call of its tool loop, with as many content and thinking blocks as they
//!   hold. No other record changes, and nothing is replaced by a stand-in: the blocks go.
//! - **Thinking blocks as records.** They are tool calls of the tool
//!   [`THINKING_TOOL`](crate::history::THINKING_TOOL) at the end of their call's output, as
//!   the `claude-code-thinking` transcript format imports them; a history without them is left
//!   as it is. Turns start at `user` records (and `summary` records, which a harness sends in
//!   the user's place); tool results do not start one.
//! - **Full history, server side.** The client sends the full history and the server edits
//!   each request; what a request clears stays cleared in every later one (older turns only
//!   get older), so a session's edited context is what the server would build. It runs on
//!   every call ([`When::EveryCall`]) and counts as a compaction when it removes something.
//!   Clearing a block rewrites the prompt from that point, which the cache model bills.
//! - **Cell.** The rule on the whole history; infeasible when the result exceeds the capacity.

use super::preset::fits;
use super::rule::{RuleSpec, Tail};
use super::summary_preset::push_if;
use super::{spec, Context, Item, Outcome, View, When};
use crate::error::ParseError;
use crate::history::{Kind, THINKING_TOOL};

pub const DEFAULT_KEEP: usize = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicClearThinking {
    /// Assistant turns whose thinking blocks stay (at least 1).
    pub keep: usize,
}

/// Whether record `i` of the view is a thinking block.
pub fn is_thinking(view: &View, i: usize) -> bool {
    view.kinds[i] == Kind::ToolCall && view.tools[i].as_deref() == Some(THINKING_TOOL)
}

/// Where the thinking blocks that stay begin: the first record of the newest `keep` assistant
/// turns (0 when the view holds no more turns than that).
pub fn kept_from(kinds: &[Kind], keep: usize) -> usize {
    let (mut turns, mut in_turn) = (0, false);
    for i in (0..kinds.len()).rev() {
        match kinds[i] {
            Kind::Assistant | Kind::ToolCall if !in_turn => {
                if turns == keep {
                    return i + 1;
                }
                turns += 1;
                in_turn = true;
            }
            Kind::User | Kind::Summary => in_turn = false,
            _ => {}
        }
    }
    0
}

impl RuleSpec for AnthropicClearThinking {
    const NAME: &'static str = "anthropic_clear_thinking";
    const TAIL: Tail = Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let keep = super::preset::at_least(p, "keep", 1, " assistant turns")?;
        Ok(AnthropicClearThinking {
            keep: keep.unwrap_or(DEFAULT_KEEP),
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "keep", self.keep, DEFAULT_KEEP);
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        let from = kept_from(view.kinds, self.keep);
        for i in 0..view.len() {
            if i < from && is_thinking(&view, i) {
                continue;
            }
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }
}
