//! How much a real compaction summary keeps: for every summary a transcript holds (Claude
//! Code's `isCompactSummary` lines, imported as `summary` records where the model's context
//! restarts), the facts of the records it replaced (those since the previous summary, or the
//! start, up to it) that its text still holds, split by flagged / not flagged under the chosen
//! flag rules and by record kind. The pooled shares are what a `simulated(recall_flagged,
//! recall_other)` summariser must keep to write as much of what it replaces as these summaries
//! did.
//!
//! Recall is taken at the fact level and pooled (Σ kept / Σ facts): every fact weighs the same,
//! so a record with thirty facts counts thirty times a record with one. That is the estimator
//! under which `simulated` reproduces the measured retention: it keeps a record (all its facts)
//! with probability `recall`, so it is expected to keep `recall · Σ facts` facts, and
//! `fact_retention` is a share of facts, not of records. The mean over records of each record's
//! share is printed beside it for comparison.
//!
//! Intervals: a Wilson score interval at the fact level (it treats facts as independent draws;
//! the facts of one summary are not, so it is too narrow), and with two or more summaries
//! holding facts of a group a cluster-robust interval with the **summary** as the unit (the
//! interval of a share of [`crate::stats`]: inside 0–1, with width at 0 and 1).
//!
//! Beside it, the reused-token measure: of the distinctive tokens seen in what a summary
//! replaced and used again by a model-written record after it (before the next summary), the
//! share present in its text, split by whether the record that first held the token is flagged.

use crate::history::facts::Facts;
use crate::history::import::{LabelRules, Run};
use crate::history::Kind;
use crate::report::text_table::{self, Align};
use crate::stats::{wilson, Acc, Partial};
use std::collections::HashSet;
use std::fmt::Write;

/// Kept of so many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub kept: u64,
    pub of: u64,
}

impl Count {
    pub fn share(&self) -> Option<f64> {
        (self.of > 0).then(|| self.kept as f64 / self.of as f64)
    }

    fn add(&mut self, kept: u64, of: u64) {
        self.kept += kept;
        self.of += of;
    }
}

/// One replaced record that owns at least one fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordFacts {
    pub kind: Kind,
    pub flagged: bool,
    pub facts: Count,
}

/// One compaction summary and what it kept.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryFacts {
    pub transcript: String,
    /// 1 for the transcript's first summary.
    pub ordinal: usize,
    /// The summary record's id (its 1-based position in the history).
    pub record: u64,
    pub summary_chars: usize,
    /// The records it replaced and their chars.
    pub replaced_records: usize,
    pub replaced_chars: usize,
    /// The replaced records that own facts (the others have nothing to keep).
    pub records: Vec<RecordFacts>,
    /// The reused-token measure: tokens seen before the summary and used after it, kept; the same
    /// for those first held by a flagged record and by an unflagged one.
    pub reused: Count,
    pub reused_flagged: Count,
    pub reused_other: Count,
    /// The span it replaced is not all in the file: the transcript's first summary in a
    /// session that goes on from another file ([`Run::continued`]). Listed, not pooled.
    pub partial: bool,
}

/// Groups of facts a summary is measured on, in the order they are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    All,
    Flagged,
    Other,
    Kind(Kind),
}

impl Group {
    fn label(&self) -> String {
        match self {
            Group::All => "all".into(),
            Group::Flagged => "flagged".into(),
            Group::Other => "not flagged".into(),
            Group::Kind(k) => format!("kind {k}"),
        }
    }

    fn holds(&self, r: &RecordFacts) -> bool {
        match self {
            Group::All => true,
            Group::Flagged => r.flagged,
            Group::Other => !r.flagged,
            Group::Kind(k) => r.kind == *k,
        }
    }
}

impl SummaryFacts {
    /// Records and facts of a group.
    pub fn count(&self, group: Group) -> (usize, Count) {
        let mut c = Count::default();
        let mut n = 0;
        for r in self.records.iter().filter(|r| group.holds(r)) {
            n += 1;
            c.add(r.facts.kept, r.facts.of);
        }
        (n, c)
    }

