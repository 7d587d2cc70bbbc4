//! What the context holds when an agent call needs it: the facts of the required records, the
//! uses of needed facts, the needs met or fetched again, and the stale inputs.

use super::{Replay, PARAPHRASED, VERBATIM};
use crate::history::recovery::NO_FILE;
use crate::history::{starts_call, Kind};
use crate::session::context::Origin;
use crate::session::need::Fetch;
use crate::session::{Compactor, RefetchRow};

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// The supersessions the context is stale on now: a record held is one present in any form.
    pub(super) fn stale_now(&self) -> u32 {
        let pairs = &self.h.text.source.supersessions;
        if pairs.is_empty() {
            return 0;
        }
        crate::stale::count(pairs, self.progress.appeared, |r| self.presence(r) > 0.0)
    }

    /// Counts the uses of needed facts of required records by the agent call whose output is
    /// records `a..b`, and those the call's input (the context now) holds.
    pub(super) fn needed_uses(&mut self, a: usize, b: usize) {
        let facts = &self.h.scored.facts;
        let needed = &self.h.scored.needed_facts;
        let mut uses = std::mem::take(&mut self.s.uses);
        uses.clear();
        for r in a..b {
            uses.extend(
                facts
                    .holds(r)
                    .iter()
                    .copied()
                    .filter(|&f| facts.is_use(f, r) && needed.binary_search(&f).is_ok()),
            );
        }
        uses.sort_unstable();
        uses.dedup();
        if !uses.is_empty() {
            self.retention.need_uses += uses.len() as u64;
            self.retention.need_uses_met += u64::from(self.facts_kept_of(&uses));
        }
        self.s.uses = uses;
    }

    /// A run that ran out of context at the agent call starting at record `from`: that call
    /// and every later one would have needed what had appeared before it, and got nothing.
    pub(super) fn lost_after_exit(&mut self, from: usize) {
        let h = self.h;
        let (kinds, n) = (&h.kinds, h.len());
        let mut required = self.retention.appeared_required;
        let mut r = from;
        while r < n {
            if starts_call(kinds, r) {
                let mut end = r + 1;
                while end < n && kinds[end] == Kind::ToolCall {
                    end += 1;
                }
                self.retention.need_pairs += u64::from(required);
                let introduced = h.scored.facts.introduced_by(r);
                self.retention.need_facts +=
                    h.scored.required_facts.partition_point(|&f| f < introduced) as u64;
                for j in r..end {
                    let uses = h
                        .scored
                        .facts
                        .holds(j)
                        .iter()
                        .filter(|&&f| {
                            h.scored.facts.is_use(f, j)
                                && h.scored.needed_facts.binary_search(&f).is_ok()
                        })
                        .count() as u64;
                    self.retention.need_uses += uses;
                    let first_returns = h
                        .scored
                        .facts
                        .holds(j)
                        .iter()
                        .filter(|&&f| self.is_first_return(f, j))
                        .count() as u64;
                    self.retention.needs.lost(first_returns, uses);
                    required += u32::from(h.truth[j]);
                }
                r = end;
            } else {
                required += u32::from(h.truth[r]);
                r += 1;
            }
        }
    }

    /// The facts of the required records that appeared, and how many of them the context's
    /// text holds: a record present in any form ([`Self::recount`]'s marks: its entry, the
    /// notes, or a summary that still carries it and so writes its facts) holds every fact it
    /// holds.
    pub(super) fn facts_present(&mut self) -> (u32, u32) {
        // The required facts of the records that appeared: those introduced before `appeared`.
        let all = &self.h.scored.required_facts;
        let introduced = self.h.scored.facts.introduced_by(self.progress.appeared);
        let appeared = &all[..all.partition_point(|&f| f < introduced)];
        (appeared.len() as u32, self.facts_kept_of(appeared))
    }

    /// How many of `facts` (ascending) the context's text holds now.
    pub(super) fn facts_kept_of(&mut self, appeared: &[u32]) -> u32 {
        let s = &mut *self.s;
        let facts = &self.h.scored.facts;
        if !self.book.text_summaries {
            let mark = &s.mark;
            return facts.kept(
                appeared,
                |j| mark.get(j).is_some_and(|&m| m != 0),
                |_| false,
            );
        }
        // A text summary holds the facts found in its text, not those of the records it carries.
        s.fact_mark.clear();
        s.fact_mark.resize(facts.len(), false);
        for e in &s.entries {
            if let Origin::Summary(id) = e.origin {
                for &f in &s.summaries.facts[id as usize] {
                    s.fact_mark[f as usize] = true;
                }
            }
        }
        let (mark, fact_mark) = (&s.mark, &s.fact_mark);
        facts.kept(
            appeared,
            |j| mark.get(j).is_some_and(|&m| m & VERBATIM != 0),
            |f| fact_mark[f as usize],
        )
    }

    /// Whether record `r`'s holding fact `f` is the first return of a needed fact of a
    /// required record (a need, [`crate::session::need`]).
    pub(super) fn is_first_return(&self, f: u32, r: usize) -> bool {
        self.h.scored.facts.first_return(f) == Some(r as u32)
            && self.h.scored.needed_facts.binary_search(&f).is_ok()
    }

    /// The needs of agent call `call`, whose output is records `a..b` (see [`crate::session::need`]):
    /// its first returns, met or not, and its uses whose token the input lacks, recovered (the
    /// records to fetch again, marked fetched) or lost.
    pub(super) fn needs_of_call(&mut self, call: u32, a: usize, b: usize) -> Fetch {
        let mut fetch = Fetch::default();
        self.mark_summary_facts();
        let facts = &self.h.scored.facts;
        for r in a..b {
            for &f in facts.holds(r) {
                if self.is_first_return(f, r) {
                    fetch.first_returns += 1;
                    // An owner in this very output (a long response) was written by the agent
                    // as it used it.
                    let owner = facts.owner(f);
                    fetch.first_returns_met += u64::from(owner >= a || self.held_by_owner(f));
                }
            }
        }
        self.reread_named_files(call, a, b, &mut fetch);
        // The call's uses, each fact once (as `needed_uses` counts them).
        let facts = &self.h.scored.facts;
        let mut uses = std::mem::take(&mut self.s.uses);
        uses.clear();
        for r in a..b {
            uses.extend(facts.holds(r).iter().copied().filter(|&f| {
                facts.is_use(f, r) && self.h.scored.needed_facts.binary_search(&f).is_ok()
            }));
        }
        uses.sort_unstable();
        uses.dedup();
        let files = &self.h.fetchable.files;
        for &f in &uses {
            if self.held_anywhere(f) {
                continue;
            }
            let held = facts.held_by(f);
            let before = &held[..held.partition_point(|&j| (j as usize) < a)];
            // A record fetched again since the compaction serves it, if it is as it was.
            if before
                .iter()
                .any(|&j| self.s.refetched[j as usize] && files.recoverable_at(j as usize, a))
            {
                fetch.recovered += 1;
                continue;
            }
            // A listing, a search, a page or a read-only command's output is run again; a file
            // is read again only when the agent names it (above).
            match before.iter().rev().find(|&&j| {
                files.view_of[j as usize] == NO_FILE && files.recoverable_at(j as usize, a)
            }) {
                Some(&j) => {
                    fetch.recovered += 1;
                    self.fetch_again(call, a, j as usize, &mut fetch);
                }
                None => fetch.lost += 1,
            }
        }
        self.s.uses = uses;
        fetch
    }

    /// The files the agent names in the output `a..b` (a call or its text) that it viewed
    /// before, while no view of them is in the context: it reads each again (its latest view),
    /// whether or not it edited the file since. A call that views the file is that read itself.
    pub(super) fn reread_named_files(&mut self, call: u32, a: usize, b: usize, fetch: &mut Fetch) {
        let h = self.h;
        if h.fetchable.file_names.is_empty() {
            return;
        }
        for r in a..b {
            if !matches!(h.kinds[r], Kind::Assistant | Kind::ToolCall) {
                continue;
            }
            for &f in h.scored.facts.holds(r) {
                let at = h.fetchable.file_names.partition_point(|&(x, _)| x < f);
                for &(_, file) in h.fetchable.file_names[at..]
                    .iter()
                    .take_while(|&&(x, _)| x == f)
                {
                    if h.fetchable.files.call_views[r] == file {
                        continue;
                    }
                    let views = &h.fetchable.files.files[file as usize].views;
                    let before = &views[..views.partition_point(|&v| (v as usize) < a)];
                    let Some(&latest) = before.last() else {
                        continue;
                    };
                    let s = &*self.s;
                    let present = before.iter().any(|&v| {
                        s.refetched[v as usize]
                            || s.mark.get(v as usize).is_some_and(|&m| m & VERBATIM != 0)
                    });
                    if !present {
                        self.fetch_again(call, a, latest as usize, fetch);
                    }
                }
            }
        }
    }

    /// Fetches record `j` again before the agent call starting at record `a`.
    pub(super) fn fetch_again(&mut self, call: u32, a: usize, j: usize, fetch: &mut Fetch) {
        self.s.refetched[j] = true;
        fetch.records += self.h.costs[j];
        fetch.call_output +=
            crate::history::import::file_view::producing_call_at(self.h.records(), j)
                .map_or(0, |c| self.h.costs[c]);
        if let Some(t) = self.trace.as_deref_mut() {
            t.refetches.push(RefetchRow {
                call,
                at: a,
                record: j,
            });
        }
    }

    /// Whether the context's text holds fact `f` at all: any record holding the token
    /// (verbatim, in the notes, or carried by a simulated summary) or a text summary naming it.
    pub(super) fn held_anywhere(&self, f: u32) -> bool {
        let s = &*self.s;
        let verbatim_only = if self.book.text_summaries {
            VERBATIM
        } else {
            !0
        };
        s.fact_mark[f as usize]
            || self.h.scored.facts.held_by(f).iter().any(|&j| {
                s.mark
                    .get(j as usize)
                    .is_some_and(|&m| m & verbatim_only != 0)
            })
    }

    /// Marks in `fact_mark` the facts the text summaries in the context hold (nothing for the
    /// simulated summariser, whose summaries carry records, not text).
    pub(super) fn mark_summary_facts(&mut self) {
        let s = &mut *self.s;
        s.fact_mark.clear();
        s.fact_mark.resize(self.h.scored.facts.len(), false);
        if !self.book.text_summaries {
            return;
        }
        for e in &s.entries {
            if let Origin::Summary(id) = e.origin {
                for &f in &s.summaries.facts[id as usize] {
                    s.fact_mark[f as usize] = true;
                }
            }
        }
    }

    /// Whether the context holds fact `f` through its owner: the owner verbatim (its entry or
    /// the notes), or a summary that holds the fact (a text summary whose text has it, marked
    /// by [`Self::mark_summary_facts`]; a simulated one carrying a record that holds it, whose
    /// facts it writes). A later record that merely repeats the token does not count.
    pub(super) fn held_by_owner(&self, f: u32) -> bool {
        let s = &*self.s;
        let facts = &self.h.scored.facts;
        let mark = |j: usize| s.mark.get(j).copied().unwrap_or(0);
        if mark(facts.owner(f)) & VERBATIM != 0 || s.fact_mark[f as usize] {
            return true;
        }
        !self.book.text_summaries
            && facts
                .held_by(f)
                .iter()
                .any(|&j| mark(j as usize) & PARAPHRASED != 0)
    }
}
