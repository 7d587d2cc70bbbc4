//! `ctxlab calibrate FILE... --format F`: estimated against recorded context size of every
//! model call the transcripts record, per run and overall. `ctxlab calibrate --summaries
//! FILE...`: what the transcripts' own compaction summaries keep of the facts they replaced
//! (see [`crate::calibrate_summaries`]). `--rereads` and `--stale-tasks`: re-reads and task
//! lists at every real compaction (see [`crate::calibrate_rereads`],
//! [`crate::calibrate_stale_tasks`]).

use super::import::read_all;
use crate::calibrate::{calls_csv, sizes, to_csv, to_text, RunSizes};
use crate::calibrate_cache::FitRun;
use crate::cost::CostModel;
use crate::history::batch::BadFiles;
use crate::history::import::{Format, LabelRules, Run};
use crate::session::{CacheKind, CacheSpec, Pricing};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, required_unless_present_any = ["summaries", "rereads", "stale_tasks"], help = format!(
        "Transcript format: {} (with `--summaries`: claude-code unless given)",
        Format::names_or()
    ))]
    pub format: Option<Format>,
    /// Measure the transcripts' compaction summaries instead: the facts of the records each
    /// replaced that its text keeps, flagged against not flagged and by kind, and the
    /// `simulated(recall_flagged, recall_other)` they imply.
    #[arg(long)]
    pub summaries: bool,
    /// Replay each transcript as it ran (its own summaries at its own compaction points) and
    /// set, at every compaction, the files ctxlab predicts the agent reads again beside those
    /// it did read again (a view of a file it had viewed before the compaction): observed,
    /// predicted, hits, precision, recall and tokens, per compaction and pooled; with `--csv`
    /// one pooled row. Transcripts without a compaction are counted and named.
    #[arg(long, conflicts_with_all = ["summaries", "fit_cache", "per_call"])]
    pub rereads: bool,
    /// Replay each transcript as it ran and measure what every call sends that the transcript
    /// does not hold (a system prompt, tool definitions): the modelled input beside the
    /// recorded one per run, pooled, held out, and the prefix as `session.prefix_tokens`.
    #[arg(long, conflicts_with_all = ["summaries", "fit_cache", "per_call", "rereads", "stale_tasks", "csv"])]
    pub fit_prefix: bool,
    /// At every compaction, the tasks the agent's task list (TodoWrite, TaskCreate,
    /// TaskUpdate) had completed before it, those the summary names and those it presents as
    /// open (under a pending, next-step or in-progress heading or mark): per compaction and
    /// pooled; with `--csv` one pooled row. Transcripts without a compaction are counted and
    /// named.
    #[arg(long, conflicts_with_all = ["summaries", "rereads", "fit_cache", "per_call"])]
    pub stale_tasks: bool,
    #[arg(long, help = format!(
        "With `--summaries`: the flag rules that split the facts (as `histories.flags` takes them; default `{}`, rules a harness could apply as the run goes)",
        crate::experiment::DEFAULT_TRANSCRIPT_FLAGS
    ))]
    pub flags: Option<LabelRules>,
    /// Cost model to check, e.g. `tokens`, `tokens(encoding=cl100k_base, overhead=4)`,
    /// `approx-tokens`.
    #[arg(long, default_value = "tokens")]
    pub cost: CostModel,
    /// Print CSV instead of a text table.
    #[arg(long)]
    pub csv: bool,
    /// Print every model call as CSV (`run,call,estimated,recorded`) instead of the summary.
    #[arg(long)]
    pub per_call: bool,
    /// Leave each transcript that cannot be read out whole, naming it with its reason on
    /// stderr, instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
    #[arg(long, help = format!(
        "The cache model whose share of the prompt read from cache is set beside the recorded one: {}, with fitted parameters if given (`gemini(miss=0.056, credit=0.923)`) (default: anthropic for claude-code sessions, which are Claude's; gemini otherwise, the provider of the shared mini-swe-agent runs)",
        CacheKind::names_or_where(|k| k != CacheKind::Recorded)
    ))]
    pub cache: Option<String>,
    /// The model whose minimum cacheable length the cache model uses (default: the cache's
    /// default model).
    #[arg(long)]
    pub model: Option<String>,
    /// The shortest prefix the cache model caches, in units of the cost model (default: the
    /// model's minimum).
    #[arg(long)]
    pub cache_min_tokens: Option<u64>,
    #[arg(long, value_name = "PROVIDER", help = format!(
        "Fit this provider's cache model ({}) to the usage the transcripts record: prints the fitted spec for `session.cache`, the modelled and recorded cached shares per run before and after fitting, and a held-out check",
        CacheKind::names_where(CacheKind::fits)
    ))]
    pub fit_cache: Option<String>,
}

