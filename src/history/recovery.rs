//! Which records an agent can fetch again after a compaction dropped them, and which are lost
//! for good: a record's *recovery class*, decided from its source alone (the record, the call
//! that produced it and the later edits), never from the truth.
//!
//! The rules, in order:
//!
//! 1. Only a tool result can be fetched again. The user's messages, the system prompt, the
//!    model's own text and its tool calls, summaries and notes are lost when dropped: nothing
//!    outside the context holds them.
//! 2. A tool result is a *re-runnable read* when the call that produced it (found by position,
//!    as [`super::import::file_view`] finds it) only reads:
//!    - a reading tool, by name: [`READING_TOOLS`] (Claude Code's `Read`, `Grep`, `Glob`, `LS`,
//!      `WebFetch`, `WebSearch`; the generator's `read_file`, `grep`, `web_fetch`; SWE-agent's
//!      `find_file`, `search_dir`, `search_file`);
//!    - an editor tool's `view` command (`{"command": "view", "path": ...}`);
//!    - a shell command every part of which (split at `|`, `&&`, `||`, `;` and line breaks) is a
//!      command of [`READ_ONLY_COMMANDS`] (`sed` without `-i`, `find` without `-delete` or
//!      `-exec`, `git` with a reading subcommand of [`READ_ONLY_GIT`]) with no output
//!      redirection (`>`, `>>`, `tee`), at least one of them not `cd` or `echo`.
//!
//!    Any other call (a test run, a build, an edit, a script) may have changed something, so
//!    its output is not a read: running it again is not the same call.
//! 3. A file view (a result showing a named file's text) is lost when a later call of the
//!    history edits that file: fetching it again gives the file as edited, not what the agent
//!    read. Edits are the `Edit`, `Write`, `MultiEdit` and `NotebookEdit` tools, an editor
//!    tool's `create`, `str_replace`, `insert` and `undo_edit` commands, and shell commands
//!    with `sed -i` or a redirection (`>`, `>>`, `tee`) naming the file. Paths are compared
//!    as written, after dropping a leading `./`; a relative path matches an absolute one that
//!    ends with `/` and it (`a/b.py` and `/testbed/a/b.py`).
//!
//! A generated history's `read_file`, `grep` and `web_fetch` results are therefore
//! recoverable and its `bash` and `edit_file` results are not (its commands are words, not
//! shell); it names no files, so rule 3 never applies to it.

use super::import::file_view::{last_fenced_block, producing_call};
use super::{Kind, Record};

/// Tools whose results are reads, by name.
pub const READING_TOOLS: [&str; 14] = [
    "Read",
    "NotebookRead",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "read_file",
    "grep",
    "web_fetch",
    "find_file",
    "search_dir",
    "search_file",
    "list_dir",
];

/// Shell commands that only read (files, the tree, the repository) and print.
pub const READ_ONLY_COMMANDS: [&str; 31] = [
    "cat",
    "head",
    "tail",
    "nl",
    "less",
    "more",
    "sed",
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "ls",
    "find",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "tree",
    "wc",
    "pwd",
    "file",
    "stat",
    "du",
    "which",
    "sort",
    "uniq",
    "cut",
    "git",
    "cd",
    "echo",
];

/// `git` subcommands that only read the repository.
pub const READ_ONLY_GIT: [&str; 8] = [
    "status",
    "log",
    "show",
    "diff",
    "blame",
    "grep",
    "ls-files",
    "rev-parse",
];

/// Tools that edit the file their `file_path` (or `notebook_path`) names.
const EDITING_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Editor-tool commands that change the file their `path` names.
const EDITOR_EDITS: [&str; 4] = ["create", "str_replace", "insert", "undo_edit"];

/// Each record's recovery class over the whole history: `true` for a re-runnable read whose
/// file (if it shows one) no later record edits (see the module documentation).
pub fn recoverable(records: &[Record]) -> Vec<bool> {
    let index = FileIndex::of(records);
    (0..records.len())
        .map(|i| index.recoverable_at(i, records.len()))
        .collect()
}

/// No file.
pub const NO_FILE: u32 = u32::MAX;

/// One file the history views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewedFile {
    /// As its first view names it.
    pub path: String,
    /// The records that show it, and those that edit it (the call records), ascending.
    pub views: Vec<u32>,
    pub edits: Vec<u32>,
}

/// What can be fetched again, record by record, and the files the history views: the
/// recovery classes as of any moment (a view is lost once its file is edited after it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileIndex {
    /// Per record: a re-runnable read (rules 1 and 2).
    pub read: Vec<bool>,
    /// Per record: the file it shows ([`NO_FILE`] for any record that is not a view).
    pub view_of: Vec<u32>,
    /// Per record: the file the view it produces shows (a call, or a response holding the
    /// command), [`NO_FILE`] otherwise: such a call is the re-read itself, not a use of the
    /// file's name.
    pub call_views: Vec<u32>,
    pub files: Vec<ViewedFile>,
}

