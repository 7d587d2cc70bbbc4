//! Experiment files: TOML, with `--set key=value` overrides, validated before anything runs.
//!
//! Every error names the file and the key (or the line, for TOML syntax) and says what was
//! expected. Unknown keys are errors, so a typo never silently falls back to a default.

use super::limits;
use super::noise_axis::NoiseKeys;
use super::sessions::SessionExperiment;
use crate::cost::CostModel;
use crate::error::InputError;
use crate::error::ParseError;
use crate::history::generate::GenerateConfig;
pub use crate::history::source::Source;
use crate::spec::Spec;
use crate::strategy::Strategy;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An experiment as written in the file (after overrides).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    pub name: String,
    pub seed: u64,
    /// Independent noise draws per history.
    #[serde(default = "one")]
    pub replicates: u32,
    pub histories: HistoriesFile,
    pub sweep: SweepFile,
    #[serde(default)]
    pub output: OutputFile,
    #[serde(default)]
    pub charts: ChartsFile,
    #[serde(default, skip_serializing_if = "CompareFile::is_empty")]
    pub compare: CompareFile,
}

/// `[compare]`: paired comparisons against one strategy.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompareFile {
    /// The baseline strategy, one of the swept ones (a spec string or table): the sweep then
    /// writes `compare.parquet` / `compare.csv`, every strategy minus it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<toml::Value>,
}

impl CompareFile {
    pub(crate) fn is_empty(&self) -> bool {
        self.baseline.is_none()
    }
}

/// `compare.baseline`, checked to be one of `strategies`: its index.
pub(crate) fn compare_baseline(
    origin: &str,
    compare: &CompareFile,
    strategies: &[Strategy],
) -> Result<Option<usize>, InputError> {
    let Some(spec) = &compare.baseline else {
        return Ok(None);
    };
    let label = strategy_spec(spec)
        .map_err(|m| InputError::key(origin, "compare.baseline", m))?
        .label();
    let labels: Vec<String> = strategies.iter().map(Strategy::label).collect();
    match labels.iter().position(|l| *l == label) {
        Some(i) => Ok(Some(i)),
        None => Err(InputError::key(
            origin,
            "compare.baseline",
            format!(
                "{label:?} is not one of the swept strategies ({}); the baseline must be swept too",
                labels.join(", ")
            ),
        )),
    }
}

pub(crate) fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HistoriesFile {
    /// Generate synthetic histories ...
    pub generate: Option<GenerateConfig>,
    /// ... or load files (globs, relative to the current directory).
    pub files: Option<Vec<String>>,
    /// What the files are: `jsonl` (ctxlab histories, the default) or an agent transcript
    /// format (`mini-swe-agent`, `claude-code`, `swe-agent`, `openai-chat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Label rules for transcripts: the truth scores are against (`"instructions,hindsight"`,
    /// the default for them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// Flag rules for transcripts: what strategies and summarisers see before label noise,
    /// rules a harness could apply as the run goes (`"instructions,errors"`, the default).
    /// `hindsight` looks at the future and must be named to be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<String>,
    /// A file of flags an external flagger gave (`{"history", "id", "flag"}` per line,
    /// relative to the current directory): each history's flags before label noise, in place
    /// of its `required` (or of the transcripts' flag rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags_file: Option<String>,
    #[serde(default = "default_cost")]
    pub cost: String,
}

/// The label rules transcripts get when an experiment names none.
pub const DEFAULT_TRANSCRIPT_LABELS: &str = "instructions,hindsight";

/// The flag rules transcripts get when an experiment names none: rules that look only at the
/// record itself, which a harness could apply when it compacts.
pub const DEFAULT_TRANSCRIPT_FLAGS: &str = "instructions,errors";

/// `histories.flags`, checked: a rule that looks at the future is taken only when named.
fn flag_rules(text: &str) -> Result<crate::import::LabelRules, String> {
    let rules: crate::import::LabelRules = text.parse()?;
    if rules.sees_the_future() && !text.contains("hindsight") {
        return Err(format!(
            "{text:?} includes `hindsight`, whose marks are defined by what the agent uses later: no harness could know them when it compacts; name it (e.g. \"instructions,errors,hindsight\") to tell the strategies the future anyway"
        ));
    }
    Ok(rules)
}

