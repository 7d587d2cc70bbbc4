//! Session experiment files: a `[session]` table in place of `[sweep]`, validated before
//! anything runs, every error naming the key.
//!
//! The axes (`windows`, `ratios`, `strategies`, `note_rates`, `false_negative`,
//! `false_positive`, `noise`) are swept, and `summary_ratios`/`summary_caps` expand the
//! strategies ([`super::summary_axis`]); every other key of `[session]` is a fixed option of
//! every session. The histories, `name`, `seed`, `replicates` and `[output]` mean what they mean in a
//! cell sweep; only `histories.cost` defaults to `approx-tokens` here, because windows and
//! prices are in tokens.

use super::engine::deserialize_named;
use super::frame::{fields, Frame, Framed, KindKeys, KindTables};
use super::histories::Source;
use super::keys::{check_rates, no_duplicates, non_empty};
use super::noise_axis::NoiseKeys;
use super::session_file::SessionFile;
use super::summary_axis::SummaryAxis;
use crate::cost::CostModel;
use crate::error::InputError;
use crate::session::{CacheKind, CacheSpec, Invalid, Layers, Pricing, SessionConfig};
use crate::strategy::Strategy;
use serde::de::{self, MapAccess};
use serde::Serialize;

/// A session experiment as written in the file (after overrides).
pub type SessionExperimentFile = Framed<SessionTables>;

/// A session sweep's own table.
#[derive(Debug, Clone, Serialize)]
pub struct SessionTables {
    pub session: SessionFile,
}

impl KindTables for SessionTables {
    const FIELDS: &'static [&'static str] = &fields::<7>(&["session"], &[]);
    type Partial = Option<SessionFile>;

    fn read<'de, A: MapAccess<'de>>(
        partial: &mut Self::Partial,
        _key: &'static str,
        map: &mut A,
    ) -> Result<(), A::Error> {
        *partial = Some(map.next_value()?);
        Ok(())
    }

    fn finish<E: de::Error>(session: Self::Partial) -> Result<Self, E> {
        Ok(SessionTables {
            session: session.ok_or_else(|| E::missing_field("session"))?,
        })
    }
}

/// A validated session experiment, ready to run: the frame, and the session sweep's own axes.
#[derive(Debug, Clone)]
pub struct SessionExperiment {
    pub file: SessionExperimentFile,
    pub frame: Frame,
    pub windows: Vec<u64>,
    pub ratios: Vec<f64>,
    pub note_rates: Vec<f64>,
    /// One checked configuration per (window, ratio, note rate, cache), in that nesting order.
    pub configs: Vec<SessionConfig>,
    /// The model, cache and prices the sessions are billed with (overrides applied): one per
    /// cache of the axis, in its order (one when the file names a single `cache`).
    pub pricings: Vec<Pricing>,
    /// The strategies as listed, in their labels, when the summary-size axis expanded them
    /// (the manifest keeps the list and the axis, so a merge expands them again).
    pub listed_strategies: Option<Vec<String>>,
}

impl std::ops::Deref for SessionExperiment {
    type Target = Frame;
    fn deref(&self) -> &Frame {
        &self.frame
    }
}

/// Builds a session experiment from a parsed file with its overrides applied.
pub(crate) fn from_table(
    origin: &str,
    mut table: toml::Table,
    resolve_files: bool,
) -> Result<SessionExperiment, InputError> {
    // Sessions count tokens by default; an explicit `histories.cost` wins.
    if let Some(toml::Value::Table(h)) = table.get_mut("histories") {
        h.entry("cost")
            .or_insert_with(|| CostModel::ApproxTokens.as_str().into());
    }
    let file: SessionExperimentFile = deserialize_named(origin, table)?;
    validate(origin, file, resolve_files)
}

