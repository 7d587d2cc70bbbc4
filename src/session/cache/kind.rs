//! Whose cache rules bill a session: the names a configuration spells (`session.cache`), below
//! the price table that says whose rules each model's prices follow.

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

    /// Whether the rules have the free parameters `miss` and `credit` (a provider's cache).
    pub fn fits(self) -> bool {
        matches!(
            self,
            CacheKind::Anthropic | CacheKind::OpenAi | CacheKind::Gemini
        )
    }
}
