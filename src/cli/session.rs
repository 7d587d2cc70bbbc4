//! `ctxlab session`: a scripted usage trace (`--usage`) or a history replayed turn by turn.

use crate::cost::CostModel;
use crate::experiment::DEFAULT_TRANSCRIPT_LABELS;
use crate::history::import::{self, LabelRules};
use crate::history::{load_jsonl, CostedHistory, History, Kind, RecordedCall};
use crate::noise::{NoiseLevel, NoiseModel, Records};
use crate::report::session as out;
use crate::rng;
use crate::session::{
    self, parse_usage, run_script, CacheKind, CacheSpec, Invalid, Layers, Pricing, SessionConfig,
    SessionScratch, Trace, TriggerMode,
};
use crate::strategy::Strategy;
use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct SessionArgs {
    /// A JSONL history to replay turn by turn (leave it out and give --usage for a scripted trace).
    #[arg(required_unless_present = "usage", conflicts_with = "usage")]
    pub history: Option<PathBuf>,
    /// Scripted trace: the usage (input + output) of each agent call, e.g. 400,650,800; an item
    /// may be written input+output, e.g. 300+100.
    #[arg(long)]
    pub usage: Option<String>,
    /// The context window, in units of the cost model.
    #[arg(long)]
    pub window: u64,
    /// Compact when the trigger's quantity ≥ window × ratio; a number in (0, 1].
    #[arg(long, allow_hyphen_values = true)]
    pub ratio: f64,
    /// Replay: what window × ratio is compared with, `context` (the context the next call
    /// would send, as real harnesses check; the default) or `usage` (the lesson's accumulator,
    /// reset by each compaction). A scripted trace is always `usage`.
    #[arg(long, value_enum)]
    pub trigger: Option<TriggerArg>,
    /// Do not reset usage after a compaction (the forgotten reset: a compaction storm).
    #[arg(long)]
    pub no_reset: bool,
    /// A fruitless compaction within this many agent calls of the previous one is a storm.
    #[arg(long, default_value_t = 2)]
    pub storm_turns: u32,
    /// Stop compacting after this many fruitless compactions in a row (default: never stop).
    #[arg(long)]
    pub max_consecutive: Option<u32>,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub label_noise: NoiseArgs,
    #[command(flatten)]
    pub billing: BillingArgs,
    #[command(flatten)]
    pub budget: LayerArgs,
    /// text, csv (one row per agent call) or metrics (one CSV row of session metrics; replay only).
    #[arg(long, value_enum, default_value = "text", help_heading = "Output")]
    pub format: SessionFormat,
}

/// What a replay compacts with, and how it reads the history.
#[derive(Args, Debug)]
#[command(next_help_heading = "Replay")]
pub struct ReplayArgs {
    /// The strategy spec a replay compacts with, e.g. `recent` or `required(fill=skip)`.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Replay: a compaction's capacity as a share of the window (default 0.3).
    #[arg(long, allow_hyphen_values = true)]
    pub target: Option<f64>,
    /// Replay: `keep_recent` for a strategy whose spec does not set it.
    #[arg(long)]
    pub keep_recent: Option<usize>,
    /// Replay: probability that a record is written to notes (flagged ones at twice the rate).
    #[arg(long, allow_hyphen_values = true)]
    pub note_rate: Option<String>,
    #[arg(long, help = format!(
        "Replay: cost model, {} (default approx-tokens: windows and prices are in tokens)",
        crate::quote::or_list(&CostModel::NAMES)
    ))]
    pub cost: Option<CostModel>,
    /// Replay: which history of the file, when it holds several.
    #[arg(long)]
    pub history_name: Option<String>,
    /// Replay: the seed of the session's draws (summaries, notes, label noise).
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long, help = format!(
        "Replay: read HISTORY as a transcript of this format ({}), labelled by the default rules, instead of a JSONL history",
        crate::history::import::Format::names()
    ))]
    pub transcript: Option<crate::history::import::Format>,
}

/// The label noise a replay's strategies and notes see.
#[derive(Args, Debug)]
#[command(next_help_heading = "Label noise")]
pub struct NoiseArgs {
    /// Replay: P(flag off | required), the label noise strategies and notes see.
    #[arg(long, allow_hyphen_values = true)]
    pub false_negative: Option<String>,
    /// Replay: P(flag on | not required).
    #[arg(long, allow_hyphen_values = true)]
    pub false_positive: Option<String>,
    /// Replay: a noise model, as `session.noise` spells it (`by_kind(fn=0.1, fn_tool_result=0.4)`),
    /// instead of --false-negative / --false-positive.
    #[arg(long)]
    pub noise: Option<String>,
}

