//! The one-row table `ctxlab session --format metrics` prints: a replayed session's metrics
//! with the settings that made them.

use super::Table;
use crate::session::{SessionConfig, SessionMetrics};

/// What a metrics row is keyed by: the history, the strategy and the session's settings.
pub struct MetricsKey<'a> {
    pub history: &'a str,
    pub strategy: &'a str,
    pub config: &'a SessionConfig,
}

/// The metrics row, column by column.
pub fn table<'a>() -> Table<MetricsKey<'a>, SessionMetrics> {
    Table::new("metrics")
        .text("history", |k: &MetricsKey, _, _: &SessionMetrics| k.history)
        .text("strategy", |k: &MetricsKey, _, _: &SessionMetrics| {
            k.strategy
        })
        .whole("window", |k, _| k.config.window)
        .displayed("ratio", |k, _| k.config.ratio)
        .whole("trigger", |k, _| k.config.trigger())
        .whole("records", |_, m| u64::from(m.records))
        .whole("calls", |_, m| u64::from(m.calls))
        .whole("compactions", |_, m| u64::from(m.compactions))
        .whole("failed_compactions", |_, m| u64::from(m.failed_compactions))
        .whole("model_calls", |_, m| u64::from(m.model_calls))
        .whole("storms", |_, m| u64::from(m.storms))
        .flag("guard_tripped", |_, m| m.guard_tripped)
        .flag("exit_context", |_, m| m.exit_context)
        .opt_whole("exit_call", |_, m| m.exit_call.map(u64::from))
        .whole("input_tokens", |_, m| m.input_tokens)
        .whole("cache_read_tokens", |_, m| m.cache_read_tokens)
        .whole("cache_write_tokens", |_, m| m.cache_write_tokens)
        .whole("uncached_input_tokens", |_, m| m.uncached_input_tokens)
        .whole("output_tokens", |_, m| m.output_tokens)
        .real("cost", |_, m| m.cost)
        .whole("peak_input", |_, m| m.peak_input)
        .whole("final_context", |_, m| m.final_context)
        .whole("noted", |_, m| u64::from(m.noted))
        .whole("required_total", |_, m| u64::from(m.required_total))
        .opt_whole("required_verbatim", |_, m| {
            m.required_verbatim.map(u64::from)
        })
        .opt_displayed("required_any", |_, m| m.required_any)
        .opt_real("retention_end", |_, m| m.retention_end)
        .opt_real("retention_any_end", |_, m| m.retention_any_end)
        .opt_real("retention_at_need", |_, m| m.retention_at_need)
        .whole("facts_total", |_, m| u64::from(m.facts_total))
        .opt_whole("facts_kept", |_, m| m.facts_kept.map(u64::from))
        .opt_real("fact_retention_end", |_, m| m.fact_retention_end)
        .opt_real("fact_retention_at_need", |_, m| m.fact_retention_at_need)
        .flag("completed", |_, m| m.completed)
        .whole("needed_facts_total", |_, m| u64::from(m.needed_facts_total))
        .opt_whole("needed_facts_kept", |_, m| {
            m.needed_facts_kept.map(u64::from)
        })
        .opt_real("needed_fact_retention_end", |_, m| {
            m.needed_fact_retention_end
        })
        .whole("needed_uses", |_, m| m.needed_uses)
        .opt_real("needed_fact_retention_at_need", |_, m| {
            m.needed_fact_retention_at_need
        })
        .whole("first_returns", |_, m| m.needs.first_returns)
        .whole("needs_recovered", |_, m| m.needs.recovered)
        .whole("needs_lost", |_, m| m.needs.lost)
        .opt_real("needed_fact_retention_first_return", |_, m| {
            m.needs.first_return_retention()
        })
        .whole("refetch_calls", |_, m| u64::from(m.needs.refetch_calls))
        .whole("refetch_tokens", |_, m| m.needs.refetch_tokens())
        .real("refetch_cost", |_, m| m.needs.refetch_cost)
        .real("cost_with_refetch", |_, m| m.cost + m.needs.refetch_cost)
}