fn default_cost() -> String {
    "chars".into()
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Strategy specs: strings (`"required(fill=skip)"`) or tables (`{ name = "required", fill = "skip" }`).
    pub strategies: Vec<toml::Value>,
    /// Percentages of each history's total cost.
    pub budgets: Vec<f64>,
    /// Absent: each strategy's own default.
    pub keep_recent: Option<Vec<u32>>,
    /// The uniform noise grid, shorthand for `uniform(fn, fp)` models (absent: `[0.0]`, or
    /// nothing beside `noise`; see [`super::noise_axis`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_negative: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_positive: Option<Vec<f64>>,
    /// Noise-model specs (`"by_kind(fn=0.1, fn_tool_result=0.4)"`), after the shorthand's grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Vec<String>>,
}

pub(crate) fn zero_rate() -> Vec<f64> {
    vec![0.0]
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputFile {
    /// Absent: `results/<name>`.
    pub dir: Option<PathBuf>,
    #[serde(default = "default_formats")]
    pub formats: Vec<String>,
}

impl Default for OutputFile {
    fn default() -> Self {
        OutputFile {
            dir: None,
            formats: default_formats(),
        }
    }
}

fn default_formats() -> Vec<String> {
    vec!["parquet".into(), "csv".into()]
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChartsFile {
    /// The budget (percent) at which retention is drawn against noise; it must be one of the
    /// swept budgets. Absent: 50, or the swept budget nearest to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_budget: Option<f64>,
    /// Which retention the charts draw: `"all"` (every cell, an infeasible one keeping
    /// nothing; the default) or `"feasible"` (feasible cells only, a conditional mean).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<String>,
}

/// A validated experiment, ready to run.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: ExperimentFile,
    pub origin: String,
    pub source: Source,
    pub cost: CostModel,
    pub strategies: Vec<Strategy>,
    pub budgets: Vec<f64>,
    /// `None` = the strategy's own default.
    pub keep_recent: Vec<Option<usize>>,
    /// The shorthand's uniform grid (empty when `noise` stands alone).
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    /// The noise axis: the shorthand's grid, then `noise`.
    pub noise: Vec<crate::noise::NoiseModel>,
    pub output_dir: PathBuf,
    pub parquet: bool,
    pub csv: bool,
    /// `compare.baseline`, as an index into `strategies`.
    pub baseline: Option<usize>,
}

impl Experiment {
    /// Cells read no recorded usage: nothing to check.
    pub fn check_histories(&self, _recorded: &[(&str, bool)]) -> Result<(), InputError> {
        Ok(())
    }
}

/// Reads, overrides and validates an experiment file.
pub fn load(path: &Path, overrides: &[String]) -> Result<Experiment, InputError> {
    let text = read_file(path)?;
    parse(&path.display().to_string(), &text, overrides)
}

/// An experiment file's text; one over [`super::limits::MAX_EXPERIMENT_BYTES`] is refused
/// before it is read whole (the TOML parser takes several times a file's size).
fn read_file(path: &Path) -> Result<String, InputError> {
    crate::text::read_at_most(
        path,
        super::limits::MAX_EXPERIMENT_BYTES,
        "an experiment file",
    )
}

/// Parses experiment text; `origin` names it in errors.
pub fn parse(origin: &str, text: &str, overrides: &[String]) -> Result<Experiment, InputError> {
    from_table(origin, parse_table(origin, text)?, overrides, true)
}

/// An experiment of either kind: a sweep of cells (`[sweep]`) or of sessions (`[session]`).
#[derive(Debug, Clone)]
// One experiment is built per run, so the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyExperiment {
    Cells(Experiment),
    Sessions(SessionExperiment),
}

/// Reads, overrides and validates an experiment file of either kind.
pub fn load_any(path: &Path, overrides: &[String]) -> Result<AnyExperiment, InputError> {
    let text = read_file(path)?;
    parse_any(&path.display().to_string(), &text, overrides)
}

