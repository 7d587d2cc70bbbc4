//! Label rules: real runs carry no `required` flags, so these rules derive them. Rules combine
//! by union (a record is required when any chosen rule marks it). The README states what each
//! marks and where it goes wrong.
//!
//! - `instructions`: every `system` and `user` record (the system prompt, the task, and in
//!   interactive sessions each later request the human typed).
//! - `errors`: every `tool_result` that reports a failure (see
//!   [`super::failure::reports_failure`]). Three signs are left out unless a parameter asks for
//!   them, for they are no failure the agent must remember: a harness's notice about the agent's
//!   own output format ("provide EXACTLY ONE action": `format_notices=true`); a non-zero exit
//!   with empty output, mostly `grep` finding nothing (`empty_exits=true`); and an
//!   error-looking line in the text of a file the agent viewed, a doctest's `Traceback` in `cat`
//!   or `sed -n` output ([`super::file_view`]: `file_views=true`).
//! - `hindsight(min_gap=2)`: every record in which a distinctive token first appeared that a
//!   record written by the model (`assistant` or `tool_call`) at least `min_gap + 1` records
//!   later uses again (see [`crate::history::tokens::distinctive_tokens`]). A use by the next
//!   `min_gap` records marks nothing: the agent's very next response always holds its own
//!   turn's results verbatim (every strategy keeps the newest records, and a response spans up
//!   to two records: its text and its tool call), so such a mark says nothing about what
//!   compaction must keep. A token the model introduced itself (first seen in an `assistant` or
//!   `tool_call` record: a script name it made up) marks nothing either: the agent needs no
//!   reminder of what it wrote.
//!
//! `errors` and `instructions` look only at the record itself and, for `errors`, the call that
//! produced it (a harness could apply them as the run goes); `hindsight` looks at the future.

use super::failure::{file_view_sign, first_sign, Sign};
use super::{file_view, Run};
use crate::history::tokens::record_tokens;
use crate::history::{History, Kind};
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
    /// `errors(empty_exits=true)`: a non-zero exit with empty output counts as a failure.
    pub empty_exits: bool,
    /// `errors(file_views=true)`: error-looking lines in a viewed file's text count too.
    pub file_views: bool,
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
            empty_exits: false,
            file_views: false,
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
    /// `errors`: the sign of failure found (see [`super::failure::failure_sign`]), and the
    /// parameter that let it count where it counts only when asked for (`empty_exits`,
    /// `file_views`, ...).
    Failure {
        sign: &'static str,
        parameter: Option<&'static str>,
    },
    /// `hindsight`: the token and the (0-based) later record that used it.
    Reused { token: String, by: usize },
}

/// A label rule as a list names it: what choosing it sets, and the parameters it takes.
struct LabelRule {
    name: &'static str,
    choose: fn(&mut LabelRules),
    params: &'static [LabelParam],
}

/// A rule's parameter: its name, and how a value sets it (`Err` says what it expects).
struct LabelParam {
    name: &'static str,
    set: fn(&mut LabelRules, &str) -> Result<(), &'static str>,
}

fn true_or_false(value: &str) -> Result<bool, &'static str> {
    value.parse().map_err(|_| "true or false")
}

/// The rules, one entry each, in the order messages and `ctxlab labels` list them: what the
/// parser reads and what its messages offer.
const RULES: [LabelRule; 3] = [
    LabelRule {
        name: "instructions",
        choose: |r| r.instructions = true,
        params: &[],
    },
    LabelRule {
        name: "errors",
        choose: |r| r.errors = true,
        params: &[
            LabelParam {
                name: "format_notices",
                set: |r, v| {
                    r.format_notices = true_or_false(v)?;
                    Ok(())
                },
            },
            LabelParam {
                name: "empty_exits",
                set: |r, v| {
                    r.empty_exits = true_or_false(v)?;
                    Ok(())
                },
            },
            LabelParam {
                name: "file_views",
                set: |r, v| {
                    r.file_views = true_or_false(v)?;
                    Ok(())
                },
            },
        ],
    },
    LabelRule {
        name: "hindsight",
        choose: |r| r.hindsight = true,
        params: &[
            LabelParam {
                name: "min_gap",
                set: |r, v| {
                    r.min_gap = v.parse().map_err(|_| "a whole number ≥ 0 of records")?;
                    Ok(())
                },
            },
            LabelParam {
                name: "own_tokens",
                set: |r, v| {
                    r.own_tokens = true_or_false(v)?;
                    Ok(())
                },
            },
        ],
    },
];

