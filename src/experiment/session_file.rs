//! The `[session]` table as written: the session sweep's axes and the options every session of
//! it shares, its keys grouped by job (label noise, compaction, billing, summary size) but
//! spelt flat in the file, as `session.target` or `session.cache`.

use super::frame::Field;
use super::keys::zero_rate;
use crate::session::{CacheSpec, Layers, SessionConfig, TriggerMode};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// The `[session]` table.
#[derive(Debug, Clone, Serialize)]
pub struct SessionFile {
    /// Strategy specs, as in `sweep.strategies`.
    pub strategies: Vec<toml::Value>,
    /// Context windows, in units of the cost model.
    pub windows: Vec<u64>,
    /// Trigger ratios: compact when usage ≥ window × ratio.
    pub ratios: Vec<f64>,
    /// Probabilities that a record is written to notes (flagged ones at twice the rate).
    pub note_rates: Vec<f64>,
    #[serde(flatten)]
    pub label_noise: NoiseFile,
    #[serde(flatten)]
    pub compaction: CompactionFile,
    #[serde(flatten)]
    pub billing: BillingFile,
    /// Present (even empty, `layers = {}`): trigger on the history budget layer.
    pub layers: Option<LayersFile>,
    /// Units every call sends ahead of the context that transcripts do not hold (a system
    /// prompt, tool definitions), as `calibrate --fit-prefix` prints it (absent: 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub prefix_tokens: u64,
    #[serde(flatten)]
    pub summary: SummaryFile,
}

/// The label-noise axis: the uniform grid, as in `sweep.false_negative` /
/// `sweep.false_positive`, and noise-model specs, as in `sweep.noise`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NoiseFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_negative: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_positive: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<Vec<String>>,
}

/// When a session compacts, to what size, and when it stops.
#[derive(Debug, Clone, Serialize)]
pub struct CompactionFile {
    /// A compaction's capacity as a share of the window.
    pub target: f64,
    /// `keep_recent` for strategies whose spec does not set it (absent: each one's default).
    pub keep_recent: Option<u32>,
    /// What `window × ratio` is compared with: `"context"` (the context the next call would
    /// send, what real harnesses check; the default) or `"usage"` (the lesson's accumulator).
    pub trigger: TriggerMode,
    /// Reset usage after a compaction (`false`: the forgotten reset; usage trigger only).
    pub reset: bool,
    pub storm_turns: u32,
    /// Stop compacting after this many fruitless compactions in a row (absent: never).
    pub max_consecutive: Option<u32>,
}

// Defaults come from the session types themselves, so a file and `ctxlab session` agree.
impl Default for CompactionFile {
    fn default() -> Self {
        let c = SessionConfig::default();
        CompactionFile {
            target: c.target,
            keep_recent: None,
            trigger: TriggerMode::default(),
            reset: c.reset,
            storm_turns: c.storm_turns,
            max_consecutive: None,
        }
    }
}

/// Whose cache bills the calls, and at which prices.
#[derive(Debug, Clone, Default, Serialize)]
pub struct BillingFile {
    /// Whose prompt cache bills the calls: `"anthropic"`, `"openai"`, `"gemini"`, `"none"` or
    /// `"recorded"` (absent: the model's provider, else `"anthropic"`); a provider's cache may
    /// take fitted parameters, `"gemini(miss=0.1, credit=0.9)"`, `"anthropic(ttl=3600)"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheSpec>,
    /// Several caches as an axis in place of `cache`: every session is replayed once and
    /// billed under each, so a cost conclusion can be read under every cache that could be
    /// true (none, the provider's documented rules, a fitted spec). All must bill one model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caches: Option<Vec<CacheSpec>>,
    /// The model whose list prices (and whose provider's cache factors and minimum) apply, a
    /// row of the price table (absent: the cache's default model, `claude-sonnet-4.5` for
    /// Anthropic's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The shortest prefix the cache holds, in units of the cost model (absent: the model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_min_tokens: Option<u64>,
    /// Explicit prices, each overriding the model's.
    pub prices: PricesFile,
}

/// The summary-size axis ([`super::summary_axis`]): shares of what a summary replaces and
/// token caps, each strategy that writes a summary run at every one.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SummaryFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_ratios: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_caps: Option<Vec<u64>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `[session.prices]`: per million units of the cost model; each key given overrides the
/// model's price (absent ones are the model's, written back resolved in the manifest).
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PricesFile {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read_factor: Option<f64>,
    pub cache_write_factor: Option<f64>,
}

