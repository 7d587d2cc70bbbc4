//! Tasks a real compaction summary presents as open after the agent had completed them.
//!
//! Claude Code keeps a task list as it works: `TodoWrite` calls (each a whole list of
//! `{content, status}` todos that replaces the last) and `TaskCreate`/`TaskUpdate` calls (a task
//! `subject` numbered by the harness, "Task #N created", then its `status` by `taskId`). At every
//! compaction (a `summary` record) each task has a latest status, read from the calls whose
//! results came before the summary and were not errors; the tasks whose latest status is
//! `completed` are the compaction's **completed** tasks.
//!
//! The summary is cut into lines. A line **names** a task when it holds every word of the task's
//! text (lower-cased runs of letters, digits and `_`; a final plural `s` dropped; the words of
//! [`STOP_WORDS`] and single characters left out; at least two words left, else the task is
//! never named by its text), or, for a `TaskCreate` task, its number as `task #N` or `task N`.
//! A line **presents as open** when it lies in an open section (a heading at the line's start —
//! a numbered item, a Markdown heading, a bold line or a line ending in `:` — whose text before
//! its first `:` holds one of [`OPEN_HEADINGS`]) or holds one of [`OPEN_MARKS`] itself, and holds
//! none of [`DONE_MARKS`]. A completed task is **stale** when a line that presents as open names
//! it.
//!
//! The rule is meant to miss rather than invent: a summary that paraphrases a task ("wire the
//! hooks" for "Register hook handlers") names nothing, and a task listed as done on the same line
//! as an open mark is not stale.

use crate::history::import::file_view::producing_call_at;
use crate::history::import::Run;
use crate::history::Kind;
use crate::report::text_table::{self, Align};
use crate::tables::stale_tasks::{self, StaleCounts};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Words that say nothing of which task a line is about.
pub const STOP_WORDS: [&str; 26] = [
    "a", "an", "and", "any", "all", "are", "as", "at", "be", "by", "for", "from", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "that", "the", "then", "this", "to",
];

/// A heading holding one of these starts an open section.
pub const OPEN_HEADINGS: [&str; 10] = [
    "pending",
    "next step",
    "remaining",
    "todo",
    "to do",
    "to-do",
    "in progress",
    "outstanding",
    "not yet",
    "open task",
];

/// A line holding one of these presents what it names as open, wherever it stands.
pub const OPEN_MARKS: [&str; 13] = [
    "pending",
    "in progress",
    "in_progress",
    "not started",
    "not yet",
    "still need",
    "need to",
    "needs to",
    "todo",
    "to do",
    "to-do",
    "[ ]",
    "⏳",
];

/// A line holding one of these (as a word, or the signs) presents what it names as done.
pub const DONE_MARKS: [&str; 8] = [
    "done",
    "completed",
    "finished",
    "fixed",
    "already",
    "[x]",
    "✅",
    "✓",
];

/// One task as the transcript last set it.
#[derive(Debug, Clone, PartialEq)]
struct Task {
    /// `TaskCreate`'s number; none for a `TodoWrite` todo (known by its text).
    number: Option<String>,
    text: String,
    status: String,
}

/// One compaction: the tasks completed before it, and what its summary does with them.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionTasks {
    pub transcript: String,
    /// 1 for the transcript's first compaction.
    pub k: usize,
    /// Tasks of any status before it.
    pub tasks: usize,
    pub completed: Vec<String>,
    /// The completed tasks a line of the summary names.
    pub named: Vec<String>,
    /// The completed tasks a line presenting as open names.
    pub stale: Vec<String>,
}

/// The task lists of one transcript, and the calls whose input could not be read as one.
#[derive(Default)]
struct Lists {
    tasks: Vec<Task>,
    unread: usize,
}

impl Lists {
    fn set(&mut self, number: Option<String>, text: Option<String>, status: Option<String>) {
        let at = self.tasks.iter().position(|t| match &number {
            Some(n) => t.number.as_ref() == Some(n),
            None => t.number.is_none() && Some(&t.text) == text.as_ref(),
        });
        match at {
            Some(i) if status.as_deref() == Some("deleted") => {
                self.tasks.remove(i);
            }
            Some(i) => {
                let t = &mut self.tasks[i];
                t.text = text.unwrap_or(std::mem::take(&mut t.text));
                t.status = status.unwrap_or(std::mem::take(&mut t.status));
            }
            None => match text {
                Some(text) => self.tasks.push(Task {
                    number,
                    text,
                    status: status.unwrap_or_else(|| "pending".into()),
                }),
                // An update of a task never created here (made before the transcript began).
                None => self.unread += 1,
            },
        }
    }

