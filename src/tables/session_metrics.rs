//! The one-row table `ctxlab session --format metrics` prints: the settings that made a
//! replayed session, then its own columns as the sessions table declares them
//! (`session_columns`).

use super::session_columns::{self, SessionSource};
use super::Table;
use crate::session::{SessionConfig, SessionMetrics};
use crate::strategy::{Strategy, SummarySize};

/// What a metrics row is keyed by: the history, the strategy and the session's settings.
pub struct MetricsKey {
    pub history: String,
    /// The strategy's label.
    pub strategy: String,
    pub config: SessionConfig,
    /// The cache the session was billed under, as its canonical spec.
    pub cache: String,
    pub summary_size: Option<SummarySize>,
}

impl MetricsKey {
    /// The key of a replay of `history` under `strategy` and `config`.
    pub fn new(history: &str, strategy: &Strategy, config: &SessionConfig) -> MetricsKey {
        MetricsKey {
            history: history.to_string(),
            strategy: strategy.label(),
            config: config.clone(),
            cache: config.cache.spec(),
            summary_size: strategy.summary_size(),
        }
    }
}

impl SessionSource<SessionMetrics> for MetricsKey {
    fn metrics(row: &SessionMetrics) -> &SessionMetrics {
        row
    }
    fn cache<'a>(&'a self, _: &'a SessionMetrics) -> &'a str {
        &self.cache
    }
    fn summary_size(&self, _: &SessionMetrics) -> Option<SummarySize> {
        self.summary_size
    }
}

/// The metrics row, column by column.
pub fn table() -> Table<MetricsKey, SessionMetrics> {
    let keys = Table::new("metrics")
        .text("history", |k: &MetricsKey, _, _: &SessionMetrics| {
            &k.history
        })
        .text("strategy", |k: &MetricsKey, _, _: &SessionMetrics| {
            &k.strategy
        })
        .whole("window", |k, _| k.config.window)
        .displayed("ratio", |k, _| k.config.ratio)
        .whole("trigger", |k, _| k.config.trigger());
    session_columns::columns(keys)
}
