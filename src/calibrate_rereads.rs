//! What ctxlab's re-read model predicts after a real compaction, against what the agent did.
//!
//! Each transcript is replayed as it ran — `recorded_compaction`: its own summaries at its own
//! compaction points — and at every compaction the re-reads ctxlab predicts
//! ([`crate::session::need`]: a need whose fact's owner the compaction dropped and which is a
//! re-runnable read) are set beside the re-reads the agent made:
//!
//! - **observed**: the files the agent viewed after the compaction (before the next one or the
//!   end) that it had viewed before it, each file once; a view is a tool result showing one
//!   named file ([`crate::history::recovery::viewed_file`]: Claude Code's `Read`, an editor's
//!   `view`, `cat`/`sed -n`/... of one file);
//! - **predicted**: the files of the views ctxlab fetches again in that span, each once;
//! - hits, precision (hits / predicted) and recall (hits / observed), and the tokens of the
//!   observed re-reads (each file's first view after the compaction) and of the predicted
//!   ones (the dropped view fetched again), under the cost model.
//!
//! Every record counts as required here, so every needed fact is a need: the question is
//! whether the model of re-reads matches the agent, not what label rules call required. The
//! re-read calls themselves (the calls behind the observed views) use nothing: a re-read
//! names the file it re-reads, which must not make the file's facts needed.
//!
//! Beside it, a naive rule for comparison: a file viewed before the compaction whose path the
//! summary does not hold and whose file name a later model-written record (a re-read call
//! aside) names.

use crate::cost::CostModel;
use crate::history::import::Run;
use crate::history::recovery::viewed_file;
use crate::history::{CostedHistory, History, Kind};
use crate::report::text_table::{self, Align};
use crate::session::{simulate_with, SessionConfig, SessionScratch, Trace};
use crate::strategy::Strategy;
use crate::tables::rereads::{self, RereadCounts};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

/// One compaction: what the agent re-read after it and what ctxlab predicts.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionRereads {
    pub transcript: String,
    /// 1 for the transcript's first compaction.
    pub k: usize,
    pub observed: BTreeSet<String>,
    pub predicted: BTreeSet<String>,
    pub naive: BTreeSet<String>,
    pub observed_tokens: u64,
    pub predicted_tokens: u64,
}

/// Adds one compaction's observed and predicted files to `counts`.
fn add(counts: &mut RereadCounts, observed: &BTreeSet<String>, predicted: &BTreeSet<String>) {
    counts.compactions += 1;
    counts.observed += observed.len();
    counts.predicted += predicted.len();
    counts.hits += observed.intersection(predicted).count();
}

impl CompactionRereads {
    pub fn hits(&self) -> usize {
        self.observed.intersection(&self.predicted).count()
    }
}

/// ctxlab's figures and the naive rule's, pooled over `measured`.
pub fn pool(measured: &[CompactionRereads]) -> (RereadCounts, RereadCounts) {
    let (mut model, mut naive) = (RereadCounts::default(), RereadCounts::default());
    for c in measured {
        add(&mut model, &c.observed, &c.predicted);
        model.observed_tokens += c.observed_tokens;
        model.predicted_tokens += c.predicted_tokens;
        add(&mut naive, &c.observed, &c.naive);
    }
    (model, naive)
}

