//! Claude Code sessions (JSON Lines, one event per line, discriminated by `type`).
//!
//! Only `user` and `assistant` lines of the main conversation give records; each content block
//! gives one:
//!
//! | line, block | record |
//! | --- | --- |
//! | `user` text (string content or `text` block): the task, later requests | `user` |
//! | `user` line with `isMeta: true` (harness caveats) | `note` |
//! | `user` line with `isCompactSummary: true` | `summary`; the model's context restarts there |
//! | `image` block | the line's kind, text `[image: <media type>]` |
//! | `assistant` `text` block | `assistant` |
//! | `assistant` `tool_use` block | `tool_call`, tool = `name`, text = `input` as compact JSON |
//! | `user` `tool_result` block | `tool_result`, tool = the name of the `tool_use` with that id |
//! | `thinking`, `redacted_thinking` blocks | none (see below) |
//! | any other block | `note` holding the block's JSON |
//!
//! Every line is read and counted by its `type` ([`Tally`]: what each became, records by kind
//! or the reason it gives none). Left out, each counted under its reason:
//! - lines with `isSidechain: true` (a sub-agent's own conversation, a different context; its
//!   result comes back to the main thread as the `Task` tool's result);
//! - assistant lines Claude Code wrote itself, not a model (`message.model` `<synthetic>`, zero
//!   usage: `API Error: …` with `isApiErrorMessage: true` when a request failed, `No response
//!   requested.` after a local command): no call was made or billed;
//! - lines of the other types, none of which is sent to the model: `progress` (hook, command
//!   and sub-agent progress), `system` (hook summaries, turn durations, compaction boundaries,
//!   API retries, local commands), `summary` (session titles), `file-history-snapshot`,
//!   `queue-operation` (messages typed while the model worked: they reach it as `user` lines),
//!   `pr-link`; a type not in this list is counted as unknown.
//!
//! Thinking blocks are left out because the API strips them from earlier turns: they do not
//! occupy the context of later calls (a line holding only thinking gives no record, but its
//! response is still a call). The `claude-code-thinking` format ([`super::claude_code_thinking`])
//! reads the same files keeping them ([`Thinking::Keep`]): each `thinking` block (its text) or
//! `redacted_thinking` block (its `data`) becomes a `tool_call` record of the tool
//! [`THINKING_TOOL`](crate::history::THINKING_TOOL), held until the response's last line so it
//! joins that response's call as output and starts no call of its own (a response of thinking
//! alone is a call of its own).
//!
//! Each record keeps its line's `timestamp`, but for caveats (`isMeta: true`), which carry the
//! time of the local command they introduce, written after the response before them. No other
//! line may be timed before the **start** of the latest model response, the first line of its
//! `message.id` (Claude Code writes the lines between two calls a few milliseconds out of
//! order, never before the response they follow): such a file is an error naming the line. The
//! start, not the latest line: one response with two `tool_use` blocks is logged as two lines,
//! and Claude Code runs the first tool while the model still streams the second, so the first
//! tool's result can be timed between the two lines (first call 08:19:41.712, its result .719,
//! the second call .817) and written after both. The history the lines give keeps the same
//! rule on its records ([`crate::history::time_order`]: no record before the start of the run
//! of model outputs before it), so what is imported loads again; a file whose records would
//! break it (a line timed before a later part of a response that came after other lines) is
//! an error naming the line too.
//!
use super::{
    image_marker, json_error, run_name, Problems, Run, RunBuilder, SeenIds, Tally, ToolIds,
};
use crate::error::InputError;
use crate::error::ParseError;
use crate::history::Kind;
use crate::history::time_order::TimeOrder;
use crate::history::Time;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(rename = "Line")] // the name serde's messages quote
struct TranscriptLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    message: Option<ClaudeMessage>,
    #[serde(default)]
    is_sidechain: Option<bool>,
    #[serde(default)]
    is_meta: Option<bool>,
    #[serde(default)]
    is_compact_summary: Option<bool>,
    #[serde(default)]
    is_api_error_message: Option<bool>,
    #[serde(default)]
    timestamp: Option<String>,
}

/// Line types that carry no message for the model.
const NOT_SENT: [&str; 6] = [
    "progress",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "pr-link",
];

#[derive(Deserialize)]
#[serde(rename = "Message")] // the name serde's messages quote
struct ClaudeMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    usage: Option<ClaudeUsage>,
}

