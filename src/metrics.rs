//! Scoring a context against the true labels.

use crate::context::{Context, Item, Outcome};
use crate::history::CostedHistory;

/// The measures of one cell, as the counts they rest on. The fractions are methods, computed
/// from the counts when read (each is read once by the summary and once by the table's
/// writer): a cell is held in row buffers by the hundred thousand, and six `Option<f64>` of
/// 16 bytes each made up half its row (208 bytes then, 120 now). Fractions are `None` where
/// they are undefined: every measure of an infeasible cell, and retention when the history has
/// no required record.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Metrics {
    pub feasible: bool,
    /// Cost of the context, separators included.
    pub used: u64,
    /// The history's total cost, what [`Metrics::reduction`] divides by.
    pub total: u64,
    pub required_total: u32,
    /// Required records kept verbatim.
    pub required_kept: u32,
    /// Required records whose information is present verbatim or inside a summary: a record
    /// kept verbatim counts 1, one a text summary carries the share of its needed facts the
    /// summary holds ([`crate::history::facts::Facts::carried_share`]), one the simulated
    /// summariser kept 1 (it writes every fact of a record it keeps, none of one it drops).
    pub required_any: f64,
    /// The context's items, and those of them that are original text verbatim.
    pub items: u32,
    pub verbatim: u32,
    pub placeholders: u32,
    /// Records replaced by a summary.
    pub summarised: u32,
    /// The facts of the required records it kept.
    pub facts: CellFacts,
    /// Required records not kept verbatim (dropped, masked or summarised) that the agent could
    /// fetch again ([`crate::history::recovery`]).
    pub required_dropped_recoverable: u32,
    /// Supersessions the context is stale on ([`crate::stale`]): it holds the overridden
    /// record without the one overriding it.
    pub stale: u32,
}

/// The facts ([`crate::history::facts`]) of a cell's required records and of the needed ones, and
/// those of them its context keeps.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CellFacts {
    /// Facts of the required records.
    pub facts_total: u32,
    /// Of those, the facts whose token the context's text still holds.
    pub facts_kept: u32,
    /// The needed facts of the required records (a later record uses them again).
    pub needed_facts_total: u32,
    /// Of those, the facts kept through their owner: the record that introduced the fact kept
    /// verbatim, or a summary that holds the fact (see [`crate::history::facts`]). A later record
    /// that merely repeats the token does not count here.
    pub needed_facts_kept: u32,
    /// Of those, the facts whose token any record or summary of the context holds, a later
    /// record that repeats it included: what `needed_facts_kept` counted before it credited
    /// owners only.
    pub needed_facts_any_record: u32,
}

impl Metrics {
    /// `1 − used / total` (0 for an empty history).
    pub fn reduction(&self) -> Option<f64> {
        self.feasible.then(|| match self.total {
            0 => 0.0,
            total => 1.0 - self.used as f64 / total as f64,
        })
    }

    /// `required_kept / required_total`.
    pub fn required_retention(&self) -> Option<f64> {
        self.required_share(f64::from(self.required_kept))
    }

    /// `required_any / required_total`.
    pub fn retention_any(&self) -> Option<f64> {
        self.required_share(self.required_any)
    }

    /// Share of the context's items that are original text verbatim (1 when nothing is kept).
    pub fn exact(&self) -> Option<f64> {
        self.feasible.then(|| match self.items {
            0 => 1.0,
            items => f64::from(self.verbatim) / f64::from(items),
        })
    }

    /// `facts_kept / facts_total`; `None` when the required records hold no fact.
    pub fn fact_retention(&self) -> Option<f64> {
        fraction(self.feasible, self.facts.facts_kept, self.facts.facts_total)
    }

    /// `needed_facts_kept / needed_facts_total`; `None` without needed facts.
    pub fn needed_fact_retention(&self) -> Option<f64> {
        fraction(
            self.feasible,
            self.facts.needed_facts_kept,
            self.facts.needed_facts_total,
        )
    }

    /// `needed_facts_any_record / needed_facts_total`; `None` without needed facts.
    pub fn needed_fact_retention_any_record(&self) -> Option<f64> {
        fraction(
            self.feasible,
            self.facts.needed_facts_any_record,
            self.facts.needed_facts_total,
        )
    }

    /// Required records not kept verbatim.
    pub fn required_dropped(&self) -> u32 {
        self.required_total - self.required_kept
    }

