//! List prices per model: ONE table, with its date, that `session.model` (`--model`) reads.
//!
//! Prices are in US dollars per million tokens, the base tier (prompts up to 200 000 tokens;
//! Gemini and Anthropic's long-context option charge more above it, not modelled). Cache
//! factors are multiples of the input price: Anthropic bills a 5-minute cache write 1.25× and a
//! read 0.1×; OpenAI and Gemini's implicit cache bill no write premium (what is cached is
//! billed as plain input: factor 1) and read at 0.1× (gpt-5, gpt-5-mini, Gemini 2.5 and 3),
//! 0.25× (gpt-4.1) or 0.5× (gpt-4o). The minimum is the shortest prompt prefix the provider
//! caches, in its tokens.
//!
//! Sources (stored copies, read for this table; see the README's cache section):
//! - Anthropic: <https://platform.claude.com/docs/en/about-claude/pricing> and the prompt
//!   caching guide (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>),
//!   minimums as the guide lists them (1024 for Sonnet 4/4.5 and Opus 4/4.1, 4096 for Opus 4.5
//!   and Haiku 4.5).
//! - OpenAI: <https://openai.com/api/pricing> (Standard tier) and
//!   <https://developers.openai.com/docs/guides/prompt-caching> (1024-token minimum).
//! - Google: <https://ai.google.dev/gemini-api/docs/pricing> ("Last updated 2025-10-31") and
//!   <https://ai.google.dev/gemini-api/docs/caching> (implicit-cache minimums: 2.5 Flash 1024,
//!   2.5 Pro 2048, 3 Pro Preview 4096; Vertex AI documents 2048 for every model).
//!
//! Prices change: the table holds those in force in November 2025, the month of the shared
//! SWE-bench runs (gemini-3-pro-preview, whose $2 / $12 and 0.1× reads their recorded costs
//! confirm).

// From its own file, not through `cache`, which reads these prices: no circle.
use super::cache::kind::CacheKind;
use super::invalid::{invalid, Invalid};

/// When the prices below were read off the providers' pages.
pub const PRICES_DATE: &str = "2025-11";

/// One model's list prices and cache rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrices {
    pub name: &'static str,
    /// Whose cache rules apply.
    pub provider: CacheKind,
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    pub cache_read_factor: f64,
    pub cache_write_factor: f64,
    /// The shortest prefix the provider caches, in its tokens.
    pub min_tokens: u64,
}

const fn row(
    name: &'static str,
    provider: CacheKind,
    (input, output): (f64, f64),
    (cache_read_factor, cache_write_factor): (f64, f64),
    min_tokens: u64,
) -> ModelPrices {
    ModelPrices {
        name,
        provider,
        input,
        output,
        cache_read_factor,
        cache_write_factor,
        min_tokens,
    }
}

use CacheKind::{Anthropic, Gemini, OpenAi};

/// The table (dated [`PRICES_DATE`]).
pub const MODELS: [ModelPrices; 13] = [
    row(
        "claude-sonnet-4.5",
        Anthropic,
        (3.0, 15.0),
        (0.1, 1.25),
        1024,
    ),
    row("claude-sonnet-4", Anthropic, (3.0, 15.0), (0.1, 1.25), 1024),
    row("claude-opus-4.5", Anthropic, (5.0, 25.0), (0.1, 1.25), 4096),
    row(
        "claude-opus-4.1",
        Anthropic,
        (15.0, 75.0),
        (0.1, 1.25),
        1024,
    ),
    row("claude-opus-4", Anthropic, (15.0, 75.0), (0.1, 1.25), 1024),
    row("claude-haiku-4.5", Anthropic, (1.0, 5.0), (0.1, 1.25), 4096),
    row("gpt-5", OpenAi, (1.25, 10.0), (0.1, 1.0), 1024),
    row("gpt-5-mini", OpenAi, (0.25, 2.0), (0.1, 1.0), 1024),
    row("gpt-4.1", OpenAi, (2.0, 8.0), (0.25, 1.0), 1024),
    row("gpt-4o", OpenAi, (2.5, 10.0), (0.5, 1.0), 1024),
    row(
        "gemini-3-pro-preview",
        Gemini,
        (2.0, 12.0),
        (0.1, 1.0),
        4096,
    ),
    row("gemini-2.5-pro", Gemini, (1.25, 10.0), (0.1, 1.0), 2048),
    row("gemini-2.5-flash", Gemini, (0.30, 2.50), (0.1, 1.0), 1024),
];

