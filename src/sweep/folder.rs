//! The results folder: who may write into it, where a run stages its files, and publishing.
//!
//! - **One run at a time.** A run holds an exclusive lock (`File::try_lock`) on `.ctxlab.lock`
//!   (a shard on `.ctxlab-shard=i.lock`, so the shards of one split can run at once into one
//!   shared folder). The lock file holds the owner's process id, for the message a second run
//!   gets; the operating system releases the lock when the process ends, however it ends.
//! - **Only our own files.** A folder that is not empty and shows no sign of ctxlab (no lock
//!   file, no manifest, no shard states) is refused unless forced; files ctxlab did not write are
//!   never removed nor replaced: a file in the way of a publish must be one an earlier manifest
//!   (or shard state, or interrupted publish) lists, so a file of the user's that shares a
//!   ctxlab name is refused, `--force` or not, and a staging folder ctxlab did not make (no
//!   `.ctxlab-staging` mark) is never removed.
//! - **Publishing last, the manifest last of all.** The previous manifest is moved aside first
//!   (kept, so a resumed run still knows what it listed): from then on the folder does not look
//!   finished until the new manifest is in place. Files the previous
//!   manifest listed and this run does not write are removed before the new manifest arrives.
//! - **A publish is journalled.** Before the first file moves, the staging folder gets
//!   `publish.json`, the list of moves; a run killed while publishing leaves it, and the next
//!   command that takes the folder finishes the publish (a sweep's own, whose manifest is not yet
//!   in place, is finished by `--resume`, as the sweep says).
//! - **No links.** The lock file is opened without following a link and checked through its
//!   handle; every file made in the folder or its staging folders is created exclusively
//!   (`crate::links`).

use super::fault::{self, Fault};
use crate::error::refuse;
use crate::error::{At, Result};
use crate::tables::manifest::{Manifest, MANIFEST};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

/// `try_lock`, waiting out a lock this very process released a moment ago: a process that
/// starts children (a test suite does) can see a lock it dropped still held by a child that
/// forked before it closed the file and has not yet exec'd. Another process's lock is refused
/// at once.
fn try_lock_own(file: &File) -> std::result::Result<(), fs::TryLockError> {
    for _ in 0..200 {
        match file.try_lock() {
            Err(fs::TryLockError::WouldBlock)
                if lock_owner(file).trim() == std::process::id().to_string() =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return other,
        }
    }
    file.try_lock()
}

/// The process id the lock file names (empty when it names none).
fn lock_owner(file: &File) -> String {
    let mut reader = file;
    let mut owner = String::new();
    let _ = reader.rewind();
    let _ = reader.read_to_string(&mut owner);
    owner
}

/// Refuses `dir`, whose lock `file` another process holds, naming that process.
fn refuse_in_use(dir: &Path, file: &File) -> Result<()> {
    let owner = lock_owner(file);
    let owner = owner.trim();
    let who = if owner.is_empty() {
        "another process".to_string()
    } else {
        format!("process {owner}")
    };
    refuse!(
        "{}: in use by {who} (another ctxlab run writes into this folder); wait for it to finish or choose another --out",
        dir.display()
    )
}

/// The lock file of a whole run (and of `merge`, `compare` and `plot`).
pub const LOCK: &str = ".ctxlab.lock";

/// A results folder held by this process.
pub struct Folder {
    pub dir: PathBuf,
    shard: Option<usize>,
    // Held for the folder's lifetime: dropping it releases the lock.
    _lock: File,
}

fn lock_name(shard: Option<usize>) -> String {
    match shard {
        None => LOCK.to_string(),
        Some(i) => format!(".ctxlab-shard={i}.lock"),
    }
}

/// Whether `dir` was written by ctxlab (or is empty).
fn is_ours(dir: &Path) -> Result<bool> {
    let mut empty = true;
    for entry in fs::read_dir(dir).at(dir, "read")? {
        let name = entry
            .at(dir, "read")?
            .file_name()
            .to_string_lossy()
            .into_owned();
        empty = false;
        if name.starts_with(".ctxlab") && name.ends_with(".lock") || name == "shards" {
            return Ok(true);
        }
    }
    Ok(empty || written_by_ctxlab(&dir.join(MANIFEST)))
}