/// Whose cache bills a replay's calls, and at which prices.
#[derive(Args, Debug)]
#[command(next_help_heading = "Cache and prices")]
pub struct BillingArgs {
    #[arg(long, help = format!(
        "Replay: whose prompt cache bills the calls: {} (a `raw` replay of a transcript given with --format, billed as it records; default: the model's provider, else anthropic); a provider's cache may take fitted parameters, e.g. `gemini(miss=0.1, credit=0.9)`",
        CacheKind::names_or_where(|_| true)
    ))]
    pub cache: Option<String>,
    /// Replay: the model whose list prices apply, a row of the price table (default: the
    /// cache's default model, claude-sonnet-4.5 for anthropic).
    #[arg(long)]
    pub model: Option<String>,
    /// Replay: the shortest prefix the cache holds, in units of the cost model (default: the
    /// model's minimum).
    #[arg(long)]
    pub cache_min_tokens: Option<u64>,
    /// Replay: input price per million units (default: the model's).
    #[arg(long, allow_hyphen_values = true)]
    pub price_input: Option<f64>,
    /// Replay: output price per million units (default: the model's).
    #[arg(long, allow_hyphen_values = true)]
    pub price_output: Option<f64>,
    /// Replay: cache reads as a multiple of the input price (default: the model's).
    #[arg(long, allow_hyphen_values = true)]
    pub cache_read_factor: Option<f64>,
    /// Replay: cache writes as a multiple of the input price (default: the model's).
    #[arg(long, allow_hyphen_values = true)]
    pub cache_write_factor: Option<f64>,
}

