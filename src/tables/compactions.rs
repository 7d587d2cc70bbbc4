//! The compactions table of a session sweep: one row per compaction a session counts, in the
//! sessions' order and then by `k` (the rules are in [`crate::session::CompactionEvent`]).

use super::sessions::with_keys;
use super::Table;
use crate::sessions::{EventRow, SessionGrid};

/// The compactions table, column by column: the session's keys, then the event.
pub fn table() -> Table<SessionGrid, EventRow> {
    with_keys(Table::new("compactions"), |r: &EventRow| r.session)
        .whole("k", |_, r| u64::from(r.event.k))
        .whole("call", |_, r| u64::from(r.event.call))
        .flag("failed", |_, r| r.event.failed)
        .whole("tokens_before", |_, r| r.event.tokens_before)
        .whole("tokens_after", |_, r| r.event.tokens_after)
        .whole("summary_tokens", |_, r| r.event.summary_tokens)
        // Over the required records that had appeared, carried in any form (`required_any`).
        .whole("required_appeared", |_, r| {
            u64::from(r.event.required.appeared)
        })
        .real("required_carried", |_, r| r.event.required.carried)
        .opt_real("required_share", |_, r| share_of(&r.event))
        // Needed facts of records that had appeared, carried through their owner.
        .whole("needed_facts", |_, r| u64::from(r.event.needed_facts))
        .whole("needed_facts_carried", |_, r| {
            u64::from(r.event.needed_facts_carried)
        })
        .opt_real("needed_facts_share", |_, r| {
            fraction(r.event.needed_facts_carried, r.event.needed_facts)
        })
        // The first user turn's required records and needed facts.
        .whole("first_turn_required", |_, r| {
            u64::from(r.event.first_turn.required)
        })
        .real("first_turn_required_carried", |_, r| {
            r.event.first_turn.required_carried
        })
        .whole("first_turn_needed_facts", |_, r| {
            u64::from(r.event.first_turn.needed_facts)
        })
        .whole("first_turn_needed_facts_carried", |_, r| {
            u64::from(r.event.first_turn.needed_facts_carried)
        })
        // Required records carried by third of the records that had appeared.
        .opt_real("retention_oldest", |_, r| r.event.regions[0])
        .opt_real("retention_middle", |_, r| r.event.regions[1])
        .opt_real("retention_newest", |_, r| r.event.regions[2])
        // The agent call after it: null when the run ended first.
        .opt_whole("prefix_invalidated", |_, r| {
            r.event.next.map(|n| n.invalidated)
        })
        .opt_whole("next_cache_write", |_, r| {
            r.event.next.map(|n| n.cache_write)
        })
        // Its ledger (`crate::session::ledger`): the dollars of its summary calls, the cache
        // writes it caused, and the agent calls until it pays for itself (null: never within
        // the run).
        .real("summary_cost", |_, r| r.event.ledger.summary_cost)
        .whole("cache_write_caused", |_, r| r.event.ledger.cache_write)
        .opt_whole("break_even_calls", |_, r| {
            r.event.ledger.break_even.map(u64::from)
        })
        .text("cache", |g, _, r| {
            super::sessions::cache_label(g, r.session.cache)
        })
}

fn share_of(e: &crate::session::CompactionEvent) -> Option<f64> {
    (e.required.appeared > 0).then(|| e.required.carried / f64::from(e.required.appeared))
}

fn fraction(part: u32, whole: u32) -> Option<f64> {
    (whole > 0).then(|| f64::from(part) / f64::from(whole))
}