    /// Applies the call `input` of `tool` whose result is `result`.
    fn apply(&mut self, tool: &str, input: &str, result: &str) {
        let Ok(input) = serde_json::from_str::<Value>(input) else {
            self.unread += 1;
            return;
        };
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_string);
        match tool {
            "TodoWrite" => match input.get("todos").and_then(Value::as_array) {
                Some(todos) => {
                    for t in todos {
                        let field = |key| t.get(key).and_then(Value::as_str).map(str::to_string);
                        match (field("content"), field("status")) {
                            (Some(c), Some(s)) => self.set(None, Some(c), Some(s)),
                            _ => self.unread += 1,
                        }
                    }
                }
                None => self.unread += 1,
            },
            "TaskCreate" => match (created_number(result), text("subject")) {
                (Some(n), Some(subject)) => self.set(Some(n), Some(subject), text("status")),
                _ => self.unread += 1,
            },
            "TaskUpdate" => match input.get("taskId").map(id_text) {
                Some(n) => self.set(Some(n), text("subject"), text("status")),
                None => self.unread += 1,
            },
            _ => {}
        }
    }
}

/// A task id as text (the harness writes it as a string; a number is read the same).
fn id_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The number in "Task #N created successfully: …".
fn created_number(result: &str) -> Option<String> {
    let rest = &result[result.find("Task #")? + "Task #".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

const TASK_TOOLS: [&str; 3] = ["TodoWrite", "TaskCreate", "TaskUpdate"];

/// The compactions of one transcript (none: it never compacted), and the task-list calls whose
/// input could not be read.
pub fn measure(run: &Run) -> (Vec<CompactionTasks>, usize) {
    let records = &run.history.records;
    let mut lists = Lists::default();
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match r.kind {
            Kind::Summary => out.push(judge(
                &run.history.name,
                out.len() + 1,
                &lists.tasks,
                &r.text,
            )),
            Kind::ToolResult if !run.failed.get(i).copied().unwrap_or(false) => {
                let Some(call) = producing_call_at(records, i).map(|j| &records[j]) else {
                    continue;
                };
                if let Some(tool) = call.tool.as_deref().filter(|t| TASK_TOOLS.contains(t)) {
                    if call.kind == Kind::ToolCall {
                        lists.apply(tool, &call.text, &r.text);
                    }
                }
            }
            _ => {}
        }
    }
    (out, lists.unread)
}

/// What the summary `summary` does with the tasks completed before it.
fn judge(transcript: &str, k: usize, tasks: &[Task], summary: &str) -> CompactionTasks {
    let lines = summary_lines(summary);
    let mut c = CompactionTasks {
        transcript: transcript.to_string(),
        k,
        tasks: tasks.len(),
        completed: Vec::new(),
        named: Vec::new(),
        stale: Vec::new(),
    };
    for t in tasks.iter().filter(|t| t.status == "completed") {
        let wanted = words(&t.text);
        let names = |l: &SummaryLine| {
            (wanted.len() >= 2 && wanted.is_subset(&l.words))
                || t.number.as_deref().is_some_and(|n| l.cites_task(n))
        };
        c.completed.push(t.text.clone());
        if lines.iter().any(names) {
            c.named.push(t.text.clone());
        }
        if lines.iter().any(|l| l.open && names(l)) {
            c.stale.push(t.text.clone());
        }
    }
    c
}

/// A line of a summary: its words (as [`words`] takes them), its lower-cased text and whether
/// it presents what it names as open.
struct SummaryLine {
    words: BTreeSet<String>,
    lower: String,
    open: bool,
}

impl SummaryLine {
    /// Whether the line cites task number `n` as `task #n` or `task n`.
    fn cites_task(&self, n: &str) -> bool {
        ["task #", "task "].iter().any(|prefix| {
            let cite = format!("{prefix}{n}");
            self.lower.match_indices(&cite).any(|(at, _)| {
                let before = self.lower[..at].chars().next_back();
                let after = self.lower[at + cite.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(|c| c.is_ascii_digit())
            })
        })
    }
}

fn summary_lines(summary: &str) -> Vec<SummaryLine> {
    let mut in_open_section = false;
    summary
        .lines()
        .map(|line| {
            let lower = line.to_lowercase();
            if let Some(heading) = heading(line) {
                let heading = heading.to_lowercase();
                in_open_section = OPEN_HEADINGS.iter().any(|h| heading.contains(h));
            }
            let raw: BTreeSet<&str> = raw_words(&lower).collect();
            let done = DONE_MARKS.iter().any(|m| {
                raw.contains(m) || ((!m.is_ascii() || m.starts_with('[')) && lower.contains(m))
            });
            let marked = OPEN_MARKS.iter().any(|m| {
                if m.contains(' ') || !m.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    lower.contains(m)
                } else {
                    raw.contains(m)
                }
            });
            SummaryLine {
                words: words(line),
                open: (in_open_section || marked) && !done,
                lower,
            }
        })
        .collect()
}

/// The text of a heading line up to its first `:`; none for a line that is not a heading.
fn heading(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) || line.trim().is_empty() {
        return None;
    }
    let trimmed = line.trim_end();
    let numbered = {
        let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && trimmed[digits..].starts_with(". ")
    };
    let is_heading = numbered
        || trimmed.starts_with('#')
        || (trimmed.starts_with("**") && trimmed.trim_end_matches(':').ends_with("**"))
        || (trimmed.ends_with(':') && !trimmed.starts_with(['-', '*', '`']));
    is_heading.then(|| trimmed.split(':').next().unwrap_or(trimmed))
}

