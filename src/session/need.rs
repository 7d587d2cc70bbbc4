//! Needed facts at their first return, and what the agent pays to get back what a compaction
//! dropped.
//!
//! **First returns.** A needed fact of a required record has at most one *first return*
//! ([`crate::history::facts::Facts::first_return`]): the first agent call whose output holds the fact
//! again without the agent having restated it since the record that introduced it (its
//! owner). There it is **met** when the call's input holds the fact through its owner: the
//! owner verbatim (its own entry or the notes read back), or a summary that holds the fact.
//! `needed_fact_retention_first_return` is the share met; the other uses mostly repeat the
//! agent's own words, which any strategy keeping the agent's recent messages meets.
//!
//! **Re-reads.** The agent fetches a dropped record again in two cases, each a rule its
//! source states ([`crate::history::recovery`]) and `ctxlab calibrate --rereads` holds against
//! what agents did after real compactions:
//!
//! - **a file it names**: when an agent call's output (a call or its text) names a file the
//!   agent viewed before (the file's path or file name) and no view of that file is in the
//!   context, the agent reads the file again: its latest view is fetched, whether or not the
//!   agent edited the file since (a call that itself views the file is that read, not a use);
//! - **a token it lacks**: when a use of a needed fact finds its token nowhere in the call's
//!   input and a re-runnable read that is not a file view held it (a listing, a search, a
//!   fetched page, a read-only command's output), the latest such read is run again. A token
//!   only a file view held comes back only when the agent names the file: identifiers alone
//!   did not predict which files agents read again (3 of 20 such files were).
//!
//! **Recovered or lost.** Every use of a needed fact (as `needed_fact_retention_at_need`
//! counts them) whose token the call's input lacks is **recovered** when a record fetched
//! again (at this call or since the last compaction) holds it as it was (a view of a file
//! edited since then does not: the file changed), and **lost** otherwise: the user's
//! constraint, the model's own decision, a side-effecting output, a file the agent never named
//! again. Uses after a run ended (`exit_context`) are lost.
//!
//! **What a re-read costs.** Before an agent call with records to fetch, the agent makes one extra call on
//! the context as it stands, whose output is the calls that fetch them (each record's
//! producing call record, at its cost); the records and those calls then sit in the context
//! until the next compaction. Billed under the session's cache, beside the replay (the
//! replay's own context, triggers and bill are left as they are):
//!
//! - the extra call's input, as tokens the provider already holds ([`Cache::carried`]: the
//!   agent call right after sends the same prefix), and its output at the output price;
//! - the fetched records and their calls, new to the prompt at the agent call that needed them
//!   ([`Cache::added`]: a cache write on Anthropic's, plain input elsewhere), then carried by
//!   every later agent call until a compaction rewrites the context.
//!
//! What this leaves out, and so under-counts: a fetched record never pushes the context to an
//! earlier compaction, nor past the window; the extra call adds nothing to usage; facts of
//! records that are not required are never fetched.

use super::cache::{Billing, Cache};
use super::prices::Prices;

/// What a session's needs came to.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NeedMetrics {
    /// First returns of needed facts of the required records (those after a run ended
    /// included, unmet), and of those the ones met on time through their owner.
    pub first_returns: u64,
    pub first_returns_met: u64,
    /// Uses of needed facts whose token the call's input lacked: recovered by a re-read, or
    /// lost.
    pub recovered: u64,
    pub lost: u64,
    /// The extra calls that fetched dropped records again.
    pub refetch_calls: u32,
    /// Every token the re-reads added to the bill, by class.
    pub refetch: Billing,
    /// Their cost under the session's prices.
    pub refetch_cost: f64,
}

impl NeedMetrics {
    /// First returns met on time through their owner (`None` without one).
    pub fn first_return_retention(&self) -> Option<f64> {
        (self.first_returns > 0).then(|| self.first_returns_met as f64 / self.first_returns as f64)
    }

    /// Tokens the re-reads added: input and output.
    pub fn refetch_tokens(&self) -> u64 {
        self.refetch.input + self.refetch.output
    }
}

/// The needs of a replay as it runs.
#[derive(Debug, Clone, Default)]
pub struct NeedTally {
    /// The counts; the re-reads' bill (`refetch`, `refetch_cost`) is left at 0 here: it is each
    /// cache's, kept by the caller and put in by [`NeedTally::finish`].
    pub metrics: NeedMetrics,
    /// Tokens of the fetched records and their calls now in the context.
    in_context: u64,
}

impl NeedTally {
    /// One agent call's needs (`fetch`), on a context standing at `context` tokens: counts
    /// them, and adds to each cache's bill of the re-reads (`bills`) the extra call when the
    /// call must fetch records again, and this call's share of what the re-reads hold in the
    /// context. The counts do not depend on the cache, so one tally serves every cache.
    pub fn call<'c>(
        &mut self,
        context: u64,
        fetch: Fetch,
        bills: impl IntoIterator<Item = (&'c Cache, &'c mut Billing)>,
    ) {
        let m = &mut self.metrics;
        m.first_returns += fetch.first_returns;
        m.first_returns_met += fetch.first_returns_met;
        m.recovered += fetch.recovered;
        m.lost += fetch.lost;
        if fetch.records > 0 {
            m.refetch_calls += 1;
        }
        let new = fetch.records + fetch.call_output;
        for (cache, refetch) in bills {
            if fetch.records > 0 {
                let mut extra = cache.carried(context + self.in_context);
                extra.output = fetch.call_output;
                refetch.add(extra);
            }
            // What earlier re-reads left in the context, then what this one adds to it.
            refetch.add(cache.carried(self.in_context));
            refetch.add(cache.added(new));
        }
        self.in_context += new;
    }

    /// The first returns and uses of a run's calls after it ended: all unmet.
    pub fn lost(&mut self, first_returns: u64, uses: u64) {
        self.metrics.first_returns += first_returns;
        self.metrics.lost += uses;
    }

    /// A compaction rewrote the context: the fetched records are no longer in it.
    pub fn compacted(&mut self) {
        self.in_context = 0;
    }

    /// The needs of a session whose re-reads one cache billed `refetch` at `prices`.
    pub fn finish(&self, refetch: Billing, prices: &Prices) -> NeedMetrics {
        NeedMetrics {
            refetch,
            refetch_cost: refetch.cost(prices),
            ..self.metrics
        }
    }
}

/// What one agent call's needs came to, as [`NeedTally::call`] takes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetch {
    pub first_returns: u64,
    pub first_returns_met: u64,
    pub recovered: u64,
    pub lost: u64,
    /// Tokens of the records fetched again at this call, and of the calls that fetch them.
    pub records: u64,
    pub call_output: u64,
}
