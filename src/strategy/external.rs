//! `external`: a strategy that lives outside ctxlab, in any language. A program named by
//! `cmd` reads requests — what a strategy may see — on its standard input and writes the
//! context it builds on its standard output, one JSON object a line (the protocol is in
//! `docs/external-strategies.md`). ctxlab checks every answer as it would check a built-in
//! strategy's context and scores it with the same code.
//!
//! - **Parameters.** `cmd` (required) is the command, words separated by spaces, run without a
//!   shell from the current folder; `name` a short name of the researcher's; `texts=true`
//!   sends each record's text and the task (off by default: most rules work on sizes, and
//!   texts are most of a request's bytes); `time_limit` the seconds an answer may take
//!   (default [`DEFAULT_TIME_LIMIT`]). Every other parameter is the program's own and is sent
//!   to it in each request as written.
//! - **`keep_recent` and the head.** The program sees the whole context and `keep_recent`
//!   (the spec's, the sweep's axis or 0): pinning a tail, or a head, is its rule's business,
//!   as it is for `mask` or `summary`. `keep_first` is refused for the same reason.
//! - **Processes.** Each worker thread starts the program once, on its first request, and
//!   keeps it for the run ([`process`]); requests are numbered per process.
//! - **Failures.** A program that cannot start, crashes, hangs past `time_limit`, writes a line
//!   that is not an answer, or answers with a context ctxlab refuses stops the run: the call
//!   returns [`Outcome::Infeasible`] and leaves a [`Failure`] for the runner, which names the
//!   cell ([`failure::watch`]); the later calls on that thread return at once until then.
//! - **Summaries.** A summary the program writes as text is scored by the facts its text holds,
//!   as the `extractive` summariser's is; one given by its cost alone carries nothing. In a
//!   session it is billed as the generic `summary` rule's, unless the answer declares its own
//!   summary call.

mod answer;
mod command;
pub mod failure;
mod process;
mod request;

pub use command::{program_files, resume_refusal, ProgramFile};
pub use failure::{watch, Failure};

use super::rule::{RuleSpec, Tail};
use super::spec::{Params, SpecValue};
use super::{Context, Outcome, Rule, Strategy, SummaryCall, View};
use crate::error::ParseError;
use crate::summariser::Summariser;
use std::time::Duration;

/// Seconds an answer may take when the spec does not say.
pub const DEFAULT_TIME_LIMIT: f64 = 30.0;
/// The longest `time_limit` a spec may set (an hour).
const MAX_TIME_LIMIT: f64 = 3600.0;

/// `external`: the context a program outside ctxlab builds.
#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub command: command::CommandLine,
    /// The researcher's short name for it, shown in its label.
    pub name: Option<String>,
    /// Whether requests carry the texts (records, summaries, the task).
    pub texts: bool,
    pub time_limit: f64,
    /// The program's own parameters, sorted by key: sent in every request.
    pub params: Vec<(String, SpecValue)>,
    /// Its summaries are text read for their facts: the summariser a session consults (the
    /// one that writes no text of its own, reading what it is given).
    summariser: Summariser,
}

/// Whether `strategy` is an external program's.
pub fn is_external(strategy: &Strategy) -> bool {
    matches!(strategy.rule, Rule::External(_))
}

impl External {
    fn time_limit(&self) -> Duration {
        Duration::from_secs_f64(self.time_limit)
    }
}

impl RuleSpec for External {
    const NAME: &'static str = "external";
    // It takes `keep_recent` (sent to the program) and parameters of its own, but no
    // `keep_first`: the program sees the whole context.
    const TAIL: Tail = Tail::None(
        "an external program sees the whole context and keeps a head itself if its rule does",
    );
    const STAND_IN: &'static str = "placeholder";
    fn takes_own(key: &str) -> bool {
        key != "keep_first"
    }

