//! The sessions table (one row per simulated session) and the keys of its summary (one row per
//! strategy × window × ratio × note rate × noise level).

use super::session_columns::{self, SessionSource};
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
        r.metrics.run.completed
    }
}

/// The sessions table, column by column: where the session sits in the grid, then its own
/// columns (`session_columns`). Measures (`.measure()`) are summarised per group.
pub fn table() -> Table<SessionGrid, SessionRow> {
    session_columns::columns(with_keys(Table::new("sessions"), SessionRow::key))
}

impl SessionSource<SessionRow> for SessionGrid {
    fn metrics(row: &SessionRow) -> &crate::session::SessionMetrics {
        &row.metrics
    }
    fn cache<'a>(&'a self, row: &'a SessionRow) -> &'a str {
        cache_label(self, row.key.cache)
    }
    // The summary-size axis's, else the strategy's own default.
    fn summary_size(&self, row: &SessionRow) -> Option<crate::strategy::SummarySize> {
        self.strategies[usize::from(row.key.strategy)].summary_size()
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