#[derive(Deserialize)]
#[serde(rename = "Usage")] // the name serde's messages quote
struct ClaudeUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: u64,
}

impl ClaudeUsage {
    /// The call's whole input; `None` when the figures add up beyond `u64` (no real usage
    /// does: the line is corrupt, and a wrapped sum would pass for a small context).
    fn context(&self) -> Option<u64> {
        self.input_tokens
            .checked_add(self.cache_creation_input_tokens.unwrap_or(0))?
            .checked_add(self.cache_read_input_tokens.unwrap_or(0))
    }

    /// The call's billing: `input_tokens` uncached, cache creation a write, cache read a read.
    fn billed(&self) -> crate::history::Usage {
        crate::history::Usage {
            uncached: self.input_tokens,
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
            cache_write: self.cache_creation_input_tokens.unwrap_or(0),
            output: self.output_tokens,
        }
    }
}

const EXPECTED: &str = "a Claude Code event: a JSON object with `type` and, for `user` and \
    `assistant` lines, a `message` with `content`";

/// Whether thinking blocks become records (the `claude-code-thinking` format) or are left out
/// (`claude-code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thinking {
    Drop,
    Keep,
}

/// Thinking records held until their response's last line: the response's id, and each
/// record with its line's time.
#[derive(Default)]
struct HeldThinking {
    response: Option<String>,
    records: Vec<(Pending, Option<Time>)>,
}

impl HeldThinking {
    /// Adds the held records to the run (their response is over).
    fn flush(&mut self, run: &mut RunBuilder, tally: &mut Tally) {
        for (p, time) in self.records.drain(..) {
            run.at(time);
            tally.record("assistant", p.kind);
            run.push_flagged(p.kind, p.tool.as_deref(), p.text, p.failed);
        }
        self.response = None;
    }
}

/// A record of one line, checked before any is added so a bad line leaves nothing behind.
struct Pending {
    kind: Kind,
    tool: Option<String>,
    text: String,
    failed: bool,
}

pub fn parse(
    path: &Path,
    text: &str,
    problems: &mut Problems,
    tally: &mut Tally,
) -> Result<Run, InputError> {
    parse_with(path, text, problems, tally, Thinking::Drop)
}

/// [`parse`], keeping the thinking blocks as records or not.
pub(crate) fn parse_with(
    path: &Path,
    text: &str,
    problems: &mut Problems,
    tally: &mut Tally,
    thinking: Thinking,
) -> Result<Run, InputError> {
    let mut reader = Reader {
        path,
        thinking,
        held: HeldThinking::default(),
        run: RunBuilder::new(run_name(path)),
        tools: ToolIds::default(),
        responses: SeenIds::default(),
        response_start: None,
        order: TimeOrder::default(),
    };
    if continues_elsewhere(text) {
        reader.run.continues_elsewhere();
    }
    for (n, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        reader.line(n + 1, raw, problems, tally)?;
    }
    reader.held.flush(&mut reader.run, tally);
    reader.run.finish(path)
}

/// A transcript being read line by line: the run so far and what each later line is checked
/// against.
struct Reader<'a> {
    path: &'a Path,
    thinking: Thinking,
    held: HeldThinking,
    run: RunBuilder,
    tools: ToolIds,
    responses: SeenIds,
    /// The time and line of the first line of the latest model response.
    response_start: Option<(Time, usize)>,
    /// The time order of the records given so far, by the lines they came from.
    order: TimeOrder,
}

/// Counts a line of type `kind` as malformed and reports it: what every check of a line
/// does with the line it refuses.
fn malformed(
    kind: &str,
    problems: &mut Problems,
    tally: &mut Tally,
    e: InputError,
) -> Result<(), InputError> {
    tally.skipped(kind, "malformed line");
    problems.line(e)
}