/// The cache model of `--cache`, `--model` and `--cache-min-tokens`.
fn cache_rules(a: &CalibrateArgs) -> Result<crate::session::CacheRules> {
    let spec = match a.cache.as_deref() {
        None if a.model.is_some() => None,
        None if a.format == Some(Format::ClaudeCode) => Some(CacheSpec::of(CacheKind::Anthropic)),
        None => Some(CacheSpec::of(CacheKind::Gemini)),
        Some("recorded") => {
            bail!(
                "--cache recorded: the recorded share is always printed; choose a cache model to set beside it ({})",
                CacheKind::names_where(|k| k != CacheKind::Recorded)
            )
        }
        Some(text) => Some(CacheSpec::parse(text).map_err(|e| anyhow!("--cache: {e}"))?),
    };
    let pricing = Pricing::new(a.model.as_deref(), spec.map(|s| s.kind))
        .map_err(|e| anyhow!("--{}: {}", e.key, e.message))?;
    let mut rules = match &spec {
        Some(s) => pricing.cache.with(s),
        None => pricing.cache,
    };
    if let Some(min) = a.cache_min_tokens {
        rules.min_tokens = min;
    }
    Ok(rules)
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    if a.summaries {
        return summaries(a);
    }
    if a.rereads {
        return rereads(a);
    }
    if a.fit_prefix {
        return fit_prefix(a);
    }
    if a.stale_tasks {
        return stale_tasks(a);
    }
    if a.flags.is_some() {
        bail!("--flags applies only with --summaries (it splits a summary's facts by flag)");
    }
    if a.fit_cache.is_some() {
        return fit_cache(a);
    }
    let rules = cache_rules(&a)?;
    let format = a
        .format
        .expect("clap requires --format without --summaries");
    let runs = read_all(&a.files, format, BadFiles::skip_if(a.skip_bad))?;
    let sized: Vec<RunSizes> = runs.iter().map(|r| sizes(r, a.cost, rules)).collect();
    if sized.iter().all(|r| r.calls.is_empty()) {
        bail!(
            "none of the {} run(s) records the input size of a model call (mini-swe-agent's `prompt_tokens` and Claude Code's `usage` do; SWE-agent trajectories do not), so there is nothing to compare",
            sized.len()
        );
    }
    let out = if a.per_call {
        calls_csv(&sized)
    } else if a.csv {
        to_csv(&sized)
    } else {
        to_text(&sized, a.cost, rules.kind.as_str())
    };
    crate::say!("{out}");
    Ok(())
}

