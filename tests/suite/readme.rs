//! The README is the front door and `docs/` the guide beside it: every `cargo run --release --
//! ...` line in either must work as written, and every relative link must lead somewhere. Each
//! command runs here through the built binary, by `sh` from the repository root (so quotes and
//! globs mean what they mean to a reader's shell), the README's first and then the guide's
//! pages in the order of its index (a page may use what an earlier one wrote: `compare` reads
//! the main job's folder).

use crate::common::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

const PREFIX: &str = "cargo run --release -- ";

/// The guide's pages in the order its index (`docs/README.md`) links them.
fn guide_pages() -> Vec<PathBuf> {
    let docs = root().join("docs");
    let index = std::fs::read_to_string(docs.join("README.md")).unwrap();
    let mut pages: Vec<PathBuf> = Vec::new();
    for target in links(&index) {
        let file = target.split('#').next().unwrap();
        if file.ends_with(".md") && !file.contains('/') {
            let page = docs.join(file);
            if !pages.contains(&page) {
                pages.push(page);
            }
        }
    }
    pages
}

/// The README, the guide's index, then its pages: every document whose commands are run.
fn documents() -> Vec<PathBuf> {
    let mut all = vec![root().join("README.md"), root().join("docs/README.md")];
    all.extend(guide_pages());
    all
}

/// The `cargo run --release -- ...` lines of a document, without a trailing `# comment`.
fn commands(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(PREFIX))
        .map(|l| l.split(" # ").next().unwrap().trim_end().to_string())
        .collect()
}

/// The targets of the Markdown links (and images) of a text, outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold text such as `a[i](x)` that is no link.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            match after.find(')') {
                Some(end) => {
                    found.push(after[..end].trim().to_string());
                    rest = &after[end..];
                }
                None => break,
            }
        }
    }
    found
}

/// The anchors GitHub gives a document's headings: lowercased, punctuation but `-` and `_`
/// dropped, spaces made hyphens, a repeated one numbered `-1`, `-2`, ...
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let Some(title) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn every_command_in_the_readme_works() {
    let mut all: Vec<(String, String)> = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        all.extend(commands(&text).into_iter().map(|c| (name.clone(), c)));
    }
    assert!(all.len() >= 10, "found only {} commands", all.len());
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(commands(&readme)
        .iter()
        .any(|c| c == "cargo run --release -- sweep experiments/noise.toml"));
    let mut ran = 0;
    for (doc, line) in &all {
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
            eprintln!("skipped (../shared/data is absent): {doc}: {line}");
            continue;
        }
        // An external strategy's example needs Python, in the command or its experiment file.
        let needs_python = line.contains("python3")
            || line
                .split_whitespace()
                .filter(|w| w.ends_with(".toml"))
                .any(|f| {
                    std::fs::read_to_string(root().join(f))
                        .is_ok_and(|text| text.contains("python3"))
                });
        if needs_python && !python3_runs() {
            eprintln!("skipped (python3 is absent): {doc}: {line}");
            continue;
        }
        let script = format!("{} {}", env!("CARGO_BIN_EXE_ctxlab"), &line[PREFIX.len()..]);
        let o = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "command of {doc} failed: {line}\n{}",
            stderr(&o)
        );
        ran += 1;
    }
    eprintln!(
        "ran {ran} of the {} commands of the README and the guide",
        all.len()
    );
}

/// Whether `python3` runs here.
fn python3_runs() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
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

#[test]
fn the_readme_is_a_front_door_and_the_guide_is_indexed() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the guide (docs/) holds the reference"
    );
    let listed = guide_pages();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") && !path.ends_with("README.md") {
            assert!(
                listed.contains(&path),
                "{} is not linked from docs/README.md",
                path.display()
            );
        }
    }
}

#[test]
fn every_relative_link_of_the_readme_and_the_guide_resolves() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path: PathBuf = if file.is_empty() {
                doc.clone()
            } else {
                dir.join(file)
            };
            let name = doc.strip_prefix(root()).unwrap().display().to_string();
            if !path.exists() {
                broken.push(format!("{name}: ({target}): no file {}", path.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let heads = if path.extension().is_some_and(|e| e == "md") {
                    anchors(&std::fs::read_to_string(&path).unwrap())
                } else {
                    Vec::new()
                };
                if !heads.iter().any(|h| h == anchor) {
                    broken.push(format!("{name}: ({target}): no heading #{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn headings_get_the_anchors_github_gives_them() {
    let text = "# Large sweeps: streaming, shards, resume\n```\n# not a heading\n```\n\
                ### Label rules (`--label`)\n## Notes\n## Notes\n";
    assert_eq!(
        anchors(text),
        [
            "large-sweeps-streaming-shards-resume",
            "label-rules---label",
            "notes",
            "notes-1"
        ]
    );
    assert_eq!(
        links("[a](x.md#b) `[c](not)` ![d](e.png)\n```\n[f](g)\n```"),
        ["x.md#b", "e.png"]
    );
}
