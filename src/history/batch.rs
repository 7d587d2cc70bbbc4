//! Reading many files as one batch (transcripts, history files). Every file is read, so a
//! refusal names *every* file that cannot be read, each with its first problem, not only the
//! first one met. Asked to (`--skip-bad`), a batch instead leaves each bad file out **whole**
//! (none of its lines is kept: a session with a line missing would undercount every later
//! context), names it with its reason, and goes on with the rest; the files left out are
//! returned so the command can record them where its results are (a sweep's manifest).

use crate::error::InputError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a batch does with a file it cannot read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BadFiles {
    /// Refuse the batch, naming every bad file.
    #[default]
    Refuse,
    /// Leave each bad file out whole, naming it (`--skip-bad`).
    Skip,
}

impl BadFiles {
    /// [`BadFiles::Skip`] when `skip` (the `--skip-bad` flag), else [`BadFiles::Refuse`].
    pub fn skip_if(skip: bool) -> BadFiles {
        if skip {
            BadFiles::Skip
        } else {
            BadFiles::Refuse
        }
    }
}

/// A file a batch left out, and why: the error it gave, which names the file (and the line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub file: String,
    pub reason: String,
}

/// The files read so far and what each gave.
#[derive(Debug)]
pub struct FileBatch<T> {
    /// What the files are, plural, for messages: "transcripts", "history files".
    what: &'static str,
    files: usize,
    items: Vec<T>,
    bad: Vec<(LeftOut, InputError)>,
}

/// The most bad files a refusal lists one per line (an error message is bounded to a few
/// dozen lines); past it, the rest are counted, and `--skip-bad` names each.
const LISTED: usize = 30;

impl<T> FileBatch<T> {
    pub fn new(what: &'static str) -> Self {
        FileBatch {
            what,
            files: 0,
            items: Vec::new(),
            bad: Vec::new(),
        }
    }

    /// Adds what reading `path` gave: its items, or the error that makes it a bad file.
    pub fn push(&mut self, path: &Path, read: Result<Vec<T>, InputError>) {
        self.files += 1;
        match read {
            Ok(items) => self.items.extend(items),
            Err(e) => self.bad.push((
                LeftOut {
                    file: path.display().to_string(),
                    reason: describe(&e),
                },
                e,
            )),
        }
    }

    /// The items of the good files and the files left out, or the refusal: with
    /// [`BadFiles::Refuse`] any bad file refuses the batch, naming every one (a batch of a
    /// single file refuses with that file's own error); with [`BadFiles::Skip`] only a batch
    /// with no good file left is refused.
    pub fn finish(mut self, bad: BadFiles) -> Result<(Vec<T>, Vec<LeftOut>), InputError> {
        if self.bad.is_empty() {
            return Ok((self.items, Vec::new()));
        }
        if self.files == 1 {
            return Err(self.bad.pop().expect("one bad file").1);
        }
        let all_bad = self.bad.len() == self.files;
        if bad == BadFiles::Skip && !all_bad {
            return Ok((self.items, self.bad.into_iter().map(|(l, _)| l).collect()));
        }
        let mut message = if all_bad {
            format!(
                "none of the {} {} can be read; nothing was computed:",
                self.files, self.what
            )
        } else {
            format!(
                "{} of the {} {} cannot be read; nothing was computed:",
                self.bad.len(),
                self.files,
                self.what
            )
        };
        for (left, _) in self.bad.iter().take(LISTED) {
            message += &format!("\n  {}", left.reason);
        }
        if self.bad.len() > LISTED {
            message += &format!(
                "\n  … and {} more (--skip-bad names each)",
                self.bad.len() - LISTED
            );
        }
        if !all_bad {
            message += "\nfix or remove them, or pass --skip-bad to leave each bad file out whole (each is named, and a sweep's manifest lists them)";
        }
        Err(InputError::Batch(message))
    }
}

/// The history names a batch of ctxlab JSONL files has given so far, and the file each came
/// from: a name two files give would merge two histories into one.
#[derive(Debug, Default)]
pub struct NamesAcrossFiles(std::collections::HashMap<String, std::path::PathBuf>);

impl NamesAcrossFiles {
    /// Claims the names of the histories of the file at `path`, or none: fails, naming the
    /// first one an earlier file gave.
    pub fn claim<'a>(
        &mut self,
        path: &Path,
        names: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<(), InputError> {
        if let Some((name, first)) = names
            .clone()
            .find_map(|n| self.0.get(n).map(|first| (n, first)))
        {
            return Err(InputError::File {
                path: path.to_path_buf(),
                message: format!(
                    "history {name:?} is also in {}; history names must be unique across files",
                    first.display()
                ),
            });
        }
        for name in names {
            self.0.insert(name.to_string(), path.to_path_buf());
        }
        Ok(())
    }
}

/// An error with the errors that caused it, on one line: what a bad file is left out for.
fn describe(e: &InputError) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    // A reason is one line of a message: a cause spread over lines is joined.
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// The lines a command prints on stderr for the files it left out, the last one counting them.
pub fn left_out_lines(left_out: &[LeftOut]) -> Vec<String> {
    if left_out.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<String> = left_out
        .iter()
        .map(|l| format!("left out: {}", l.reason))
        .collect();
    lines.push(format!(
        "{} bad file(s) left out whole (--skip-bad); the others were read",
        left_out.len()
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(path: &str, line: usize) -> Result<Vec<u32>, InputError> {
        Err(InputError::line(path, line, "broken"))
    }

    #[test]
    fn a_refusal_names_every_bad_file_and_skipping_leaves_each_out_whole() {
        let mut b = FileBatch::new("transcripts");
        b.push(Path::new("a.jsonl"), bad("a.jsonl", 3));
        b.push(Path::new("b.jsonl"), Ok(vec![1, 2]));
        b.push(Path::new("c.jsonl"), bad("c.jsonl", 1));
        let e = b.finish(BadFiles::Refuse).unwrap_err().to_string();
        assert!(
            e.starts_with("2 of the 3 transcripts cannot be read; nothing was computed:\n  a.jsonl:3: broken\n  c.jsonl:1: broken\nfix or remove them"),
            "{e}"
        );
        let mut b = FileBatch::new("transcripts");
        b.push(Path::new("a.jsonl"), bad("a.jsonl", 3));
        b.push(Path::new("b.jsonl"), Ok(vec![1, 2]));
        let (items, left) = b.finish(BadFiles::Skip).unwrap();
        assert_eq!(items, vec![1, 2]);
        assert_eq!(
            left,
            vec![LeftOut {
                file: "a.jsonl".into(),
                reason: "a.jsonl:3: broken".into()
            }]
        );
        // Nothing left to read is refused, skipping or not; one file keeps its own error.
        let mut b: FileBatch<u32> = FileBatch::new("transcripts");
        b.push(Path::new("a.jsonl"), bad("a.jsonl", 3));
        b.push(Path::new("c.jsonl"), bad("c.jsonl", 1));
        let e = b.finish(BadFiles::Skip).unwrap_err().to_string();
        assert!(
            e.starts_with("none of the 2 transcripts can be read"),
            "{e}"
        );
        let mut b: FileBatch<u32> = FileBatch::new("transcripts");
        b.push(Path::new("a.jsonl"), bad("a.jsonl", 3));
        assert_eq!(
            b.finish(BadFiles::Skip).unwrap_err().to_string(),
            "a.jsonl:3: broken"
        );
    }
}
