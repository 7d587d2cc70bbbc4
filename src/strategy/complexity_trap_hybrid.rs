//! `complexity_trap_hybrid(n=43, m=10, last_n=10)`: the hybrid configuration of *The Complexity
//! Trap* (arXiv 2508.21433), `Recursive-Safeguarding/the-complexity-trap` @ adfaa1a
//! `config/default_no_demo_checkpoint_same_model_openhands_N=43_M=10_masking_M=10.yaml`: the
//! `complexity_trap_summary(n, m)` processor, then `last_n_observations(n=10)` on its output
//! (`sweagent/agent/history_processors.py`), both on every model call (`When::EveryCall`).
//!
//! - **Which N**: 43. The paper: "we use N=43, M=W=10 for the hybrid setup"; the repo's
//!   `…_N=21_M=10_masking_M=10.yaml` is the ablation it sets aside (`n=21` selects it).
//! - **Summary step**: exactly `complexity_trap_summary` (turns, trigger, head, checkpoint,
//!   the summary call on a prompt of its own).
//! - **Masking step** (`last_n`, default 10): tool results older than the newest `last_n` among
//!   what the summary step kept become `Old environment output: (N lines omitted)` (the
//!   checkpoint is a thought, never masked; the task is in the head). Masking calls no model.
//! - **The summariser reads the unmasked turns.** SWE-agent's history processors run in order
//!   on the full history before every call, so `SummarizeEveryNTurns` sees the observations as
//!   the environment returned them and the masking applies only to what is sent. In a session
//!   the context holds the stand-ins of earlier calls; the rule is shown the records they stand
//!   for ([`RuleSpec::reads_unmasked`](super::rule::RuleSpec::reads_unmasked)), so a checkpoint
//!   carries what the raw turns held and its prompt bills them whole.

use super::complexity_trap_summary::{push_checkpoint_and_rest, Turns, SUMMARY_CALL};
use super::last_n_observations::{intact_from, masked};
use super::summary_preset::{fits, push_if};
use super::{spec, Context, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;

pub const DEFAULT_LAST_N: usize = 10;
/// The paper's hybrid `N` (its `M = W = 10`).
pub const DEFAULT_N: usize = 43;

#[derive(Debug, Clone, PartialEq)]
pub struct ComplexityTrapHybrid {
    pub turns: Turns,
    /// Tool results kept intact by the masking step.
    pub last_n: usize,
    pub summary: SummaryRule,
}

impl super::rule::RuleSpec for ComplexityTrapHybrid {
    const NAME: &'static str = "complexity_trap_hybrid";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(ComplexityTrapHybrid {
            turns: Turns::parse(p, DEFAULT_N)?,
            last_n: p.usize("last_n")?.unwrap_or(DEFAULT_LAST_N),
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        self.turns.push_params(params, DEFAULT_N);
        push_if(params, "last_n", self.last_n, DEFAULT_LAST_N);
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
        let end = self.turns.summarised_end(&view, out);
        let intact = end + intact_from(&view.kinds[end..], self.last_n);
        push_checkpoint_and_rest(&self.summary, &view, end, stream, out, |i| {
            masked(&view, i, intact)
        });
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }

    fn summary_call(&self) -> SummaryCall {
        SUMMARY_CALL
    }

    fn reads_unmasked(&self) -> bool {
        true
    }
}
