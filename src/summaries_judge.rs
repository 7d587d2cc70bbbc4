//! Offline summarisers judged against real compaction summaries. At every compaction a
//! transcript records (Claude Code's `isCompactSummary` lines), each summariser is run on the
//! very span the real summary replaced (the records since the previous summary, or the start),
//! at the real summary's size in characters, and both are scored the same way: by the **needed
//! facts** of that span — the facts ([`crate::history::facts`]) its records introduced that a
//! model-written record after the summary uses again (beyond `min_gap` records of the fact's
//! owner). A summary keeps such a fact when the token is in its text; the simulated summariser,
//! which writes no text, keeps every fact of each record it keeps.
//!
//! Per summariser: the mean share of the needed facts kept against the real summary's, the mean
//! of the per-summary differences with its interval by summary (the summary is the unit: a
//! t interval over summaries), the correlation of the two shares over summaries, and the overlap
//! of the records both carry (Jaccard: a replaced record with a needed fact is carried when the
//! summary holds one of its needed facts). A summary whose replaced span the file does not hold
//! whole (the session went on from an earlier conversation: [`crate::history::import::Run::continued`],
//! the transcript's first summary) is left out and counted.

use crate::context::Context;
use crate::cost::CostModel;
use crate::history::facts::Facts;
use crate::history::import::{LabelRules, Run};
use crate::history::{CostedHistory, Kind};
use crate::rng;
use crate::stats::t975;
use crate::summariser::Summariser;
use crate::tables::judge::CandidateVerdict;
use crate::view::View;

/// A summariser to judge, by the label it is printed under.
pub struct Candidate {
    pub label: String,
    pub summariser: Summariser,
    /// Draws averaged per summary (the simulated summariser is random; text ones are not).
    pub draws: u32,
}

/// One real summary and what each candidate kept of its span's needed facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub transcript: String,
    /// 1 for the transcript's first summary.
    pub ordinal: usize,
    pub needed: u64,
    pub real_kept: u64,
    /// Per candidate: the mean share kept (over its draws) and the mean Jaccard overlap of
    /// the records carried with the real summary's; `None` where it wrote nothing (an `llm`
    /// answer the cache lacks).
    pub kept: Vec<Option<(f64, f64)>>,
}

impl Judged {
    pub fn real_share(&self) -> f64 {
        self.real_kept as f64 / self.needed as f64
    }
}

/// What judging some transcripts found.
#[derive(Debug, Default)]
pub struct Judgement {
    pub summaries: Vec<Judged>,
    /// Summaries left out: the span they replaced is not in the file.
    pub partial: usize,
    /// Summaries left out: their span holds no needed fact (nothing to compare).
    pub without_needs: usize,
    /// Transcripts read that hold no compaction summary: counted, nothing to judge in them.
    pub without_summary: usize,
}

/// The needed facts of the span `start..at` that a model-written record after `after` uses.
fn needed_facts(facts: &Facts, kinds: &[Kind], start: usize, at: usize, after: usize) -> Vec<u32> {
    let mut out: Vec<u32> = (start..at)
        .flat_map(|i| facts.owned(i))
        .filter(|&f| {
            facts.held_by(f).iter().any(|&j| {
                let j = j as usize;
                j >= after
                    && matches!(kinds[j], Kind::Assistant | Kind::ToolCall)
                    && facts.is_use(f, j)
            })
        })
        .collect();
    out.sort_unstable();
    out
}

/// The replaced records (of `start..at`) that own one of `needed` and whose needed facts a
/// summary holding `held` carries at least in part.
fn carried(
    facts: &Facts,
    needed: &[u32],
    start: usize,
    at: usize,
    held: &dyn Fn(u32) -> bool,
) -> Vec<usize> {
    (start..at)
        .filter(|&i| {
            facts
                .owned(i)
                .any(|f| needed.binary_search(&f).is_ok() && held(f))
        })
        .collect()
}

fn jaccard(a: &[usize], b: &[usize]) -> f64 {
    let both = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    let either = a.len() + b.len() - both;
    if either == 0 {
        1.0
    } else {
        both as f64 / either as f64
    }
}

