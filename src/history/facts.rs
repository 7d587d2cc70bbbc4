//! Facts: what a record says that no record before it said. A record's facts are the
//! distinctive tokens ([`distinctive_tokens`], the `hindsight` label rule's tokens: paths, file
//! names, identifiers, error codes, hashes) it is the first in its history to hold. Real and
//! generated histories are scored alike: generated ones plant a token of their own in every
//! record long enough to hold one (see [`crate::history::generate`]). A tool's own name
//! (`read_file`, `str_replace_editor`) is no fact: every call of the tool repeats it, and it
//! says nothing about the task.
//!
//! A context keeps a fact when the token appears anywhere in its text: in any record kept
//! verbatim (the record that introduced it or a later one that repeats it), or in a summary's
//! text. A stand-in (`[output omitted]`, `<MASKED>`) is the harness's fixed text and names no
//! record's facts. `fact_retention` is the share of the required records' facts a context keeps.
//!
//! **Needed facts.** Most distinctive tokens are never used again (a directory listing's names
//! above all), so a fact is *needed* when a record written by the model (`assistant` or
//! `tool_call`) more than `min_gap` records after the record that introduced it holds it again:
//! the agent came back for it, as the `hindsight` label rule decides (default `min_gap = 2`: the
//! next two records hold the turn's results verbatim under every strategy, so a use there says
//! nothing about what compaction must keep). Unlike `hindsight`, a token the model introduced
//! itself can be needed: a fact is about information, not about who wrote it.
//! `needed_fact_retention` is the share of the required records' needed facts a context keeps.

use crate::history::import::label::DEFAULT_MIN_GAP;
use crate::history::tokens::{distinctive_tokens, for_each_record_token};
use crate::history::History;
use std::collections::{HashMap, HashSet};

/// The facts of one history. Facts are numbered in order of first appearance, so the facts a
/// record introduces are one contiguous range of ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// `owned[i]..owned[i + 1]`: the facts record `i` introduces.
    owned: Vec<u32>,
    /// `held_at[f]..held_at[f + 1]` indexes `held_by`: the records holding fact `f`, ascending
    /// (its owner first).
    held_at: Vec<u32>,
    held_by: Vec<u32>,
    /// Per record, the facts it holds (its own and earlier ones it repeats), ascending:
    /// `holds_at[i]..holds_at[i + 1]` indexes `holds`.
    holds_at: Vec<u32>,
    holds: Vec<u32>,
    /// Each fact's token.
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    /// Per fact: whether a later record uses it again (see the module documentation).
    needed: Vec<bool>,
    /// Per fact: the first record using it again, if it is needed.
    used_by: Vec<Option<u32>>,
    /// Per fact: its first return, if it has one (see [`Facts::first_return`]).
    first_return: Vec<Option<u32>>,
    /// Per record: written by the model (its facts are uses); and the gap a use must clear.
    model_written: Vec<bool>,
    min_gap: usize,
}

/// What [`Facts::kept_by_owner`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kept {
    /// Facts held anywhere in the context.
    pub facts: u32,
    /// Needed facts held anywhere, a later record repeating the token included.
    pub needed_any_record: u32,
    /// Needed facts kept through their owner or a summary that holds them.
    pub needed_by_owner: u32,
}

/// Whether a record of this kind is written by the model (its uses of a fact are uses).
fn written_by_model(kind: crate::history::Kind) -> bool {
    matches!(
        kind,
        crate::history::Kind::Assistant | crate::history::Kind::ToolCall
    )
}

impl Facts {
    /// The facts of `history`, needed under the default `min_gap`.
    pub fn of(history: &History) -> Facts {
        Facts::with_min_gap(history, DEFAULT_MIN_GAP)
    }

    /// The facts of `history`; a fact is needed when a model-written record more than
    /// `min_gap` records after its owner holds it.
    pub fn with_min_gap(history: &History, min_gap: usize) -> Facts {
        Facts::excluding_uses(history, min_gap, &[])
    }

