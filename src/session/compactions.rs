//! What one compaction did: the rows of the compactions table.
//!
//! A session logs one [`CompactionEvent`] per compaction it counts (`compactions` in the
//! sessions table, failed ones included), in order; `k` is 1 for its first. The counts are
//! taken just after the compaction, over the records that had appeared by then:
//!
//! - **Required records carried**: the rule of `required_any` (1 each verbatim or kept by the
//!   simulated summariser, the carried share of each a text summary holds).
//! - **Needed facts carried**: the owner rule of `needed_facts_kept` (the record that
//!   introduced the fact verbatim, or a summary holding it).
//! - **The first user turn**: the records from the first `user` record up to the next agent
//!   call; its required records and the needed facts they own, counted as above.
//! - **Regions**: the records that had appeared (`0..n`) split by index, record `r` in region
//!   `floor(3r / n)` (oldest, middle, newest; the oldest third takes the remainder); each
//!   region's required records carried over its required records (`None` without any).
//! - **The cache**: the agent call after the compaction ([`NextCall`]): the cached prefix the
//!   last agent call before it left (its cache read + cache write) that this call no longer
//!   reads, and the cache-write tokens it pays. `None` when no call followed (the run ended).
//! - **The ledger**: what it cost, the cache writes it caused and when it pays for itself
//!   against not compacting ([`super::ledger`]).

/// Required records and how much of them a context holds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Carried {
    pub appeared: u32,
    pub carried: f64,
}

/// The first user turn's required records and needed facts, and what of them is carried.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FirstTurn {
    pub required: u32,
    pub required_carried: f64,
    pub needed_facts: u32,
    pub needed_facts_carried: u32,
}

/// What the agent call after a compaction paid for it in the provider's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NextCall {
    /// Tokens of the cached prefix the call before the compaction left that this call no
    /// longer reads.
    pub invalidated: u64,
    pub cache_write: u64,
}

/// One compaction of a session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionEvent {
    /// The agent call it ran before (1-based).
    pub call: u32,
    /// 1 for the session's first compaction.
    pub k: u32,
    /// The strategy could not meet its capacity: the context was left as it was.
    pub failed: bool,
    /// The context's cost before and after, and the summaries it wrote (0 when none).
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub summary_tokens: u64,
    pub required: Carried,
    pub needed_facts: u32,
    pub needed_facts_carried: u32,
    pub first_turn: FirstTurn,
    /// Required records carried over required records, oldest, middle and newest third.
    pub regions: [Option<f64>; 3],
    pub next: Option<NextCall>,
    /// Its cost, the cache writes it caused and its break-even ([`super::ledger`]).
    pub ledger: super::Ledger,
}
