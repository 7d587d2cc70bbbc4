//! Fault injection for the tests: a run told to fail at a phase aborts there, as `kill -9`
//! would, so the tests can check that the folder never looks finished and that `--resume`
//! completes it. The CLI reads it from `CTXLAB_FAULT`; the library never reads the
//! environment.

use crate::error::ParseError;
use std::str::FromStr;

/// Where to abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// After this many chunks of this invocation were checkpointed (while this fault is set,
    /// every chunk that ends a history is, not only one every few seconds).
    AfterChunks(usize),
    /// In the middle of writing the final tables from the part files.
    Assembly,
    /// After the charts and the report were drawn into the staging folder.
    Charts,
    /// After the first file was moved into place.
    Publish,
    /// With every file in place but the manifest.
    Manifest,
    /// With the manifest in place, before the staging folder is removed.
    Cleanup,
    /// With the manifest in place, after this many entries of the staging folder (the folder
    /// itself last) were removed.
    CleanupAfter(usize),
}

impl FromStr for Fault {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Fault, ParseError> {
        Ok(match s {
            "assembly" => Fault::Assembly,
            "charts" => Fault::Charts,
            "publish" => Fault::Publish,
            "manifest" => Fault::Manifest,
            "cleanup" => Fault::Cleanup,
            _ => match (
                s.strip_prefix("chunks:").map(str::parse),
                s.strip_prefix("cleanup:").map(str::parse),
            ) {
                (Some(Ok(k)), _) => Fault::AfterChunks(k),
                (_, Some(Ok(k))) => Fault::CleanupAfter(k),
                _ => {
                    return Err(format!(
                    "unknown fault {s:?}: expected chunks:K, assembly, charts, publish, manifest, cleanup or cleanup:K"
                )
                    .into())
                }
            },
        })
    }
}

/// Aborts the process if `fault` is `here`.
pub fn point(fault: Option<&Fault>, here: Fault) {
    if fault == Some(&here) {
        std::process::abort();
    }
}
