//! Signs of failure in a tool result's text: what the `errors` label rule looks for.

/// A sign of failure in a tool result's text, before the rule's parameters decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sign {
    /// `<returncode>N</returncode>`, N ≠ 0, with output.
    Exit,
    /// The same with nothing in `<output>`: `grep` finding nothing, `test -f` answering no.
    EmptyExit,
    FormatNotice,
    /// A message found anywhere in the text (`command not found`, a harness's timeout).
    Message(&'static str),
    /// A line that starts like an error (a traceback, `ValueError: ...`): in a viewed file's
    /// text, the file's content.
    Line(&'static str),
}

impl Sign {
    pub(super) fn name(self) -> &'static str {
        match self {
            Sign::Exit => "a non-zero <returncode>",
            Sign::EmptyExit => "a non-zero <returncode> with empty output",
            Sign::FormatNotice => "the harness's format notice",
            Sign::Message(m) | Sign::Line(m) => m,
        }
    }
}

/// The name of a line sign seen in a file view.
pub(super) fn file_view_sign(line: &'static str) -> &'static str {
    match line {
        "a Python traceback" => "a Python traceback in a viewed file",
        "a line starting with an exception name" => {
            "a line starting with an exception name in a viewed file"
        }
        "a compiler or tool error line" => "a compiler or tool error line in a viewed file",
        _ => "a test runner's failure verdict in a viewed file",
    }
}

/// Does a tool result's text report a failure? True when any line (leading whitespace
/// ignored) shows one of these signs:
///
/// 1. `<returncode>N</returncode>` with N ≠ 0 (mini-swe-agent's exit status);
/// 2. `Traceback (most recent call last):` at the start of a line (Python);
/// 3. a word ending in `Error` or `Exception` (dots allowed, e.g. `django.db.IntegrityError`)
///    at the start of a line, followed by `:` or the end of the line (`ValueError: x`,
///    `Error: x`, a bare `AssertionError`);
/// 4. `error:`, `error[`, `fatal:` or `fatal error:` at the start of a line, or `: error:` /
///    `: fatal error:` inside one (compilers, linkers, git);
/// 5. `command not found`, `No such file or directory` or `Segmentation fault` anywhere;
/// 6. pytest's verdicts: `FAILED ` or `ERROR ` at the start of a line, or a line starting with
///    `=` that contains ` failed` or ` error` (the `=== 1 failed, 3 passed ===` summary);
/// 7. the harness's own failure notices: `timed out and has been killed` (mini-swe-agent
///    timeout), `was cancelled because it took more than` (SWE-agent timeout), `Your bash
///    command contained syntax errors` (SWE-agent);
/// 8. the harness's notice about the agent's output format, `Please always provide EXACTLY ONE
///    action` (mini-swe-agent).
///
/// The `errors` rule takes some of these only when asked ([`super::LabelRules::error_verdicts`]): 8
/// with `format_notices` (the agent broke the protocol, nothing in the task failed), 1 with an
/// empty `<output>` with `empty_exits`, 2–4 and 6 in a viewed file's text with `file_views`.
pub fn reports_failure(text: &str) -> bool {
    first_sign(text).is_some()
}

/// The notice mini-swe-agent sends back when a response holds no single action.
pub const FORMAT_NOTICE: &str = "Please always provide EXACTLY ONE action";

/// The first sign of failure [`reports_failure`] finds, named, as the `errors` rule takes it
/// with `format_notices` and `empty_exits` as given (a file view needs the call: see
/// [`super::LabelRules::error_verdicts`]).
pub fn failure_sign(text: &str, format_notices: bool, empty_exits: bool) -> Option<&'static str> {
    let sign = first_sign(text)?;
    let asked = match sign {
        Sign::FormatNotice => format_notices,
        Sign::EmptyExit => empty_exits,
        _ => true,
    };
    asked.then(|| sign.name())
}

