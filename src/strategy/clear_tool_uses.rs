//! `clear_tool_uses`: Anthropic's context editing (`clear_tool_uses`), also LangChain's
//! `ClearToolUsesEdit`. It acts only when the history is over the capacity (the trigger). Then
//! every tool result older than the newest `keep` tool results (counted over all tools) is
//! replaced by [`CLEARED_PLACEHOLDER`](crate::history::CLEARED_PLACEHOLDER), except results of
//! the tools in `exclude_tools`; with `clear_inputs` the tool calls older than the newest `keep`
//! tool calls are cleared the same way (calls pair with results by rank from the newest, which
//! is how one call per result lines up, parallel calls included). The clearing is applied only
//! when it frees at least `clear_at_least` (and frees anything at all: clearing records shorter
//! than the placeholder would grow the context); otherwise nothing is cleared. If the context is
//! still over the capacity, the oldest items are dropped until it fits, so a cell is never
//! infeasible.

use super::window::{push_dropping_oldest, window_start};
use super::{spec, Context, Item, Outcome, View};
use crate::error::ParseError;
use crate::history::Kind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearToolUses {
    /// How many of the newest tool results (and, with `clear_inputs`, tool calls) stay intact.
    pub keep: usize,
    /// The least a clearing must free, in cost units, to be applied.
    pub clear_at_least: u64,
    /// Tools whose results and calls are never cleared; sorted and without repeats, so equal
    /// sets give equal labels.
    pub exclude_tools: Vec<String>,
    /// Whether tool calls are cleared along with their results.
    pub clear_inputs: bool,
}

impl Default for ClearToolUses {
    fn default() -> Self {
        ClearToolUses {
            keep: 3,
            clear_at_least: 0,
            exclude_tools: Vec::new(),
            clear_inputs: false,
        }
    }
}

/// Which records a clearing replaces: tool results before `results_from` and tool calls
/// before `calls_from` (the newest `keep` of each stay), except the excluded tools'.
#[derive(Debug, Clone, Copy)]
pub(super) struct ClearingPlan {
    results_from: usize,
    calls_from: usize,
}

impl ClearToolUses {
    pub fn from_params(p: &mut spec::Params) -> Result<Self, ParseError> {
        ClearToolUses::from_params_named(p, "clear_inputs")
    }

    /// The parameters, with the switch for clearing tool calls under the name `inputs_key`
    /// (Anthropic's preset spells it as the API does).
    pub(super) fn from_params_named(
        p: &mut spec::Params,
        inputs_key: &'static str,
    ) -> Result<Self, ParseError> {
        let d = ClearToolUses::default();
        let mut exclude_tools = p.list("exclude_tools")?.unwrap_or_default();
        exclude_tools.sort();
        exclude_tools.dedup();
        Ok(ClearToolUses {
            keep: p.usize("keep")?.unwrap_or(d.keep),
            clear_at_least: p.u64("clear_at_least")?.unwrap_or(d.clear_at_least),
            exclude_tools,
            clear_inputs: p.bool(inputs_key)?.unwrap_or(d.clear_inputs),
        })
    }

    /// The parameters that differ from the defaults, in canonical order.
    pub fn push_params(&self, params: &mut Vec<String>) {
        self.push_params_named(params, "clear_inputs");
    }

    pub(super) fn push_params_named(&self, params: &mut Vec<String>, inputs_key: &str) {
        let d = ClearToolUses::default();
        if self.keep != d.keep {
            params.push(format!("keep={}", self.keep));
        }
        if self.clear_at_least != d.clear_at_least {
            params.push(format!("clear_at_least={}", self.clear_at_least));
        }
        if !self.exclude_tools.is_empty() {
            params.push(format!("exclude_tools=[{}]", self.exclude_tools.join(",")));
        }
        if self.clear_inputs {
            params.push(format!("{inputs_key}=true"));
        }
    }

    fn excluded(&self, tool: Option<&str>) -> bool {
        tool.is_some_and(|t| self.exclude_tools.iter().any(|e| e == t))
    }

    pub(super) fn plan(&self, view: &View) -> ClearingPlan {
        ClearingPlan {
            results_from: window_start(view.kinds, Kind::ToolResult, self.keep),
            calls_from: if self.clear_inputs {
                window_start(view.kinds, Kind::ToolCall, self.keep)
            } else {
                0
            },
        }
    }

    /// Whether record `i` is one the clearing replaces.
    pub(super) fn clearable(&self, view: &View, plan: ClearingPlan, i: usize) -> bool {
        let old = match view.kinds[i] {
            Kind::ToolResult => i < plan.results_from,
            Kind::ToolCall => i < plan.calls_from,
            _ => false,
        };
        old && !self.excluded(view.tools[i].as_deref())
    }

    /// What the clearing frees, in cost units (negative when the placeholders cost more than
    /// the records they replace).
    pub(super) fn freed(&self, view: &View, plan: ClearingPlan) -> i128 {
        (0..view.len())
            .filter(|&i| self.clearable(view, plan, i))
            .map(|i| i128::from(view.costs[i]) - i128::from(view.stand_ins.clear_cost))
            .sum()
    }

    pub fn apply(&self, view: View, capacity: u64, out: &mut Context) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        if out.joined_cost(view.costs.iter().sum(), n as u64, sep) <= capacity {
            push_dropping_oldest(view, capacity, out, |i| (Item::Verbatim(i), view.costs[i]));
            return Outcome::Feasible;
        }
        let plan = self.plan(&view);
        let freed = self.freed(&view, plan);
        let clear = freed > 0 && freed >= i128::from(self.clear_at_least);
        push_dropping_oldest(view, capacity, out, |i| {
            if clear && self.clearable(&view, plan, i) {
                (Item::Placeholder(i), view.stand_ins.clear_cost)
            } else {
                (Item::Verbatim(i), view.costs[i])
            }
        });
        Outcome::Feasible
    }
}

impl super::rule::RuleSpec for ClearToolUses {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "clear_tool_uses";
    // For `inspect`: its placeholder is the cleared-result marker.
    const STAND_IN: &'static str = "cleared";
    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        ClearToolUses::from_params(p)
    }
    fn push_params(&self, params: &mut Vec<String>) {
        ClearToolUses::push_params(self, params)
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        ClearToolUses::apply(self, view, capacity, out)
    }
}
