//! Cell sweeps: a `[sweep]` table (and `[charts]`) in the frame every experiment file has
//! ([`super::frame`]), validated before anything runs.
//!
//! Every error names the file and the key (or the line, for TOML syntax) and says what was
//! expected. Unknown keys are errors, so a typo never silently falls back to a default.

use super::engine::{deserialize_named, parse_table, read_file, resolved_table};
use super::frame::{fields, Frame, Framed, KindKeys, KindTables};
use super::keys::{check_all, no_duplicates, non_empty};
use super::noise_axis::NoiseKeys;
use crate::error::InputError;
use serde::de::{self, MapAccess};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use super::engine::apply_override;
pub use super::frame::{CompareFile, FrameFile, OutputFile};
pub use super::histories::{
    HistoriesFile, Source, DEFAULT_TRANSCRIPT_FLAGS, DEFAULT_TRANSCRIPT_LABELS,
};

/// A cell experiment as written in the file (after overrides).
pub type ExperimentFile = Framed<CellTables>;

/// A cell sweep's own tables.
#[derive(Debug, Clone, Serialize)]
pub struct CellTables {
    pub sweep: SweepFile,
    pub charts: ChartsFile,
}

impl KindTables for CellTables {
    const FIELDS: &'static [&'static str] = &fields::<8>(&["sweep"], &["charts"]);
    type Partial = (Option<SweepFile>, Option<ChartsFile>);

    fn read<'de, A: MapAccess<'de>>(
        partial: &mut Self::Partial,
        key: &'static str,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match key {
            "sweep" => partial.0 = Some(map.next_value()?),
            _ => partial.1 = Some(map.next_value()?),
        }
        Ok(())
    }

    fn finish<E: de::Error>((sweep, charts): Self::Partial) -> Result<Self, E> {
        Ok(CellTables {
            sweep: sweep.ok_or_else(|| E::missing_field("sweep"))?,
            charts: charts.unwrap_or_default(),
        })
    }
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

/// A validated experiment, ready to run: the frame, and the cell sweep's own axes.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub file: ExperimentFile,
    pub frame: Frame,
    pub budgets: Vec<f64>,
    /// The values of `sweep.keep_recent`; `None` = the strategy's own default.
    pub keep_recent_axis: Vec<Option<usize>>,
}

impl std::ops::Deref for Experiment {
    type Target = Frame;
    fn deref(&self) -> &Frame {
        &self.frame
    }
}

impl std::ops::DerefMut for Experiment {
    fn deref_mut(&mut self) -> &mut Frame {
        &mut self.frame
    }
}

/// Reads, overrides and validates an experiment file.
pub fn load(path: &Path, overrides: &[String]) -> Result<Experiment, InputError> {
    let text = read_file(path)?;
    parse(&path.display().to_string(), &text, overrides)
}

/// Parses experiment text; `origin` names it in errors.
pub fn parse(origin: &str, text: &str, overrides: &[String]) -> Result<Experiment, InputError> {
    from_table(origin, parse_table(origin, text)?, overrides, true)
}

/// Rebuilds an experiment from the resolved JSON a manifest or shard state carries, without
/// looking for its history files (they may live on another machine).
pub fn from_resolved(origin: &str, resolved: &serde_json::Value) -> Result<Experiment, InputError> {
    from_table(origin, resolved_table(origin, resolved)?, &[], false)
}

pub(crate) fn from_table(
    origin: &str,
    mut table: toml::Table,
    overrides: &[String],
    resolve_files: bool,
) -> Result<Experiment, InputError> {
    super::engine::apply_overrides(&mut table, overrides)?;
    let file: ExperimentFile = deserialize_named(origin, table)?;
    validate(origin, file, resolve_files)
}

