//! Needs at their first return, and what the agent pays to get back what a compaction dropped.
//!
//! **A need** is the first return of a needed fact of a required record
//! ([`crate::facts::Facts::first_return`]): the first agent call whose output holds the fact
//! again without the agent having restated it since the record that introduced it (its
//! owner). Each such fact is needed once. At that call the need is
//!
//! - **met** when the call's input holds the fact through its owner: the owner verbatim (its
//!   own entry or the notes read back), or a summary that holds the fact;
//! - **recovered** when it does not, but the owner is a re-runnable read
//!   ([`crate::history::recovery`]): the agent fetches it again (see below) and meets the need
//!   late;
//! - **lost** otherwise: the user's constraint, the model's own decision or a side-effecting
//!   output is gone for good. Needs after a run ended (`exit_context`) are lost too.
//!
//! **A re-read.** Before an agent call with needs to recover, the agent makes one extra call
//! on the context as it stands, whose output is the calls that fetch the owners again (each
//! owner's producing call record, at its cost), and the owners and those calls then sit in the
//! context until the next compaction. Billed under the session's cache, beside the replay
//! (the replay's own context, triggers and bill are left as they are):
//!
//! - the extra call's input, as tokens the provider already holds ([`Cache::carried`]: the
//!   agent call right after sends the same prefix), and its output at the output price;
//! - the fetched records and their calls, new to the prompt at the agent call that needed them
//!   ([`Cache::added`]: a cache write on Anthropic's, plain input elsewhere), then carried by
//!   every later agent call until a compaction rewrites the context.
//!
//! What this leaves out, and so under-counts: a fetched record never pushes the context to an
//! earlier compaction, nor past the window; the extra call adds nothing to usage; facts of
//! records that are not required are never re-read.

use super::cache::{Billing, Cache};
use super::prices::Prices;

/// What a session's needs came to.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NeedMetrics {
    /// First returns of needed facts of the required records the run reached or would have.
    pub needs: u64,
    pub met: u64,
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
    /// Needs met on time, over all needs (`None` without a need).
    pub fn first_return_retention(&self) -> Option<f64> {
        (self.needs > 0).then(|| self.met as f64 / self.needs as f64)
    }

    /// Tokens the re-reads added: input and output.
    pub fn refetch_tokens(&self) -> u64 {
        self.refetch.input + self.refetch.output
    }
}

/// The needs of a replay as it runs.
#[derive(Debug, Clone, Default)]
pub struct NeedTally {
    pub metrics: NeedMetrics,
    /// Tokens of the fetched records and their calls now in the context.
    in_context: u64,
}

impl NeedTally {
    /// One agent call's needs (`fetch`), on a context standing at `context` tokens: counts
    /// them, bills the extra call when the call must fetch records again, and this call's
    /// share of what the re-reads hold in the context.
    pub fn call(&mut self, cache: &Cache, context: u64, fetch: Fetch) {
        let m = &mut self.metrics;
        m.needs += fetch.met + fetch.recovered + fetch.lost;
        m.met += fetch.met;
        m.recovered += fetch.recovered;
        m.lost += fetch.lost;
        if fetch.records > 0 {
            m.refetch_calls += 1;
            let mut extra = cache.carried(context + self.in_context);
            extra.output = fetch.call_output;
            m.refetch.add(extra);
        }
        // What earlier re-reads left in the context, then what this one adds to it.
        m.refetch.add(cache.carried(self.in_context));
        let new = fetch.records + fetch.call_output;
        m.refetch.add(cache.added(new));
        self.in_context += new;
    }

    /// Needs a run that ended never reached.
    pub fn lost(&mut self, needs: u64) {
        self.metrics.needs += needs;
        self.metrics.lost += needs;
    }

    /// A compaction rewrote the context: the fetched records are no longer in it.
    pub fn compacted(&mut self) {
        self.in_context = 0;
    }

    pub fn finish(mut self, prices: &Prices) -> NeedMetrics {
        self.metrics.refetch_cost = self.metrics.refetch.cost(prices);
        self.metrics
    }
}

/// What one agent call's needs came to, as [`NeedTally::call`] takes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetch {
    pub met: u64,
    pub recovered: u64,
    pub lost: u64,
    /// Tokens of the records fetched again at this call, and of the calls that fetch them.
    pub records: u64,
    pub call_output: u64,
}
