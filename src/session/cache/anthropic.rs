//! Anthropic's prompt cache (Messages API), with breakpoints where Claude Code places them.
//!
//! Rules (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>, the copy of
//! the Claude 4 / 4.1 era, 2025):
//! - A request is cached only at its `cache_control` breakpoints: the cache key is the whole
//!   prefix up to and including the breakpoint's block. Claude Code marks the end of the
//!   system prompt and the end of each request (its newest message), so here every call has a
//!   breakpoint after its last entry and, when the context starts with system records, one
//!   after them.
//! - At each breakpoint the provider looks for a cached prefix at every block boundary up to
//!   [`LOOKBACK`] blocks before it and reads the longest it finds; a block is one context entry.
//!   Cached prefixes are those earlier calls wrote at their breakpoints and that the context
//!   still holds unchanged.
//! - The prompt from the longest cached prefix read to the final breakpoint is written to the
//!   cache at 1.25× the input price (the 5-minute cache; the 1-hour one bills 2×), reads are
//!   billed 0.1×; nothing comes after the final breakpoint, so nothing is uncached.
//! - A prefix shorter than the model's minimum (1024 tokens for Sonnet 4 / 4.5 and Opus 4 /
//!   4.1, 4096 for Opus 4.5 and Haiku 4.5) is not cached: a call shorter than it is billed as
//!   plain input, neither read nor written.
//! - The 5-minute TTL is refreshed by every read ([`TTL_SECONDS`]; the 1-hour cache is
//!   `anthropic(ttl=3600)`): a call more than the TTL after the previous one reads nothing and
//!   writes its whole prompt (see [`super`] on time).
//! - At the fitted `miss` and `credit`, a call is credited `(1 − miss) × credit` of the prefix
//!   the rules read; the rest of its prompt is written.

use super::{Billing, CacheModel, CacheRules, ContextCall, Request};

/// Block boundaries checked before a breakpoint.
pub const LOOKBACK: usize = 20;
/// Cache writes as a multiple of the input price (5-minute cache).
pub const WRITE_FACTOR: f64 = 1.25;
pub const READ_FACTOR: f64 = 0.1;
/// The default cache lifetime, refreshed on every hit.
pub const TTL_SECONDS: u64 = 300;

/// The longest cached prefix (in entries) within the lookback of a breakpoint after entry
/// `at` (`points` is sorted).
fn hit(points: &[usize], at: usize) -> usize {
    let upto = points.partition_point(|&p| p <= at);
    match upto.checked_sub(1).map(|i| points[i]) {
        Some(p) if p + LOOKBACK >= at => p,
        _ => 0,
    }
}

fn insert(points: &mut Vec<usize>, p: usize) {
    if let Err(i) = points.binary_search(&p) {
        points.insert(i, p);
    }
}

/// Bills a call on `req`; `points` holds the cached breakpoints (prefix lengths in entries,
/// sorted), to which this call's own are added.
pub fn bill(req: &Request, min_tokens: u64, points: &mut Vec<usize>, output: u64) -> Billing {
    let rules = CacheRules::new(super::CacheKind::Anthropic, min_tokens);
    bill_with(req, &rules, points, output)
}

/// [`bill`] under `rules` (their minimum and fitted parameters).
pub fn bill_with(
    req: &Request,
    rules: &CacheRules,
    points: &mut Vec<usize>,
    output: u64,
) -> Billing {
    let min_tokens = rules.min_tokens;
    let len = req.len();
    let input = req.cost(len);
    if len == 0 || input < min_tokens {
        return Billing::of(0, 0, input, output);
    }
    let mut read_len = hit(points, len);
    if req.system > 0 {
        read_len = read_len.max(hit(points, req.system));
    }
    let read = rules.credited(req.cost(read_len));
    for at in [req.system, len] {
        if at > 0 && req.cost(at) >= min_tokens {
            insert(points, at);
        }
    }
    Billing::of(read, input - read, 0, output)
}

/// The context was replaced: cached prefixes longer than the `common` unchanged entries no
/// longer match anything the context can send.
pub fn replaced(common: usize, points: &mut Vec<usize>) {
    points.retain(|&p| p <= common);
}

/// Anthropic's rules: the fixed prefix at a breakpoint of its own, then the context's
/// breakpoints; what a call adds is written at its breakpoint.
pub struct AnthropicCache;

impl CacheModel for AnthropicCache {
    const TTL_SECONDS: Option<u64> = Some(TTL_SECONDS);
    /// The 5-minute cache and the 1-hour one.
    const LIFETIMES: &'static [u64] = &[300, 3600];

    fn call(c: ContextCall) -> Billing {
        let read = if c.held { c.rules.credited(c.fixed) } else { 0 };
        let mut bill = Billing::of(read, c.fixed - read, 0, 0);
        bill.add(bill_with(c.req, c.rules, c.breakpoints, c.output));
        bill
    }

    fn added(tokens: u64) -> Billing {
        Billing::of(0, tokens, 0, 0)
    }

    fn replaced(common: usize, breakpoints: &mut Vec<usize>) {
        replaced(common, breakpoints)
    }
}
