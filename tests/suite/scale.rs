//! Shards, merge, resume and the cells option, through the binary.

use crate::common::*;
use polars::prelude::{DataFrame, ParquetReader, SerReader};
use std::path::Path;
use std::process::Command;

const EXP: &str = r#"
name = "scale"
seed = 3
replicates = 2
[histories]
generate = { count = 23, records = [10, 60], required_share = 0.2, seed = 9 }
[sweep]
strategies = ["recent", "required", "mask", "summary"]
budgets = [20, 50, 80]
false_negative = [0.0, 0.2]
[output]
dir = "full"
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("exp.toml"), EXP).unwrap();
    dir
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(
        std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .finish()
    .unwrap()
}

#[test]
fn merged_shards_equal_the_single_machine_run() {
    let dir = setup();
    let d = dir.path();
    run_ok(d, &["sweep", "exp.toml", "-q"]);
    for i in 0..4 {
        let shard = format!("{i}/4");
        run_ok(
            d,
            &[
                "sweep", "exp.toml", "-q", "--shard", &shard, "--out", "sharded",
            ],
        );
    }
    assert!(
        !d.join("sharded/summary.csv").exists(),
        "a shard must not write the summary"
    );
    let out = run_ok(d, &["merge", "sharded"]);
    assert!(out.starts_with("merged 4 shards: 1104 cells"), "{out}");
    // 23 histories × 2 replicates × 2 noise levels × 4 strategies × 3 budgets = 1104 cells.
    let full = read(&d.join("full/cells.parquet"));
    assert_eq!(full.height(), 1104);
    let mut parts: Option<DataFrame> = None;
    for i in 0..4 {
        let part = read(&d.join(format!("sharded/cells/shard={i}/part.parquet")));
        parts = Some(match parts {
            None => part,
            Some(mut all) => {
                all.vstack_mut(&part).unwrap();
                all
            }
        });
    }
    assert!(
        parts.unwrap().equals_missing(&full),
        "shards' rows differ from the single run's"
    );
    // Each shard's CSV has its own header (a dataset of CSV files); the rows join up.
    let full_csv = std::fs::read_to_string(d.join("full/cells.csv")).unwrap();
    let (header, rows) = full_csv.split_once('\n').unwrap();
    let mut csv_rows = String::new();
    for i in 0..4 {
        let part = std::fs::read_to_string(d.join(format!("sharded/cells-csv/shard={i}/part.csv")))
            .unwrap();
        let (h, r) = part.split_once('\n').unwrap();
        assert_eq!(h, header);
        csv_rows += r;
    }
    assert_eq!(csv_rows, rows);
    // Exact sums: the merged summary is the single run's, byte for byte.
    for f in [
        "summary.csv",
        "summary.parquet",
        "pairs.csv",
        "pairs.parquet",
    ] {
        assert_eq!(
            std::fs::read(d.join("full").join(f)).unwrap(),
            std::fs::read(d.join("sharded").join(f)).unwrap(),
            "{f}"
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("sharded/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["shards"], 4);
    assert_eq!(manifest["rows"], 1104);
}

#[test]
fn merge_refuses_missing_and_mismatched_shards() {
    let dir = setup();
    let d = dir.path();
    run_ok(
        d,
        &["sweep", "exp.toml", "-q", "--shard", "0/3", "--out", "s"],
    );
    run_ok(
        d,
        &["sweep", "exp.toml", "-q", "--shard", "2/3", "--out", "s"],
    );
    assert_fails_with(
        &ctxlab(d, &["merge", "s"]),
        &["shards 1/3 are missing", "found 2 of 3"],
    );
    run_ok(
        d,
        &[
            "sweep", "exp.toml", "-q", "--shard", "1/3", "--out", "s", "--set", "seed=4",
        ],
    );
    assert_fails_with(
        &ctxlab(d, &["merge", "s"]),
        &["shard=1.json", "another experiment", "config hash"],
    );
    assert!(!d.join("s/summary.csv").exists() && !d.join("s/manifest.json").exists());
    assert_fails_with(
        &ctxlab(d, &["merge", "nowhere"]),
        &["nowhere/shards", "no shard states"],
    );
    assert_fails_with(
        &ctxlab(d, &["sweep", "exp.toml", "--shard", "3/3"]),
        &["0 ≤ i < n"],
    );
}

#[test]
fn shard_index_comes_from_slurm_or_kubernetes() {
    let dir = setup();
    let d = dir.path();
    let run_env = |vars: &[(&str, &str)], extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ctxlab"));
        c.current_dir(d)
            .args(["sweep", "exp.toml", "-q", "--out", "env"])
            .args(extra);
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let o = run_env(
        &[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("shard 1/2"));
    assert!(d.join("env/cells/shard=1/part.parquet").is_file());
    let o = run_env(&[("JOB_COMPLETION_INDEX", "0")], &["--shard-count", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("env/cells/shard=0/part.parquet").is_file());
    run_ok(d, &["merge", "env"]);
    assert_fails_with(
        &run_env(&[("JOB_COMPLETION_INDEX", "0")], &[]),
        &["--shard-count"],
    );
}

#[test]
fn a_killed_sweep_resumes_to_identical_tables() {
    let dir = setup();
    let d = dir.path();
    // Chunks of ~50 cells: 23 histories of 48 cells each make 23 chunks.
    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--chunk-cells",
            "50",
            "--out",
            "straight",
        ],
    );
    let killed = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .current_dir(d)
        .args([
            "sweep",
            "exp.toml",
            "-q",
            "--chunk-cells",
            "50",
            "--out",
            "resumed",
        ])
        .env("CTXLAB_FAULT", "chunks:7")
        .output()
        .unwrap();
    assert!(
        !killed.status.success(),
        "the hook should have killed the run"
    );
    assert!(d.join("resumed/.partial/checkpoint.json").is_file());
    for f in ["cells.parquet", "cells.csv", "summary.csv", "manifest.json"] {
        assert!(
            !d.join("resumed").join(f).exists(),
            "{f} looks complete after a kill"
        );
    }
    // Without --resume the unfinished run is left alone.
    assert_fails_with(
        &ctxlab(
            d,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--chunk-cells",
                "50",
                "--out",
                "resumed",
            ],
        ),
        &["unfinished run", "7 of 23 chunks", "--resume"],
    );
    // A different experiment cannot take it over.
    assert_fails_with(
        &ctxlab(
            d,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--chunk-cells",
                "50",
                "--out",
                "resumed",
                "--resume",
                "--set",
                "seed=5",
            ],
        ),
        &["cannot resume", "another experiment (config hash)"],
    );
    let out = run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--chunk-cells",
            "50",
            "--out",
            "resumed",
            "--resume",
            "--threads",
            "1",
        ],
    );
    assert!(out.contains("resumed after 7 finished chunks"), "{out}");
    for f in [
        "cells.parquet",
        "cells.csv",
        "summary.parquet",
        "summary.csv",
    ] {
        assert_eq!(
            std::fs::read(d.join("straight").join(f)).unwrap(),
            std::fs::read(d.join("resumed").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!d.join("resumed/.partial").exists());
}

#[test]
fn cells_option_skips_or_samples_the_cells_table_but_not_the_summary() {
    let dir = setup();
    let d = dir.path();
    run_ok(d, &["sweep", "exp.toml", "-q"]);
    run_ok(
        d,
        &[
            "sweep", "exp.toml", "-q", "--cells", "none", "--out", "none",
        ],
    );
    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--cells",
            "sample",
            "--out",
            "sample",
            "--chunk-cells",
            "100",
        ],
    );
    assert!(!d.join("none/cells.parquet").exists() && !d.join("none/cells.csv").exists());
    for out in ["none", "sample"] {
        assert_eq!(
            std::fs::read(d.join("full/summary.csv")).unwrap(),
            std::fs::read(d.join(out).join("summary.csv")).unwrap()
        );
    }
    // Every 100th history: only history 0 of 23, its 48 cells.
    let sample = read(&d.join("sample/cells.parquet"));
    assert_eq!(sample.height(), 48);
    let names = sample.column("history").unwrap().str().unwrap().clone();
    assert!((0..48).all(|i| names.get(i) == Some("synthetic-00000")));
}