/// Judges `candidates` at every compaction of `run` (the `index`-th transcript read, which
/// keys the simulated summariser's draws), adding to `out`.
pub fn judge_run(
    run: &Run,
    index: usize,
    flags: &LabelRules,
    min_gap: usize,
    candidates: &[Candidate],
    out: &mut Judgement,
) {
    let records = &run.history.records;
    let is_summary = |i: usize| records[i].kind == Kind::Summary;
    let points: Vec<usize> = (0..records.len())
        .filter(|&i| is_summary(i) && (i == 0 || !is_summary(i - 1)))
        .collect();
    if points.is_empty() {
        out.without_summary += 1;
        return;
    }
    let costed = CostedHistory::new(&run.history, CostModel::Chars);
    let facts = Facts::with_min_gap(&run.history, min_gap);
    let marks = flags.marks(run);
    let view = View::new(&costed, &marks);
    let mut ctx = Context::default();
    for (n, &at) in points.iter().enumerate() {
        if n == 0 && run.continued {
            out.partial += 1;
            continue;
        }
        let start = if n == 0 { 0 } else { points[n - 1] };
        let after = (at..records.len())
            .find(|&i| !is_summary(i))
            .unwrap_or(records.len());
        let needed = needed_facts(&facts, &costed.kinds, start, at, after);
        if needed.is_empty() {
            out.without_needs += 1;
            continue;
        }
        let mut real = vec![false; facts.len()];
        let size: usize = (at..after)
            .map(|i| {
                facts.find_in(&records[i].text, |f| real[f as usize] = true);
                records[i].text.chars().count()
            })
            .sum();
        let real_kept = needed.iter().filter(|&&f| real[f as usize]).count() as u64;
        let real_carried = carried(&facts, &needed, start, at, &|f| real[f as usize]);
        let kept = candidates
            .iter()
            .map(|c| {
                let (mut share, mut overlap, mut draws) = (0.0, 0.0, 0u32);
                for d in 0..c.draws.max(1) {
                    ctx.clear(records.len());
                    let stream =
                        rng::key(&[rng::tag::SUMMARY, index as u64, n as u64, u64::from(d)]);
                    c.summariser
                        .write(&view, (start, at), |_| true, size as u64, stream, &mut ctx);
                    if ctx.summary_text.contains(crate::summariser::llm::MISSING) {
                        return None;
                    }
                    let mut held = vec![false; facts.len()];
                    if ctx.summary_from_text {
                        for &f in &ctx.summary_facts {
                            held[f as usize] = true;
                        }
                    } else {
                        for i in start..at {
                            if ctx.summary_kept[i] {
                                for &f in facts.holds(i) {
                                    held[f as usize] = true;
                                }
                            }
                        }
                    }
                    let k = needed.iter().filter(|&&f| held[f as usize]).count();
                    share += k as f64 / needed.len() as f64;
                    let mine = carried(&facts, &needed, start, at, &|f| held[f as usize]);
                    overlap += jaccard(&mine, &real_carried);
                    draws += 1;
                }
                Some((share / f64::from(draws), overlap / f64::from(draws)))
            })
            .collect();
        out.summaries.push(Judged {
            transcript: run.history.name.clone(),
            ordinal: n + 1,
            needed: needed.len() as u64,
            real_kept,
            kept,
        });
    }
}

/// Every candidate's verdict, in the candidates' order.
pub fn verdicts(j: &Judgement, candidates: &[Candidate]) -> Vec<CandidateVerdict> {
    candidates
        .iter()
        .enumerate()
        .map(|(c, cand)| {
            let pairs: Vec<(f64, f64, f64)> = j
                .summaries
                .iter()
                .filter_map(|s| s.kept[c].map(|(k, o)| (s.real_share(), k, o)))
                .collect();
            let n = pairs.len() as f64;
            let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| pairs.iter().map(f).sum::<f64>() / n;
            let (real, kept, overlap) = (mean(&|p| p.0), mean(&|p| p.1), mean(&|p| p.2));
            let diff = kept - real;
            let diff_ci = (pairs.len() >= 2).then(|| {
                let var = pairs
                    .iter()
                    .map(|p| (p.1 - p.0 - diff).powi(2))
                    .sum::<f64>()
                    / (n - 1.0);
                let half = t975(pairs.len() as u64 - 1) * (var / n).sqrt();
                (diff - half, diff + half)
            });
            let (sx, sy) = (
                pairs.iter().map(|p| (p.0 - real).powi(2)).sum::<f64>(),
                pairs.iter().map(|p| (p.1 - kept).powi(2)).sum::<f64>(),
            );
            let sxy = pairs
                .iter()
                .map(|p| (p.0 - real) * (p.1 - kept))
                .sum::<f64>();
            CandidateVerdict {
                label: cand.label.clone(),
                summaries: pairs.len(),
                real_kept: real,
                kept,
                diff_mean: diff,
                diff_ci,
                correlation: (sx > 0.0 && sy > 0.0).then(|| sxy / (sx * sy).sqrt()),
                jaccard: overlap,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_counts_both_over_either() {
        assert_eq!(jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(jaccard(&[1], &[]), 0.0);
    }
}
