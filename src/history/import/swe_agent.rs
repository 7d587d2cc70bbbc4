//! SWE-agent trajectories (`<instance_id>.traj`, one JSON object).
//!
//! The model's conversation is `history`, a list of `{role, content, ...}` items:
//!
//! | item | record |
//! | --- | --- |
//! | `system` | `system` |
//! | any item with `is_demo: true` (a demonstration run shown as an example) | `note` |
//! | first other `user` item (the instance template with the problem statement) | `user` |
//! | later `user` items (command output, format-error notices) | `tool_result` of `bash` |
//! | `assistant` content (thought and, without function calling, the command) | `assistant` (left out when empty) |
//! | each of `assistant.tool_calls` | `tool_call`, tool = `function.name`, text = `function.arguments` |
//! | `tool` (function-calling observation) | `tool_result`, tool = the name of the call in `tool_call_ids` |
//!
//! Without function calling every command, SWE-agent's own (`open`, `edit`, ...) included,
//! runs in the agent's bash session, hence `bash`. A file without `history` (older runs) is
//! read from `trajectory` instead: the first step's `query` up to its first assistant message
//! gives the opening records, then each step gives its `response` (or `thought` and `action`)
//! as `assistant` and its `observation` as a `tool_result` of `bash`. `.traj` files record no
//! per-call prompt sizes, so these runs cannot be calibrated.

use super::{arguments_text, json_error, run_name, Role, Run, RunBuilder, ToolCall, ToolIds};
use crate::error::InputError;
use crate::error::ParseError;
use crate::history::Kind;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Deserialize)]
struct Traj {
    #[serde(default)]
    history: Vec<TrajectoryItem>,
    #[serde(default)]
    trajectory: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(rename = "Item")] // the name serde's messages quote
struct TrajectoryItem {
    role: Role,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    is_demo: Option<bool>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    tool_call_ids: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Step {
    #[serde(default)]
    response: Option<String>,
    #[serde(default)]
    thought: Option<String>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    observation: Option<String>,
    #[serde(default)]
    query: Vec<TrajectoryItem>,
}

const EXPECTED: &str = "a SWE-agent trajectory: a JSON object with `history` (a list of \
    `{role: system|user|assistant|tool, content}`) or `trajectory` (a list of steps)";

pub fn parse(path: &Path, text: &str) -> Result<Run, InputError> {
    let t: Traj =
        crate::strict_json::from_str(text).map_err(|e| json_error(path, &e, None, EXPECTED))?;
    let mut conv = Conversation {
        run: RunBuilder::new(run_name(path)),
        tools: ToolIds::default(),
        seen_task: false,
    };
    let origin = path.display().to_string();
    if !t.history.is_empty() {
        for (i, item) in t.history.iter().enumerate() {
            conv.add(item)
                .map_err(|msg| InputError::key(&origin, format!("history[{i}]"), msg))?;
        }
    } else {
        let opening = t
            .trajectory
            .first()
            .map(|s| s.query.as_slice())
            .unwrap_or(&[]);
        for (i, item) in opening.iter().enumerate() {
            if item.role == Role::Assistant {
                break;
            }
            conv.add(item).map_err(|msg| {
                InputError::key(&origin, format!("trajectory[0].query[{i}]"), msg)
            })?;
        }
        for step in &t.trajectory {
            let said = match (&step.response, &step.thought, &step.action) {
                (Some(r), _, _) if !r.is_empty() => r.clone(),
                (_, thought, action) => [thought.as_deref(), action.as_deref()]
                    .into_iter()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            };
            if !said.is_empty() {
                conv.run.push(Kind::Assistant, None, said);
            }
            if let Some(obs) = &step.observation {
                conv.run.push(Kind::ToolResult, Some("bash"), obs.clone());
            }
        }
    }
    conv.run.finish(path)
}

struct Conversation {
    run: RunBuilder,
    tools: ToolIds,
    seen_task: bool,
}

impl Conversation {
    fn add(&mut self, item: &TrajectoryItem) -> Result<(), ParseError> {
        let text = super::content_text(&item.content);
        if item.is_demo == Some(true) {
            self.run.push(Kind::Note, None, text);
            return Ok(());
        }
        match item.role {
            Role::System => self.run.push(Kind::System, None, text),
            Role::User if !self.seen_task => {
                self.seen_task = true;
                self.run.push(Kind::User, None, text);
            }
            Role::User => self.run.push(Kind::ToolResult, Some("bash"), text),
            Role::Assistant => {
                if !text.is_empty() {
                    self.run.push(Kind::Assistant, None, text);
                }
                for c in item.tool_calls.iter().flatten() {
                    self.tools.declare(&c.id, &c.function.name);
                    let args = arguments_text(&c.function.arguments);
                    self.run.push(Kind::ToolCall, Some(&c.function.name), args);
                }
            }
            Role::Tool => {
                let id = item
                    .tool_call_ids
                    .as_ref()
                    .and_then(|ids| ids.first())
                    .ok_or("a `tool` item needs `tool_call_ids`")?;
                let tool = self.tools.name(id).ok_or_else(|| {
                    format!("a `tool` item refers to tool call {id:?}, which no earlier assistant item declared")
                })?;
                let tool = tool.to_string();
                self.run.push(Kind::ToolResult, Some(&tool), text);
            }
        }
        Ok(())
    }
}

/// The `swe_agent` transcript format.
pub struct SweAgent;

impl super::TranscriptFormat for SweAgent {
    const RECORDS_USAGE: bool = false;
    fn read(
        path: &Path,
        text: &str,
        _problems: &mut super::Problems,
        tally: &mut super::Tally,
    ) -> Result<Vec<super::Run>, InputError> {
        super::one_run(parse(path, text)?, tally)
    }
}
