//! `ctxlab sweep` on a `[session]` experiment: tables, determinism, hand-worked sessions,
//! common random numbers, bad configs.

use crate::common::*;
use polars::prelude::{AnyValue, DataFrame, ParquetReader, SerReader};
use std::path::Path;

const SMALL: &str = r#"
name = "small"
seed = 13
replicates = 2
[histories]
generate = { count = 5, records = [30, 80], required_share = 0.2, required_position = "early", seed = 6 }
[session]
strategies = ["recent", "required", { name = "summary", keep_recent = 4 }]
windows = [1500, 3000]
ratios = [0.6, 0.9]
note_rates = [0.0, 0.2]
false_negative = [0.0, 0.3]
false_positive = [0.0]
max_consecutive = 4
[output]
dir = "out"
"#;

/// Sessions of SMALL: 5 histories × 2 replicates × 2 noise levels × 3 strategies × 2 windows
/// × 2 ratios × 2 note rates.
const SMALL_SESSIONS: usize = 5 * 2 * 2 * 3 * 2 * 2 * 2;
/// Groups of SMALL: 3 strategies × 2 windows × 2 ratios × 2 note rates × 2 noise levels.
const SMALL_GROUPS: usize = 3 * 2 * 2 * 2 * 2;

fn read_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// A Parquet value as the CSV writer spells it (fractions read back exactly, so compare
/// floats as numbers).
fn same_value(v: &AnyValue, field: &str) -> bool {
    match v {
        AnyValue::Null => field.is_empty(),
        AnyValue::String(s) => *s == field,
        AnyValue::UInt64(x) => field.parse::<u64>().ok() == Some(*x),
        AnyValue::Float64(x) => field.parse::<f64>().ok() == Some(*x),
        AnyValue::Boolean(b) => field == if *b { "true" } else { "false" },
        other => panic!("unexpected value type {other:?}"),
    }
}

fn assert_csv_equals_parquet(csv_path: &Path, df: &DataFrame) {
    let mut reader = csv::Reader::from_path(csv_path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(header, names);
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), df.height());
    for (c, column) in df.columns().iter().enumerate() {
        for (i, rec) in records.iter().enumerate() {
            let v = column.get(i).unwrap();
            assert!(
                same_value(&v, &rec[c]),
                "{}: row {i} column {}: Parquet {v:?}, CSV {:?}",
                csv_path.display(),
                names[c],
                &rec[c]
            );
        }
    }
}

