//! `extractive`: a summary made of whole lines of what it replaces, picked by relevance to the
//! task statement (BM25, k1 = 1.2, b = 0.75, the usual defaults of Robertson and Zaragoza's
//! formulation; the lines are the documents, the task's distinct words the query), with the
//! lines of flagged records first (`flagged_first`, default true: a summary prompt asks to keep
//! what the harness marks). Ties go to the older line. Lines are taken greedily while they fit
//! the summary's size; the picked lines are written in their original order. Deterministic and
//! offline: a real baseline between masking and a model.

use crate::context::Context;
use crate::error::ParseError;
use crate::spec::Params;
use crate::view::View;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extractive {
    pub flagged_first: bool,
}

impl Default for Extractive {
    fn default() -> Self {
        Extractive {
            flagged_first: true,
        }
    }
}

/// Lowercase words of letters, digits and `_`: BM25's terms.
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

struct ScoredLine<'a> {
    text: &'a str,
    flagged: bool,
    score: f64,
}

impl Extractive {
    /// Writes into `text` the lines picked from view records `first..end` that `carried`
    /// selects, spending at most `budget`; returns the text's cost.
    pub fn write(
        &self,
        view: &View,
        (first, end): (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        budget: u64,
        text: &mut String,
    ) -> u64 {
        text.clear();
        let mut lines: Vec<ScoredLine> = Vec::new();
        for i in (first..end).filter(|&i| carried(i)) {
            for l in view.texts.get(i).lines() {
                let l = l.trim();
                if !l.is_empty() {
                    lines.push(ScoredLine {
                        text: l,
                        flagged: view.flags[i],
                        score: 0.0,
                    });
                }
            }
        }
        if lines.is_empty() || budget == 0 {
            return 0;
        }
        score_by_bm25(&mut lines, view.task);
        let mut order: Vec<usize> = (0..lines.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&lines[a], &lines[b]);
            (self.flagged_first && y.flagged)
                .cmp(&(self.flagged_first && x.flagged))
                .then(y.score.total_cmp(&x.score))
                .then(a.cmp(&b))
        });
        // Greedy by rank: a line that does not fit is skipped, a shorter one later may. Once
        // not even the cheapest line could fit, none is costed: they would all be skipped.
        let newline = view.model.cost("\n");
        let least = view.model.least_nonempty();
        let mut picked = vec![false; lines.len()];
        let mut spent = 0u64;
        for &i in &order {
            let gap = if spent == 0 { 0 } else { newline };
            if spent + gap + least > budget {
                break;
            }
            let extra = view.model.cost(lines[i].text) + gap;
            if spent + extra <= budget {
                spent += extra;
                picked[i] = true;
            }
        }
        let write = |text: &mut String, picked: &[bool]| {
            text.clear();
            for (l, _) in lines.iter().zip(picked).filter(|(_, &p)| p) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(l.text);
            }
        };
        write(text, &picked);
        // Costing the joined text may differ from the sum of its lines (tokens merge across a
        // line break): drop the lowest-ranked picks until the text itself fits.
        let mut cost = view.model.cost(text);
        for &i in order.iter().rev() {
            if cost <= budget {
                break;
            }
            if picked[i] {
                picked[i] = false;
                write(text, &picked);
                cost = view.model.cost(text);
            }
        }
        cost
    }
}

/// Scores each line by BM25 against the task's distinct words.
fn score_by_bm25(lines: &mut [ScoredLine], task: &str) {
    let line_terms: Vec<Vec<String>> = lines.iter().map(|l| terms(l.text).collect()).collect();
    let mut df: HashMap<&str, u32> = HashMap::new();
    for t in &line_terms {
        let mut seen: Vec<&str> = t.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_default() += 1;
        }
    }
    let n = lines.len() as f64;
    let avg = line_terms.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut query: Vec<String> = terms(task).collect();
    query.sort_unstable();
    query.dedup();
    // Each query word's idf (`None`: in no line), worked out once, not once per line; its
    // count in a line found by one pass over the line's words, not one per query word.
    let idf: Vec<Option<f64>> = query
        .iter()
        .map(|q| {
            let d = f64::from(*df.get(q.as_str())?);
            Some(((n - d + 0.5) / (d + 0.5) + 1.0).ln())
        })
        .collect();
    let query_index: HashMap<&str, usize> =
        query.iter().enumerate().map(|(i, q)| (q.as_str(), i)).collect();
    let mut counts = vec![0u32; query.len()];
    for (line, t) in lines.iter_mut().zip(&line_terms) {
        counts.fill(0);
        for w in t {
            if let Some(&i) = query_index.get(w.as_str()) {
                counts[i] += 1;
            }
        }
        let len = t.len() as f64;
        line.score = idf
            .iter()
            .zip(&counts)
            .filter_map(|(&idf, &count)| {
                let (idf, tf) = (idf?, f64::from(count));
                Some(idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg.max(1.0))))
            })
            .sum();
    }
}

impl super::Summarise for Extractive {
    const PARAMS: &'static [&'static str] = &["flagged_first"];

    fn read_params(p: &mut Params) -> Result<Self, ParseError> {
        Ok(Extractive {
            flagged_first: p.bool("flagged_first")?.unwrap_or(true),
        })
    }

    fn canonical_params(&self, params: &mut Vec<String>) {
        params.push("summariser=extractive".into());
        if !self.flagged_first {
            params.push("flagged_first=false".into());
        }
    }

    fn summarise(
        &self,
        view: &View,
        range: (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        budget: u64,
        _stream: u64,
        out: &mut Context,
    ) -> u64 {
        self.write(view, range, carried, budget, &mut out.summary_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: 3 lines, 2 words on average; "fix" is in 1 line (idf ln(8/3)),
    /// "parser" in 2 (idf ln 1.6); with k1 = 1.2 and b = 0.75 a 2-word line's term weight is
    /// tf · 2.2 / (tf + 1.2) and a 3-word line's tf · 2.2 / (tf + 1.65).
    #[test]
    fn lines_are_scored_by_bm25_against_the_task() {
        let line = |text| ScoredLine {
            text,
            flagged: false,
            score: f64::NAN,
        };
        let mut lines = [line("Fix parser"), line("parser parser bug"), line("unrelated")];
        score_by_bm25(&mut lines, "the parser: fix it");
        let fix = (8.0f64 / 3.0).ln();
        let parser = 1.6f64.ln();
        let expected = [
            fix + parser,
            parser * 2.0 * 2.2 / (2.0 + 1.2 * (0.25 + 0.75 * 1.5)),
            0.0,
        ];
        for (l, e) in lines.iter().zip(expected) {
            assert!((l.score - e).abs() < 1e-12, "{} scored {}, not {e}", l.text, l.score);
        }
        assert!((lines[0].score - 1.4508328822574619).abs() < 1e-12);
    }
}
