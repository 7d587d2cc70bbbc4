//! The README is the front door: every `cargo run --release -- ...` line in it must work as
//! written. Each runs here through the built binary, by `sh` from the repository root (so
//! quotes and globs mean what they mean to a reader's shell).

use crate::common::*;
use std::process::Command;

#[test]
fn every_command_in_the_readme_works() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let prefix = "cargo run --release -- ";
    let commands: Vec<&str> = readme
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.split(" # ").next().unwrap().trim_end())
        .collect();
    assert!(
        commands.len() >= 10,
        "found only {} commands",
        commands.len()
    );
    assert!(commands.contains(&"cargo run --release -- sweep experiments/noise.toml"));
    let mut ran = 0;
    for line in commands {
        // A command needs the shared runs when it names them, or its experiment file does.
        let needs_shared = line.contains("../shared/data")
            || line
                .split_whitespace()
                .filter(|w| w.ends_with(".toml"))
                .any(|f| {
                    std::fs::read_to_string(root().join(f))
                        .is_ok_and(|text| text.contains("../shared/data"))
                });
        if needs_shared && shared_data().is_none() {
            eprintln!("skipped (../shared/data is absent): {line}");
            continue;
        }
        let script = format!("{} {}", env!("CARGO_BIN_EXE_ctxlab"), &line[prefix.len()..]);
        let o = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "README command failed: {line}\n{}",
            stderr(&o)
        );
        ran += 1;
    }
    eprintln!("ran {ran} README commands");
}

#[test]
fn the_readme_shows_what_table_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let o = ctxlab(&root(), &["table", "data/article12.jsonl"]);
    assert!(o.status.success());
    assert!(
        readme.contains(stdout(&o).trim()),
        "README's table output is stale:\n{}",
        stdout(&o)
    );
}
