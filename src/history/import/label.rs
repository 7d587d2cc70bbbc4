//! Label rules: real runs carry no `required` flags, so these rules derive them. Rules combine
//! by union (a record is required when any chosen rule marks it). The README states what each
//! marks and where it goes wrong.
//!
//! - `instructions`: every `system` and `user` record (the system prompt, the task, and in
//!   interactive sessions each later request the human typed).
//! - `errors`: every `tool_result` that reports a failure (see [`reports_failure`]); a harness's
//!   notice about the agent's own output format ("provide EXACTLY ONE action") is not a failure
//!   of the task and marks nothing unless `errors(format_notices=true)`.
//! - `hindsight(min_gap=2)`: every record in which a distinctive token first appeared that a
//!   record written by the model (`assistant` or `tool_call`) at least `min_gap + 1` records
//!   later uses again (see [`distinctive_tokens`]). A use by the next `min_gap` records marks
//!   nothing: the agent's very next response always holds its own turn's results verbatim (every
//!   strategy keeps the newest records, and a response spans up to two records: its text and its
//!   tool call), so such a mark says nothing about what compaction must keep. A token the model
//!   introduced itself (first seen in an `assistant` or `tool_call` record: a script name it made
//!   up) marks nothing either: the agent needs no reminder of what it wrote.
//!
//! `errors` and `instructions` look only at the record itself (a harness could apply them as
//! the run goes); `hindsight` looks at the future.

use super::Run;
use crate::history::{History, Kind, Record};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

/// `hindsight`'s `min_gap` unless the spec says otherwise.
pub const DEFAULT_MIN_GAP: usize = 2;

/// Which rules set `required`; all off gives a history with nothing required.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RulesSpec", into = "String")]
pub struct LabelRules {
    pub instructions: bool,
    pub errors: bool,
    /// `errors(format_notices=true)`: a harness's format notices count as failures.
    pub format_notices: bool,
    pub hindsight: bool,
    /// `hindsight(min_gap=N)`: uses by the next N records do not mark.
    pub min_gap: usize,
    /// `hindsight(own_tokens=true)`: tokens the model introduced mark their record too (the rule
    /// before it left them out, kept to compare).
    pub own_tokens: bool,
}

impl Default for LabelRules {
    fn default() -> Self {
        LabelRules {
            instructions: false,
            errors: false,
            format_notices: false,
            hindsight: false,
            min_gap: DEFAULT_MIN_GAP,
            own_tokens: false,
        }
    }
}

/// Why a rule marked a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `instructions`: the record's kind.
    Instruction(Kind),
    /// `errors`: the sign of failure found (see [`failure_sign`]).
    Failure(&'static str),
    /// `hindsight`: the token and the (0-based) later record that used it.
    Reused { token: String, by: usize },
}

