//! The compaction log: one [`CompactionEvent`] per compaction a session runs, and the retention
//! by region of the history (see [`super::super::CompactionEvent`] for the rules).

use super::Replay;
use crate::history::{starts_call, CostedHistory, Kind};
use crate::session::ledger::Open;
use crate::session::{
    Carried, CompactionEvent, Compactor, FirstTurn, Ledger, LedgerTotals, NextCall,
};

/// The regions of the history a retention is split into: oldest, middle and newest third.
pub const REGIONS: usize = 3;

/// The region of record `r` among the `appeared` records that had appeared: `floor(3r /
/// appeared)`, so the oldest third takes the remainder (10 records: 4, 3, 3).
pub fn region(r: usize, appeared: usize) -> usize {
    (REGIONS * r) / appeared.max(1)
}

/// The records of the first user turn: from the first `user` record up to the next agent call
/// (empty when the history has no user record).
pub fn first_user_turn(kinds: &[Kind]) -> std::ops::Range<usize> {
    let Some(start) = kinds.iter().position(|&k| k == Kind::User) else {
        return 0..0;
    };
    let end = (start + 1..kinds.len())
        .find(|&r| starts_call(kinds, r))
        .unwrap_or(kinds.len());
    start..end
}

/// What a replay writes to the log, and the events still waiting for the agent call after them.
pub(super) struct Log<'a> {
    out: Option<&'a mut Vec<CompactionEvent>>,
    /// The first event of `out` this session logged.
    start: usize,
    /// The first event of `out` not yet told the call after it.
    waiting: usize,
    /// The first ledger (of each cache's, one per compaction, logged or not: the session's
    /// totals need them) not yet told the call after it.
    ledgers_waiting: usize,
    first_turn: std::ops::Range<usize>,
}