/// Parses experiment text of either kind, dispatching on the table present after the
/// overrides (so `--set session.windows=[...]` cannot turn a cell sweep into a session one
/// silently: both tables present is an error).
pub fn parse_any(
    origin: &str,
    text: &str,
    overrides: &[String],
) -> Result<AnyExperiment, InputError> {
    let mut table = parse_table(origin, text)?;
    apply_overrides(&mut table, overrides)?;
    match (table.contains_key("sweep"), table.contains_key("session")) {
        (true, true) => Err(InputError::key(
            origin,
            "session",
            "an experiment has either a [sweep] table (cells) or a [session] table (sessions), not both",
        )),
        (false, true) => {
            super::sessions::from_table(origin, table, true).map(AnyExperiment::Sessions)
        }
        _ => from_table(origin, table, &[], true).map(AnyExperiment::Cells),
    }
}

fn parse_table(origin: &str, text: &str) -> Result<toml::Table, InputError> {
    toml::from_str(crate::text::without_bom(text))
        .map_err(|e| InputError::Invalid(format!("{origin}: {}", one_line(&e.to_string()))))
}

fn apply_overrides(table: &mut toml::Table, overrides: &[String]) -> Result<(), InputError> {
    for o in overrides {
        apply_override(table, o).map_err(|m| InputError::Invalid(format!("--set {o:?}: {m}")))?;
    }
    Ok(())
}

/// Deserialises a checked table, naming the key of the first mismatch (unknown field, wrong
/// type, missing key).
///
/// Two rules serde alone does not keep: `-0.0` is read as `0.0` (so it is not a second axis
/// value beside `0.0`), and a table is never read from an array by position
/// (`histories.generate = [3, [5, 9], 0.2]`).
pub(crate) fn deserialize_named<T: serde::de::DeserializeOwned + Serialize>(
    origin: &str,
    table: toml::Table,
) -> Result<T, InputError> {
    let mut value = toml::Value::Table(table);
    super::shape::positive_zeros(&mut value);
    let input = value.clone();
    let file: T = serde_path_to_error::deserialize(value).map_err(|e| {
        let key = e.path().to_string();
        InputError::key(origin, key, e.into_inner().message().to_string())
    })?;
    if let Some(key) = super::shape::read_by_position(&input, &file) {
        return Err(InputError::key(
            origin,
            key,
            "found an array where a table belongs: keys are read by name, not by position (write `{ key = value, ... }`)",
        ));
    }
    Ok(file)
}

/// Rebuilds an experiment from the resolved JSON a manifest or shard state carries, without
/// looking for its history files (they may live on another machine).
pub fn from_resolved(origin: &str, resolved: &serde_json::Value) -> Result<Experiment, InputError> {
    let bad = |m: String| {
        InputError::Invalid(format!(
            "{origin}: the recorded experiment is unreadable: {m}"
        ))
    };
    let value =
        toml::Value::try_from(without_nulls(resolved.clone())).map_err(|e| bad(e.to_string()))?;
    let toml::Value::Table(table) = value else {
        return Err(bad("not a table".into()));
    };
    from_table(origin, table, &[], false)
}

/// [`from_resolved`] for an experiment of either kind.
pub fn from_resolved_any(
    origin: &str,
    resolved: &serde_json::Value,
) -> Result<AnyExperiment, InputError> {
    let bad = |m: String| {
        InputError::Invalid(format!(
            "{origin}: the recorded experiment is unreadable: {m}"
        ))
    };
    let value =
        toml::Value::try_from(without_nulls(resolved.clone())).map_err(|e| bad(e.to_string()))?;
    let toml::Value::Table(table) = value else {
        return Err(bad("not a table".into()));
    };
    if table.contains_key("session") {
        super::sessions::from_table(origin, table, false).map(AnyExperiment::Sessions)
    } else {
        from_table(origin, table, &[], false).map(AnyExperiment::Cells)
    }
}

