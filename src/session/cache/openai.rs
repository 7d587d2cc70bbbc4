//! OpenAI's automatic prompt caching.
//!
//! Rules (<https://developers.openai.com/docs/guides/prompt-caching>, the gpt-4o … gpt-5 era,
//! 2025; the cookbook's `Prompt_Caching_201`): no markers; a request reads the longest prefix
//! it shares exactly with a recent request, once the prompt is at least 1024 tokens long, in
//! steps of [`GRANULARITY`] tokens (cached counts are 0, 1024, 1152, 1280, …). No write premium:
//! what is not read is plain input. Reads cost 0.1× (gpt-5, gpt-5-mini), 0.25× (gpt-4.1) or
//! 0.5× (gpt-4o) the input price. Requests are routed by a hash of their first ~256 tokens;
//! here every request reaches the machine holding the previous one. In-memory retention lasts
//! 5–10 minutes of inactivity ([`TTL_SECONDS`], the shorter, applied between calls with times).

use super::{Billing, CacheModel, CacheRules, ContextCall};

/// Cache hits grow in steps of this many tokens past the minimum.
pub const GRANULARITY: u64 = 128;
/// The shortest in-memory retention the guide gives.
pub const TTL_SECONDS: u64 = 300;

/// Bills a call of `input` units whose first `shared` units equal the previous request's.
pub fn bill(input: u64, shared: u64, rules: &CacheRules, output: u64) -> Billing {
    let shared = shared.min(input);
    let min_tokens = rules.min_tokens;
    let read = if shared >= min_tokens && shared > 0 {
        rules.credited(min_tokens + (shared - min_tokens) / GRANULARITY * GRANULARITY)
    } else {
        0
    };
    Billing::of(read, 0, input - read, output)
}

/// OpenAI's rules, on the agent's calls and on prompts sent apart alike.
pub struct OpenAiCache;

impl CacheModel for OpenAiCache {
    const TTL_SECONDS: Option<u64> = Some(TTL_SECONDS);

    fn call(c: ContextCall) -> Billing {
        bill(c.input, c.shared, c.rules, c.output)
    }

    fn separate(rules: &CacheRules, input: u64, shared: u64, output: u64) -> Billing {
        bill(input, shared, rules, output)
    }
}
