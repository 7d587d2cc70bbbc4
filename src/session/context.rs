//! The context of a running session: a list of entries, each an original record, a
//! placeholder, a summary or the notes read back, with what each carries.
//!
//! Which records an entry carries is kept per record, not per entry, so nothing is allocated
//! per compaction: a record is either in the context verbatim (as its own entry), inside one
//! summary (with a bit saying whether the summary still carries its information), or neither;
//! the notes read back carry every record noted before the read-back, verbatim.

/// "No summary".
pub(crate) const NONE: u32 = u32::MAX;

/// Where an entry comes from; two entries are the same text exactly when their origins and
/// costs are equal (what the prompt cache compares).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Record `r` of the history, verbatim.
    Record(u32),
    /// A stand-in for record `r` (masked or cleared): its information is gone.
    Placeholder(u32),
    /// Summary number `id` of the session (numbered in order of creation).
    Summary(u32),
    /// A stand-in for summary `id` (a strategy masked a summary): its information is gone.
    SummaryPlaceholder(u32),
    /// The notes read back at a compaction, holding the first `n` notes written.
    Notes(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub origin: Origin,
    pub cost: u64,
}
