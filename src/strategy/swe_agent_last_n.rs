//! `swe_agent_last_n(n=5, polling=1)`: SWE-agent's `LastNObservations` history processor
//! (`type: last_n_observations`), from `SWE-agent/SWE-agent`
//! `sweagent/agent/history_processors.py` @ 318f9091d5f5522e2a3013b46623358e46157f7a (the same
//! text as 3ea751c087f32b16e039a2233dd6eefecef325d5), `_get_omit_indices` and `__call__`.
//!
//! - **The rule.** Before every model query SWE-agent rebuilds the messages from the full
//!   history and elides the observations at positions `obs[1 : last_removed]` of the list of
//!   observations, `last_removed = max(0, (len(obs) // polling) * polling - n)`; an elided one
//!   reads `Old environment output: (N lines omitted)`, N its line count. It never drops a
//!   message: every elided record stays as its stand-in.
//! - **Our observations.** SWE-agent's first observation is the instance template (the task);
//!   the others are the command outputs, which import as `tool_result` records. The task is in
//!   the head (`keep_first=task`, the default), which is never elided, as `obs[0]` never is. So
//!   with `m` tool results after the head there are `m + 1` observations, and the elided ones are
//!   the oldest `max(0, last_removed - 1)` tool results, `last_removed = ((m + 1) // polling) *
//!   polling - n`: with `polling=1`, everything but the newest `n`; with a larger `polling` the
//!   window moves only when `m + 1` crosses a multiple of `polling`, so it keeps between `n` and
//!   `n + polling - 1` tool results. The task counts as observation 0 whatever the head holds
//!   (SWE-agent always adds its instance template first).
//! - **N** is the record's line count (`view.lines`, counted as Python's `splitlines`).
//!   SWE-agent counts the lines of the rendered message, its template included (the default
//!   `next_step_template` `OBSERVATION:\n{{observation}}` adds one line, the 0.7 configs three);
//!   an imported record holds whatever the transcript stored. Images (` (K images omitted)`) and
//!   the `keep_output`/`remove_output` tags are not modelled: our records carry neither.
//! - **Cost.** A stand-in costs what its text costs under the history's cost model; one written
//!   at an earlier call of a session keeps its cost (its text said the original N).
//! - **Defaults.** The source has no default for `n` (it is required, and must be ≥ 1); 5 is
//!   what every config that uses this processor sets (`config/sweagent_0_7/07*.yaml`,
//!   `config/coding_challenge.yaml`, …). The current `config/default.yaml` does not use it;
//!   the Complexity Trap's masking runs use `n=10` (`swe_agent_last_n(n=10)`). `polling`
//!   defaults to 1 and must be ≥ 1 (the source divides by it).
//! - **Trigger.** Every call ([`When::EveryCall`]): a per-call view of the history; a session
//!   re-applies it to the context it compacted before, which gives the same result (the set of
//!   elided observations only grows).
//! - **Cell.** The rule applied to the whole history; infeasible when the result exceeds the
//!   capacity (SWE-agent would send it anyway). `keep_recent` is ignored (`n` is the window).

use super::preset::{at_least, push_whole, stand_in_cost};
use super::rule::{RuleSpec, Tail};
use super::window::window_start;
use super::{spec, Context, Item, Outcome, View, When};
use crate::error::ParseError;
use crate::history::Kind;

pub const DEFAULT_N: usize = 5;
pub const DEFAULT_POLLING: usize = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweAgentLastN {
    /// Observations kept intact (at least).
    pub n: usize,
    /// The window moves every `polling` observations.
    pub polling: usize,
}

impl SweAgentLastN {
    /// How many of the oldest tool results are elided when the view holds `results` of them
    /// (the task is observation 0, so there are `results + 1` observations).
    pub fn elided(&self, results: usize) -> usize {
        let observations = results + 1;
        let last_removed = (observations / self.polling * self.polling).saturating_sub(self.n);
        // `obs[1:last_removed]`: position 0, the task, is never in it.
        last_removed.saturating_sub(1)
    }
}

impl RuleSpec for SweAgentLastN {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "swe_agent_last_n";
    const TAIL: Tail = Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(SweAgentLastN {
            n: at_least(p, "n", 1, " (observations)")?.unwrap_or(DEFAULT_N),
            polling: at_least(p, "polling", 1, " (observations)")?.unwrap_or(DEFAULT_POLLING),
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        if self.n != DEFAULT_N {
            params.push(format!("n={}", self.n));
        }
        if self.polling != DEFAULT_POLLING {
            params.push(format!("polling={}", self.polling));
        }
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        let results = view
            .kinds
            .iter()
            .filter(|&&k| k == Kind::ToolResult)
            .count();
        let intact_from =
            window_start(view.kinds, Kind::ToolResult, results - self.elided(results));
        push_whole(view, capacity, out, |i| {
            if view.kinds[i] == Kind::ToolResult && i < intact_from {
                // `Old environment output: (N lines omitted)`, costed once per history.
                let cost = stand_in_cost(&view, i, || view.stand_ins.omitted_costs[i]);
                (Item::Placeholder(i), cost)
            } else {
                (Item::Verbatim(i), view.costs[i])
            }
        })
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }
}
