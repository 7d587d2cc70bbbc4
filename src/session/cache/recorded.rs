//! The figures the transcript records: a `raw` replay billed as the provider billed the run
//! (uncached input at the input price, cache reads and writes at their factors, the recorded
//! output), so the modelled caches can be held against it. Figures are the provider's tokens,
//! not the cost model's units. Each agent call bills the recorded calls whose response starts
//! among its output records or before them (several responses may make up one call, a
//! response may leave no record); what is left after the last agent call is billed at the end
//! of a session that did not run out of context.

use super::{Billing, CacheModel, ContextCall};
use crate::history::RecordedCall;

/// The next recorded call to bill.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cursor {
    next: usize,
}

impl Cursor {
    /// Bills the recorded calls not billed yet whose response starts before record `end`.
    pub fn upto(&mut self, calls: &[RecordedCall], end: usize) -> Billing {
        let mut b = Billing::default();
        while let Some(c) = calls.get(self.next).filter(|c| c.at < end) {
            let u = c.usage;
            b.add(Billing::of(
                u.cache_read,
                u.cache_write,
                u.uncached,
                u.output,
            ));
            self.next += 1;
        }
        b
    }
}

/// The transcript's own figures: an agent call bills the recorded calls up to its output, and
/// the end of the session what is left.
pub struct RecordedCache;

impl CacheModel for RecordedCache {
    fn call(c: ContextCall) -> Billing {
        match c.output_end {
            Some(end) => c.recorded.upto(c.history, end),
            // Only `raw` replays are billed as recorded, and they never compact.
            None => super::none::bill(c.input, c.output),
        }
    }

    fn rest(recorded: &mut Cursor, history: &[RecordedCall]) -> Billing {
        recorded.upto(history, usize::MAX)
    }
}
