//! Reading many transcript files as one batch ([`crate::history::batch`]): every file is read,
//! run names must be unique across them, and a bad file is named (with the rest) or left out
//! whole.

use super::{read_tallied, Format, LabelRules, Problems, Run, Tally};
use crate::error::InputError;
use crate::history::batch::{BadFiles, FileBatch, LeftOut};
use crate::history::{History, RecordedCall};
use std::path::{Path, PathBuf};

/// A labelled history with the usage its transcript records.
pub type Loaded = (History, Vec<RecordedCall>);

/// Loads several transcript files, checking that run names are unique across them (two runs
/// of one name would merge into one history when written to a JSONL file). Every bad file is
/// named in one refusal.
pub fn load_files(
    paths: &[PathBuf],
    format: Format,
    labels: &LabelRules,
) -> Result<Vec<History>, InputError> {
    Ok(load_files_recorded(paths, format, labels, None)?
        .into_iter()
        .map(|(h, _)| h)
        .collect())
}

/// [`load_files`], each history with the usage its transcript records.
pub fn load_files_recorded(
    paths: &[PathBuf],
    format: Format,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
) -> Result<Vec<Loaded>, InputError> {
    Ok(load_batch(paths, format, labels, flags, BadFiles::Refuse)?.0)
}

/// [`load_files_recorded`] as a batch: with [`BadFiles::Skip`] each bad file is left out whole
/// and returned with its reason.
pub fn load_batch(
    paths: &[PathBuf],
    format: Format,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
    bad: BadFiles,
) -> Result<(Vec<Loaded>, Vec<LeftOut>), InputError> {
    let (runs, left_out) = read_batch(paths, format, bad, &mut Tally::default())?;
    let histories = runs
        .into_iter()
        .map(|run| super::labelled(run, labels, flags))
        .collect();
    Ok((histories, left_out))
}

/// A transcript's run names and what was kept of each run.
type NamedRuns<T> = (Vec<String>, Vec<T>);

/// [`load_batch`] a file at a time on each core: each history, labelled, is handed to `keep`
/// with its file's index in `paths` and its place among the file's runs as soon as its file is
/// read, so only what `keep` makes of it stays in memory (a streamed sweep keeps a skeleton).
pub fn index_batch<T: Send>(
    paths: &[PathBuf],
    format: Format,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
    bad: BadFiles,
    keep: impl Fn(usize, usize, Loaded) -> T + Sync,
) -> Result<(Vec<T>, Vec<LeftOut>), InputError> {
    use rayon::prelude::*;
    // Each file is imported and kept on a core of its own (a file's runs are in memory only
    // while it is read); then, in file order, its names are claimed and it is told good or
    // bad, as a read one file after another tells them.
    let read: Vec<Result<NamedRuns<T>, InputError>> = paths
        .par_iter()
        .enumerate()
        .map(|(file, path)| {
            let runs = read_tallied(path, format, &mut Problems::strict(), &mut Tally::default())?;
            let taken = runs.iter().map(|r| r.history.name.clone()).collect();
            let kept = runs
                .into_iter()
                .enumerate()
                .map(|(run, r)| keep(file, run, super::labelled(r, labels, flags)))
                .collect();
            Ok((taken, kept))
        })
        .collect();
    let mut batch = FileBatch::new("transcripts");
    let mut names = RunNames::default();
    for (path, read) in paths.iter().zip(read) {
        let read = read.and_then(|(taken, kept)| {
            let taken: Vec<&str> = taken.iter().map(String::as_str).collect();
            names.claim_all(&taken, path)?;
            Ok(kept)
        });
        batch.push(path, read);
    }
    batch.finish(bad)
}

/// Run number `run` of the transcript at `path`, read and labelled again as [`index_batch`]
/// read it; `None` when the file no longer holds that many runs.
pub fn load_run(
    path: &Path,
    format: Format,
    labels: &LabelRules,
    flags: Option<&LabelRules>,
    run: usize,
) -> Result<Option<Loaded>, InputError> {
    let mut runs = read_tallied(path, format, &mut Problems::strict(), &mut Tally::default())?;
    if run >= runs.len() {
        return Ok(None);
    }
    Ok(Some(super::labelled(runs.swap_remove(run), labels, flags)))
}

/// Reads every transcript file of a batch (strictly, each), adding what the lines of the good
/// ones became to `tally`: the runs of the good files and the files left out (see
/// [`crate::history::batch`]). A file whose run name another file already gave is a bad file.
pub fn read_batch(
    paths: &[PathBuf],
    format: Format,
    bad: BadFiles,
    tally: &mut Tally,
) -> Result<(Vec<Run>, Vec<LeftOut>), InputError> {
    let mut batch = FileBatch::new("transcripts");
    let mut names = RunNames::default();
    for path in paths {
        let mut mine = Tally::default();
        let read =
            read_tallied(path, format, &mut Problems::strict(), &mut mine).and_then(|runs| {
                let taken: Vec<&str> = runs.iter().map(|r| r.history.name.as_str()).collect();
                names.claim_all(&taken, path)?;
                Ok(runs)
            });
        if read.is_ok() {
            tally.add(&mine);
        }
        batch.push(path, read);
    }
    batch.finish(bad)
}

/// Run names seen so far and the file each came from.
#[derive(Default)]
struct RunNames {
    seen: std::collections::HashMap<String, PathBuf>,
}

impl RunNames {
    /// Claims every name of one file, or none: fails on the first name already taken (by an
    /// earlier file, or twice in this one).
    fn claim_all(&mut self, names: &[&str], path: &Path) -> Result<(), InputError> {
        for (i, name) in names.iter().enumerate() {
            let first = match self.seen.get(*name) {
                Some(first) => Some(first.as_path()),
                None if names[..i].contains(name) => Some(path),
                None => None,
            };
            if let Some(first) = first {
                return Err(InputError::File {
                    path: path.to_path_buf(),
                    message: format!(
                        "a run named {name:?} was already read from {}; run names must be unique",
                        first.display()
                    ),
                });
            }
        }
        for name in names {
            self.seen.insert(name.to_string(), path.to_path_buf());
        }
        Ok(())
    }
}
