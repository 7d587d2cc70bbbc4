//! JSON files written whole or not at all: manifests, checkpoints, shard states, journals.

use crate::error::{At, Result};
use crate::tables::manifest::MANIFEST;
use serde::Serialize;
use std::path::Path;

/// Writes JSON through a temporary file and a rename, so a reader never sees half of it.
/// Manifests are indented for people; checkpoints and shard states, which carry the whole
/// summary, are compact.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let pretty = path.file_name().is_some_and(|n| n == MANIFEST);
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .at(path, "encode")?
        + "\n";
    crate::links::write(&tmp, text.as_bytes())?;
    std::fs::rename(&tmp, path).at(path, "write")
}
