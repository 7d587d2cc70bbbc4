//! Reading histories from JSON Lines files (the format `ctxlab table` and `ctxlab sweep` load).
//!
//! One record per line: `id` (integer, strictly increasing within a history), `text`,
//! optional `required` (default false), `kind` (default `note`), `tool` and `history` (records
//! sharing a `history` value form one history, in order of first appearance; without it the whole
//! file is one history named after the file), and optional `flag` (bool): the flag an external
//! flagger gave the record, what strategies see before label noise in place of `required` (a
//! history's records all carry `flag`, or none does), and optional `time` (RFC 3339, as
//! `2026-02-07T00:13:59.219Z`): when the transcript wrote the record, which a cache's lifetime
//! is measured by; no record may be timed before the start of the model call before it in its
//! history, the first of the run of model outputs (`assistant`, `tool_call`) the call wrote
//! (see [`super::time_order`]). Blank lines are skipped. The whole file
//! is validated before any history is returned, so nothing is computed on a half-read file.

use super::record::{History, Kind, Record};
use crate::error::InputError;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Line")] // the name serde's messages quote
                          // The strings borrow from the line where they hold no escape: the streamed index checks every
                          // line without copying its text.
struct RecordLine<'a> {
    id: u64,
    #[serde(borrow)]
    text: Cow<'a, str>,
    #[serde(default)]
    required: bool,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    history: Option<Cow<'a, str>>,
    #[serde(default)]
    flag: Option<bool>,
    #[serde(default, borrow)]
    time: Option<Cow<'a, str>>,
}

/// Reads every history in a JSONL file.
pub fn load_jsonl(path: &Path) -> Result<Vec<History>, InputError> {
    let text = crate::text::read(path)?;
    parse_jsonl(path, &text)
}

/// Parses JSONL text; `path` is used for the default history name and for error messages.
pub fn parse_jsonl(path: &Path, text: &str) -> Result<Vec<History>, InputError> {
    let mut checks = LineChecks::new(path);
    let mut histories: Vec<History> = Vec::new();
    // Per history: each record's `flag`, kept until the flags rule is checked at the end.
    let mut flags: Vec<Vec<Option<bool>>> = Vec::new();
    for (n, raw) in crate::text::without_bom(text).lines().enumerate() {
        let Some(line) = checks.check(n + 1, raw)? else {
            continue;
        };
        if line.slot == histories.len() {
            histories.push(History::new(checks.name(line.slot), Vec::new()));
            flags.push(Vec::new());
        }
        flags[line.slot].push(line.flag);
        histories[line.slot].records.push(line.record());
    }
    checks.finish()?;
    for (history, flags) in histories.iter_mut().zip(flags) {
        history.flags = flags.into_iter().collect();
    }
    Ok(histories)
}

/// One line that passed [`LineChecks::check`]: its history's slot (in order of first
/// appearance), its record and its `flag`.
pub(super) struct CheckedLine<'a> {
    pub slot: usize,
    /// The record, its text and tool still borrowed from the line: [`CheckedLine::record`]
    /// makes it owned.
    pub id: u64,
    pub kind: Kind,
    pub required: bool,
    pub text: Cow<'a, str>,
    tool: Option<Cow<'a, str>>,
    time: Option<super::time::Time>,
    pub flag: Option<bool>,
}

impl CheckedLine<'_> {
    pub fn record(self) -> Record {
        Record {
            id: self.id,
            kind: self.kind,
            tool: self.tool.map(Cow::into_owned),
            time: self.time,
            text: self.text.into_owned(),
            required: self.required,
        }
    }
}

/// A line read on its own, before the checks that depend on the lines before it.
pub(super) struct ParsedLine<'a> {
    line: RecordLine<'a>,
    kind: Kind,
    time: Option<super::time::Time>,
}

/// Reads line `line_no` of `path` (its text `raw`, without the line ending) on its own: `None`
/// for a blank line. Depends on nothing but the line, so the lines of a file may be read on
/// every core and checked by [`LineChecks::accept`] in order.
pub(super) fn parse_line<'a>(
    path: &Path,
    line_no: usize,
    raw: &'a str,
) -> Result<Option<ParsedLine<'a>>, InputError> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    // serde reads a struct from an array by position; a record has named fields.
    if raw.trim_start().starts_with('[') {
        return Err(InputError::line(
            path,
            line_no,
            "found a JSON array; expected a JSON object with named fields `id`, `text` and optional `required`, `kind`, `tool`, `history`, `flag`, `time` (fields are read by name, not by position)",
        ));
    }
    let line: RecordLine = serde_json::from_str(raw)
        .map_err(|e| InputError::line(path, line_no, describe_json_error(&e)))?;
    let kind = match &line.kind {
        None => Kind::default(),
        Some(k) => k
            .parse::<Kind>()
            .map_err(|msg| InputError::line(path, line_no, msg))?,
    };
    let time = line
        .time
        .as_deref()
        .map(super::time::Time::parse)
        .transpose()
        .map_err(|msg| InputError::line(path, line_no, format!("`time`: {msg}")))?;
    Ok(Some(ParsedLine { line, kind, time }))
}

