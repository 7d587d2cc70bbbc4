//! The up-front estimate of a sweep: its figures worked by hand, `--dry-run` writing nothing,
//! the refusals of a sweep over the memory or disk limit, the estimate's bytes against the
//! files a run writes, the plain progress line of a batch run, and a history bigger than a
//! chunk split over chunks with the same tables.

use crate::common::*;
use ctxlab::sweep::run::{self, Progress, RunOptions};
use std::path::Path;

/// 6 histories × 10 replicates × 2 noise levels × 2 strategies × 3 budgets = 720 cells,
/// 12 per replicate and 120 per history.
const EXP: &str = r#"
name = "est"
seed = 5
replicates = 10
[histories]
generate = { count = 6, records = [10, 40], required_share = 0.2, seed = 2 }
[sweep]
strategies = ["recent", "required"]
budgets = [20, 50, 80]
false_negative = [0.0, 0.2]
[output]
dir = "out"
"#;

/// 3 histories × 6 replicates × 1 noise level × 2 strategies × 2 windows × 1 ratio × 2 note
/// rates = 144 sessions, 8 per replicate and 48 per history.
const SESSIONS: &str = r#"
name = "ses"
seed = 13
replicates = 6
[histories]
generate = { count = 3, records = [30, 60], required_share = 0.2, seed = 6 }
[session]
strategies = ["recent", "required"]
windows = [1500, 3000]
ratios = [0.8]
note_rates = [0.0, 0.2]
[output]
dir = "ses"
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("exp.toml"), EXP).unwrap();
    std::fs::write(dir.path().join("ses.toml"), SESSIONS).unwrap();
    dir
}

/// Every entry of `dir` (names only), sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_estimate_counts_cells_chunks_and_rows_as_worked_by_hand() {
    let dir = setup();
    let d = dir.path();
    // 120 cells per history, 360 a chunk: 3 histories a chunk, 2 chunks.
    let o = ctxlab(
        d,
        &["sweep", "exp.toml", "--dry-run", "--chunk-cells", "360"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "estimate: 720 cells (6 histories × 120 cells), 2 chunks of at most 360 cells"
        ),
        "{err}"
    );
    assert!(
        err.contains("cells table: 720 rows; on disk Parquet ≈ "),
        "{err}"
    );
    assert!(err.contains(", CSV ≈ ") && err.contains("estimated, within about a factor of 2"));
    assert!(err.contains("peak memory ≈ "), "{err}");
    assert!(!err.contains("(the small tables)"), "{err}");
    // The rows table in Parquet alone: the CSV figure is the small tables', and says so.
    let o = ctxlab(
        d,
        &[
            "sweep",
            "exp.toml",
            "--dry-run",
            "--set",
            r#"output.rows_formats=["parquet"]"#,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("cells table: 720 rows; on disk Parquet ≈ "),
        "{err}"
    );
    assert!(err.contains(" (the small tables) (estimated"), "{err}");
    // --cells sample keeps history 0 only: 120 rows. A chunk smaller than a history splits
    // it by replicates: 50 / 12 = 4 replicates (48 cells) a chunk, 3 chunks a history
    // (replicates 0..4, 4..8, 8..10), 18 chunks.
    let o = ctxlab(
        d,
        &[
            "sweep",
            "exp.toml",
            "--dry-run",
            "--chunk-cells",
            "50",
            "--cells",
            "sample",
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("720 cells (6 histories × 120 cells), 18 chunks of at most 48 cells"),
        "{err}"
    );
    assert!(err.contains("cells table: 120 rows"), "{err}");
    // Sessions: 48 per history, the default chunk holds all 3 histories: 1 chunk.
    let o = ctxlab(d, &["sweep", "ses.toml", "--dry-run"]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "estimate: 144 sessions (3 histories × 48 sessions), 1 chunks of at most 144 sessions"
        ),
        "{err}"
    );
    assert!(err.contains("sessions table: 144 rows"), "{err}");
}

