//! Summarisers: what writes a summary's text. Every summarising strategy and preset takes
//! `summariser=NAME` and that summariser's own parameters (`summary(summariser=extractive)`,
//! `codex_compact(summariser=simulated, recall_flagged=0.4)`); retention in any form is then
//! measured on the summary by facts ([`crate::facts`]), the same way for all of them.
//!
//! - [`Simulated`] (the default): no text is read; each replaced record survives with a recall
//!   drawn from the cell's stream, and the summary holds the facts of the records that survive.
//! - [`Extractive`]: deterministic and offline; picks whole lines of what it replaces until the
//!   summary's size is spent, and the summary holds the facts its lines hold.
//! - [`Llm`]: a model wrote it (answers cached by request hash; see its module).
//! - `Recorded`: the summary a transcript recorded, where its harness compacted
//!   (`recorded_compaction`).
//!
//! A summary written as text carries a replaced record (for `retention_any`) when it holds one
//! of the facts the record introduced: a text keeps no record as such, only what it says.

pub mod extractive;
pub mod llm;
pub mod simulated;

pub use extractive::Extractive;
pub use llm::{Llm, Missing};
pub use simulated::Simulated;

use crate::context::Context;
use crate::error::ParseError;
use crate::history::Kind;
use crate::spec::Params;
use crate::view::View;

/// The summarisers by name, for messages.
pub const NAMES: [&str; 3] = ["simulated", "extractive", "llm"];

#[derive(Debug, Clone, PartialEq)]
pub enum Summariser {
    Simulated(Simulated),
    Extractive(Extractive),
    Llm(Llm),
    /// The summary the transcript itself recorded where its harness compacted (the summary
    /// record ending the range): `recorded_compaction`'s, never named by `summariser=`.
    Recorded,
}

impl Default for Summariser {
    fn default() -> Self {
        Summariser::Simulated(Simulated::default())
    }
}

/// Whether `key` is a parameter some summariser reads, `summariser` included: what a strategy
/// that takes a summariser and nothing else accepts.
pub fn takes(key: &str) -> bool {
    key == "summariser" || OWN.iter().any(|(_, keys)| keys.contains(&key))
}

/// Each summariser's own parameters: a parameter of another one is refused by name.
const OWN: [(&str, &[&str]); 3] = [
    (
        "simulated",
        &[
            "recall_flagged",
            "recall_other",
            "recall_system",
            "recall_user",
            "recall_assistant",
            "recall_tool_call",
            "recall_tool_result",
            "recall_summary",
            "recall_note",
        ],
    ),
    ("extractive", &["flagged_first"]),
    ("llm", &["cache", "model", "prompt", "url", "key_env"]),
];

/// `recall_<kind>`, the parameter of a kind's recall.
fn kind_key(kind: Kind) -> &'static str {
    match kind {
        Kind::System => "recall_system",
        Kind::User => "recall_user",
        Kind::Assistant => "recall_assistant",
        Kind::ToolCall => "recall_tool_call",
        Kind::ToolResult => "recall_tool_result",
        Kind::Summary => "recall_summary",
        Kind::Note => "recall_note",
    }
}

/// The simulated summariser's parameters. With neither `recall_flagged` nor `recall_other`,
/// recall goes by the measured kinds ([`simulated::MEASURED`]), each `recall_<kind>` given
/// replacing its kind's; with either, recall goes by flag (the other at its default), every
/// kind but those given a `recall_<kind>`: a spec written for flags keeps meaning flags.
fn simulated_from_params(p: &mut Params) -> Result<Simulated, ParseError> {
    let d = Simulated::default();
    let flagged = p.fraction("recall_flagged", 0.0, 1.0)?;
    let other = p.fraction("recall_other", 0.0, 1.0)?;
    let mut s = if flagged.is_some() || other.is_some() {
        Simulated::by_flag(
            flagged.unwrap_or(d.recall_flagged),
            other.unwrap_or(d.recall_other),
        )
    } else {
        d
    };
    for kind in Kind::ALL {
        if let Some(r) = p.fraction(kind_key(kind), 0.0, 1.0)? {
            s.by_kind[simulated::kind_index(kind)] = Some(r);
        }
    }
    Ok(s)
}