/// The model a session is priced as when it names none: `claude-sonnet-4.5`, whose list
/// prices ($3 / $15, reads 0.1×, writes 1.25×) were ctxlab's defaults before the table, so
/// the default bill is one provider's prices under that provider's own cache rules.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4.5";

/// A provider's model when a session names the cache but no model: the provider's first row
/// of the table (`gpt-5`; `gemini-3-pro-preview`, the model of the shared SWE-bench runs), or
/// [`DEFAULT_MODEL`] for a cache without rows.
pub fn default_model(cache: CacheKind) -> &'static str {
    MODELS
        .iter()
        .find(|m| m.provider == cache)
        .map_or(DEFAULT_MODEL, |m| m.name)
}

/// The row of `name`, or a message listing the known models.
pub fn lookup(name: &str) -> Result<&'static ModelPrices, String> {
    MODELS.iter().find(|m| m.name == name).ok_or_else(|| {
        format!(
            "unknown model {name:?}: the price table ({PRICES_DATE}) knows {}",
            names().join(", ")
        )
    })
}

pub fn names() -> Vec<&'static str> {
    MODELS.iter().map(|m| m.name).collect()
}

/// Prices per million units of the cost model (tokens under `approx-tokens`).
///
/// Defaults: the row of [`DEFAULT_MODEL`] in the price table (claude-sonnet-4.5: $3
/// per million input, $15 per million output, cache reads 0.1× and five-minute cache writes
/// 1.25× the input price).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read_factor: f64,
    pub cache_write_factor: f64,
}

impl Default for Prices {
    fn default() -> Self {
        Prices::of(default_row())
    }
}

/// The largest price (per million tokens) or cache factor accepted.
const MAX_PRICE: f64 = 1e6;

fn default_row() -> &'static ModelPrices {
    lookup(DEFAULT_MODEL).expect("the default model is in the table")
}

impl Prices {
    /// A model's list prices and its provider's cache factors.
    pub fn of(m: &ModelPrices) -> Self {
        Prices {
            input: m.input,
            output: m.output,
            cache_read_factor: m.cache_read_factor,
            cache_write_factor: m.cache_write_factor,
        }
    }

    pub(super) fn validate(&self) -> Result<(), Invalid> {
        for (key, v) in [
            ("price_input", self.input),
            ("price_output", self.output),
            ("cache_read_factor", self.cache_read_factor),
            ("cache_write_factor", self.cache_write_factor),
        ] {
            // A bound keeps every cost finite: 10^6 (dollars per million tokens, or a cache
            // factor) is far above any real price, and 10^6 × 2^64 tokens is still finite.
            if !(v.is_finite() && (0.0..=MAX_PRICE).contains(&v)) {
                return Err(invalid(
                    key,
                    format!("{v} is not a price: expected a number ≥ 0 and at most {MAX_PRICE}"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_is_found_and_unknown_ones_list_the_table() {
        for m in &MODELS {
            assert_eq!(lookup(m.name).unwrap(), m);
            assert!(m.input > 0.0 && m.output > m.input && m.cache_read_factor < 1.0);
        }
        let e = lookup("gemini-9").unwrap_err();
        assert!(e.contains("unknown model \"gemini-9\""), "{e}");
        assert!(e.contains("claude-sonnet-4.5, claude-sonnet-4,"), "{e}");
        assert!(e.contains("(2025-11)"), "{e}");
        // Every provider's cache has rows, the first its default model; the others price as
        // the default model.
        for kind in CacheKind::ALL {
            let provider = lookup(default_model(kind)).unwrap().provider;
            assert_eq!(provider == kind, kind.fits(), "{kind:?}");
        }
        assert_eq!(default_model(CacheKind::OpenAi), "gpt-5");
        assert_eq!(default_model(CacheKind::Gemini), "gemini-3-pro-preview");
        assert_eq!(default_model(CacheKind::Anthropic), DEFAULT_MODEL);
        assert_eq!(default_model(CacheKind::Recorded), DEFAULT_MODEL);
    }
}