fn validate(
    origin: &str,
    file: SessionExperimentFile,
    resolve_files: bool,
) -> Result<SessionExperiment, InputError> {
    let s = &file.kind.session;
    let summary_axis = SummaryAxis {
        ratios: s.summary.summary_ratios.as_deref(),
        caps: s.summary.summary_caps.as_deref(),
    };
    let mut axes = vec![
        ("session.windows", s.windows.len()),
        ("session.ratios", s.ratios.len()),
        ("session.note_rates", s.note_rates.len()),
    ];
    axes.extend(summary_axis.lengths());
    let mut started = Frame::check(
        origin,
        &file,
        KindKeys {
            table: "session",
            strategies: &s.strategies,
            noise: NoiseKeys {
                table: "session",
                false_negative: &s.label_noise.false_negative,
                false_positive: &s.label_noise.false_positive,
                noise: &s.label_noise.noise,
            },
            axes: &axes,
        },
        resolve_files,
    )?;
    let listed_strategies = summary_axis
        .given()
        .then(|| started.strategies.iter().map(Strategy::label).collect());
    started.strategies = summary_axis.expand(
        origin,
        &s.strategies,
        std::mem::take(&mut started.strategies),
    )?;
    let strategies = &started.strategies;
    let source = &started.source;
    non_empty(origin, "session.windows", s.windows.len())?;
    no_duplicates(origin, "session.windows", &s.windows)?;
    non_empty(origin, "session.ratios", s.ratios.len())?;
    no_duplicates(origin, "session.ratios", &s.ratios)?;
    // Ranges of the rate axes are checked here; ratios, windows and the fixed options by
    // `SessionConfig::validate` below, so the rules live in one place.
    check_rates(origin, "session.note_rates", &s.note_rates)?;
    for (w, &window) in s.windows.iter().enumerate() {
        for strategy in strategies {
            strategy
                .check_window(window)
                .map_err(|why| InputError::key(origin, format!("session.windows[{w}]"), why))?;
        }
    }
    let pricings = cache_axis(origin, s)?;
    for (i, pricing) in pricings.iter().enumerate() {
        let key = match s.billing.caches {
            Some(_) => format!("session.caches[{i}]"),
            None => "session.cache".to_string(),
        };
        check_recorded(origin, &key, pricing, strategies, source)?;
    }
    let mut configs =
        Vec::with_capacity(s.windows.len() * s.ratios.len() * s.note_rates.len() * pricings.len());
    for (w, &window) in s.windows.iter().enumerate() {
        for (q, &ratio) in s.ratios.iter().enumerate() {
            for (n, &note_rate) in s.note_rates.iter().enumerate() {
                for pricing in &pricings {
                    let cfg = session_config(s, pricing, window, ratio, note_rate);
                    cfg.validate()
                        .map_err(|e| named(origin, &e, (w, q, n), window, s))?;
                    configs.push(cfg);
                }
            }
        }
    }
    let frame = started.finish(origin, &file)?;
    Ok(SessionExperiment {
        frame,
        windows: s.windows.clone(),
        ratios: s.ratios.clone(),
        note_rates: s.note_rates.clone(),
        configs,
        file,
        pricings,
        listed_strategies,
    })
}