/// Whether `path` is a manifest of this or an earlier ctxlab version (all carry a config hash).
fn written_by_ctxlab(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("config_hash").is_some_and(|h| h.is_string()))
}

impl Folder {
    /// Takes `dir` for a run (or one shard of it): creates it if needed, refuses a foreign
    /// folder unless `force`, and refuses a folder another run holds.
    pub fn open(dir: &Path, shard: Option<usize>, force: bool) -> Result<Folder> {
        if dir.exists() && !dir.is_dir() {
            refuse!("{}: exists and is not a folder", dir.display());
        }
        if dir.is_dir() && !force && !is_ours(dir)? {
            refuse!(
                "{}: this folder holds files that ctxlab did not write; choose another --out, or pass --force to write into it (ctxlab removes only files it wrote)",
                dir.display()
            );
        }
        fs::create_dir_all(dir).at(dir, "create")?;
        Folder::lock(dir, shard)
    }

    /// Takes `dir`, a results folder that must exist already (`compare`, `plot`, `merge`).
    pub fn existing(dir: &Path) -> Result<Folder> {
        if !dir.is_dir() {
            refuse!(
                "{}: not a folder: expected a results folder written by `ctxlab sweep`",
                dir.display()
            );
        }
        Folder::lock(dir, None)
    }