fn validate(
    origin: &str,
    file: ExperimentFile,
    resolve_files: bool,
) -> Result<Experiment, InputError> {
    let s = &file.kind.sweep;
    let started = Frame::check(
        origin,
        &file,
        KindKeys {
            table: "sweep",
            strategies: &s.strategies,
            noise: NoiseKeys {
                table: "sweep",
                false_negative: &s.false_negative,
                false_positive: &s.false_positive,
                noise: &s.noise,
            },
            axes: &[
                ("sweep.budgets", s.budgets.len()),
                (
                    "sweep.keep_recent",
                    s.keep_recent.as_ref().map_or(1, Vec::len),
                ),
            ],
        },
        resolve_files,
    )?;
    let strategies = &started.strategies;
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
    if let Some(b) = file.kind.charts.noise_budget {
        check_noise_budget(&b.into(), &s.budgets)
            .map_err(|m| InputError::key(origin, "charts.noise_budget", m))?;
    }
    if let Some(r) = &file.kind.charts.retention {
        if r != "all" && r != "feasible" {
            return Err(InputError::key(
                origin,
                "charts.retention",
                format!("{r:?}: expected \"all\" or \"feasible\""),
            ));
        }
    }
    let frame = started.finish(origin, &file)?;
    Ok(Experiment {
        budgets: s.budgets.clone(),
        keep_recent_axis: keep_recent,
        frame,
        file,
    })
}

/// `charts.noise_budget` as written (`value`: a number, or whatever a manifest's copy holds)
/// checked against the sweep's budgets: the one check of the key, made where an experiment is
/// read, from its file before a sweep runs, or from the copy a run's manifest carries before
/// its charts are drawn. The budget, or the message that names what was wrong.
pub fn check_noise_budget(value: &serde_json::Value, budgets: &[f64]) -> Result<f64, String> {
    if let Some(b) = value.as_f64().filter(|b| budgets.contains(b)) {
        return Ok(b);
    }
    let shown = value
        .as_f64()
        .map_or_else(|| value.to_string(), |b| b.to_string());
    let list: Vec<String> = budgets.iter().map(|b| b.to_string()).collect();
    Err(format!(
        "{shown} is not one of the sweep's budgets ({}): expected a percentage among them, as the retention-against-noise chart is drawn at one of them",
        list.join(", ")
    ))
}

impl Experiment {
    /// Cells read no recorded usage: nothing to check.
    pub fn check_histories(&self, _recorded: &[(&str, bool)]) -> Result<(), InputError> {
        Ok(())
    }

    /// A fingerprint of what the experiment computes (the resolved config without the output
    /// folder): runs, shards and resumes with the same hash produce the same rows.
    pub fn config_hash(&self) -> String {
        Frame::config_hash(self.resolved_json())
    }

    /// The resolved experiment as JSON, for the manifest: the file after overrides, with
    /// strategies in their canonical labels.
    pub fn resolved_json(&self) -> serde_json::Value {
        self.frame
            .resolved_json(&self.file, "sweep", self.file.kind.sweep.noise.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Strategy;
    use std::path::PathBuf;

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
        assert_eq!(e.keep_recent_axis, vec![Some(0), Some(3)]);
        assert_eq!(e.false_positive, vec![0.0]);
        assert_eq!(e.output_dir, PathBuf::from("results/t"));
        assert_eq!(e.formats, crate::formats::Formats::all());
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

    /// `charts.noise_budget` must be one of the budgets swept; a manifest's copy is checked by
    /// the same function, named as the manifest spells it (tests/suite/charts.rs).
    #[test]
    fn a_noise_budget_outside_the_sweep_names_the_key() {
        assert_eq!(
            parse("exp.toml", GOOD, &["charts.noise_budget=100".to_string()])
                .unwrap()
                .budgets,
            vec![50.0, 100.0]
        );
        let e = err(GOOD, &["charts.noise_budget=40"]);
        assert!(
            e.contains(
                "exp.toml: key `charts.noise_budget`: 40 is not one of the sweep's budgets (50, 100): expected a percentage among them"
            ),
            "{e}"
        );
        let e = err(GOOD, &["charts.noise_budget=\"half\""]);
        assert!(
            e.contains("key `charts.noise_budget`: invalid type: string \"half\""),
            "{e}"
        );
        assert_eq!(check_noise_budget(&50.0.into(), &[25.0, 50.0]), Ok(50.0));
        let e = check_noise_budget(&"half".into(), &[25.0, 75.0]).unwrap_err();
        assert!(
            e.starts_with("\"half\" is not one of the sweep's budgets (25, 75)"),
            "{e}"
        );
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
