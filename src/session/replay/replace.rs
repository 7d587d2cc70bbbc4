//! The context a compaction leaves: the strategy's items in place of the view, the notes read
//! back, the summaries' records carried on or dropped, and what is present afterwards.

use super::{Replay, NONE, PARAPHRASED, VERBATIM};
use crate::context::{Context, Item};
use crate::session::context::{Entry, Origin};
use crate::session::Compactor;
use crate::summariser::Summariser;

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// Replaces the context with the strategy's result (in `ctx`, over the view) followed by
    /// the notes read back; returns the cost of the summaries written (the compaction call's
    /// output).
    pub(super) fn replace(&mut self, stream: u64) -> u64 {
        let output = self.build_next();
        self.swap_in_next();
        self.carry_summaries(stream);
        self.recount();
        output
    }

    /// Fills the scratch's next entries: the strategy's items over the view, then the notes
    /// read back. Returns the cost of the summaries written.
    fn build_next(&mut self) -> u64 {
        let s = &mut *self.s;
        let existing = self.book.summaries as usize;
        s.summaries.remap.clear();
        s.summaries.remap.resize(existing, NONE);
        s.summaries.alive.clear();
        s.summaries.alive.resize(existing, false);
        s.next.clear();

        let mut output = 0u64;
        let mut nth_placeholder = 0usize;
        let unmasked = self.compactor.reads_unmasked();
        for item in &s.ctx.items {
            let entry = match *item {
                Item::Verbatim(j) => {
                    let e = s.entries[s.view.map[j] as usize];
                    if let Origin::Summary(id) = e.origin {
                        s.summaries.alive[id as usize] = true;
                    }
                    e
                }
                Item::Placeholder(j) => {
                    let e = s.entries[s.view.map[j] as usize];
                    // What the strategy's stand-in text costs.
                    let cost = s.ctx.placeholder_costs[nth_placeholder];
                    nth_placeholder += 1;
                    let origin = match e.origin {
                        Origin::Record(r) | Origin::Placeholder(r) => Origin::Placeholder(r),
                        Origin::Summary(id) | Origin::SummaryPlaceholder(id) => {
                            Origin::SummaryPlaceholder(id)
                        }
                        Origin::Notes(_) => unreachable!("notes are not in the view"),
                    };
                    Entry { origin, cost }
                }
                Item::Summary { first, end, cost } => {
                    let id = self.book.summaries;
                    self.book.summaries += 1;
                    s.summaries.remap.push(NONE);
                    s.summaries.alive.push(true);
                    if self.book.text_summaries {
                        store_text(
                            &mut s.summaries.texts,
                            &mut s.summaries.facts,
                            &s.ctx,
                            id as usize,
                        );
                    }
                    for j in first..end {
                        match s.entries[s.view.map[j] as usize].origin {
                            Origin::Placeholder(r) if unmasked => {
                                // The summariser read the record the stand-in masks.
                                s.in_summary[r as usize] = id;
                                s.kept[r as usize] = s.ctx.summary_kept[j];
                            }
                            Origin::Record(r) => {
                                s.in_summary[r as usize] = id;
                                s.kept[r as usize] = if self.book.text_summaries {
                                    holds_own_fact(
                                        &self.h.scored.facts,
                                        &s.summaries.facts[id as usize],
                                        r as usize,
                                    )
                                } else {
                                    s.ctx.summary_kept[j]
                                };
                            }
                            Origin::Summary(old) => s.summaries.remap[old as usize] = id,
                            // Stand-ins carry nothing; notes are not in the view.
                            _ => {}
                        }
                    }
                    output += cost;
                    Entry {
                        origin: Origin::Summary(id),
                        cost,
                    }
                }
            };
            s.next.push(entry);
        }
        if self.notes.count > 0 {
            s.next.push(Entry {
                origin: Origin::Notes(self.notes.count),
                cost: self.notes.cost,
            });
            self.notes.upto = self.progress.appeared;
        }
        output
    }

    /// Makes the next entries the context, and tells the cache what of its prefix is left.
    fn swap_in_next(&mut self) {
        let s = &mut *self.s;
        // What the prompt cache can still serve: the entries before the first change.
        let common = s
            .entries
            .iter()
            .zip(&s.next)
            .take_while(|(a, b)| a == b)
            .count();
        self.book.unchanged = common == s.entries.len() && common == s.next.len();
        std::mem::swap(&mut s.entries, &mut s.next);
        s.cum.clear();
        let mut sum = 0;
        for e in &s.entries {
            sum += e.cost;
            s.cum.push(sum);
        }
        for b in &mut s.bills {
            b.cache.replaced(common, &mut b.points);
        }
    }

    /// Carries each record of a summary over to what that summary became: records of a
    /// summary that was summarised again go through the summariser once more; records of a
    /// summary that was dropped are gone.
    fn carry_summaries(&mut self, stream: u64) {
        let s = &mut *self.s;
        let default = Summariser::default();
        let summariser = self.compactor.summariser().unwrap_or(&default);
        s.summaries.flags.clear();
        s.summaries
            .flags
            .resize(self.book.summaries as usize, false);
        for r in 0..self.progress.appeared {
            let id = s.in_summary[r];
            if id == NONE {
                continue;
            }
            let id = match s.summaries.remap[id as usize] {
                NONE if s.summaries.alive[id as usize] => id,
                NONE => {
                    s.in_summary[r] = NONE;
                    s.kept[r] = false;
                    continue;
                }
                new => {
                    s.in_summary[r] = new;
                    s.kept[r] = s.kept[r]
                        && if self.book.text_summaries {
                            holds_own_fact(
                                &self.h.scored.facts,
                                &s.summaries.facts[new as usize],
                                r,
                            )
                        } else {
                            summariser.keeps(self.flags[r], self.h.kinds[r], stream, r as u64)
                        };
                    new
                }
            };
            if s.kept[r] && self.flags[r] {
                s.summaries.flags[id as usize] = true;
            }
        }
    }

    /// Recomputes which records are present and each layer's use from the entries.
    pub(super) fn recount(&mut self) {
        let s = &mut *self.s;
        s.mark.clear();
        s.mark.resize(self.progress.appeared, 0);
        self.layers.used = [0; 4];
        for i in 0..s.entries.len() {
            let e = s.entries[i];
            let gap = if i == 0 { 0 } else { self.h.separator };
            self.layers.add(&self.h.kinds, e.origin, e.cost + gap);
            match e.origin {
                Origin::Record(r) => s.mark[r as usize] |= VERBATIM,
                Origin::Notes(_) => {
                    for r in 0..self.notes.upto {
                        if s.noted[r] {
                            s.mark[r] |= VERBATIM;
                        }
                    }
                }
                _ => {}
            }
        }
        for r in 0..self.progress.appeared {
            if s.in_summary[r] != NONE && s.kept[r] {
                s.mark[r] |= PARAPHRASED;
            }
        }
        self.retention.present_required = (0..self.progress.appeared)
            .filter(|&r| self.h.truth[r])
            .map(|r| self.presence(r))
            .sum();
    }

    /// How much of record `r` the context holds: 1 verbatim (its entry or the notes); carried
    /// by a summary, 1 for the simulated summariser (it writes every fact of a record it keeps)
    /// and the share of its needed facts a text summary holds; 0 otherwise.
    pub(super) fn presence(&self, r: usize) -> f64 {
        let s = &*self.s;
        let mark = s.mark.get(r).copied().unwrap_or(0);
        if mark & VERBATIM != 0 {
            1.0
        } else if mark & PARAPHRASED == 0 {
            0.0
        } else if self.book.text_summaries {
            let facts = &s.summaries.facts[s.in_summary[r] as usize];
            self.h
                .scored
                .facts
                .carried_share(r, |f| facts.binary_search(&f).is_ok())
        } else {
            1.0
        }
    }
}

/// Keeps the text and facts of the summary just written as summary `id`, reusing buffers.
fn store_text(texts: &mut Vec<String>, all_facts: &mut Vec<Vec<u32>>, ctx: &Context, id: usize) {
    while texts.len() <= id {
        texts.push(String::new());
        all_facts.push(Vec::new());
    }
    texts[id].clear();
    texts[id].push_str(&ctx.summary_text);
    let facts = &mut all_facts[id];
    facts.clear();
    facts.extend_from_slice(&ctx.summary_facts);
    facts.sort_unstable();
    facts.dedup();
}

/// Whether a summary's facts (sorted) hold one of the facts that carry record `r` (its needed
/// facts, or all it introduced when none is needed): a text summary carries a record only
/// through what it says.
fn holds_own_fact(facts: &crate::history::facts::Facts, summary: &[u32], r: usize) -> bool {
    facts
        .carried_by(r)
        .any(|f| summary.binary_search(&f).is_ok())
}
