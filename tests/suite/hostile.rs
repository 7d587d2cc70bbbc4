//! Hostile input (issue 15): each case fails with one message naming where, exits non-zero
//! (or, for a closed stdout, quietly), writes nothing that looks whole and leaves its inputs
//! as they were.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

const EXP: &str = r#"
name = "h"
seed = 3
replicates = 2
[histories]
generate = { count = 6, records = [10, 30], required_share = 0.2, seed = 9 }
[sweep]
strategies = ["recent", "required"]
budgets = [20, 50]
[output]
dir = "out"
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("exp.toml"), EXP).unwrap();
    dir
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let d = setup();
    ok(
        d.path(),
        &[
            "generate",
            "exp.toml",
            "--out",
            "h.jsonl",
            "--set",
            "histories.generate.records=[3000,3000]",
            "--set",
            "histories.generate.count=1",
        ],
    );
    // `inspect` prints every record: far more than a pipe holds, so the write meets EPIPE.
    for args in [
        &[
            "inspect",
            "h.jsonl",
            "--strategy",
            "recent",
            "--budget",
            "50",
        ][..],
        &["table", "h.jsonl"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
            .args(args)
            .current_dir(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn impossible_sizes_are_refused_before_anything_runs() {
    let d = setup();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--set", "replicates=4294967295"],
            &[
                "key `replicates`",
                "4294967295 exceeds ctxlab's limit of 100000 replicates",
            ],
        ),
        (
            &["--set", "histories.generate.records=[2,4294967295]"],
            &[
                "key `histories.generate.records`",
                "4294967295 records per history exceed ctxlab's limit of 1000000",
            ],
        ),
        (
            &["--set", "histories.generate.count=4294967295"],
            &[
                "key `histories.generate.count`",
                "4294967295 histories exceed ctxlab's limit of 10000000",
            ],
        ),
        (
            &[
                "--set",
                "histories.generate.count=5000000",
                "--set",
                "histories.generate.records=[2,1000]",
            ],
            &[
                "key `histories.generate.count`",
                "more than 1000000000 records",
            ],
        ),
        (
            &["--max-cells", "10"],
            &[
                "the sweep has 48 cells (6 histories × 8 per history), more than --max-cells 10",
                "pass a larger --max-cells",
            ],
        ),
    ];
    for (args, needles) in cases {
        let mut all = vec!["sweep", "exp.toml", "-q"];
        all.extend_from_slice(args);
        assert_fails_with(&ctxlab(d.path(), &all), needles);
        assert!(
            !d.path().join("out").exists(),
            "{args:?} created the folder"
        );
    }
    // An axis longer than u16 indices allow.
    let budgets: Vec<String> = (0..70_000)
        .map(|i| format!("{}", i as f64 / 1000.0))
        .collect();
    let long = EXP.replace(
        "budgets = [20, 50]",
        &format!("budgets = [{}]", budgets.join(",")),
    );
    std::fs::write(d.path().join("long.toml"), long).unwrap();
    assert_fails_with(
        &ctxlab(d.path(), &["sweep", "long.toml", "-q"]),
        &["long.toml: key `sweep.budgets`: 70000 values exceed ctxlab's limit of 65535 values per axis"],
    );
    let rates: Vec<String> = (0..300).map(|i| format!("{}", i as f64 / 1000.0)).collect();
    let levels = EXP.replace(
        "budgets = [20, 50]",
        &format!(
            "budgets = [20]\nfalse_negative = [{0}]\nfalse_positive = [{0}]",
            rates.join(",")
        ),
    );
    std::fs::write(d.path().join("levels.toml"), levels).unwrap();
    assert_fails_with(
        &ctxlab(d.path(), &["sweep", "levels.toml", "-q"]),
        &["key `sweep.false_positive`: 300 × 300 noise levels"],
    );
}

#[test]
fn garbage_is_refused_with_file_line_and_a_short_quote() {
    let d = setup();
    let p = d.path();
    let w = |name: &str, bytes: &[u8]| std::fs::write(p.join(name), bytes).unwrap();
    w("array.jsonl", b"[1,\"hello\",true,\"user\"]\n");
    assert_fails_with(
        &ctxlab(p, &["table", "array.jsonl"]),
        &["array.jsonl:1: found a JSON array; expected a JSON object with named fields"],
    );
    w("bom.jsonl", b"\xef\xbb\xbf{\"id\":1,\"text\":\"a b c\"}\n");
    ok(p, &["table", "bom.jsonl"]);
    w(
        "bad.jsonl",
        b"{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":\"\xff\"}\n",
    );
    assert_fails_with(
        &ctxlab(p, &["table", "bad.jsonl"]),
        &["bad.jsonl:2: invalid UTF-8 at byte offset 36"],
    );
    let long = "k".repeat(100_000);
    w(
        "long.jsonl",
        format!("{{\"id\":1,\"text\":\"a\",\"kind\":\"{long}\"}}\n").as_bytes(),
    );
    let o = ctxlab(p, &["table", "long.jsonl"]);
    assert_fails_with(&o, &["long.jsonl:1:", &format!("{}…", "k".repeat(80))]);
    assert!(stderr(&o).len() < 1000, "{}", stderr(&o).len());
    // Experiment files and --set.
    assert_fails_with(
        &ctxlab(
            p,
            &["sweep", "exp.toml", "-q", "--set", "sweep.budgets=[1,"],
        ),
        &["--set \"sweep.budgets=[1,\": [1,: not valid TOML"],
    );
    assert_fails_with(
        &ctxlab(
            p,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--set",
                "sweep.budgets=[0.0,-0.0]",
            ],
        ),
        &["key `sweep.budgets[1]`: 0 appears twice"],
    );
    assert_fails_with(
        &ctxlab(
            p,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--set",
                "histories.generate=[3,[5,9],0.2]",
            ],
        ),
        &["exp.toml: key `histories.generate`: found an array where a table belongs"],
    );
    w("bom.toml", format!("\u{feff}{EXP}").as_bytes());
    ok(p, &["generate", "bom.toml", "--out", "g.jsonl"]);
    assert!(!p.join("out").exists());
}