pub(super) fn first_sign(text: &str) -> Option<Sign> {
    if return_code(text).is_some_and(|code| code != 0) {
        return Some(if output_is_empty(text) {
            Sign::EmptyExit
        } else {
            Sign::Exit
        });
    }
    if text.contains(FORMAT_NOTICE) {
        return Some(Sign::FormatNotice);
    }
    const ANYWHERE: [&str; 6] = [
        "command not found",
        "No such file or directory",
        "Segmentation fault",
        "timed out and has been killed",
        "was cancelled because it took more than",
        "Your bash command contained syntax errors",
    ];
    if let Some(p) = ANYWHERE.iter().find(|p| text.contains(*p)) {
        return Some(Sign::Message(p));
    }
    text.lines().find_map(|raw| {
        let line = raw.trim_start();
        if line.starts_with("Traceback (most recent call last):") {
            Some(Sign::Line("a Python traceback"))
        } else if starts_with_exception(line) {
            Some(Sign::Line("a line starting with an exception name"))
        } else if ["error:", "error[", "fatal:", "fatal error:"]
            .iter()
            .any(|p| line.starts_with(p))
            || line.contains(": error:")
            || line.contains(": fatal error:")
        {
            Some(Sign::Line("a compiler or tool error line"))
        } else if line.starts_with("FAILED ")
            || line.starts_with("ERROR ")
            || (line.starts_with('=') && (line.contains(" failed") || line.contains(" error")))
        {
            Some(Sign::Line("a test runner's failure verdict"))
        } else {
            None
        }
    })
}

/// Whether a result with a `<returncode>` printed nothing: what is left without the
/// `<returncode>` element and the `<output>` tags is blank.
fn output_is_empty(text: &str) -> bool {
    let rest = match (text.find("<returncode>"), text.find("</returncode>")) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{}", &text[..a], &text[b + "</returncode>".len()..])
        }
        _ => text.to_string(),
    };
    rest.replace("<output>", "")
        .replace("</output>", "")
        .trim()
        .is_empty()
}

/// The N of the first `<returncode>N</returncode>`.
fn return_code(text: &str) -> Option<i64> {
    let start = text.find("<returncode>")? + "<returncode>".len();
    let len = text[start..].find("</returncode>")?;
    text[start..start + len].trim().parse().ok()
}

fn starts_with_exception(line: &str) -> bool {
    let word_len = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(line.len());
    let word = &line[..word_len];
    let rest = &line[word_len..];
    (word.ends_with("Error") || word.ends_with("Exception"))
        && (rest.is_empty() || rest.starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_recognised_line_by_line() {
        let yes = [
            "<returncode>1</returncode>\n<output>\n</output>",
            "<returncode>127</returncode>",
            "x\nTraceback (most recent call last):\n  File \"a.py\"",
            "  ValueError: bad value",
            "django.db.utils.IntegrityError: UNIQUE",
            "AssertionError",
            "error: failed to push some refs",
            "error[E0308]: mismatched types",
            "fatal: not a git repository",
            "src/a.c:3:5: error: expected ';'",
            "bash: foo: command not found",
            "cat: x: No such file or directory",
            "FAILED tests/test_a.py::test_b - assert 1 == 2",
            "===== 1 failed, 2 passed in 0.1s =====",
            "The last command <command>x</command> timed out and has been killed.",
        ];
        for t in yes {
            assert!(reports_failure(t), "{t:?}");
        }
        let no = [
            "<returncode>0</returncode>\n<output>\nall good\n</output>",
            "warning: unused variable",
            "raise ValueError: in a quoted line",
            "ErrorHandler registered",
            "the word Error appears mid-line: fine",
            "===== 3 passed in 0.1s =====",
            "",
        ];
        for t in no {
            assert!(!reports_failure(t), "{t:?}");
        }
        // The harness's format notice is a failure only when asked for.
        let notice =
            "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.";
        assert_eq!(failure_sign(notice, false, false), None);
        assert_eq!(
            failure_sign(notice, true, false),
            Some("the harness's format notice")
        );
        assert_eq!(
            failure_sign(
                "<returncode>2</returncode>\n<output>\nboom\n</output>",
                false,
                false
            ),
            Some("a non-zero <returncode>")
        );
        // A non-zero exit with nothing printed is a failure only when asked for.
        for empty in [
            "<returncode>1</returncode>\n<output>\n</output>",
            "<returncode>1</returncode>",
            "  <returncode>2</returncode><output>  \n </output>\n",
        ] {
            assert_eq!(failure_sign(empty, false, false), None, "{empty:?}");
            assert_eq!(
                failure_sign(empty, false, true),
                Some("a non-zero <returncode> with empty output"),
                "{empty:?}"
            );
        }
    }
}
