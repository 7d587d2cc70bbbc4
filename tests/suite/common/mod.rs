//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the ctxlab binary with `args` in `dir`.
pub fn ctxlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ctxlab")
}

/// Runs the ctxlab binary with `args` in `dir` and one environment variable set.
pub fn ctxlab_env(dir: &Path, args: &[&str], (key, value): (&str, &str)) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(args)
        .current_dir(dir)
        .env(key, value)
        .output()
        .expect("run ctxlab")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The repository root (where Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The path of a transcript of `tests/fixtures/import/`, as an argument.
pub fn import_fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/import")
        .join(name)
        .display()
        .to_string()
}

/// `../shared/data` beside the repository, when it is there.
pub fn shared_data() -> Option<PathBuf> {
    let p = root().join("../shared/data");
    p.is_dir().then_some(p)
}

/// Asserts a failed run: non-zero exit and every `needles` in its error output.
pub fn assert_fails_with(o: &Output, needles: &[&str]) {
    assert!(
        !o.status.success(),
        "expected failure, got success: {}",
        stdout(o)
    );
    let err = stderr(o);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
}
pub mod records;
pub mod summary_fixture;
