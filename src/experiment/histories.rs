//! `[histories]`: where an experiment's histories come from (generated, JSONL files or agent
//! transcripts with their label and flag rules) and their cost model, checked.

use crate::cost::CostModel;
use crate::error::{InputError, ParseError};
use crate::history::generate::GenerateConfig;
pub use crate::history::source::Source;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HistoriesFile {
    /// Generate synthetic histories ...
    pub generate: Option<GenerateConfig>,
    /// ... or load files (globs, relative to the current directory).
    pub files: Option<Vec<String>>,
    /// What the files are: `jsonl` (ctxlab histories, the default) or an agent transcript
    /// format (one of [`crate::history::import::Format::ALL`]).
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
fn flag_rules(text: &str) -> Result<crate::history::import::LabelRules, String> {
    let rules: crate::history::import::LabelRules = text.parse()?;
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
