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
//! **Time.** Caches expire (Anthropic: 5 minutes after the last use, or 1 hour with the longer
//! cache; OpenAI: 5–10 minutes of inactivity, the shorter taken; Gemini: undocumented, so no
//! TTL unless a spec gives one). When a call and the one before it both have a time (the time
//! of the call's first output record, which transcripts such as Claude Code's carry) and more
//! than the TTL passed between them, the call finds the cache empty: nothing is read, and on
//! Anthropic's the whole prompt is written again. Every call refreshes every entry it could
//! read (Claude Code reads its system prompt and its last request's prefix on every call), so
//! the cache is emptied as a whole. Without times every call is taken to come within the TTL.
//!
//! **Fitted parameters.** What the documents leave open is a spec's parameters, fitted on the
//! usage transcripts record (`ctxlab calibrate --fit-cache`): `miss`, the probability that a
//! call which could read the cache reads nothing of it, and `credit`, the share of the
//! readable prefix a hit is credited; e.g. `gemini(miss=0.1, credit=0.9)`. A call is credited
//! their expected value, `(1 − miss) × credit` of what the rules read (the rest is uncached,
//! or written on Anthropic's), rounded to whole units: a bill that is linear in the draws has
//! the draws' mean, and two strategies compared on one history are not told apart by which of
//! their calls an independent draw happened to miss. The defaults, `miss = 0` and
//! `credit = 1`, are the rules as documented. `ttl` (seconds) sets the lifetime: Anthropic's
//! 1-hour cache is `anthropic(ttl=3600)`.
//!
//! Between two calls the context only grows at its end, so the prefix the previous request
//! shares with the current one is that whole request; only a compaction rewrites it.
//! [`Prefix`] tracks that in two numbers instead of a copy of the previous input.

pub(crate) mod kind;

pub use kind::CacheKind;

use super::prices::Prices;
use crate::history::RecordedCall;
use serde::{Deserialize, Serialize};

/// A cache's rules: how it bills each kind of call, one module each (listed in `kind.rs`).
/// What a rule leaves unsaid is a prompt billed as plain input.
pub trait CacheModel {
    /// The provider's cache lifetime in seconds (`None`: undocumented or not applicable).
    const TTL_SECONDS: Option<u64> = None;
    /// The lifetimes the provider offers, which `calibrate --fit-cache` chooses between.
    const LIFETIMES: &'static [u64] = &[];

    /// Bills a call on the agent's context (see [`Cache::call`]).
    fn call(c: ContextCall) -> Billing;

    /// Bills a prompt sent apart from the agent's context (see [`Cache::separate`]).
    fn separate(_rules: &CacheRules, input: u64, _shared: u64, output: u64) -> Billing {
        none::bill(input, output)
    }

    /// How `tokens` new to the prompt are billed (see [`Cache::added`]).
    fn added(tokens: u64) -> Billing {
        Billing::of(0, 0, tokens, 0)
    }

    /// The context was replaced; `common` leading entries are the same as before.
    fn replaced(_common: usize, _breakpoints: &mut Vec<usize>) {}

    /// What is left to bill at the end of a session that ran to the end (see [`Cache::rest`]).
    fn rest(_recorded: &mut recorded::Cursor, _history: &[RecordedCall]) -> Billing {
        Billing::default()
    }
}

/// What a call on the agent's context is billed from.
pub struct ContextCall<'a> {
    pub req: &'a Request<'a>,
    pub rules: &'a CacheRules,
    /// The session's cached Anthropic breakpoints.
    pub breakpoints: &'a mut Vec<usize>,
    /// The calls the transcript records, and the next one to bill.
    pub history: &'a [RecordedCall],
    pub recorded: &'a mut recorded::Cursor,
    /// The end of an agent call's output records (`None` for a compaction).
    pub output_end: Option<usize>,
    pub output: u64,
    /// The units every call sends ahead of the context, and whether the provider holds them.
    pub fixed: u64,
    pub held: bool,
    /// The whole input (the fixed prefix included), and how much of it repeats the previous
    /// request.
    pub input: u64,
    pub shared: u64,
}

