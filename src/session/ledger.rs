//! The ledger of a compaction: what it cost, what it made the cache write again, and after how
//! many agent calls it pays for itself against not compacting.
//!
//! For a compaction that ran before agent call `c`, with `freed` the tokens it took out of the
//! context (its context before less its context after; the fixed prefix, sent ahead of the
//! context by every call, is in both and so never freed nor invalidated):
//!
//! - **Summary cost**: the dollars of the model calls the compaction made (its summaries, and
//!   the calls of a summary its harness threw away); 0 for masking and clearing.
//! - **The uncompacted context**: the same calls, each sending `freed` more tokens. Call `c`
//!   would have read from the cache what the provider held (the last agent call's cache read +
//!   cache write, nothing when the cache had expired) and sent the rest as new input (written
//!   to Anthropic's cache, plain input elsewhere: [`Cache::added`]); every later call would have
//!   read the `freed` tokens again as the previous call's prefix ([`Cache::carried`]).
//! - **Cache-write tokens caused**: the summary calls' cache writes, plus what call `c` wrote
//!   beyond what it would have written on the uncompacted context.
//! - **Break-even**: the saving after `n` calls is `Σ (uncompacted − compacted input cost)`
//!   over calls `c .. c+n−1`, less the summary cost; the break-even is the least `n` at which it
//!   is ≥ 0, counted over the calls the run made from `c` on. `None` ("never") when no such `n`
//!   falls within the run, or when the compaction freed nothing.
//!
//! What it cannot tell: the uncompacted run would have grown on towards the window, so later
//! compactions, a context error, or a model that behaves differently on a longer context are
//! not in it; later compactions of the same run are taken as they ran.

use super::cache::{Billing, Cache};
use super::prices::Prices;

/// One compaction's ledger, as the compactions table shows it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ledger {
    /// Dollars of the summary calls it made (0 when none).
    pub summary_cost: f64,
    /// Cache-write tokens it caused (module docs); its summary calls' writes alone when no
    /// agent call followed.
    pub cache_write: u64,
    /// Cached tokens the agent call after it could have read and did not (0 when the cache
    /// had expired, or no call followed): the fixed prefix is never among them.
    pub invalidated: u64,
    /// Agent calls from the one after it until it pays for itself; `None`: never within the
    /// run.
    pub break_even: Option<u32>,
}

/// A session's ledgers summed: the sessions table's columns.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LedgerTotals {
    /// Compactions whose next agent call could not read part of the cached prefix.
    pub cache_breaks: u32,
    pub cache_write_tokens: u64,
    /// Dollars of the summary calls of every compaction.
    pub cost: f64,
}

impl LedgerTotals {
    pub fn of(ledgers: impl Iterator<Item = Ledger>) -> Self {
        let mut t = LedgerTotals::default();
        for l in ledgers {
            t.cache_breaks += u32::from(l.invalidated > 0);
            t.cache_write_tokens += l.cache_write;
            t.cost += l.summary_cost;
        }
        t
    }
}

/// A compaction's ledger while the session runs.
#[derive(Debug, Clone, Copy)]
pub struct Open {
    /// The agent call it ran before.
    call: u32,
    freed: u64,
    ledger: Ledger,
    /// After the call after it: the saving then (less the summary cost) and the saving of
    /// each later call.
    saving: Option<(f64, f64)>,
}

impl Open {
    /// A compaction before agent call `call` that freed `freed` tokens, whose summary calls
    /// were billed `summary`.
    pub fn new(call: u32, freed: u64, summary: &Billing, prices: &Prices) -> Self {
        Open {
            call,
            freed,
            ledger: Ledger {
                summary_cost: summary.cost(prices),
                cache_write: summary.cache_write,
                invalidated: 0,
                break_even: None,
            },
            saving: None,
        }
    }

    /// The agent call after it was billed `actual`, with `held` tokens in the provider's
    /// cache before it (0 when the cache had expired).
    pub fn first_call(&mut self, cache: &Cache, prices: &Prices, actual: &Billing, held: u64) {
        let actual = Billing::of(actual.cache_read, actual.cache_write, actual.uncached, 0);
        let uncompacted_input = actual.input + self.freed;
        let read = held.min(uncompacted_input);
        let mut uncompacted = cache.carried(read);
        uncompacted.add(cache.added(uncompacted_input - read));
        self.ledger.cache_write += actual.cache_write.saturating_sub(uncompacted.cache_write);
        self.ledger.invalidated = held.saturating_sub(actual.cache_read);
        let first = uncompacted.cost(prices) - actual.cost(prices) - self.ledger.summary_cost;
        let later = cache.carried(self.freed).cost(prices);
        self.saving = Some((first, later));
    }

    /// The ledger once the run made `calls` agent calls.
    pub fn close(&self, calls: u32) -> Ledger {
        let within = (calls + 1).saturating_sub(self.call);
        let break_even = match self.saving {
            Some((first, later)) if self.freed > 0 => break_even(first, later, within),
            _ => None,
        };
        Ledger {
            break_even,
            ..self.ledger
        }
    }
}

/// The least `n ≥ 1` with `first + (n − 1) × later ≥ 0`, if it is at most `within`.
pub fn break_even(first: f64, later: f64, within: u32) -> Option<u32> {
    let n = if first >= 0.0 {
        1.0
    } else if later > 0.0 {
        1.0 + (-first / later).ceil()
    } else {
        return None;
    };
    (n <= f64::from(within)).then_some(n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_even_is_the_first_call_whose_saving_covers_the_cost() {
        // −1.0 after the first call, +0.3 a call: −0.7, −0.4, −0.1, +0.2 → the 5th call.
        assert_eq!(break_even(-1.0, 0.3, 10), Some(5));
        assert_eq!(break_even(-1.0, 0.3, 4), None);
        assert_eq!(break_even(0.0, 0.0, 1), Some(1));
        assert_eq!(break_even(-0.1, 0.0, 100), None);
    }
}
