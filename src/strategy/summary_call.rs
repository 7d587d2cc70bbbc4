//! How a harness sends the model call that writes its summary, so a session bills it as the
//! harness would (a preset declares it with [`super::rule::RuleSpec::summary_call`]).
//!
//! | harness | the summary call's prompt | cache |
//! | --- | --- | --- |
//! | Codex, Claude Code, ctxlab's `summary` | the agent's whole context, then the summary request | the agent's: it reads the prefix the last agent call left |
//! | OpenHands `LLMSummarizingCondenser` | its instruction, the previous summary and the forgotten events, one user message | off (`caching_prompt = False`) |
//! | Gemini CLI | its own system instruction and the history before the split; then a self-check that sends it again with the first snapshot | none shared with the agent's prompt; the second call shares the first call's prompt |
//! | the Complexity Trap | its own system and user prompt holding the summarised turns | none shared with the agent's prompt |

/// The summary call of a strategy that writes summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryCall {
    /// One call on the agent's current context (the summary request is taken as costing
    /// nothing beside it), billed with the agent's cache.
    #[default]
    WholeContext,
    /// A prompt of the harness's own: `prompt` units of instruction (the cost model's tokens)
    /// before the records the summary stands for, sent in `calls` calls, each later one adding
    /// the summary the one before it wrote. None of it shares a prefix with the agent's prompt;
    /// with `cached` the provider's cache reads a later call's prefix that repeats the call
    /// before it, without it nothing is read.
    Separate {
        prompt: u64,
        calls: u32,
        cached: bool,
    },
}

impl SummaryCall {
    /// The model calls one summary takes.
    pub fn calls(self) -> u32 {
        match self {
            SummaryCall::WholeContext => 1,
            SummaryCall::Separate { calls, .. } => calls,
        }
    }
}