/// Declares the caches' modules and hands each kind of call to its cache's rules.
macro_rules! cache_models {
    ($($module:ident => $variant:ident($model:ident) { name: $name:literal, provider: $provider:literal }),* $(,)?) => {
        $(pub mod $module;)*

        impl CacheKind {
            /// The provider's cache lifetime in seconds (`None`: undocumented or not
            /// applicable).
            pub fn ttl_seconds(self) -> Option<u64> {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::TTL_SECONDS,)*
                }
            }

            /// The lifetimes the provider offers, to choose between (none: not fitted).
            pub fn lifetimes(self) -> &'static [u64] {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::LIFETIMES,)*
                }
            }

            fn bill_call(self, c: ContextCall) -> Billing {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::call(c),)*
                }
            }

            fn bill_separate(self, rules: &CacheRules, input: u64, shared: u64, output: u64) -> Billing {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::separate(rules, input, shared, output),)*
                }
            }

            fn bill_added(self, tokens: u64) -> Billing {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::added(tokens),)*
                }
            }

            fn bill_replaced(self, common: usize, breakpoints: &mut Vec<usize>) {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::replaced(common, breakpoints),)*
                }
            }

            fn bill_rest(self, recorded: &mut recorded::Cursor, history: &[RecordedCall]) -> Billing {
                match self {
                    $(CacheKind::$variant => <$module::$model as CacheModel>::rest(recorded, history),)*
                }
            }
        }
    };
}

kind::caches!(cache_models);

/// The cache rules a session bills with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheRules {
    pub kind: CacheKind,
    /// The shortest prefix the provider caches, in units of the cost model (its tokens).
    pub min_tokens: u64,
    /// How long an unused cache entry lives, applied between calls that have times (`None`:
    /// never expires).
    pub ttl_seconds: Option<u64>,
    /// The probability that a call which could read the cache reads none of it.
    pub miss: f64,
    /// The share of the readable prefix a hit is credited.
    pub credit: f64,
}

impl CacheRules {
    pub fn new(kind: CacheKind, min_tokens: u64) -> Self {
        CacheRules {
            kind,
            min_tokens,
            ttl_seconds: kind.ttl_seconds(),
            miss: 0.0,
            credit: 1.0,
        }
    }

    /// The rules with a spec's parameters applied.
    pub fn with(mut self, spec: &CacheSpec) -> Self {
        if let Some(m) = spec.miss {
            self.miss = m;
        }
        if let Some(c) = spec.credit {
            self.credit = c;
        }
        if let Some(t) = spec.ttl {
            self.ttl_seconds = Some(t);
        }
        self
    }

    /// What a call is credited of the `readable` units the rules would read: all of them at
    /// the defaults, else `(1 − miss) × credit` of them, rounded.
    pub fn credited(&self, readable: u64) -> u64 {
        let share = (1.0 - self.miss) * self.credit;
        if share == 1.0 {
            readable
        } else {
            ((readable as f64 * share).round() as u64).min(readable)
        }
    }

    /// The spec that gives these rules: the kind's name, with the parameters that are not the
    /// defaults (`gemini(miss=0.1, credit=0.9)`).
    pub fn spec(&self) -> String {
        let mut params = Vec::new();
        if self.miss != 0.0 {
            params.push(format!("{MISS}={}", self.miss));
        }
        if self.credit != 1.0 {
            params.push(format!("{CREDIT}={}", self.credit));
        }
        if self.ttl_seconds != self.kind.ttl_seconds() {
            if let Some(t) = self.ttl_seconds {
                params.push(format!("{TTL}={t}"));
            }
        }
        if params.is_empty() {
            self.kind.as_str().to_string()
        } else {
            format!("{}({})", self.kind.as_str(), params.join(", "))
        }
    }
}

/// The parameters a provider's cache takes, as its spec names them, in the order it writes them.
pub const PROVIDER_PARAMS: [&str; 3] = [MISS, CREDIT, TTL];
/// The parameters `ctxlab calibrate --fit-cache` fits.
pub const FITTED_PARAMS: [&str; 2] = [MISS, CREDIT];
const MISS: &str = "miss";
const CREDIT: &str = "credit";
const TTL: &str = "ttl";

/// A cache as an experiment file or a flag names it: `gemini`, or
/// `gemini(miss=0.105, credit=0.95)`, `anthropic(ttl=3600)`; what is not given is the rules'
/// default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheSpec {
    pub kind: CacheKind,
    pub miss: Option<f64>,
    pub credit: Option<f64>,
    pub ttl: Option<u64>,
}

