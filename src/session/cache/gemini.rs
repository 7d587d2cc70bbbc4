//! Gemini's implicit caching (Gemini API and Vertex AI, on by default since 2025-05-08).
//!
//! Rules (<https://ai.google.dev/gemini-api/docs/caching>, pages of 2025–2026): a request that
//! shares a common prefix with a recent request may read it from cache; the prefix must reach
//! the model's minimum (Gemini API: 1024 for 2.5 Flash, 2048 for 2.5 Pro, 4096 for 3 Pro
//! Preview; Vertex AI: 2048); no block size is documented, so the whole shared prefix is read.
//! Creating the cache costs nothing beyond the input (no write premium, no storage fee for
//! implicit caching); reads cost 0.1× the input price (the pricing page of 2025-10-31). The TTL
//! is undocumented ("a short amount of time"); not applied.
//!
//! Google calls the savings best-effort. The shared runs' transcripts show hits on ~90 % of
//! calls above 3 000 tokens, each crediting about the previous prompt less ~1 200 tokens
//! (see the README's cache section); at its defaults this model credits every hit in full, an
//! upper bound, and `miss` / `credit` fitted on those transcripts bring it down to them.

use super::{Billing, CacheModel, CacheRules, ContextCall};

/// Bills a call of `input` units whose first `shared` units equal the previous request's.
pub fn bill(input: u64, shared: u64, rules: &CacheRules, output: u64) -> Billing {
    let shared = shared.min(input);
    let read = if shared >= rules.min_tokens {
        rules.credited(shared)
    } else {
        0
    };
    Billing::of(read, 0, input - read, output)
}

/// Gemini's rules, on the agent's calls and on prompts sent apart alike.
pub struct GeminiCache;

impl CacheModel for GeminiCache {
    fn call(c: ContextCall) -> Billing {
        bill(c.input, c.shared, c.rules, c.output)
    }

    fn separate(rules: &CacheRules, input: u64, shared: u64, output: u64) -> Billing {
        bill(input, shared, rules, output)
    }
}