impl AnyExperiment {
    /// Sends the tables to another folder (`--out`).
    pub fn set_output_dir(&mut self, dir: &Path) {
        match self {
            AnyExperiment::Cells(e) => e.output_dir = dir.to_path_buf(),
            AnyExperiment::Sessions(e) => e.output_dir = dir.to_path_buf(),
        }
    }
}

fn without_nulls(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k, without_nulls(v)))
            .collect(),
        serde_json::Value::Array(a) => a.into_iter().map(without_nulls).collect(),
        other => other,
    }
}

fn from_table(
    origin: &str,
    mut table: toml::Table,
    overrides: &[String],
    resolve_files: bool,
) -> Result<Experiment, InputError> {
    apply_overrides(&mut table, overrides)?;
    let file: ExperimentFile = deserialize_named(origin, table)?;
    validate(origin, file, resolve_files)
}

/// TOML's messages span several lines with a source excerpt; keep them, but indented.
fn one_line(msg: &str) -> String {
    msg.trim_end().replace('\n', "\n  ")
}

/// Sets `a.b.c = value` in the table; the value is read as TOML (`[25,50]`, `0.1`, `"x"`,
/// `{ name = "mask" }`) and taken as a plain string when it is not valid TOML.
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), ParseError> {
    let (key, raw) = assignment
        .split_once('=')
        .ok_or("expected key=value, e.g. sweep.budgets=[25,50]")?;
    let key = key.trim();
    let raw = raw.trim();
    let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").expect("just parsed"),
        // What starts like a list, a table or a quoted string was meant as TOML: a plain
        // string would only fail later, blamed on the experiment file.
        Err(e) if raw.starts_with(['[', '{', '"', '\'']) => {
            return Err(format!(
                "{}: not valid TOML: {}",
                crate::quote::cut(raw, crate::quote::QUOTE_CHARS),
                e.message()
            )
            .into())
        }
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("key {key:?} is not a dotted path such as sweep.budgets").into());
    }
    let mut t = table;
    for p in &parts[..parts.len() - 1] {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .ok_or_else(|| format!("`{p}` is not a table, so `{key}` cannot be set"))?;
    }
    t.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

fn validate(
    origin: &str,
    file: ExperimentFile,
    resolve_files: bool,
) -> Result<Experiment, InputError> {
    check_name(origin, &file.name)?;
    check_replicates(origin, file.replicates)?;
    let s = &file.sweep;
    // Sizes first: the checks below are quadratic in an axis's length.
    let noise = noise_keys("sweep", s).resolve(origin)?;
    limits::check_axes(
        origin,
        &[
            ("sweep.strategies", s.strategies.len()),
            ("sweep.budgets", s.budgets.len()),
            (
                "sweep.keep_recent",
                s.keep_recent.as_ref().map_or(1, Vec::len),
            ),
        ],
        noise.models.len(),
        file.replicates,
    )?;
    let (source, cost) = histories(origin, &file.histories, resolve_files)?;
    let strategies = strategies(origin, "sweep.strategies", &s.strategies)?;
    non_empty(origin, "sweep.budgets", s.budgets.len())?;
    check_all(
        origin,
        "sweep.budgets",
        &s.budgets,
        0.0,
        100.0,
        "a percentage",
    )?;
    let keep_recent: Vec<Option<usize>> = match &s.keep_recent {
        None => vec![None],
        Some(v) => {
            non_empty(origin, "sweep.keep_recent", v.len())?;
            no_duplicates(origin, "sweep.keep_recent", v)?;
            v.iter().map(|&k| Some(k as usize)).collect()
        }
    };
    // The summary holds one group per strategy and keep_recent in force: a spec's own
    // keep_recent wins over the axis, so with several axis values its groups would repeat
    // (the run would fail at the summary, after every cell).
    if keep_recent.len() > 1 {
        if let Some(s) = strategies.iter().find(|s| s.keep_recent.is_some()) {
            return Err(InputError::key(
                origin,
                "sweep.keep_recent",
                format!(
                    "{} sets its own keep_recent, which wins over this axis: each of the axis's {} values would give it the same cells and the summary the same group {} times; drop keep_recent from the spec (the axis then applies), or give the axis one value",
                    s.label(),
                    keep_recent.len(),
                    keep_recent.len()
                ),
            ));
        }
    }
    if let Some(b) = file.charts.noise_budget {
        check_noise_budget(b, &s.budgets)
            .map_err(|m| InputError::key(origin, "charts.noise_budget", m))?;
    }
    if let Some(r) = &file.charts.retention {
        if r != "all" && r != "feasible" {
            return Err(InputError::key(
                origin,
                "charts.retention",
                format!("{r:?}: expected \"all\" or \"feasible\""),
            ));
        }
    }
    let (parquet, csv) = formats(origin, &file.output)?;
    let output_dir = output_dir(&file.output, &file.name);
    let baseline = compare_baseline(origin, &file.compare, &strategies)?;
    Ok(Experiment {
        baseline,
        origin: origin.to_string(),
        source,
        cost,
        strategies,
        budgets: s.budgets.clone(),
        keep_recent,
        false_negative: noise.false_negative,
        false_positive: noise.false_positive,
        noise: noise.models,
        output_dir,
        parquet,
        csv,
        file,
    })
}