impl FileIndex {
    pub fn of(records: &[Record]) -> FileIndex {
        let n = records.len();
        let mut index = FileIndex {
            read: (0..n)
                .map(|i| records[i].kind == Kind::ToolResult && is_read(records, i))
                .collect(),
            view_of: vec![NO_FILE; n],
            call_views: vec![NO_FILE; n],
            files: Vec::new(),
        };
        for i in 0..n {
            let Some(path) = viewed_file(records, i) else {
                continue;
            };
            let id = match index.files.iter().position(|f| same_file(&f.path, &path)) {
                Some(id) => id,
                None => {
                    index.files.push(ViewedFile {
                        path,
                        views: Vec::new(),
                        edits: Vec::new(),
                    });
                    index.files.len() - 1
                }
            };
            index.files[id].views.push(i as u32);
            index.view_of[i] = id as u32;
            if let Some(call) = super::import::file_view::producing_call_at(records, i) {
                index.call_views[call] = id as u32;
            }
        }
        for (at, path) in edits(records) {
            for f in index.files.iter_mut().filter(|f| same_file(&f.path, &path)) {
                f.edits.push(at as u32);
            }
        }
        index
    }

    /// Whether record `j` can be fetched again, as it was, just before record `at`: a
    /// re-runnable read, and if it shows a file, one that no record between them edits.
    pub fn recoverable_at(&self, j: usize, at: usize) -> bool {
        self.read[j]
            && match self.view_of[j] {
                NO_FILE => true,
                f => !self.files[f as usize]
                    .edits
                    .iter()
                    .any(|&e| (e as usize) > j && (e as usize) < at),
            }
    }
}

/// The file a tool result shows, when its call views one named file: a `Read` (its
/// `file_path`), an editor `view` (its `path`), or a shell command whose viewer names one
/// file (`cat a.py`, `sed -n 1,40p a.py`, `nl -ba a.py | sed -n 1,9p`).
pub fn viewed_file(records: &[Record], i: usize) -> Option<String> {
    if records[i].kind != Kind::ToolResult {
        return None;
    }
    let call = producing_call(records, i)?;
    match call_args(call) {
        CallText::Json(args) => {
            let tool = call.tool.as_deref().unwrap_or("");
            let command = args.get("command").and_then(|c| c.as_str());
            if tool == "Read" || tool == "NotebookRead" || command == Some("view") {
                json_path(&args)
            } else {
                command.and_then(shell_viewed_file)
            }
        }
        CallText::Shell(command) => shell_viewed_file(command),
        CallText::None => None,
    }
}

/// What a call record holds: JSON arguments, a shell command, or neither.
enum CallText<'a> {
    Json(serde_json::Map<String, serde_json::Value>),
    Shell(&'a str),
    None,
}

fn call_args(call: &Record) -> CallText<'_> {
    let text = call.text.trim_start();
    if call.kind == Kind::ToolCall && text.starts_with('{') {
        if let Ok(serde_json::Value::Object(args)) = serde_json::from_str(text) {
            return CallText::Json(args);
        }
    }
    match call.kind {
        // Harnesses that put the command in the response (mini-swe-agent, SWE-agent without
        // function calling): its last fenced block.
        Kind::Assistant => last_fenced_block(&call.text).map_or(CallText::None, CallText::Shell),
        Kind::ToolCall => CallText::Shell(&call.text),
        _ => CallText::None,
    }
}

fn json_path(args: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| args.get(*k).and_then(|v| v.as_str()))
        .map(|p| p.trim_start_matches("./").to_string())
}

/// Whether result `i` is a read (rule 2).
fn is_read(records: &[Record], i: usize) -> bool {
    let tool = records[i].tool.as_deref().unwrap_or("");
    if READING_TOOLS.contains(&tool) {
        return true;
    }
    let Some(call) = producing_call(records, i) else {
        return false;
    };
    if call
        .tool
        .as_deref()
        .is_some_and(|t| READING_TOOLS.contains(&t))
    {
        return true;
    }
    match call_args(call) {
        CallText::Json(args) => match args.get("command").and_then(|c| c.as_str()) {
            Some("view") => true,
            Some(command) => command_only_reads(command),
            None => false,
        },
        CallText::Shell(command) => command_only_reads(command),
        CallText::None => false,
    }
}

/// The parts of a shell command, split where one command ends and the next begins.
fn parts(command: &str) -> impl Iterator<Item = Part<'_>> {
    command
        .split("&&")
        .flat_map(|p| p.split("||"))
        .flat_map(|p| p.split(['|', ';', '\n']))
        .map(Part)
        .filter(|p| !p.program().is_empty())
}

