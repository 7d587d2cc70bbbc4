//! An external strategy's command, and the program file it names: what the manifest records
//! and what `--resume` checks, so rows made by two versions of a program never mix.

use super::{is_external, Rule, Strategy};
use crate::error::{Error, ParseError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A command as written in a spec: words separated by spaces, run without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub text: String,
    pub words: Vec<String>,
}

impl CommandLine {
    pub fn parse(text: &str) -> Result<CommandLine, ParseError> {
        let words: Vec<String> = text.split_whitespace().map(String::from).collect();
        if words.is_empty() {
            return Err(
                "strategy `external`: parameter `cmd` is empty; give the program's command, e.g. `cmd=\"python3 my_rule.py\"`"
                    .into(),
            );
        }
        Ok(CommandLine {
            text: words.join(" "),
            words,
        })
    }

    /// The program file the command names: the first word after the first that is a file
    /// (the script an interpreter runs), else the first word itself (a path, or a name looked
    /// up on `PATH`). `None` when it is neither.
    pub fn program_file(&self) -> Option<PathBuf> {
        if let Some(script) = self.words[1..].iter().map(Path::new).find(|p| p.is_file()) {
            return Some(script.to_path_buf());
        }
        let first = Path::new(&self.words[0]);
        if first.components().count() > 1 || first.is_file() {
            return first.is_file().then(|| first.to_path_buf());
        }
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(first))
                .find(|p| p.is_file())
        })
    }
}

/// A program an experiment runs, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramFile {
    /// The command, as the strategy's label writes it.
    pub command: String,
    /// The program file it names (see [`CommandLine::program_file`]).
    pub file: String,
    /// SHA-256 of the file's bytes, 64 lowercase hex digits.
    pub sha256: String,
}

/// The program files of the external strategies among `strategies`, once per command, in
/// the order they first appear; refuses a command that names no file it can read.
pub fn program_files(strategies: &[Strategy]) -> Result<Vec<ProgramFile>, Error> {
    let mut files: Vec<ProgramFile> = Vec::new();
    for s in strategies.iter().filter(|s| is_external(s)) {
        let Rule::External(e) = &s.rule else { continue };
        let command = &e.command;
        if files.iter().any(|f| f.command == command.text) {
            continue;
        }
        let Some(path) = command.program_file() else {
            return Err(Error::Refused(format!(
                "strategy `{}`: its command names no program file: no word of `{}` is a file here, and `{}` is not on PATH",
                s.label(),
                command.text,
                command.words[0]
            )));
        };
        let bytes = std::fs::read(&path).map_err(|e| {
            Error::Refused(format!(
                "strategy `{}`: cannot read its program {}: {e}",
                s.label(),
                path.display()
            ))
        })?;
        files.push(ProgramFile {
            command: command.text.clone(),
            file: path.display().to_string(),
            sha256: sha256(&bytes),
        });
    }
    Ok(files)
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a run recorded with the programs `was` cannot be resumed with `now`: a program file
/// whose bytes changed (rows of two versions would mix). Programs added or dropped change the
/// experiment's strategies, which the experiment's hash refuses by itself.
pub fn resume_refusal(was: &[ProgramFile], now: &[ProgramFile]) -> Option<String> {
    now.iter().find_map(|n| {
        let w = was.iter().find(|w| w.command == n.command)?;
        (w.file != n.file || w.sha256 != n.sha256).then(|| {
            format!(
                "the program {} of `{}` changed since the unfinished run (SHA-256 {} then, {} now): its rows would mix two versions",
                n.file,
                n.command,
                &w.sha256[..w.sha256.len().min(12)],
                &n.sha256[..n.sha256.len().min(12)]
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_file_is_the_script_an_interpreter_runs() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("rule.py");
        std::fs::write(&script, "print(1)\n").unwrap();
        let cmd = CommandLine::parse(&format!("python3  -u {}", script.display())).unwrap();
        assert_eq!(cmd.words.len(), 3);
        assert_eq!(cmd.program_file(), Some(script.clone()));
        // No script: the first word, found on PATH (sh is on every machine that runs this).
        let sh = CommandLine::parse("sh -c true")
            .unwrap()
            .program_file()
            .unwrap();
        assert!(sh.ends_with("sh"), "{}", sh.display());
        let missing = CommandLine::parse("./no-such-program --x").unwrap();
        assert_eq!(missing.program_file(), None);
        // SHA-256 of "print(1)\n", as `sha256sum` prints it.
        assert_eq!(
            sha256(b"print(1)\n"),
            "cc42155088fca5730758db72b2a5bca33112a941dfaa2d43098ec422ce4ea213"
        );
    }

    #[test]
    fn a_changed_program_file_refuses_to_resume() {
        let file = |sha: &str| ProgramFile {
            command: "python3 rule.py".into(),
            file: "rule.py".into(),
            sha256: sha.into(),
        };
        let was = [file("aaaaaaaaaaaaaaaaaaaa")];
        assert_eq!(resume_refusal(&was, &[file("aaaaaaaaaaaaaaaaaaaa")]), None);
        let why = resume_refusal(&was, &[file("bbbbbbbbbbbbbbbbbbbb")]).unwrap();
        assert!(
            why.starts_with("the program rule.py of `python3 rule.py` changed since the unfinished run (SHA-256 aaaaaaaaaaaa then, bbbbbbbbbbbb now)"),
            "{why}"
        );
    }
}
