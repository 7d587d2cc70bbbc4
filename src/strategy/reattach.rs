//! Claude Code's re-attached files after a full compaction (`claude_code`): which recently read
//! files come back, read again, after the summary, within the stated limits.
//!
//! Claude Code keeps the content of every file its `Read` tool read (`readFileState`); after a
//! compaction it attaches the most recently read ones again (third-party analyses of the CLI:
//! at most `POST_COMPACT_MAX_FILES_TO_RESTORE = 5` files, `POST_COMPACT_MAX_TOKENS_PER_FILE =
//! 5 000` tokens each, `POST_COMPACT_TOKEN_BUDGET = 50 000` in all). Here a re-attached file is
//! the record of its newest read, kept verbatim after the summary: the newest `files` distinct
//! files are taken in order of their last read, and each comes back when it fits
//! `file_tokens` and what is left of `budget`. A file is named by the `file_path` its `Read`
//! call gives (calls pair with results by rank from the newest); a read whose call names none
//! is a file of its own.
//!
//! Assumptions, as the analyses leave them open or ctxlab cannot follow them: a file over
//! `file_tokens` does not come back (Claude Code may attach a short reference to it instead);
//! the file comes back as it was read (not as it is after later edits); files written or edited
//! but not read are not candidates; a read already replaced by a stand-in (cleared while the
//! session was idle) cannot be read back here and is skipped.

use super::preset::is_stand_in;
use super::{Context, Item, View};
use crate::history::Kind;

/// `POST_COMPACT_MAX_FILES_TO_RESTORE`, `POST_COMPACT_MAX_TOKENS_PER_FILE`,
/// `POST_COMPACT_TOKEN_BUDGET` (reported).
pub const FILES: usize = 5;
pub const FILE_TOKENS: u64 = 5_000;
pub const FILES_BUDGET: u64 = 50_000;
/// Claude Code's file-reading tool (`FILE_READ_TOOL_NAME`).
pub const READ_TOOL: &str = "Read";

/// The limits of the re-attachment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reattach {
    pub files: usize,
    pub file_tokens: u64,
    pub budget: u64,
}

impl Default for Reattach {
    fn default() -> Self {
        Reattach {
            files: FILES,
            file_tokens: FILE_TOKENS,
            budget: FILES_BUDGET,
        }
    }
}

/// The `file_path` a `Read` call's input names (the importer writes the input as compact
/// JSON; a path holding an escaped quote is cut there, which only merges or splits names).
fn path_of(input: &str) -> Option<&str> {
    let key = "\"file_path\"";
    let rest = input[input.find(key)? + key.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start().strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

fn is_read(view: &View, i: usize, kind: Kind) -> bool {
    view.kinds[i] == kind && view.tools[i].as_deref() == Some(READ_TOOL)
}

impl Reattach {
    /// Appends to `out` the read records of `range` that come back after the summary, newest
    /// read first; `gone(i)` says a record's content is no longer there to read back. The
    /// files seen are kept in `out.order` (their call, or their result when no call names
    /// them), so nothing is allocated once it has grown.
    pub fn push(
        &self,
        view: &View,
        range: std::ops::Range<usize>,
        gone: impl Fn(usize) -> bool,
        out: &mut Context,
    ) {
        let mut seen = std::mem::take(&mut out.order);
        seen.clear();
        let name = |i: usize| match view.kinds[i] {
            Kind::ToolCall => path_of(view.texts.get(i)),
            _ => None,
        };
        // Calls pair with results by rank from the newest: one cursor walks the calls back.
        let mut calls = range
            .clone()
            .rev()
            .filter(|&i| is_read(view, i, Kind::ToolCall));
        let mut used = 0u64;
        for r in range.rev().filter(|&r| is_read(view, r, Kind::ToolResult)) {
            if seen.len() == self.files {
                break;
            }
            let call = calls.next();
            let file = call.filter(|&c| name(c).is_some()).unwrap_or(r);
            if name(file).is_some() && seen.iter().any(|&s| name(s) == name(file)) {
                continue;
            }
            seen.push(file);
            let cost = view.costs[r];
            if gone(r)
                || is_stand_in(view, r)
                || cost > self.file_tokens
                || used + cost > self.budget
            {
                continue;
            }
            used += cost;
            out.push(Item::Verbatim(r), cost, view.separator);
        }
        out.order = seen;
    }
}

#[cfg(test)]
mod tests {
    use super::path_of;

    #[test]
    fn a_read_call_names_its_file() {
        assert_eq!(
            path_of(r#"{"file_path":"/src/a.rs","limit":20}"#),
            Some("/src/a.rs")
        );
        assert_eq!(path_of(r#"{"file_path": "/b"}"#), Some("/b"));
        assert_eq!(path_of(r#"{"pattern":"x"}"#), None);
        assert_eq!(path_of(r#"{"file_path":3}"#), None);
    }
}
