//! Prefix-cache accounting. A provider's prompt cache serves the part of a request equal to a
//! prefix of the previous request: per call (agent and compaction calls alike), the longest
//! common prefix of entries between this call's input and the previous call's input is billed
//! as cache reads, the rest of the input as cache writes. The first call writes everything.
//!
//! Between two calls the context only grows at its end, so the common prefix is the whole
//! previous input; only a compaction rewrites it. [`Prefix`] therefore tracks two numbers
//! instead of keeping a copy of the previous input.

use super::config::Prices;

/// What the previous call's input shares with the current context.
#[derive(Debug, Clone, Copy, Default)]
pub struct Prefix {
    /// Entries in the previous call's input (0 before the first call).
    previous_len: usize,
    /// Leading entries of the current context that are unchanged since that input.
    unchanged: usize,
}

impl Prefix {
    /// A call is made with the current context of `len` entries: returns how many leading
    /// entries are read from cache, and makes this input the previous one.
    pub fn call(&mut self, len: usize) -> usize {
        let read = self.previous_len.min(self.unchanged);
        self.previous_len = len;
        self.unchanged = len;
        read
    }

    /// The context was replaced; `common` leading entries are the same as before.
    pub fn replaced(&mut self, common: usize) {
        self.unchanged = self.unchanged.min(common);
    }
}

/// Tokens billed by class. `input = cache_read + cache_write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billing {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
}

impl Billing {
    /// Bills one call whose `input` starts with `cache_read` units already cached.
    pub fn call(&mut self, input: u64, cache_read: u64, output: u64) {
        debug_assert!(cache_read <= input);
        self.input += input;
        self.cache_read += cache_read;
        self.cache_write += input - cache_read;
        self.output += output;
    }

    /// `(read × in × read_factor + write × in × write_factor + output × out) / 10⁶`.
    pub fn cost(&self, p: &Prices) -> f64 {
        (self.cache_read as f64 * p.input * p.cache_read_factor
            + self.cache_write as f64 * p.input * p.cache_write_factor
            + self.output as f64 * p.output)
            / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_keep_the_prefix_and_replacements_cut_it() {
        let mut p = Prefix::default();
        assert_eq!(p.call(3), 0);
        assert_eq!(p.call(5), 3); // two entries appended: the three of the last input are cached
        p.replaced(2); // a compaction kept the first two entries
        assert_eq!(p.call(4), 2);
        p.replaced(7); // a longer common prefix than the last input cannot be read
        assert_eq!(p.call(6), 4);
    }

    #[test]
    fn cost_applies_the_factors() {
        let mut b = Billing::default();
        b.call(1_000_000, 600_000, 100_000);
        assert_eq!(b.cache_write, 400_000);
        // 0.6 × 3 × 0.1 + 0.4 × 3 × 1.25 + 0.1 × 15 = 0.18 + 1.5 + 1.5
        assert!((b.cost(&Prices::default()) - 3.18).abs() < 1e-12);
    }
}
