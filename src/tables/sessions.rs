//! The sessions table (one row per simulated session) and the keys of its summary (one row per
//! strategy × window × ratio × note rate × noise level).

use super::summary::{self, measure_index, GroupRow, Grouping, Keyed, PairRow};
use super::Table;
use crate::sessions::{Coordinates, SessionGrid, SessionKey, SessionRow};

fn config<'g>(g: &'g SessionGrid, k: &SessionKey) -> &'g crate::session::SessionConfig {
    g.config(Coordinates {
        strategy: usize::from(k.strategy),
        window: usize::from(k.window),
        ratio: usize::from(k.ratio),
        note_rate: usize::from(k.note_rate),
        cache: usize::from(k.cache),
        level: usize::from(k.level),
    })
}

/// The cache a session was billed under, as its canonical spec: a column at the end of the
/// tables of a session sweep, so the tables written before the axis keep their column order.
pub fn cache_label(g: &SessionGrid, cache: u16) -> &str {
    &g.caches[usize::from(cache)]
}

/// The columns a session's rows start with (the sessions and the compactions tables): where
/// it sits in the grid, `key` reading it from a row.
pub fn with_keys<R: 'static>(
    table: Table<SessionGrid, R>,
    key: fn(&R) -> SessionKey,
) -> Table<SessionGrid, R> {
    table
        .text("history", move |_: &SessionGrid, names, r: &R| {
            names.get(key(r).history)
        })
        .whole("replicate", move |_, r| u64::from(key(r).replicate))
        .text("noise", move |g, _, r| {
            &g.noise_labels[key(r).level as usize]
        })
        .real("false_negative", move |g, r| {
            g.levels[key(r).level as usize].false_negative
        })
        .real("false_positive", move |g, r| {
            g.levels[key(r).level as usize].false_positive
        })
        // The rates the flags realised on this history (nominal rates above, see `noise`).
        .realised(move |r: &R| key(r).realised)
        .text("strategy", move |g, _, r| {
            &g.labels[key(r).strategy as usize]
        })
        .whole("window", move |g, r| g.windows[key(r).window as usize])
        .real("ratio", move |g, r| g.ratios[key(r).ratio as usize])
        .whole("trigger", move |g, r| config(g, &key(r)).trigger())
        .real("note_rate", move |g, r| {
            g.note_rates[key(r).note_rate as usize]
        })
}

/// Every token a session was billed for, whether read from cache or not: input + output of
/// every model call, compactions included.
pub fn billed_tokens(m: &crate::session::SessionMetrics) -> u64 {
    m.input_tokens + m.output_tokens
}

impl Grouping<SessionRow> for SessionGrid {
    fn groups(&self) -> usize {
        SessionGrid::groups(self)
    }
    fn group(&self, r: &SessionRow) -> usize {
        SessionGrid::group(self, r.coordinates())
    }
    fn strategies(&self) -> usize {
        self.strategies.len()
    }
    fn strategy(&self, r: &SessionRow) -> usize {
        r.key.strategy as usize
    }
    // Sessions run strategy, window, ratio, note rate, cache within a replicate and noise
    // level.
    fn strategy_stride(&self) -> usize {
        self.settings()
    }
    fn group_strategy(&self, group: usize) -> usize {
        self.group_coordinates(group).strategy
    }
    fn completed(&self, r: &SessionRow) -> bool {
        r.metrics.completed
    }
}

