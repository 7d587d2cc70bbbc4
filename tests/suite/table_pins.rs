//! Every Markdown and plain-text table ctxlab writes, pinned byte for byte: the `.md` files of
//! the shipped experiments that need neither `../shared/data` nor python (`report.md`, the
//! charts' tables), of a sweep whose histories carry flags (the flagger's section, a
//! `keep_recent` axis), of session sweeps over two caches (`cost_by_cache.md` with and without
//! its ratio, note-rate and noise columns), and what `ctxlab table`, `ctxlab inspect --color
//! always` and `ctxlab flags audit` print. How the tables are written may change; what they
//! say may not move a byte. `CTXLAB_UPDATE_PINS=1` writes the pins of the current code into
//! `table_pins.txt`, for a change that means to move a table (say which in its commit).

use crate::common::*;
use crate::decoded_values::{assert_unmoved, read_pins, write_pins, Fnv};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const PINS_FILE: &str = "tests/suite/table_pins.txt";

/// The shipped experiments that run from the repository alone.
const EXPERIMENTS: [&str; 7] = [
    "noise",
    "strategies",
    "noise-models",
    "sessions",
    "long",
    "superseded",
    "summary-size",
];

/// `experiments/sessions.toml` over two caches, with `raw(window=none)` to cost against: every
/// axis varied, the ratio alone, none.
const CACHE_SWEEPS: [(&str, &[&str]); 3] = [
    ("caches-all-axes", &[]),
    (
        "caches-ratio",
        &["session.note_rates=[0.0]", "session.false_negative=[0.0]"],
    ),
    (
        "caches-no-axis",
        &[
            "session.note_rates=[0.0]",
            "session.false_negative=[0.0]",
            "session.ratios=[0.85]",
        ],
    ),
];

fn pin(bytes: &[u8]) -> String {
    let mut h = Fnv::new();
    h.bytes(bytes);
    format!("{} bytes, {:016x}", bytes.len(), h.0)
}

/// A file's text without what differs between two runs of one experiment: the results'
/// (temporary) folder, quoted in the report's resolved experiment, and the report's run time.
fn steady(text: &str, out: &Path) -> String {
    text.replace(&out.display().to_string(), "OUT")
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with("| run time | ") {
                "| run time | T |\n"
            } else {
                l
            }
        })
        .collect()
}

/// `name/relative.md: pin` for every Markdown file under `out`, made [`steady`].
fn markdown_pins(name: &str, out: &Path, dir: &Path, pins: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_pins(name, out, &path, pins);
        } else if path.extension().is_some_and(|e| e == "md") {
            let relative = path.strip_prefix(out).unwrap().display().to_string();
            let text = steady(&std::fs::read_to_string(&path).unwrap(), out);
            pins.insert(format!("{name}/{relative}"), pin(text.as_bytes()));
        }
    }
}

/// Runs `file` in the folder `cwd` (its paths are relative to it), results in `out/name`.
struct Sweep<'a> {
    name: &'a str,
    cwd: &'a Path,
    file: &'a str,
    sets: Vec<String>,
}

fn sweep(s: Sweep, out: &Path, pins: &mut BTreeMap<String, String>) {
    let Sweep {
        name,
        cwd,
        file,
        sets,
    } = s;
    let out = out.join(name);
    let mut args = vec!["sweep".to_string(), file.into(), "-q".into()];
    args.push("--set".into());
    args.push(format!("output.dir={}", out.display()));
    for s in sets {
        args.push("--set".into());
        args.push(s);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ctxlab(cwd, &args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    markdown_pins(name, &out, &out, pins);
}

/// Three histories of twelve records, with truth and flags that disagree on some of each kind.
fn flagged_histories() -> String {
    let mut text = String::new();
    for k in 0..3usize {
        for i in 0..12usize {
            let kind = ["user", "assistant", "tool_result"][i % 3];
            let required = (i * 7 + k) % 4 == 0;
            let flag = if (i + k) % 5 == 0 {
                !required
            } else {
                required
            };
            let _ = writeln!(
                text,
                "{{\"history\":\"h{k}\",\"id\":{},\"kind\":\"{kind}\",\"text\":\"{}\",\"required\":{required},\"flag\":{flag}}}",
                i + 1,
                "x".repeat(4 + 3 * i + k)
            );
        }
    }
    text
}

const FLAGGED: &str = "name = \"flagged\"\nseed = 3\nreplicates = 2\n[histories]\nfiles = [\"h.jsonl\"]\n[sweep]\nstrategies = [\"recent\", \"required\"]\nkeep_recent = [0, 2]\nbudgets = [30, 60, 100]\nfalse_negative = [0.0, 0.1]\n[output]\ndir = \"out\"\n";

/// What a command prints, pinned under `name`.
fn printed(name: &str, dir: &Path, args: &[&str], pins: &mut BTreeMap<String, String>) {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    pins.insert(name.into(), pin(&o.stdout));
}

fn current() -> BTreeMap<String, String> {
    let mut pins = BTreeMap::new();
    let tmp = tempfile::tempdir().unwrap();
    let (r, d) = (root(), tmp.path());
    for name in EXPERIMENTS {
        let file = format!("experiments/{name}.toml");
        let s = Sweep {
            name,
            cwd: &r,
            file: &file,
            sets: Vec::new(),
        };
        sweep(s, d, &mut pins);
    }
    for (name, extra) in CACHE_SWEEPS {
        let mut sets = vec![
            "session.caches=[\"none\",\"anthropic\"]".to_string(),
            "session.strategies=[\"raw(window=none)\",\"recent\",\"summary\"]".to_string(),
        ];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let file = "experiments/sessions.toml";
        let s = Sweep {
            name,
            cwd: &r,
            file,
            sets,
        };
        sweep(s, d, &mut pins);
    }
    std::fs::write(d.join("h.jsonl"), flagged_histories()).unwrap();
    std::fs::write(d.join("flagged.toml"), FLAGGED).unwrap();
    let s = Sweep {
        name: "flagged",
        cwd: d,
        file: "flagged.toml",
        sets: Vec::new(),
    };
    sweep(s, d, &mut pins);
    let article = "data/article12.jsonl";
    printed("table/text", &r, &["table", article], &mut pins);
    for format in ["markdown", "csv"] {
        let args = ["table", article, "--format", format];
        printed(&format!("table/{format}"), &r, &args, &mut pins);
    }
    let args = [
        "inspect",
        article,
        "--strategy",
        "mask(keep_recent=1)",
        "--budget",
        "40",
        "--color",
        "always",
    ];
    printed("inspect/colour", &r, &args, &mut pins);
    printed("inspect/plain", &r, &args[..6], &mut pins);
    printed("flags/audit", d, &["flags", "audit", "h.jsonl"], &mut pins);
    pins
}

#[test]
fn every_markdown_and_text_table_keeps_its_bytes() {
    let got = current();
    if std::env::var_os("CTXLAB_UPDATE_PINS").is_some() {
        write_pins(PINS_FILE, &got);
        return;
    }
    assert_unmoved(&read_pins(PINS_FILE), &got, |_| true);
}
