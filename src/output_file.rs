//! One output file the user names by its path (`import --out`, `generate --out`, `summaries
//! export --out`, the charts `summaries judge --chart DIR` draws): written whole under a
//! temporary name beside it, then put in place, so a reader never sees half of it. Nothing
//! at the path is replaced unless asked: a path that exists is refused before anything is
//! written, and `--force` (where a command offers it) replaces only a plain file, never a
//! folder, a FIFO, a device node, a socket or a symbolic link (a device such as `/dev/null`
//! renamed over would be a file for every process of the machine).

use crate::error::{InputError, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// What may be at an output's path already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Nothing: anything there is refused.
    Refuse,
    /// Nothing, unless the command is given `--force` (which the refusal says).
    RefuseUnlessForced,
    /// A plain file, which is replaced (`--force`); anything else is refused.
    Replace,
}

impl Existing {
    /// [`Existing::Replace`] with `--force`, else [`Existing::RefuseUnlessForced`].
    pub fn forced(force: bool) -> Existing {
        if force {
            Existing::Replace
        } else {
            Existing::RefuseUnlessForced
        }
    }
}

/// What `path` is when it is something ctxlab never replaces; `None` for a plain file.
fn never_replaced(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Some("a symbolic link");
    }
    if kind.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device node");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    (!kind.is_file()).then_some("not a plain file")
}

/// Refuses `path` when something is there that `existing` does not let ctxlab replace. Looks
/// at the path itself, not through a link.
pub fn check(path: &Path, existing: Existing) -> Result<(), InputError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let message = match (never_replaced(&meta), existing) {
        (None, Existing::Replace) => return Ok(()),
        (Some(what), _) => format!(
            "already exists and is {what}, which ctxlab never replaces, --force or not; choose another path (nothing was written)"
        ),
        (None, Existing::Refuse) => {
            "already exists; choose another path or remove it (nothing was written)".into()
        }
        (None, Existing::RefuseUnlessForced) => {
            "already exists; choose another path or remove it, or pass --force to replace it (nothing was written)".into()
        }
    };
    Err(InputError::File {
        path: path.to_path_buf(),
        message,
    })
}

/// The temporary name a file is written under beside `path` before it is put in place.
pub fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Puts the finished `temporary` at `path` and removes the temporary name. Refusing: as a new
/// name (a hard link fails when something appeared at `path` meanwhile, which stays as it
/// was); replacing: by a rename, after `path` is checked once more to be a plain file.
pub fn place(temporary: &Path, path: &Path, existing: Existing) -> Result<(), InputError> {
    let placed = match existing {
        Existing::Refuse | Existing::RefuseUnlessForced => std::fs::hard_link(temporary, path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => check(path, existing)
                    .err()
                    .unwrap_or_else(|| InputError::io(path, e)),
                _ => InputError::io(path, e),
            }),
        Existing::Replace => check(path, existing)
            .and_then(|()| std::fs::rename(temporary, path).map_err(|e| InputError::io(path, e))),
    };
    crate::links::remove_file(temporary);
    placed
}

/// Writes the file at `path` whole: refused before anything is written when `existing` does
/// not allow what is there, then `fill` writes it under a temporary name beside `path` (a
/// failure, a full disk, leaves no temporary behind) and it is put in place.
pub fn write(
    path: &Path,
    existing: Existing,
    fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    check(path, existing)?;
    let temporary = temporary_beside(path);
    // Created exclusively: a link at the temporary name is refused, not followed.
    let file = crate::links::create(&temporary)?;
    let mut w = BufWriter::new(file);
    let written = fill(&mut w)
        .and_then(|()| w.flush())
        .and_then(|()| w.get_ref().sync_all());
    drop(w);
    if let Err(e) = written {
        crate::links::remove_file(&temporary);
        return Err(InputError::io(&temporary, e).into());
    }
    Ok(place(&temporary, path, existing)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_path_is_refused_and_only_a_plain_file_is_ever_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.jsonl");
        std::fs::write(&file, "the user's").unwrap();
        let e = write(&file, Existing::RefuseUnlessForced, |w| w.write_all(b"new"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("mine.jsonl: already exists; choose another path or remove it, or pass --force to replace it (nothing was written)"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"the user's");
        write(&file, Existing::Replace, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        // A folder is never replaced, forced or not; no temporary stays beside it.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let e = write(&folder, Existing::Replace, |w| w.write_all(b"x"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a folder, which ctxlab never replaces"),
            "{e}"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2);
        // A new path is written whole.
        let new = dir.path().join("new.jsonl");
        write(&new, Existing::Refuse, |w| w.write_all(b"abc")).unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"abc");
    }
}