    /// `summary_chars / replaced_chars`.
    pub fn ratio(&self) -> Option<f64> {
        (self.replaced_chars > 0).then(|| self.summary_chars as f64 / self.replaced_chars as f64)
    }
}

/// Every compaction summary of a run, measured under the flag rules `flags`.
pub fn measure(run: &Run, flags: &LabelRules) -> Vec<SummaryFacts> {
    let records = &run.history.records;
    let marks = flags.marks(run);
    let facts = Facts::of(&run.history);
    let is_summary = |i: usize| records[i].kind == Kind::Summary;
    // A summary line of several text blocks gives consecutive summary records: one summary.
    let summaries: Vec<usize> = (0..records.len())
        .filter(|&i| is_summary(i) && (i == 0 || !is_summary(i - 1)))
        .collect();
    let mut out = Vec::new();
    let mut in_summary = vec![false; facts.len()];
    for (n, &at) in summaries.iter().enumerate() {
        let start = if n == 0 { 0 } else { summaries[n - 1] };
        let end = summaries.get(n + 1).copied().unwrap_or(records.len());
        let texts: Vec<&str> = (at..end)
            .take_while(|&i| is_summary(i))
            .map(|i| records[i].text.as_str())
            .collect();
        in_summary.iter_mut().for_each(|x| *x = false);
        for text in &texts {
            facts.find_in(text, |f| in_summary[f as usize] = true);
        }
        let after = at + texts.len();
        let replaced = start..at;
        let owned: Vec<RecordFacts> = replaced
            .clone()
            .filter(|&i| !facts.owned(i).is_empty())
            .map(|i| {
                let own = facts.owned(i);
                RecordFacts {
                    kind: records[i].kind,
                    flagged: marks[i],
                    facts: Count {
                        kept: own.clone().filter(|&f| in_summary[f as usize]).count() as u64,
                        of: own.len() as u64,
                    },
                }
            })
            .collect();
        // The reused-token measure: seen in what was replaced, used again by the model after.
        let seen: HashSet<u32> = replaced
            .clone()
            .flat_map(|i| facts.holds(i).iter().copied())
            .collect();
        let used: HashSet<u32> = (after..end)
            .filter(|&j| matches!(records[j].kind, Kind::Assistant | Kind::ToolCall))
            .flat_map(|j| facts.holds(j).iter().copied())
            .collect();
        let (mut reused, mut reused_flagged, mut reused_other) =
            (Count::default(), Count::default(), Count::default());
        for &f in seen.intersection(&used) {
            let kept = u64::from(in_summary[f as usize]);
            // held_by is ascending: its first record is the one that introduced the token.
            let first = facts.held_by(f)[0] as usize;
            reused.add(kept, 1);
            if marks[first] {
                reused_flagged.add(kept, 1);
            } else {
                reused_other.add(kept, 1);
            }
        }
        out.push(SummaryFacts {
            transcript: run.history.name.clone(),
            ordinal: n + 1,
            record: records[at].id,
            summary_chars: texts.iter().map(|t| t.chars().count()).sum(),
            replaced_records: replaced.len(),
            replaced_chars: replaced.map(|i| records[i].text.chars().count()).sum(),
            records: owned,
            reused,
            reused_flagged,
            reused_other,
            partial: n == 0 && run.continued,
        });
    }
    out
}

/// The groups worth a row: all, flagged, not flagged, then each kind that owns facts.
fn groups(summaries: &[SummaryFacts]) -> Vec<Group> {
    let mut out = vec![Group::All, Group::Flagged, Group::Other];
    for k in Kind::ALL {
        if summaries
            .iter()
            .any(|s| s.records.iter().any(|r| r.kind == k))
        {
            out.push(Group::Kind(k));
        }
    }
    out
}