impl CacheSpec {
    pub fn of(kind: CacheKind) -> Self {
        CacheSpec {
            kind,
            miss: None,
            credit: None,
            ttl: None,
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let spec = crate::spec::Spec::parse_as(text, "cache").map_err(|e| e.0)?;
        let kind = CacheKind::parse(&spec.name).ok_or_else(|| {
            format!(
                "unknown cache {:?}, expected one of {}",
                spec.name,
                CacheKind::NAMES.join(", ")
            )
        })?;
        let mut out = CacheSpec::of(kind);
        use crate::spec::SpecValue;
        for (key, value) in &spec.params {
            if !kind.fits() {
                return Err(format!(
                    "cache `{}` takes no parameters ({} are a provider cache's: {})",
                    kind.as_str(),
                    backquoted_and(&PROVIDER_PARAMS),
                    CacheKind::names_where(CacheKind::fits)
                ));
            }
            let number = match value {
                SpecValue::Int(i) => Some(*i as f64),
                SpecValue::Float(x) => Some(*x),
                _ => None,
            };
            match (key.as_str(), number) {
                (MISS, Some(x)) if (0.0..1.0).contains(&x) => out.miss = Some(x),
                (CREDIT, Some(x)) if x > 0.0 && x <= 1.0 => out.credit = Some(x),
                (TTL, Some(_)) if matches!(value, SpecValue::Int(i) if *i > 0) => {
                    out.ttl = Some(number.unwrap_or(0.0) as u64)
                }
                (MISS, _) => {
                    return Err(format!(
                        "cache `{}`: `miss` expects a probability from 0 up to (not including) 1, found `{value}`",
                        kind.as_str()
                    ))
                }
                (CREDIT, _) => {
                    return Err(format!(
                        "cache `{}`: `credit` expects a share above 0 and at most 1, found `{value}`",
                        kind.as_str()
                    ))
                }
                (TTL, _) => {
                    return Err(format!(
                        "cache `{}`: `ttl` expects whole seconds above 0 (300, 3600), found `{value}`",
                        kind.as_str()
                    ))
                }
                (other, _) => {
                    return Err(format!(
                        "cache `{}`: unknown parameter `{other}` (known: {})",
                        kind.as_str(),
                        PROVIDER_PARAMS.join(", ")
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// Parameter names as a message lists them all: `` `miss` and `credit` ``.
pub fn backquoted_and(params: &[&str]) -> String {
    let quoted: Vec<String> = params.iter().map(|p| format!("`{p}`")).collect();
    crate::quote::and_list(&quoted)
}

impl<'de> Deserialize<'de> for CacheSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CacheSpec::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for CacheSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rules = CacheRules::new(self.kind, 0).with(self);
        s.serialize_str(&rules.spec())
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
    /// The time of the latest call that had one.
    last_call: Option<crate::history::Time>,
    /// Units every call sends ahead of the context ([`super::SessionConfig::prefix_tokens`]).
    fixed_prefix: u64,
    /// Whether the provider holds the fixed prefix (a call sent it and the cache has not
    /// expired since).
    fixed_prefix_held: bool,
    /// Whether the latest call found the cache expired.
    emptied: bool,
}

impl Cache {
    pub fn new(rules: CacheRules) -> Self {
        Cache {
            rules,
            prefix: Prefix::default(),
            recorded: recorded::Cursor::default(),
            last_call: None,
            fixed_prefix: 0,
            fixed_prefix_held: false,
            emptied: false,
        }
    }

    /// The cache of a session whose every call sends `tokens` ahead of the context.
    pub fn with_fixed_prefix(mut self, tokens: u64) -> Self {
        self.fixed_prefix = tokens;
        self
    }

    /// A call is made at `now`: whether more than the TTL passed since the previous call, so
    /// that the cache holds nothing (never without both times).
    fn expired(&mut self, now: Option<crate::history::Time>) -> bool {
        let Some(now) = now else { return false };
        let expired = match (self.last_call, self.rules.ttl_seconds) {
            (Some(last), Some(ttl)) => now.seconds_since(last) > ttl as f64,
            _ => false,
        };
        self.last_call = Some(now);
        expired
    }

    /// Whether the latest call found the cache expired, so that it could read nothing.
    pub fn emptied(&self) -> bool {
        self.emptied
    }

    /// Bills a call on `req` with `output` units of output. `breakpoints` is the session's
    /// list of cached Anthropic breakpoints (cleared when the session starts); `output_end`
    /// ends an agent call's output records (`None` for a compaction), which is how `recorded`
    /// finds the calls the transcript billed. `now` is the call's time, if the history has
    /// one.
    pub fn call(
        &mut self,
        req: &Request,
        breakpoints: &mut Vec<usize>,
        history: &[RecordedCall],
        output_end: Option<usize>,
        output: u64,
        now: Option<crate::history::Time>,
    ) -> Billing {
        let mut shared = self.prefix.call(req.len());
        let expired = self.expired(now);
        self.emptied = expired;
        if expired {
            shared = 0;
            breakpoints.clear();
        }
        // The fixed prefix goes ahead of the context, unchanged by any compaction: once a call
        // sent it, a prefix cache shares it with every later call until the cache expires,
        // with what the context shares after it; Anthropic's holds it as a block at a
        // breakpoint of its own (Claude Code places one after its system prompt), read with the
        // rules' `credit` and `miss` and written again where not read; `recorded` bills the
        // transcript's own figures, which include it already.
        let fixed = self.fixed_prefix;
        let held = self.fixed_prefix_held && !expired;
        self.fixed_prefix_held = true;
        let shared = match shared {
            0 if held => fixed,
            0 => 0,
            m => fixed + req.cost(m),
        };
        let input = fixed + req.cost(req.len());
        self.rules.kind.bill_call(ContextCall {
            req,
            rules: &self.rules,
            breakpoints,
            history,
            recorded: &mut self.recorded,
            output_end,
            output,
            fixed,
            held,
            input,
            shared,
        })
    }

    /// Bills a call on a prompt sent apart from the agent's context (a harness's own summary
    /// prompt) of `input` units, whose first `shared` units repeat the prompt of the call just
    /// before it: the prefix rules of OpenAI and Gemini read that prefix; Anthropic caches only
    /// at breakpoints, which no such prompt here sets, and `recorded` has no figure for a call
    /// the run never made, so both bill it as plain input. What the agent's calls have cached
    /// is left as it is.
    pub fn separate(&self, input: u64, shared: u64, output: u64) -> Billing {
        self.rules
            .kind
            .bill_separate(&self.rules, input, shared, output)
    }

    /// How `tokens` of a prompt are billed when the provider already holds them: the call
    /// just before sent them (a prefix cache reads what its rules credit; without a cache, or
    /// for a call `recorded` has no figure for, they are plain input). Used for the calls a
    /// session adds beside the replay ([`super::need`]), which leave the cache as it is; the
    /// prompts such tokens sit in are taken to be past the minimum cacheable length (an
    /// agent's context is, after its first calls).
    pub fn carried(&self, tokens: u64) -> Billing {
        let read = match self.rules.kind.fits() {
            true => self.rules.credited(tokens),
            false => 0,
        };
        Billing::of(read, 0, tokens - read, 0)
    }

    /// How `tokens` new to the prompt are billed: written to Anthropic's cache at its
    /// breakpoint, plain input elsewhere.
    pub fn added(&self, tokens: u64) -> Billing {
        self.rules.kind.bill_added(tokens)
    }

    /// The context was replaced; `common` leading entries are the same as before.
    pub fn replaced(&mut self, common: usize, breakpoints: &mut Vec<usize>) {
        self.prefix.replaced(common);
        self.rules.kind.bill_replaced(common, breakpoints);
    }

    /// At the end of a session that ran to the end: the recorded calls after its last agent
    /// call (responses that left no record), so `recorded` bills every call it records.
    pub fn rest(&mut self, history: &[RecordedCall]) -> Billing {
        self.rules.kind.bill_rest(&mut self.recorded, history)
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

    #[test]
    fn every_parameter_is_read_and_offered() {
        let unknown = CacheSpec::parse("gemini(hit=1)").unwrap_err();
        assert_eq!(
            unknown,
            "cache `gemini`: unknown parameter `hit` (known: miss, credit, ttl)"
        );
        let none = CacheSpec::parse("none(miss=0.1)").unwrap_err();
        assert!(
            none.contains(
                "(`miss`, `credit` and `ttl` are a provider cache's: anthropic, openai, gemini)"
            ),
            "{none}"
        );
        for param in PROVIDER_PARAMS {
            // Each is read: a value out of range is refused by what the parameter expects.
            let e = CacheSpec::parse(&format!("gemini({param}=-1)")).unwrap_err();
            assert!(e.contains(&format!("`{param}` expects")), "{e}");
            assert!(unknown.contains(param) && none.contains(&format!("`{param}`")));
        }
        // Each fitted parameter is one the spec reads, and what a fitted spec writes back.
        let fitted = CacheSpec::parse("gemini(miss=0.25, credit=0.5)").unwrap();
        let rules = CacheRules::new(CacheKind::Gemini, 0).with(&fitted);
        assert_eq!(rules.spec(), "gemini(miss=0.25, credit=0.5)");
        assert!(FITTED_PARAMS.iter().all(|p| PROVIDER_PARAMS.contains(p)));
    }
}