/// One command of a shell line, its words split as they are read: most parts are told
/// apart by their program alone, and collecting every part's words was most of the cost of
/// a history's file index.
#[derive(Debug, Clone, Copy)]
struct Part<'a>(&'a str);

impl<'a> Part<'a> {
    /// Its first word ("" for a blank part).
    fn program(self) -> &'a str {
        self.words().next().unwrap_or("")
    }

    fn words(self) -> std::str::SplitWhitespace<'a> {
        self.0.split_whitespace()
    }

    /// The words after the program.
    fn args(self) -> std::iter::Skip<std::str::SplitWhitespace<'a>> {
        self.words().skip(1)
    }
}

/// Whether a shell command only reads (rule 2's shell case).
pub fn command_only_reads(command: &str) -> bool {
    if command.contains('>') && has_redirect(command) {
        return false;
    }
    let mut reads = false;
    for part in parts(command) {
        let program = part.program();
        let ok = match program {
            "cd" | "echo" => true,
            "sed" => !part
                .args()
                .any(|w| w.starts_with("-i") || w == "--in-place"),
            "find" => !part
                .args()
                .any(|w| matches!(w, "-delete" | "-exec" | "-execdir" | "-ok")),
            "git" => part
                .args()
                .find(|w| !w.starts_with('-'))
                .is_some_and(|sub| READ_ONLY_GIT.contains(&sub)),
            p => READ_ONLY_COMMANDS.contains(&p),
        };
        if !ok {
            return false;
        }
        reads |= !matches!(program, "cd" | "echo");
    }
    reads
}

/// Whether a command redirects output to a file (`2>&1` and `>/dev/null` are not writes).
fn has_redirect(command: &str) -> bool {
    redirect_targets(command).any(|t| t != "/dev/null")
}

/// The files a command's `>`/`>>` redirections and `tee` write.
fn redirect_targets(command: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    let bytes = command.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'>' {
            let mut j = i + 1;
            if j < bytes.len() && bytes[j] == b'>' {
                j += 1;
            }
            // `2>&1`, `>&2`: a descriptor, not a file.
            if j < bytes.len() && bytes[j] == b'&' {
                i = j + 1;
                continue;
            }
            let rest = command[j..].trim_start();
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | ')'))
                .unwrap_or(rest.len());
            let target = rest[..end].trim_matches(['"', '\'']);
            if !target.is_empty() {
                out.push(target.trim_start_matches("./"));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    for part in parts(command) {
        if part.program() == "tee" {
            out.extend(
                part.args()
                    .filter(|w| !w.starts_with('-'))
                    .map(|w| w.trim_start_matches("./")),
            );
        }
    }
    out.into_iter()
}

/// The one file a viewing shell command shows: the last argument of its viewer that is not an
/// option or a `sed` script, when exactly one such file is named.
fn shell_viewed_file(command: &str) -> Option<String> {
    let mut files: Vec<&str> = Vec::new();
    for part in parts(command) {
        let program = part.program();
        if !matches!(
            program,
            "cat" | "head" | "tail" | "nl" | "less" | "more" | "sed" | "open"
        ) {
            continue;
        }
        let mut args = part.args().filter(|w| !w.starts_with('-'));
        if program == "sed" {
            // The script comes first unless given with -e/-n's own argument.
            args.next();
        }
        files.extend(args.filter(|w| {
            !w.chars().all(|c| c.is_ascii_digit()) && !w.starts_with(['\'', '"', '2'])
        }));
    }
    files.sort_unstable();
    files.dedup();
    match files[..] {
        [one] => Some(one.trim_start_matches("./").to_string()),
        _ => None,
    }
}

/// Every edit of a named file in the history: the call record's index and the path.
fn edits(records: &[Record]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if !matches!(r.kind, Kind::ToolCall | Kind::Assistant) {
            continue;
        }
        match call_args(r) {
            CallText::Json(args) => {
                let tool = r.tool.as_deref().unwrap_or("");
                let command = args.get("command").and_then(|c| c.as_str());
                if EDITING_TOOLS.contains(&tool)
                    || command.is_some_and(|c| EDITOR_EDITS.contains(&c))
                {
                    out.extend(json_path(&args).map(|p| (i, p)));
                } else if let Some(command) = command {
                    out.extend(shell_edits(command).map(|p| (i, p)));
                }
            }
            CallText::Shell(command) => out.extend(shell_edits(command).map(|p| (i, p))),
            CallText::None => {}
        }
    }
    out
}