/// The checks a history file's lines pass one at a time, and what they remember of each
/// history to make them: its name, its last id, where its records stand in time and which lines
/// gave a `flag`. Shared by the whole-file parse and the streamed index
/// ([`super::stream`]), so both refuse a file with the same message.
pub(super) struct LineChecks<'p> {
    path: &'p Path,
    default_name: String,
    names: Vec<String>,
    index_of: HashMap<String, usize>,
    last_id: Vec<Option<u64>>,
    /// Per history: the first line with a `flag` and the first without.
    flag_lines: Vec<(Option<usize>, Option<usize>)>,
    /// Per history: where its records stand in time (the start of its latest model call).
    order: Vec<super::time_order::TimeOrder>,
}

impl<'p> LineChecks<'p> {
    pub fn new(path: &'p Path) -> Self {
        let default_name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "history".to_string());
        LineChecks {
            path,
            default_name,
            names: Vec::new(),
            index_of: HashMap::new(),
            last_id: Vec::new(),
            flag_lines: Vec::new(),
            order: Vec::new(),
        }
    }

    /// The name of the history in `slot`.
    pub fn name(&self, slot: usize) -> String {
        self.names[slot].clone()
    }

    /// Checks line `line_no` (its text `raw`, without the line ending): `None` for a blank
    /// line, else the record it gives. A history's slot is new when it equals the number of
    /// histories seen before the line.
    pub fn check<'a>(
        &mut self,
        line_no: usize,
        raw: &'a str,
    ) -> Result<Option<CheckedLine<'a>>, InputError> {
        match parse_line(self.path, line_no, raw)? {
            Some(line) => self.accept(line_no, line).map(Some),
            None => Ok(None),
        }
    }

    /// The checks of line `line_no` that depend on the lines before it, for a line
    /// [`parse_line`] read.
    pub fn accept<'a>(
        &mut self,
        line_no: usize,
        parsed: ParsedLine<'a>,
    ) -> Result<CheckedLine<'a>, InputError> {
        let path = self.path;
        let ParsedLine { line, kind, time } = parsed;
        let slot = match &line.history {
            Some(name) => self.slot(name),
            None => {
                // The file's own name, lent out for the lookup rather than copied a line.
                let name = std::mem::take(&mut self.default_name);
                let slot = self.slot(&name);
                self.default_name = name;
                slot
            }
        };
        let first = self.flag_lines[slot];
        self.flag_lines[slot] = match line.flag {
            Some(_) => (first.0.or(Some(line_no)), first.1),
            None => (first.0, first.1.or(Some(line_no))),
        };
        let name = &self.names[slot];
        if let Some(prev) = self.last_id[slot] {
            if line.id <= prev {
                return Err(InputError::line(
                    path,
                    line_no,
                    format!(
                        "id {} is not greater than the previous id {prev} of history {name:?}; ids must strictly increase",
                        line.id
                    ),
                ));
            }
        }
        if let Err((before, at)) = self.order[slot].next(kind, time, line_no) {
            return Err(InputError::line(
                path,
                line_no,
                format!(
                    "`time` {} is earlier than {before}, the time of the model output on line {at} that starts the latest model call of history {name:?}; records must follow the run in time order (a call starts at its first output)",
                    time.expect("only a timed record is out of order"),
                ),
            ));
        }
        self.last_id[slot] = Some(line.id);
        Ok(CheckedLine {
            slot,
            id: line.id,
            kind,
            required: line.required,
            text: line.text,
            tool: line.tool,
            time,
            flag: line.flag,
        })
    }

    /// The slot of the history named `name`, made at its first line.
    fn slot(&mut self, name: &str) -> usize {
        if let Some(&slot) = self.index_of.get(name) {
            return slot;
        }
        self.index_of.insert(name.to_string(), self.names.len());
        self.names.push(name.to_string());
        self.last_id.push(None);
        self.flag_lines.push((None, None));
        self.order.push(Default::default());
        self.names.len() - 1
    }

    /// After the last line: every history gives a `flag` on all its records or on none, and
    /// the file holds a record; the error names the first line that breaks a rule.
    pub fn finish(&self) -> Result<(), InputError> {
        for (name, lines) in self.names.iter().zip(&self.flag_lines) {
            if let (Some(with), Some(without)) = *lines {
                return Err(InputError::line(
                    self.path,
                    without,
                    format!(
                        "this record of history {name:?} has no `flag` while line {with} has one; give every record of a history a `flag`, or none"
                    ),
                ));
            }
        }
        if self.names.is_empty() {
            return Err(InputError::File {
                path: self.path.to_path_buf(),
                message: "holds no records (expected one JSON object per line)".into(),
            });
        }
        Ok(())
    }
}
fn describe_json_error(e: &serde_json::Error) -> String {
    // serde_json appends "at line 1 column N" about the line itself; the column helps, the
    // line number does not (every line is parsed alone), so keep only the column.
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(at) => {
            let tail = &msg[at..];
            let column = tail.split("column ").nth(1).unwrap_or("");
            format!("{} (column {column})", &msg[..at])
        }
        None => msg,
    };
    format!("{msg}; expected a JSON object with `id` (integer), `text` (string) and optional `required`, `flag` (bools), `kind`, `tool`, `history`, `time` (strings)")
}

