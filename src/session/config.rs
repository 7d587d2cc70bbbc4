//! What a session runs with: the window and trigger, what a compaction aims for, notes, storm
//! detection, prices and (optionally) budget layers. Checked once, before anything runs.

use super::cache::{CacheKind, CacheRules};
use super::invalid::{invalid, Invalid};
use super::layers::Layers;
use super::prices::{self, Prices};
use crate::strategy::threshold;

/// How a session is billed: the model whose prices apply, the cache rules and the prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    /// The row of the price table the prices come from.
    pub model: &'static str,
    pub cache: CacheRules,
    pub prices: Prices,
}

impl Default for Pricing {
    fn default() -> Self {
        Pricing::new(None, None).expect("the defaults resolve")
    }
}

impl Pricing {
    /// Resolves a session's `model` and `cache` as given, either possibly absent:
    /// - the cache is the one given, else the model's provider, else Anthropic's;
    /// - the model is the one given, else the cache's provider's default
    ///   ([`prices::default_model`]); `recorded` needs one, since a transcript records tokens,
    ///   not the prices they were billed at;
    /// - a provider's cache with another provider's model is refused: the model's factors are
    ///   its own provider's, not the cache's (the very mix-up of one provider's pricing
    ///   applied to another's runs).
    ///
    /// Prices and the minimum cacheable length come from the model's row; callers apply
    /// explicit overrides afterwards.
    pub fn new(model: Option<&str>, cache: Option<CacheKind>) -> Result<Self, Invalid> {
        let row = model
            .map(|name| prices::lookup(name).map_err(|m| invalid("model", m)))
            .transpose()?;
        let kind = cache.or(row.map(|r| r.provider)).unwrap_or_default();
        let row = match row {
            Some(r) => r,
            None if kind == CacheKind::Recorded => {
                return Err(invalid(
                    "model",
                    format!(
                        "cache \"recorded\" needs a model to price the recorded tokens, one of {}",
                        prices::names().join(", ")
                    ),
                ))
            }
            None => prices::lookup(prices::default_model(kind)).expect("defaults are in the table"),
        };
        if kind.fits() && row.provider != kind {
            return Err(invalid(
                "cache",
                format!(
                    "cache \"{}\" with model {} ({}'s): a provider's cache rules and factors apply to its own models; choose cache \"{}\" or leave it out",
                    kind.as_str(),
                    row.name,
                    row.provider.as_str(),
                    row.provider.as_str()
                ),
            ));
        }
        Ok(Pricing {
            model: row.name,
            cache: CacheRules::new(kind, row.min_tokens),
            prices: Prices::of(row),
        })
    }
}

/// What the threshold `window × ratio` is compared with before each agent call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerMode {
    /// The context the next call would send — what Claude Code, Codex, OpenHands and Gemini
    /// CLI check. The default.
    #[default]
    Context,
    /// The teaching lesson's accumulator: the sum of every call's input + output since the last
    /// compaction (reset to 0 by it). It over-counts on real runs, where each input already
    /// holds the whole context; kept for the lesson's traces and the storm.
    Usage,
}

/// How a session runs. `Default` gives the lesson's window 2000 and ratio 0.7 with every
/// option at its documented default (the trigger on the context).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionConfig {
    /// The context window, in units of the cost model.
    pub window: u64,
    /// Compact when the trigger's quantity ≥ `window × ratio`; in (0, 1].
    pub ratio: f64,
    /// What the threshold is compared with.
    pub trigger: TriggerMode,
    /// Reset usage to 0 after a compaction (the usage trigger); `false` reproduces the forgotten
    /// reset (a storm).
    pub reset: bool,
    /// The strategy's capacity at a compaction, as a share of the window (0.3 by default):
    /// `floor(window × target)`. Notes read back come on top of it.
    pub target: f64,
    /// `keep_recent` for strategies whose spec does not set it (`None`: the strategy's default).
    pub keep_recent: Option<usize>,
    /// Probability that a record is written to notes when it appears (flagged records at twice
    /// the rate, see [`super::notes`]); 0 disables notes.
    pub note_rate: f64,
    /// A fruitless compaction within this many agent calls of the previous compaction is a storm.
    pub storm_turns: u32,
    /// Stop compacting for the rest of the session after this many fruitless compactions in a
    /// row (`None`: never stop, as the harnesses did before they added the guard).
    pub max_consecutive: Option<u32>,
    /// The row of the price table the prices and the cache's minimum come from.
    pub model: &'static str,
    /// Whose prompt cache bills the calls, and its minimum cacheable length.
    pub cache: CacheRules,
    pub prices: Prices,
    /// Trigger on the history layer's fill instead of the usage counter.
    pub layers: Option<Layers>,
    /// Units every call sends before the context that no strategy touches and no transcript
    /// holds: a harness's system prompt and tool definitions (`session.prefix_tokens`,
    /// measured by `calibrate --fit-prefix`; 0: none). Counted in every call's input, so in
    /// the window, the triggers and the bill; cached as one block ahead of the context.
    pub prefix_tokens: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        let pricing = Pricing::default();
        SessionConfig {
            window: 2000,
            ratio: 0.7,
            trigger: TriggerMode::Context,
            reset: true,
            target: 0.3,
            keep_recent: None,
            note_rate: 0.0,
            storm_turns: 2,
            max_consecutive: None,
            model: pricing.model,
            cache: pricing.cache,
            prices: pricing.prices,
            layers: None,
            prefix_tokens: 0,
        }
    }
}

