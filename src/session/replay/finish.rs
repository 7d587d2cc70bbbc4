//! The session's measures once the replay made its last call.

use super::{Replay, VERBATIM};
use crate::session::need::NeedMetrics;
use crate::session::{
    Compactor, FactRetention, LedgerTotals, RecordRetention, SessionMetrics, SessionRun, TokenBill,
};

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// Hands `emit` the session's measures under each cache, in order, and logs its
    /// compactions under each (see [`Self::close_ledgers`]).
    pub(super) fn finish(mut self, mut emit: impl FnMut(SessionMetrics)) {
        let measures = self.measures();
        for c in 0..self.s.bills.len() {
            let ledger = self.close_ledgers(c);
            let b = &mut self.s.bills[c];
            if measures.run.completed {
                let rest = b.cache.rest(&self.h.recorded);
                b.total.add(rest);
            }
            emit(SessionMetrics {
                bill: TokenBill {
                    input_tokens: b.total.input,
                    cache_read_tokens: b.total.cache_read,
                    cache_write_tokens: b.total.cache_write,
                    uncached_input_tokens: b.total.uncached,
                    output_tokens: b.total.output,
                    cost: b.total.cost(&b.prices),
                },
                needs: self.retention.needs.finish(b.refetch, &b.prices),
                ledger,
                ..measures
            });
        }
    }

    /// The session's measures but for what it cost (left at their defaults).
    fn measures(&mut self) -> SessionMetrics {
        self.recount();
        // Over every required record and fact of the history (the records that appeared are
        // all of them, for a run that completed).
        let (_, facts_kept) = self.facts_present();
        let facts_total = self.h.scored.required_facts.len() as u32;
        let needed_facts_total = self.h.scored.needed_facts.len() as u32;
        self.mark_summary_facts();
        let needed_facts_kept = self
            .h
            .scored
            .needed_facts
            .iter()
            .filter(|&&f| self.held_by_owner(f))
            .count() as u32;
        let s = &*self.s;
        let mut verbatim = 0u32;
        let mut any = 0.0;
        for r in 0..self.progress.appeared {
            if self.h.truth[r] {
                verbatim += u32::from(s.mark[r] & VERBATIM != 0);
                any += self.presence(r);
            }
        }
        let required_total = self.h.required_total() as u32;
        let completed = self.progress.exit_call.is_none();
        // End-of-run measures only where the run ended: a run that died has no end.
        let end = |x: Option<f64>| x.filter(|_| completed);
        let share = |part: f64| end((required_total > 0).then(|| part / f64::from(required_total)));
        let of =
            |kept: u32, total: u32| end((total > 0).then(|| f64::from(kept) / f64::from(total)));
        let at_end = |x: u32| completed.then_some(x);
        let regions = match completed {
            true => self.regions(),
            false => [None; 3],
        };
        let stale = crate::session::Stale {
            end: at_end(self.stale_now()),
            calls: self.retention.stale_calls,
        };
        SessionMetrics {
            run: SessionRun {
                records: self.h.len() as u32,
                calls: self.progress.calls,
                compactions: self.trigger.compactions,
                failed_compactions: self.book.failed,
                model_calls: self.progress.calls + self.book.summary_calls,
                summary_calls: self.book.summary_calls,
                storms: self.trigger.storms,
                guard_tripped: self.trigger.guard_tripped,
                exit_context: !completed,
                completed,
                exit_call: self.progress.exit_call,
                peak_input: self.progress.peak_input,
                final_context: self.context_cost(),
                final_usage: self.trigger.usage,
            },
            bill: TokenBill::default(),
            retention: RecordRetention {
                noted: s.noted.iter().filter(|&&x| x).count() as u32,
                required_total,
                required_verbatim: at_end(verbatim),
                required_any: completed.then_some(any),
                retention_end: share(f64::from(verbatim)),
                retention_any_end: share(any),
                retention_at_need: (self.retention.need_pairs > 0)
                    .then(|| self.retention.need_hits / self.retention.need_pairs as f64),
                regions,
            },
            facts: FactRetention {
                facts_total,
                facts_kept: at_end(facts_kept),
                fact_retention_end: of(facts_kept, facts_total),
                fact_retention_at_need: (self.retention.need_facts > 0).then(|| {
                    self.retention.need_facts_kept as f64 / self.retention.need_facts as f64
                }),
                needed_facts_total,
                needed_facts_kept: at_end(needed_facts_kept),
                needed_fact_retention_end: of(needed_facts_kept, needed_facts_total),
                needed_uses: self.retention.need_uses,
                needed_fact_retention_at_need: (self.retention.need_uses > 0)
                    .then(|| self.retention.need_uses_met as f64 / self.retention.need_uses as f64),
            },
            needs: NeedMetrics::default(),
            ledger: LedgerTotals::default(),
            stale,
        }
    }
}