    fn lock(dir: &Path, shard: Option<usize>) -> Result<Folder> {
        let path = dir.join(lock_name(shard));
        let mut file = crate::links::open_own(&path)?;
        match try_lock_own(&file) {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => refuse_in_use(dir, &file)?,
            Err(fs::TryLockError::Error(e)) => return Err(e).at(&path, "lock"),
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .at(&path, "write")?;
        let folder = Folder {
            dir: dir.to_path_buf(),
            shard,
            _lock: file,
        };
        folder.finish_interrupted()?;
        Ok(folder)
    }

    /// Finishes the publishes a killed command left half done (see the module documentation).
    fn finish_interrupted(&self) -> Result<()> {
        let names: Vec<String> = match self.shard {
            None => [
                PARTIAL,
                ".partial-merge",
                ".partial-compare",
                ".partial-plot",
            ]
            .map(String::from)
            .to_vec(),
            Some(i) => vec![format!(".partial-shard={i}")],
        };
        for name in names {
            let staging = self.dir.join(&name);
            if crate::links::is_link(&staging) || !staging.is_dir() {
                continue;
            }
            let Some(journal) = Journal::read(&staging) else {
                continue;
            };
            let sweep_own = name == PARTIAL || name.starts_with(".partial-shard=");
            if sweep_own && staging.join(&journal.last.0).exists() {
                // The sweep's own, not yet published: `--resume` finishes it.
                continue;
            }
            self.complete(&staging, &journal, None)?;
        }
        Ok(())
    }

    /// A fresh staging folder `name` in the folder (one ctxlab made before is cleared; a
    /// folder of that name ctxlab did not make is refused, never removed).
    pub fn fresh_staging(&self, name: &str) -> Result<PathBuf> {
        let staging = self.dir.join(name);
        clear_staging(&staging)?;
        make_staging(&staging)?;
        Ok(staging)
    }

    /// Where this run stages its files: inside the folder (so renames stay on one file
    /// system) but outside every table's place.
    pub fn staging(&self) -> PathBuf {
        staging_path(&self.dir, self.shard)
    }

    /// What [`Folder::open`] checks, reading only (a dry run): a folder there, ours unless
    /// `force`, its lock file no link and held by no other run.
    pub fn check(dir: &Path, shard: Option<usize>, force: bool) -> Result<()> {
        if dir.exists() && !dir.is_dir() {
            refuse!("{}: exists and is not a folder", dir.display());
        }
        if !dir.is_dir() {
            return Ok(());
        }
        if !force && !is_ours(dir)? {
            refuse!(
                "{}: this folder holds files that ctxlab did not write; choose another --out, or pass --force to write into it (ctxlab removes only files it wrote)",
                dir.display()
            );
        }
        let path = dir.join(lock_name(shard));
        if fs::symlink_metadata(&path).is_err() {
            return Ok(());
        }
        crate::links::refuse_link(&path)?;
        let file = File::open(&path).at(&path, "open")?;
        match file.try_lock() {
            Err(fs::TryLockError::WouldBlock) => refuse_in_use(dir, &file),
            _ => Ok(()),
        }
    }

    /// Moves the staged files (`(staged name, final relative path)`) into place, then `last`
    /// (the manifest, or a shard's state: the mark of completion), removing the files that
    /// earlier runs listed and this one does not write; finally removes the staging folder.
    /// `owned` lists every file of the new run (published now or already in place, such as
    /// the shards' parts a merge lists); nothing it names is removed. `also_previous` adds
    /// files an earlier run listed elsewhere (a shard's previous state).
    pub fn publish(
        &self,
        staging: &Path,
        files: &[(String, String)],
        last: (&str, &str),
        owned: &[String],
        also_previous: &[String],
        fault: Option<&Fault>,
    ) -> Result<Vec<PathBuf>> {
        // Before anything moves: a link anywhere on the way is refused, not followed.
        for to in files
            .iter()
            .map(|(_, to)| to.as_str())
            .chain([last.1, MANIFEST, PREVIOUS])
        {
            if let Some(message) = crate::links::through_link(&self.dir, Path::new(to)) {
                refuse!("{message}");
            }
        }
        self.check_in_the_way(staging, files, last, owned, also_previous)?;
        let journal = Journal {
            files: files.to_vec(),
            last: (last.0.to_string(), last.1.to_string()),
            owned: owned.to_vec(),
            also_previous: also_previous.to_vec(),
        };
        super::json_file::write_json(&staging.join(JOURNAL), &journal)?;
        self.complete(staging, &journal, fault)
    }

    /// Refuses a publish that would replace a file ctxlab did not write: every destination
    /// already there must be listed by the folder's manifest (or the one kept aside), by the
    /// previous shard state, by an interrupted publish's journal, or be the run's own state or
    /// manifest.
    fn check_in_the_way(
        &self,
        staging: &Path,
        files: &[(String, String)],
        last: (&str, &str),
        owned: &[String],
        also_previous: &[String],
    ) -> Result<()> {
        let mut ours: std::collections::HashSet<String> =
            previous_files(&self.dir).into_iter().collect();
        ours.extend(also_previous.iter().cloned());
        ours.extend(owned.iter().cloned());
        if let Some(j) = Journal::read(staging) {
            ours.extend(j.files.into_iter().map(|(_, to)| to));
        }
        for to in files.iter().map(|(_, to)| to.as_str()) {
            let path = self.dir.join(to);
            if fs::symlink_metadata(&path).is_ok() && !ours.contains(to) {
                refuse!(
                    "{}: a file ctxlab did not write (no manifest of this folder lists it) is where ctxlab publishes {to}; move it away and run again (a sweep with --resume), or choose another --out",
                    path.display()
                );
            }
        }
        let path = self.dir.join(last.1);
        if fs::symlink_metadata(&path).is_ok() && !written_by_ctxlab(&path) {
            refuse!(
                "{}: a file ctxlab did not write is where ctxlab publishes {}; move it away, or choose another --out",
                path.display(),
                last.1
            );
        }
        Ok(())
    }

    /// Carries out (or, after a kill, finishes) the publish `j` describes: moves into place
    /// what is still staged, removes the files earlier runs listed and this one does not, puts
    /// `last` in place, then clears the staging folder.
    fn complete(&self, staging: &Path, j: &Journal, fault: Option<&Fault>) -> Result<Vec<PathBuf>> {
        let staged =
            |name: &str| fs::symlink_metadata(staging.join(name)).is_ok_and(|m| m.is_file());
        let aside = self.dir.join(PREVIOUS);
        let mut written: Vec<PathBuf> = Vec::new();
        if staged(&j.last.0) {
            let mut previous = previous_files(&self.dir);
            previous.extend_from_slice(&j.also_previous);
            // From here on the folder does not look finished until `last` is in place. The
            // old manifest is kept aside (not deleted) so that an interrupted publication,
            // resumed, still knows what it listed.
            let old_manifest = self.dir.join(MANIFEST);
            if fs::symlink_metadata(&old_manifest).is_ok() {
                fs::rename(&old_manifest, &aside).at(&old_manifest, "move aside")?;
            }
            for (i, (from, to)) in j.files.iter().enumerate() {
                let target = self.dir.join(to);
                if staged(from) {
                    self.make_parents(to)?;
                    fs::rename(staging.join(from), &target).at(&target, "move into place")?;
                }
                written.push(target);
                if i == 0 {
                    fault::point(fault, Fault::Publish);
                }
            }
            let keep: std::collections::HashSet<&str> = j
                .files
                .iter()
                .map(|(_, to)| to.as_str())
                .chain(j.owned.iter().map(String::as_str))
                .chain([j.last.1.as_str()])
                .collect();
            // A shard leaves the rest of the folder to the other shards and to `merge`.
            if self.shard.is_none() {
                for stale in previous.iter().filter(|f| !keep.contains(f.as_str())) {
                    remove_ours(&self.dir, stale);
                }
            }
            fault::point(fault, Fault::Manifest);
            let to = self.dir.join(&j.last.1);
            self.make_parents(&j.last.1)?;
            fs::rename(staging.join(&j.last.0), &to).at(&to, "move into place")?;
            written.push(to);
        } else {
            written.extend(j.files.iter().map(|(_, to)| self.dir.join(to)));
            written.push(self.dir.join(&j.last.1));
        }
        fault::point(fault, Fault::Cleanup);
        if self.shard.is_none() {
            crate::links::remove_file(&aside);
        }
        // Published: what is left is cleared, so that a kill at any instant leaves a staging
        // folder the next command still takes for ctxlab's (and clears, or finishes).
        let _ = remove_staging(staging, fault);
        Ok(written)
    }

    /// Makes the folders `relative` (checked free of links) needs inside the folder.
    fn make_parents(&self, relative: &str) -> Result<()> {
        if let Some(message) = crate::links::through_link(&self.dir, Path::new(relative)) {
            refuse!("{message}");
        }
        if let Some(parent) = self.dir.join(relative).parent() {
            fs::create_dir_all(parent).at(parent, "create")?;
        }
        Ok(())
    }
}

/// The staging folder of a whole run.
const PARTIAL: &str = ".partial";

/// A run's progress in its staging folder (see `checkpoint.rs`).
pub(crate) const CHECKPOINT: &str = "checkpoint.json";

/// The mark of a staging folder ctxlab made.
const STAGING_MARK: &str = ".ctxlab-staging";

/// The moves of a publish, written before the first one.
pub(crate) const JOURNAL: &str = "publish.json";

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    files: Vec<(String, String)>,
    last: (String, String),
    owned: Vec<String>,
    also_previous: Vec<String>,
}

