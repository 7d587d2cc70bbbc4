//! The results folder: who may write into it, where a run stages its files, and publishing.
//!
//! - **One run at a time.** A run holds an exclusive lock (`File::try_lock`) on `.ctxlab.lock`
//!   (a shard on `.ctxlab-shard=i.lock`, so the shards of one split can run at once into one
//!   shared folder). The lock file holds the owner's process id, for the message a second run
//!   gets; the operating system releases the lock when the process ends, however it ends.
//! - **Only our own files.** A folder that is not empty and shows no sign of ctxlab (no lock
//!   file, no manifest, no shard states) is refused unless forced; files ctxlab did not write are
//!   never removed.
//! - **Publishing last, the manifest last of all.** The previous manifest is moved aside first
//!   (kept, so a resumed run still knows what it listed): from then on the folder does not look
//!   finished until the new manifest is in place. Files the previous
//!   manifest listed and this run does not write are removed before the new manifest arrives.

use super::fault::{self, Fault};
use crate::error::{At, Result};
use crate::refuse;
use crate::tables::manifest::{Manifest, MANIFEST};
use std::fs::{self, File, OpenOptions};
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

/// The lock file of a whole run (and of `merge`).
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
        let path = dir.join(lock_name(shard));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .at(&path, "open")?;
        match try_lock_own(&file) {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let owner = lock_owner(&file);
                let owner = owner.trim();
                let who = if owner.is_empty() {
                    "another process".to_string()
                } else {
                    format!("process {owner}")
                };
                refuse!(
                    "{}: in use by {who} (another ctxlab run writes into this folder); wait for it to finish or choose another --out",
                    dir.display()
                );
            }
            Err(fs::TryLockError::Error(e)) => return Err(e).at(&path, "lock"),
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .at(&path, "write")?;
        Ok(Folder {
            dir: dir.to_path_buf(),
            shard,
            _lock: file,
        })
    }

    /// Where this run stages its files: inside the folder (so renames stay on one file
    /// system) but outside every table's place.
    pub fn staging(&self) -> PathBuf {
        match self.shard {
            None => self.dir.join(".partial"),
            Some(i) => self.dir.join(format!(".partial-shard={i}")),
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
        let aside = self.dir.join(PREVIOUS);
        let mut previous = previous_files(&self.dir);
        previous.extend_from_slice(also_previous);
        // From here on the folder does not look finished until `last` is in place. The old
        // manifest is kept aside (not deleted) so that an interrupted publication, resumed,
        // still knows what it listed.
        let old_manifest = self.dir.join(MANIFEST);
        if old_manifest.exists() {
            fs::rename(&old_manifest, &aside).at(&old_manifest, "move aside")?;
        }
        let mut written = Vec::new();
        for (i, (from, to)) in files.iter().enumerate() {
            let (from, to) = (staging.join(from), self.dir.join(to));
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).at(parent, "create")?;
            }
            fs::rename(&from, &to).at(&to, "move into place")?;
            written.push(to);
            if i == 0 {
                fault::point(fault, Fault::Publish);
            }
        }
        let keep: std::collections::HashSet<&str> = files
            .iter()
            .map(|(_, to)| to.as_str())
            .chain(owned.iter().map(String::as_str))
            .chain([last.1])
            .collect();
        // A shard leaves the rest of the folder to the other shards and to `merge`.
        if self.shard.is_none() {
            for stale in previous.iter().filter(|f| !keep.contains(f.as_str())) {
                remove_ours(&self.dir, stale);
            }
        }
        fault::point(fault, Fault::Manifest);
        let to = self.dir.join(last.1);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).at(parent, "create")?;
        }
        fs::rename(staging.join(last.0), &to).at(&to, "move into place")?;
        written.push(to);
        if self.shard.is_none() {
            let _ = fs::remove_file(&aside);
        }
        fs::remove_dir_all(staging).ok();
        Ok(written)
    }
}

/// Where publishing keeps the previous manifest until the new one is in place.
const PREVIOUS: &str = ".previous-manifest.json";

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