#[test]
fn transcripts_read_objects_by_name_and_usage_never_wraps() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let w = |name: &str, text: &str| std::fs::write(p.join(name), text).unwrap();
    let max = u64::MAX;
    w("cc.jsonl", &format!(
        "{{\"type\":\"user\",\"message\":{{\"content\":\"task\"}}}}\n{{\"type\":\"assistant\",\"message\":{{\"id\":\"m1\",\"content\":[{{\"type\":\"text\",\"text\":\"hi\"}}],\"usage\":{{\"input_tokens\":{max},\"cache_read_input_tokens\":2}}}}}}\n"
    ));
    assert_fails_with(
        &ctxlab(p, &["import", "cc.jsonl", "--format", "claude-code", "--out", "o.jsonl"]),
        &["cc.jsonl:2: `message.usage`: input_tokens + cache_creation_input_tokens + cache_read_input_tokens exceeds 2^64 − 1"],
    );
    w("chat.json", r#"{"messages": [["user", "hello"]]}"#);
    assert_fails_with(
        &ctxlab(
            p,
            &[
                "import",
                "chat.json",
                "--format",
                "openai-chat",
                "--out",
                "o.jsonl",
            ],
        ),
        &[
            "chat.json: ",
            "found an array: fields are read by name, not by position",
        ],
    );
    w(
        "t.traj.json",
        r#"{"messages": [{"role":"user","content":"task"}, ["assistant", "x"]]}"#,
    );
    assert_fails_with(
        &ctxlab(
            p,
            &[
                "import",
                "t.traj.json",
                "--format",
                "mini-swe-agent",
                "--out",
                "o.jsonl",
            ],
        ),
        &["t.traj.json: ", "found an array"],
    );
    assert!(!p.join("o.jsonl").exists());
}

#[test]
fn absurd_prices_are_refused_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    let exp = r#"
name = "s"
seed = 1
[histories]
generate = { count = 2, records = [10, 20], required_share = 0.2 }
[session]
strategies = ["recent"]
windows = [500]
ratios = [0.8]
"#;
    std::fs::write(d.path().join("s.toml"), exp).unwrap();
    assert_fails_with(
        &ctxlab(
            d.path(),
            &[
                "sweep",
                "s.toml",
                "-q",
                "--set",
                "session.prices.input=1e308",
            ],
        ),
        &[
            "key `session.prices.input`: 100000000",
            "is not a price: expected a number ≥ 0 and at most 1000000",
        ],
    );
}

#[test]
fn outputs_never_overwrite_inputs() {
    let d = setup();
    let p = d.path();
    ok(p, &["generate", "exp.toml", "--out", "h.jsonl"]);
    let before = std::fs::read(p.join("exp.toml")).unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    assert_fails_with(
        &ctxlab(p, &["generate", "exp.toml", "--out", "exp.toml"]),
        &["--out exp.toml: is the input exp.toml; writing it would overwrite the input"],
    );
    assert_fails_with(
        &ctxlab(p, &["generate", "exp.toml", "--out", "./sub/../exp.toml"]),
        &["is the input exp.toml"],
    );
    assert_eq!(std::fs::read(p.join("exp.toml")).unwrap(), before);
    // A transcript imported onto itself, by name or through a hard link.
    let t =
        "{\"role\":\"user\",\"content\":\"task\"}\n{\"role\":\"assistant\",\"content\":\"ok\"}\n";
    std::fs::write(p.join("x.jsonl"), t).unwrap();
    std::fs::hard_link(p.join("x.jsonl"), p.join("link.jsonl")).unwrap();
    for out in ["x.jsonl", "link.jsonl"] {
        assert_fails_with(
            &ctxlab(
                p,
                &["import", "x.jsonl", "--format", "openai-chat", "--out", out],
            ),
            &["is the input x.jsonl"],
        );
    }
    assert_eq!(std::fs::read_to_string(p.join("x.jsonl")).unwrap(), t);
}