/// The compactions of one transcript (none: it never compacted).
pub fn measure(run: &Run, cost: CostModel) -> Vec<CompactionRereads> {
    let records = &run.history.records;
    let n = records.len();
    let points: Vec<usize> = (0..n)
        .filter(|&i| records[i].kind == Kind::Summary)
        .collect();
    if points.is_empty() {
        return Vec::new();
    }
    let views: Vec<Option<String>> = (0..n).map(|i| viewed_file(records, i)).collect();
    let spans: Vec<(usize, usize)> = points
        .iter()
        .enumerate()
        .map(|(k, &at)| (at, points.get(k + 1).copied().unwrap_or(n)))
        .collect();
    // The re-read views: after a compaction, of a file viewed before it.
    let mut reread = vec![false; n];
    for &(at, end) in &spans {
        let before: BTreeSet<&str> = views[..at].iter().flatten().map(String::as_str).collect();
        for i in at..end {
            if views[i].as_deref().is_some_and(|p| before.contains(p)) {
                reread[i] = true;
            }
        }
    }
    // The replay is of the run without its re-reads: the views and the calls behind them hold
    // nothing (else the agent's own re-reads would meet the needs they were made for), and a
    // response that holds the call (mini-swe-agent's) uses nothing.
    let mut not_uses = vec![false; n];
    let mut all_required = run.history.clone();
    for i in (0..n).filter(|&i| reread[i]) {
        all_required.records[i].text.clear();
        if let Some(j) = producing(records, i) {
            not_uses[j] = true;
            if records[j].kind == Kind::ToolCall {
                all_required.records[j].text.clear();
            }
        }
    }
    for r in &mut all_required.records {
        r.required = true;
    }
    all_required.flags = None;
    let history = CostedHistory::shared(Arc::new(all_required), cost).excluding_uses(&not_uses);
    let strategy = Strategy::parse("recorded_compaction").expect("a known strategy");
    let cfg = SessionConfig {
        // The run as it ran: no window ends it.
        window: u64::MAX / 4,
        ..SessionConfig::default()
    };
    let mut trace = Trace::default();
    simulate_with(
        &history,
        &history.truth,
        &strategy,
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    spans
        .iter()
        .enumerate()
        .map(|(k, &(at, end))| {
            let before: BTreeSet<&str> = views[..at].iter().flatten().map(String::as_str).collect();
            let mut observed = BTreeSet::new();
            let mut observed_tokens = 0;
            for i in at..end {
                if let Some(p) = views[i].as_deref().filter(|p| before.contains(p)) {
                    if observed.insert(p.to_string()) {
                        // The view as the agent read it (the replay's copy is blanked).
                        observed_tokens += cost.cost(&records[i].text);
                    }
                }
            }
            let mut predicted = BTreeSet::new();
            let mut predicted_tokens = 0;
            for r in trace.refetches.iter().filter(|r| (at..end).contains(&r.at)) {
                if let Some(p) = views[r.record].as_deref() {
                    if predicted.insert(p.to_string()) {
                        predicted_tokens += history.costs[r.record];
                    }
                }
            }
            CompactionRereads {
                transcript: run.history.name.clone(),
                k: k + 1,
                naive: naive(&run.history, &reread, (at, end), &before),
                observed,
                predicted,
                observed_tokens,
                predicted_tokens,
            }
        })
        .collect()
}

/// The call record behind result `i`.
fn producing(records: &[crate::history::Record], i: usize) -> Option<usize> {
    crate::history::import::file_view::producing_call_at(records, i)
}

/// The naive rule's prediction for the compaction at `at` (see the module documentation).
fn naive(
    history: &History,
    reread: &[bool],
    (at, end): (usize, usize),
    before: &BTreeSet<&str>,
) -> BTreeSet<String> {
    let records = &history.records;
    let summary = &records[at].text;
    let reread_calls: BTreeSet<usize> = (at..end)
        .filter(|&i| reread[i])
        .filter_map(|i| producing(records, i))
        .collect();
    let written: Vec<&str> = (at + 1..end)
        .filter(|&i| {
            matches!(records[i].kind, Kind::Assistant | Kind::ToolCall)
                && !reread_calls.contains(&i)
        })
        .map(|i| records[i].text.as_str())
        .collect();
    before
        .iter()
        .filter(|p| !summary.contains(**p))
        .filter(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            written.iter().any(|t| t.contains(name))
        })
        .map(|p| p.to_string())
        .collect()
}

fn share(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}"))
}

/// The pooled row as CSV, under its header (`tables::rereads`).
pub fn to_csv(measured: &[CompactionRereads]) -> String {
    rereads::table().csv_text(&(), &[pool(measured).0])
}

/// Every compaction, then the pooled figures of ctxlab's model and of the naive rule.
pub fn to_text(measured: &[CompactionRereads], transcripts: usize, without: &[String]) -> String {
    let mut s = String::new();
    let (p, naive) = pool(measured);
    let _ = writeln!(
        s,
        "Re-reads after {} compactions in {} transcripts, replayed as they ran (every record counts as required; the re-read calls use nothing)\n",
        p.compactions,
        transcripts - without.len()
    );
    let headings = [
        "transcript",
        "k",
        "observed",
        "predicted",
        "hits",
        "observed tokens",
        "predicted tokens",
    ];
    let rows: Vec<Vec<String>> = measured
        .iter()
        .map(|c| {
            vec![
                c.transcript.clone(),
                c.k.to_string(),
                c.observed.len().to_string(),
                c.predicted.len().to_string(),
                c.hits().to_string(),
                c.observed_tokens.to_string(),
                c.predicted_tokens.to_string(),
            ]
        })
        .collect();
    let mut align = [Align::Right; 7];
    align[0] = Align::Left;
    s.push_str(&text_table::render(&headings, &rows, &align));
    let _ = writeln!(
        s,
        "\nctxlab: observed {}, predicted {}, hits {}: precision {}, recall {}; re-read tokens observed {}, predicted {}",
        p.observed,
        p.predicted,
        p.hits,
        share(p.precision()),
        share(p.recall()),
        p.observed_tokens,
        p.predicted_tokens
    );
    let _ = writeln!(
        s,
        "naive rule (a file viewed before, its path not in the summary, its name in a later model-written record): predicted {}, hits {}: precision {}, recall {}",
        naive.predicted,
        naive.hits,
        share(naive.precision()),
        share(naive.recall())
    );
    if !without.is_empty() {
        let _ = writeln!(
            s,
            "without a compaction (counted, not measured): {} transcript(s): {}",
            without.len(),
            without.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    /// The pooled CSV's bytes; without a prediction or an observation, precision and recall
    /// are empty.
    #[test]
    fn csv_bytes_are_pinned() {
        let c = CompactionRereads {
            transcript: "t".into(),
            k: 1,
            observed: set(&["a", "b", "c"]),
            predicted: set(&["a", "b", "d"]),
            naive: set(&[]),
            observed_tokens: 7,
            predicted_tokens: 9,
        };
        // Hits a and b: precision 2/3, recall 2/3.
        assert_eq!(
            to_csv(&[c]),
            "compactions,observed,predicted,hits,precision,recall,observed_tokens,predicted_tokens\n\
             1,3,3,2,0.666667,0.666667,7,9\n"
        );
        assert_eq!(
            to_csv(&[]),
            "compactions,observed,predicted,hits,precision,recall,observed_tokens,predicted_tokens\n\
             0,0,0,0,,,0,0\n"
        );
    }
}