/// The line `raw` when it is a turn sent to the model (a `user` or `assistant` line of the
/// main agent, written by a model or a human); `None` for any other, counted as skipped.
fn turn_line(
    path: &Path,
    line_no: usize,
    raw: &str,
    problems: &mut Problems,
    tally: &mut Tally,
) -> Result<Option<TranscriptLine>, InputError> {
    let line: TranscriptLine = match crate::strict_json::from_str(raw) {
        Ok(l) => l,
        Err(e) => {
            tally.line("(unreadable)");
            tally.skipped("(unreadable)", "malformed line");
            problems.line(json_error(path, &e, Some(line_no), EXPECTED))?;
            return Ok(None);
        }
    };
    let kind = line.kind.as_str();
    tally.line(kind);
    let is_turn = kind == "user" || kind == "assistant";
    if !is_turn {
        let reason = if NOT_SENT.contains(&kind) {
            "not sent to the model"
        } else {
            "unknown line type, not sent to the model"
        };
        tally.skipped(kind, reason);
        return Ok(None);
    }
    if line.is_sidechain == Some(true) {
        tally.skipped(kind, "sidechain (a sub-agent's own context)");
        return Ok(None);
    }
    let synthetic = line.message.as_ref().and_then(|m| m.model.as_deref()) == Some("<synthetic>");
    if line.is_api_error_message == Some(true) || synthetic {
        tally.skipped(kind, "written by Claude Code, not a model (no call)");
        return Ok(None);
    }
    Ok(Some(line))
}

impl Reader<'_> {
    /// Reads one turn line: checks it whole, then adds its records and its billing to the run
    /// (a line refused leaves nothing behind).
    fn line(
        &mut self,
        line_no: usize,
        raw: &str,
        problems: &mut Problems,
        tally: &mut Tally,
    ) -> Result<(), InputError> {
        let Some(line) = turn_line(self.path, line_no, raw, problems, tally)? else {
            return Ok(());
        };
        let kind = line.kind.as_str();
        let Some(message) = &line.message else {
            let e = InputError::line(
                self.path,
                line_no,
                format!("a `{kind}` line needs a `message` object"),
            );
            return malformed(kind, problems, tally, e);
        };
        if !self.held.records.is_empty()
            && (kind != "assistant" || message.id.is_none() || message.id != self.held.response)
        {
            self.held.flush(&mut self.run, tally);
        }
        let time = match self.time_of(&line, line_no) {
            Ok(t) => t,
            Err(e) => return malformed(kind, problems, tally, e),
        };
        let (pending, thought) = match self.records_in_order(&line, message, time, line_no) {
            Ok(records) => records,
            Err(e) => return malformed(kind, problems, tally, e),
        };
        if kind == "assistant" && !self.bill(message, time, line_no, problems, tally)? {
            return Ok(());
        }
        if line.is_compact_summary == Some(true) {
            self.run.restart_context();
        }
        self.give(kind, message, time, (pending, thought), tally);
        Ok(())
    }

    /// The line's time, checked against the start of the latest model response: `None` for a
    /// line without one and for a caveat.
    fn time_of(&self, line: &TranscriptLine, line_no: usize) -> Result<Option<Time>, InputError> {
        let time = match line.timestamp.as_deref().map(Time::parse).transpose() {
            // A caveat (`isMeta`) carries the time of the local command it introduces, which
            // Claude Code writes after the response before it (seconds to hours later): its
            // record has no time, so it orders nothing.
            Ok(_) if line.is_meta == Some(true) => None,
            Ok(t) => t,
            Err(msg) => {
                return Err(InputError::line(
                    self.path,
                    line_no,
                    format!("`timestamp`: {msg}"),
                ))
            }
        };
        if let (Some(t), Some((before, at))) = (time, self.response_start) {
            if t < before {
                return Err(InputError::line(
                    self.path,
                    line_no,
                    format!(
                        "`timestamp` {t} is earlier than {before}, the start of the model response on line {at}; lines must follow the session in time order (a line may come before the later lines of a response, never before its first)"
                    ),
                ));
            }
        }
        Ok(time)
    }

    /// The line's records and, when kept, its thinking records, once they are known to keep
    /// the history in time order (which then takes them in).
    fn records_in_order(
        &mut self,
        line: &TranscriptLine,
        message: &ClaudeMessage,
        time: Option<Time>,
        line_no: usize,
    ) -> Result<(Vec<Pending>, Vec<Pending>), InputError> {
        let mut thought = Vec::new();
        let keep_thinking = (self.thinking == Thinking::Keep).then_some(&mut thought);
        let pending = if line.kind == "assistant" {
            assistant_records(message, &mut self.tools, keep_thinking)
        } else {
            user_records(line, message, &self.tools)
        };
        let pending = pending.map_err(|msg| InputError::line(self.path, line_no, msg))?;
        let mut after = self.order.clone();
        let ordered = pending
            .iter()
            .try_for_each(|p| after.next(p.kind, time, line_no));
        if let (Err((before, at)), Some(t)) = (ordered, time) {
            return Err(InputError::line(
                self.path,
                line_no,
                format!(
                    "`timestamp` {t} is earlier than {before}, the time of line {at}, where the latest run of model outputs starts (a later part of a response, after other lines came between); its history could not keep its records in time order"
                ),
            ));
        }
        self.order = after;
        Ok((pending, thought))
    }

    /// Bills an assistant line's usage: a new response's call, or the output a later line of
    /// the same response streams. Returns whether the line goes on to give its records.
    fn bill(
        &mut self,
        message: &ClaudeMessage,
        time: Option<Time>,
        line_no: usize,
        problems: &mut Problems,
        tally: &mut Tally,
    ) -> Result<bool, InputError> {
        // The three input figures must add up within u64 before any sum is taken.
        if message.usage.as_ref().map(ClaudeUsage::context) == Some(None) {
            let e = InputError::line(
                self.path,
                line_no,
                "`message.usage`: input_tokens + cache_creation_input_tokens + cache_read_input_tokens exceeds 2^64 − 1",
            );
            malformed("assistant", problems, tally, e)?;
            return Ok(false);
        }
        let new_response = match &message.id {
            Some(id) => self.responses.insert(id.clone()),
            None => true,
        };
        let counted = match (new_response, &message.usage) {
            (true, Some(usage)) => self.run.call_billed(usage.billed()),
            // Later lines of a response repeat its input and stream its output.
            (false, Some(usage)) => self.run.raise_output(usage.output_tokens),
            _ => Ok(()),
        };
        if let Err(msg) = counted {
            problems.line(InputError::line(self.path, line_no, msg))?;
            return Ok(false);
        }
        if new_response {
            tally.responses += 1;
            if let Some(t) = time {
                self.response_start = Some((t, line_no));
            }
        }
        Ok(true)
    }

    /// Adds a checked line's records to the run, its thinking records held until its
    /// response's last line, and counts what the line gave.
    fn give(
        &mut self,
        kind: &str,
        message: &ClaudeMessage,
        time: Option<Time>,
        (pending, thought): (Vec<Pending>, Vec<Pending>),
        tally: &mut Tally,
    ) {
        if !thought.is_empty() {
            self.held.response = message.id.clone();
            self.held
                .records
                .extend(thought.into_iter().map(|p| (p, time)));
            if pending.is_empty() {
                tally.gave_records(kind);
            }
        } else if pending.is_empty() {
            let reason = if kind == "assistant" {
                "no record (thinking only, or empty)"
            } else {
                "no record (empty)"
            };
            tally.skipped(kind, reason);
        } else {
            tally.gave_records(kind);
        }
        self.run.at(time);
        for p in pending {
            tally.record(kind, p.kind);
            self.run.push_flagged(p.kind, p.tool.as_deref(), p.text, p.failed);
        }
    }
}

