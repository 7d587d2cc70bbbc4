//! The columns of one replayed session, declared once for every table with a session per
//! row: the sessions table of a sweep and the row `ctxlab session --format metrics` prints.
//! Each group of columns is one topic; [`columns`] lays them out in table order.

use super::Table;
use crate::session::SessionMetrics;
use crate::strategy::SummarySize;

/// What the session columns read from a table's grid (`Self`) and its row `R`.
pub trait SessionSource<R> {
    /// The session's measures.
    fn metrics(row: &R) -> &SessionMetrics;
    /// The cache it was billed under, as its canonical spec.
    fn cache<'a>(&'a self, row: &'a R) -> &'a str;
    /// The summary size its strategy ran with (`None`: it writes no summary).
    fn summary_size(&self, row: &R) -> Option<SummarySize>;
}

/// Every session column, in table order. Measures (`.measure()`) are summarised per group
/// where the table has groups (a sweep's).
pub fn columns<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    settings(losses(needs(facts(retention(bill(runs(t)))))))
}

/// What the run did: its calls, its compactions and how it ended.
fn runs<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t.whole("records", |_, r| u64::from(G::metrics(r).run.records))
        .whole("calls", |_, r| u64::from(G::metrics(r).run.calls))
        .whole("model_calls", |_, r| {
            u64::from(G::metrics(r).run.model_calls)
        })
        .measure()
        .whole("summary_calls", |_, r| {
            u64::from(G::metrics(r).run.summary_calls)
        })
        .measure()
        .whole("compactions", |_, r| {
            u64::from(G::metrics(r).run.compactions)
        })
        .measure()
        .whole("failed_compactions", |_, r| {
            u64::from(G::metrics(r).run.failed_compactions)
        })
        .measure()
        .whole("storms", |_, r| u64::from(G::metrics(r).run.storms))
        .measure()
        .flag("guard_tripped", |_, r| G::metrics(r).run.guard_tripped)
        .measure()
        .flag("exit_context", |_, r| G::metrics(r).run.exit_context)
        .measure()
        .opt_whole("exit_call", |_, r| {
            G::metrics(r).run.exit_call.map(u64::from)
        })
        // Reached its last call: the cost measures compare only sessions that both did.
        .flag("completed", |_, r| G::metrics(r).run.completed)
        .measure()
}

/// The session's bill: the tokens of every model call, by how the cache billed them, and
/// their cost; then the context's size (the largest input, the context and usage at the end).
fn bill<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t.whole("input_tokens", |_, r| G::metrics(r).bill.input_tokens)
        .measure()
        .whole("cache_read_tokens", |_, r| {
            G::metrics(r).bill.cache_read_tokens
        })
        .measure()
        .whole("cache_write_tokens", |_, r| {
            G::metrics(r).bill.cache_write_tokens
        })
        .measure()
        .whole("uncached_input_tokens", |_, r| {
            G::metrics(r).bill.uncached_input_tokens
        })
        .measure()
        .whole("output_tokens", |_, r| G::metrics(r).bill.output_tokens)
        .measure()
        .whole("billed_tokens", |_, r| billed_tokens(G::metrics(r)))
        .measure()
        .paired_completed()
        .real("cost", |_, r| G::metrics(r).bill.cost)
        .measure()
        .paired_completed()
        .whole("peak_input", |_, r| G::metrics(r).run.peak_input)
        .measure()
        .whole("final_context", |_, r| G::metrics(r).run.final_context)
        .whole("final_usage", |_, r| G::metrics(r).run.final_usage)
}

/// Required records kept: at the end, in any form, and when later calls needed them.
fn retention<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t.whole("noted", |_, r| u64::from(G::metrics(r).retention.noted))
        .whole("required_total", |_, r| {
            u64::from(G::metrics(r).retention.required_total)
        })
        // End-of-run measures are null for a run that did not complete: it has no end.
        .opt_whole("required_verbatim", |_, r| {
            G::metrics(r).retention.required_verbatim.map(u64::from)
        })
        .opt_real("required_any", |_, r| G::metrics(r).retention.required_any)
        .opt_real("retention_end", |_, r| {
            G::metrics(r).retention.retention_end
        })
        .share()
        .measure()
        .paired()
        .opt_real("retention_any_end", |_, r| {
            G::metrics(r).retention.retention_any_end
        })
        .share()
        .measure()
        .paired()
        .opt_real("retention_at_need", |_, r| {
            G::metrics(r).retention.retention_at_need
        })
        .share()
        .measure()
        .paired()
}