/// The canonical parameters of a simulated summariser: none at the defaults; a flag-based one
/// names both flag recalls (so it reads back flag-based) and the kinds it sets; a kind-based
/// one the kinds that differ from the measured ones.
fn simulated_params(s: &Simulated, params: &mut Vec<String>) {
    let d = Simulated::default();
    let by_flag = s
        .by_kind
        .iter()
        .zip(&d.by_kind)
        .any(|(x, y)| y.is_some() && x.is_none());
    if by_flag || s.recall_flagged != d.recall_flagged || s.recall_other != d.recall_other {
        params.push(format!("recall_flagged={}", s.recall_flagged));
        params.push(format!("recall_other={}", s.recall_other));
    }
    for kind in Kind::ALL {
        let i = simulated::kind_index(kind);
        let given = if by_flag {
            s.by_kind[i]
        } else {
            s.by_kind[i].filter(|&r| Some(r) != d.by_kind[i])
        };
        if let Some(r) = given {
            params.push(format!("{}={r}", kind_key(kind)));
        }
    }
}

impl Summariser {
    /// Reads `summariser` (default `simulated`) and that summariser's parameters.
    pub fn from_params(p: &mut Params) -> Result<Self, ParseError> {
        let name = p
            .choice("summariser", &NAMES)?
            .unwrap_or_else(|| "simulated".into());
        for (other, keys) in OWN.iter().filter(|(n, _)| *n != name) {
            for &key in *keys {
                if p.value(key).is_some() {
                    return Err(format!(
                        "strategy `{}`: `{key}` is a parameter of the `{other}` summariser, not of `{name}` (set `summariser={other}` to use it)",
                        p.strategy()
                    )
                    .into());
                }
            }
        }
        Ok(match name.as_str() {
            "llm" => Summariser::Llm(Llm::from_params(p)?),
            "extractive" => Summariser::Extractive(Extractive {
                flagged_first: p.bool("flagged_first")?.unwrap_or(true),
            }),
            _ => Summariser::Simulated(simulated_from_params(p)?),
        })
    }

    /// The parameters that differ from the defaults, in canonical order.
    pub fn push_params(&self, params: &mut Vec<String>) {
        match self {
            Summariser::Llm(l) => l.push_params(params),
            Summariser::Recorded => {}
            Summariser::Simulated(s) => simulated_params(s, params),
            Summariser::Extractive(e) => {
                params.push("summariser=extractive".into());
                if !e.flagged_first {
                    params.push("flagged_first=false".into());
                }
            }
        }
    }

    /// Whether the summary is text whose facts are found by reading it (every summariser but
    /// the simulated one).
    pub fn writes_text(&self) -> bool {
        !matches!(self, Summariser::Simulated(_))
    }

    /// For the simulated summariser: whether record `index`'s information survives a summary
    /// drawn from `stream` (a summary summarised again puts what it carries through this once
    /// more). Text summarisers decide by reading the new text instead.
    pub fn keeps(&self, flagged: bool, kind: Kind, stream: u64, index: u64) -> bool {
        match self {
            Summariser::Simulated(s) => s.keeps(flagged, kind, stream, index),
            Summariser::Extractive(_) | Summariser::Llm(_) | Summariser::Recorded => true,
        }
    }

    /// Writes one summary of view records `first..end` (those `carried` selects; the others
    /// are kept verbatim elsewhere), sized at most `budget`, into `out`: the simulated
    /// summariser marks the records that survive in `out.summary_kept`, a text summariser
    /// writes `out.summary_text` and its facts. Returns the summary's cost.
    pub fn write(
        &self,
        view: &View,
        (first, end): (usize, usize),
        carried: impl Fn(usize) -> bool,
        budget: u64,
        stream: u64,
        out: &mut Context,
    ) -> u64 {
        let text = &mut out.summary_text;
        let cost = match self {
            Summariser::Simulated(s) => {
                for i in first..end {
                    out.summary_kept[i] =
                        carried(i) && s.keeps(view.flags[i], view.kinds[i], stream, i as u64);
                }
                return budget;
            }
            Summariser::Extractive(e) => e.write(view, (first, end), &carried, budget, text),
            Summariser::Llm(l) => l.write(view, (first, end), &carried, text),
            Summariser::Recorded => {
                text.clear();
                text.push_str(view.texts.get(end - 1));
                view.costs[end - 1]
            }
        };
        // A text summariser: what the text holds is found in it.
        out.summary_from_text = true;
        let facts = &mut out.summary_facts;
        view.facts.find_in(&out.summary_text, |f| facts.push(f));
        facts.sort_unstable();
        facts.dedup();
        cost
    }
}
