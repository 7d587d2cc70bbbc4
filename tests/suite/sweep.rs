//! `ctxlab sweep` end to end: tables, determinism, noise semantics, bad configs.

use crate::common::*;
use polars::prelude::{DataFrame, ParquetReader, SerReader};
use std::path::Path;

const SMALL: &str = r#"
name = "small"
seed = 11
replicates = 2
[histories]
generate = { count = 7, records = [10, 40], required_share = 0.25, required_position = "uniform", seed = 3 }
[sweep]
strategies = ["recent", "required", { name = "required", fill = "skip" }]
budgets = [25, 50, 100]
keep_recent = [0, 2]
false_negative = [0.0, 0.3]
false_positive = [0.0, 0.1]
[output]
dir = "out"
"#;

fn read_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn small_sweep_writes_every_table_with_the_grid_size() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    let o = ctxlab(dir.path(), &["sweep", "small.toml", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("out");
    for f in [
        "cells.parquet",
        "cells.csv",
        "summary.parquet",
        "summary.csv",
        "manifest.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(!out.join(".partial").exists(), "staging folder left behind");
    // 7 histories × 2 replicates × 4 noise levels × 3 strategies × 2 keep_recent × 3 budgets.
    let cells = 7 * 2 * 4 * 3 * 2 * 3;
    let df = read_parquet(&out.join("cells.parquet"));
    assert_eq!(df.height(), cells);
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, ctxlab::tables::cells::table().column_names());
    let csv = std::fs::read_to_string(out.join("cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), cells + 1);
    assert_eq!(
        csv.lines().next().unwrap(),
        ctxlab::tables::cells::table().column_names().join(",")
    );

    // CSV and Parquet hold the same rows: compare every value of a few columns.
    let mut reader = csv::Reader::from_path(out.join("cells.csv")).unwrap();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let used = df.column("used").unwrap().u64().unwrap().clone();
    let retention = df
        .column("required_retention")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let strategy = df.column("strategy").unwrap().str().unwrap().clone();
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec[7], *strategy.get(i).unwrap());
        assert_eq!(rec[12].parse::<u64>().ok(), used.get(i));
        assert_eq!(rec[16].parse::<f64>().ok(), retention.get(i));
    }

    let summary = read_parquet(&out.join("summary.parquet"));
    assert_eq!(summary.height(), 3 * 2 * 3 * 4);
    let n = summary.column("n").unwrap().u64().unwrap();
    assert!((0..n.len()).all(|i| n.get(i) == Some(7 * 2)));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["rows"], cells);
    assert_eq!(manifest["seed"], 11);
    assert_eq!(
        manifest["config"]["sweep"]["strategies"][2],
        "required(fill=skip)"
    );
}