/// The pooled figures of one group over every summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    pub summaries: usize,
    pub records: usize,
    pub facts: Count,
    /// The mean over records of each record's share.
    pub record_mean: Option<f64>,
    pub wilson: Option<(f64, f64)>,
    /// By summary (cluster-robust); `None` with fewer than two summaries holding such facts.
    pub by_summary: Option<(f64, f64)>,
}

pub fn pooled(summaries: &[SummaryFacts], group: Group) -> Pooled {
    // A share of facts kept: the interval for shares (inside 0–1, with width at 0 and 1).
    let mut acc = Acc::share(true);
    let (mut records, mut facts, mut with, mut shares) = (0, Count::default(), 0, 0.0);
    for s in summaries {
        let mut partial = Partial::default();
        for r in s.records.iter().filter(|r| group.holds(r)) {
            records += 1;
            facts.add(r.facts.kept, r.facts.of);
            shares += r.facts.share().unwrap_or(0.0);
            for i in 0..r.facts.of {
                partial.push(i128::from(i < r.facts.kept));
            }
        }
        with += usize::from(partial != Partial::default());
        acc.add_history(&partial);
    }
    Pooled {
        summaries: with,
        records,
        facts,
        record_mean: (records > 0).then(|| shares / records as f64),
        wilson: wilson(facts.kept, facts.of),
        by_summary: acc.interval(),
    }
}

fn share_cell(c: Count) -> String {
    c.share().map(|s| format!("{s:.3}")).unwrap_or_default()
}

fn interval_cell(i: Option<(f64, f64)>) -> String {
    i.map(|(a, b)| format!("{:.3}–{:.3}", a.max(0.0), b.min(1.0)))
        .unwrap_or_default()
}

/// The report: each summary's size, each summary's groups, the pooled groups, the implied
/// parameters, the reused-token measure, and what it rests on. `transcripts`: how many were read.
pub fn to_text(all: &[SummaryFacts], transcripts: usize, flags: &LabelRules) -> String {
    let mut out = format!(
        "compaction summaries: {} in {transcripts} transcript(s); flags: {flags}\n",
        all.len()
    );
    out += "facts: the distinctive tokens a record is the first in its history to hold; a summary keeps one when the token occurs in its text\n\n";
    out += &sizes_table(all);
    let partial: Vec<String> = all
        .iter()
        .filter(|s| s.partial)
        .map(|s| format!("{} #{}", s.transcript, s.ordinal))
        .collect();
    if !partial.is_empty() {
        let _ = writeln!(
            out,
            "\nleft out of every figure below: {} summar{} whose replaced span is not all in the file (the session goes on from a conversation of another file): {}",
            partial.len(),
            if partial.len() == 1 { "y" } else { "ies" },
            partial.join(", ")
        );
    }
    let whole: Vec<SummaryFacts> = all.iter().filter(|s| !s.partial).cloned().collect();
    let summaries = whole.as_slice();
    out += "\nfacts of the replaced records (records: those owning a fact), per summary\n";
    out += &groups_table(summaries);
    out += "\npooled over every summary: share = Σ kept / Σ facts; 95 % intervals by Wilson over facts (treats facts as independent: too narrow) and by summary (cluster-robust, the summary as the unit; needs two summaries); record_mean: the mean of each record's share\n";
    out += &pooled_table(summaries);
    out.push('\n');
    out += &conclusions(summaries, transcripts);
    out
}

/// Left-aligned columns at `left`, the others right.
fn align<const N: usize>(left: &[usize]) -> [Align; N] {
    let mut a = [Align::Right; N];
    for &i in left {
        a[i] = Align::Left;
    }
    a
}

fn sizes_table(summaries: &[SummaryFacts]) -> String {
    let headings = [
        "transcript",
        "summary",
        "record",
        "summary_chars",
        "replaced_records",
        "replaced_chars",
        "ratio",
    ];
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                s.transcript.clone(),
                s.ordinal.to_string(),
                s.record.to_string(),
                s.summary_chars.to_string(),
                s.replaced_records.to_string(),
                s.replaced_chars.to_string(),
                s.ratio().map(|r| format!("{r:.4}")).unwrap_or_default(),
            ]
        })
        .collect();
    text_table::render(&headings, &rows, &align::<7>(&[0]))
}

