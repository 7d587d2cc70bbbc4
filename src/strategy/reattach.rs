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
use super::View;
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

/// The `file_path` a `Read` call's input names.
fn path_of(input: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(input).ok()?;
    Some(value.get("file_path")?.as_str()?.to_string())
}

fn is_read(view: &View, i: usize, kind: Kind) -> bool {
    view.kinds[i] == kind && view.tools[i].as_deref() == Some(READ_TOOL)
}

impl Reattach {
    /// The read records of `range` that come back after the summary, newest read first;
    /// `gone(i)` says a record's content is no longer there to read back.
    pub fn choose(
        &self,
        view: &View,
        range: std::ops::Range<usize>,
        gone: impl Fn(usize) -> bool,
    ) -> Vec<usize> {
        let calls: Vec<usize> = range
            .clone()
            .filter(|&i| is_read(view, i, Kind::ToolCall))
            .collect();
        let results: Vec<usize> = range
            .filter(|&i| is_read(view, i, Kind::ToolResult))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        let (mut chosen, mut used) = (Vec::new(), 0u64);
        for (rank, &r) in results.iter().rev().enumerate() {
            if seen.len() == self.files {
                break;
            }
            let call = calls.len().checked_sub(rank + 1).map(|c| calls[c]);
            let name = call
                .and_then(|c| path_of(view.texts.get(c)))
                .unwrap_or_else(|| format!("#{r}"));
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            let cost = view.costs[r];
            if gone(r)
                || is_stand_in(view, r)
                || cost > self.file_tokens
                || used + cost > self.budget
            {
                continue;
            }
            used += cost;
            chosen.push(r);
        }
        chosen
    }
}