    /// The share of the required records not kept verbatim that the agent could fetch again;
    /// `None` when every required record was kept (or the cell is infeasible).
    pub fn dropped_recoverable_share(&self) -> Option<f64> {
        fraction(
            self.feasible,
            self.required_dropped_recoverable,
            self.required_dropped(),
        )
    }

    fn required_share(&self, part: f64) -> Option<f64> {
        (self.feasible && self.required_total > 0).then(|| part / f64::from(self.required_total))
    }
}

fn fraction(feasible: bool, part: u32, whole: u32) -> Option<f64> {
    (feasible && whole > 0).then(|| f64::from(part) / f64::from(whole))
}

/// A record kept verbatim.
const VERBATIM: u8 = 1;
/// A record a simulated summary carries (it writes every fact the record holds).
const SUMMARISED: u8 = 2;

/// Buffers scoring reuses from cell to cell.
#[derive(Debug, Default)]
pub struct ScoreScratch {
    /// Per record: in the context verbatim ([`VERBATIM`]) and/or carried by a simulated
    /// summary that writes its facts ([`SUMMARISED`]).
    has_text: Vec<u8>,
    /// Per fact: a summary's text holds it.
    in_summary: Vec<bool>,
}

/// Scores `context` (the outcome of a strategy) against `history`'s true labels.
pub fn score(history: &CostedHistory, outcome: Outcome, context: &Context) -> Metrics {
    score_with(history, outcome, context, &mut ScoreScratch::default())
}

/// [`score`] with reused buffers (the sweep's hot loop).
pub fn score_with(
    history: &CostedHistory,
    outcome: Outcome,
    context: &Context,
    scratch: &mut ScoreScratch,
) -> Metrics {
    let required_total = history.truth.iter().filter(|&&t| t).count() as u32;
    let facts_total = history.scored.required_facts.len() as u32;
    let needed_facts_total = history.scored.needed_facts.len() as u32;
    if outcome == Outcome::Infeasible {
        return Metrics {
            total: history.total,
            required_total,
            facts: CellFacts {
                facts_total,
                needed_facts_total,
                ..CellFacts::default()
            },
            ..Metrics::default()
        };
    }
    let mut m = Metrics {
        feasible: true,
        used: context.cost,
        total: history.total,
        required_total,
        facts: CellFacts {
            facts_total,
            needed_facts_total,
            ..CellFacts::default()
        },
        ..Metrics::default()
    };
    let has_text = &mut scratch.has_text;
    has_text.clear();
    has_text.resize(history.len(), 0);
    count_items(history, context, has_text, &mut m);
    let in_summary = summary_facts(history, context, &mut scratch.in_summary);
    count_facts(history, has_text, in_summary, &mut m);
    m
}

/// The first step of [`score_with`]: walks the context's items, marking in `has_text` which
/// records it keeps verbatim or a summary carries, and counts the items, the required records
/// kept and what the summaries stand for.
fn count_items(history: &CostedHistory, context: &Context, has_text: &mut [u8], m: &mut Metrics) {
    let truth = &history.truth[..];
    // A summary's range may enclose records kept verbatim beside it (a rule that keeps flagged
    // records and summarises the stretches between them): those count once, as verbatim, so
    // at the first summary every record kept verbatim is marked (a context without a summary,
    // most cells, never pays for the extra pass).
    let mut verbatim_marked = false;
    // Counts in integers, branch-free on the labels (which the processor cannot predict).
    let (mut verbatim, mut required_kept, mut simulated_kept) = (0u32, 0u32, 0u32);
    for item in &context.items {
        if !verbatim_marked && matches!(item, Item::Summary { .. }) {
            mark_verbatim(&context.items, has_text);
            verbatim_marked = true;
        }
        match *item {
            Item::Verbatim(i) => {
                verbatim += 1;
                has_text[i] |= VERBATIM;
                required_kept += u32::from(truth[i]);
                if context.summary_from_text {
                    // A text summary's shares are fractions: the sum keeps the order of the
                    // items, as it always did, so every bit of `required_any` stays the same.
                    m.required_any += f64::from(u8::from(truth[i]));
                }
            }
            Item::Placeholder(_) => m.placeholders += 1,
            Item::Summary { first, end, .. } if context.summary_from_text => {
                // A text carries a record by the share of its needed facts it holds.
                m.summarised += (first..end).filter(|&i| replaced(has_text, i)).count() as u32;
                let facts = &history.scored.facts;
                m.required_any += (first..end)
                    .filter(|&i| truth[i] && replaced(has_text, i))
                    .map(|i| {
                        facts.carried_share(i, |f| context.summary_facts.binary_search(&f).is_ok())
                    })
                    .sum::<f64>();
            }
            Item::Summary { first, end, .. } => {
                m.summarised += (first..end).filter(|&i| replaced(has_text, i)).count() as u32;
                simulated_kept += (first..end)
                    .filter(|&i| truth[i] && context.summary_kept[i] && replaced(has_text, i))
                    .count() as u32;
                // The simulated summariser writes the facts of every record it keeps.
                for (has, &kept) in has_text[first..end]
                    .iter_mut()
                    .zip(&context.summary_kept[first..end])
                {
                    *has |= SUMMARISED * u8::from(kept);
                }
            }
        }
    }
    m.required_kept = required_kept;
    if !context.summary_from_text {
        // Every term was a whole number: their sum in any order is exact.
        m.required_any = f64::from(required_kept + simulated_kept);
    }
    m.items = context.items.len() as u32;
    m.verbatim = verbatim;
}

