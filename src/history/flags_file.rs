//! Flags an external flagger produced (`histories.flags_file`): one JSON object a line,
//! `{"history": NAME, "id": RECORD_ID, "flag": true|false}`, naming histories and records as
//! the loaded histories name them. The flags become each history's flag base (what strategies
//! and summarisers see before label noise); `required` stays the truth scores are against.
//!
//! Every record of every history needs exactly one line, and every line must name a record
//! that exists: a flagger that skipped or invented records would otherwise be scored on
//! flags nobody gave. The whole file is checked before any history is touched.

use super::record::History;
use crate::error::InputError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// What one line must look like, for every message.
const EXPECTED: &str =
    "expected a JSON object {\"history\": NAME, \"id\": RECORD_ID, \"flag\": true|false}";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Line")] // the name serde's messages quote
struct FlagLine {
    history: String,
    id: u64,
    flag: bool,
}

/// What a flags file is checked against: a history's name and its records' ids, in order
/// (a loaded history, or a streamed one's skeleton, which holds no texts).
pub trait RecordIds {
    fn name(&self) -> &str;
    fn records(&self) -> usize;
    /// The id of record `r`; ids strictly increase.
    fn id(&self, r: usize) -> u64;
}

impl RecordIds for History {
    fn name(&self) -> &str {
        &self.name
    }
    fn records(&self) -> usize {
        self.records.len()
    }
    fn id(&self, r: usize) -> u64 {
        self.records[r].id
    }
}

/// The index of the record of `history` with id `id`, found by bisection.
fn position<H: RecordIds + ?Sized>(history: &H, id: u64) -> Option<usize> {
    let (mut low, mut high) = (0, history.records());
    while low < high {
        let mid = low + (high - low) / 2;
        match history.id(mid).cmp(&id) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// Reads `path`: the flags it gives each of `histories`, in their order and record order
/// (see the module documentation).
pub fn read<H: RecordIds>(path: &Path, histories: &[&H]) -> Result<Vec<Vec<bool>>, InputError> {
    let text = crate::text::read(path)?;
    parse(path, &text, histories)
}

/// [`read`] on text already read; `path` names it in errors.
pub fn parse<H: RecordIds>(
    path: &Path,
    text: &str,
    histories: &[&H],
) -> Result<Vec<Vec<bool>>, InputError> {
    let index: HashMap<&str, usize> = histories
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name(), i))
        .collect();
    // Per history, per record: the flag and the line that gave it.
    let mut given: Vec<Vec<Option<(bool, usize)>>> =
        histories.iter().map(|h| vec![None; h.records()]).collect();
    let mut last_line: Vec<Option<usize>> = vec![None; histories.len()];
    let mut lines = 0usize;
    for (n, raw) in crate::text::without_bom(text).lines().enumerate() {
        let line_no = n + 1;
        if raw.trim().is_empty() {
            continue;
        }
        lines += 1;
        let line = flag_line(path, line_no, raw)?;
        let (h, r) = record_of(path, line_no, &line, histories, &index)?;
        if let Some((_, first)) = given[h][r] {
            return Err(InputError::line(
                path,
                line_no,
                format!(
                    "record {} of history {:?} already has a flag on line {first}; give each record one line",
                    line.id,
                    histories[h].name()
                ),
            ));
        }
        given[h][r] = Some((line.flag, line_no));
        last_line[h] = Some(line_no);
    }
    if lines == 0 {
        return Err(InputError::File {
            path: path.to_path_buf(),
            message: format!("holds no flags ({EXPECTED} per line)"),
        });
    }
    every_record_flagged(path, histories, &given, &last_line)?;
    Ok(given
        .into_iter()
        .map(|flags| flags.into_iter().map(|f| f.is_some_and(|f| f.0)).collect())
        .collect())
}

/// One line read as a [`FlagLine`], refused with [`EXPECTED`] when it is not one.
fn flag_line(path: &Path, line_no: usize, raw: &str) -> Result<FlagLine, InputError> {
    // serde reads a struct from an array by position; a flag line has named fields.
    if raw.trim_start().starts_with('[') {
        return Err(InputError::line(
            path,
            line_no,
            format!("found a JSON array; {EXPECTED} (fields are read by name, not by position)"),
        ));
    }
    serde_json::from_str(raw)
        .map_err(|e| InputError::line(path, line_no, format!("{}; {EXPECTED}", json_error(&e))))
}

