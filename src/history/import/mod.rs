//! Real agent transcripts as ctxlab histories: one module per transcript format, all producing
//! [`Run`]s (a history plus what the transcript records about it: failed tool results and the
//! real input size of each model call), then label rules and calibration work on runs.
//!
//! Record ids are 1-based positions. Every message or content block that reaches the model
//! becomes one record; what is left out (thinking blocks, sub-agent lines, title lines) is
//! listed in each format's module and in the README.

pub mod failure;
pub mod file_view;
pub mod label;
mod many;

pub use label::LabelRules;
pub use many::{index_batch, load_batch, load_files, load_files_recorded, load_run, read_batch};

use crate::error::InputError;
use crate::history::{History, Kind, Record, RecordedCall, Usage};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// What a transcript format's module gives: how to read one file of it.
pub trait TranscriptFormat {
    /// Whether its transcripts record how each model call was billed (what a replay under
    /// `cache = "recorded"` bills).
    const RECORDS_USAGE: bool;
    /// The runs of one file's text, adding what each line became to `tally`.
    fn read(
        path: &Path,
        text: &str,
        problems: &mut Problems,
        tally: &mut Tally,
    ) -> Result<Vec<Run>, InputError>;
}

/// Declares the transcript formats: each line is a format's name (as `--format` and
/// `histories.format` spell it), its variant and its module, whose [`TranscriptFormat`] type
/// reads it. A new format is its file plus one line of the list below.
macro_rules! transcript_formats {
    ($($name:literal => $variant:ident($module:ident::$ty:ident)),* $(,)?) => {
        $(pub mod $module;)*

        /// A transcript format that `ctxlab import` and experiment files (`format = "..."`) read.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Format {
            $($variant,)*
        }

        impl Format {
            pub const ALL: [Format; [$($name),*].len()] = [$(Format::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Format::$variant => $name,)*
                }
            }

            /// Whether the format's transcripts record how each model call was billed.
            pub fn records_usage(self) -> bool {
                match self {
                    $(Format::$variant => <$module::$ty as TranscriptFormat>::RECORDS_USAGE,)*
                }
            }

            fn read_text(
                self,
                path: &Path,
                text: &str,
                problems: &mut Problems,
                tally: &mut Tally,
            ) -> Result<Vec<Run>, InputError> {
                match self {
                    $(Format::$variant => <$module::$ty as TranscriptFormat>::read(path, text, problems, tally),)*
                }
            }
        }
    };
}

transcript_formats! {
    "mini-swe-agent" => MiniSweAgent(mini_swe_agent::MiniSweAgent),
    "claude-code" => ClaudeCode(claude_code::ClaudeCode),
    "swe-agent" => SweAgent(swe_agent::SweAgent),
    "openai-chat" => OpenaiChat(openai_chat::OpenaiChat),
    "claude-code-thinking" => ClaudeCodeThinking(claude_code_thinking::ClaudeCodeThinking),
}

impl Format {
    /// The formats' names, `a, b, c or d`: what help texts list.
    pub fn names_or() -> String {
        crate::quote::or_list(&Format::ALL.map(Format::as_str))
    }

    /// The formats' names, `a, b, c, d`.
    pub fn names() -> String {
        Format::ALL.map(Format::as_str).join(", ")
    }

    /// The formats whose transcripts record their usage, `a or b`.
    pub fn recording_usage_or() -> String {
        let names: Vec<&str> = Format::ALL
            .into_iter()
            .filter(|f| f.records_usage())
            .map(Format::as_str)
            .collect();
        crate::quote::or_list(&names)
    }
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown transcript format {s:?}, expected one of {}",
                    Format::names()
                )
            })
    }
}

/// One model call whose input size the transcript records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// The records the model saw: `history.records[start..end]` (after a compaction the context
    /// starts at the summary, not at the first record).
    pub start: usize,
    pub end: usize,
    /// The input size the provider reported for this call, in its own tokens.
    pub recorded: u64,
    /// How the provider billed it, when the transcript says (`recorded` is then its input).
    pub usage: Option<Usage>,
}