fn noise_keys<'a>(table: &'a str, s: &'a SweepFile) -> NoiseKeys<'a> {
    NoiseKeys {
        table,
        false_negative: &s.false_negative,
        false_positive: &s.false_positive,
        noise: &s.noise,
    }
}

/// Checks an experiment's `charts.noise_budget` against its budgets before a sweep runs, so
/// a budget the sweep will not compute fails at once rather than after the run.
pub fn check_noise_budget(noise_budget: f64, budgets: &[f64]) -> Result<(), ParseError> {
    if budgets.contains(&noise_budget) {
        Ok(())
    } else {
        let list: Vec<String> = budgets.iter().map(|b| b.to_string()).collect();
        Err(format!(
            "{noise_budget} is not one of the sweep's budgets ({}): the retention-against-noise chart needs one of them",
            list.join(", ")
        ).into())
    }
}

pub(crate) fn check_name(origin: &str, name: &str) -> Result<(), InputError> {
    // The name is the results folder's name: one path component, nothing hidden or parent.
    if name.trim().is_empty()
        || name.contains(['/', '\\'])
        || name.starts_with('.')
        || name.chars().any(char::is_control)
    {
        return Err(InputError::key(
            origin,
            "name",
            format!("{name:?}: expected a single folder name (no slashes, not starting with a dot): it names the results folder"),
        ));
    }
    Ok(())
}

pub(crate) fn check_replicates(origin: &str, replicates: u32) -> Result<(), InputError> {
    if replicates == 0 {
        return Err(InputError::key(origin, "replicates", "must be at least 1"));
    }
    if replicates > limits::MAX_REPLICATES {
        return Err(InputError::key(
            origin,
            "replicates",
            format!(
                "{replicates} exceeds ctxlab's limit of {} replicates (README, \"Limits\"); more replicates of the same histories add little: add histories instead, or run several experiments with different seeds",
                limits::MAX_REPLICATES
            ),
        ));
    }
    Ok(())
}

