//! The CSV `ctxlab session HISTORY --format csv` prints: one row per agent call of a replay,
//! the scripted columns first (`session_script`), then the replay's own.

use super::session_script;
use super::Table;
use crate::session::CallRow;

/// The replay's per-call table, column by column.
pub fn table() -> Table<(), CallRow> {
    session_script::columns(Table::new("session_calls"))
        .whole("input", |_, c: &CallRow| c.input)
        .whole("output", |_, c| c.output)
        .whole("cache_read", |_, c| c.cache_read)
        .whole("cache_write", |_, c| c.cache_write)
        .whole("uncached", |_, c| c.uncached)
        // A share of required records (a summary keeps part of one), written as Rust displays it.
        .displayed("required_present", |_, c| c.required_present)
        .whole("required_appeared", |_, c| u64::from(c.required_appeared))
}