impl LabelRules {
    pub const NAMES: [&'static str; 3] = ["instructions", "errors", "hindsight"];

    pub const ALL: LabelRules = LabelRules {
        instructions: true,
        errors: true,
        format_notices: false,
        hindsight: true,
        min_gap: DEFAULT_MIN_GAP,
        own_tokens: false,
    };

    pub fn is_empty(&self) -> bool {
        !(self.instructions || self.errors || self.hindsight)
    }

    /// Whether a rule looks at what comes later in the run (`hindsight`): such labels are a
    /// truth to score against, not flags a harness could have had at the time.
    pub fn sees_the_future(&self) -> bool {
        self.hindsight
    }

    /// The records each chosen rule marks, united, in record order.
    pub fn marks(&self, run: &Run) -> Vec<bool> {
        self.reasons(run)
            .into_iter()
            .map(|r| !r.is_empty())
            .collect()
    }

    /// Per record, why each chosen rule marked it (empty: not marked).
    pub fn reasons(&self, run: &Run) -> Vec<Vec<Reason>> {
        let records = &run.history.records;
        let mut reasons: Vec<Vec<Reason>> = vec![Vec::new(); records.len()];
        if self.instructions {
            for (why, r) in reasons.iter_mut().zip(records) {
                if is_instruction(r.kind) {
                    why.push(Reason::Instruction(r.kind));
                }
            }
        }
        if self.errors {
            for (i, r) in records.iter().enumerate() {
                if r.kind != Kind::ToolResult {
                    continue;
                }
                let sign = if run.failed.get(i) == Some(&true) {
                    Some("the transcript marks the result as an error")
                } else {
                    failure_sign(&r.text, self.format_notices)
                };
                if let Some(sign) = sign {
                    reasons[i].push(Reason::Failure(sign));
                }
            }
        }
        if self.hindsight {
            let marks = hindsight(&run.history, self.min_gap, self.own_tokens);
            for (why, h) in reasons.iter_mut().zip(marks) {
                if let Some((token, by)) = h {
                    why.push(Reason::Reused { token, by });
                }
            }
        }
        reasons
    }

    /// The run's history with `required` set by these rules and its flags by `flags` (the
    /// rules a harness could have applied as the run went).
    pub fn apply_flagged(&self, run: Run, flags: &LabelRules) -> History {
        let marks = flags.marks(&run);
        let mut history = self.apply(run);
        history.flags = Some(marks);
        history
    }

    /// The run's history with `required` set by the rules.
    pub fn apply(&self, run: Run) -> History {
        let marks = self.marks(&run);
        let mut history = run.history;
        for (r, m) in history.records.iter_mut().zip(marks) {
            r.required = m;
        }
        history
    }
}

impl fmt::Display for LabelRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<String> = Vec::new();
        if self.instructions {
            names.push("instructions".into());
        }
        if self.errors {
            names.push(if self.format_notices {
                "errors(format_notices=true)".into()
            } else {
                "errors".into()
            });
        }
        if self.hindsight {
            let mut params = Vec::new();
            if self.min_gap != DEFAULT_MIN_GAP {
                params.push(format!("min_gap={}", self.min_gap));
            }
            if self.own_tokens {
                params.push("own_tokens=true".into());
            }
            names.push(if params.is_empty() {
                "hindsight".into()
            } else {
                format!("hindsight({})", params.join(", "))
            });
        }
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

impl FromStr for LabelRules {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut rules = LabelRules::default();
        for item in split_outside_parentheses(s) {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, params) = match item.split_once('(') {
                None => (item, None),
                Some((name, rest)) => {
                    let inner = rest.strip_suffix(')').ok_or_else(|| {
                        format!(
                            "label rule {item:?}: expected `name(key=value)` with a closing `)`"
                        )
                    })?;
                    (name.trim(), Some(inner))
                }
            };
            match name {
                "instructions" => rules.instructions = true,
                "errors" => rules.errors = true,
                "hindsight" => rules.hindsight = true,
                "none" => {}
                "all" => rules = LabelRules::ALL,
                _ => {
                    return Err(format!(
                        "unknown label rule {name:?}, expected a comma-separated list of {} (or all, none)",
                        Self::NAMES.join(", ")
                    ))
                }
            }
            for param in params.into_iter().flat_map(|p| p.split(',')) {
                let param = param.trim();
                if param.is_empty() {
                    continue;
                }
                let (key, value) = param
                    .split_once('=')
                    .map(|(k, v)| (k.trim(), v.trim()))
                    .ok_or_else(|| {
                        format!("label rule {item:?}: parameter {param:?} should read `key=value`")
                    })?;
                match (name, key) {
                    ("hindsight", "min_gap") => {
                        rules.min_gap = value.parse().map_err(|_| {
                            format!("label rule {item:?}: `min_gap` expects a whole number ≥ 0 of records, found {value:?}")
                        })?
                    }
                    ("hindsight", "own_tokens") => {
                        rules.own_tokens = value.parse().map_err(|_| {
                            format!("label rule {item:?}: `own_tokens` expects true or false, found {value:?}")
                        })?
                    }
                    ("errors", "format_notices") => {
                        rules.format_notices = value.parse().map_err(|_| {
                            format!("label rule {item:?}: `format_notices` expects true or false, found {value:?}")
                        })?
                    }
                    _ => {
                        return Err(format!(
                            "label rule {item:?}: unknown parameter `{key}` (hindsight takes min_gap and own_tokens, errors takes format_notices)"
                        ))
                    }
                }
            }
        }
        Ok(rules)
    }
}

