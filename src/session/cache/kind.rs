//! Whose cache rules bill a session: the caches' list, one line each, and the names a
//! configuration spells (`session.cache`), below the price table that says whose rules each
//! model's prices follow.

use serde::{Deserialize, Serialize};

/// The caches, one line each: its module (`src/session/cache/<module>.rs`, which implements
/// [`super::CacheModel`] for its type), its variant, the name `session.cache` gives it, and
/// whether it is a provider's cache (one that takes the fitted parameters `miss`, `credit` and
/// `ttl` and whose models are rows of the price table). The first is the default. A new cache
/// is its module, its line here and its models' rows in `session/prices.rs`.
///
/// `caches!(then)` hands the list to the macro `then`: [`CacheKind`] below, the modules and
/// what each bills in `mod.rs`.
macro_rules! caches {
    ($then:ident) => {
        $then! {
            anthropic => Anthropic(AnthropicCache) { name: "anthropic", provider: true },
            openai => OpenAi(OpenAiCache) { name: "openai", provider: true },
            gemini => Gemini(GeminiCache) { name: "gemini", provider: true },
            none => None(NoCache) { name: "none", provider: false },
            recorded => Recorded(RecordedCache) { name: "recorded", provider: false },
        }
    };
}
pub(crate) use caches;

/// Declares [`CacheKind`] from the list.
macro_rules! cache_kinds {
    ($($module:ident => $variant:ident($model:ident) { name: $name:literal, provider: $provider:literal }),* $(,)?) => {
        /// Whose cache rules bill a session (`session.cache`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
        pub enum CacheKind {
            $(#[serde(rename = $name)] $variant,)*
        }

        impl CacheKind {
            /// Every cache, in the order of the list.
            pub const ALL: [CacheKind; [$($name),*].len()] = [$(CacheKind::$variant),*];
            pub const NAMES: [&'static str; [$($name),*].len()] = [$($name),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(CacheKind::$variant => $name,)*
                }
            }

            /// Whether the rules have the free parameters `miss` and `credit` (a provider's
            /// cache).
            pub fn fits(self) -> bool {
                match self {
                    $(CacheKind::$variant => $provider,)*
                }
            }
        }
    };
}

caches!(cache_kinds);

/// The first cache of the list: Anthropic's, explicit breakpoints where Claude Code places
/// them, with the default model `claude-sonnet-4.5`.
impl Default for CacheKind {
    fn default() -> Self {
        CacheKind::ALL[0]
    }
}

impl CacheKind {
    pub fn parse(s: &str) -> Option<Self> {
        CacheKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The names of the caches `keep` selects, in the order of the list.
    fn selected(keep: impl Fn(CacheKind) -> bool) -> Vec<&'static str> {
        CacheKind::ALL
            .into_iter()
            .filter(|&k| keep(k))
            .map(CacheKind::as_str)
            .collect()
    }

    /// The names of the caches `keep` selects, in the order of the list, joined with `, `
    /// (`anthropic, openai, gemini` for the providers').
    pub fn names_where(keep: impl Fn(CacheKind) -> bool) -> String {
        CacheKind::selected(keep).join(", ")
    }

    /// The names of the caches `keep` selects as a help text offers them (`anthropic, openai,
    /// gemini, none or recorded` for all).
    pub fn names_or_where(keep: impl Fn(CacheKind) -> bool) -> String {
        crate::quote::or_list(&CacheKind::selected(keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_lists_hold_every_selected_cache_in_order() {
        assert_eq!(
            CacheKind::names_or_where(|_| true),
            "anthropic, openai, gemini, none or recorded"
        );
        assert_eq!(
            CacheKind::names_where(CacheKind::fits),
            "anthropic, openai, gemini"
        );
        // Whatever the list holds, each name is offered once, in the list's order.
        let all = CacheKind::names_where(|_| true);
        assert_eq!(all, CacheKind::NAMES.join(", "));
    }
}
