//! Plain OpenAI chat transcripts: a JSON file holding `{"messages": [...]}` or a bare list of
//! messages, or a `.jsonl` file with one message per line.
//!
//! | message | record |
//! | --- | --- |
//! | `system` or `developer` | `system` |
//! | `user` | `user` (the first is the task) |
//! | `assistant` content | `assistant` (left out when empty, as it is beside tool calls) |
//! | each of `assistant.tool_calls` (or a legacy `function_call`) | `tool_call`, tool = `function.name`, text = `function.arguments` |
//! | `tool` | `tool_result`, tool = the name of the call with its `tool_call_id` (or its own `name`) |
//! | legacy `function` | `tool_result`, tool = `name` |
//!
//! Content may be a string, `null` or a list of parts (text parts joined by a newline, images
//! as `[image: ...]`). An assistant message that carries `usage.prompt_tokens` (as a Chat
//! Completions response does) records a model call on every record before it.

use super::{
    arguments_text, json_error, run_name, Function, Problems, Run, RunBuilder, ToolCall, ToolIds,
};
use crate::error::InputError;
use crate::error::ParseError;
use crate::history::Kind;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Deserialize)]
struct File {
    messages: Vec<OpenAiMessage>,
}

#[derive(Deserialize)]
#[serde(rename = "Message")] // the name serde's messages quote
struct OpenAiMessage {
    role: OpenAiRole,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    function_call: Option<Function>,
    #[serde(default)]
    usage: Option<OpenAiUsage>,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
#[serde(rename = "Role")] // the name serde's messages quote
enum OpenAiRole {
    System,
    Developer,
    User,
    Assistant,
    Tool,
    Function,
}

#[derive(Deserialize)]
#[serde(rename = "Usage")] // the name serde's messages quote
struct OpenAiUsage {
    prompt_tokens: u64,
}

const EXPECTED_FILE: &str = "OpenAI chat messages: `{\"messages\": [...]}` or a list of \
    `{role, content, tool_calls?, tool_call_id?}`";
const EXPECTED_LINE: &str =
    "one OpenAI chat message per line: `{role, content, tool_calls?, tool_call_id?}`";

pub fn parse(path: &Path, text: &str, problems: &mut Problems) -> Result<Run, InputError> {
    let mut chat = Chat {
        run: RunBuilder::new(run_name(path)),
        tools: ToolIds::default(),
    };
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
    if is_jsonl {
        for (n, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let checked = crate::strict_json::from_str::<OpenAiMessage>(raw)
                .map_err(|e| json_error(path, &e, Some(n + 1), EXPECTED_LINE))
                .and_then(|m| {
                    chat.add(&m)
                        .map_err(|msg| InputError::line(path, n + 1, msg))
                });
            if let Err(e) = checked {
                problems.line(e)?;
            }
        }
    } else {
        let messages: Vec<OpenAiMessage> = if text.trim_start().starts_with('[') {
            crate::strict_json::from_str(text)
        } else {
            crate::strict_json::from_str::<File>(text).map(|f| f.messages)
        }
        .map_err(|e| json_error(path, &e, None, EXPECTED_FILE))?;
        for (i, m) in messages.iter().enumerate() {
            chat.add(m).map_err(|msg| {
                InputError::key(path.display().to_string(), format!("messages[{i}]"), msg)
            })?;
        }
    }
    chat.run.finish(path)
}

struct Chat {
    run: RunBuilder,
    tools: ToolIds,
}

impl Chat {
    /// Adds the records of one message, or none if it is malformed.
    fn add(&mut self, m: &OpenAiMessage) -> Result<(), ParseError> {
        let text = super::content_text(&m.content);
        match m.role {
            OpenAiRole::System | OpenAiRole::Developer => self.run.push(Kind::System, None, text),
            OpenAiRole::User => self.run.push(Kind::User, None, text),
            OpenAiRole::Assistant => {
                if let Some(u) = &m.usage {
                    self.run.call(u.prompt_tokens)?;
                }
                if !text.is_empty() {
                    self.run.push(Kind::Assistant, None, text);
                }
                let calls = m.tool_calls.iter().flatten();
                for c in calls {
                    self.tools.declare(&c.id, &c.function.name);
                    self.run.push(
                        Kind::ToolCall,
                        Some(&c.function.name),
                        arguments_text(&c.function.arguments),
                    );
                }
                if let Some(f) = &m.function_call {
                    self.run
                        .push(Kind::ToolCall, Some(&f.name), arguments_text(&f.arguments));
                }
            }
            OpenAiRole::Tool => {
                let by_id = m.tool_call_id.as_deref().and_then(|id| self.tools.name(id));
                let tool = by_id.or(m.name.as_deref()).ok_or_else(|| match &m.tool_call_id {
                    Some(id) => format!("a `tool` message refers to tool_call_id {id:?}, which no earlier assistant tool call declared"),
                    None => "a `tool` message needs `tool_call_id` (or `name`)".to_string(),
                })?;
                let tool = tool.to_string();
                self.run.push(Kind::ToolResult, Some(&tool), text);
            }
            OpenAiRole::Function => {
                let tool = m
                    .name
                    .as_deref()
                    .ok_or("a `function` message needs `name`")?;
                self.run.push(Kind::ToolResult, Some(tool), text);
            }
        }
        Ok(())
    }
}

/// The `openai_chat` transcript format.
pub struct OpenaiChat;

impl super::TranscriptFormat for OpenaiChat {
    const RECORDS_USAGE: bool = false;
    fn read(
        path: &Path,
        text: &str,
        problems: &mut super::Problems,
        tally: &mut super::Tally,
    ) -> Result<Vec<super::Run>, InputError> {
        super::one_run(parse(path, text, problems)?, tally)
    }
}