/// The records of an assistant line; its thinking blocks go to `thinking` when given.
fn assistant_records(
    message: &ClaudeMessage,
    tools: &mut ToolIds,
    mut thinking: Option<&mut Vec<Pending>>,
) -> Result<Vec<Pending>, ParseError> {
    let mut out = Vec::new();
    let blocks = match &message.content {
        Value::String(s) => {
            push_text(&mut out, Kind::Assistant, s);
            return Ok(out);
        }
        Value::Array(blocks) => blocks,
        other => {
            return Err(format!(
                "`message.content` should be a string or a list of blocks, found {other}"
            )
            .into())
        }
    };
    // Validate every block first: a tool name is declared only when the whole line is good.
    let mut declared = Vec::new();
    for block in blocks {
        match block_type(block)? {
            "text" => push_text(&mut out, Kind::Assistant, str_field(block, "text")?),
            "thinking" | "redacted_thinking" => {
                if let Some(held) = thinking.as_deref_mut() {
                    push_thinking(held, block)?;
                }
            }
            "tool_use" => {
                let id = str_field(block, "id")?;
                let name = str_field(block, "name")?;
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                declared.push((id.to_string(), name.to_string()));
                out.push(Pending {
                    kind: Kind::ToolCall,
                    tool: Some(name.to_string()),
                    text: input.to_string(),
                    failed: false,
                });
            }
            "image" => push_text(&mut out, Kind::Assistant, &image_marker(block)),
            _ => out.push(note(block)),
        }
    }
    for (id, name) in declared {
        tools.declare(&id, &name);
    }
    Ok(out)
}

