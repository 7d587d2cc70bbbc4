//! mini-swe-agent trajectories (`<instance_id>.traj.json`).
//!
//! `messages` is an OpenAI-style chat: the `system` message gives a `system` record; the
//! first `user` message is the task (`user`); every later `user` message is what the harness
//! sends back after running the agent's command (its output, a timeout notice or a format
//! error), so it gives a `tool_result` of `bash`; each `assistant` message (a thought and one
//! fenced command) gives one `assistant` record. An assistant message whose
//! `extra.response.usage.prompt_tokens` is present records a model call on every record before
//! it; with `completion_tokens` beside it, also the call's billing (`prompt_tokens_details.
//! cached_tokens` read from cache, the rest of the prompt plain input). The run is named after `instance_id`, or the file when that is missing.

use super::{json_error, run_name, Role, Run, RunBuilder};
use crate::error::InputError;
use crate::history::Kind;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct Trajectory {
    #[serde(default)]
    instance_id: Option<String>,
    messages: Vec<MiniSweMessage>,
}

#[derive(Deserialize)]
#[serde(rename = "Message")] // the name serde's messages quote
struct MiniSweMessage {
    role: Role,
    #[serde(default)]
    content: serde_json::Value,
    #[serde(default)]
    extra: Option<Extra>,
}

#[derive(Deserialize)]
struct Extra {
    #[serde(default)]
    response: Option<MiniSweResponse>,
}

#[derive(Deserialize)]
#[serde(rename = "Response")] // the name serde's messages quote
struct MiniSweResponse {
    #[serde(default)]
    usage: Option<MiniSweUsage>,
}

#[derive(Deserialize)]
#[serde(rename = "Usage")] // the name serde's messages quote
struct MiniSweUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl MiniSweUsage {
    /// The call's billing, when `completion_tokens` is recorded beside `prompt_tokens`: the
    /// cached part of the prompt (`prompt_tokens_details.cached_tokens`, absent = 0) is a
    /// cache read, the rest plain input; OpenAI-style usage reports no cache writes.
    fn billed(&self, path: &Path) -> Result<Option<crate::history::Usage>, InputError> {
        let (Some(prompt), Some(output)) = (self.prompt_tokens, self.completion_tokens) else {
            return Ok(None);
        };
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        let uncached = prompt.checked_sub(cached).ok_or_else(|| InputError::File {
            path: path.to_path_buf(),
            message: format!(
                "a response's usage records cached_tokens {cached} above prompt_tokens {prompt}"
            ),
        })?;
        Ok(Some(crate::history::Usage {
            uncached,
            cache_read: cached,
            cache_write: 0,
            output,
        }))
    }
}

const EXPECTED: &str = "a mini-swe-agent trajectory: a JSON object with `messages`, a list of \
    `{role: system|user|assistant, content}`";

pub fn parse(path: &Path, text: &str) -> Result<Run, InputError> {
    let t: Trajectory =
        crate::strict_json::from_str(text).map_err(|e| json_error(path, &e, None, EXPECTED))?;
    let name = t
        .instance_id
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| run_name(path));
    let mut run = RunBuilder::new(name);
    let mut seen_task = false;
    for (i, m) in t.messages.iter().enumerate() {
        let text = super::content_text(&m.content);
        match m.role {
            Role::System => run.push(Kind::System, None, text),
            Role::User if !seen_task => {
                seen_task = true;
                run.push(Kind::User, None, text);
            }
            Role::User | Role::Tool => run.push(Kind::ToolResult, Some("bash"), text),
            Role::Assistant => {
                let usage = m
                    .extra
                    .as_ref()
                    .and_then(|x| x.response.as_ref())
                    .and_then(|r| r.usage.as_ref());
                if let Some(u) = usage {
                    let counted = match (u.billed(path)?, u.prompt_tokens) {
                        (Some(billed), _) => run.call_billed(billed),
                        (None, Some(tokens)) => run.call(tokens),
                        (None, None) => Ok(()),
                    };
                    counted.map_err(|msg| {
                        InputError::key(path.display().to_string(), format!("messages[{i}]"), msg)
                    })?;
                }
                run.push(Kind::Assistant, None, text);
            }
        }
    }
    run.finish(path)
}

/// The `mini_swe_agent` transcript format.
pub struct MiniSweAgent;

impl super::TranscriptFormat for MiniSweAgent {
    const RECORDS_USAGE: bool = true;
    fn read(
        path: &Path,
        text: &str,
        _problems: &mut super::Problems,
        tally: &mut super::Tally,
    ) -> Result<Vec<super::Run>, InputError> {
        super::one_run(parse(path, text)?, tally)
    }
}