/// The (history, record) a line names, as indices; refused when either does not exist.
fn record_of<H: RecordIds>(
    path: &Path,
    line_no: usize,
    line: &FlagLine,
    histories: &[&H],
    index: &HashMap<&str, usize>,
) -> Result<(usize, usize), InputError> {
    let Some(&h) = index.get(line.history.as_str()) else {
        return Err(InputError::line(
            path,
            line_no,
            format!(
                "no loaded history is named {:?} (the histories are {})",
                crate::quote::cut(&line.history, crate::quote::QUOTE_CHARS),
                names(histories)
            ),
        ));
    };
    let history = histories[h];
    let Some(r) = position(history, line.id) else {
        return Err(InputError::line(
            path,
            line_no,
            format!(
                "history {:?} has no record with id {} (its ids run from {} to {}); every line must name a record that exists",
                history.name(),
                line.id,
                if history.records() == 0 { 0 } else { history.id(0) },
                history.records().checked_sub(1).map_or(0, |r| history.id(r)),
            ),
        ));
    };
    Ok((h, r))
}

/// Refuses the file when a history has a record no line flags, naming the first such history
/// at its last line (where the missing lines belong), or the file when no line names it.
fn every_record_flagged<H: RecordIds>(
    path: &Path,
    histories: &[&H],
    given: &[Vec<Option<(bool, usize)>>],
    last_line: &[Option<usize>],
) -> Result<(), InputError> {
    for (h, flags) in given.iter().enumerate() {
        let history = histories[h];
        let missing: Vec<u64> = flags
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_none())
            .map(|(r, _)| history.id(r))
            .collect();
        let Some(&first) = missing.first() else {
            continue;
        };
        let message = format!(
            "history {:?} lacks a flag line for {} of its {} records (first: id {first}); every record of every loaded history needs one",
            history.name(),
            missing.len(),
            history.records()
        );
        return Err(match last_line[h] {
            // The place to add the missing lines: after the history's last one.
            Some(line) => InputError::line(
                path,
                line,
                format!("{message} (this is the history's last line)"),
            ),
            None => InputError::File {
                path: path.to_path_buf(),
                message: format!(
                    "no line names history {:?} ({} records); every record of every loaded history needs a flag",
                    history.name(),
                    history.records()
                ),
            },
        });
    }
    Ok(())
}

fn names<H: RecordIds>(histories: &[&H]) -> String {
    const SHOWN: usize = 5;
    let mut list: Vec<String> = histories
        .iter()
        .take(SHOWN)
        .map(|h| format!("{:?}", h.name()))
        .collect();
    if histories.len() > SHOWN {
        list.push(format!("and {} more", histories.len() - SHOWN));
    }
    list.join(", ")
}

/// serde_json's message with its column, without its "line 1" (every line is parsed alone).
fn json_error(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(at) => format!("{} (column {})", &msg[..at], e.column()),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    fn histories() -> Vec<History> {
        vec![
            History::new(
                "a",
                vec![Record::new(1, "x").required(true), Record::new(3, "y")],
            ),
            History::new("b", vec![Record::new(2, "z")]),
        ]
    }

    #[test]
    fn a_complete_file_sets_every_flag_and_leaves_the_truth() {
        let mut h = histories();
        let text = "{\"history\":\"a\",\"id\":3,\"flag\":true}\n\n{\"history\":\"b\",\"id\":2,\"flag\":false}\n{\"history\":\"a\",\"id\":1,\"flag\":false}\n";
        let refs: Vec<&History> = h.iter().collect();
        let flags = parse(Path::new("f.jsonl"), text, &refs).unwrap();
        for (h, f) in h.iter_mut().zip(flags) {
            h.flags = Some(f);
        }
        assert_eq!(h[0].flags, Some(vec![false, true]));
        assert_eq!(h[0].truth(), vec![true, false]);
        assert_eq!(h[1].flag_base(), vec![false]);
    }
}