impl<'a> Log<'a> {
    pub(super) fn new(out: Option<&'a mut Vec<CompactionEvent>>, h: &CostedHistory) -> Self {
        let first_turn = match out {
            Some(_) => first_user_turn(&h.kinds),
            None => 0..0,
        };
        let start = out.as_deref().map_or(0, Vec::len);
        Log {
            out,
            start,
            waiting: start,
            ledgers_waiting: 0,
            first_turn,
        }
    }
}

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// Logs the compaction just run (`k` 1-based): the context before and after it, the
    /// summaries it wrote, what the context carries now, and its ledger under each cache,
    /// opened with its summary calls' bill there.
    pub(super) fn log_compaction(&mut self, call: u32, tokens: (u64, u64, u64), failed: bool) {
        let freed = tokens.0.saturating_sub(tokens.1);
        for b in &mut self.s.bills {
            b.ledgers
                .push(Open::new(call, freed, &b.summary, &b.prices));
        }
        if self.log.out.is_none() {
            return;
        }
        self.mark_summary_facts();
        let appeared = self.progress.appeared;
        let needed = self.needed_carried(0..appeared);
        let turn = self.log.first_turn.start.min(appeared)..self.log.first_turn.end.min(appeared);
        let turn_needed = self.needed_carried(turn.clone());
        let turn_required = self.required_carried(turn);
        let first_turn = FirstTurn {
            required: turn_required.appeared,
            required_carried: turn_required.carried,
            needed_facts: turn_needed.0,
            needed_facts_carried: turn_needed.1,
        };
        let event = CompactionEvent {
            call,
            k: self.trigger.compactions,
            failed,
            tokens_before: tokens.0,
            tokens_after: tokens.1,
            summary_tokens: tokens.2,
            required: self.required_carried(0..appeared),
            needed_facts: needed.0,
            needed_facts_carried: needed.1,
            first_turn,
            regions: self.regions(),
            // Both are each cache's, written when the session ends.
            next: None,
            ledger: Ledger::default(),
        };
        if let Some(out) = self.log.out.as_deref_mut() {
            out.push(event);
        }
    }

    /// Tells the compactions waiting what the agent call after them paid under each cache (its
    /// `last` bill), and keeps what this call leaves in the cache.
    pub(super) fn log_call(&mut self) {
        let log = &mut self.log;
        let events = match log.out.as_deref() {
            Some(out) => out.len() - log.waiting,
            None => 0,
        };
        for b in &mut self.s.bills {
            let bill = b.last;
            // What the provider held for this call: nothing once its cache expired.
            let held = match b.cache.emptied() {
                true => 0,
                false => b.last_cached,
            };
            for open in &mut b.ledgers[log.ledgers_waiting..] {
                open.first_call(&b.cache, &b.prices, &bill, held);
            }
            let next = NextCall {
                invalidated: b.last_cached.saturating_sub(bill.cache_read),
                cache_write: bill.cache_write,
            };
            b.next.extend(std::iter::repeat_n(next, events));
            b.last_cached = bill.cache_read + bill.cache_write;
        }
        log.ledgers_waiting = self.s.bills[0].ledgers.len();
        log.waiting += events;
    }

    /// Closes the ledgers once the run made its last call: returns their sums under cache
    /// `c`, and writes them and what the call after each paid into the events logged, which
    /// are `c`'s: the first cache's as logged, every other's a copy appended.
    pub(super) fn close_ledgers(&mut self, c: usize) -> LedgerTotals {
        let calls = self.progress.calls;
        let log = &mut self.log;
        let b = &self.s.bills[c];
        if let Some(out) = log.out.as_deref_mut() {
            // One event per ledger, logged in the same order.
            let logged = log.start..log.start + b.ledgers.len();
            let at = match c {
                0 => logged.start,
                _ => {
                    out.extend_from_within(logged.clone());
                    out.len() - logged.len()
                }
            };
            for (i, e) in out[at..].iter_mut().enumerate() {
                e.next = b.next.get(i).copied();
                e.ledger = b.ledgers[i].close(calls);
            }
        }
        LedgerTotals::of(b.ledgers.iter().map(|o| o.close(calls)))
    }

    /// Required records among `records` (all appeared) and how much of them the context holds
    /// in any form (the rule of `required_any`).
    fn required_carried(&self, records: std::ops::Range<usize>) -> Carried {
        let mut c = Carried::default();
        for r in records.filter(|&r| self.h.truth[r]) {
            c.appeared += 1;
            c.carried += self.presence(r);
        }
        c
    }

    /// Needed facts owned by `records` (all appeared), and those the context holds through
    /// their owner. `fact_mark` must hold the summaries' facts ([`Self::mark_summary_facts`]).
    fn needed_carried(&self, records: std::ops::Range<usize>) -> (u32, u32) {
        let facts = &self.h.scored.facts;
        let (mut total, mut kept) = (0, 0);
        for &f in &self.h.scored.needed_facts {
            if records.contains(&facts.owner(f)) {
                total += 1;
                kept += u32::from(self.held_by_owner(f));
            }
        }
        (total, kept)
    }

    /// Retention in any form of the required records that had appeared, by region of the
    /// records that had appeared (`None` for a region without a required record).
    pub(super) fn regions(&self) -> [Option<f64>; REGIONS] {
        let appeared = self.progress.appeared;
        let mut required = [0u32; REGIONS];
        let mut carried = [0.0; REGIONS];
        for r in (0..appeared).filter(|&r| self.h.truth[r]) {
            let g = region(r, appeared);
            required[g] += 1;
            carried[g] += self.presence(r);
        }
        std::array::from_fn(|g| (required[g] > 0).then(|| carried[g] / f64::from(required[g])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_split_by_index_the_oldest_third_taking_the_remainder() {
        // 10 records: 3r/10 is 0 for r = 0..=3, 1 for r = 4..=6, 2 for r = 7..=9.
        let got: Vec<usize> = (0..10).map(|r| region(r, 10)).collect();
        assert_eq!(got, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // 3 records: one each.
        assert_eq!((0..3).map(|r| region(r, 3)).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn the_first_user_turn_runs_to_the_next_call() {
        use Kind::*;
        let kinds = [System, User, ToolResult, Assistant, User];
        assert_eq!(first_user_turn(&kinds), 1..3);
        assert_eq!(first_user_turn(&[System, Assistant]), 0..0);
    }
}