/// One imported run: its history and what the transcript says beyond the texts.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub history: History,
    /// Per record: the transcript itself marks this tool result as failed (`is_error: true`).
    /// Text-level signs of failure are the `errors` label rule's business, not this flag's.
    pub failed: Vec<bool>,
    /// Model calls with a recorded input size, oldest first.
    pub calls: Vec<Call>,
    /// The transcript goes on from an earlier conversation it does not hold (a Claude Code
    /// session whose first line answers a line of another file): what its first compaction
    /// summary replaced is mostly missing.
    pub continued: bool,
}

impl Run {
    /// The calls whose billing the transcript records, keyed by the record their response
    /// starts at: what a session replay bills under `cache = "recorded"`.
    pub fn recorded(&self) -> Vec<RecordedCall> {
        self.calls
            .iter()
            .filter_map(|c| c.usage.map(|usage| RecordedCall { at: c.end, usage }))
            .collect()
    }
}

/// What a format's reader does with a malformed line: the line is an error naming it, and the
/// file gives no run. There is no mode that drops the line and keeps the rest of the file: a
/// session with a line missing (a tool result, a call) would undercount every later context.
/// A batch of files leaves a bad file out whole or refuses ([`crate::history::batch`]).
#[derive(Debug, Default)]
pub struct Problems;

impl Problems {
    /// The first problem stops the file.
    pub fn strict() -> Self {
        Problems
    }

    /// Records a problem with one line: it stops the file.
    pub(crate) fn line(&mut self, e: InputError) -> Result<(), InputError> {
        Err(e)
    }
}

/// What the lines (or messages) of transcripts became, by their type: how many were read,
/// how many gave records and which, and why the others gave none. Every line read is counted
/// once, under `gave` or one reason of `skipped`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// By line type, in name order.
    pub types: std::collections::BTreeMap<String, TypeTally>,
    /// Model responses (distinct `message.id`s, or messages without one).
    pub responses: u64,
    /// Read from whole-file formats, whose every message or block is a record: `types` holds
    /// one entry, `messages`, with its records by kind.
    pub whole_file: bool,
}

/// The lines of one type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeTally {
    pub lines: u64,
    /// Lines that gave at least one record.
    pub gave: u64,
    /// Records given, by kind (in [`Kind::ALL`] order).
    pub records: [u64; Kind::ALL.len()],
    /// Lines that gave none, by reason, in name order.
    pub skipped: std::collections::BTreeMap<String, u64>,
}

impl Tally {
    fn of(&mut self, line_type: &str) -> &mut TypeTally {
        if !self.types.contains_key(line_type) {
            self.types
                .insert(line_type.to_string(), TypeTally::default());
        }
        self.types.get_mut(line_type).expect("just inserted")
    }

    /// A line of `line_type` was read.
    pub fn line(&mut self, line_type: &str) {
        self.of(line_type).lines += 1;
    }

    /// The line just read gave records.
    pub fn gave_records(&mut self, line_type: &str) {
        self.of(line_type).gave += 1;
    }

    /// It gave a record of `kind`.
    pub fn record(&mut self, line_type: &str, kind: Kind) {
        let i = Kind::ALL
            .iter()
            .position(|&k| k == kind)
            .expect("every kind is in ALL");
        self.of(line_type).records[i] += 1;
    }

    /// It gave none, for `reason`.
    pub fn skipped(&mut self, line_type: &str, reason: &str) {
        *self
            .of(line_type)
            .skipped
            .entry(reason.to_string())
            .or_default() += 1;
    }

    /// Adds another tally (of another file).
    pub fn add(&mut self, other: &Tally) {
        self.responses += other.responses;
        self.whole_file |= other.whole_file;
        for (name, t) in &other.types {
            let mine = self.of(name);
            mine.lines += t.lines;
            mine.gave += t.gave;
            for (a, b) in mine.records.iter_mut().zip(t.records) {
                *a += b;
            }
            for (reason, n) in &t.skipped {
                *mine.skipped.entry(reason.clone()).or_default() += n;
            }
        }
    }