/// The items of a rule list: commas inside `( )` belong to a rule's parameters.
fn split_outside_parentheses(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Experiment files may write `labels = "instructions,errors"` or a list of names.
#[derive(Deserialize)]
#[serde(untagged)]
enum RulesSpec {
    Text(String),
    List(Vec<String>),
}

impl TryFrom<RulesSpec> for LabelRules {
    type Error = String;
    fn try_from(spec: RulesSpec) -> Result<Self, Self::Error> {
        match spec {
            RulesSpec::Text(s) => s.parse(),
            RulesSpec::List(names) => names.join(",").parse(),
        }
    }
}

impl From<LabelRules> for String {
    fn from(r: LabelRules) -> String {
        r.to_string()
    }
}

fn is_instruction(kind: Kind) -> bool {
    matches!(kind, Kind::System | Kind::User)
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
///    command contained syntax errors` (SWE-agent).
///
/// The harness's notice about the agent's output format, `Please always provide EXACTLY ONE
/// action` (mini-swe-agent), is a failure only with `format_notices`: it says the agent broke
/// the protocol, not that anything in the task failed.
pub fn reports_failure(text: &str) -> bool {
    failure_sign(text, true).is_some()
}

/// The notice mini-swe-agent sends back when a response holds no single action.
pub const FORMAT_NOTICE: &str = "Please always provide EXACTLY ONE action";

/// The first sign of failure [`reports_failure`] finds, named.
pub fn failure_sign(text: &str, format_notices: bool) -> Option<&'static str> {
    if return_code(text).is_some_and(|code| code != 0) {
        return Some("a non-zero <returncode>");
    }
    if text.contains(FORMAT_NOTICE) {
        return format_notices.then_some("the harness's format notice");
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
        return Some(p);
    }
    text.lines().find_map(|raw| {
        let line = raw.trim_start();
        if line.starts_with("Traceback (most recent call last):") {
            Some("a Python traceback")
        } else if starts_with_exception(line) {
            Some("a line starting with an exception name")
        } else if ["error:", "error[", "fatal:", "fatal error:"]
            .iter()
            .any(|p| line.starts_with(p))
            || line.contains(": error:")
            || line.contains(": fatal error:")
        {
            Some("a compiler or tool error line")
        } else if line.starts_with("FAILED ")
            || line.starts_with("ERROR ")
            || (line.starts_with('=') && (line.contains(" failed") || line.contains(" error")))
        {
            Some("a test runner's failure verdict")
        } else {
            None
        }
    })
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

fn written_by_model(kind: Kind) -> bool {
    matches!(kind, Kind::Assistant | Kind::ToolCall)
}

/// Hindsight marks: record i is marked when a distinctive token first appears in it, i is
/// neither an instruction record (those are the `instructions` rule's) nor written by the model
/// (a token it introduced itself; `own_tokens` lets those mark), and an `assistant` or `tool_call` record more than `min_gap`
/// records later contains the same token. Each mark carries the first such token and record (in
/// record order; among one record's tokens, the smallest). A tool call whose text is JSON counts
/// its string values only: its keys (`file_path`, `old_string`) are the tool's schema, repeated
/// by every call, not information.
fn hindsight(history: &History, min_gap: usize, own_tokens: bool) -> Vec<Option<(String, usize)>> {
    let records = &history.records;
    let mut marks: Vec<Option<(String, usize)>> = vec![None; records.len()];
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut in_record: HashSet<String> = HashSet::new();
    let mut tokens: Vec<String> = Vec::new();
    for (j, r) in records.iter().enumerate() {
        record_tokens(r, &mut in_record);
        tokens.clear();
        tokens.extend(in_record.drain());
        // Sorted, so the token a mark names does not depend on hashing.
        tokens.sort_unstable();
        for t in tokens.drain(..) {
            match first.get(&t) {
                Some(&i) => {
                    let counts = written_by_model(r.kind)
                        && j > i + min_gap
                        && !is_instruction(records[i].kind)
                        && (own_tokens || !written_by_model(records[i].kind));
                    if counts && marks[i].is_none() {
                        marks[i] = Some((t, j));
                    }
                }
                None => {
                    first.insert(t, j);
                }
            }
        }
    }
    marks
}

/// The distinctive tokens of a record, once each: a tool call whose text is JSON counts its
/// string values only (its keys are the tool's schema, repeated by every call). The token rule
/// of `hindsight` and of [`crate::facts`].
pub fn record_tokens(r: &Record, out: &mut HashSet<String>) {
    out.clear();
    for_each_record_token(r, |t| {
        if !out.contains(t) {
            out.insert(t.to_string());
        }
    });
}

/// Calls `f` with each distinctive token of a record, as often as it occurs (the rule of
/// [`record_tokens`], without collecting).
pub fn for_each_record_token(r: &Record, mut f: impl FnMut(&str)) {
    if r.kind == Kind::ToolCall && r.text.trim_start().starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.text) {
            let mut strings = Vec::new();
            string_values(&v, &mut strings);
            for s in strings {
                distinctive_tokens(s).for_each(&mut f);
            }
            return;
        }
    }
    distinctive_tokens(&r.text).for_each(f);
}