    /// [`Facts::with_min_gap`], where the records marked in `not_uses` use nothing (what
    /// `calibrate --rereads` holds out: a re-read call names the file it re-reads, which must
    /// not make the file's facts needed).
    pub fn excluding_uses(history: &History, min_gap: usize, not_uses: &[bool]) -> Facts {
        let mut f = Facts::default();
        let mut holders: Vec<Vec<u32>> = Vec::new();
        let tools: HashSet<&str> = history
            .records
            .iter()
            .filter_map(|r| r.tool.as_deref())
            .collect();
        // One record's tokens, owned only for the rare tool call whose JSON is parsed (its
        // strings do not outlive the parse); otherwise borrowed from the text, so finding the
        // facts of a history allocates for new facts alone.
        let mut tokens: Vec<String> = Vec::new();
        let mut ids: Vec<u32> = Vec::new();
        f.owned.push(0);
        f.holds_at.push(0);
        for (i, r) in history.records.iter().enumerate() {
            ids.clear();
            tokens.clear();
            for_each_record_token(r, |t| {
                if tools.contains(t) {
                    return;
                }
                match f.ids.get(t) {
                    Some(&id) => ids.push(id),
                    None => tokens.push(t.to_string()),
                }
            });
            // New tokens become facts in sorted order, so fact ids do not depend on hashing.
            tokens.sort_unstable();
            tokens.dedup();
            for t in tokens.drain(..) {
                let id = f.names.len() as u32;
                let name: Box<str> = t.into();
                f.ids.insert(name.clone(), id);
                f.names.push(name);
                holders.push(Vec::new());
                ids.push(id);
            }
            ids.sort_unstable();
            ids.dedup();
            for &id in &ids {
                holders[id as usize].push(i as u32);
            }
            f.holds.extend_from_slice(&ids);
            f.holds_at.push(f.holds.len() as u32);
            f.owned.push(f.names.len() as u32);
        }
        f.min_gap = min_gap;
        f.model_written = history
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| written_by_model(r.kind) && !not_uses.get(i).copied().unwrap_or(false))
            .collect();
        f.held_at.push(0);
        for h in holders {
            // The owner comes first; a use is a model-written holder beyond the gap.
            let owner = h[0] as usize;
            let use_ = h
                .iter()
                .copied()
                .find(|&j| j as usize > owner + min_gap && f.model_written[j as usize]);
            // The first time the model writes the token after its owner: a return when it is
            // beyond the gap, a restatement (after which every use echoes it) when not.
            let first_written = h[1..]
                .iter()
                .copied()
                .find(|&j| f.model_written[j as usize]);
            f.first_return
                .push(first_written.filter(|&j| j as usize > owner + min_gap));
            f.used_by.push(use_);
            f.needed.push(use_.is_some());
            f.held_by.extend(h);
            f.held_at.push(f.held_by.len() as u32);
        }
        f
    }

    /// Whether record `r`'s holding fact `f` is a use of it: `r` is written by the model and
    /// more than `min_gap` records after the fact's owner.
    pub fn is_use(&self, f: u32, r: usize) -> bool {
        self.model_written[r] && r > self.held_by(f)[0] as usize + self.min_gap
    }

    /// The `min_gap` the needed facts were found with.
    pub fn min_gap(&self) -> usize {
        self.min_gap
    }

    /// Whether fact `f` is needed: a later record uses it again.
    pub fn is_needed(&self, f: u32) -> bool {
        self.needed[f as usize]
    }

    /// The first record that uses fact `f` again (`None`: never used again).
    pub fn used_by(&self, f: u32) -> Option<u32> {
        self.used_by[f as usize]
    }

    /// Fact `f`'s *first return*: the first model-written record after its owner that holds
    /// it, when that record is more than `min_gap` records after the owner. `None` when the
    /// model never writes it again, or first restates it within the gap (the turn that read
    /// it): every later use then repeats the agent's own words, which any strategy keeping
    /// the agent's recent messages meets. A first return is always a use, so a fact with one
    /// is needed.
    pub fn first_return(&self, f: u32) -> Option<u32> {
        self.first_return[f as usize]
    }

    /// The record that introduced fact `f`: the one a needed fact is credited through.
    pub fn owner(&self, f: u32) -> usize {
        self.held_by(f)[0] as usize
    }

    /// The needed ones among `facts` (ascending stays ascending).
    pub fn needed_of(&self, facts: &[u32]) -> Vec<u32> {
        facts
            .iter()
            .copied()
            .filter(|&f| self.is_needed(f))
            .collect()
    }

    /// The facts record `i` introduces that are needed; when it introduces none that is
    /// needed, all it introduces (what a summary must hold to carry the record).
    pub fn carried_by(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let any_needed = self.owned(i).any(|f| self.is_needed(f));
        self.owned(i)
            .filter(move |&f| !any_needed || self.is_needed(f))
    }

    /// The share of record `i` a summary holding the facts `in_summary` tells carries: the
    /// share of its needed facts it holds (of all its facts when none is needed; 0 for a
    /// record without facts, of which a text says nothing checkable).
    pub fn carried_share(&self, i: usize, in_summary: impl Fn(u32) -> bool) -> f64 {
        let (mut held, mut of) = (0u32, 0u32);
        for f in self.carried_by(i) {
            of += 1;
            held += u32::from(in_summary(f));
        }
        if of == 0 {
            0.0
        } else {
            f64::from(held) / f64::from(of)
        }
    }

    /// The facts the records marked in `truth` introduce, ascending: what `fact_retention`
    /// scores (kept once per history, so scoring a cell does not walk every record).
    pub fn required(&self, truth: &[bool]) -> Vec<u32> {
        truth
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t)
            .flat_map(|(i, _)| self.owned(i))
            .collect()
    }

    /// How many of `facts` a context keeps, given which records it holds as text
    /// (`has_text(j)`: verbatim, or carried by a summary that writes the record's facts) and
    /// which facts summary texts hold beyond those (`in_summary(f)`).
    pub fn kept(
        &self,
        facts: &[u32],
        has_text: impl Fn(usize) -> bool,
        in_summary: impl Fn(u32) -> bool,
    ) -> u32 {
        facts
            .iter()
            .filter(|&&f| in_summary(f) || self.held_by(f).iter().any(|&j| has_text(j as usize)))
            .count() as u32
    }

    /// How many of `facts` a context keeps in any form (as [`Facts::kept`]), and how many of
    /// the needed ones among them it keeps by each rule: through their owner (the owner
    /// verbatim, `marks(j) & 1`, or a summary holding the fact: a text summary's `in_summary`,
    /// or a simulated summary carrying any record that holds it, `marks(j) & 2`, which
    /// writes the token) and through any record holding the token (`marks(j) != 0`).
    pub fn kept_by_owner(
        &self,
        facts: &[u32],
        marks: impl Fn(usize) -> u8,
        in_summary: impl Fn(u32) -> bool,
    ) -> Kept {
        let mut k = Kept::default();
        for &f in facts {
            let held = self.held_by(f);
            let (mut any, mut summarised) = (0u8, false);
            for &j in held {
                let m = marks(j as usize);
                any |= m;
                summarised |= m & 2 != 0;
            }
            let in_text = in_summary(f);
            if in_text || any != 0 {
                k.facts += 1;
                if self.is_needed(f) {
                    k.needed_any_record += 1;
                    let owner = marks(held[0] as usize) & 1 != 0;
                    k.needed_by_owner += u32::from(owner || in_text || summarised);
                }
            }
        }
        k
    }

    /// Number of facts in the history.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The facts record `i` introduces.
    pub fn owned(&self, i: usize) -> std::ops::Range<u32> {
        self.owned[i]..self.owned[i + 1]
    }

    /// How many facts the first `records` records introduce: facts are numbered in order of
    /// first appearance, so theirs are exactly the ids below this.
    pub fn introduced_by(&self, records: usize) -> u32 {
        self.owned[records]
    }

    /// The records holding fact `f`, ascending.
    pub fn held_by(&self, f: u32) -> &[u32] {
        &self.held_by[self.held_at[f as usize] as usize..self.held_at[f as usize + 1] as usize]
    }

    /// The facts record `i` holds (its own and those it repeats), ascending.
    pub fn holds(&self, i: usize) -> &[u32] {
        &self.holds[self.holds_at[i] as usize..self.holds_at[i + 1] as usize]
    }

    /// Fact `f`'s token.
    pub fn name(&self, f: u32) -> &str {
        &self.names[f as usize]
    }

    /// The fact a token is, if any.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// Calls `found` with every fact of this history whose token occurs in `text` (a summary's
    /// text), tokenised as records are; a fact may be reported more than once.
    pub fn find_in(&self, text: &str, mut found: impl FnMut(u32)) {
        for t in distinctive_tokens(text) {
            if let Some(f) = self.id(t) {
                found(f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Kind, Record};

    fn history(texts: &[&str]) -> History {
        let records = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Record::new(i as u64 + 1, *t).kind(Kind::ToolResult))
            .collect();
        History::new("h", records)
    }

    #[test]
    fn a_record_owns_the_tokens_it_is_first_to_hold() {
        // Record 0 introduces src/lib.rs and lib.rs (a path ending in a file name gives both);
        // record 1 repeats lib.rs and introduces parse_args; record 2 says nothing distinctive.
        let h = history(&["open src/lib.rs now", "lib.rs calls parse_args", "ok then"]);
        let f = Facts::of(&h);
        assert_eq!(f.len(), 3);
        let names = |r: std::ops::Range<u32>| r.map(|i| f.name(i).to_string()).collect::<Vec<_>>();
        assert_eq!(names(f.owned(0)), ["lib.rs", "src/lib.rs"]);
        assert_eq!(names(f.owned(1)), ["parse_args"]);
        assert!(f.owned(2).is_empty());
        assert_eq!(f.held_by(f.id("lib.rs").unwrap()), [0, 1]);
        assert_eq!(
            f.holds(1),
            [f.id("lib.rs").unwrap(), f.id("parse_args").unwrap()]
        );
        // Required 0 and 1: 3 facts.
        assert_eq!(f.required(&[true, true, false]).len(), 3);
        // Only record 1 kept: lib.rs (repeated there) and parse_args survive, src/lib.rs not.
        assert_eq!(
            f.kept(&f.required(&[true, true, false]), |j| j == 1, |_| false),
            2
        );
        // Nothing kept but a summary naming src/lib.rs, which gives lib.rs too.
        let mut in_text = vec![false; f.len()];
        f.find_in("the summary: see src/lib.rs", |x| {
            in_text[x as usize] = true
        });
        assert_eq!(
            f.kept(
                &f.required(&[true, true, false]),
                |_| false,
                |x| in_text[x as usize]
            ),
            2
        );
    }
}