    /// The records of a run read from a whole-file format, counted as `messages` (one record
    /// per message or block; these formats leave nothing out).
    fn of_run(&mut self, run: &Run) {
        self.whole_file = true;
        for r in &run.history.records {
            self.line("messages");
            self.gave_records("messages");
            self.record("messages", r.kind);
        }
        self.responses += run.calls.len() as u64;
    }
}

/// A file that holds one run, counted: what the single-run formats' `read` returns.
fn one_run(run: Run, tally: &mut Tally) -> Result<Vec<Run>, InputError> {
    tally.of_run(&run);
    Ok(vec![run])
}

/// Reads the runs of one transcript file (usually one run per file).
pub fn read(path: &Path, format: Format, problems: &mut Problems) -> Result<Vec<Run>, InputError> {
    read_tallied(path, format, problems, &mut Tally::default())
}

/// [`read`], adding what each line became to `tally`.
pub fn read_tallied(
    path: &Path,
    format: Format,
    problems: &mut Problems,
    tally: &mut Tally,
) -> Result<Vec<Run>, InputError> {
    let text = crate::text::read(path)?;
    let mut mine = Tally::default();
    let runs = format.read_text(path, &text, problems, &mut mine)?;
    // A file that fails adds nothing: its runs are not imported.
    tally.add(&mine);
    Ok(runs)
}

/// Loads one transcript file as labelled histories: what a sweep reads when an experiment
/// file names transcripts (`files = [...]`, `format = "claude-code"`). Strict: the first
/// malformed line or file is an error.
pub fn load(path: &Path, format: Format, labels: &LabelRules) -> Result<Vec<History>, InputError> {
    Ok(load_recorded(path, format, labels, None)?
        .into_iter()
        .map(|(h, _)| h)
        .collect())
}

/// [`load`], each history with the usage its transcript records and, with `flags`, the flags
/// those rules give (else the flags start from the labels).
pub fn load_recorded(
    path: &Path,
    format: Format,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
) -> Result<Vec<(History, Vec<RecordedCall>)>, InputError> {
    let runs = read(path, format, &mut Problems::strict())?;
    Ok(runs
        .into_iter()
        .map(|run| labelled(run, labels, flags))
        .collect())
}

/// A run's history labelled by `labels` (its flags by `flags`, else from the labels), with the
/// usage its transcript records.
pub(crate) fn labelled(
    run: Run,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
) -> (History, Vec<RecordedCall>) {
    let recorded = run.recorded();
    let history = match flags {
        Some(f) => labels.apply_flagged(run, f),
        None => labels.apply(run),
    };
    (history, recorded)
}

/// The name of the run a file holds: its file name without `.json`/`.jsonl` and `.traj`.
pub fn run_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".to_string());
    let mut name = file.as_str();
    for suffix in [".jsonl", ".json", ".traj"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    if name.is_empty() {
        file
    } else {
        name.to_string()
    }
}

/// Builds a run record by record, tracking where the model's current context starts.
pub(crate) struct RunBuilder {
    name: String,
    records: Vec<Record>,
    failed: Vec<bool>,
    calls: Vec<Call>,
    context_start: usize,
    continued: bool,
    /// The time of the records pushed next.
    time: Option<crate::history::Time>,
    /// Tokens the recorded usage of the calls so far adds up to (inputs and outputs).
    recorded_total: u64,
}

/// The most tokens the recorded usage of one transcript may add up to, inputs and outputs of
/// every call together: 2^53, far beyond any real run (a million calls of a billion tokens
/// stay under it) and small enough that every sum a session replay takes over it stays exact.
pub const MAX_RECORDED_TOKENS: u64 = 1 << 53;

impl RunBuilder {
    pub fn new(name: impl Into<String>) -> Self {
        RunBuilder {
            name: name.into(),
            records: Vec::new(),
            failed: Vec::new(),
            calls: Vec::new(),
            context_start: 0,
            continued: false,
            time: None,
            recorded_total: 0,
        }
    }

    /// The transcript goes on from an earlier conversation it does not hold.
    pub fn continues_elsewhere(&mut self) {
        self.continued = true;
    }

