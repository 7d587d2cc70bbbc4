//! Provider prompt caches: how each call of a session is billed, by class — tokens read from
//! the provider's cache, tokens written to it (at a premium) and uncached input (at the input
//! price) — with `input = cache_read + cache_write + uncached` for every call.
//!
//! One module per provider, each with its documented rules (sources and dates in each module
//! and in the README's cache section), chosen by `session.cache` / `--cache`:
//!
//! | cache | reads | writes | rest |
//! | --- | --- | --- | --- |
//! | [`anthropic`] | the longest cached breakpoint prefix within 20 blocks of a breakpoint | the rest of the prompt, to its final breakpoint (1.25×) | 0 |
//! | [`openai`] | the prefix shared with the previous request, in 128-token steps from 1024 | none | uncached |
//! | [`gemini`] | the prefix shared with the previous request (implicit caching) | none | uncached |
//! | [`none`] | none | none | the whole prompt |
//! | [`recorded`] | what the transcript records | what the transcript records | what the transcript records |
//!
//! Every model call is billed, agent and compaction calls alike. A prefix is counted in context
//! entries (a block is one entry: a record, a stand-in, a summary, the notes) and its length in
//! the cost model's units, which the rules take for the provider's tokens (they are tokens under
//! `approx-tokens` and `tokens`). Minimum cacheable lengths come from the model's row of the
//! price table ([`super::prices`]) unless `cache_min_tokens` overrides them.
//!
//! **Time.** Caches expire (Anthropic: 5 minutes after the last use, OpenAI: 5–10 minutes of
//! inactivity, Gemini: undocumented). Histories carry no timestamps, so every call is assumed to
//! come within the TTL of the one before it; [`CacheRules::ttl_seconds`] documents each
//! provider's TTL for when they do.
//!
//! Between two calls the context only grows at its end, so the prefix the previous request
//! shares with the current one is that whole request; only a compaction rewrites it.
//! [`Prefix`] tracks that in two numbers instead of a copy of the previous input.

pub mod anthropic;
pub mod gemini;
pub mod none;
pub mod openai;
pub mod recorded;

use super::config::Prices;
use crate::history::RecordedCall;
use serde::{Deserialize, Serialize};

/// Whose cache rules bill a session (`session.cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    /// Explicit breakpoints where Claude Code places them; the default, with the default model
    /// `claude-sonnet-4.5`.
    #[default]
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
    Gemini,
    None,
    /// The figures the transcript records (a `raw` replay of a transcript only).
    Recorded,
}

impl CacheKind {
    pub const NAMES: [&'static str; 5] = ["anthropic", "openai", "gemini", "none", "recorded"];

    pub fn as_str(self) -> &'static str {
        match self {
            CacheKind::Anthropic => "anthropic",
            CacheKind::OpenAi => "openai",
            CacheKind::Gemini => "gemini",
            CacheKind::None => "none",
            CacheKind::Recorded => "recorded",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            CacheKind::Anthropic,
            CacheKind::OpenAi,
            CacheKind::Gemini,
            CacheKind::None,
            CacheKind::Recorded,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// The provider's cache lifetime in seconds (`None`: undocumented or not applicable).
    pub fn ttl_seconds(self) -> Option<u64> {
        match self {
            CacheKind::Anthropic => Some(anthropic::TTL_SECONDS),
            CacheKind::OpenAi => Some(openai::TTL_SECONDS),
            CacheKind::Gemini | CacheKind::None | CacheKind::Recorded => None,
        }
    }
}

/// The cache rules a session bills with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheRules {
    pub kind: CacheKind,
    /// The shortest prefix the provider caches, in units of the cost model (its tokens).
    pub min_tokens: u64,
    /// How long an unused cache entry lives. Not applied: histories carry no timestamps, so
    /// every call is taken to come within it; kept so a history with times can use it.
    pub ttl_seconds: Option<u64>,
}

impl CacheRules {
    pub fn new(kind: CacheKind, min_tokens: u64) -> Self {
        CacheRules {
            kind,
            min_tokens,
            ttl_seconds: kind.ttl_seconds(),
        }
    }
}

/// The context a call is made on, as the cache sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `cum[i]`: the summed cost of entries `..=i` (separators excluded).
    pub cum: &'a [u64],
    pub separator: u64,
    /// Leading entries that are the system prompt (Claude Code puts a breakpoint after them).
    pub system: usize,
}

impl Request<'_> {
    pub fn len(&self) -> usize {
        self.cum.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cum.is_empty()
    }

    /// The cost of the first `m` entries, separators included.
    pub fn cost(&self, m: usize) -> u64 {
        match m {
            0 => 0,
            m => self.cum[m - 1] + self.separator * (m as u64 - 1),
        }
    }
}

/// One call's (or a session's) tokens by class: `input = cache_read + cache_write + uncached`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billing {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub uncached: u64,
    pub output: u64,
}

impl Billing {
    /// A call of `output` units whose `input` splits into these classes.
    pub fn of(cache_read: u64, cache_write: u64, uncached: u64, output: u64) -> Self {
        Billing {
            input: cache_read + cache_write + uncached,
            cache_read,
            cache_write,
            uncached,
            output,
        }
    }

    pub fn add(&mut self, b: Billing) {
        self.input += b.input;
        self.cache_read += b.cache_read;
        self.cache_write += b.cache_write;
        self.uncached += b.uncached;
        self.output += b.output;
    }

