//! Whether a tool result shows the text of a file the agent viewed: then a `Traceback` or an
//! `Error:` line in it is the file's content (a doctest, a log the agent read), not a failure
//! of anything the agent ran. The `errors` label rule leaves such signs out unless
//! `errors(file_views=true)`.
//!
//! A result is a file view when the call that produced it only prints files:
//!
//! - a `Read` tool call (Claude Code), or a `view` command of an editor tool
//!   (`{"command": "view", "path": ...}`, SWE-agent's and OpenHands' `str_replace_editor`);
//! - a shell command every part of which (split at `|`, `&&`, `||`, `;` and line breaks) is
//!   `cat`, `head`, `tail`, `nl`, `less`, `more`, `sed` without `-i`, SWE-agent's `open`,
//!   `goto`, `scroll_up` or `scroll_down`, or `cd`/`echo` around them, with at least one that
//!   prints a file. The command is the tool call's `command` (JSON arguments) or text, or, for
//!   harnesses that put it in the response (mini-swe-agent, SWE-agent without function
//!   calling), the last fenced block of the `assistant` record.
//!
//! The call of a result is found by position: the results after a group of calls answer them
//! in order (the first result the first call), as every supported format writes them.

use crate::history::{Kind, Record};

/// Commands that print a file's text.
const VIEWERS: [&str; 11] = [
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
];

/// Whether record `i` (a tool result) shows a file's text, judged by the call that produced it.
pub fn is_file_view(records: &[Record], i: usize) -> bool {
    if records[i].tool.as_deref() == Some("Read") {
        return true;
    }
    producing_call(records, i).is_some_and(call_views_files)
}

/// The call record that produced result `i`: among the calls (or, where a harness writes no
/// call records, the response) before the run of results `i` belongs to, the one in its place.
pub(crate) fn producing_call(records: &[Record], i: usize) -> Option<&Record> {
    producing_call_at(records, i).map(|j| &records[j])
}

/// [`producing_call`]'s index.
pub(crate) fn producing_call_at(records: &[Record], i: usize) -> Option<usize> {
    // Results of the same group before i: the k-th result answers the k-th call.
    let mut j = i;
    while j > 0 && records[j - 1].kind == Kind::ToolResult {
        j -= 1;
    }
    let k = i - j;
    let mut calls: Vec<usize> = Vec::new();
    let mut response: Option<usize> = None;
    while j > 0 && matches!(records[j - 1].kind, Kind::ToolCall | Kind::Assistant) {
        j -= 1;
        match records[j].kind {
            Kind::ToolCall => calls.push(j),
            _ => {
                response.get_or_insert(j);
            }
        }
    }
    calls.reverse();
    if calls.is_empty() {
        response
    } else {
        calls.get(k).copied()
    }
}

fn call_views_files(call: &Record) -> bool {
    let text = call.text.trim_start();
    if call.kind == Kind::ToolCall && text.starts_with('{') {
        if let Ok(serde_json::Value::Object(args)) = serde_json::from_str(text) {
            return match args.get("command").and_then(|c| c.as_str()) {
                Some("view") => args.contains_key("path"),
                Some(command) => command_views_files(command),
                None => false,
            };
        }
    }
    match call.kind {
        Kind::Assistant => last_fenced_block(&call.text).is_some_and(command_views_files),
        _ => command_views_files(&call.text),
    }
}

/// The body of the last fenced block (```` ```lang ... ``` ````) of a response.
pub(crate) fn last_fenced_block(text: &str) -> Option<&str> {
    let end = text.rfind("```")?;
    let start = text[..end].rfind("```")? + 3;
    let body = &text[start..end];
    // Drop the language tag on the opening line.
    Some(body.split_once('\n').map_or(body, |(_, rest)| rest))
}

/// Whether a shell command only prints files (see the module documentation).
pub fn command_views_files(command: &str) -> bool {
    let mut views = false;
    // `&&` and `||` join commands; a lone `&` stays inside its part (`2>&1`).
    let joined = command.replace("&&", "\n").replace("||", "\n");
    for part in joined.split(['|', ';', '\n']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some(&program) = words.first() else {
            continue;
        };
        match program {
            "cd" | "echo" => {}
            "sed"
                if words
                    .iter()
                    .any(|w| w.starts_with("-i") || *w == "--in-place") =>
            {
                return false
            }
            p if VIEWERS.contains(&p) => views = true,
            _ => return false,
        }
    }
    views
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
    fn commands_that_only_print_files() {
        for yes in [
            "cat setup.py",
            "nl -ba sympy/utilities/lambdify.py | sed -n '700,850p'",
            "cd /testbed && sed -n 1,40p a.py",
            "head -50 a.py; echo ---; tail a.py",
            "cat a.py 2>&1 | head -n 80",
            "open src/x.py 120",
        ] {
            assert!(command_views_files(yes), "{yes}");
        }
        for no in [
            "python reproduce_issue.py",
            "cat a.py && python a.py",
            "sed -i 's/a/b/' a.py && cat a.py",
            "grep -rn Traceback .",
            "cd /testbed",
            "",
        ] {
            assert!(!command_views_files(no), "{no}");
        }
    }

    #[test]
    fn a_result_is_judged_by_the_call_in_its_place() {
        let mini = [
            record(Kind::Assistant, None, "Look.\n```bash\ncat a.py\n```"),
            record(
                Kind::ToolResult,
                Some("bash"),
                "Traceback (most recent call last):",
            ),
            record(Kind::Assistant, None, "Run.\n```bash\npython a.py\n```"),
            record(
                Kind::ToolResult,
                Some("bash"),
                "Traceback (most recent call last):",
            ),
        ];
        assert!(is_file_view(&mini, 1));
        assert!(!is_file_view(&mini, 3));
        // Two calls, then their two results, in order.
        let parallel = [
            record(Kind::Assistant, None, "Both."),
            record(Kind::ToolCall, Some("Bash"), r#"{"command":"python a.py"}"#),
            record(Kind::ToolCall, Some("Bash"), r#"{"command":"cat b.py"}"#),
            record(Kind::ToolResult, Some("Bash"), "Traceback"),
            record(Kind::ToolResult, Some("Bash"), "Traceback"),
            record(Kind::ToolResult, Some("Read"), "     1→ValueError: x"),
            record(
                Kind::ToolCall,
                Some("str_replace_editor"),
                r#"{"command":"view","path":"/a.py"}"#,
            ),
            record(Kind::ToolResult, Some("str_replace_editor"), "Traceback"),
        ];
        assert!(!is_file_view(&parallel, 3));
        assert!(is_file_view(&parallel, 4));
        assert!(
            is_file_view(&parallel, 5),
            "a Read result is a view whatever its place"
        );
        assert!(is_file_view(&parallel, 7));
    }
}