#[test]
fn a_dry_run_writes_nothing_and_creates_no_folder() {
    let dir = setup();
    let d = dir.path();
    let before = entries(d);
    for (exp, out) in [("exp.toml", "out"), ("ses.toml", "deep/er/ses")] {
        let o = ctxlab(d, &["sweep", exp, "--dry-run", "-q", "--out", out]);
        assert!(o.status.success(), "{}", stderr(&o));
        // Quiet or not, a dry run prints its estimate; stdout stays empty.
        assert!(stderr(&o).contains("estimate: "), "{}", stderr(&o));
        assert!(stderr(&o).contains("dry run: nothing was written"));
        assert_eq!(stdout(&o), "");
    }
    assert_eq!(entries(d), before);
}

#[test]
fn memory_over_the_limit_is_refused_naming_the_figure_and_the_override() {
    let dir = setup();
    let d = dir.path();
    // The program alone is estimated at 40 MiB: a 1 MiB limit refuses any sweep, and a
    // smaller chunk would not help, so the advice does not name one.
    let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--max-memory", "1M"]);
    assert_fails_with(
        &o,
        &[
            "of memory at its peak, more than the --max-memory limit, 1.0 MiB",
            "lowering --chunk-cells cannot bring it under: the program itself takes 40.0 MiB on its own",
            "--max-memory off",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(!d.join("out").exists());
    // The same sweep with the check off runs.
    let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--max-memory", "off"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--max-memory", "lots"]);
    assert_fails_with(&o, &["--max-memory", "expected a size such as 512M"]);
}