/// Lower-cased runs of letters, digits and `_`.
fn raw_words(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The words a task is named by: [`raw_words`] of the text less stop words and single
/// characters, each without a final plural `s`.
fn words(text: &str) -> BTreeSet<String> {
    let lower = text.to_lowercase();
    raw_words(&lower)
        .filter(|w| w.chars().count() > 1 && !STOP_WORDS.contains(w))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.chars().count() > 2 && !stem.ends_with('s') => stem.to_string(),
            _ => w.to_string(),
        })
        .collect()
}

pub fn pool(measured: &[CompactionTasks]) -> StaleCounts {
    let mut p = StaleCounts::default();
    for c in measured {
        p.compactions += 1;
        p.with_completed += usize::from(!c.completed.is_empty());
        p.completed += c.completed.len();
        p.named += c.named.len();
        p.stale += c.stale.len();
        p.with_stale += usize::from(!c.stale.is_empty());
    }
    p
}

/// The pooled row as CSV, under its header (`tables::stale_tasks`).
pub fn to_csv(measured: &[CompactionTasks]) -> String {
    stale_tasks::table().csv_text(&(), &[pool(measured)])
}

/// Every compaction, its stale tasks by text, then the pooled counts.
pub fn to_text(
    measured: &[CompactionTasks],
    transcripts: usize,
    without: &[String],
    unread: usize,
) -> String {
    let mut s = String::new();
    let p = pool(measured);
    let _ = writeln!(
        s,
        "Completed tasks presented as open by {} real compaction summaries in {} transcripts (task lists from TodoWrite, TaskCreate and TaskUpdate; a task is completed when its latest status before the summary is)\n",
        p.compactions,
        transcripts - without.len()
    );
    let headings = ["transcript", "k", "tasks", "completed", "named", "stale"];
    let rows: Vec<Vec<String>> = measured
        .iter()
        .map(|c| {
            vec![
                c.transcript.clone(),
                c.k.to_string(),
                c.tasks.to_string(),
                c.completed.len().to_string(),
                c.named.len().to_string(),
                c.stale.len().to_string(),
            ]
        })
        .collect();
    let mut align = [Align::Right; 6];
    align[0] = Align::Left;
    s.push_str(&text_table::render(&headings, &rows, &align));
    for c in measured.iter().filter(|c| !c.stale.is_empty()) {
        for t in &c.stale {
            let _ = writeln!(s, "stale: {} k={}: {t}", c.transcript, c.k);
        }
    }
    let _ = writeln!(
        s,
        "\npooled: {} completed task(s) before {} of the {} compactions; the summaries name {} and present {} as open ({} compaction(s) with a stale task)",
        p.completed, p.with_completed, p.compactions, p.named, p.stale, p.with_stale
    );
    let _ = writeln!(
        s,
        "a line names a task when it holds every word of its text (or, for TaskCreate, `task #N`); it presents it as open in a pending, next-step, remaining or in-progress section or beside an open mark, and not beside a done mark: a paraphrase is not seen"
    );
    if unread > 0 {
        let _ = writeln!(
            s,
            "task-list calls or entries not read as a task (an input of another shape, an update of a task created elsewhere): {unread}"
        );
    }
    if !without.is_empty() {
        let _ = writeln!(
            s,
            "without a compaction (counted, not measured): {} transcript(s): {}",
            without.len(),
            without.join(", ")
        );
    }
    s
}