/// What the rules with parameters take, for the message naming an unknown one (`errors takes
/// format_notices, empty_exits and file_views, hindsight takes min_gap and own_tokens`).
fn parameters_taken() -> String {
    RULES
        .iter()
        .filter(|rule| !rule.params.is_empty())
        .map(|rule| {
            let names: Vec<&str> = rule.params.iter().map(|p| p.name).collect();
            format!("{} takes {}", rule.name, crate::quote::and_list(&names))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl LabelRules {
    /// The rules' names, in the order of [`RULES`].
    pub const NAMES: [&'static str; RULES.len()] = [RULES[0].name, RULES[1].name, RULES[2].name];

    pub const ALL: LabelRules = LabelRules {
        instructions: true,
        errors: true,
        format_notices: false,
        empty_exits: false,
        file_views: false,
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
            for (i, verdict) in self.error_verdicts(run).into_iter().enumerate() {
                if let Some(Verdict::Marked { sign, parameter }) = verdict {
                    reasons[i].push(Reason::Failure { sign, parameter });
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

    /// Per record, what the `errors` rule (with these parameters) makes of it: `None` for a
    /// record with no sign of failure or no tool result.
    pub fn error_verdicts(&self, run: &Run) -> Vec<Option<Verdict>> {
        let records = &run.history.records;
        (0..records.len())
            .map(|i| {
                if records[i].kind != Kind::ToolResult {
                    return None;
                }
                if run.failed.get(i) == Some(&true) {
                    return Some(Verdict::Marked {
                        sign: "the transcript marks the result as an error",
                        parameter: None,
                    });
                }
                let sign = first_sign(&records[i].text)?;
                let (asked, parameter) = match sign {
                    Sign::EmptyExit => (self.empty_exits, Some("empty_exits")),
                    Sign::FormatNotice => (self.format_notices, Some("format_notices")),
                    Sign::Line(_) if file_view::is_file_view(records, i) => {
                        (self.file_views, Some("file_views"))
                    }
                    _ => (true, None),
                };
                let name = match (sign, parameter) {
                    (Sign::Line(line), Some(_)) => file_view_sign(line),
                    _ => sign.name(),
                };
                Some(if asked {
                    Verdict::Marked {
                        sign: name,
                        parameter,
                    }
                } else {
                    Verdict::LeftOut {
                        sign: name,
                        parameter: parameter.expect("only a parameter leaves a sign out"),
                    }
                })
            })
            .collect()
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
        let [instructions, errors, hindsight] = LabelRules::NAMES;
        if self.instructions {
            names.push(instructions.into());
        }
        if self.errors {
            let params: Vec<&str> = [
                (self.format_notices, "format_notices=true"),
                (self.empty_exits, "empty_exits=true"),
                (self.file_views, "file_views=true"),
            ]
            .iter()
            .filter_map(|&(on, p)| on.then_some(p))
            .collect();
            names.push(if params.is_empty() {
                errors.into()
            } else {
                format!("{errors}({})", params.join(", "))
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
                hindsight.into()
            } else {
                format!("{hindsight}({})", params.join(", "))
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
            let rule = RULES.iter().find(|rule| rule.name == name);
            match (name, rule) {
                (_, Some(rule)) => (rule.choose)(&mut rules),
                ("none", None) => {}
                ("all", None) => rules = LabelRules::ALL,
                _ => {
                    return Err(format!(
                        "unknown label rule {name:?}, expected a comma-separated list of {} (or all, none)",
                        Self::NAMES.join(", ")
                    ))
                }
            }
            let mut seen: Vec<&str> = Vec::new();
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
                if seen.contains(&key) {
                    return Err(crate::error::given_twice("label rule", item, key));
                }
                seen.push(key);
                let param = rule
                    .into_iter()
                    .flat_map(|rule| rule.params)
                    .find(|p| p.name == key)
                    .ok_or_else(|| {
                        format!(
                            "label rule {item:?}: unknown parameter `{key}` ({})",
                            parameters_taken()
                        )
                    })?;
                (param.set)(&mut rules, value).map_err(|expects| {
                    format!("label rule {item:?}: `{key}` expects {expects}, found {value:?}")
                })?;
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

/// What the `errors` rule makes of a tool result that shows a sign of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Marked: the sign, and the parameter that asked for it where one had to.
    Marked {
        sign: &'static str,
        parameter: Option<&'static str>,
    },
    /// A sign that counts only when `parameter` is true, and it is not.
    LeftOut {
        sign: &'static str,
        parameter: &'static str,
    },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    /// A mini-swe-agent-like run: each response holds its command in a fenced block and the
    /// harness answers with `<returncode>` and `<output>`.
    fn run_of(turns: &[(&str, &str)]) -> Run {
        let mut records = vec![Record::new(1, "Fix the bug.").kind(Kind::User)];
        for (command, result) in turns {
            let id = records.len() as u64 + 1;
            records.push(
                Record::new(id, format!("THOUGHT: go.\n\n```bash\n{command}\n```"))
                    .kind(Kind::Assistant),
            );
            records.push(Record::new(id + 1, *result).kind(Kind::ToolResult));
        }
        let n = records.len();
        Run {
            history: History::new("run", records),
            failed: vec![false; n],
            calls: Vec::new(),
            continued: false,
        }
    }

    /// The (0-based) records `rules` marks, with the sign and the parameter that decided.
    fn error_marks(run: &Run, rules: &str) -> Vec<(usize, &'static str, Option<&'static str>)> {
        let rules: LabelRules = rules.parse().unwrap();
        rules
            .reasons(run)
            .iter()
            .enumerate()
            .flat_map(|(i, why)| {
                why.iter().filter_map(move |r| match r {
                    Reason::Failure { sign, parameter } => Some((i, *sign, *parameter)),
                    _ => None,
                })
            })
            .collect()
    }

    #[test]
    fn empty_exits_and_file_views_count_only_when_asked() {
        let doctest = "<returncode>0</returncode>\n<output>\n    >>> f(-1)\nTraceback (most recent call last):\nValueError: negative\n</output>";
        let run = run_of(&[
            // 2: grep finding nothing.
            ("grep -rn 'def parse_hdr' src/", "<returncode>1</returncode>\n<output>\n</output>"),
            // 4: a doctest's traceback in a file the agent printed.
            ("cat docs/usage.rst", doctest),
            // 6: the same lines printed by a program the agent ran: a failure.
            ("python reproduce.py", doctest),
            // 8: a failing command that printed something.
            ("grep -rn x missing/", "<returncode>2</returncode>\n<output>\ngrep: missing/: No such file or directory\n</output>"),
            // 10: a viewed file that does not exist: the exit status decides.
            ("sed -n 1,20p nowhere.py", "<returncode>2</returncode>\n<output>\nsed: can't read nowhere.py: No such file or directory\n</output>"),
        ]);
        let marked =
            |rules: &str| -> Vec<usize> { error_marks(&run, rules).iter().map(|m| m.0).collect() };
        assert_eq!(marked("errors"), [6, 8, 10]);
        assert_eq!(marked("errors(empty_exits=true)"), [2, 6, 8, 10]);
        assert_eq!(marked("errors(file_views=true)"), [4, 6, 8, 10]);
        assert_eq!(
            error_marks(&run, "errors(empty_exits=true, file_views=true)"),
            [
                (
                    2,
                    "a non-zero <returncode> with empty output",
                    Some("empty_exits")
                ),
                (4, "a Python traceback in a viewed file", Some("file_views")),
                (6, "a Python traceback", None),
                (8, "a non-zero <returncode>", None),
                (10, "a non-zero <returncode>", None),
            ]
        );
        // What the rule leaves out, and the parameter that would mark it.
        let rules: LabelRules = "errors".parse().unwrap();
        let left: Vec<(usize, Verdict)> = rules
            .error_verdicts(&run)
            .into_iter()
            .enumerate()
            .filter_map(|(i, v)| match v {
                Some(v @ Verdict::LeftOut { .. }) => Some((i, v)),
                _ => None,
            })
            .collect();
        assert_eq!(
            left,
            [
                (
                    2,
                    Verdict::LeftOut {
                        sign: "a non-zero <returncode> with empty output",
                        parameter: "empty_exits"
                    }
                ),
                (
                    4,
                    Verdict::LeftOut {
                        sign: "a Python traceback in a viewed file",
                        parameter: "file_views"
                    }
                ),
            ]
        );
        // The transcript's own error flag decides whatever the text.
        let mut flagged = run_of(&[("grep -q x a.py", "")]);
        flagged.failed[2] = true;
        assert_eq!(
            error_marks(&flagged, "errors"),
            [(2, "the transcript marks the result as an error", None)]
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
            ("errors(empty_exits=yes)", "`empty_exits` expects true or false, found \"yes\""),
            ("errors(file_views=1)", "`file_views` expects true or false, found \"1\""),
            (
                "errors(file_view=true)",
                "unknown parameter `file_view` (errors takes format_notices, empty_exits and file_views, hindsight takes min_gap and own_tokens)",
            ),
            ("errors(empty_exits)", "should read `key=value`"),
            ("hindsight(empty_exits=true)", "unknown parameter `empty_exits`"),
        ] {
            let e = bad.parse::<LabelRules>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let both: LabelRules = "errors(file_views=true, empty_exits=true, format_notices=false)"
            .parse()
            .unwrap();
        assert_eq!(
            (both.empty_exits, both.file_views, both.format_notices),
            (true, true, false)
        );
        assert_eq!(
            both.to_string(),
            "errors(empty_exits=true, file_views=true)"
        );
        assert_eq!(both.to_string().parse::<LabelRules>().unwrap(), both);
        let all: LabelRules = "errors(format_notices=true, empty_exits=true, file_views=true)"
            .parse()
            .unwrap();
        assert_eq!(all.to_string().parse::<LabelRules>().unwrap(), all);
        let from_text: LabelRules = serde_json::from_str(r#""errors""#).unwrap();
        assert_eq!(serde_json::to_string(&from_text).unwrap(), r#""errors""#);
    }

    #[test]
    fn every_rule_and_parameter_is_read_and_offered() {
        let unknown = "instructions(x=1)".parse::<LabelRules>().unwrap_err();
        let unknown_rule = "typos".parse::<LabelRules>().unwrap_err();
        for rule in &RULES {
            // Each rule is read by its name, prints back as it and is offered by name.
            let chosen: LabelRules = rule.name.parse().unwrap();
            assert_eq!(chosen.to_string(), rule.name);
            assert!(unknown_rule.contains(rule.name), "{unknown_rule}");
            for param in rule.params {
                // Each parameter is read (a word no parameter takes is refused by what the
                // parameter expects, not as unknown) and offered with its rule.
                let bad = format!("{}({}=?)", rule.name, param.name);
                let e = bad.parse::<LabelRules>().unwrap_err();
                assert!(e.contains(&format!("`{}` expects", param.name)), "{e}");
                assert!(unknown.contains(param.name), "{unknown}");
            }
        }
        assert!(unknown.contains("errors takes") && unknown.contains("hindsight takes"));
        assert!(!unknown.contains("instructions takes"), "{unknown}");
    }
}