#[test]
fn small_session_sweep_writes_every_table_with_the_grid_size() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    let printed = run_ok(dir.path(), &["sweep", "small.toml", "--quiet"]);
    assert!(
        printed.starts_with(&format!(
            "small: {SMALL_SESSIONS} sessions over 5 histories"
        )),
        "{printed}"
    );
    let out = dir.path().join("out");
    for f in [
        "sessions.parquet",
        "sessions.csv",
        "summary.parquet",
        "summary.csv",
        "manifest.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(
        !out.join(".partial-sessions").exists(),
        "staging left behind"
    );
    assert!(!out.join("cells.parquet").exists());

    let sessions = read_parquet(&out.join("sessions.parquet"));
    assert_eq!(sessions.height(), SMALL_SESSIONS);
    let names: Vec<String> = sessions
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(names, ctxlab::tables::sessions::table().column_names());
    for needed in [
        "history",
        "replicate",
        "false_negative",
        "strategy",
        "window",
        "ratio",
        "note_rate",
        "calls",
        "compactions",
        "storms",
        "failed_compactions",
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_tokens",
        "cost",
        "retention_end",
        "retention_any_end",
        "retention_at_need",
    ] {
        assert!(names.iter().any(|n| n == needed), "no column {needed}");
    }
    assert_csv_equals_parquet(&out.join("sessions.csv"), &sessions);

    // Rows in grid order: the first rows are history 0, replicate 0, no noise (realised rates
    // 0 too), `recent`, window 1500, ratio 0.6, note rates 0 then 0.2.
    let mut reader = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let second = reader.records().nth(1).unwrap().unwrap();
    let second: Vec<&str> = second.iter().collect();
    assert_eq!(
        &second[..12],
        &[
            "synthetic-00000",
            "0",
            "uniform(fn=0, fp=0)",
            "0.000000",
            "0.000000",
            "0.000000",
            "0.000000",
            "recent",
            "1500",
            "0.600000",
            "900",
            "0.200000"
        ]
    );
    // Billed input is what was read from cache, plus what was written to it, plus what was
    // neither (plain input).
    let col = |name: &str| sessions.column(name).unwrap().u64().unwrap().clone();
    let (input, read, written, uncached) = (
        col("input_tokens"),
        col("cache_read_tokens"),
        col("cache_write_tokens"),
        col("uncached_input_tokens"),
    );
    for i in 0..sessions.height() {
        assert_eq!(
            input.get(i),
            Some(read.get(i).unwrap() + written.get(i).unwrap() + uncached.get(i).unwrap())
        );
    }

    let summary = read_parquet(&out.join("summary.parquet"));
    assert_eq!(summary.height(), SMALL_GROUPS);
    let names: Vec<String> = summary
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let sessions = ctxlab::tables::sessions::table();
    assert_eq!(
        names,
        ctxlab::tables::sessions::summary_table(&sessions).column_names()
    );
    for needed in [
        "compactions_mean",
        "compactions_sd",
        "billed_tokens_ci_low",
        "retention_at_need_ci_high",
    ] {
        assert!(names.iter().any(|n| n == needed), "no column {needed}");
    }
    let n = summary.column("n").unwrap().u64().unwrap();
    assert!((0..n.len()).all(|i| n.get(i) == Some(5 * 2)));
    assert_csv_equals_parquet(&out.join("summary.csv"), &summary);

    // The summary's mean is the mean of the sessions' values (first group: recent, 1500,
    // 0.6, no notes, no noise).
    let mut reader = csv::Reader::from_path(out.join("sessions.csv")).unwrap();
    let compactions = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "compactions")
        .unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let first_group: Vec<f64> = rows
        .iter()
        .filter(|r| {
            (&r[3], &r[7], &r[8], &r[9], &r[11])
                == ("0.000000", "recent", "1500", "0.600000", "0.000000")
        })
        .map(|r| r[compactions].parse::<f64>().unwrap())
        .collect();
    assert_eq!(first_group.len(), 10);
    let mean = first_group.iter().sum::<f64>() / 10.0;
    let summary_mean = summary
        .column("compactions_mean")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!(
        (summary_mean - mean).abs() < 1e-12,
        "{summary_mean} vs {mean}"
    );

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["kind"], "sessions");
    assert_eq!(manifest["rows"], SMALL_SESSIONS);
    assert_eq!(manifest["seed"], 13);
    assert_eq!(manifest["grid"]["windows"], serde_json::json!([1500, 3000]));
    assert_eq!(
        manifest["config"]["session"]["strategies"][2],
        "summary(keep_recent=4)"
    );
    assert_eq!(manifest["config"]["histories"]["cost"], "approx-tokens");
    assert_eq!(manifest["config"]["session"]["target"], 0.3);
    assert!(manifest["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn session_sweeps_draw_their_three_charts_and_plot_redraws_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    let printed = run_ok(dir.path(), &["sweep", "small.toml", "-q"]);
    let charts = dir.path().join("out/charts");
    let mut drawn = Vec::new();
    for stem in ctxlab::report::session_charts::STEMS {
        let png = std::fs::read(charts.join(format!("{stem}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{stem}.png is a PNG");
        let svg = std::fs::read_to_string(charts.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{stem}.svg");
        // The legend names every strategy once; panels name window, notes and noise.
        for label in [
            "\nrecent\n",
            "\nsummary(keep_recent=4)\n",
            "window 3000 · notes 20 % · FN 30 % · FP 0 %",
        ] {
            assert!(svg.contains(label), "{stem}.svg lacks {label:?}");
        }
        assert!(printed.contains(&format!("charts/{stem}.png")), "{printed}");
        drawn.push((png, svg));
    }
    let svg = &drawn[0].1;
    assert!(svg.contains("Retention at need against billed tokens"));
    assert!(drawn[1]
        .1
        .contains("Retention at need against cost in dollars"));
    assert!(drawn[2]
        .1
        .contains("Compactions per session against the trigger ratio"));

    // `ctxlab plot` recognises a session sweep's folder and redraws the same bytes.
    std::fs::remove_dir_all(&charts).unwrap();
    let listed = run_ok(dir.path(), &["plot", "out"]);
    // The three session charts, and the compactions' two charts and their table:
    // 3 × 2 + 2 × 2 + 1.
    assert_eq!(listed.lines().count(), 11, "{listed}");
    for (stem, (png, svg)) in ctxlab::report::session_charts::STEMS.iter().zip(&drawn) {
        assert_eq!(
            &std::fs::read(charts.join(format!("{stem}.png"))).unwrap(),
            png
        );
        assert_eq!(
            &std::fs::read_to_string(charts.join(format!("{stem}.svg"))).unwrap(),
            svg
        );
    }
    // A damaged summary is named, and no chart is written.
    std::fs::remove_dir_all(&charts).unwrap();
    std::fs::write(dir.path().join("out/summary.parquet"), b"not parquet").unwrap();
    assert_fails_with(
        &ctxlab(dir.path(), &["plot", "out"]),
        &["summary.parquet", "not a readable Parquet table"],
    );
    assert!(!charts.exists());
}

#[test]
fn session_tables_are_byte_identical_at_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    for (threads, out) in [("1", "one"), ("2", "two")] {
        run_ok(
            dir.path(),
            &[
                "sweep",
                "small.toml",
                "-q",
                "--threads",
                threads,
                "--out",
                out,
            ],
        );
    }
    for f in [
        "sessions.parquet",
        "sessions.csv",
        "summary.parquet",
        "summary.csv",
        "charts/session_tokens_retention.png",
        "charts/session_compactions.svg",
    ] {
        assert_eq!(
            std::fs::read(dir.path().join("one").join(f)).unwrap(),
            std::fs::read(dir.path().join("two").join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A system prompt (10 chars, required), then six turns of one assistant record and one tool
/// result, 10 chars each. Under `chars` (separator 1) the context before call k, with no
/// compaction, costs 10 + 22 (k − 1); each call outputs 10.
pub(crate) fn six_turns() -> String {
    let mut lines = String::from(
        "{\"history\":\"turns\",\"id\":1,\"kind\":\"system\",\"text\":\"SSSSSSSSSS\",\"required\":true}\n",
    );
    for k in 0..6 {
        lines += &format!(
            "{{\"history\":\"turns\",\"id\":{},\"kind\":\"assistant\",\"text\":\"aaaaaaaaaa\"}}\n",
            2 + 2 * k
        );
        lines += &format!(
            "{{\"history\":\"turns\",\"id\":{},\"kind\":\"tool_result\",\"tool\":\"bash\",\"text\":\"tttttttttt\"}}\n",
            3 + 2 * k
        );
    }
    lines
}

#[test]
fn hand_worked_sessions_compact_exactly_when_expected() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "turns.jsonl", &six_turns());
    write(
        dir.path(),
        "exp.toml",
        r#"
name = "hand"
seed = 1
[histories]
files = ["turns.jsonl"]
cost = "chars"
[session]
strategies = ["recent", "required"]
windows = [1000]
ratios = [0.02, 0.1, 1.0]
trigger = "usage"
target = 0.05
# Anthropic's cache without its 1024-token minimum: these contexts are far below it, and the
# figures are about what a compaction leaves of the cached prefix.
cache_min_tokens = 0
[output]
dir = "out"
formats = ["csv"]
"#,
    );
    run_ok(dir.path(), &["sweep", "exp.toml", "-q"]);
    let mut reader = csv::Reader::from_path(dir.path().join("out/sessions.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 3);
    // Capacity floor(1000 × 0.05) = 50: `recent` keeps the newest four records (43), `required`
    // the prompt and the newest three (43), so usage runs the same for both.
    //
    // Trigger 1000: usage after each call 20, 62, 126, 212, 320, 450 — never compacts; input
    // 10 + 32 + 54 + 76 + 98 + 120 = 390, each call reading the previous one's input from
    // cache (0 + 10 + 32 + 54 + 76 + 98 = 270).
    // Trigger 100 (the lesson's usage trigger): usage 20, 62, 126 → compaction (context 76 → 43,
    // reset), then 53, 128 → compaction (87 → 43), then 53: two compactions, neither a model
    // call (6 model calls); input 10 + 32 + 54 + 43 + 65 + 43 = 247. Cache reads: `recent` drops
    // the prompt at each compaction, so calls 4 and 6 read nothing: 10 + 32 + 43 = 85;
    // `required` keeps the prompt (10) first: 10 + 32 + 10 + 43 + 10 = 105. `recent` drops the
    // prompt at the first one, so it was there for calls 1–3 of 6: retention at need 1/2.
    // Trigger 20: every check fires (the first compaction keeps all 32 ≤ 50, the later ones
    // leave 43 ≥ 20): five compactions, all fruitless, the four after the first storms; the
    // prompt survives the first compaction only: there for calls 1–2, retention at need 1/3.
    let expected = [
        // strategy, ratio, trigger, compactions, storms, model_calls, input, cache_read, output,
        // retention_end, retention_at_need
        // Trigger 20: input 10 + 32 + 43 × 4 = 214; call 2 reads call 1's 10 (nothing changed);
        // after that `recent` has rewritten the start, `required` keeps the prompt (10) for
        // calls 3–6: 10 + 4 × 10 = 50.
        (
            "recent",
            "0.020000",
            "20",
            "5",
            "4",
            "6",
            "214",
            "10",
            "60",
            "0.000000",
            1.0 / 3.0,
        ),
        (
            "recent", "0.100000", "100", "2", "0", "6", "247", "85", "60", "0.000000", 0.5,
        ),
        (
            "recent", "1.000000", "1000", "0", "0", "6", "390", "270", "60", "1.000000", 1.0,
        ),
        (
            "required", "0.020000", "20", "5", "4", "6", "214", "50", "60", "1.000000", 1.0,
        ),
        (
            "required", "0.100000", "100", "2", "0", "6", "247", "105", "60", "1.000000", 1.0,
        ),
        (
            "required", "1.000000", "1000", "0", "0", "6", "390", "270", "60", "1.000000", 1.0,
        ),
    ];
    for (row, e) in rows.iter().zip(expected) {
        let got = (
            &row[at("strategy")],
            &row[at("ratio")],
            &row[at("trigger")],
            &row[at("compactions")],
            &row[at("storms")],
            &row[at("model_calls")],
            &row[at("input_tokens")],
            &row[at("cache_read_tokens")],
            &row[at("output_tokens")],
            &row[at("retention_end")],
        );
        assert_eq!(got, (e.0, e.1, e.2, e.3, e.4, e.5, e.6, e.7, e.8, e.9));
        assert_eq!(&row[at("calls")], "6");
        assert_eq!(&row[at("failed_compactions")], "0");
        let need: f64 = row[at("retention_at_need")].parse().unwrap();
        assert!((need - e.10).abs() < 1e-15, "{need} vs {}", e.10);
        let billed: u64 = row[at("billed_tokens")].parse().unwrap();
        assert_eq!(billed, e.6.parse::<u64>().unwrap() + 60);
    }
}

#[test]
fn strategies_meet_the_same_noise_and_notes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    run_ok(
        dir.path(),
        &[
            "sweep",
            "small.toml",
            "-q",
            "--set",
            "output.formats=[\"csv\"]",
        ],
    );
    let mut reader = csv::Reader::from_path(dir.path().join("out/sessions.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let key = |r: &csv::StringRecord, cols: &[&str]| -> Vec<String> {
        cols.iter().map(|c| r[at(c)].to_string()).collect()
    };
    // `recent` never looks at flags, and without notes nothing else does: its sessions are the
    // same at every noise level.
    let measures = [
        "compactions",
        "input_tokens",
        "cache_read_tokens",
        "cost",
        "retention_at_need",
    ];
    let recent_no_notes = |fneg: &str| -> Vec<Vec<String>> {
        rows.iter()
            .filter(|r| &r[at("strategy")] == "recent" && &r[at("note_rate")] == "0.000000")
            .filter(|r| &r[at("false_negative")] == fneg)
            .map(|r| key(r, &measures))
            .collect()
    };
    assert_eq!(recent_no_notes("0.000000"), recent_no_notes("0.300000"));
    assert_eq!(recent_no_notes("0.000000").len(), 5 * 2 * 2 * 2);
    // Notes are drawn once per record and replicate: every session notes no record at rate 0
    // and, at rate 0.2, exactly the records its twins at other windows, ratios and strategies
    // note (the same flags: same noise level).
    let mut noted: std::collections::HashMap<Vec<String>, String> = Default::default();
    for r in &rows {
        let n = &r[at("noted")];
        // A session that ran out of context saw (and noted) only the records before its end.
        if &r[at("exit_context")] == "true" {
            continue;
        }
        if &r[at("note_rate")] == "0.000000" {
            assert_eq!(n, "0");
            continue;
        }
        let k = key(r, &["history", "replicate", "false_negative"]);
        let first = noted.entry(k).or_insert_with(|| n.to_string());
        assert_eq!(first, n, "notes differ between twins of {:?}", &r);
    }
    assert!(noted.values().any(|n| n != "0"));
}

#[test]
fn session_experiments_generate_their_histories_and_write_the_summary_alone() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "small.toml", SMALL);
    let o = run_ok(
        dir.path(),
        &["generate", "small.toml", "--out", "gen.jsonl"],
    );
    assert!(o.starts_with("5 histories"), "{o}");
    // --cells none: the summary alone.
    run_ok(
        dir.path(),
        &["sweep", "small.toml", "-q", "--cells", "none"],
    );
    assert!(!dir.path().join("out/sessions.csv").exists());
    assert!(dir.path().join("out/summary.csv").is_file());
}

/// The rows of a hive-partitioned dataset `dir/shard=i/part.parquet`, shards in order.
fn read_shards(dir: &Path, count: usize) -> DataFrame {
    let mut all: Option<DataFrame> = None;
    for i in 0..count {
        let df = read_parquet(&dir.join(format!("shard={i}/part.parquet")));
        match all.as_mut() {
            None => all = Some(df),
            Some(a) => {
                a.vstack_mut(&df).unwrap();
            }
        }
    }
    all.unwrap()
}

#[test]
fn session_shards_merged_equal_the_single_run_and_a_killed_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "small.toml", SMALL);
    run_ok(d, &["sweep", "small.toml", "-q", "--out", "single"]);
    for shard in ["0/2", "1/2"] {
        run_ok(
            d,
            &[
                "sweep",
                "small.toml",
                "-q",
                "--shard",
                shard,
                "--out",
                "sharded",
            ],
        );
    }
    assert!(!d.join("sharded/manifest.json").exists());
    let out = run_ok(d, &["merge", "sharded"]);
    assert!(
        out.starts_with(&format!("merged 2 shards: {SMALL_SESSIONS} sessions")),
        "{out}"
    );
    let single = read_parquet(&d.join("single/sessions.parquet"));
    let merged = read_shards(&d.join("sharded/sessions"), 2);
    assert!(single.equals_missing(&merged), "shards hold other rows");
    for f in ["summary.csv", "summary.parquet"] {
        assert_eq!(
            std::fs::read(d.join("single").join(f)).unwrap(),
            std::fs::read(d.join("sharded").join(f)).unwrap(),
            "{f} differs"
        );
    }

    // Killed after two chunks of one history each, then resumed: the very same bytes.
    let killed = ctxlab_env(
        d,
        &[
            "sweep",
            "small.toml",
            "-q",
            "--chunk-cells",
            "1",
            "--out",
            "resumed",
        ],
        ("CTXLAB_FAULT", "chunks:2"),
    );
    assert!(!killed.status.success());
    assert!(!d.join("resumed/manifest.json").exists());
    let o = run_ok(
        d,
        &[
            "sweep",
            "small.toml",
            "-q",
            "--chunk-cells",
            "1",
            "--out",
            "resumed",
            "--resume",
        ],
    );
    assert!(o.contains("resumed after 2 finished chunks"), "{o}");
    for f in [
        "sessions.csv",
        "sessions.parquet",
        "summary.csv",
        "summary.parquet",
    ] {
        assert_eq!(
            std::fs::read(d.join("single").join(f)).unwrap(),
            std::fs::read(d.join("resumed").join(f)).unwrap(),
            "{f} differs after resuming"
        );
    }
}

#[test]
fn every_bad_session_config_names_its_key_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            SMALL.replace("max_consecutive = 4", "max_consecutive = 4\nwindow = 2000"),
            vec![
                "exp.toml",
                "key `session.window`",
                "unknown field `window`",
                "windows",
            ],
        ),
        (
            SMALL.replace("ratios = [0.6, 0.9]", "ratios = [0.6, 1.5]"),
            vec!["key `session.ratios[1]`", "1.5 is out of range", "(0, 1]"],
        ),
        (
            SMALL.replace("windows = [1500, 3000]", "windows = [0, 3000]"),
            vec!["key `session.windows[0]`", "must be at least 1"],
        ),
        (
            SMALL.replace("note_rates = [0.0, 0.2]", "note_rates = []"),
            vec!["key `session.note_rates`", "must not be empty"],
        ),
        (
            SMALL.replace("windows = [1500, 3000]", "windows = []"),
            vec!["key `session.windows`", "must not be empty"],
        ),
        (
            SMALL.replace("\"required\",", "\"required(fill=sometimes)\","),
            vec!["key `session.strategies[1]`", "fill", "stop, skip"],
        ),
        (
            SMALL.replace("\"recent\",", "\"newest\","),
            vec!["key `session.strategies[0]`", "unknown strategy `newest`"],
        ),
        (
            SMALL.replace("max_consecutive = 4", "max_consecutive = 0"),
            vec!["key `session.max_consecutive`", "at least 1"],
        ),
        (
            SMALL.replace("max_consecutive = 4", "prices = { input = -3 }"),
            vec!["key `session.prices.input`", "expected a number ≥ 0"],
        ),
        (
            SMALL.replace(
                "max_consecutive = 4",
                "layers = { shares = [10, 10, 10, 10] }",
            ),
            vec!["key `session.layers.shares`", "add up to 40"],
        ),
        (
            SMALL.replace("[session]", "[sweep]\nbudgets = [50]\n[session]"),
            vec!["key `session`", "not both"],
        ),
        (
            SMALL.replace("false_negative = [0.0, 0.3]", "false_negative = [0.0, 1.3]"),
            vec!["key `session.false_negative[1]`", "from 0 to 1"],
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
    write(dir.path(), "exp.toml", SMALL);
    assert_fails_with(
        &ctxlab(
            dir.path(),
            &["sweep", "exp.toml", "--set", "session.ratios=[0]"],
        ),
        &["key `session.ratios[0]`", "0 is out of range"],
    );
    assert!(!dir.path().join("out").exists());
}