/// The files a shell command edits: `sed -i`'s file arguments and redirection targets.
fn shell_edits(command: &str) -> impl Iterator<Item = String> + '_ {
    let in_place = parts(command)
        .filter(|p| p.program() == "sed" && p.args().any(|a| a.starts_with("-i")))
        .filter_map(|p| {
            p.words()
                .last()
                .map(|f| f.trim_start_matches("./").to_string())
        })
        .collect::<Vec<_>>();
    in_place
        .into_iter()
        .chain(redirect_targets(command).map(str::to_string))
}

/// Whether two paths name the same file (see rule 3).
fn same_file(a: &str, b: &str) -> bool {
    a == b
        || (a.starts_with('/') && a.ends_with(&format!("/{b}")))
        || (b.starts_with('/') && b.ends_with(&format!("/{a}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: Kind, tool: Option<&str>, text: &str) -> Record {
        Record {
            tool: tool.map(str::to_string),
            kind,
            ..Record::new(0, text)
        }
    }

    #[test]
    fn reading_commands() {
        for yes in [
            "cat setup.py",
            "ls -la src/",
            "grep -rn Traceback . | head -20",
            "cd /testbed && find . -name '*.py' | wc -l",
            "git log --oneline -5",
            "git diff HEAD~1 -- a.py",
            "nl -ba a.py | sed -n '10,20p' 2>&1",
            "cat a.py > /dev/null",
        ] {
            assert!(command_only_reads(yes), "{yes}");
        }
        for no in [
            "python reproduce.py",
            "cat a.py && python a.py",
            "sed -i 's/a/b/' a.py",
            "grep x a.py > out.txt",
            "cat a.py | tee b.py",
            "find . -name '*.pyc' -delete",
            "git commit -m x",
            "git checkout a.py",
            "cd /testbed",
            "echo hi",
            "",
        ] {
            assert!(!command_only_reads(no), "{no}");
        }
    }

    #[test]
    fn results_are_classed_by_their_call_and_later_edits() {
        let records = [
            record(Kind::User, None, "Fix a.py"),
            record(Kind::ToolCall, Some("Read"), r#"{"file_path":"/r/a.py"}"#),
            record(Kind::ToolResult, Some("Read"), "1→x = 1"),
            record(Kind::ToolCall, Some("Read"), r#"{"file_path":"/r/b.py"}"#),
            record(Kind::ToolResult, Some("Read"), "1→y = 2"),
            record(Kind::ToolCall, Some("Bash"), r#"{"command":"pytest -q"}"#),
            record(Kind::ToolResult, Some("Bash"), "1 failed"),
            record(Kind::ToolCall, Some("Bash"), r#"{"command":"ls /r"}"#),
            record(Kind::ToolResult, Some("Bash"), "a.py b.py"),
            record(
                Kind::ToolCall,
                Some("Edit"),
                r#"{"file_path":"/r/a.py","old_string":"1","new_string":"2"}"#,
            ),
            record(Kind::ToolResult, Some("Edit"), "ok"),
            record(Kind::Assistant, None, "Done."),
        ];
        // a.py was viewed, then edited: lost; b.py never edited: a read; the test run is not
        // a read; the listing is; the user, the calls and the model's text are lost.
        assert_eq!(
            recoverable(&records),
            [false, false, false, false, true, false, false, false, true, false, false, false]
        );
        assert_eq!(viewed_file(&records, 2).as_deref(), Some("/r/a.py"));
        assert_eq!(viewed_file(&records, 8), None);
    }

    #[test]
    fn shell_views_and_edits_name_their_files() {
        assert_eq!(shell_viewed_file("cat ./a.py").as_deref(), Some("a.py"));
        assert_eq!(
            shell_viewed_file("nl -ba src/x.py | sed -n '1,40p'").as_deref(),
            Some("src/x.py")
        );
        assert_eq!(shell_viewed_file("cat a.py b.py"), None);
        let mini = [
            record(Kind::Assistant, None, "Look.\n```bash\ncat a.py\n```"),
            record(Kind::ToolResult, Some("bash"), "x = 1"),
            record(
                Kind::Assistant,
                None,
                "Fix.\n```bash\nsed -i 's/1/2/' /testbed/a.py\n```",
            ),
            record(Kind::ToolResult, Some("bash"), ""),
            record(Kind::Assistant, None, "Look.\n```bash\ncat b.py\n```"),
            record(Kind::ToolResult, Some("bash"), "y = 1"),
            record(
                Kind::Assistant,
                None,
                "Write.\n```bash\ncat <<'EOF' > b.py\ny = 2\nEOF\n```",
            ),
            record(Kind::ToolResult, Some("bash"), ""),
        ];
        assert_eq!(
            recoverable(&mini),
            [false, false, false, false, false, false, false, false]
        );
        assert!(same_file("/testbed/a.py", "a.py"));
        assert!(!same_file("/testbed/xa.py", "a.py"));
    }
}