/// `[session.layers]`: the budget layers of [`Layers`].
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayersFile {
    /// Units kept free for output (absent: a tenth of each window).
    pub reserved_output: Option<u64>,
    /// System, work, knowledge and history shares in percent.
    #[serde(default = "default_shares")]
    pub shares: [f64; 4],
    #[serde(default = "default_trigger_fill")]
    pub trigger_fill: f64,
    #[serde(default = "default_target_fill")]
    pub target_fill: f64,
}

fn default_shares() -> [f64; 4] {
    Layers::new(0).shares
}
fn default_trigger_fill() -> f64 {
    Layers::new(0).trigger_fill
}
fn default_target_fill() -> f64 {
    Layers::new(0).target_fill
}

/// Every key of `[session]`, in the order messages list them.
const KEYS: &[&str] = &[
    "strategies",
    "windows",
    "ratios",
    "note_rates",
    "false_negative",
    "false_positive",
    "noise",
    "target",
    "keep_recent",
    "trigger",
    "reset",
    "storm_turns",
    "max_consecutive",
    "cache",
    "caches",
    "model",
    "cache_min_tokens",
    "prices",
    "layers",
    "prefix_tokens",
    "summary_ratios",
    "summary_caps",
];

// Written by hand because serde's flatten cannot deny unknown keys, and reads a flattened
// group from a buffer that loses the key of a bad value (`session.windows[0]` would be reported
// as `session`). This reads as the derived code of one flat struct would: unknown keys refused
// with the whole list, each value read where its key is, missing keys in the order of `KEYS`.
impl<'de> Deserialize<'de> for SessionFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("SessionFile", KEYS, SessionVisitor)
    }
}

struct SessionVisitor;

impl<'de> Visitor<'de> for SessionVisitor {
    type Value = SessionFile;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct SessionFile")
    }

    // A derived struct would read an array by position; the engine refuses that afterwards
    // with this message, which is given here at once.
    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<SessionFile, A::Error> {
        Err(de::Error::custom(super::shape::READ_BY_POSITION))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SessionFile, A::Error> {
        let (mut strategies, mut windows, mut ratios) = (None, None, None);
        let mut note_rates = zero_rate();
        let mut label_noise = NoiseFile::default();
        let mut compaction = CompactionFile::default();
        let mut billing = BillingFile::default();
        let (mut layers, mut prefix_tokens) = (None, 0);
        let mut summary = SummaryFile::default();
        while let Some(key) = map.next_key_seed(Field(KEYS))? {
            match key {
                "strategies" => strategies = Some(map.next_value()?),
                "windows" => windows = Some(map.next_value()?),
                "ratios" => ratios = Some(map.next_value()?),
                "note_rates" => note_rates = map.next_value()?,
                "false_negative" => label_noise.false_negative = map.next_value()?,
                "false_positive" => label_noise.false_positive = map.next_value()?,
                "noise" => label_noise.noise = map.next_value()?,
                "target" => compaction.target = map.next_value()?,
                "keep_recent" => compaction.keep_recent = map.next_value()?,
                "trigger" => compaction.trigger = map.next_value()?,
                "reset" => compaction.reset = map.next_value()?,
                "storm_turns" => compaction.storm_turns = map.next_value()?,
                "max_consecutive" => compaction.max_consecutive = map.next_value()?,
                "cache" => billing.cache = map.next_value()?,
                "caches" => billing.caches = map.next_value()?,
                "model" => billing.model = map.next_value()?,
                "cache_min_tokens" => billing.cache_min_tokens = map.next_value()?,
                "prices" => billing.prices = map.next_value()?,
                "layers" => layers = map.next_value()?,
                "prefix_tokens" => prefix_tokens = map.next_value()?,
                "summary_ratios" => summary.summary_ratios = map.next_value()?,
                "summary_caps" => summary.summary_caps = map.next_value()?,
                other => return Err(de::Error::unknown_field(other, KEYS)),
            }
        }
        Ok(SessionFile {
            strategies: strategies.ok_or_else(|| de::Error::missing_field("strategies"))?,
            windows: windows.ok_or_else(|| de::Error::missing_field("windows"))?,
            ratios: ratios.ok_or_else(|| de::Error::missing_field("ratios"))?,
            note_rates,
            label_noise,
            compaction,
            billing,
            layers,
            prefix_tokens,
            summary,
        })
    }
}
