//! The experiment-file engine both kinds run on: reading the text, `--set` overrides,
//! deserialising with the key of every mismatch named, reading back a resolved experiment, and
//! the fingerprint of what an experiment computes.

use crate::error::{InputError, ParseError};
use serde::Serialize;
use std::path::Path;

/// An experiment file's text; one over [`super::limits::MAX_EXPERIMENT_BYTES`] is refused
/// before it is read whole (the TOML parser takes several times a file's size).
pub(crate) fn read_file(path: &Path) -> Result<String, InputError> {
    crate::text::read_at_most(
        path,
        super::limits::MAX_EXPERIMENT_BYTES,
        "an experiment file",
    )
}

pub(crate) fn parse_table(origin: &str, text: &str) -> Result<toml::Table, InputError> {
    toml::from_str(crate::text::without_bom(text))
        .map_err(|e| InputError::Invalid(format!("{origin}: {}", one_line(&e.to_string()))))
}

pub(crate) fn apply_overrides(
    table: &mut toml::Table,
    overrides: &[String],
) -> Result<(), InputError> {
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
        return Err(InputError::key(origin, key, super::shape::READ_BY_POSITION));
    }
    Ok(file)
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

/// The table of a resolved experiment (the JSON a manifest or shard state carries), to be
/// validated again without looking for its history files (they may live on another machine).
pub(crate) fn resolved_table(
    origin: &str,
    resolved: &serde_json::Value,
) -> Result<toml::Table, InputError> {
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
    Ok(table)
}