fn string_values<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    use serde_json::Value;
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| string_values(i, out)),
        Value::Object(map) => map.values().for_each(|i| string_values(i, out)),
        _ => {}
    }
}

/// File extensions that make a word a file name.
const EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "cmake", "cpp", "cs", "css", "csv", "cu", "go", "h", "hpp", "html", "ini",
    "ipynb", "java", "js", "json", "jsx", "kt", "lock", "md", "mk", "php", "py", "pyi", "pyx",
    "rb", "rs", "rst", "sh", "sql", "swift", "toml", "ts", "tsx", "txt", "xml", "yaml", "yml",
];

/// Minimum length of an identifier token.
pub const MIN_IDENTIFIER: usize = 6;

/// The distinctive tokens of a text, each as often as it occurs. A word is a maximal run of
/// ASCII letters, digits and `_ . / -`, trimmed of leading and trailing `. / -`. A word gives:
///
/// - itself, when it is a **path**: it contains `/` and either has at least three segments or
///   ends in a file name (`django/contrib/auth`, `src/lib.rs`, from `/testbed/src/lib.rs` the
///   trimmed `testbed/src/lib.rs`);
/// - its last segment, when that is a **file name**: `stem.ext` with a stem holding a letter
///   and `ext` one of [`EXTENSIONS`] (`validators.py`, `STATUS.md`);
/// - otherwise each of its parts split at `.`, `/` and `-` that is
///   - an **identifier** of at least [`MIN_IDENTIFIER`] characters (letters, digits, `_`, not
///     starting with a digit) with an inner `_` (between two letters or digits) or a camelCase
///     hump (a lowercase letter followed by an uppercase one): `vsla_tensor_t`,
///     `UsernameValidator`, not `__init__` or `setup`;
///   - an **error code**: 1–4 capital letters then 3–5 digits (`E0308`, `TS2345`, `C0103`);
///   - a **hex id**: 7–40 lowercase hex digits with at least one digit and one letter (git
///     commit hashes).
pub fn distinctive_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
        .map(|w| w.trim_matches(|c| matches!(c, '.' | '/' | '-')))
        // A word of lowercase letters alone is no token of any kind (each needs a `/`, a `.`,
        // an `_`, a digit or a capital), and most words are such: skip them at once.
        .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_lowercase()))
        .flat_map(word_tokens)
}

/// A word's tokens, in order: itself when it is a path, then its file name or its parts. An
/// iterator, not a list: the facts of every history are found word by word, and an allocation
/// per word was most of their cost.
fn word_tokens(word: &str) -> impl Iterator<Item = &str> {
    let last = word.rsplit('/').next().unwrap_or(word);
    let file = is_file_name(last);
    let path = word.contains('/') && {
        let segments = word.split('/').filter(|s| !s.is_empty()).count();
        segments >= 3 || (segments >= 2 && file)
    };
    let parts = (!file)
        .then(|| {
            word.split(['.', '/', '-'])
                .filter(|p| is_identifier(p) || is_error_code(p) || is_hex_id(p))
        })
        .into_iter()
        .flatten();
    path.then_some(word)
        .into_iter()
        .chain(file.then_some(last))
        .chain(parts)
}

fn is_file_name(s: &str) -> bool {
    match s.rsplit_once('.') {
        Some((stem, ext)) => {
            stem.chars().any(|c| c.is_ascii_alphabetic()) && EXTENSIONS.contains(&ext)
        }
        None => false,
    }
}

fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < MIN_IDENTIFIER
        || b[0].is_ascii_digit()
        || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return false;
    }
    let inner_underscore = b
        .windows(3)
        .any(|w| w[1] == b'_' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric());
    let camel = b
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    inner_underscore || camel
}

fn is_error_code(s: &str) -> bool {
    let letters = s.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = s.len() - letters;
    (1..=4).contains(&letters)
        && (3..=5).contains(&digits)
        && s.bytes().skip(letters).all(|c| c.is_ascii_digit())
}

fn is_hex_id(s: &str) -> bool {
    (7..=40).contains(&s.len())
        && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        && s.bytes().any(|c| c.is_ascii_digit())
        && s.bytes().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<&str> {
        distinctive_tokens(text).collect()
    }

    #[test]
    fn tokens_are_paths_files_identifiers_codes_and_hashes() {
        assert_eq!(
            tokens("see /testbed/django/contrib/auth/validators.py."),
            vec!["testbed/django/contrib/auth/validators.py", "validators.py"]
        );
        assert_eq!(
            tokens("edit ./src/lib.rs now"),
            vec!["src/lib.rs", "lib.rs"]
        );
        assert_eq!(tokens("and/or src/backends"), Vec::<&str>::new());
        assert_eq!(tokens("src/backends/cpu/"), vec!["src/backends/cpu"]);
        assert_eq!(
            tokens("self._wcs.axis_correlation_matrix UsernameValidator __init__ setup"),
            vec!["axis_correlation_matrix", "UsernameValidator"]
        );
        assert_eq!(
            tokens("error[E0308]: TS2345 HTTP 404"),
            vec!["E0308", "TS2345"]
        );
        assert_eq!(
            tokens("commit 1a2b3c4d and deadbeef and 1234567"),
            vec!["1a2b3c4d"]
        );
        assert_eq!(tokens("np.array e.g. get_x"), Vec::<&str>::new());
        assert_eq!(tokens("日本語 vsla_new()"), vec!["vsla_new"]);
    }

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
        assert_eq!(failure_sign(notice, false), None);
        assert_eq!(
            failure_sign(notice, true),
            Some("the harness's format notice")
        );
        assert_eq!(
            failure_sign("<returncode>2</returncode>", false),
            Some("a non-zero <returncode>")
        );
    }

    #[test]
    fn rule_lists_parse_and_print_back() {
        let r: LabelRules = "hindsight, instructions".parse().unwrap();
        assert_eq!(
            r,
            LabelRules {
                instructions: true,
                hindsight: true,
                ..LabelRules::default()
            }
        );
        assert_eq!(r.to_string(), "instructions,hindsight");
        assert_eq!("".parse::<LabelRules>().unwrap().to_string(), "none");
        assert_eq!("all".parse::<LabelRules>().unwrap(), LabelRules::ALL);
        assert!("instructions,typos"
            .parse::<LabelRules>()
            .unwrap_err()
            .contains("unknown label rule \"typos\""));
        let from_list: LabelRules = serde_json::from_str(r#"["errors","hindsight"]"#).unwrap();
        assert_eq!(from_list.to_string(), "errors,hindsight");
        let tuned: LabelRules = "hindsight(min_gap=0), errors(format_notices=true)"
            .parse()
            .unwrap();
        assert_eq!((tuned.min_gap, tuned.format_notices), (0, true));
        assert_eq!(
            tuned.to_string(),
            "errors(format_notices=true),hindsight(min_gap=0)"
        );
        assert_eq!(tuned.to_string().parse::<LabelRules>().unwrap(), tuned);
        assert_eq!(
            "hindsight(min_gap=2)"
                .parse::<LabelRules>()
                .unwrap()
                .to_string(),
            "hindsight"
        );
        for (bad, says) in [
            ("hindsight(min_gap=-1)", "`min_gap` expects a whole number"),
            ("hindsight(gap=1)", "unknown parameter `gap`"),
            (
                "errors(format_notices=maybe)",
                "`format_notices` expects true or false",
            ),
            ("hindsight(min_gap=1", "closing"),
        ] {
            let e = bad.parse::<LabelRules>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let from_text: LabelRules = serde_json::from_str(r#""errors""#).unwrap();
        assert_eq!(serde_json::to_string(&from_text).unwrap(), r#""errors""#);
    }
}