impl Journal {
    fn read(staging: &Path) -> Option<Journal> {
        let path = staging.join(JOURNAL);
        if crate::links::is_link(&path) {
            return None;
        }
        let j: Journal = serde_json::from_str(&fs::read_to_string(path).ok()?).ok()?;
        // Only plain names inside the folder.
        let plain = |p: &str| {
            let p = Path::new(p);
            !p.as_os_str().is_empty()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        };
        let fine = j
            .files
            .iter()
            .flat_map(|(a, b)| [a, b])
            .chain([&j.last.0, &j.last.1])
            .chain(&j.owned)
            .chain(&j.also_previous)
            .all(|p| plain(p));
        fine.then_some(j)
    }
}

/// Whether `staging` is a staging folder ctxlab made: it carries the mark (or a checkpoint or
/// publish journal, as runs of earlier versions left them), or is empty.
pub(crate) fn staging_is_ours(staging: &Path) -> bool {
    [STAGING_MARK, CHECKPOINT, JOURNAL]
        .iter()
        .any(|f| fs::symlink_metadata(staging.join(f)).is_ok_and(|m| m.is_file()))
        || fs::read_dir(staging).is_ok_and(|mut d| d.next().is_none())
}

/// Where a run (or shard `i`) stages its files in `dir`.
pub(crate) fn staging_path(dir: &Path, shard: Option<usize>) -> PathBuf {
    match shard {
        None => dir.join(PARTIAL),
        Some(i) => dir.join(format!(".partial-shard={i}")),
    }
}

