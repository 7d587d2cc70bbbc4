//! `claude-code-thinking`: Claude Code sessions read as [`super::claude_code`] reads them, with
//! the model's thinking blocks kept as records of their own (tool calls of the tool
//! [`THINKING_TOOL`](crate::history::THINKING_TOOL), output of the call that wrote them), so
//! rules on thinking blocks (Anthropic's `clear_thinking_20251015`) can be measured. Replayed
//! under `raw`, every thinking block stays in the context of every later call, as the API keeps
//! them when no clearing is configured for models that keep earlier turns' thinking.

/// The `claude-code-thinking` transcript format.
pub struct ClaudeCodeThinking;

impl super::TranscriptFormat for ClaudeCodeThinking {
    const RECORDS_USAGE: bool = true;
    fn read(
        path: &std::path::Path,
        text: &str,
        problems: &mut super::Problems,
        tally: &mut super::Tally,
    ) -> Result<Vec<super::Run>, crate::error::InputError> {
        let run = super::claude_code::parse_with(
            path,
            text,
            problems,
            tally,
            super::claude_code::Thinking::Keep,
        )?;
        Ok(vec![run])
    }
}