    fn parse(p: &mut Params) -> Result<Self, ParseError> {
        let Some(cmd) = p.text("cmd")? else {
            return Err(
                "strategy `external`: give the program's command, e.g. `external(cmd=\"python3 my_rule.py\")`"
                    .into(),
            );
        };
        let command = command::CommandLine::parse(&cmd)?;
        let name = p.text("name")?;
        if let Some(n) = &name {
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
            if n.is_empty() || !n.chars().all(plain) {
                return Err(format!(
                    "strategy `external`: parameter `name` expects letters, digits, `_`, `-` or `.`, found `{n}`"
                )
                .into());
            }
        }
        let texts = p.bool("texts")?.unwrap_or(false);
        let time_limit = match p.value("time_limit") {
            None => DEFAULT_TIME_LIMIT,
            Some(v) => match v {
                SpecValue::Int(i) if i > 0 && (i as f64) <= MAX_TIME_LIMIT => i as f64,
                SpecValue::Float(x) if x > 0.0 && x <= MAX_TIME_LIMIT => x,
                other => {
                    return Err(p.bad(
                        "time_limit",
                        "seconds, a number above 0 and at most 3600",
                        &other,
                    ))
                }
            },
        };
        let mut params = p.rest();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(External {
            command,
            name,
            texts,
            time_limit,
            params,
            summariser: Summariser::Recorded,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        params.push(format!("cmd={}", quoted(&self.command.text)));
        if let Some(n) = &self.name {
            params.push(format!("name={n}"));
        }
        if self.texts {
            params.push("texts=true".into());
        }
        if self.time_limit != DEFAULT_TIME_LIMIT {
            params.push(format!("time_limit={}", self.time_limit));
        }
        for (key, value) in &self.params {
            params.push(format!("{key}={}", spec_value(value)));
        }
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let Some(call) = failure::begin_call() else {
            // A failure earlier in this evaluation: the runner stops with it.
            return Outcome::Infeasible;
        };
        let asked = request::Asked {
            external: self,
            view: &view,
            capacity,
            keep_recent,
            seed: stream,
        };
        let exchanged = process::exchange(&self.command, self.time_limit(), |number, buf| {
            asked.write(number, buf)
        });
        let result = exchanged.and_then(|(number, first, line)| {
            answer::read(&line, first, number, &view, capacity, out).map_err(|what| {
                process::Trouble {
                    request: number,
                    what,
                    stderr: process::retire(&self.command),
                }
            })
        });
        match result {
            Ok((outcome, summary_call)) => {
                failure::set_summary_call(summary_call.unwrap_or_default());
                outcome
            }
            Err(trouble) => {
                failure::fail(Failure {
                    call,
                    command: self.command.text.clone(),
                    capacity,
                    keep_recent,
                    request: trouble.request,
                    what: trouble.what,
                    stderr: trouble.stderr,
                });
                Outcome::Infeasible
            }
        }
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summariser)
    }

    /// The summary call the last answer on this thread declared (read by a session right
    /// after the compaction that asked for it), else the generic `summary` rule's.
    fn summary_call(&self) -> SummaryCall {
        failure::summary_call()
    }
}

/// A text value in quotes, as a spec writes one that holds spaces.
fn quoted(text: &str) -> String {
    format!("\"{text}\"")
}

/// A parameter value as a spec writes it, so the label parses back to the same value.
fn spec_value(v: &SpecValue) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            && s.parse::<f64>().is_err()
            && s != "true"
            && s != "false"
    };
    match v {
        SpecValue::Str(s) if plain(s) => s.clone(),
        SpecValue::Str(s) => quoted(s),
        // `{:?}` keeps the point of a whole float (`1.0`), so it reads back as a float.
        SpecValue::Float(x) => format!("{x:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_reads_back_as_the_same_strategy() {
        let s = Strategy::parse(
            "external(zeta=1.0, name=ids, cmd=\"python3 rule.py\", alpha=0.5, mode=\"a b\", keep_recent=2, texts=true, tags=[x,y])",
        )
        .unwrap();
        let label = s.label();
        assert_eq!(
            label,
            "external(keep_recent=2, cmd=\"python3 rule.py\", name=ids, texts=true, alpha=0.5, mode=\"a b\", tags=[x,y], zeta=1.0)"
        );
        assert_eq!(Strategy::parse(&label).unwrap(), s);
        assert_eq!(
            Strategy::parse("external(cmd=\"./rule\")").unwrap().label(),
            "external(cmd=\"./rule\")"
        );
    }

    #[test]
    fn a_spec_without_a_command_or_with_keep_first_is_refused() {
        let err = |s: &str| Strategy::parse(s).unwrap_err().to_string();
        assert!(err("external").contains("give the program's command"));
        assert!(err("external(cmd=\"\")").contains("empty"));
        assert!(err("external(cmd=x, keep_first=1)").contains("unknown parameter `keep_first`"));
        assert!(err("external(cmd=x, time_limit=0)").contains("`time_limit` expects seconds"));
        assert!(err("external(cmd=x, name=\"a b\")").contains("`name` expects letters"));
    }
}