/// Per summary: all, flagged and not flagged always, each kind where it owns facts.
fn groups_table(summaries: &[SummaryFacts]) -> String {
    let headings = [
        "transcript",
        "summary",
        "group",
        "records",
        "facts",
        "kept",
        "share",
    ];
    let groups = groups(summaries);
    let mut rows = Vec::new();
    for s in summaries {
        for g in &groups {
            let (n, c) = s.count(*g);
            if n == 0 && matches!(g, Group::Kind(_)) {
                continue;
            }
            rows.push(vec![
                s.transcript.clone(),
                s.ordinal.to_string(),
                g.label(),
                n.to_string(),
                c.of.to_string(),
                c.kept.to_string(),
                share_cell(c),
            ]);
        }
    }
    text_table::render(&headings, &rows, &align::<7>(&[0, 2]))
}

fn pooled_table(summaries: &[SummaryFacts]) -> String {
    let headings = [
        "group",
        "summaries",
        "records",
        "facts",
        "kept",
        "share",
        "wilson_95",
        "by_summary_95",
        "record_mean",
    ];
    let rows: Vec<Vec<String>> = groups(summaries)
        .into_iter()
        .map(|g| {
            let p = pooled(summaries, g);
            vec![
                g.label(),
                p.summaries.to_string(),
                p.records.to_string(),
                p.facts.of.to_string(),
                p.facts.kept.to_string(),
                share_cell(p.facts),
                interval_cell(p.wilson),
                interval_cell(p.by_summary),
                p.record_mean.map(|m| format!("{m:.3}")).unwrap_or_default(),
            ]
        })
        .collect();
    text_table::render(&headings, &rows, &align::<9>(&[0]))
}

