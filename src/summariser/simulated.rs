//! `simulated`: no model is called. For each record a summary replaces, the record's
//! information survives with a probability that depends on its kind (real summaries keep the
//! user's requests far more than tool output), or, for a kind without a recall of its own, on
//! whether it is flagged; the summary's text holds the facts of every record that survives. What survives is paraphrased: it counts for
//! `retention_any` and `fact_retention`, never for `exact`. Summarising a summary applies recall
//! again to what it carries, so repeated compaction compounds loss.

use crate::error::ParseError;
use crate::history::Kind;
use crate::spec::Params;
use crate::context::Context;
use crate::view::View;
use crate::rng;

/// The recall of each replaced record: by its kind where the summariser has a recall for that
/// kind, otherwise by its flag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simulated {
    pub recall_flagged: f64,
    pub recall_other: f64,
    /// Per kind, in [`Kind::ALL`] order: the recall of a record of that kind, whatever its flag
    /// (`None`: by its flag).
    pub by_kind: [Option<f64>; Kind::ALL.len()],
}

/// The defaults, measured: `ctxlab calibrate --summaries` on the 26 real Claude Code
/// compaction summaries whose replaced span the shared transcripts hold whole (25 of
/// `claude-code-entire/`, 1 of `claude-code/`; 5 more are the first summary of a session that
/// goes on from a conversation of another file, and are left out). Pooled fact shares: user
/// 176 / 462 (21 summaries), assistant 55 / 189 (23), tool_call 226 / 1 167 (26), tool_result
/// 781 / 21 388 (26), summary 15 / 50 (5). The other kinds go by flag: flagged
/// (`instructions,errors`) 194 / 810, the rest 1 059 / 22 614 (`note`: 0 of 168 facts of 13
/// records, too few to stand for the notes of other histories, so by flag too). The summaries
/// keep the user's requests far more than anything else, so recall goes by kind. Earlier
/// defaults rested on one summary (0.01 / 0.10 by flag) or on nothing (0.9 / 0.2).
pub const MEASURED: Simulated = Simulated {
    recall_flagged: 0.24,
    recall_other: 0.05,
    by_kind: [
        None,       // system
        Some(0.38), // user
        Some(0.29), // assistant
        Some(0.19), // tool_call
        Some(0.04), // tool_result
        Some(0.30), // summary
        None,       // note
    ],
};

impl Default for Simulated {
    fn default() -> Self {
        MEASURED
    }
}

/// The position of `kind` in [`Kind::ALL`].
pub fn kind_index(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is in ALL")
}

impl Simulated {
    /// A summariser whose recall goes by flag alone, for every kind.
    pub fn by_flag(recall_flagged: f64, recall_other: f64) -> Simulated {
        Simulated {
            recall_flagged,
            recall_other,
            by_kind: [None; Kind::ALL.len()],
        }
    }

    /// The recall of a record of `kind` with this flag.
    pub fn recall(&self, flagged: bool, kind: Kind) -> f64 {
        match self.by_kind[kind_index(kind)] {
            Some(r) => r,
            None if flagged => self.recall_flagged,
            None => self.recall_other,
        }
    }

    /// Whether the information of record `index` survives a summary drawn from `stream`.
    /// Counter-based: the answer depends on (stream, index) only.
    pub fn keeps(&self, flagged: bool, kind: Kind, stream: u64, index: u64) -> bool {
        rng::unit_at(stream, index) < self.recall(flagged, kind)
    }
}


impl super::Summarise for Simulated {
    const PARAMS: &'static [&'static str] = &[
            "recall_flagged",
            "recall_other",
            "recall_system",
            "recall_user",
            "recall_assistant",
            "recall_tool_call",
            "recall_tool_result",
            "recall_summary",
            "recall_note",
        ];
    const WRITES_TEXT: bool = false;

    fn read_params(p: &mut Params) -> Result<Self, ParseError> {
        simulated_from_params(p)
    }

    fn canonical_params(&self, params: &mut Vec<String>) {
        simulated_params(self, params)
    }

    fn keeps(&self, flagged: bool, kind: Kind, stream: u64, index: u64) -> bool {
        Simulated::keeps(self, flagged, kind, stream, index)
    }

    fn summarise(
        &self,
        view: &View,
        (first, end): (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        budget: u64,
        stream: u64,
        out: &mut Context,
    ) -> u64 {
        for i in first..end {
            out.summary_kept[i] =
                carried(i) && self.keeps(view.flags[i], view.kinds[i], stream, i as u64);
        }
        budget
    }
}

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
/// recall goes by the measured kinds ([`MEASURED`]), each `recall_<kind>` given
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
            s.by_kind[kind_index(kind)] = Some(r);
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
        let i = kind_index(kind);
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


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_one_keeps_all_and_zero_keeps_none() {
        let all = Simulated::by_flag(1.0, 1.0);
        let none = Simulated::by_flag(0.0, 0.0);
        assert!((0..1000).all(|i| all.keeps(i % 2 == 0, Kind::User, 3, i)));
        assert!((0..1000).all(|i| !none.keeps(i % 2 == 0, Kind::User, 3, i)));
    }

    #[test]
    fn recall_is_the_survival_rate() {
        let s = Simulated::by_flag(0.5, 0.1);
        let n = 20_000u64;
        let kept = (0..n)
            .filter(|&i| s.keeps(false, Kind::ToolResult, 11, i))
            .count() as f64
            / n as f64;
        assert!((kept - 0.1).abs() < 0.01, "{kept}");
        // By kind, whatever the flag: the defaults keep a user request at 0.38.
        let d = Simulated::default();
        assert_eq!(d.recall(false, Kind::User), 0.38);
        assert_eq!(d.recall(true, Kind::ToolResult), 0.04);
        // A kind without a recall of its own goes by flag.
        assert_eq!(d.recall(true, Kind::System), 0.24);
        assert_eq!(d.recall(false, Kind::Note), 0.05);
    }
}
