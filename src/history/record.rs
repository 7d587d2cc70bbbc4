//! One entry of an agent's history and the history that holds them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What role a record plays in the agent loop.
///
/// Strategies such as `mask` and `clear_tool_uses` act on [`Kind::ToolResult`] records only, so
/// the kind matters; a history file that leaves it out gets [`Kind::Note`], the one kind no
/// strategy treats specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    System,
    User,
    Assistant,
    ToolCall,
    ToolResult,
    Summary,
    #[default]
    Note,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::System,
        Kind::User,
        Kind::Assistant,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::Summary,
        Kind::Note,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::System => "system",
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::ToolCall => "tool_call",
            Kind::ToolResult => "tool_result",
            Kind::Summary => "summary",
            Kind::Note => "note",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown kind {s:?}, expected one of {}",
                    Kind::ALL.map(Kind::as_str).join(", ")
                )
            })
    }
}

/// The tool name that marks a model's thinking block kept as a record of its own: a
/// `tool_call` record of this tool (the `claude-code-thinking` transcript format writes them),
/// part of its call's output, which rules on thinking blocks recognise.
pub const THINKING_TOOL: &str = "thinking";

/// One record: an instruction, a thought, a tool call, a tool result, ...
///
/// `required` is the ground truth used only for scoring; strategies never see it (they see
/// flags, a possibly wrong copy made by the noise model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    pub id: u64,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// When the transcript wrote it, if it says (what a cache's lifetime is measured by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<super::time::Time>,
    pub text: String,
    pub required: bool,
}

impl Record {
    /// A record with the given id and text, of kind `note`, not required.
    pub fn new(id: u64, text: impl Into<String>) -> Self {
        Record {
            id,
            kind: Kind::default(),
            tool: None,
            time: None,
            text: text.into(),
            required: false,
        }
    }

    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    pub fn kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    pub fn at(mut self, time: super::time::Time) -> Self {
        self.time = Some(time);
        self
    }
}

/// The records of one agent run, oldest first, with strictly increasing ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    pub name: String,
    pub records: Vec<Record>,
    /// The flags a harness could have had, when rules other than the truth's set them (real
    /// runs: `histories.flags`); `None`: the flags start from the truth, as in the article.
    pub flags: Option<Vec<bool>>,
    /// `(overridden, overriding)` record indices, by overriding record: a later record that
    /// changes an earlier required one's decision (the generator's `supersede_rate`; empty
    /// for every other history). What the `stale` measure ([`crate::stale`]) checks.
    pub supersessions: Vec<(usize, usize)>,
}

impl History {
    pub fn new(name: impl Into<String>, records: Vec<Record>) -> Self {
        History {
            name: name.into(),
            records,
            flags: None,
            supersessions: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The ground-truth labels, in record order.
    pub fn truth(&self) -> Vec<bool> {
        self.records.iter().map(|r| r.required).collect()
    }

    /// What label noise starts from: the history's own flags, else the truth.
    pub fn flag_base(&self) -> Vec<bool> {
        self.flags.clone().unwrap_or_else(|| self.truth())
    }
}

/// Whether record `r` starts an agent call: an assistant record always does; a tool call does
/// unless it follows an assistant record or another tool call (then it is part of that
/// call's output).
pub fn starts_call(kinds: &[Kind], r: usize) -> bool {
    match kinds[r] {
        Kind::Assistant => true,
        Kind::ToolCall => r == 0 || !matches!(kinds[r - 1], Kind::Assistant | Kind::ToolCall),
        _ => false,
    }
}
