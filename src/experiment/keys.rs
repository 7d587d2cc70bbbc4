//! The validators of keys both kinds of experiment share: names, replicates, strategy lists,
//! output folders and formats, the comparison baseline, and the rules every axis keeps
//! (non-empty, in range, no value twice).

use super::limits;
use super::output::{CompareFile, OutputFile};
use crate::error::{InputError, ParseError};
use crate::formats::{Formats, TableFormat};
use crate::spec::Spec;
use crate::strategy::Strategy;
use std::path::PathBuf;

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

pub(crate) fn zero_rate() -> Vec<f64> {
    vec![0.0]
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
pub(crate) fn strategy_spec(v: &toml::Value) -> Result<Strategy, ParseError> {
    strategy_spec_of(v).and_then(|spec| Strategy::from_spec(&spec))
}

/// One strategy spec, a string or a table, as written (not yet a strategy).
pub(crate) fn strategy_spec_of(v: &toml::Value) -> Result<Spec, ParseError> {
    match v {
        toml::Value::String(text) => Spec::parse(text),
        toml::Value::Table(t) => Spec::from_toml(t),
        other => Err(format!(
            "expected a spec such as \"required(fill=skip)\" or a table {{ name = \"required\", fill = \"skip\" }}, found {other}"
        )
        .into()),
    }
}

/// A non-empty axis of distinct probabilities.
pub(crate) fn check_rates(origin: &str, key: &str, rates: &[f64]) -> Result<(), InputError> {
    non_empty(origin, key, rates.len())?;
    check_all(origin, key, rates, 0.0, 1.0, "a rate")
}

/// Which table formats to write.
pub(crate) fn formats(origin: &str, output: &OutputFile) -> Result<Formats, InputError> {
    parse_formats(origin, "output.formats", &output.formats)
}

/// Which formats to write the rows table in: `output.rows_formats`, else `output.formats`.
pub(crate) fn rows_formats(origin: &str, output: &OutputFile) -> Result<Formats, InputError> {
    match &output.rows_formats {
        Some(list) => parse_formats(origin, "output.rows_formats", list),
        None => formats(origin, output),
    }
}

fn parse_formats(origin: &str, key: &str, list: &[String]) -> Result<Formats, InputError> {
    let mut formats = Formats::NONE;
    non_empty(origin, key, list.len())?;
    for (i, f) in list.iter().enumerate() {
        let format =
            TableFormat::parse(f).map_err(|m| InputError::key(origin, format!("{key}[{i}]"), m))?;
        formats = formats.with(format);
    }
    Ok(formats)
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
