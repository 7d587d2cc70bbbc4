//! No prompt cache: every call's whole prompt is plain input.

use super::{Billing, CacheModel, ContextCall};

pub fn bill(input: u64, output: u64) -> Billing {
    Billing::of(0, 0, input, output)
}

/// No cache: every prompt is plain input.
pub struct NoCache;

impl CacheModel for NoCache {
    fn call(c: ContextCall) -> Billing {
        bill(c.input, c.output)
    }
}