/// Per fact, whether the context's text summary holds it (empty without one): a step of its
/// own so that [`count_facts`] reads it by index, whatever the summary.
fn summary_facts<'s>(
    history: &CostedHistory,
    context: &Context,
    in_summary: &'s mut Vec<bool>,
) -> &'s [bool] {
    in_summary.clear();
    if context.summary_from_text {
        in_summary.resize(history.scored.facts.len(), false);
        for &f in &context.summary_facts {
            in_summary[f as usize] = true;
        }
    }
    in_summary
}

/// The last step of [`score_with`]: counts the facts kept, the required records dropped that
/// could be fetched again, and the stale decisions, from what [`count_items`] marked.
fn count_facts(history: &CostedHistory, has_text: &[u8], in_summary: &[bool], m: &mut Metrics) {
    let truth = &history.truth[..];
    // The needed facts are among the required ones: one pass counts all three.
    let kept = if m.facts.facts_total == 0 {
        crate::history::facts::Kept::default()
    } else {
        history.scored.facts.kept_by_owner(
            &history.scored.required_facts,
            |j| has_text[j],
            |f| in_summary.get(f as usize).copied().unwrap_or(false),
        )
    };
    m.facts.facts_kept = kept.facts;
    m.facts.needed_facts_kept = kept.needed_by_owner;
    m.facts.needed_facts_any_record = kept.needed_any_record;
    m.required_dropped_recoverable = truth
        .iter()
        .zip(&history.fetchable.recoverable)
        .zip(has_text.iter())
        .map(|((&t, &r), &h)| u32::from(t & r & (h & VERBATIM == 0)))
        .sum();
    let pairs = &history.text.source.supersessions;
    if !pairs.is_empty() {
        let facts = &history.scored.facts;
        m.stale = crate::stale::count(pairs, history.len(), |i| {
            has_text[i] != 0
                || facts
                    .carried_by(i)
                    .any(|f| in_summary.get(f as usize) == Some(&true))
        });
    }
}

/// Marks every record the context keeps verbatim.
fn mark_verbatim(items: &[Item], has_text: &mut [u8]) {
    for item in items {
        if let Item::Verbatim(i) = *item {
            has_text[i] |= VERBATIM;
        }
    }
}