/// The pricing of each cache the sessions are billed under: the `caches` axis, else the one
/// `cache` (or the model's). The axis varies the cache alone, so every entry must be distinct
/// and bill the same model.
fn cache_axis(origin: &str, s: &SessionFile) -> Result<Vec<Pricing>, InputError> {
    let Some(caches) = &s.billing.caches else {
        let p =
            pricing(s, s.billing.cache.as_ref()).map_err(|e| named(origin, &e, (0, 0, 0), 0, s))?;
        return Ok(vec![p]);
    };
    if s.billing.cache.is_some() {
        return Err(InputError::key(
            origin,
            "session.caches",
            "give either `cache` (one cache) or `caches` (an axis of them), not both",
        ));
    }
    non_empty(origin, "session.caches", caches.len())?;
    let mut out: Vec<Pricing> = Vec::with_capacity(caches.len());
    for (i, spec) in caches.iter().enumerate() {
        let key = format!("session.caches[{i}]");
        let p = pricing(s, Some(spec)).map_err(|e| match e.key {
            "cache" | "model" => InputError::key(origin, key.clone(), e.message.clone()),
            _ => named(origin, &e, (0, 0, 0), 0, s),
        })?;
        if let Some(j) = out.iter().position(|q| q.cache.spec() == p.cache.spec()) {
            return Err(InputError::key(
                origin,
                key,
                format!(
                    "{} names the cache of session.caches[{j}] again; each cache of the axis must be distinct",
                    p.cache.spec()
                ),
            ));
        }
        if let Some(first) = out.first().filter(|q| q.model != p.model) {
            return Err(InputError::key(
                origin,
                key,
                format!(
                    "{} bills model {} where session.caches[0] bills {}: the axis varies the cache alone; name the model (session.model)",
                    p.cache.spec(),
                    p.model,
                    first.model
                ),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// The model's prices and the cache `spec` (absent: the model's provider's) with the file's
/// explicit keys applied.
fn pricing(s: &SessionFile, spec: Option<&CacheSpec>) -> Result<Pricing, Invalid> {
    let mut p = Pricing::new(s.billing.model.as_deref(), spec.map(|c| c.kind))?;
    if let Some(spec) = spec {
        p.cache = p.cache.with(spec);
    }
    let prices = &mut p.prices;
    for (v, slot) in [
        (s.billing.prices.input, &mut prices.input),
        (s.billing.prices.output, &mut prices.output),
        (
            s.billing.prices.cache_read_factor,
            &mut prices.cache_read_factor,
        ),
        (
            s.billing.prices.cache_write_factor,
            &mut prices.cache_write_factor,
        ),
    ] {
        if let Some(v) = v {
            *slot = v;
        }
    }
    if let Some(min) = s.billing.cache_min_tokens {
        p.cache.min_tokens = min;
    }
    Ok(p)
}

/// `cache = "recorded"` bills what a transcript records for a `raw` replay: any other strategy
/// makes other calls, and only transcripts in a format that records usage have any figures.
/// Each loaded history is checked again once read ([`SessionExperiment::check_histories`]).
fn check_recorded(
    origin: &str,
    cache_key: &str,
    pricing: &Pricing,
    strategies: &[Strategy],
    source: &Source,
) -> Result<(), InputError> {
    if pricing.cache.kind != CacheKind::Recorded {
        return Ok(());
    }
    if let Some((i, s)) = strategies.iter().enumerate().find(|(_, s)| s.compacts()) {
        return Err(InputError::key(
            origin,
            format!("session.strategies[{i}]"),
            format!(
                "{} compacts, but cache = \"recorded\" bills the calls the transcript records, which only a `raw` replay makes; sweep `raw` alone, or choose a modelled cache ({})",
                s.label(),
                CacheKind::ALL
                    .into_iter()
                    .filter(|k| k.fits())
                    .map(|k| format!("{:?}", k.as_str()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let recorded_usage = match source {
        Source::Transcripts { format, .. } => format.records_usage(),
        _ => false,
    };
    if !recorded_usage {
        return Err(InputError::key(
            origin,
            cache_key,
            format!(
                "\"recorded\" needs histories that record their usage: transcripts in the {} format (histories.files with histories.format); generated histories, JSONL files and other formats record none",
                crate::history::import::Format::recording_usage_or()
            ),
        ));
    }
    Ok(())
}

/// The configuration of the sessions at one (window, ratio, note rate).
fn session_config(
    s: &SessionFile,
    pricing: &Pricing,
    window: u64,
    ratio: f64,
    note_rate: f64,
) -> SessionConfig {
    SessionConfig {
        window,
        ratio,
        trigger: s.compaction.trigger,
        reset: s.compaction.reset,
        target: s.compaction.target,
        keep_recent: s.compaction.keep_recent.map(|k| k as usize),
        note_rate,
        storm_turns: s.compaction.storm_turns,
        max_consecutive: s.compaction.max_consecutive,
        model: pricing.model,
        cache: pricing.cache,
        prices: pricing.prices,
        layers: s.layers.as_ref().map(|l| Layers {
            reserved_output: l.reserved_output.unwrap_or(window / 10),
            shares: l.shares,
            trigger_fill: l.trigger_fill,
            target_fill: l.target_fill,
        }),
        prefix_tokens: s.prefix_tokens,
    }
}

/// A [`SessionConfig`] error with the key as the experiment file spells it.
fn named(
    origin: &str,
    e: &Invalid,
    (w, q, n): (usize, usize, usize),
    window: u64,
    s: &SessionFile,
) -> InputError {
    let key = match e.key {
        "window" => format!("session.windows[{w}]"),
        "ratio" => format!("session.ratios[{q}]"),
        "note_rate" => format!("session.note_rates[{n}]"),
        "price_input" => "session.prices.input".into(),
        "price_output" => "session.prices.output".into(),
        "cache_read_factor" | "cache_write_factor" => format!("session.prices.{}", e.key),
        "layer_shares" => "session.layers.shares".into(),
        "reserved_output" | "trigger_fill" | "target_fill" => format!("session.layers.{}", e.key),
        other => format!("session.{other}"),
    };
    let mut message = e.message.clone();
    if e.key == "reserved_output"
        && s.layers
            .as_ref()
            .is_some_and(|l| l.reserved_output.is_some())
    {
        message = format!("{message} (at window {window}, session.windows[{w}])");
    }
    InputError::key(origin, key, message)
}

impl SessionExperiment {
    /// The resolved experiment as JSON, for the manifest: the file after overrides and
    /// defaults, with strategies in their canonical labels.
    pub fn resolved_json(&self) -> serde_json::Value {
        let listed = self.file.kind.session.label_noise.noise.is_some();
        let mut v = self.frame.resolved_json(&self.file, "session", listed);
        if let Some(strategies) = &self.listed_strategies {
            v["session"]["strategies"] = strategies.clone().into();
        }
        let p = &self.pricings[0];
        v["session"]["model"] = p.model.into();
        if self.file.kind.session.billing.caches.is_some() {
            v["session"]["caches"] = self.cache_labels().into();
        } else {
            v["session"]["cache"] = p.cache.spec().into();
        }
        v["session"]["cache_min_tokens"] = p.cache.min_tokens.into();
        v["session"]["prices"] = serde_json::json!({
            "input": p.prices.input,
            "output": p.prices.output,
            "cache_read_factor": p.prices.cache_read_factor,
            "cache_write_factor": p.prices.cache_write_factor,
        });
        v
    }

    /// Each cache of the axis as its canonical spec, in the axis' order (the `cache` column).
    pub fn cache_labels(&self) -> Vec<String> {
        self.pricings.iter().map(|p| p.cache.spec()).collect()
    }

    /// A fingerprint of what the experiment computes (the output folder aside).
    pub fn config_hash(&self) -> String {
        Frame::config_hash(self.resolved_json())
    }

    /// Checks the loaded histories before anything runs: under `cache = "recorded"` each must
    /// record its usage.
    pub fn check_histories(&self, recorded: &[(&str, bool)]) -> Result<(), InputError> {
        if self
            .pricings
            .iter()
            .all(|p| p.cache.kind != CacheKind::Recorded)
        {
            return Ok(());
        }
        match recorded.iter().find(|(_, has)| !has) {
            Some((name, _)) => Err(InputError::key(
                &self.origin,
                "session.cache",
                format!(
                    "\"recorded\" bills the usage a transcript records, but history {name:?} records none (no model call with prompt and completion tokens)"
                ),
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::{apply_overrides, parse_table};

    const GOOD: &str = r#"
name = "s"
seed = 3
[histories]
generate = { count = 2, records = [20, 30], required_share = 0.2 }
[session]
strategies = ["recent", { name = "summary", keep_recent = 2 }]
windows = [1000, 2000]
ratios = [0.5, 0.8]
note_rates = [0.0, 0.2]
false_negative = [0.0, 0.1]
target = 0.25
layers = {}
"#;

    /// The file with its overrides applied, read as a session experiment (as `parse_any` does
    /// for a file with a `[session]` table).
    fn parse(text: &str, overrides: &[&str]) -> Result<super::SessionExperiment, String> {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let mut table = parse_table("s.toml", text).map_err(|e| e.to_string())?;
        apply_overrides(&mut table, &o).map_err(|e| e.to_string())?;
        super::from_table("s.toml", table, true).map_err(|e| e.to_string())
    }

    #[test]
    fn resolves_axes_defaults_and_configs() {
        let e = parse(GOOD, &[]).unwrap();
        assert_eq!(e.cost, crate::cost::CostModel::ApproxTokens);
        assert_eq!(e.configs.len(), 2 * 2 * 2);
        // Nesting order: window, ratio, note rate.
        let c = &e.configs[5];
        assert_eq!((c.window, c.ratio, c.note_rate), (2000, 0.5, 0.2));
        assert_eq!(c.target, 0.25);
        assert_eq!(c.storm_turns, 2);
        let layers = c.layers.unwrap();
        assert_eq!(layers.reserved_output, 200);
        assert_eq!(layers.shares, [8.0, 22.0, 30.0, 40.0]);
        assert_eq!(e.false_positive, vec![0.0]);
        let json = e.resolved_json();
        assert_eq!(json["session"]["strategies"][1], "summary(keep_recent=2)");
        assert_eq!(json["histories"]["cost"], "approx-tokens");
        assert_eq!(json["session"]["prices"]["cache_write_factor"], 1.25);
        // The grouped keys are written back flat, as the file spells them.
        assert_eq!(json["session"]["target"], 0.25);
        assert_eq!(json["session"]["false_negative"][1], 0.1);
        assert!(json["session"].get("compaction").is_none());
        assert!(json["session"].get("label_noise").is_none());
        let chars = parse(GOOD, &["histories.cost=chars"]).unwrap();
        assert_eq!(chars.cost, crate::cost::CostModel::Chars);
        assert_ne!(chars.config_hash(), e.config_hash());
    }

    /// Each override that makes `GOOD` wrong, with what its message must say: the key as the
    /// file spells it, and why.
    const BAD_VALUES: &[(&[&str], &str)] = &[
        (
            &["session.colour=1"],
            "key `session.colour`: unknown field `colour`",
        ),
        (
            &["session.ratios=[0.5, 1.5]"],
            "key `session.ratios[1]`: 1.5 is out of range",
        ),
        (
            &["session.windows=[1000, 0]"],
            "key `session.windows[1]`: must be at least 1",
        ),
        (
            &["session.windows=[-3]"],
            "key `session.windows[0]`: invalid value",
        ),
        (
            &["session.windows=[]"],
            "key `session.windows`: must not be empty",
        ),
        (
            &["session.ratios=[]"],
            "key `session.ratios`: must not be empty",
        ),
        (
            &["session.strategies=[]"],
            "key `session.strategies`: must not be empty",
        ),
        (
            &["session.note_rates=[]"],
            "key `session.note_rates`: must not be empty",
        ),
        (
            &["session.strategies=[\"recent(\"]"],
            "key `session.strategies[0]`: strategy \"recent(\"",
        ),
        (
            &["session.strategies=[\"recent\", \"newest\"]"],
            "key `session.strategies[1]`: unknown strategy `newest`",
        ),
        (
            &["session.strategies=[\"recent\", \"recent\"]"],
            "key `session.strategies[1]`: recent appears twice",
        ),
        (
            &["session.note_rates=[1.2]"],
            "key `session.note_rates[0]`: 1.2 is out of range",
        ),
        (
            &["session.false_positive=[-0.1]"],
            "key `session.false_positive[0]`",
        ),
        (
            &["session.ratios=[0.5, 0.5]"],
            "key `session.ratios[1]`: 0.5 appears twice",
        ),
        (
            &["session.target=0"],
            "key `session.target`: 0 is out of range",
        ),
        (
            &["session.storm_turns=0"],
            "key `session.storm_turns`: must be at least 1",
        ),
        (
            &["session.max_consecutive=0"],
            "key `session.max_consecutive`",
        ),
        (&["session.prices.input=-1"], "key `session.prices.input`"),
        (
            &["session.prices.cache_read_factor=nan"],
            "key `session.prices.cache_read_factor`",
        ),
        (
            &["session.prices.euros=1"],
            "key `session.prices.euros`: unknown field",
        ),
        (
            &["session.layers.shares=[10, 20, 30, 30]"],
            "key `session.layers.shares`: add up to 90",
        ),
        (
            &["session.layers.reserved_output=1500"],
            "key `session.layers.reserved_output`: 1500 leaves nothing of the window 1000",
        ),
        (
            &["session.layers.trigger_fill=2"],
            "key `session.layers.trigger_fill`",
        ),
        (
            &["session.trigger=\"calls\""],
            "key `session.trigger`: unknown variant `calls`, expected `context` or `usage`",
        ),
        (
            &["session.reset=false"],
            "key `session.reset`: only the usage trigger has a counter to reset",
        ),
        (
            &["session.reset=\"no\""],
            "key `session.reset`: invalid type",
        ),
        (
            &["histories.cost=furlongs"],
            "key `histories.cost`: unknown cost model",
        ),
        (&["replicates=0"], "key `replicates`: must be at least 1"),
        (&["output.formats=[\"xlsx\"]"], "key `output.formats[0]`"),
        // The grouped keys are read where the file spells them, each bad value named by its
        // own key and the unknown ones refused with the whole list.
        (
            &["session.cache_min_tokens=\"x\""],
            "key `session.cache_min_tokens`: invalid type: string \"x\", expected u64",
        ),
        (
            &["session.summary_caps=[100, -1]"],
            "key `session.summary_caps[1]`: invalid value: integer `-1`, expected u64",
        ),
        (
            &["session.false_negative=[\"x\"]"],
            "key `session.false_negative[0]`: invalid type",
        ),
        (
            &["session.keep_recent=-1"],
            "key `session.keep_recent`: invalid value",
        ),
        (
            &["session.colour=1"],
            "expected one of `strategies`, `windows`, `ratios`, `note_rates`, `false_negative`, \
             `false_positive`, `noise`, `target`, `keep_recent`, `trigger`, `reset`, \
             `storm_turns`, `max_consecutive`, `cache`, `caches`, `model`, `cache_min_tokens`, \
             `prices`, `layers`, `prefix_tokens`, `summary_ratios`, `summary_caps`",
        ),
        (
            &["session=[[\"recent\"], [1000], [0.5]]"],
            "key `session`: found an array where a table belongs",
        ),
        // Both tables at once is `parse_any`'s to refuse (tests/suite/session_sweep.rs).
        (&["charts.noise_budget=50"], "unknown field `charts`"),
    ];

    #[test]
    fn every_bad_value_names_its_key() {
        for (overrides, want) in BAD_VALUES {
            let e = parse(GOOD, overrides).unwrap_err();
            assert!(e.contains(want), "{overrides:?}: wanted {want:?} in: {e}");
            assert!(e.starts_with("s.toml"), "{e}");
        }
        let e = parse(&GOOD.replace("windows = [1000, 2000]\n", ""), &[]).unwrap_err();
        assert!(e.contains("key `session`: missing field `windows`"), "{e}");
        // Two required keys missing: the first in the file's order is named.
        let e = parse(
            &GOOD
                .replace("windows = [1000, 2000]\n", "")
                .replace("ratios = [0.5, 0.8]\n", ""),
            &[],
        )
        .unwrap_err();
        assert!(e.contains("key `session`: missing field `windows`"), "{e}");
    }
}