fn user_records(
    line: &TranscriptLine,
    message: &ClaudeMessage,
    tools: &ToolIds,
) -> Result<Vec<Pending>, ParseError> {
    let kind = if line.is_compact_summary == Some(true) {
        Kind::Summary
    } else if line.is_meta == Some(true) {
        Kind::Note
    } else {
        Kind::User
    };
    let mut out = Vec::new();
    match &message.content {
        Value::String(s) => push_text(&mut out, kind, s),
        Value::Array(blocks) => {
            for block in blocks {
                match block_type(block)? {
                    "text" => push_text(&mut out, kind, str_field(block, "text")?),
                    "image" => push_text(&mut out, kind, &image_marker(block)),
                    "tool_result" => {
                        let id = str_field(block, "tool_use_id")?;
                        let tool = tools.name(id).ok_or_else(|| {
                            format!("`tool_result` refers to tool_use_id {id:?}, which no earlier `tool_use` block of the main conversation declared")
                        })?;
                        out.push(Pending {
                            kind: Kind::ToolResult,
                            tool: Some(tool.to_string()),
                            text: super::content_text(block.get("content").unwrap_or(&Value::Null)),
                            failed: block.get("is_error").and_then(Value::as_bool) == Some(true),
                        });
                    }
                    _ => out.push(note(block)),
                }
            }
        }
        other => {
            return Err(format!(
                "`message.content` should be a string or a list of blocks, found {other}"
            )
            .into())
        }
    }
    Ok(out)
}

/// A thinking block as a record of the thinking tool: its text, or a redacted block's `data`
/// (what is sent back to the model); an empty one carries nothing and gives none.
fn push_thinking(out: &mut Vec<Pending>, block: &Value) -> Result<(), ParseError> {
    let field = match block_type(block)? {
        "thinking" => "thinking",
        _ => "data",
    };
    let text = str_field(block, field)?;
    if !text.is_empty() {
        out.push(Pending {
            kind: Kind::ToolCall,
            tool: Some(crate::history::THINKING_TOOL.to_string()),
            text: text.to_string(),
            failed: false,
        });
    }
    Ok(())
}

fn push_text(out: &mut Vec<Pending>, kind: Kind, text: &str) {
    // An empty text block carries nothing the model reads.
    if !text.is_empty() {
        out.push(Pending {
            kind,
            tool: None,
            text: text.to_string(),
            failed: false,
        });
    }
}

fn note(block: &Value) -> Pending {
    Pending {
        kind: Kind::Note,
        tool: None,
        text: block.to_string(),
        failed: false,
    }
}

fn block_type(block: &Value) -> Result<&str, ParseError> {
    block.get("type").and_then(Value::as_str).ok_or_else(|| {
        ParseError(format!(
            "a content block needs a string `type`, found {block}"
        ))
    })
}

fn str_field<'a>(block: &'a Value, key: &str) -> Result<&'a str, ParseError> {
    block.get(key).and_then(Value::as_str).ok_or_else(|| {
        ParseError(format!(
            "a `{}` block needs a string `{key}`",
            block.get("type").and_then(Value::as_str).unwrap_or("?")
        ))
    })
}

/// Whether the session goes on from a conversation the file does not hold: its first line
/// that names a parent (`parentUuid`) names one no line of the file is (`uuid`). A session
/// resumed from another file starts so; a session started fresh starts with no parent.
pub(crate) fn continues_elsewhere(text: &str) -> bool {
    let mut uuids = std::collections::HashSet::new();
    let mut first_parent: Option<Option<String>> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(u) = v.get("uuid").and_then(Value::as_str) {
            uuids.insert(u.to_string());
        }
        if first_parent.is_none() && v.get("uuid").is_some() {
            first_parent = Some(
                v.get("parentUuid")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            );
        }
    }
    matches!(first_parent, Some(Some(p)) if !uuids.contains(&p))
}

/// The `claude_code` transcript format.
pub struct ClaudeCode;

impl super::TranscriptFormat for ClaudeCode {
    const RECORDS_USAGE: bool = true;
    fn read(
        path: &Path,
        text: &str,
        problems: &mut super::Problems,
        tally: &mut super::Tally,
    ) -> Result<Vec<super::Run>, InputError> {
        let run = parse(path, text, problems, tally)?;
        Ok(vec![run])
    }
}