#[cfg(unix)]
#[test]
fn a_link_inside_the_output_folder_is_not_followed() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "exp.toml", "-q"]);
    let elsewhere = p.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let charts = p.join("out/charts");
    assert!(charts.is_dir(), "the sweep draws charts into out/charts");
    std::fs::remove_dir_all(&charts).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &charts).unwrap();
    assert_fails_with(&ctxlab(p, &["sweep", "exp.toml", "-q"]), &["out/charts: is a symbolic link inside the output folder; ctxlab does not write through links"]);
    assert_fails_with(
        &ctxlab(p, &["plot", "out"]),
        &["is a symbolic link inside the output folder"],
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

/// A sharded run of EXP in `p/s`, 2 shards.
pub(crate) fn sharded(p: &Path) {
    for i in 0..2 {
        ok(
            p,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--out",
                "s",
            ],
        );
    }
}

#[test]
fn merge_verifies_shard_states_and_files() {
    let d = setup();
    let p = d.path();
    sharded(p);
    let state = p.join("s/shards/shard=0.json");
    let original = std::fs::read_to_string(&state).unwrap();
    let json: serde_json::Value = serde_json::from_str(&original).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = json.clone();
        f(&mut v);
        serde_json::to_string(&v).unwrap()
    };
    let cases: Vec<(String, &[&str])> = vec![
        (edit(&|v| v["shard"] = serde_json::json!([7, 3])), &["shard=0.json: shard 7/3 does not belong to the split into 3 shards"]),
        (edit(&|v| v["wall_seconds"] = serde_json::json!(-1e300)), &["shard=0.json: shard 0: `wall_seconds` is -1000000000000", "expected a duration from 0"]),
        (edit(&|v| v["summary"]["groups"][0]["n"] = serde_json::json!(u64::MAX)), &["shard=0.json: shard 0: its summary is not one a run writes: group 1: counts add up beyond 2^64 − 1"]),
        (edit(&|v| v["summary"]["groups"][0]["measures"][1]["sum"] = serde_json::json!("-999999999999999999999")), &["shard=0.json: shard 0: its summary is not one a run writes: group 0, measure 1: a sum too large for its sum of squares"]),
        (edit(&|v| v["summary"]["groups"][0]["measures"][0]["sum_sq"] = serde_json::json!("-5")), &["group 0, measure 0: a negative sum of squares"]),
        (edit(&|v| v["config_hash"] = serde_json::json!("0000")), &["comes from another experiment (config hash", "shard 0 has 0000"]),
        (edit(&|v| v["rows"] = serde_json::json!(u64::MAX)), &["shard=0.json: shard 0: its state counts 18446744073709551615 rows"]),
        (edit(&|v| v["files"] = serde_json::json!(["../../etc/passwd"])), &["shard 0 lists the files [\"../../etc/passwd\"]"]),
        (edit(&|v| v["histories"] = serde_json::json!([0, u64::MAX])), &["shard 1 starts at history"]),
        ("[\"cells\", \"x\"]".to_string(), &["shard=0.json: cannot read as a ctxlab shard state: expected a JSON object"]),
        // A state of an earlier version: no format, no intervals of shares, no tied pairs.
        (edit(&|v| { v["summary"].as_object_mut().unwrap().remove("format"); }), &["shard=0.json: shard 0: its summary is of format 1 where this ctxlab reads format 3", "run it again with this one"]),
        (edit(&|v| v["summary"]["pairs"][0]["tied"] = serde_json::json!(99)), &["shard=0.json: shard 0: its summary is not one a run writes: pair 0: ", "and 99 tied histories where it has"]),
    ];
    for (text, needles) in &cases {
        std::fs::write(&state, text).unwrap();
        assert_fails_with(&ctxlab(p, &["merge", "s"]), needles);
        assert!(!p.join("s/manifest.json").exists() && !p.join("s/summary.csv").exists());
        assert_eq!(
            &std::fs::read_to_string(&state).unwrap(),
            text,
            "state untouched"
        );
    }
    std::fs::write(&state, &original).unwrap();
    // A part deleted, then garbled.
    let part = p.join("s/cells/shard=1/part.parquet");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::remove_file(&part).unwrap();
    assert_fails_with(
        &ctxlab(p, &["merge", "s"]),
        &["s/cells/shard=1/part.parquet: missing; shard 1's state lists it"],
    );
    std::fs::write(&part, &bytes[..bytes.len() / 2]).unwrap();
    assert_fails_with(
        &ctxlab(p, &["merge", "s"]),
        &["shard 1: ", "part.parquet: not a readable Parquet table"],
    );
    let csv = p.join("s/cells-csv/shard=1/part.csv");
    std::fs::write(&part, &bytes).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, &text[..text.len() / 2]).unwrap();
    assert_fails_with(
        &ctxlab(p, &["merge", "s"]),
        &["part.csv: holds", "rows where shard 1's state says"],
    );
    assert!(!p.join("s/manifest.json").exists());
    std::fs::write(&csv, &text).unwrap();
    ok(p, &["merge", "s"]);
}