/// `--fit-cache PROVIDER`: the cache model's free parameters fitted to the recorded usage.
fn fit_cache(a: CalibrateArgs) -> Result<()> {
    let name = a.fit_cache.as_deref().expect("called with --fit-cache");
    let other_mode = [
        ("--csv", a.csv),
        ("--per-call", a.per_call),
        ("--cache", a.cache.is_some()),
    ];
    if let Some((given, verb)) = super::args::given_flags(&other_mode) {
        bail!("{given} {verb} only to the context-size calibration, not with --fit-cache (which names its cache)");
    }
    let kind = CacheKind::parse(name).ok_or_else(|| {
        anyhow!(
            "--fit-cache: unknown cache {name:?}, expected one of {}",
            CacheKind::names_where(CacheKind::fits)
        )
    })?;
    if !kind.fits() {
        bail!(
            "--fit-cache {name}: the `{name}` cache has no free parameter to fit ({} are a provider cache's: {})",
            crate::session::cache::backquoted_and(&crate::session::cache::FITTED_PARAMS),
            CacheKind::names_where(CacheKind::fits)
        );
    }
    let pricing = Pricing::new(a.model.as_deref(), Some(kind))
        .map_err(|e| anyhow!("--{}: {}", e.key, e.message))?;
    let mut base = pricing.cache;
    if let Some(min) = a.cache_min_tokens {
        base.min_tokens = min;
    }
    let format = a
        .format
        .expect("clap requires --format without --summaries");
    let runs = read_all(&a.files, format, BadFiles::skip_if(a.skip_bad))?;
    let billed = runs.iter().filter(|r| !r.recorded().is_empty()).count();
    if billed == 0 {
        bail!(
            "none of the {} run(s) records how its calls were billed (mini-swe-agent's `prompt_tokens_details.cached_tokens` and Claude Code's `usage` do; SWE-agent trajectories do not), so there is nothing to fit the {name} cache to",
            runs.len()
        );
    }
    if billed < runs.len() {
        bail!(
            "{} of the {} run(s) record no billed call; a fit holds the model against every run it replays, so give only runs that record their usage",
            runs.len() - billed,
            runs.len()
        );
    }
    let fit_runs: Vec<FitRun> = runs.iter().map(|r| FitRun::new(r, a.cost)).collect();
    crate::say!("{}", crate::calibrate_cache::report(&fit_runs, base));
    Ok(())
}

/// `--summaries`: the compaction summaries' kept facts.
fn summaries(a: CalibrateArgs) -> Result<()> {
    let other_mode = [
        ("--csv", a.csv),
        ("--per-call", a.per_call),
        ("--cache", a.cache.is_some()),
        ("--model", a.model.is_some()),
        ("--cache-min-tokens", a.cache_min_tokens.is_some()),
        ("--fit-cache", a.fit_cache.is_some()),
    ];
    if let Some((given, verb)) = super::args::given_flags(&other_mode) {
        bail!("{given} {verb} only to the context-size calibration, not with --summaries");
    }
    let flags = a.flags.unwrap_or_else(|| {
        crate::experiment::DEFAULT_TRANSCRIPT_FLAGS
            .parse()
            .expect("the default flag rules parse")
    });
    if flags.sees_the_future() {
        crate::warnln!(
            "warning: --flags {flags}: `hindsight` looks at what the agent did later; a summariser could not have known those flags"
        );
    }
    let runs = read_all(
        &a.files,
        a.format.unwrap_or(Format::ClaudeCode),
        BadFiles::skip_if(a.skip_bad),
    )?;
    let measured: Vec<_> = runs
        .iter()
        .flat_map(|r| crate::calibrate_summaries::measure(r, &flags))
        .collect();
    if measured.is_empty() {
        // Nothing measured is not a calibration: a script must not take it for one.
        bail!(
            "no compaction summaries in {} transcript(s): Claude Code writes one as a `user` line with `isCompactSummary: true` when it compacts a session; nothing to measure",
            runs.len()
        );
    }
    crate::say!(
        "{}",
        crate::calibrate_summaries::to_text(&measured, runs.len(), &flags)
    );
    Ok(())
}