#[test]
fn disk_over_the_limit_is_refused_naming_the_figure_and_the_override() {
    let dir = setup();
    let d = dir.path();
    let o = ctxlab(d, &["sweep", "ses.toml", "-q", "--max-disk", "1K"]);
    assert_fails_with(
        &o,
        &[
            "on disk (Parquet ",
            " + CSV ",
            "more than the --max-disk limit, 1.0 KiB",
            "--cells sample or none",
            "--max-disk off",
        ],
    );
    assert!(!d.join("ses").exists());
    // Without a rows table the tables are small: a 1 MiB limit lets it run.
    let o = ctxlab(
        d,
        &[
            "sweep",
            "ses.toml",
            "-q",
            "--max-disk",
            "1M",
            "--cells",
            "none",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Sum of the sizes of the files of `dir` ending in `ext`.
fn bytes_of(dir: &Path, ext: &str) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn the_estimated_bytes_are_within_a_factor_of_two_of_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // experiments/noise.toml at one replicate: 300 × 480 = 144 000 cells; the sessions
    // example at its own size.
    for (file, sets) in [
        ("experiments/noise.toml", vec!["replicates=1".to_string()]),
        (
            "experiments/sessions.toml",
            vec!["histories.generate.count=40".to_string()],
        ),
    ] {
        let mut exp = ctxlab::experiment::load_any(&root().join(file), &sets).unwrap();
        let out = d.join(file.replace('/', "_"));
        exp.set_output_dir(&out);
        let opts = RunOptions {
            progress: &run::Silent as &dyn Progress,
            ..RunOptions::default()
        };
        let report = match &exp {
            ctxlab::experiment::AnyExperiment::Cells(e) => run::run(e, &opts).unwrap(),
            ctxlab::experiment::AnyExperiment::Sessions(e) => run::run(e, &opts).unwrap(),
        };
        let e = &report.estimate;
        for (format, estimated) in [("parquet", e.parquet_bytes), ("csv", e.csv_bytes)] {
            let real = bytes_of(&out, format) as f64;
            let ratio = estimated.unwrap() as f64 / real;
            assert!(
                (0.5..=2.0).contains(&ratio),
                "{file} {format}: estimated {estimated:?}, written {real}, ratio {ratio:.2}"
            );
        }
    }
}

#[test]
fn a_batch_run_prints_plain_progress_lines() {
    let dir = setup();
    let d = dir.path();
    // stderr is a pipe here: no bar, but a line at every interval (0 s: at every advance).
    let o = ctxlab(
        d,
        &[
            "sweep",
            "exp.toml",
            "--progress-every",
            "0",
            "--chunk-cells",
            "120",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("estimate: 720 cells"), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!lines.is_empty(), "{err}");
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("progress: 720/720 cells (100.0 %), ") && last.contains(" ETA "),
        "{last}"
    );
    // Quiet: neither the estimate nor progress.
    let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--progress-every", "0"]);
    assert_eq!(stderr(&o), "");
}

/// The tables of a cell sweep (and, with `sessions`, of a session sweep).
const CELL_TABLES: [&str; 6] = [
    "cells.parquet",
    "cells.csv",
    "summary.parquet",
    "summary.csv",
    "pairs.parquet",
    "pairs.csv",
];
const SESSION_TABLES: [&str; 6] = [
    "sessions.parquet",
    "sessions.csv",
    "summary.parquet",
    "summary.csv",
    "pairs.parquet",
    "pairs.csv",
];

fn same_tables(a: &Path, b: &Path, tables: &[&str]) {
    for t in tables {
        let x = std::fs::read(a.join(t)).unwrap_or_else(|e| panic!("{}/{t}: {e}", a.display()));
        let y = std::fs::read(b.join(t)).unwrap_or_else(|e| panic!("{}/{t}: {e}", b.display()));
        assert!(
            x == y,
            "{t} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn a_history_bigger_than_a_chunk_gives_the_same_tables_at_any_chunking() {
    let dir = setup();
    let d = dir.path();
    let sweep = |exp: &str, out: &str, chunk: &str, threads: &str| {
        let o = ctxlab(
            d,
            &[
                "sweep",
                exp,
                "-q",
                "--chunk-cells",
                chunk,
                "--threads",
                threads,
                "--out",
                out,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    };
    // Cells: 120 per history. 100 000 holds every history in one chunk; 50 cuts each history
    // into 3 chunks of 4, 4 and 2 replicates; 1 cuts it into 10 chunks of one replicate.
    sweep("exp.toml", "whole", "100000", "2");
    sweep("exp.toml", "split", "50", "2");
    sweep("exp.toml", "one", "1", "1");
    same_tables(&d.join("whole"), &d.join("split"), &CELL_TABLES);
    same_tables(&d.join("whole"), &d.join("one"), &CELL_TABLES);
    // Sessions: 48 per history; 20 cuts a history into 3 chunks (2, 2, 2 replicates).
    sweep("ses.toml", "ses-whole", "100000", "2");
    sweep("ses.toml", "ses-split", "20", "1");
    same_tables(&d.join("ses-whole"), &d.join("ses-split"), &SESSION_TABLES);
}

#[test]
fn a_split_history_killed_mid_way_resumes_to_the_same_tables() {
    let dir = setup();
    let d = dir.path();
    let args = [
        "sweep",
        "exp.toml",
        "-q",
        "--chunk-cells",
        "50",
        "--out",
        "killed",
    ];
    // 3 chunks a history: the checkpoint is taken when history 0 ends (3 chunks); the run is
    // killed after the 5th chunk, in the middle of history 1, and resumes from its start.
    let o = ctxlab_env(d, &args, ("CTXLAB_FAULT", "chunks:5"));
    assert!(!o.status.success());
    let checkpoint: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("killed/.partial/checkpoint.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(checkpoint["chunks_done"], 3);
    let mut resume = args.to_vec();
    resume.push("--resume");
    let o = ctxlab(d, &resume);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(resumed after 3 finished chunks)"),
        "{}",
        stdout(&o)
    );
    let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--out", "straight"]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_tables(&d.join("straight"), &d.join("killed"), &CELL_TABLES);
}