/// Facts of the required records kept, and the needed ones (a later record uses them again).
fn facts<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t.whole("facts_total", |_, r| {
        u64::from(G::metrics(r).facts.facts_total)
    })
    .opt_whole("facts_kept", |_, r| {
        G::metrics(r).facts.facts_kept.map(u64::from)
    })
    .opt_real("fact_retention_end", |_, r| {
        G::metrics(r).facts.fact_retention_end
    })
    .share()
    .measure()
    .paired()
    .opt_real("fact_retention_at_need", |_, r| {
        G::metrics(r).facts.fact_retention_at_need
    })
    .share()
    .measure()
    .paired()
    .whole("needed_facts_total", |_, r| {
        u64::from(G::metrics(r).facts.needed_facts_total)
    })
    .opt_whole("needed_facts_kept", |_, r| {
        G::metrics(r).facts.needed_facts_kept.map(u64::from)
    })
    .opt_real("needed_fact_retention_end", |_, r| {
        G::metrics(r).facts.needed_fact_retention_end
    })
    .measure()
    .share()
    .paired()
    .whole("needed_uses", |_, r| G::metrics(r).facts.needed_uses)
    .opt_real("needed_fact_retention_at_need", |_, r| {
        G::metrics(r).facts.needed_fact_retention_at_need
    })
    .measure()
    .share()
    .paired()
}

/// Needed facts at their first return, and what re-reading the lost ones costs.
fn needs<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t
        // Needed facts at their first return, and the uses the context missed: recovered by a
        // re-read, or lost (`crate::session::need`).
        .whole("first_returns", |_, r| G::metrics(r).needs.first_returns)
        .measure()
        .whole("needs_recovered", |_, r| G::metrics(r).needs.recovered)
        .measure()
        .paired()
        .whole("needs_lost", |_, r| G::metrics(r).needs.lost)
        .measure()
        .paired()
        .opt_real("needed_fact_retention_first_return", |_, r| {
            G::metrics(r).needs.first_return_retention()
        })
        .measure()
        .share()
        .paired()
        // What the re-reads add to the bill, beside the replay's own.
        .whole("refetch_calls", |_, r| {
            u64::from(G::metrics(r).needs.refetch_calls)
        })
        .measure()
        .paired_completed()
        .whole("refetch_tokens", |_, r| {
            G::metrics(r).needs.refetch_tokens()
        })
        .measure()
        .paired_completed()
        .real("refetch_cost", |_, r| G::metrics(r).needs.refetch_cost)
        .measure()
        .paired_completed()
        .real("cost_with_refetch", |_, r| {
            G::metrics(r).bill.cost + G::metrics(r).needs.refetch_cost
        })
        .measure()
        .paired_completed()
}

/// Where the loss falls, what the compactions cost the cache, and the stale decisions held.
fn losses<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t
        // Where the loss falls: required records carried at the end, by third of the history
        // (`crate::session::CompactionEvent`'s regions), over each third's required records.
        .opt_real("retention_oldest", |_, r| {
            G::metrics(r).retention.regions[0]
        })
        .share()
        .measure()
        .opt_real("retention_middle", |_, r| {
            G::metrics(r).retention.regions[1]
        })
        .share()
        .measure()
        .opt_real("retention_newest", |_, r| {
            G::metrics(r).retention.regions[2]
        })
        .share()
        .measure()
        // The compactions' ledgers summed (`crate::session::ledger`): compactions whose next
        // call could not read part of the cached prefix, the cache writes they caused, and the
        // dollars of their summary calls.
        .whole("cache_breaks", |_, r| {
            u64::from(G::metrics(r).ledger.cache_breaks)
        })
        .measure()
        .whole("compaction_cache_write_tokens", |_, r| {
            G::metrics(r).ledger.cache_write_tokens
        })
        .measure()
        .real("compaction_cost", |_, r| G::metrics(r).ledger.cost)
        .measure()
        // Supersessions held on the old side without the new (`crate::stale`): at the end of a
        // completed run, and summed over agent calls (each call's input).
        .opt_whole("stale_end", |_, r| G::metrics(r).stale.end.map(u64::from))
        .measure()
        .whole("stale_calls", |_, r| G::metrics(r).stale.calls)
        .measure()
}

/// What the session was billed under and the summary size it ran with.
fn settings<G: SessionSource<R> + 'static, R: 'static>(t: Table<G, R>) -> Table<G, R> {
    t
        // The cache that billed the session (`session.cache`, or one of `session.caches`).
        .text("cache", |g: &G, _, r: &R| g.cache(r))
        // The summary's size the strategy ran with (the summary-size axis's, else its own
        // default): a share of what it replaces and a token cap; null for a strategy that
        // writes no summary or one of a fixed size (`summary_size`).
        .opt_real("summary_ratio", |g, r| summary_share(g, r).map(|(q, _)| q))
        .opt_whole("summary_cap", |g, r| {
            summary_share(g, r).map(|(_, cap)| cap)
        })
}

/// Every token a session was billed for, whether read from cache or not: input + output of
/// every model call, compactions included.
pub fn billed_tokens(m: &SessionMetrics) -> u64 {
    m.bill.input_tokens + m.bill.output_tokens
}

/// The (share, cap) of a session's strategy's summaries, when it sizes them by a share.
fn summary_share<G: SessionSource<R>, R>(g: &G, r: &R) -> Option<(f64, u64)> {
    match g.summary_size(r)? {
        SummarySize::Ratio { ratio, max } => Some((ratio, max)),
        SummarySize::Fixed(_) => None,
    }
}