/// The sessions table, column by column. Measures (`.measure()`) are summarised per group.
pub fn table() -> Table<SessionGrid, SessionRow> {
    with_keys(Table::new("sessions"), SessionRow::key)
        .whole("records", |_, r| u64::from(r.metrics.records))
        .whole("calls", |_, r| u64::from(r.metrics.calls))
        .whole("model_calls", |_, r| u64::from(r.metrics.model_calls))
        .measure()
        .whole("summary_calls", |_, r| u64::from(r.metrics.summary_calls))
        .measure()
        .whole("compactions", |_, r| u64::from(r.metrics.compactions))
        .measure()
        .whole("failed_compactions", |_, r| {
            u64::from(r.metrics.failed_compactions)
        })
        .measure()
        .whole("storms", |_, r| u64::from(r.metrics.storms))
        .measure()
        .flag("guard_tripped", |_, r| r.metrics.guard_tripped)
        .measure()
        .flag("exit_context", |_, r| r.metrics.exit_context)
        .measure()
        .opt_whole("exit_call", |_, r| r.metrics.exit_call.map(u64::from))
        // Reached its last call: the cost measures compare only sessions that both did.
        .flag("completed", |_, r| r.metrics.completed)
        .measure()
        .whole("input_tokens", |_, r| r.metrics.input_tokens)
        .measure()
        .whole("cache_read_tokens", |_, r| r.metrics.cache_read_tokens)
        .measure()
        .whole("cache_write_tokens", |_, r| r.metrics.cache_write_tokens)
        .measure()
        .whole("uncached_input_tokens", |_, r| {
            r.metrics.uncached_input_tokens
        })
        .measure()
        .whole("output_tokens", |_, r| r.metrics.output_tokens)
        .measure()
        .whole("billed_tokens", |_, r| billed_tokens(&r.metrics))
        .measure()
        .paired_completed()
        .real("cost", |_, r| r.metrics.cost)
        .measure()
        .paired_completed()
        .whole("peak_input", |_, r| r.metrics.peak_input)
        .measure()
        .whole("final_context", |_, r| r.metrics.final_context)
        .whole("final_usage", |_, r| r.metrics.final_usage)
        .whole("noted", |_, r| u64::from(r.metrics.noted))
        .whole("required_total", |_, r| u64::from(r.metrics.required_total))
        // End-of-run measures are null for a run that did not complete: it has no end.
        .opt_whole("required_verbatim", |_, r| {
            r.metrics.required_verbatim.map(u64::from)
        })
        .opt_real("required_any", |_, r| r.metrics.required_any)
        .opt_real("retention_end", |_, r| r.metrics.retention_end)
        .share()
        .measure()
        .paired()
        .opt_real("retention_any_end", |_, r| r.metrics.retention_any_end)
        .share()
        .measure()
        .paired()
        .opt_real("retention_at_need", |_, r| r.metrics.retention_at_need)
        .share()
        .measure()
        .paired()
        .whole("facts_total", |_, r| u64::from(r.metrics.facts_total))
        .opt_whole("facts_kept", |_, r| r.metrics.facts_kept.map(u64::from))
        .opt_real("fact_retention_end", |_, r| r.metrics.fact_retention_end)
        .share()
        .measure()
        .paired()
        .opt_real("fact_retention_at_need", |_, r| {
            r.metrics.fact_retention_at_need
        })
        .share()
        .measure()
        .paired()
        .whole("needed_facts_total", |_, r| {
            u64::from(r.metrics.needed_facts_total)
        })
        .opt_whole("needed_facts_kept", |_, r| {
            r.metrics.needed_facts_kept.map(u64::from)
        })
        .opt_real("needed_fact_retention_end", |_, r| {
            r.metrics.needed_fact_retention_end
        })
        .measure()
        .share()
        .paired()
        .whole("needed_uses", |_, r| r.metrics.needed_uses)
        .opt_real("needed_fact_retention_at_need", |_, r| {
            r.metrics.needed_fact_retention_at_need
        })
        .measure()
        .share()
        .paired()
        // Needed facts at their first return, and the uses the context missed: recovered by a
        // re-read, or lost (`crate::session::need`).
        .whole("first_returns", |_, r| r.metrics.needs.first_returns)
        .measure()
        .whole("needs_recovered", |_, r| r.metrics.needs.recovered)
        .measure()
        .paired()
        .whole("needs_lost", |_, r| r.metrics.needs.lost)
        .measure()
        .paired()
        .opt_real("needed_fact_retention_first_return", |_, r| {
            r.metrics.needs.first_return_retention()
        })
        .measure()
        .share()
        .paired()
        // What the re-reads add to the bill, beside the replay's own.
        .whole("refetch_calls", |_, r| {
            u64::from(r.metrics.needs.refetch_calls)
        })
        .measure()
        .paired_completed()
        .whole("refetch_tokens", |_, r| r.metrics.needs.refetch_tokens())
        .measure()
        .paired_completed()
        .real("refetch_cost", |_, r| r.metrics.needs.refetch_cost)
        .measure()
        .paired_completed()
        .real("cost_with_refetch", |_, r| {
            r.metrics.cost + r.metrics.needs.refetch_cost
        })
        .measure()
        .paired_completed()
        // Where the loss falls: required records carried at the end, by third of the history
        // (`crate::session::CompactionEvent`'s regions), over each third's required records.
        .opt_real("retention_oldest", |_, r| r.metrics.regions[0])
        .share()
        .measure()
        .opt_real("retention_middle", |_, r| r.metrics.regions[1])
        .share()
        .measure()
        .opt_real("retention_newest", |_, r| r.metrics.regions[2])
        .share()
        .measure()
        // The compactions' ledgers summed (`crate::session::ledger`): compactions whose next
        // call could not read part of the cached prefix, the cache writes they caused, and the
        // dollars of their summary calls.
        .whole("cache_breaks", |_, r| {
            u64::from(r.metrics.ledger.cache_breaks)
        })
        .measure()
        .whole("compaction_cache_write_tokens", |_, r| {
            r.metrics.ledger.cache_write_tokens
        })
        .measure()
        .real("compaction_cost", |_, r| r.metrics.ledger.cost)
        .measure()
        // Supersessions held on the old side without the new (`crate::stale`): at the end of a
        // completed run, and summed over agent calls (each call's input).
        .opt_whole("stale_end", |_, r| r.metrics.stale.end.map(u64::from))
        .measure()
        .whole("stale_calls", |_, r| r.metrics.stale.calls)
        .measure()
        // The cache that billed the session (`session.cache`, or one of `session.caches`).
        .text("cache", |g, _, r| cache_label(g, r.key.cache))
        // The summary's size the strategy ran with (the summary-size axis's, else its own
        // default): a share of what it replaces and a token cap; null for a strategy that
        // writes no summary or one of a fixed size (`summary_size`).
        .opt_real("summary_ratio", |g, r| summary_share(g, r).map(|(q, _)| q))
        .opt_whole("summary_cap", |g, r| {
            summary_share(g, r).map(|(_, cap)| cap)
        })
}