impl SessionConfig {
    /// A checked configuration with the given window and ratio and every other option at its
    /// default.
    pub fn new(window: u64, ratio: f64) -> Result<Self, Invalid> {
        let cfg = SessionConfig {
            window,
            ratio,
            ..SessionConfig::default()
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks every value; the first bad one is reported.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.window == 0 {
            return Err(invalid("window", "must be at least 1"));
        }
        check_share("ratio", self.ratio)?;
        check_share("target", self.target)?;
        if !self.reset && self.trigger != TriggerMode::Usage {
            return Err(invalid(
                "reset",
                "only the usage trigger has a counter to reset: set trigger = \"usage\" for the forgotten reset",
            ));
        }
        if !(0.0..=1.0).contains(&self.note_rate) {
            return Err(invalid(
                "note_rate",
                format!(
                    "{} is out of range: expected a probability from 0 to 1",
                    self.note_rate
                ),
            ));
        }
        if self.storm_turns == 0 {
            return Err(invalid("storm_turns", "must be at least 1 (agent calls)"));
        }
        if self.max_consecutive == Some(0) {
            return Err(invalid(
                "max_consecutive",
                "must be at least 1 (leave it out for no guard)",
            ));
        }
        if self.prefix_tokens >= self.window {
            return Err(invalid(
                "prefix_tokens",
                format!(
                    "{} leaves no room in the window {}: a prefix must be smaller than every window",
                    self.prefix_tokens, self.window
                ),
            ));
        }
        self.prices.validate()?;
        if let Some(layers) = &self.layers {
            layers.validate(self.window)?;
        }
        Ok(())
    }

    /// The threshold the session compacts at: `window × ratio`, rounded up to a whole unit
    /// (usage is whole, so `usage ≥ window × ratio` is `usage ≥ ceil(window × ratio)`). A product
    /// within floating-point noise of a whole number is that number: 2000 × 0.7 is 1400.
    pub fn trigger(&self) -> u64 {
        threshold(self.window, self.ratio)
    }

    /// The strategy's capacity at a compaction (counter mode): `floor(window × target)`.
    pub fn capacity(&self) -> u64 {
        let x = self.window as f64 * self.target;
        let r = x.round();
        if (x - r).abs() <= 1e-9 * x.max(1.0) {
            r as u64
        } else {
            x.floor() as u64
        }
    }
}

fn check_share(key: &'static str, v: f64) -> Result<(), Invalid> {
    if v.is_finite() && v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(invalid(
            key,
            format!("{v} is out of range: expected a number in (0, 1], e.g. 0.7"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_round_up_but_ignore_float_noise() {
        assert_eq!(threshold(2000, 0.7), 1400);
        assert_eq!(threshold(6000, 0.75), 4500);
        assert_eq!(threshold(10, 0.33), 4); // 3.3 → usage 4 is the first at or over it
        assert_eq!(threshold(1, 0.1), 1);
        assert_eq!(SessionConfig::default().capacity(), 600);
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = |f: fn(&mut SessionConfig)| {
            let mut c = SessionConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert_eq!(bad(|c| c.window = 0).key, "window");
        assert_eq!(bad(|c| c.ratio = 0.0).key, "ratio");
        assert_eq!(bad(|c| c.ratio = 1.5).key, "ratio");
        assert_eq!(bad(|c| c.ratio = f64::NAN).key, "ratio");
        assert_eq!(bad(|c| c.target = 0.0).key, "target");
        assert_eq!(bad(|c| c.note_rate = -0.1).key, "note_rate");
        assert_eq!(bad(|c| c.storm_turns = 0).key, "storm_turns");
        assert_eq!(bad(|c| c.reset = false).key, "reset");
        assert_eq!(bad(|c| c.max_consecutive = Some(0)).key, "max_consecutive");
        assert_eq!(bad(|c| c.prices.input = -1.0).key, "price_input");
        assert!(SessionConfig::new(2000, 1.0).is_ok());
        assert!(bad(|c| c.ratio = 2.0).to_string().contains("(0, 1]"));
    }
}