/// Whether a record in a summary's range was replaced by it, not kept verbatim beside it.
fn replaced(has_text: &[u8], i: usize) -> bool {
    has_text[i] & VERBATIM == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostModel;
    use crate::history::{History, Record};

    /// Six records of 10 chars (total 60 + 5 = 65), required at 0, 1, 4 and 5.
    fn six() -> CostedHistory {
        let records = (0..6)
            .map(|i| Record::new(i + 1, "x".repeat(10)).required([0, 1, 4, 5].contains(&i)))
            .collect();
        CostedHistory::new(&History::new("h", records), CostModel::Chars)
    }

    #[test]
    fn summaries_count_for_retention_any_and_placeholders_for_nothing() {
        let h = six();
        let mut ctx = Context::default();
        ctx.clear(6);
        // A summary of 0..3 that still carries 1 and 2, a placeholder for 3, 4 dropped, 5 kept.
        ctx.push(
            Item::Summary {
                first: 0,
                end: 3,
                cost: 7,
            },
            7,
            1,
        );
        ctx.summary_kept[1] = true;
        ctx.summary_kept[2] = true;
        ctx.summary_kept[4] = true; // outside any summary: must not count
        ctx.push(Item::Placeholder(3), 21, 1);
        ctx.push(Item::Verbatim(5), 10, 1);
        let m = score(&h, Outcome::Feasible, &ctx);
        assert_eq!(m.used, 7 + 1 + 21 + 1 + 10);
        assert_eq!(m.reduction(), Some(1.0 - 40.0 / 65.0));
        // Required 0, 1, 4, 5: verbatim 5 only; any form also 1 (carried by the summary).
        assert_eq!(
            (m.required_total, m.required_kept, m.required_any),
            (4, 1, 2.0)
        );
        assert_eq!(m.required_retention(), Some(0.25));
        assert_eq!(m.retention_any(), Some(0.5));
        // One verbatim item of three.
        assert_eq!(m.exact(), Some(1.0 / 3.0));
        assert_eq!((m.placeholders, m.summarised), (1, 3));
    }

    /// A summary of 0..5 placed first, with the flagged records 1 and 4 kept verbatim inside
    /// its range (as `required_summary` keeps them), and 5 kept after it. The simulated
    /// summariser marked 0, 1 and 4 kept: 1 and 4 count once, verbatim; of the records the
    /// summary replaced (0, 2, 3) the required one it keeps is 0. Required 0, 1, 4, 5: verbatim
    /// 1, 4, 5; any form 0 too, 4 of 4 — not 6, as counting 1 and 4 twice gave.
    #[test]
    fn records_kept_verbatim_inside_a_summarys_range_count_once() {
        let h = six();
        let mut ctx = Context::default();
        ctx.clear(6);
        ctx.push(
            Item::Summary {
                first: 0,
                end: 5,
                cost: 7,
            },
            7,
            1,
        );
        for i in [0, 1, 4] {
            ctx.summary_kept[i] = true;
        }
        ctx.push(Item::Verbatim(1), 10, 1);
        ctx.push(Item::Verbatim(4), 10, 1);
        ctx.push(Item::Verbatim(5), 10, 1);
        let m = score(&h, Outcome::Feasible, &ctx);
        assert_eq!(
            (m.required_total, m.required_kept, m.required_any),
            (4, 3, 4.0)
        );
        assert_eq!(m.retention_any(), Some(1.0));
        // The summary replaced 0, 2 and 3 only.
        assert_eq!((m.placeholders, m.summarised), (0, 3));
    }

    #[test]
    fn a_context_holding_an_overridden_record_without_its_successor_is_stale() {
        // Record 4 (required) overrides record 1 (required).
        let mut h = six().text.source.as_ref().clone();
        h.supersessions = vec![(1, 4)];
        let h = CostedHistory::new(&h, CostModel::Chars);
        let stale = |verbatim: &[usize], summarised: &[usize]| {
            let mut ctx = Context::default();
            ctx.clear(6);
            ctx.push(
                Item::Summary {
                    first: 0,
                    end: 3,
                    cost: 7,
                },
                7,
                1,
            );
            for &i in summarised {
                ctx.summary_kept[i] = true;
            }
            for &i in verbatim {
                ctx.push(Item::Verbatim(i), 10, 1);
            }
            score(&h, Outcome::Feasible, &ctx).stale
        };
        // The old decision verbatim, the new one dropped: stale.
        assert_eq!(stale(&[1, 5], &[]), 1);
        // The old one carried by the summary, the new one dropped: stale.
        assert_eq!(stale(&[5], &[1]), 1);
        // Both kept, or only the new one: not stale; neither: lost, not stale.
        assert_eq!(stale(&[1, 4], &[]), 0);
        assert_eq!(stale(&[4, 5], &[]), 0);
        assert_eq!(stale(&[5], &[]), 0);
        // A history without supersessions is never stale.
        let mut ctx = Context::default();
        ctx.clear(6);
        ctx.push(Item::Verbatim(1), 10, 1);
        assert_eq!(score(&six(), Outcome::Feasible, &ctx).stale, 0);
    }

    #[test]
    fn infeasible_cells_score_nothing_but_the_required_count() {
        let m = score(&six(), Outcome::Infeasible, &Context::default());
        assert!(!m.feasible);
        assert_eq!(m.required_total, 4);
        assert_eq!(
            (m.retention_any(), m.exact(), m.reduction()),
            (None, None, None)
        );
    }
}