/// The (share, cap) of a session's strategy's summaries, when it sizes them by a share.
fn summary_share(g: &SessionGrid, r: &SessionRow) -> Option<(f64, u64)> {
    match g.strategies[usize::from(r.key.strategy)].summary_size()? {
        crate::strategy::SummarySize::Ratio { ratio, max } => Some((ratio, max)),
        crate::strategy::SummarySize::Fixed(_) => None,
    }
}

/// The keys of a session group, for the summary and the pairs tables.
fn keys<R: Keyed + 'static>() -> Table<SessionGrid, R> {
    Table::new("summary")
        .text("strategy", |g: &SessionGrid, _, r: &R| {
            &g.labels[g.group_coordinates(r.group()).strategy]
        })
        .whole("window", |g, r| {
            g.windows[g.group_coordinates(r.group()).window]
        })
        .real("ratio", |g, r| {
            g.ratios[g.group_coordinates(r.group()).ratio]
        })
        .whole("trigger", |g, r| {
            g.config(g.group_coordinates(r.group())).trigger()
        })
        .real("note_rate", |g, r| {
            g.note_rates[g.group_coordinates(r.group()).note_rate]
        })
        .text("noise", |g, _, r| {
            &g.noise_labels[g.group_coordinates(r.group()).level]
        })
        .real("false_negative", |g, r| {
            g.levels[g.group_coordinates(r.group()).level].false_negative
        })
        .real("false_positive", |g, r| {
            g.levels[g.group_coordinates(r.group()).level].false_positive
        })
}

/// The session summary: the group's keys, its counts, then every measure's statistics.
pub fn summary_table(sessions: &Table<SessionGrid, SessionRow>) -> Table<SessionGrid, GroupRow> {
    let retention = measure_index(sessions, "retention_end");
    let at_need = measure_index(sessions, "retention_at_need");
    let completed = measure_index(sessions, "completed");
    let keys = keys::<GroupRow>()
        .whole("n", |_, r| r.acc.n)
        // The independent units the intervals rest on.
        .whole("n_histories", |_, r| r.acc.histories)
        // Completed sessions of histories with required records (the n of the retention-at-
        // the-end means: a run that died has no end).
        .whole("n_retention", move |_, r| r.count(retention))
        // Sessions with retention at need defined.
        .whole("n_at_need", move |_, r| r.count(at_need))
        // Sessions that reached their last call: what every end-of-run mean rests on.
        .whole("n_completed", move |_, r| r.sum_whole(completed));
    summary::table(sessions, keys).text("cache", group_cache::<GroupRow>)
}

/// The cache of a group, the last column of the summary and the pairs tables.
fn group_cache<'a, R: Keyed>(g: &'a SessionGrid, _: super::Names<'a>, r: &'a R) -> &'a str {
    &g.caches[g.group_coordinates(r.group()).cache]
}

/// The pairs table of a session sweep: each group against each other strategy's group at
/// the same window, ratio, note rate, cache and noise level.
pub fn pairs_table() -> Table<SessionGrid, PairRow> {
    summary::pairs_table(keys::<PairRow>()).text("cache", group_cache::<PairRow>)
}
