//! The flagger's confusion matrix: each record counted by (truth, flag), overall and by kind,
//! with how many histories and records every count rests on.

use crate::history::source::HistorySource;
use crate::history::{History, Kind};
use serde::{Deserialize, Serialize};

/// The records of one scope (all, or one kind) by truth and flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Histories with at least one record in the scope.
    pub histories: u64,
    pub records: u64,
    /// Required and flagged.
    pub true_positive: u64,
    /// Required, not flagged: a miss.
    pub false_negative: u64,
    /// Not required, flagged.
    pub false_positive: u64,
    /// Not required, not flagged.
    pub true_negative: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, required: bool, flag: bool) {
        self.records += 1;
        match (required, flag) {
            (true, true) => self.true_positive += 1,
            (true, false) => self.false_negative += 1,
            (false, true) => self.false_positive += 1,
            (false, false) => self.true_negative += 1,
        }
    }

    pub fn required(&self) -> u64 {
        self.true_positive + self.false_negative
    }

    pub fn unrequired(&self) -> u64 {
        self.false_positive + self.true_negative
    }

    /// P(flag off | required), over records; `None` without required records.
    pub fn false_negative_rate(&self) -> Option<f64> {
        ratio(self.false_negative, self.required())
    }

    /// P(flag on | not required), over records; `None` without unrequired records.
    pub fn false_positive_rate(&self) -> Option<f64> {
        ratio(self.false_positive, self.unrequired())
    }
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A flagger's confusion matrix over a sweep's histories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    pub overall: Counts,
    /// One entry per kind that occurs, in [`Kind::ALL`] order.
    pub by_kind: Vec<(Kind, Counts)>,
}

impl Confusion {
    /// Counts every record of `histories` by its truth and its flag base.
    pub fn of<H: std::borrow::Borrow<History>>(
        histories: impl IntoIterator<Item = H>,
    ) -> Confusion {
        let mut overall = Counts::default();
        let mut by_kind = [Counts::default(); Kind::ALL.len()];
        for h in histories {
            let h = h.borrow();
            let flags = h.flag_base();
            let mut seen = [false; Kind::ALL.len()];
            for (r, &flag) in h.records.iter().zip(&flags) {
                let k = kind_index(r.kind);
                by_kind[k].add(r.required, flag);
                seen[k] = true;
                overall.add(r.required, flag);
            }
            overall.histories += u64::from(!h.is_empty());
            for (c, s) in by_kind.iter_mut().zip(seen) {
                c.histories += u64::from(s);
            }
        }
        Confusion {
            overall,
            by_kind: Kind::ALL
                .into_iter()
                .zip(by_kind)
                .filter(|(_, c)| c.records > 0)
                .collect(),
        }
    }

    /// The confusion of a sweep's flagger: `None` when no history carries flags of its own
    /// (generated and JSONL histories without a flags file: the flags are the truth).
    pub fn of_source(source: &HistorySource) -> Option<Confusion> {
        match source {
            HistorySource::Flagged(all) => Some(Confusion::of(all.iter().map(|h| &**h))),
            // One history at a time, without its texts: the counts read kinds, truth and flags.
            HistorySource::Streamed(s) if s.skeletons().iter().any(|h| h.flags.is_some()) => Some(
                Confusion::of(s.skeletons().iter().map(|h| h.without_texts())),
            ),
            _ => None,
        }
    }
}

pub(crate) fn kind_index(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is in Kind::ALL")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    #[test]
    fn counts_each_record_once_overall_and_under_its_kind() {
        // truth/flag: u1 (T,T) TP, t2 (T,F) FN, t3 (F,T) FP, t4 (F,F) TN; second history u1 (F,F).
        let mut a = History::new(
            "a",
            vec![
                Record::new(1, "").kind(Kind::User).required(true),
                Record::new(2, "").kind(Kind::ToolResult).required(true),
                Record::new(3, "").kind(Kind::ToolResult),
                Record::new(4, "").kind(Kind::ToolResult),
            ],
        );
        a.flags = Some(vec![true, false, true, false]);
        let b = History::new("b", vec![Record::new(1, "").kind(Kind::User)]);
        let c = Confusion::of([&a, &b]);
        assert_eq!(
            c.overall,
            Counts {
                histories: 2,
                records: 5,
                true_positive: 1,
                false_negative: 1,
                false_positive: 1,
                true_negative: 2,
            }
        );
        assert_eq!(c.overall.false_negative_rate(), Some(0.5)); // 1 / (1 + 1)
        assert_eq!(c.overall.false_positive_rate(), Some(1.0 / 3.0)); // 1 / (1 + 2)
        assert_eq!(c.by_kind.len(), 2);
        assert_eq!(c.by_kind[0].0, Kind::User);
        assert_eq!(c.by_kind[0].1.histories, 2);
        assert_eq!(c.by_kind[1].1.false_negative, 1);
        assert_eq!(c.by_kind[1].1.histories, 1);
    }
}
