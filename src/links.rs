//! Links inside an output folder, its staging folders and a cache are never followed for
//! writing or deleting: a `charts` link pointing elsewhere, or a planted `.ctxlab.lock` link to
//! a file of the user's, would have ctxlab write (or truncate, or remove) outside the folder it
//! was given. The folder itself may be a link (the user chose it); what lies inside it is
//! checked, and every file ctxlab makes there is created exclusively (`O_CREAT | O_EXCL`, which
//! never follows a link, plus `O_NOFOLLOW`), so a link planted between the check and the
//! creation is refused too. A file opened without being created (a lock file) is opened with
//! `O_NOFOLLOW` and then checked through its handle: a plain file with one name only, so a
//! hard link to someone else's file is refused as well.

use crate::error::{At, Error, Result};
use std::fs::{File, OpenOptions};
use std::path::{Component, Path};

/// An error message when `relative` (a file to write under `dir`) passes through, or is, a
/// symbolic link; `None` when it is safe to write.
pub fn through_link(dir: &Path, relative: &Path) -> Option<String> {
    let mut at = dir.to_path_buf();
    for c in relative.components() {
        let Component::Normal(name) = c else {
            return Some(format!(
                "{}: not a plain path inside {}",
                relative.display(),
                dir.display()
            ));
        };
        at.push(name);
        if is_link(&at) {
            return Some(planted(&at));
        }
    }
    None
}

/// Whether `path` itself is a symbolic link (not following it).
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The one-line refusal of a link found at `path`.
pub fn planted(path: &Path) -> String {
    format!(
        "{}: is a symbolic link inside the output folder; ctxlab does not write through links (remove it, or choose another output folder)",
        path.display()
    )
}

/// Refuses `path` when it is a symbolic link.
pub fn refuse_link(path: &Path) -> Result<()> {
    if is_link(path) {
        return Err(Error::Refused(planted(path)));
    }
    Ok(())
}

#[cfg(unix)]
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    use std::os::unix::fs::OpenOptionsExt as _;
    options.custom_flags(libc::O_NOFOLLOW)
}

#[cfg(not(unix))]
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Creates `path` for writing, exclusively. A link at its place is refused, never followed; a
/// plain file of that name (what an interrupted run left) is removed first, so the new file is
/// always one this process made.
pub fn create(path: &Path) -> Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => return Err(Error::Refused(planted(path))),
        Ok(m) if m.is_dir() => {
            return Err(Error::Refused(format!(
                "{}: is a folder where ctxlab writes a file; move it away",
                path.display()
            )))
        }
        Ok(_) => std::fs::remove_file(path).at(path, "replace")?,
        Err(_) => {}
    }
    match no_follow(OpenOptions::new().write(true).create_new(true)).open(path) {
        Ok(f) => Ok(f),
        // Planted between the look and the creation.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_link(path) => {
            Err(Error::Refused(planted(path)))
        }
        Err(e) => Err(e).at(path, "create"),
    }
}

/// Writes `bytes` to a new file at `path` (see [`create`]); a failed write removes it.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write as _;
    let mut file = create(path)?;
    if let Err(e) = file.write_all(bytes) {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(e).at(path, "write");
    }
    Ok(())
}

/// Opens (creating it when absent) the file at `path` for reading and writing without
/// truncating it, refusing a link and checking through the handle that it is a plain file
/// with no other name: what a lock file must be before its contents are replaced.
pub fn open_own(path: &Path) -> Result<File> {
    let file = match no_follow(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(path)
    {
        Ok(f) => f,
        // O_NOFOLLOW fails on a link (ELOOP): say what is there.
        Err(_) if is_link(path) => return Err(Error::Refused(planted(path))),
        Err(e) => return Err(e).at(path, "open"),
    };
    let meta = file.metadata().at(path, "open")?;
    if !meta.is_file() {
        return Err(Error::Refused(format!(
            "{}: is not a plain file; ctxlab keeps its lock there (move it away)",
            path.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if meta.nlink() > 1 {
            return Err(Error::Refused(format!(
                "{}: is a hard link to a file with {} names; ctxlab does not write through links (remove it, or choose another output folder)",
                path.display(),
                meta.nlink()
            )));
        }
    }
    Ok(file)
}

/// Removes the file at `path` when it is a plain file (a link is left alone, never followed).
pub fn remove_file(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_refused_and_its_target_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"precious").unwrap();
        let link = dir.path().join("out.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write(&link, b"x").unwrap_err().to_string();
        assert!(e.ends_with("out.json: is a symbolic link inside the output folder; ctxlab does not write through links (remove it, or choose another output folder)"), "{e}");
        assert!(open_own(&link).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        let hard = dir.path().join("lock");
        std::fs::hard_link(&target, &hard).unwrap();
        let e = open_own(&hard).unwrap_err().to_string();
        assert!(
            e.contains("lock: is a hard link to a file with 2 names"),
            "{e}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        // A stale plain file is replaced.
        let stale = dir.path().join("stale");
        std::fs::write(&stale, b"old").unwrap();
        write(&stale, b"new").unwrap();
        assert_eq!(std::fs::read(&stale).unwrap(), b"new");
    }
}