#[test]
fn tables_are_byte_identical_at_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    for (threads, out) in [("1", "one"), ("2", "two"), ("5", "five")] {
        let o = ctxlab(
            dir.path(),
            &[
                "sweep",
                "small.toml",
                "--quiet",
                "--threads",
                threads,
                "--out",
                out,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for f in [
        "cells.parquet",
        "cells.csv",
        "summary.parquet",
        "summary.csv",
    ] {
        let one = std::fs::read(dir.path().join("one").join(f)).unwrap();
        assert_eq!(
            one,
            std::fs::read(dir.path().join("two").join(f)).unwrap(),
            "{f}"
        );
        assert_eq!(
            one,
            std::fs::read(dir.path().join("five").join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn rows_formats_writes_the_cells_table_in_its_own_formats() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    // `small.toml` into folder `out`, with `--set` of each of `sets`.
    let sweep = |out: &str, sets: &[&str]| {
        let mut args = vec!["sweep", "small.toml", "--quiet", "--out", out];
        for set in sets {
            args.extend(["--set", set]);
        }
        ctxlab(dir.path(), &args)
    };
    let read = |folder: &str, f: &str| std::fs::read(dir.path().join(folder).join(f)).unwrap();
    for (out, sets) in [
        ("both", &[][..]),
        ("pq", &[r#"output.rows_formats=["parquet"]"#][..]),
        // The other way round: the cells as CSV only, the small tables in Parquet only.
        (
            "csv",
            &[
                r#"output.rows_formats=["csv"]"#,
                r#"output.formats=["parquet"]"#,
            ][..],
        ),
    ] {
        let o = sweep(out, sets);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
    }
    let (pq, csv) = (dir.path().join("pq"), dir.path().join("csv"));
    assert!(!pq.join("cells.csv").exists(), "cells.csv written");
    // The small tables keep output.formats; every table written is the one both formats give.
    for f in [
        "cells.parquet",
        "summary.parquet",
        "summary.csv",
        "pairs.csv",
    ] {
        assert_eq!(read("pq", f), read("both", f), "{f}");
    }
    let manifest = std::fs::read_to_string(pq.join("manifest.json")).unwrap();
    assert!(!manifest.contains("\"cells.csv\""), "{manifest}");
    assert!(csv.join("cells.csv").is_file() && !csv.join("cells.parquet").exists());
    assert!(csv.join("summary.parquet").is_file() && !csv.join("summary.csv").exists());
    assert_eq!(read("csv", "cells.csv"), read("both", "cells.csv"));
    // A bad list names its key and entry, and writes nothing.
    let o = sweep("bad", &[r#"output.rows_formats=["parquet","xlsx"]"#]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("key `output.rows_formats[1]`: unknown format \"xlsx\""),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("bad").exists());
}

/// Histories built so that nothing but the flagged records can be kept: ten short required
/// records, then one record larger than any budget's room. `required` keeps exactly the flagged
/// ones, so its mean retention is the share of required records whose flag survived: 1 − q.
fn only_flags_fit_histories() -> String {
    let mut lines = String::new();
    for h in 0..60 {
        for id in 1..=10 {
            lines += &format!("{{\"history\":\"h{h}\",\"id\":{id},\"text\":\"constraint {id:02}\",\"required\":true}}\n");
        }
        lines += &format!(
            "{{\"history\":\"h{h}\",\"id\":11,\"text\":\"{}\"}}\n",
            "x".repeat(5000)
        );
    }
    lines
}

#[test]
fn false_negative_rate_q_gives_required_retention_one_minus_q() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "flags.jsonl", &only_flags_fit_histories());
    write(
        dir.path(),
        "exp.toml",
        r#"
name = "q"
seed = 5
replicates = 20
[histories]
files = ["flags.jsonl"]
[sweep]
strategies = ["required"]
budgets = [50]
false_negative = [0.0, 0.2, 0.5]
[output]
dir = "out"
formats = ["parquet"]
"#,
    );
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_parquet(&dir.path().join("out/summary.parquet"));
    let q = s.column("false_negative").unwrap().f64().unwrap().clone();
    let mean = s
        .column("required_retention_feasible_mean")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let lo = s
        .column("required_retention_feasible_ci_low")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    let hi = s
        .column("required_retention_feasible_ci_high")
        .unwrap()
        .f64()
        .unwrap()
        .clone();
    assert_eq!(s.height(), 3);
    for i in 0..3 {
        let (q, mean) = (q.get(i).unwrap(), mean.get(i).unwrap());
        let (lo, hi) = (lo.get(i), hi.get(i));
        if q == 0.0 {
            assert_eq!(mean, 1.0);
        } else {
            let (lo, hi) = (lo.unwrap(), hi.unwrap());
            assert!(
                lo <= 1.0 - q && 1.0 - q <= hi,
                "q={q}: mean {mean}, interval [{lo}, {hi}]"
            );
            assert!((mean - (1.0 - q)).abs() < 0.03, "q={q}: mean {mean}");
        }
    }
}

#[test]
fn without_noise_the_sweep_reproduces_the_noise_free_table() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("data/article12.jsonl"),
        dir.path().join("a.jsonl"),
    )
    .unwrap();
    write(
        dir.path(),
        "exp.toml",
        r#"
name = "a"
seed = 1
[histories]
files = ["a.jsonl"]
[sweep]
strategies = ["recent", "required"]
budgets = [100, 70, 50, 25]
[output]
dir = "out"
formats = ["csv"]
"#,
    );
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cells = std::fs::read_to_string(dir.path().join("out/cells.csv")).unwrap();
    // budget, strategy, capacity, used, reduction, required_retention, exact, feasible — the
    // same figures `ctxlab table` prints for this history.
    let header: Vec<&str> = cells.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let wanted = [
        "budget_percent",
        "strategy",
        "capacity",
        "used",
        "reduction",
        "required_retention",
        "exact",
        "feasible",
    ]
    .map(at);
    // A CSV reader: the noise labels hold commas, so they are quoted.
    let rows: Vec<String> = csv::Reader::from_reader(cells.as_bytes())
        .records()
        .map(|r| {
            let f = r.unwrap();
            wanted.map(|i| f[i].to_string()).join(",")
        })
        .collect();
    let table = stdout(&ctxlab(
        &root(),
        &["table", "data/article12.jsonl", "--format", "csv"],
    ));
    let mut expected: Vec<String> = table.lines().skip(1).map(String::from).collect();
    // The table is budget-major, strategy-minor; the cells strategy-major, budget-minor.
    expected.sort_by_key(|l| l.split(',').nth(1).unwrap() == "required");
    assert_eq!(rows, expected);
}

#[test]
fn generated_histories_load_back_to_the_same_summary() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    let o = ctxlab(
        dir.path(),
        &["generate", "small.toml", "--out", "gen.jsonl"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("7 histories"));
    let a = ctxlab(dir.path(), &["sweep", "small.toml", "-q", "--out", "a"]);
    let b = ctxlab(
        dir.path(),
        &[
            "sweep",
            "small.toml",
            "-q",
            "--out",
            "b",
            "--set",
            "histories.generate=",
            "--set",
            "histories.files=[\"gen.jsonl\"]",
        ],
    );
    assert!(
        a.status.success() && !b.status.success(),
        "an empty override is a string, not a removal"
    );
    let mut text = SMALL.replace(
        "generate = { count = 7, records = [10, 40], required_share = 0.25, required_position = \"uniform\", seed = 3 }",
        "files = [\"gen.jsonl\"]",
    );
    text = text.replace("dir = \"out\"", "dir = \"b\"");
    write(dir.path(), "loaded.toml", &text);
    let b = ctxlab(dir.path(), &["sweep", "loaded.toml", "-q"]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(
        std::fs::read(dir.path().join("a/summary.csv")).unwrap(),
        std::fs::read(dir.path().join("b/summary.csv")).unwrap()
    );
}

#[test]
fn every_bad_config_fails_clearly_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "bad.jsonl",
        "{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":}\n",
    );
    let generate = "generate = { count = 7, records = [10, 40], required_share = 0.25, required_position = \"uniform\", seed = 3 }";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            SMALL.replace("seed = 11", "seed = 11\ncolour = \"red\""),
            vec!["exp.toml", "colour", "unknown field"],
        ),
        (
            SMALL.replace("budgets = [25, 50, 100]", "budgets = [-5, 50]"),
            vec!["sweep.budgets[0]", "-5", "from 0 to 100"],
        ),
        (
            SMALL.replace("false_negative = [0.0, 0.3]", "false_negative = [1.3]"),
            vec!["sweep.false_negative[0]", "1.3", "from 0 to 1"],
        ),
        (
            SMALL.replace("count = 7", "count = 0"),
            vec!["histories.generate.count", "zero histories"],
        ),
        (
            SMALL.replace("keep_recent = [0, 2]", "keep_recent = []"),
            vec!["sweep.keep_recent", "must not be empty"],
        ),
        (
            SMALL.replace(generate, "files = [\"missing/*.jsonl\"]"),
            vec!["histories.files", "matches no file"],
        ),
        (
            SMALL.replace(generate, "files = [\"bad.jsonl\"]"),
            vec!["bad.jsonl:2:", "expected"],
        ),
        (
            SMALL.replace("\"recent\",", "\"recent(fill=sometimes)\","),
            vec!["sweep.strategies[0]", "fill", "stop, skip"],
        ),
        (
            SMALL.replace("[output]", "[output]\nformats = [\"xlsx\"]"),
            vec!["output.formats[0]", "xlsx"],
        ),
    ];
    for (text, needles) in cases {
        write(dir.path(), "exp.toml", &text);
        let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
        assert_fails_with(&o, &needles);
        assert!(
            !dir.path().join("out").exists(),
            "output written for a bad config: {needles:?}"
        );
    }
    assert_fails_with(
        &ctxlab(dir.path(), &["sweep", "nope.toml"]),
        &["nope.toml", "cannot read"],
    );
    write(dir.path(), "exp.toml", SMALL);
    assert_fails_with(
        &ctxlab(
            dir.path(),
            &["sweep", "exp.toml", "--set", "sweep.budgets=[50,101]"],
        ),
        &["sweep.budgets[1]", "101"],
    );
    assert!(!dir.path().join("out").exists());
}