/// Where the histories come from and their cost model, checked (`resolve_files`: expand the
/// file patterns now and require matches).
pub(crate) fn histories(
    origin: &str,
    h: &HistoriesFile,
    resolve_files: bool,
) -> Result<(Source, CostModel), InputError> {
    let err = |key: &str, msg: String| InputError::key(origin, key, msg);
    let source = match (&h.generate, &h.files) {
        (Some(_), None) if h.format.is_some() || h.labels.is_some() || h.flags.is_some() => {
            return Err(err(
                "histories",
                "`format`, `labels` and `flags` describe `files`; generated histories have none of them".into(),
            ))
        }
        (Some(g), None) => {
            g.validate()
                .map_err(|(k, m)| err(&format!("histories.generate.{k}"), m))?;
            Source::Generate(g.clone())
        }
        (None, Some(globs)) => {
            let paths = if resolve_files {
                resolve_globs(globs).map_err(|m| err("histories.files", m.into()))?
            } else {
                globs.iter().map(PathBuf::from).collect()
            };
            match h.format.as_deref() {
                None | Some("jsonl") => {
                    if h.labels.is_some() {
                        return Err(err(
                            "histories.labels",
                            "label rules apply to transcripts (set `format`); JSONL histories carry their own `required`".into(),
                        ));
                    }
                    if h.flags.is_some() {
                        return Err(err(
                            "histories.flags",
                            "flag rules apply to transcripts (set `format`); the flags of JSONL histories start from their `required`".into(),
                        ));
                    }
                    Source::Files(paths)
                }
                Some(f) => Source::Transcripts {
                    paths,
                    format: f.parse().map_err(|m: String| {
                        err("histories.format", format!("{m} (or \"jsonl\" for ctxlab histories)"))
                    })?,
                    labels: h
                        .labels
                        .as_deref()
                        .unwrap_or(DEFAULT_TRANSCRIPT_LABELS)
                        .parse()
                        .map_err(|m: String| err("histories.labels", m))?,
                    flags: flag_rules(h.flags.as_deref().unwrap_or(DEFAULT_TRANSCRIPT_FLAGS))
                        .map_err(|m| err("histories.flags", m))?,
                },
            }
        }
        (Some(_), Some(_)) => {
            return Err(err("histories", "give either `generate` or `files`, not both".into()))
        }
        (None, None) => {
            return Err(err(
                "histories",
                "expected `generate = { count = ..., records = [min, max], required_share = ... }` or `files = [\"data/*.jsonl\"]`".into(),
            ))
        }
    };
    if let Some(f) = &h.flags_file {
        if h.flags.is_some() {
            return Err(err(
                "histories.flags_file",
                "`flags` (rules) and `flags_file` both give the flags; keep one".into(),
            ));
        }
        if resolve_files && !Path::new(f).is_file() {
            return Err(err(
                "histories.flags_file",
                format!("{f:?} is not a file (the path is relative to the current directory)"),
            ));
        }
    }
    let cost: CostModel = h.cost.parse().map_err(|m| err("histories.cost", m))?;
    Ok((source, cost))
}

/// Strategy specs, strings or tables, parsed; `key` names the list in errors.
pub(crate) fn strategies(
    origin: &str,
    key: &str,
    specs: &[toml::Value],
) -> Result<Vec<Strategy>, InputError> {
    non_empty(origin, key, specs.len())?;
    let strategies = specs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            strategy_spec(v).map_err(|m| InputError::key(origin, format!("{key}[{i}]"), m))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let labels: Vec<String> = strategies.iter().map(Strategy::label).collect();
    no_duplicates(origin, key, &labels)?;
    Ok(strategies)
}

/// One strategy spec, a string or a table.
fn strategy_spec(v: &toml::Value) -> Result<Strategy, ParseError> {
    let spec = match v {
        toml::Value::String(text) => Spec::parse(text),
        toml::Value::Table(t) => Spec::from_toml(t),
        other => Err(format!(
            "expected a spec such as \"required(fill=skip)\" or a table {{ name = \"required\", fill = \"skip\" }}, found {other}"
        )
        .into()),
    };
    spec.and_then(|spec| Strategy::from_spec(&spec))
}

/// A non-empty axis of distinct probabilities.
pub(crate) fn check_rates(origin: &str, key: &str, rates: &[f64]) -> Result<(), InputError> {
    non_empty(origin, key, rates.len())?;
    check_all(origin, key, rates, 0.0, 1.0, "a rate")
}

/// Which table formats to write: (parquet, csv).
pub(crate) fn formats(origin: &str, output: &OutputFile) -> Result<(bool, bool), InputError> {
    let (mut parquet, mut csv) = (false, false);
    non_empty(origin, "output.formats", output.formats.len())?;
    for (i, f) in output.formats.iter().enumerate() {
        match f.as_str() {
            "parquet" => parquet = true,
            "csv" => csv = true,
            other => {
                return Err(InputError::key(
                    origin,
                    format!("output.formats[{i}]"),
                    format!("unknown format {other:?}, expected \"parquet\" or \"csv\""),
                ))
            }
        }
    }
    Ok((parquet, csv))
}

