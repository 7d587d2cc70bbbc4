//! `recorded_compaction`: the transcript's own compactions, where they happened, with the
//! summaries its harness wrote (Claude Code's `isCompactSummary` lines, which the importer makes
//! records of kind `summary`). When the context holds such a record, everything before it but
//! the leading `system` records is replaced by one summary whose text is that record's: the
//! context restarts there, as it did in the run. The summary is scored like every summary, by
//! the facts found in its text (the `recorded` summariser). A history without a recorded
//! summary is never compacted: the replay is then `raw`.
//!
//! `recorded_compaction(summariser=simulated|extractive|llm, ...)` compacts at the same points,
//! at the same size (the recorded summary's cost), but with that summariser's summary of the
//! span the recorded one replaced (the recorded summary itself unseen): an offline summariser
//! at the very compaction points a real session chose.
//!
//! Checked before every agent call (a recorded summary appears once, and once replaced it is a
//! summary of the session, not a record, so it acts once). In a cell there is no time: the
//! history's last recorded summary is applied, and a result over the capacity is infeasible.

use super::summary_preset::{fits, leading_systems, unchanged};
use super::{spec, Context, Head, Item, Outcome, View, When};
use crate::error::ParseError;
use crate::history::Kind;
use crate::summariser::Summariser;

#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCompaction {
    summariser: Summariser,
}

impl super::rule::RuleSpec for RecordedCompaction {
    const NAME: &'static str = "recorded_compaction";
    const TAIL: super::rule::Tail = super::rule::Tail::None(
        "it compacts where the transcript did, keeping what the run kept; it takes a `summariser` and its parameters alone",
    );
    fn takes_own(key: &str) -> bool {
        crate::summariser::takes(key)
    }
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let summariser = if p.value("summariser").is_some() {
            Summariser::from_params(p)?
        } else {
            Summariser::Recorded
        };
        Ok(RecordedCompaction { summariser })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        // The simulated summariser names itself here: the default is the recorded summary.
        if matches!(self.summariser, Summariser::Simulated(_)) {
            params.push("summariser=simulated".into());
        }
        self.summariser.push_params(params);
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let systems = leading_systems(view.kinds);
        // The newest summary the transcript recorded, as a record (not one this session wrote).
        let Some(at) = (systems..n)
            .rev()
            .find(|&i| view.kinds[i] == Kind::Summary && view.texts.is_record(i))
        else {
            return unchanged(&view, capacity, out);
        };
        for i in 0..systems {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        // Another summariser writes in the recorded summary's place, at its size, from the span
        // it replaced.
        let recorded = matches!(self.summariser, Summariser::Recorded);
        let cost = self.summariser.write(
            &view,
            (systems, at + 1),
            |i| recorded || i != at,
            view.costs[at],
            stream,
            out,
        );
        out.push(
            Item::Summary {
                first: systems,
                end: at + 1,
                cost,
            },
            cost,
            view.separator,
        );
        for i in at + 1..n {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summariser)
    }
}