/// The implied parameters, the reused-token share, and what the figures rest on.
fn conclusions(summaries: &[SummaryFacts], transcripts: usize) -> String {
    let mut out = String::new();
    let flagged = pooled(summaries, Group::Flagged).facts;
    let other = pooled(summaries, Group::Other).facts;
    let param = |c: Count| {
        c.share()
            .map(|s| format!("{s:.2}"))
            .unwrap_or_else(|| "unmeasured".into())
    };
    let _ = writeln!(
        out,
        "implied: simulated(recall_flagged={}, recall_other={})  (pooled fact shares: flagged {}/{}, not flagged {}/{})",
        param(flagged),
        param(other),
        flagged.kept,
        flagged.of,
        other.kept,
        other.of
    );
    // By kind: each kind with facts gets its own recall; the flag rates stand for the rest.
    let kinds: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|&k| {
            let c = pooled(summaries, Group::Kind(k)).facts;
            c.share().map(|s| format!("recall_{}={s:.2}", k.as_str()))
        })
        .collect();
    if !kinds.is_empty() {
        let _ = writeln!(
            out,
            "implied by kind: simulated({}, recall_flagged={}, recall_other={})",
            kinds.join(", "),
            param(flagged),
            param(other)
        );
    }
    let sum = |f: fn(&SummaryFacts) -> Count| {
        summaries.iter().map(f).fold(Count::default(), |mut a, c| {
            a.add(c.kept, c.of);
            a
        })
    };
    let (reused, rf, ro) = (
        sum(|s| s.reused),
        sum(|s| s.reused_flagged),
        sum(|s| s.reused_other),
    );
    let _ = writeln!(
        out,
        "reused tokens (seen in what a summary replaced, used again by an assistant or tool_call record after it): {} of {} in the summary ({}); first held by a flagged record {} of {} ({}), by another {} of {} ({})",
        reused.kept,
        reused.of,
        share_cell(reused),
        rf.kept,
        rf.of,
        share_cell(rf),
        ro.kept,
        ro.of,
        share_cell(ro)
    );
    let all = pooled(summaries, Group::All);
    let _ = writeln!(
        out,
        "rests on: {} summar{} in {} of {transcripts} transcript(s), {} facts of the {} replaced records that own any (of {} replaced)",
        summaries.len(),
        if summaries.len() == 1 { "y" } else { "ies" },
        summaries
            .iter()
            .map(|s| &s.transcript)
            .collect::<HashSet<_>>()
            .len(),
        all.facts.of,
        all.records,
        summaries.iter().map(|s| s.replaced_records).sum::<usize>()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(records: &[(Kind, bool, u64, u64)]) -> SummaryFacts {
        SummaryFacts {
            transcript: "t".into(),
            ordinal: 1,
            record: 1,
            summary_chars: 1,
            replaced_records: records.len(),
            replaced_chars: 1,
            records: records
                .iter()
                .map(|&(kind, flagged, kept, of)| RecordFacts {
                    kind,
                    flagged,
                    facts: Count { kept, of },
                })
                .collect(),
            reused: Count::default(),
            reused_flagged: Count::default(),
            reused_other: Count::default(),
            partial: false,
        }
    }

    #[test]
    fn pooled_shares_weigh_facts_and_the_interval_by_summary_is_the_share_one() {
        let s = [
            summary(&[(Kind::User, true, 1, 2), (Kind::ToolResult, false, 1, 4)]),
            summary(&[(Kind::ToolResult, false, 1, 2)]),
        ];
        let all = pooled(&s, Group::All);
        // 1 + 1 + 1 of 2 + 4 + 2: 3/8; the records' own shares 0.5, 0.25, 0.5 average 0.4167.
        assert_eq!((all.summaries, all.records), (2, 3));
        assert_eq!(all.facts, Count { kept: 3, of: 8 });
        assert!((all.record_mean.unwrap() - 1.25 / 3.0).abs() < 1e-12);
        // By summary: 2 of 6 and 1 of 2 against p = 0.375: residuals −0.25 and 0.25, V = 2/1 ·
        // 0.125 / 64; n* = p(1 − p)/V = 60, times (t(0.975, 7)/t(0.975, 1))² = (2.3646 /
        // 12.7062)²: n = 2.0779, Jeffreys 0.032843–0.893238 (the normal-theory interval,
        // 0.375 ± 0.7941, left 0–1 at both ends).
        let (a, b) = all.by_summary.unwrap();
        assert!((a - 0.032_843).abs() < 1e-6, "{a}");
        assert!((b - 0.893_238).abs() < 1e-6, "{b}");
        // Flagged facts come from one summary only: no interval by summary.
        let flagged = pooled(&s, Group::Flagged);
        assert_eq!(
            (flagged.summaries, flagged.facts),
            (1, Count { kept: 1, of: 2 })
        );
        assert_eq!(flagged.by_summary, None);
        assert_eq!(
            pooled(&s, Group::Kind(Kind::ToolResult)).facts,
            Count { kept: 2, of: 6 }
        );
        assert_eq!(pooled(&s, Group::Kind(Kind::Assistant)).wilson, None);
    }

    #[test]
    fn a_summary_of_several_blocks_is_one_summary() {
        use crate::history::{History, Record};
        let records = vec![
            Record::new(1, "fix parse_args and load_config").kind(Kind::User),
            Record::new(2, "read_manifest done").kind(Kind::ToolResult),
            Record::new(3, "kept parse_args").kind(Kind::Summary),
            Record::new(4, "and read_manifest").kind(Kind::Summary),
        ];
        let run = Run {
            history: History::new("h", records),
            failed: vec![false; 4],
            calls: Vec::new(),
            continued: false,
        };
        let m = measure(&run, &"instructions".parse().unwrap());
        // One summary of 15 + 17 chars replacing records 1–2 (30 + 18 chars): parse_args of
        // the user's two facts, read_manifest of the result's one.
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].summary_chars, m[0].replaced_chars), (32, 48));
        assert_eq!(m[0].count(Group::Flagged).1, Count { kept: 1, of: 2 });
        assert_eq!(m[0].count(Group::Other).1, Count { kept: 1, of: 1 });
    }
}