/// `output.dir`, or `results/<name>`.
pub(crate) fn output_dir(output: &OutputFile, name: &str) -> PathBuf {
    output
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(name))
}

pub(crate) fn non_empty(origin: &str, key: &str, len: usize) -> Result<(), InputError> {
    if len == 0 {
        Err(InputError::key(
            origin,
            key,
            "must not be empty (an empty axis leaves nothing to run)",
        ))
    } else {
        Ok(())
    }
}

pub(crate) fn check_all(
    origin: &str,
    key: &str,
    values: &[f64],
    lo: f64,
    hi: f64,
    what: &str,
) -> Result<(), InputError> {
    for (i, &v) in values.iter().enumerate() {
        if !(v.is_finite() && (lo..=hi).contains(&v)) {
            return Err(InputError::key(
                origin,
                format!("{key}[{i}]"),
                format!("{v} is out of range: expected {what} from {lo} to {hi}"),
            ));
        }
    }
    let as_text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    no_duplicates(origin, key, &as_text)
}

pub(crate) fn no_duplicates<T: PartialEq + std::fmt::Display>(
    origin: &str,
    key: &str,
    values: &[T],
) -> Result<(), InputError> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(InputError::key(
                origin,
                format!("{key}[{i}]"),
                format!("{v} appears twice; each value of an axis must be distinct"),
            ));
        }
    }
    Ok(())
}

fn resolve_globs(globs: &[String]) -> Result<Vec<PathBuf>, ParseError> {
    if globs.is_empty() {
        return Err("must name at least one file or pattern".into());
    }
    let mut files = Vec::new();
    for g in globs {
        let matches: Vec<PathBuf> = glob::glob(g)
            .map_err(|e| format!("{g:?} is not a valid pattern: {e}"))?
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .collect();
        if matches.is_empty() {
            return Err(format!(
                "{g:?} matches no file (patterns are relative to the current directory)"
            )
            .into());
        }
        files.extend(matches);
    }
    Ok(files)
}

impl Experiment {
    fn noise_axis(&self) -> super::noise_axis::NoiseAxis {
        super::noise_axis::NoiseAxis {
            false_negative: self.false_negative.clone(),
            false_positive: self.false_positive.clone(),
            models: self.noise.clone(),
        }
    }

    /// A fingerprint of what the experiment computes (the resolved config without the output
    /// folder): runs, shards and resumes with the same hash produce the same rows.
    pub fn config_hash(&self) -> String {
        config_hash(self.resolved_json())
    }

    /// The resolved experiment as JSON, for the manifest: the file after overrides, with
    /// strategies in their canonical labels.
    pub fn resolved_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.file).expect("config serialises");
        v["sweep"]["strategies"] = self.strategies.iter().map(Strategy::label).collect();
        self.noise_axis()
            .resolve_json(&mut v["sweep"], self.file.sweep.noise.is_some());
        v["output"]["dir"] = self.output_dir.display().to_string().into();
        v
    }
}