    /// Appends a record; its id is its 1-based position.
    pub fn push(&mut self, kind: Kind, tool: Option<&str>, text: impl Into<String>) {
        self.push_flagged(kind, tool, text, false);
    }

    pub fn push_flagged(
        &mut self,
        kind: Kind,
        tool: Option<&str>,
        text: impl Into<String>,
        failed: bool,
    ) {
        let mut r = Record::new(self.records.len() as u64 + 1, text).kind(kind);
        r.tool = tool.map(str::to_string);
        r.time = self.time;
        self.records.push(r);
        self.failed.push(failed);
    }

    /// The records pushed from now on were written at `time` (`None`: the transcript does not
    /// say).
    pub fn at(&mut self, time: Option<crate::history::Time>) {
        self.time = time;
    }

    /// A model call is made now, on every record of the current context; refused (nothing
    /// recorded) when the transcript's recorded usage would add up beyond
    /// [`MAX_RECORDED_TOKENS`].
    pub fn call(&mut self, recorded: u64) -> Result<(), String> {
        self.count(Some(recorded))?;
        self.push_call(recorded, None);
        Ok(())
    }

    /// [`RunBuilder::call`] for a call whose billing the transcript records.
    pub fn call_billed(&mut self, usage: Usage) -> Result<(), String> {
        let input = usage
            .uncached
            .checked_add(usage.cache_read)
            .and_then(|t| t.checked_add(usage.cache_write));
        self.count(input.and_then(|t| t.checked_add(usage.output)))?;
        self.push_call(usage.input(), Some(usage));
        Ok(())
    }

    fn push_call(&mut self, recorded: u64, usage: Option<Usage>) {
        self.calls.push(Call {
            start: self.context_start,
            end: self.records.len(),
            recorded,
            usage,
        });
    }

    /// Adds `tokens` (`None`: a figure that overflowed already) to the recorded total.
    fn count(&mut self, tokens: Option<u64>) -> Result<(), String> {
        match tokens
            .and_then(|t| self.recorded_total.checked_add(t))
            .filter(|&t| t <= MAX_RECORDED_TOKENS)
        {
            Some(total) => {
                self.recorded_total = total;
                Ok(())
            }
            None => Err(format!(
                "recorded usage: with this message's, the transcript's model calls add up to more than 2^53 tokens ({MAX_RECORDED_TOKENS}), ctxlab's limit per transcript; no real run reads that many, so the usage figures are corrupt"
            )),
        }
    }

    /// The last call's response reported more output on a later line (Claude Code streams
    /// one response over several lines): keep the largest.
    pub fn raise_output(&mut self, output: u64) -> Result<(), String> {
        let Some(current) = self.calls.last().and_then(|c| c.usage).map(|u| u.output) else {
            return Ok(());
        };
        self.count(Some(output.saturating_sub(current)))?;
        if let Some(u) = self.calls.last_mut().and_then(|c| c.usage.as_mut()) {
            u.output = u.output.max(output);
        }
        Ok(())
    }

    /// The next record starts a new context (the harness compacted: what came before is
    /// no longer sent).
    pub fn restart_context(&mut self) {
        self.context_start = self.records.len();
    }

    pub fn finish(self, path: &Path) -> Result<Run, InputError> {
        if self.records.is_empty() {
            return Err(InputError::File {
                path: path.to_path_buf(),
                message: "holds no message that gives a record".into(),
            });
        }
        Ok(Run {
            history: History::new(self.name, self.records),
            failed: self.failed,
            calls: self.calls,
            continued: self.continued,
        })
    }
}

