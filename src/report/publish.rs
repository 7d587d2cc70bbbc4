//! Writing a set of output files all or nothing: every file goes to a temporary name beside
//! its final one, and only when all are written are they renamed into place. A failure before
//! that leaves the folder as it was. No link inside the folder is followed (`crate::links`).

use crate::error::InputError;
use crate::output_file::Existing;
use std::fs;
use std::path::{Path, PathBuf};

/// The folder inside a results folder that holds the charts.
pub const CHARTS_DIR: &str = "charts";

/// A file to write, by its path relative to the output folder.
#[derive(Debug, Clone)]
pub struct FileToWrite {
    pub relative: PathBuf,
    pub bytes: Vec<u8>,
}

/// Writes `files` under `dir` and returns their final paths, in the order given; a plain file
/// at a final path is replaced (what a results folder's own charts need).
pub fn write_all(dir: &Path, files: &[FileToWrite]) -> Result<Vec<PathBuf>, InputError> {
    write_files(dir, files, Existing::Replace)
}

/// [`write_all`], with what may be at the final paths already (see
/// [`crate::output_file`]): everything is checked before the first file is written.
pub fn write_files(
    dir: &Path,
    files: &[FileToWrite],
    existing: Existing,
) -> Result<Vec<PathBuf>, InputError> {
    for file in files {
        if crate::links::through_link(dir, &file.relative).is_none() {
            crate::output_file::check(&dir.join(&file.relative), existing)?;
        }
    }
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut temporaries: Vec<(PathBuf, PathBuf)> = Vec::new();
    let staged = stage(dir, files, &mut created_dirs, &mut temporaries);
    if let Err(e) = staged {
        undo(&temporaries, &created_dirs);
        return Err(e);
    }
    for (i, (temporary, target)) in temporaries.iter().enumerate() {
        if let Err(e) = crate::output_file::place(temporary, target, existing) {
            // Files already placed are complete; the rest are removed so no temporary stays.
            undo(&temporaries[i + 1..], &[]);
            return Err(e);
        }
    }
    Ok(temporaries.into_iter().map(|(_, target)| target).collect())
}

fn stage(
    dir: &Path,
    files: &[FileToWrite],
    created_dirs: &mut Vec<PathBuf>,
    temporaries: &mut Vec<(PathBuf, PathBuf)>,
) -> Result<(), InputError> {
    for file in files {
        if let Some(message) = crate::links::through_link(dir, &file.relative) {
            return Err(InputError::Invalid(message));
        }
        let target = dir.join(&file.relative);
        let parent = target.parent().unwrap_or(dir).to_path_buf();
        if !parent.exists() {
            // Remember each folder made, outermost first, to remove them on failure.
            let mut missing = Vec::new();
            let mut p = parent.as_path();
            while !p.exists() {
                missing.push(p.to_path_buf());
                match p.parent() {
                    Some(up) => p = up,
                    None => break,
                }
            }
            fs::create_dir_all(&parent).map_err(|e| InputError::io(&parent, e))?;
            created_dirs.extend(missing.into_iter().rev());
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        // Created exclusively (a link planted at the temporary name is refused, not
        // followed); a write that fails half way (a full disk) removes its file.
        crate::links::write(&temporary, &file.bytes).map_err(|e| match e {
            crate::error::Error::Io { source, .. } => InputError::io(&temporary, source),
            other => InputError::Invalid(other.to_string()),
        })?;
        temporaries.push((temporary, target));
    }
    Ok(())
}

fn undo(temporaries: &[(PathBuf, PathBuf)], created_dirs: &[PathBuf]) {
    for (temporary, _) in temporaries {
        let _ = fs::remove_file(temporary);
    }
    for d in created_dirs.iter().rev() {
        let _ = fs::remove_dir(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_all_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let files = vec![
            FileToWrite {
                relative: "charts/a.txt".into(),
                bytes: b"a".to_vec(),
            },
            FileToWrite {
                relative: "b.txt".into(),
                bytes: b"b".to_vec(),
            },
        ];
        let written = write_all(dir.path(), &files).unwrap();
        assert_eq!(written[0], dir.path().join("charts/a.txt"));
        assert_eq!(fs::read(dir.path().join("charts/a.txt")).unwrap(), b"a");
        assert_eq!(fs::read(dir.path().join("b.txt")).unwrap(), b"b");
        let names: Vec<_> = fs::read_dir(dir.path().join("charts"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["a.txt"]);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A plain file where a folder must go makes the second file fail.
        fs::write(dir.path().join("blocker"), b"x").unwrap();
        let files = vec![
            FileToWrite {
                relative: "charts/a.txt".into(),
                bytes: b"a".to_vec(),
            },
            FileToWrite {
                relative: "blocker/b.txt".into(),
                bytes: b"b".to_vec(),
            },
        ];
        assert!(write_all(dir.path(), &files).is_err());
        assert!(!dir.path().join("charts").exists());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["blocker"]);
    }
}