/// The fingerprint of a resolved experiment: FNV-1a over its canonical JSON (serde_json sorts
/// object keys) without the output folder.
pub(crate) fn config_hash(mut resolved: serde_json::Value) -> String {
    if let Some(o) = resolved.get_mut("output").and_then(|o| o.as_object_mut()) {
        o.remove("dir");
    }
    let text = resolved.to_string();
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
seed = 7
replicates = 2
[histories]
generate = { count = 3, records = [5, 9], required_share = 0.2 }
[sweep]
strategies = ["recent", { name = "required", fill = "skip" }]
budgets = [50, 100]
keep_recent = [0, 3]
false_negative = [0.0, 0.1]
"#;

    fn err(text: &str, overrides: &[&str]) -> String {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        parse("exp.toml", text, &o).unwrap_err().to_string()
    }

    #[test]
    fn parses_and_resolves() {
        let e = parse("exp.toml", GOOD, &[]).unwrap();
        assert_eq!(
            e.strategies.iter().map(Strategy::label).collect::<Vec<_>>(),
            vec!["recent", "required(fill=skip)"]
        );
        assert_eq!(e.keep_recent, vec![Some(0), Some(3)]);
        assert_eq!(e.false_positive, vec![0.0]);
        assert_eq!(e.output_dir, PathBuf::from("results/t"));
        assert!(e.parquet && e.csv);
        assert_eq!(
            e.resolved_json()["sweep"]["strategies"][1],
            "required(fill=skip)"
        );
    }

    #[test]
    fn overrides_replace_values_hydra_style() {
        let o = [
            "sweep.budgets=[25,50]".to_string(),
            "output.dir=elsewhere".to_string(),
            "seed=9".to_string(),
        ];
        let e = parse("exp.toml", GOOD, &o).unwrap();
        assert_eq!(e.budgets, vec![25.0, 50.0]);
        assert_eq!(e.output_dir, PathBuf::from("elsewhere"));
        assert_eq!(e.file.seed, 9);
    }

    #[test]
    fn every_bad_case_names_its_key() {
        let cases: Vec<(String, Vec<&str>, &str)> = vec![
            (
                GOOD.replace("budgets = [50, 100]", "budgets = [-5, 100]"),
                vec![],
                "key `sweep.budgets[0]`: -5 is out of range",
            ),
            (
                GOOD.replace("false_negative = [0.0, 0.1]", "false_negative = [1.3]"),
                vec![],
                "key `sweep.false_negative[0]`: 1.3 is out of range",
            ),
            (
                GOOD.replace("seed = 7", "seed = 7\nsede = 8"),
                vec![],
                "unknown field `sede`",
            ),
            (
                GOOD.replace(
                    "keep_recent = [0, 3]",
                    "keep_recent = [0, 3]\nbudgetz = [1]",
                ),
                vec![],
                "key `sweep.budgetz`: unknown field `budgetz`, expected one of `strategies`",
            ),
            (
                GOOD.replace("count = 3", "count = 0"),
                vec![],
                "key `histories.generate.count`: must be at least 1",
            ),
            (
                GOOD.replace("budgets = [50, 100]", "budgets = []"),
                vec![],
                "key `sweep.budgets`: must not be empty",
            ),
            (
                GOOD.replace("\"recent\",", "\"newest\","),
                vec![],
                "key `sweep.strategies[0]`: unknown strategy `newest`",
            ),
            (
                GOOD.replace("budgets = [50, 100]", "budgets = [50, 50]"),
                vec![],
                "appears twice",
            ),
            (
                GOOD.replace("budgets = [50, 100]", "budgets = \"half\""),
                vec![],
                "key `sweep.budgets`: invalid type",
            ),
            (
                GOOD.into(),
                vec!["sweep.budgets=[150]"],
                "key `sweep.budgets[0]`: 150 is out of range",
            ),
            (
                GOOD.into(),
                vec!["nonsense"],
                "--set \"nonsense\": expected key=value",
            ),
            (
                GOOD.into(),
                vec!["sweep.colour=red"],
                "unknown field `colour`",
            ),
            (
                GOOD.into(),
                vec!["histories.files=[\"nothing/*.jsonl\"]"],
                "not both",
            ),
            (
                GOOD.replace("seed = 7", "seed = "),
                vec![],
                "exp.toml: TOML parse error at line 3",
            ),
            (
                format!("{GOOD}[compare]\nbaseline = \"oracle\"\n"),
                vec![],
                "key `compare.baseline`: \"oracle\" is not one of the swept strategies (recent, required(fill=skip))",
            ),
            (
                format!("{GOOD}[compare]\nbaseline = \"recnt\"\n"),
                vec![],
                "key `compare.baseline`: unknown strategy `recnt`",
            ),
            (
                format!("{GOOD}[charts]\nretention = \"most\"\n"),
                vec![],
                "key `charts.retention`: \"most\": expected \"all\" or \"feasible\"",
            ),
        ];
        for (text, o, want) in cases {
            let e = err(&text, &o);
            assert!(e.contains(want), "wanted {want:?} in: {e}");
            assert!(e.starts_with("exp.toml") || e.starts_with("--set"), "{e}");
        }
    }
}