/// Removes the staging folder at `staging` when there is one: refuses a link there, or a
/// folder ctxlab did not make.
pub(crate) fn clear_staging(staging: &Path) -> Result<()> {
    refuse_foreign_staging(staging)?;
    if fs::symlink_metadata(staging).is_ok() {
        remove_staging(staging, None)?;
    }
    Ok(())
}

/// Removes the staging folder `staging` (one ctxlab made) in an order that leaves, if the
/// process is killed at any instant, a folder the next command still takes for ctxlab's: the
/// checkpoint first (a run being cleared away is not one to resume), then everything but the
/// marks, then the publish journal (while it is there the next command finishes the publish),
/// then the mark, and last the folder, empty by then (an empty staging folder counts as
/// ctxlab's). Links in it are removed, never followed. `fault` (`cleanup:K`) aborts after K
/// removals, as a kill would.
pub(crate) fn remove_staging(staging: &Path, fault: Option<&Fault>) -> Result<()> {
    const MARKS: [&str; 3] = [CHECKPOINT, JOURNAL, STAGING_MARK];
    let mut removed = 0;
    let mut remove = |path: &Path| -> Result<()> {
        match fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(path).at(path, "clear")?,
            Ok(_) => fs::remove_file(path).at(path, "clear")?,
            Err(_) => return Ok(()),
        }
        removed += 1;
        fault::point(fault, Fault::CleanupAfter(removed));
        Ok(())
    };
    remove(&staging.join(CHECKPOINT))?;
    for entry in fs::read_dir(staging).at(staging, "clear")? {
        let name = entry.at(staging, "clear")?.file_name();
        if !MARKS.iter().any(|m| name == *m) {
            remove(&staging.join(name))?;
        }
    }
    remove(&staging.join(JOURNAL))?;
    remove(&staging.join(STAGING_MARK))?;
    remove(staging)
}

/// Refuses a link or anything but a staging folder ctxlab made at `staging` (nothing there
/// passes).
pub(crate) fn refuse_foreign_staging(staging: &Path) -> Result<()> {
    crate::links::refuse_link(staging)?;
    match fs::symlink_metadata(staging) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() && staging_is_ours(staging) => Ok(()),
        Ok(_) => refuse!(
            "{}: ctxlab stages its files here, but this is not a staging folder ctxlab made (it lacks {STAGING_MARK}); move it away, or choose another --out",
            staging.display()
        ),
    }
}

/// Makes the staging folder `staging` (which must not exist) with its mark.
pub(crate) fn make_staging(staging: &Path) -> Result<()> {
    fs::create_dir(staging).at(staging, "create")?;
    crate::links::write(&staging.join(STAGING_MARK), b"")
}

/// Where publishing keeps the previous manifest until the new one is in place.
pub(crate) const PREVIOUS: &str = ".previous-manifest.json";

/// The files earlier runs in `dir` listed: in its manifest, and in the one an unfinished
/// publication moved aside.
fn previous_files(dir: &Path) -> Vec<String> {
    [dir.join(MANIFEST), dir.join(PREVIOUS)]
        .iter()
        .filter_map(|p| Manifest::read(p).ok())
        .flat_map(|m| m.files)
        .collect()
}

/// Removes `relative` (a file an earlier run listed) and the folders it leaves empty, never
/// leaving the results folder.
fn remove_ours(dir: &Path, relative: &str) {
    let rel = Path::new(relative);
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return;
    }
    // Through a link the file would be someone else's.
    if crate::links::through_link(dir, rel).is_some() {
        return;
    }
    let path = dir.join(rel);
    if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        let _ = fs::remove_file(&path);
    }
    let mut parent = path.parent();
    while let Some(p) = parent {
        if p == dir || fs::remove_dir(p).is_err() {
            break;
        }
        parent = p.parent();
    }
}