/// The budget layers a replay may trigger on instead of usage.
#[derive(Args, Debug)]
#[command(next_help_heading = "Budget layers")]
pub struct LayerArgs {
    /// Replay: trigger on the history budget layer (above 0.8 of its share) instead of usage.
    #[arg(long)]
    pub layers: bool,
    /// Replay with --layers: units reserved for output (default a tenth of the window).
    #[arg(long)]
    pub reserved_output: Option<u64>,
    /// Replay with --layers: system, work, knowledge and history shares in percent.
    #[arg(long)]
    pub layer_shares: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerArg {
    Context,
    Usage,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionFormat {
    Text,
    Csv,
    Metrics,
}

pub fn run(a: SessionArgs) -> Result<()> {
    match (&a.usage, &a.history) {
        (Some(usage), None) => scripted(&a, usage),
        (None, Some(path)) => replay(&a, path.clone()),
        _ => bail!("give either a HISTORY to replay or --usage for a scripted trace"),
    }
}

/// `Invalid` with the key spelt as the command-line flag.
fn flag_error(e: Invalid) -> anyhow::Error {
    anyhow!("--{}: {}", e.key.replace('_', "-"), e.message)
}

fn base_config(a: &SessionArgs) -> SessionConfig {
    SessionConfig {
        window: a.window,
        ratio: a.ratio,
        trigger: match a.trigger {
            Some(TriggerArg::Usage) => TriggerMode::Usage,
            // A scripted trace has usage figures and nothing else.
            _ if a.usage.is_some() => TriggerMode::Usage,
            _ => TriggerMode::Context,
        },
        reset: !a.no_reset,
        storm_turns: a.storm_turns,
        max_consecutive: a.max_consecutive,
        ..SessionConfig::default()
    }
}

fn scripted(a: &SessionArgs, usage: &str) -> Result<()> {
    let replay_only = [
        ("--trigger context", a.trigger == Some(TriggerArg::Context)),
        ("--strategy", a.replay.strategy.is_some()),
        ("--target", a.replay.target.is_some()),
        ("--keep-recent", a.replay.keep_recent.is_some()),
        ("--note-rate", a.replay.note_rate.is_some()),
        ("--cost", a.replay.cost.is_some()),
        ("--history-name", a.replay.history_name.is_some()),
        ("--seed", a.replay.seed.is_some()),
        ("--false-negative", a.label_noise.false_negative.is_some()),
        ("--false-positive", a.label_noise.false_positive.is_some()),
        ("--noise", a.label_noise.noise.is_some()),
        ("--price-input", a.billing.price_input.is_some()),
        ("--price-output", a.billing.price_output.is_some()),
        ("--cache-read-factor", a.billing.cache_read_factor.is_some()),
        (
            "--cache-write-factor",
            a.billing.cache_write_factor.is_some(),
        ),
        ("--cache", a.billing.cache.is_some()),
        ("--model", a.billing.model.is_some()),
        ("--cache-min-tokens", a.billing.cache_min_tokens.is_some()),
        ("--transcript", a.replay.transcript.is_some()),
        ("--layers", a.budget.layers),
        ("--reserved-output", a.budget.reserved_output.is_some()),
        ("--layer-shares", a.budget.layer_shares.is_some()),
    ];
    if let Some((flags, verb)) = crate::cli::args::given_flags(&replay_only) {
        bail!(
            "{flags} only {verb} when replaying a HISTORY: a scripted trace (--usage) has no context to compact"
        );
    }
    if a.format == SessionFormat::Metrics {
        bail!("--format metrics needs a HISTORY to replay; a scripted trace prints text or csv");
    }
    let cfg = base_config(a);
    cfg.validate().map_err(flag_error)?;
    let usage = parse_usage(usage).map_err(|e| anyhow!("--usage: {e}"))?;
    let outcome = run_script(&cfg, &usage);
    match a.format {
        SessionFormat::Csv => crate::say!("{}", out::script_csv(&outcome)),
        _ => crate::say!("{}", out::script_text(&cfg, &outcome)),
    }
    Ok(())
}

fn probability(flag: &str, text: &Option<String>) -> Result<f64> {
    match text {
        None => Ok(0.0),
        Some(t) => crate::cli::args::rate(t).map_err(|e| anyhow!("{flag}: {e}")),
    }
}

fn replay(a: &SessionArgs, path: PathBuf) -> Result<()> {
    // Check every argument before reading anything.
    let strategy = replay_strategy(a)?;
    let mut cfg = base_config(a);
    if let Some(t) = a.replay.target {
        cfg.target = t;
    }
    cfg.keep_recent = a.replay.keep_recent;
    cfg.note_rate = probability("--note-rate", &a.replay.note_rate)?;
    let model = noise_model(&a.label_noise)?;
    set_billing(&mut cfg, &a.billing, &strategy)?;
    if let Some(layers) = budget_layers(&a.budget, a.window)? {
        cfg.layers = Some(layers);
    }
    cfg.validate().map_err(flag_error)?;

    let recorded = cfg.cache.kind == CacheKind::Recorded;
    let costed = read_history(a, &path, recorded)?;
    let seed = a.replay.seed.unwrap_or(0);
    let flags = model.flags(Records::of(&costed), seed, 0, 0);
    let mut trace = Trace::default();
    let (metrics, failed) = crate::strategy::external::watch(|| {
        session::simulate_with(
            &costed,
            &flags,
            &strategy,
            &cfg,
            rng::key(&[seed]),
            &mut SessionScratch::default(),
            Some(&mut trace),
        )
    });
    if let Some(f) = failed {
        let place = format!("history {:?}, compaction {}", costed.name, f.call);
        bail!("{}", f.message_at(&place));
    }
    let label = strategy.label();
    let cost_model = costed.model.to_string();
    let text = match a.format {
        SessionFormat::Text => out::replay_text(
            &out::ReplayHeader {
                history: &costed.name,
                records: costed.len(),
                cost_model: &cost_model,
                strategy: &label,
            },
            &cfg,
            &trace,
            &metrics,
        ),
        SessionFormat::Csv => out::calls_csv(&trace),
        SessionFormat::Metrics => out::metrics_csv(&costed.name, &strategy, &cfg, &metrics),
    };
    crate::say!("{text}");
    Ok(())
}

/// The strategy a replay compacts with, checked against the window before anything is read.
fn replay_strategy(a: &SessionArgs) -> Result<Strategy> {
    let spec = a.replay.strategy.as_deref().ok_or_else(|| {
        anyhow!("--strategy is required when replaying a HISTORY, e.g. --strategy recent")
    })?;
    let strategy = Strategy::parse(spec).map_err(|e| anyhow!("--strategy: {e}"))?;
    strategy
        .check_window(a.window)
        .map_err(|e| anyhow!("--window {}: {e}", a.window))?;
    Ok(strategy)
}

/// The label noise: a noise model, or the two uniform rates, never both.
fn noise_model(a: &NoiseArgs) -> Result<NoiseModel> {
    Ok(match &a.noise {
        Some(_) if a.false_negative.is_some() || a.false_positive.is_some() => bail!(
            "--noise: give a noise model or the rates --false-negative / --false-positive, not both"
        ),
        Some(spec) => NoiseModel::parse(spec).map_err(|e| anyhow!("--noise: {e}"))?,
        None => NoiseModel::uniform(NoiseLevel::new(
            probability("--false-negative", &a.false_negative)?,
            probability("--false-positive", &a.false_positive)?,
        )),
    })
}

/// The cache, model and prices that bill the calls: the model's list prices and cache, then
/// whatever the flags override.
fn set_billing(cfg: &mut SessionConfig, a: &BillingArgs, strategy: &Strategy) -> Result<()> {
    let cache = a
        .cache
        .as_deref()
        .map(|spec| CacheSpec::parse(spec).map_err(|e| anyhow!("--cache: {e}")))
        .transpose()?;
    let pricing = Pricing::new(a.model.as_deref(), cache.map(|c| c.kind)).map_err(flag_error)?;
    cfg.model = pricing.model;
    cfg.cache = match &cache {
        Some(spec) => pricing.cache.with(spec),
        None => pricing.cache,
    };
    cfg.prices = pricing.prices;
    if let Some(min) = a.cache_min_tokens {
        cfg.cache.min_tokens = min;
    }
    if cfg.cache.kind == CacheKind::Recorded && strategy.compacts() {
        bail!(
            "--cache recorded bills the calls the transcript records, which only `--strategy raw` makes; {} compacts",
            strategy.label()
        );
    }
    let prices = &mut cfg.prices;
    for (v, slot) in [
        (a.price_input, &mut prices.input),
        (a.price_output, &mut prices.output),
        (a.cache_read_factor, &mut prices.cache_read_factor),
        (a.cache_write_factor, &mut prices.cache_write_factor),
    ] {
        if let Some(v) = v {
            *slot = v;
        }
    }
    Ok(())
}

/// The budget layers, when --layers asks for them; their other flags mean nothing without it.
fn budget_layers(a: &LayerArgs, window: u64) -> Result<Option<Layers>> {
    if !a.layers && (a.reserved_output.is_some() || a.layer_shares.is_some()) {
        bail!("--reserved-output and --layer-shares only apply with --layers");
    }
    if !a.layers {
        return Ok(None);
    }
    let mut layers = Layers::new(a.reserved_output.unwrap_or(window / 10));
    if let Some(text) = &a.layer_shares {
        layers.shares = layer_shares(text)?;
    }
    Ok(Some(layers))
}

/// The history to replay, read as JSONL or as a transcript, with the usage the transcript
/// records; refused if it has no model calls, or no usage when the recorded cache bills it.
fn read_history(a: &SessionArgs, path: &Path, recorded: bool) -> Result<CostedHistory> {
    let (histories, usage): (Vec<History>, Vec<Vec<RecordedCall>>) = match a.replay.transcript {
        Some(format) => {
            // The experiment files' defaults: hindsight labels to score, past-only flags.
            let labels: LabelRules = DEFAULT_TRANSCRIPT_LABELS
                .parse()
                .expect("the default label rules parse");
            let flags: LabelRules = crate::experiment::DEFAULT_TRANSCRIPT_FLAGS
                .parse()
                .expect("the default flag rules parse");
            import::load_recorded(path, format, &labels, Some(&flags))?
                .into_iter()
                .unzip()
        }
        None => {
            let histories = load_jsonl(path)?;
            let none = vec![Vec::new(); histories.len()];
            (histories, none)
        }
    };
    let history = super::args::choose_history(path, &histories, a.replay.history_name.as_deref())?;
    let index = histories
        .iter()
        .position(|h| std::ptr::eq(h, history))
        .expect("the chosen history is one of them");
    if recorded && usage[index].is_empty() {
        bail!(
            "--cache recorded: {}: history {:?} records no usage (prompt and completion tokens of its model calls); give a {} transcript with --transcript",
            path.display(),
            history.name,
            crate::history::import::Format::recording_usage_or()
        );
    }
    if !history
        .records
        .iter()
        .any(|r| matches!(r.kind, Kind::Assistant | Kind::ToolCall))
    {
        bail!(
            "{}: history {:?} has no `assistant` or `tool_call` records: a session needs model calls (records without `kind` are notes)",
            path.display(),
            history.name
        );
    }
    Ok(
        CostedHistory::new(history, a.replay.cost.unwrap_or(CostModel::ApproxTokens))
            .with_recorded(usage[index].clone()),
    )
}

fn layer_shares(text: &str) -> Result<[f64; 4]> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = || {
        anyhow!(
            "--layer-shares: {text:?} should be four percentages (system, work, knowledge, history), e.g. 8,22,30,40"
        )
    };
    if parts.len() != 4 {
        return Err(bad());
    }
    let mut shares = [0.0; 4];
    for (s, p) in shares.iter_mut().zip(&parts) {
        *s = p.trim_end_matches('%').parse().map_err(|_| bad())?;
    }
    Ok(shares)
}