/// The transcripts of a mode measured compaction by compaction (`--rereads`,
/// `--stale-tasks`), refusing the options it makes no use of (`why` says why).
fn per_compaction_runs(a: &CalibrateArgs, mode: &str, why: &str) -> Result<Vec<Run>> {
    let other_mode = [
        ("--cache", a.cache.is_some()),
        ("--model", a.model.is_some()),
        ("--cache-min-tokens", a.cache_min_tokens.is_some()),
        ("--flags", a.flags.is_some()),
    ];
    if let Some((given, verb)) = super::args::given_flags(&other_mode) {
        bail!("{given} {verb} nothing with {mode} ({why})");
    }
    read_all(
        &a.files,
        a.format.unwrap_or(Format::ClaudeCode),
        BadFiles::skip_if(a.skip_bad),
    )
}

/// Every transcript's compactions as `measure` gives them, and the names of the transcripts
/// without one; none at all is an error (nothing was compared).
fn per_compaction<T>(
    runs: &[Run],
    mut measure: impl FnMut(&Run) -> Vec<T>,
) -> Result<(Vec<T>, Vec<String>)> {
    let mut measured = Vec::new();
    let mut without = Vec::new();
    for run in runs {
        let m = measure(run);
        if m.is_empty() {
            without.push(run.history.name.clone());
        }
        measured.extend(m);
    }
    if measured.is_empty() {
        bail!(
            "no compaction in {} transcript(s): Claude Code writes one as a `user` line with `isCompactSummary: true` when it compacts a session; nothing to compare",
            runs.len()
        );
    }
    Ok((measured, without))
}

/// `--rereads`: predicted against observed re-reads after each compaction.
fn rereads(a: CalibrateArgs) -> Result<()> {
    let runs = per_compaction_runs(
        &a,
        "--rereads",
        "every record counts as required there, and re-reads are compared as files, not billed",
    )?;
    let (measured, without) =
        per_compaction(&runs, |run| crate::calibrate_rereads::measure(run, a.cost))?;
    let out = if a.csv {
        crate::calibrate_rereads::to_csv(&measured)
    } else {
        crate::calibrate_rereads::to_text(&measured, runs.len(), &without)
    };
    crate::say!("{out}");
    Ok(())
}

/// `--fit-prefix`: what every call sends that the transcripts do not hold.
fn fit_prefix(a: CalibrateArgs) -> Result<()> {
    let other_mode = [
        ("--cache", a.cache.is_some()),
        ("--model", a.model.is_some()),
        ("--cache-min-tokens", a.cache_min_tokens.is_some()),
        ("--flags", a.flags.is_some()),
    ];
    if let Some((given, verb)) = super::args::given_flags(&other_mode) {
        bail!("{given} {verb} nothing with --fit-prefix (it compares input sizes, which no cache changes)");
    }
    let format = a
        .format
        .expect("clap requires --format without --summaries or --rereads");
    let runs = read_all(&a.files, format, BadFiles::skip_if(a.skip_bad))?;
    let replayed: Vec<_> = runs
        .iter()
        .map(|r| crate::calibrate_prefix::replay(r, a.cost))
        .collect();
    let Some(out) = crate::calibrate_prefix::to_text(&replayed) else {
        bail!(
            "none of the {} run(s) records the input of a model call (Claude Code's `usage` and mini-swe-agent's `prompt_tokens` do), so there is no prefix to measure",
            runs.len()
        );
    };
    crate::say!("{out}");
    Ok(())
}

/// `--stale-tasks`: completed tasks a compaction summary presents as open.
fn stale_tasks(a: CalibrateArgs) -> Result<()> {
    let runs = per_compaction_runs(
        &a,
        "--stale-tasks",
        "it reads task lists and summaries as text; nothing is billed or flagged",
    )?;
    let mut unread = 0;
    let (measured, without) = per_compaction(&runs, |run| {
        let (m, u) = crate::calibrate_stale_tasks::measure(run);
        unread += u;
        m
    })?;
    let out = if a.csv {
        crate::calibrate_stale_tasks::to_csv(&measured)
    } else {
        crate::calibrate_stale_tasks::to_text(&measured, runs.len(), &without, unread)
    };
    crate::say!("{out}");
    Ok(())
}