/// Writes histories as JSONL, one record per line, naming each record's history (and its
/// `flag`, for a history that carries flags of its own).
pub fn write_jsonl<W: Write>(out: &mut W, histories: &[History]) -> std::io::Result<()> {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        history: &'a str,
        #[serde(flatten)]
        record: &'a Record,
        #[serde(skip_serializing_if = "Option::is_none")]
        flag: Option<bool>,
    }
    for h in histories {
        for (i, record) in h.records.iter().enumerate() {
            serde_json::to_writer(
                &mut *out,
                &Out {
                    history: &h.name,
                    record,
                    flag: h.flags.as_ref().map(|f| f[i]),
                },
            )?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<History>, InputError> {
        parse_jsonl(Path::new("h.jsonl"), text)
    }

    #[test]
    fn groups_by_history_in_order_of_first_appearance() {
        let h = parse(
            "{\"id\":1,\"text\":\"a\",\"history\":\"x\"}\n\n{\"id\":1,\"text\":\"b\",\"history\":\"y\",\"required\":true}\n{\"id\":2,\"text\":\"c\",\"history\":\"x\",\"kind\":\"tool_result\",\"tool\":\"bash\"}\n",
        )
        .unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].name, "x");
        assert_eq!(h[0].records.len(), 2);
        assert_eq!(h[0].records[1].kind, Kind::ToolResult);
        assert_eq!(h[0].records[1].tool.as_deref(), Some("bash"));
        assert!(h[1].records[0].required);
        assert_eq!(h[1].records[0].kind, Kind::Note);
    }

    #[test]
    fn without_history_field_the_file_is_one_history_named_after_it() {
        let h = parse("{\"id\":1,\"text\":\"a\"}\n{\"id\":5,\"text\":\"b\"}").unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].name, "h");
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let cases = [
            (
                "{\"id\":1,\"text\":\"a\"}\n{not json}",
                "h.jsonl:2:",
                "expected",
            ),
            ("{\"text\":\"a\"}", "h.jsonl:1:", "missing field `id`"),
            (
                "{\"id\":\"1\",\"text\":\"a\"}",
                "h.jsonl:1:",
                "invalid type",
            ),
            (
                "{\"id\":1,\"text\":\"a\",\"kind\":\"robot\"}",
                "h.jsonl:1:",
                "unknown kind \"robot\"",
            ),
            (
                "{\"id\":2,\"text\":\"a\"}\n{\"id\":2,\"text\":\"b\"}",
                "h.jsonl:2:",
                "strictly increase",
            ),
            (
                "{\"id\":1,\"text\":\"a\",\"requried\":true}",
                "h.jsonl:1:",
                "unknown field `requried`",
            ),
            ("\n\n", "h.jsonl", "holds no records"),
        ];
        for (text, place, what) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with(place), "{err}");
            assert!(err.contains(what), "{err}");
        }
    }

    #[test]
    fn flag_fields_are_a_history_s_flags_all_or_none() {
        let h = parse(
            "{\"id\":1,\"text\":\"a\",\"required\":true,\"flag\":false}\n{\"id\":2,\"text\":\"b\",\"flag\":true}",
        )
        .unwrap();
        assert_eq!(h[0].flags, Some(vec![false, true]));
        assert_eq!(h[0].truth(), vec![true, false]);
        let err = parse("{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":\"b\",\"flag\":true}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("h.jsonl:1:"), "{err}");
        assert!(err.contains("no `flag` while line 2 has one"), "{err}");
        let err = parse("{\"id\":1,\"text\":\"a\",\"flag\":1}")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("h.jsonl:1: invalid type: integer `1`, expected a boolean"),
            "{err}"
        );
    }

    #[test]
    fn write_then_read_round_trips() {
        let h = vec![History::new(
            "run-1",
            vec![
                Record::new(1, "ü日本").required(true).kind(Kind::User),
                Record::new(2, "out").kind(Kind::ToolResult).tool("bash"),
            ],
        )];
        let mut h = h;
        h.push(History::new("run-2", vec![Record::new(1, "f")]));
        h[1].flags = Some(vec![true]);
        let mut buf = Vec::new();
        write_jsonl(&mut buf, &h).unwrap();
        let back = parse(std::str::from_utf8(&buf).unwrap()).unwrap();
        assert_eq!(back, h);
    }
}