/// A serde_json error as one line of a file, with its column. `line_no` is the file line the
/// text came from when a line was parsed alone; `None` for a whole JSON file, where serde_json
/// knows the line itself.
pub(crate) fn json_error(
    path: &Path,
    e: &serde_json::Error,
    line_no: Option<usize>,
    expected: &str,
) -> InputError {
    let msg = e.to_string();
    // serde_json appends " at line L column C"; say it once, in the file:line: form.
    let msg = match msg.rfind(" at line ") {
        Some(at) => msg[..at].to_string(),
        None => msg,
    };
    // An error found on the parsed value (an array where an object belongs) has no position.
    if e.line() == 0 {
        return match line_no {
            Some(n) => InputError::line(path, n, format!("{msg}; expected {expected}")),
            None => InputError::File {
                path: path.to_path_buf(),
                message: format!("{msg}; expected {expected}"),
            },
        };
    }
    InputError::line(
        path,
        line_no.unwrap_or(e.line()),
        format!("column {}: {msg}; expected {expected}", e.column()),
    )
}

/// Text of a `content` that is either a string or a list of parts/blocks such as
/// `{"type": "text", "text": ...}`: text parts joined by a newline, images as a short marker
/// (their pixels are not text; see the README on how that skews token counts).
pub(crate) fn content_text(content: &serde_json::Value) -> String {
    use serde_json::Value;
    match content {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let texts: Vec<String> = parts.iter().filter_map(part_text).collect();
            texts.join("\n")
        }
        other => other.to_string(),
    }
}

fn part_text(part: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match part {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("text") | Some("input_text") | Some("output_text") => {
                o.get("text").and_then(Value::as_str).map(str::to_string)
            }
            Some("image") | Some("image_url") | Some("input_image") => Some(image_marker(part)),
            _ => o
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| Some(part.to_string())),
        },
        other => Some(other.to_string()),
    }
}

/// The text that stands for an image block: its media type, never its base64 data.
pub(crate) fn image_marker(block: &serde_json::Value) -> String {
    let media = block
        .pointer("/source/media_type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("image");
    format!("[image: {media}]")
}

/// The text of a tool call's arguments: a JSON-encoded string in OpenAI-style APIs (kept as
/// is), anything else as compact JSON.
pub(crate) fn arguments_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Ids of tool calls and the tool each names, so a result can be given its tool's name.
#[derive(Default)]
pub(crate) struct ToolIds {
    names: std::collections::HashMap<String, String>,
}

impl ToolIds {
    pub fn declare(&mut self, id: &str, name: &str) {
        self.names.insert(id.to_string(), name.to_string());
    }

    pub fn name(&self, id: &str) -> Option<&str> {
        self.names.get(id).map(String::as_str)
    }
}

/// Message ids already seen, for responses split over several lines.
/// The message roles of mini-swe-agent and SWE-agent trajectories (later versions answer tool
/// calls with `tool` messages; they are observations too).
#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call in the OpenAI chat shape (`{id, function: {name, arguments}}`), which SWE-agent
/// trajectories share.
#[derive(Deserialize)]
pub(crate) struct ToolCall {
    pub id: String,
    pub function: Function,
}

#[derive(Deserialize)]
pub(crate) struct Function {
    pub name: String,
    #[serde(default)]
    pub arguments: serde_json::Value,
}

pub(crate) type SeenIds = HashSet<String>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_back_and_name_the_choices() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>().unwrap(), f);
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{f}\""));
        }
        let err = "claude".parse::<Format>().unwrap_err();
        assert!(err.contains("mini-swe-agent, claude-code, swe-agent, openai-chat"));
    }

    #[test]
    fn run_names_drop_transcript_suffixes() {
        assert_eq!(
            run_name(Path::new("/x/django__django-11099.traj.json")),
            "django__django-11099"
        );
        assert_eq!(run_name(Path::new("a/b/6dc8.jsonl")), "6dc8");
        assert_eq!(run_name(Path::new("run.traj")), "run");
        assert_eq!(run_name(Path::new("chat.json")), "chat");
    }

    #[test]
    fn content_is_text_parts_joined_with_images_as_markers() {
        let v: serde_json::Value = serde_json::from_str(
            r#"[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"b"}]"#,
        )
        .unwrap();
        assert_eq!(content_text(&v), "a\n[image: image/png]\nb");
        assert_eq!(content_text(&serde_json::Value::Null), "");
        assert_eq!(content_text(&serde_json::json!("plain")), "plain");
    }
}
