//! `complexity_trap_summary(n=21, m=10)`: the LLM-Summary configuration of *The Complexity
//! Trap* (Lindenbauer et al., arXiv 2508.21433), SWE-agent's `SummarizeEveryNTurns` in
//! `Recursive-Safeguarding/the-complexity-trap` (a fork holding the original upload, commits
//! a70c88c…adfaa1a, 2025-10-13) `sweagent/agent/history_processors.py`, configured by
//! `config/default_no_demo_checkpoint_same_model_openhands_N=21_M=10.yaml`
//! (`n=21, keep_last_m_turns=10, enable_static_checkpointing=true`).
//!
//! - **Unit: turns.** A turn is one agent call: the records from an assistant record (or a tool
//!   call that starts a call) up to the next one — the assistant record, its tool calls and the
//!   tool results after them, as SWE-agent pairs (assistant, observation). Records between the
//!   head and the first turn (an earlier checkpoint, anything between the task and the first
//!   call) are summarised with the first turns.
//! - **Trigger**: applied before every model call (`When::EveryCall`, a history processor); it
//!   acts when at least `n + m` unprocessed turns have piled up (31 by default): the oldest `n`
//!   become one checkpoint, the newest `m` and what follows stay. No tokens are involved. A
//!   history reached at once (a cell) is processed as the calls would have: the oldest `k·n`
//!   turns are in the summary, where `k` is how many times the rule fired.
//! - **Head**: the system prompt and the task (`history[:2]`), never summarised (`keep_first=task`).
//! - **Summary**: the checkpoint is one call of the summary model (the same model in the paper),
//!   fed the previous checkpoint (`<PREVIOUS_CHECKPOINT>`), so it stands for the earlier
//!   checkpoint too; with static checkpointing the trigger step shows only the newest
//!   checkpoint, which is what the context keeps. The source's later non-trigger steps show
//!   every checkpoint so far again (`cache + …`, a quirk of the code as written): not modelled.
//! - **The summary call**: SWE-agent's summariser sends a prompt of its own, the config's
//!   `summary_system_template` (≈ 1 500 characters, [`PROMPT_TOKENS`]) as the system message and
//!   the turns it summarises (with the previous checkpoint) as the user message; none of it is
//!   the agent's prompt, so it is billed as a separate prompt of those records, read from no
//!   cache.
//! - **Summary size and writer**: [`SummaryRule`] parameters, `summariser=NAME` included (default `simulated`).

use super::summary_preset::{at_least, fits, push_if, summarise_span, unchanged};
use super::{spec, Context, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::starts_call as starts_turn;

pub const DEFAULT_N: usize = 21;
pub const DEFAULT_M: usize = 10;
/// The config's `summary_system_template`, about 1 500 characters: at 4 characters a token,
/// 380 tokens.
pub const PROMPT_TOKENS: u64 = 380;

/// The Complexity Trap's summary call: its own system and user prompt, no shared prefix.
pub const SUMMARY_CALL: SummaryCall = SummaryCall::Separate {
    prompt: PROMPT_TOKENS,
    calls: 1,
    cached: false,
};

/// The turn counts of the rule: summarise the oldest `n` turns when `n + m` are unprocessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turns {
    pub n: usize,
    pub m: usize,
}

impl Turns {
    /// Reads `n` (default `default_n`, the configuration's) and `m`.
    pub fn parse(p: &mut spec::Params, default_n: usize) -> Result<Self, ParseError> {
        Ok(Turns {
            n: at_least(p, "n", 1, default_n)?,
            m: p.usize("m")?.unwrap_or(DEFAULT_M),
        })
    }

    pub fn push_params(&self, params: &mut Vec<String>, default_n: usize) {
        push_if(params, "n", self.n, default_n);
        push_if(params, "m", self.m, DEFAULT_M);
    }

    /// Where the records the rule keeps begin: 0 when it does not fire, else the first record
    /// of the first turn after the `k·n` summarised ones (`out.order` holds the turn starts).
    pub fn summarised_end(&self, view: &View, out: &mut Context) -> usize {
        out.order.clear();
        out.order
            .extend((0..view.len()).filter(|&r| starts_turn(view.kinds, r)));
        let mut unprocessed = out.order.len();
        let mut done = 0;
        while unprocessed >= self.n + self.m {
            unprocessed -= self.n;
            done += self.n;
        }
        match done {
            0 => 0,
            _ => out.order.get(done).copied().unwrap_or(view.len()),
        }
    }
}

/// Summarises records `..end` into one checkpoint (nothing when `end` is 0) and pushes the
/// rest as `item_of` says.
pub fn push_checkpoint_and_rest(
    summary: &SummaryRule,
    view: &View,
    end: usize,
    stream: u64,
    out: &mut Context,
    item_of: impl Fn(usize) -> (Item, u64),
) {
    if end > 0 {
        summarise_span(summary, view, (0, end), stream, out);
    }
    for i in end..view.len() {
        let (item, cost) = item_of(i);
        out.push(item, cost, view.separator);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ComplexityTrapSummary {
    pub turns: Turns,
    pub summary: SummaryRule,
}

impl super::rule::RuleSpec for ComplexityTrapSummary {
    const NAME: &'static str = "complexity_trap_summary";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        Ok(ComplexityTrapSummary {
            turns: Turns::parse(p, DEFAULT_N)?,
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        self.turns.push_params(params, DEFAULT_N);
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
        if end == 0 {
            return unchanged(&view, capacity, out);
        }
        push_checkpoint_and_rest(&self.summary, &view, end, stream, out, |i| {
            (Item::Verbatim(i), view.costs[i])
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
}
