//! Writing into a published results folder after its run (`compare`, `plot`) the way a sweep
//! publishes: under the folder's lock, every file staged first, the manifest (listing them)
//! last, and the publish journalled, so a second command, a sweep overlapping it, or a kill at
//! any instant never leaves a mix of two runs (see `sweep::folder`).

use super::publish::{self, FileToWrite};
use crate::error::{InputError, Result};
use crate::sweep::fault::Fault;
use crate::sweep::folder::Folder;
use crate::tables::manifest::{Manifest, SweepKind, MANIFEST};
use std::path::{Path, PathBuf};

/// Takes the results folder `dir` for a command that redraws or adds files: refuses a folder
/// another ctxlab command writes into. A folder without a manifest is left untouched (the
/// command's own reading names what is missing).
pub fn take(dir: &Path) -> Result<Option<Folder>> {
    // A manifest kept aside is a publish a kill cut short: taking the folder finishes it.
    if !dir.join(MANIFEST).exists() && !dir.join(crate::sweep::folder::PREVIOUS).exists() {
        return Ok(None);
    }
    Folder::existing(dir).map(Some)
}

/// The charts (and, for a cell sweep, the report) of `dir`, in memory; the compare charts come
/// from the table at `compare`. A folder without `summary.parquet` gets none.
pub fn drawn(dir: &Path, compare: &Path) -> Result<Vec<FileToWrite>> {
    if !dir.join("summary.parquet").exists() {
        return Ok(Vec::new());
    }
    let manifest = Manifest::read(&dir.join(MANIFEST))?;
    // A grid whose charts would not fit is refused before a bitmap is allocated.
    crate::sweep::estimate::check_charts(
        &manifest.grid,
        manifest.kind,
        crate::sweep::estimate::Limit::Machine,
        "the charts",
        false,
    )?;
    Ok(match manifest.kind {
        SweepKind::Cells => super::charts::render_files(dir, compare)?,
        SweepKind::Sessions => super::session_charts::render_files(dir)?,
    })
}

/// Publishes `files`, then what `draw` makes once they are staged (given the staging
/// folder, where `files` can be read), into `folder` through the staging folder
/// `staging_name`: the manifest read from the folder, with every file published listed and
/// `dropped` no longer listed (the publish removes them), goes in last. Returns the paths in
/// place, `files` first.
pub fn publish(
    folder: &Folder,
    staging_name: &str,
    manifest: Manifest,
    files: Vec<FileToWrite>,
    draw: impl FnOnce(&Path) -> Result<Vec<FileToWrite>>,
    dropped: &[String],
    fault: Option<&Fault>,
) -> Result<Vec<PathBuf>> {
    let staging = folder.fresh_staging(staging_name)?;
    let result = stage_and_publish(folder, &staging, manifest, files, draw, dropped, fault);
    if result.is_err() && !staging.join(crate::sweep::folder::JOURNAL).exists() {
        // Nothing moved (no journal yet): nothing in the staging folder is wanted. A journalled
        // publish that failed is finished by the next command that takes the folder.
        let _ = crate::sweep::folder::remove_staging(&staging, None);
    }
    result
}

fn stage_and_publish(
    folder: &Folder,
    staging: &Path,
    mut manifest: Manifest,
    mut files: Vec<FileToWrite>,
    draw: impl FnOnce(&Path) -> Result<Vec<FileToWrite>>,
    dropped: &[String],
    fault: Option<&Fault>,
) -> Result<Vec<PathBuf>> {
    publish::write_all(staging, &files)?;
    let drawn = draw(staging)?;
    publish::write_all(staging, &drawn)?;
    files.extend(drawn);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.relative.to_string_lossy().into_owned())
        .collect();
    manifest.files.retain(|f| !dropped.contains(f));
    // What stays listed from before; the new files are checked against the folder's manifest.
    let kept = manifest.files.clone();
    for n in &names {
        if !manifest.files.contains(n) {
            manifest.files.push(n.clone());
        }
    }
    let bytes = serde_json::to_string_pretty(&manifest)
        .map_err(|e| InputError::Invalid(format!("{MANIFEST}: cannot encode: {e}")))?
        + "\n";
    crate::links::write(&staging.join(MANIFEST), bytes.as_bytes())?;
    let places: Vec<(String, String)> = names.iter().map(|n| (n.clone(), n.clone())).collect();
    let written = folder.publish(staging, &places, (MANIFEST, MANIFEST), &kept, &[], fault)?;
    Ok(written.into_iter().take(names.len()).collect())
}
