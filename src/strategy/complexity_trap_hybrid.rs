//! `complexity_trap_hybrid(n=21, m=10, last_n=10)`: the hybrid configuration of *The Complexity
//! Trap* (arXiv 2508.21433), `Recursive-Safeguarding/the-complexity-trap` @ adfaa1a
//! `config/default_no_demo_checkpoint_same_model_openhands_N=21_M=10_masking_M=10.yaml` (the
//! README's example): the `complexity_trap_summary(n, m)` processor, then
//! `last_n_observations(n=10)` on its output (`sweagent/agent/history_processors.py`), both on
//! every model call (`When::EveryCall`).
//!
//! - **Summary step**: exactly `complexity_trap_summary` (turns, trigger, head, checkpoint).
//! - **Masking step** (`last_n`, default 10): tool results older than the newest `last_n` among
//!   what the summary step kept become `Old environment output: (N lines omitted)` (the
//!   checkpoint is a thought, never masked; the task is in the head). Masking calls no model.
//! - **Which N**: the repo also has a `…_N=43_M=10_masking_M=10.yaml` hybrid, and the README does
//!   not say which one the paper's row uses; `n=43` selects it.
//! - **In a session** the masking of earlier calls is already in the context when a checkpoint
//!   is written, so the summary sees those observations as their stand-ins and carries nothing
//!   of them, where SWE-agent's summariser reads the raw observations. In a cell the summary
//!   sees the raw records.

use super::complexity_trap_summary::{push_checkpoint_and_rest, Turns};
use super::last_n_observations::{intact_from, masked};
use super::summary_preset::{fits, push_if};
use super::{spec, Context, Outcome, Summary, View, When};
use crate::error::ParseError;
use crate::summariser::Summariser;

pub const DEFAULT_LAST_N: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct ComplexityTrapHybrid {
    pub turns: Turns,
    /// Tool results kept intact by the masking step.
    pub last_n: usize,
    pub summary: Summary,
}

impl super::rule::RuleSpec for ComplexityTrapHybrid {
    const NAME: &'static str = "complexity_trap_hybrid";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(ComplexityTrapHybrid {
            turns: Turns::parse(p)?,
            last_n: p.usize("last_n")?.unwrap_or(DEFAULT_LAST_N),
            summary: Summary::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        self.turns.push_params(params);
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

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summary.summariser)
    }
}