    /// `(read × in × read_factor + write × in × write_factor + uncached × in + output × out)
    /// / 10⁶`.
    pub fn cost(&self, p: &Prices) -> f64 {
        (self.cache_read as f64 * p.input * p.cache_read_factor
            + self.cache_write as f64 * p.input * p.cache_write_factor
            + self.uncached as f64 * p.input
            + self.output as f64 * p.output)
            / 1e6
    }
}

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
    /// entries it shares with the previous call's input, and makes this input the previous one.
    pub fn call(&mut self, len: usize) -> usize {
        let shared = self.previous_len.min(self.unchanged);
        self.previous_len = len;
        self.unchanged = len;
        shared
    }

    /// The context was replaced; `common` leading entries are the same as before.
    pub fn replaced(&mut self, common: usize) {
        self.unchanged = self.unchanged.min(common);
    }
}

/// A session's cache: its rules and what the provider holds.
#[derive(Debug, Clone, Copy)]
pub struct Cache {
    rules: CacheRules,
    prefix: Prefix,
    recorded: recorded::Cursor,
}

impl Cache {
    pub fn new(rules: CacheRules) -> Self {
        Cache {
            rules,
            prefix: Prefix::default(),
            recorded: recorded::Cursor::default(),
        }
    }

    /// Bills a call on `req` with `output` units of output. `breakpoints` is the session's
    /// list of cached Anthropic breakpoints (cleared when the session starts); `output_end`
    /// ends an agent call's output records (`None` for a compaction), which is how `recorded`
    /// finds the calls the transcript billed.
    pub fn call(
        &mut self,
        req: &Request,
        breakpoints: &mut Vec<usize>,
        history: &[RecordedCall],
        output_end: Option<usize>,
        output: u64,
    ) -> Billing {
        let shared = self.prefix.call(req.len());
        let input = req.cost(req.len());
        let min = self.rules.min_tokens;
        match self.rules.kind {
            CacheKind::Anthropic => anthropic::bill(req, min, breakpoints, output),
            CacheKind::OpenAi => openai::bill(input, req.cost(shared), min, output),
            CacheKind::Gemini => gemini::bill(input, req.cost(shared), min, output),
            CacheKind::None => none::bill(input, output),
            CacheKind::Recorded => match output_end {
                Some(end) => self.recorded.upto(history, end),
                // Only `raw` replays are billed as recorded, and they never compact.
                None => none::bill(input, output),
            },
        }
    }

    /// Bills a call on a prompt sent apart from the agent's context (a harness's own summary
    /// prompt) of `input` units, whose first `shared` units repeat the prompt of the call just
    /// before it: the prefix rules of OpenAI and Gemini read that prefix; Anthropic caches only
    /// at breakpoints, which no such prompt here sets, and `recorded` has no figure for a call
    /// the run never made, so both bill it as plain input. What the agent's calls have cached
    /// is left as it is.
    pub fn separate(&self, input: u64, shared: u64, output: u64) -> Billing {
        let min = self.rules.min_tokens;
        match self.rules.kind {
            CacheKind::OpenAi => openai::bill(input, shared, min, output),
            CacheKind::Gemini => gemini::bill(input, shared, min, output),
            CacheKind::Anthropic | CacheKind::None | CacheKind::Recorded => {
                none::bill(input, output)
            }
        }
    }

    /// The context was replaced; `common` leading entries are the same as before.
    pub fn replaced(&mut self, common: usize, breakpoints: &mut Vec<usize>) {
        self.prefix.replaced(common);
        if self.rules.kind == CacheKind::Anthropic {
            anthropic::replaced(common, breakpoints);
        }
    }

    /// At the end of a session that ran to the end: the recorded calls after its last agent
    /// call (responses that left no record), so `recorded` bills every call it records.
    pub fn rest(&mut self, history: &[RecordedCall]) -> Billing {
        match self.rules.kind {
            CacheKind::Recorded => self.recorded.upto(history, usize::MAX),
            _ => Billing::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_keep_the_prefix_and_replacements_cut_it() {
        let mut p = Prefix::default();
        assert_eq!(p.call(3), 0);
        assert_eq!(p.call(5), 3); // two entries appended: the three of the last input are shared
        p.replaced(2); // a compaction kept the first two entries
        assert_eq!(p.call(4), 2);
        p.replaced(7); // a longer common prefix than the last input cannot be shared
        assert_eq!(p.call(6), 4);
    }

    #[test]
    fn cost_applies_the_factors() {
        let b = Billing::of(600_000, 300_000, 100_000, 100_000);
        assert_eq!(b.input, 1_000_000);
        // 0.6 × 3 × 0.1 + 0.3 × 3 × 1.25 + 0.1 × 3 + 0.1 × 15 = 0.18 + 1.125 + 0.3 + 1.5
        assert!((b.cost(&Prices::default()) - 3.105).abs() < 1e-12);
    }

    #[test]
    fn names_parse_back() {
        for name in CacheKind::NAMES {
            assert_eq!(CacheKind::parse(name).unwrap().as_str(), name);
            let json = serde_json::to_string(&CacheKind::parse(name).unwrap()).unwrap();
            assert_eq!(json, format!("\"{name}\""));
        }
        assert_eq!(CacheKind::parse("google"), None);
    }
}
