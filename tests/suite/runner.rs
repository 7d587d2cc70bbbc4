//! The sweep runner's safety guarantees, through the binary: every fault point leaves a folder
//! that does not look finished and resumes to the same bytes, resume refuses other settings, one
//! run at a time per folder, stale files of our own removed and nobody else's, foreign folders
//! refused, experiment names that are one folder name, and `table`/`inspect` agreeing with a
//! sweep on a summary cell.

use crate::common::*;
use polars::prelude::{ParquetReader, SerReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// 24 histories × 2 replicates × 2 noise levels × 4 strategies × 3 budgets = 1152 cells,
/// 48 per history; with `--chunk-cells 96` that is 12 chunks of 2 histories.
const EXP: &str = r#"
name = "runner"
seed = 3
replicates = 2
[histories]
generate = { count = 24, records = [10, 60], required_share = 0.2, seed = 9 }
[sweep]
strategies = ["recent", "required", "mask", "summary"]
budgets = [20, 50, 80]
false_negative = [0.0, 0.2]
[output]
dir = "out"
"#;
const CELLS: u64 = 1152;
const CHUNKS: usize = 12;
const CHUNK: &str = "96";

/// The tables of a cell sweep, compared byte for byte.
const TABLES: [&str; 6] = [
    "cells.parquet",
    "cells.csv",
    "summary.parquet",
    "summary.csv",
    "pairs.parquet",
    "pairs.csv",
];

/// 6 histories × 2 replicates × 2 noise levels × 3 strategies × 2 windows × 2 ratios × 2 note
/// rates = 576 sessions, 96 per history: with `--chunk-cells 96`, 6 chunks.
const SESSIONS: &str = r#"
name = "ses"
seed = 13
replicates = 2
[histories]
generate = { count = 6, records = [30, 80], required_share = 0.2, required_position = "early", seed = 6 }
[session]
strategies = ["recent", "required", { name = "summary", keep_recent = 4 }]
windows = [1500, 3000]
ratios = [0.6, 0.9]
note_rates = [0.0, 0.2]
false_negative = [0.0, 0.3]
[output]
dir = "ses"
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("exp.toml"), EXP).unwrap();
    std::fs::write(dir.path().join("ses.toml"), SESSIONS).unwrap();
    dir
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// `sweep EXPERIMENT -q --chunk-cells 96 --out OUT` and `extra`.
fn sweep_args<'a>(experiment: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    chunked(experiment, out, CHUNK, extra)
}

/// `sweep EXPERIMENT -q --chunk-cells CHUNK --out OUT` and `extra`.
fn chunked<'a>(
    experiment: &'a str,
    out: &'a str,
    chunk: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "sweep",
        experiment,
        "-q",
        "--chunk-cells",
        chunk,
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    args
}

/// Runs with `CTXLAB_FAULT=fault` and checks that the process was killed by the hook.
fn aborted(dir: &Path, args: &[&str], fault: &str) -> Output {
    let o = ctxlab_env(dir, args, ("CTXLAB_FAULT", fault));
    assert!(
        !o.status.success(),
        "{fault}: the hook should have killed the run: {}",
        stdout(&o)
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(o.status.signal(), Some(6), "{fault}: not SIGABRT: {o:?}");
    }
    o
}

/// Every file under `dir`, relative, sorted (hidden ones included).
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// The published files of a folder: everything but the lock, the staging folder, the
/// manifest and the report (which holds the run time).
fn published(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_iter()
        .filter(|f| {
            !f.starts_with(".ctxlab")
                && !f.starts_with(".partial")
                && f != "manifest.json"
                && f != "report.md"
        })
        .collect()
}

fn same_bytes(a: &Path, b: &Path, files: &[String]) {
    for f in files {
        let (x, y) = (a.join(f), b.join(f));
        let x = std::fs::read(&x).unwrap_or_else(|e| panic!("{}: {e}", x.display()));
        let y = std::fs::read(&y).unwrap_or_else(|e| panic!("{}: {e}", y.display()));
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn manifest(dir: &Path) -> serde_json::Value {
    let path = dir.join("manifest.json");
    serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

fn manifest_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = manifest(dir)["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    files.sort();
    files
}

fn parquet_height(path: &Path) -> usize {
    ParquetReader::new(
        std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .finish()
    .unwrap()
    .height()
}

fn chunks_done(staging: &Path) -> u64 {
    let text = std::fs::read_to_string(staging.join("checkpoint.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["chunks_done"].as_u64().unwrap()
}

/// The charts and tables a cell sweep with both formats publishes, sorted.
fn cell_sweep_files() -> Vec<String> {
    let mut files: Vec<String> = TABLES.iter().map(|s| s.to_string()).collect();
    for chart in [
        "feasibility",
        "retention_vs_noise",
        "retention_vs_reduction",
    ] {
        for ext in ["png", "svg"] {
            files.push(format!("charts/{chart}.{ext}"));
        }
    }
    files.sort();
    files
}

#[test]
fn every_fault_point_leaves_an_unfinished_folder_that_resumes_to_the_same_bytes() {
    let dir = setup();
    let d = dir.path();
    // The reference: uninterrupted, in one chunk (the default chunking): the bytes do not
    // depend on it.
    run_ok(d, &["sweep", "exp.toml", "-q", "--out", "straight"]);
    let straight = d.join("straight");
    assert_eq!(published(&straight), cell_sweep_files());
    let mut listed = cell_sweep_files();
    listed.push("report.md".into());
    listed.sort();
    assert_eq!(manifest_files(&straight), listed);
    assert_eq!(manifest(&straight)["rows"], CELLS);
    assert_eq!(
        parquet_height(&straight.join("cells.parquet")),
        CELLS as usize
    );

    // (fault, chunks done when it struck, what is already in place)
    let cases: [(&str, usize, &[&str]); 5] = [
        ("chunks:5", 5, &[]),
        ("assembly", CHUNKS, &[]),
        ("charts", CHUNKS, &[]),
        // The first file moved into place is the rows table.
        ("publish", CHUNKS, &["cells.parquet"]),
        // Everything but the manifest (listed below).
        ("manifest", CHUNKS, &[]),
    ];
    for (fault, done, in_place) in cases {
        let out = fault.replace(':', "-");
        let folder = d.join(&out);
        let args = sweep_args("exp.toml", &out, &[]);
        aborted(d, &args, fault);
        assert!(
            !folder.join("manifest.json").exists(),
            "{fault}: a manifest after the abort"
        );
        assert!(!folder.join(".previous-manifest.json").exists(), "{fault}");
        let staging = folder.join(".partial");
        assert_eq!(chunks_done(&staging), done as u64, "{fault}");
        // The checkpoint stays until the manifest is in place.
        assert!(staging.join("checkpoint.json").is_file(), "{fault}");
        let expected_in_place: Vec<String> = if fault == "manifest" {
            let mut all = cell_sweep_files();
            all.push("report.md".into());
            all.sort();
            all
        } else {
            in_place.iter().map(|s| s.to_string()).collect()
        };
        let now: Vec<String> = tree(&folder)
            .into_iter()
            .filter(|f| !f.starts_with(".partial/") && f != ".ctxlab.lock")
            .collect();
        assert_eq!(now, expected_in_place, "{fault}: files in place");

        // A plain rerun leaves it alone.
        assert_fails_with(
            &ctxlab(d, &args),
            &[
                "unfinished run",
                &format!("{done} of {CHUNKS} chunks"),
                "--resume",
            ],
        );
        assert_eq!(chunks_done(&staging), done as u64, "{fault}");

        let resume = sweep_args("exp.toml", &out, &["--resume"]);
        let printed = run_ok(d, &resume);
        assert!(
            printed.starts_with(&format!("runner: {CELLS} cells over 24 histories in "))
                && printed.contains(&format!("(resumed after {done} finished chunks)")),
            "{fault}: {printed}"
        );
        assert!(!staging.exists(), "{fault}: staging left behind");
        assert!(!folder.join(".previous-manifest.json").exists(), "{fault}");
        assert_eq!(published(&folder), cell_sweep_files(), "{fault}");
        assert_eq!(manifest_files(&folder), listed, "{fault}");
        assert_eq!(manifest(&folder)["rows"], CELLS, "{fault}");
        // Tables and charts, byte for byte.
        same_bytes(&straight, &folder, &cell_sweep_files());
    }
}

#[test]
fn a_killed_session_sweep_resumes_to_the_same_bytes() {
    let dir = setup();
    let d = dir.path();
    run_ok(d, &["sweep", "ses.toml", "-q", "--out", "straight"]);
    let straight = d.join("straight");
    let files = published(&straight);
    assert_eq!(
        files,
        [
            "charts/compaction_decay.md",
            "charts/compaction_decay.png",
            "charts/compaction_decay.svg",
            "charts/compaction_summary_size.png",
            "charts/compaction_summary_size.svg",
            "charts/session_compactions.png",
            "charts/session_compactions.svg",
            "charts/session_cost_retention.png",
            "charts/session_cost_retention.svg",
            "charts/session_tokens_retention.png",
            "charts/session_tokens_retention.svg",
            "compactions.csv",
            "compactions.parquet",
            "pairs.csv",
            "pairs.parquet",
            "sessions.csv",
            "sessions.parquet",
            "summary.csv",
            "summary.parquet",
        ]
    );
    assert_eq!(parquet_height(&straight.join("sessions.parquet")), 576);
    for (fault, done) in [("chunks:2", 2), ("publish", 6), ("manifest", 6)] {
        let out = fault.replace(':', "-");
        let folder = d.join(&out);
        aborted(d, &sweep_args("ses.toml", &out, &[]), fault);
        assert!(!folder.join("manifest.json").exists(), "{fault}");
        assert_eq!(chunks_done(&folder.join(".partial")), done, "{fault}");
        let printed = run_ok(d, &sweep_args("ses.toml", &out, &["--resume"]));
        assert!(
            printed.starts_with("ses: 576 sessions over 6 histories in ")
                && printed.contains(&format!("(resumed after {done} finished chunks)")),
            "{fault}: {printed}"
        );
        assert!(!folder.join(".partial").exists());
        assert_eq!(published(&folder), files, "{fault}");
        assert_eq!(manifest(&folder)["rows"], 576);
        same_bytes(&straight, &folder, &files);
    }
}

#[test]
fn a_rerun_killed_while_publishing_keeps_the_old_manifest_aside_until_it_is_resumed() {
    let dir = setup();
    let d = dir.path();
    // The rerun's experiment: another seed and Parquet only, run straight elsewhere.
    let other: [&str; 4] = ["--set", "seed=5", "--set", r#"output.formats=["parquet"]"#];
    run_ok(d, &sweep_args("exp.toml", "straight", &other));
    let straight = d.join("straight");

    for fault in ["charts", "publish", "manifest"] {
        let out = format!("rerun-{fault}");
        let folder = d.join(&out);
        run_ok(d, &sweep_args("exp.toml", &out, &[]));
        let first = std::fs::read(folder.join("manifest.json")).unwrap();
        let first_tables: Vec<Vec<u8>> = TABLES
            .iter()
            .map(|t| std::fs::read(folder.join(t)).unwrap())
            .collect();
        aborted(d, &sweep_args("exp.toml", &out, &other), fault);
        if fault == "charts" {
            // Killed before publishing: the first run's files and manifest are untouched.
            assert_eq!(std::fs::read(folder.join("manifest.json")).unwrap(), first);
            for (t, bytes) in TABLES.iter().zip(&first_tables) {
                assert!(std::fs::read(folder.join(t)).unwrap() == *bytes, "{t}");
            }
            assert!(!folder.join(".previous-manifest.json").exists());
        } else {
            // Publishing began: no manifest, the first one kept aside as it was.
            assert!(!folder.join("manifest.json").exists(), "{fault}");
            assert_eq!(
                std::fs::read(folder.join(".previous-manifest.json")).unwrap(),
                first,
                "{fault}"
            );
        }
        // With every new file in place, the first run's CSV files were already removed.
        assert_eq!(
            folder.join("cells.csv").exists(),
            fault != "manifest",
            "{fault}"
        );
        // Resumed, the folder is the rerun's and only the rerun's: the CSV files the first
        // manifest listed (read from the one kept aside) are gone.
        run_ok(
            d,
            &sweep_args("exp.toml", &out, &{
                let mut a = other.to_vec();
                a.push("--resume");
                a
            }),
        );
        assert!(!folder.join(".previous-manifest.json").exists(), "{fault}");
        assert!(!folder.join(".partial").exists(), "{fault}");
        assert_eq!(manifest(&folder)["seed"], 5, "{fault}");
        assert_eq!(published(&folder), published(&straight), "{fault}");
        for f in ["cells.csv", "summary.csv"] {
            assert!(!folder.join(f).exists(), "{fault}: stale {f}");
        }
        same_bytes(&straight, &folder, &published(&straight));
    }
}

#[test]
fn resume_refuses_other_settings_and_names_them() {
    let dir = setup();
    let d = dir.path();
    aborted(d, &sweep_args("exp.toml", "k", &[]), "chunks:4");
    let staging = d.join("k/.partial");
    let refused: [(&str, &[&str], &str); 5] = [
        (
            "48",
            &["--resume"],
            "another --chunk-cells (96; this run: 48)",
        ),
        (
            CHUNK,
            &["--resume", "--cells", "sample"],
            "another --cells (all; this run: sample)",
        ),
        (
            CHUNK,
            &["--resume", "--set", r#"output.formats=["parquet"]"#],
            "another output.formats (parquet, csv; this run: parquet)",
        ),
        (
            CHUNK,
            &["--resume", "--set", "seed=5"],
            "another experiment (config hash)",
        ),
        (
            CHUNK,
            &["--resume", "--set", "histories.generate.count=25"],
            "another number of histories (24; this run: 25)",
        ),
    ];
    for (chunk, extra, named) in refused {
        let args = chunked("exp.toml", "k", chunk, extra);
        assert_fails_with(&ctxlab(d, &args), &["k/.partial", "cannot resume", named]);
        // Refusing touches nothing.
        assert_eq!(chunks_done(&staging), 4, "{extra:?}");
        assert!(!d.join("k/manifest.json").exists());
    }
    let printed = run_ok(d, &sweep_args("exp.toml", "k", &["--resume"]));
    assert!(
        printed.contains("(resumed after 4 finished chunks)"),
        "{printed}"
    );
    assert_eq!(parquet_height(&d.join("k/cells.parquet")), CELLS as usize);
}

/// A sweep slow enough (≥ 1–2 s on one thread) to be caught holding its folder: 5000
/// histories × 4 replicates × 3 noise levels × 4 strategies × 4 budgets = 960 000 cells,
/// 192 per history.
const SLOW: &str = r#"
name = "slow"
seed = 1
replicates = 4
[histories]
generate = { count = 5000, records = [40, 160], required_share = 0.2, seed = 2 }
[sweep]
strategies = ["recent", "required", "mask", "summary"]
budgets = [20, 40, 60, 80]
false_negative = [0.0, 0.2, 0.4]
[output]
dir = "busy"
formats = ["parquet"]
"#;

#[test]
fn a_folder_in_use_is_refused_while_its_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("slow.toml"), SLOW).unwrap();
    let args = ["sweep", "slow.toml", "-q", "--threads", "1"];
    let started = Instant::now();
    let first = Command::new(env!("CARGO_BIN_EXE_ctxlab"))
        .args(args)
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    let busy = d.join("busy");
    let lock = busy.join(".ctxlab.lock");
    // Wait until the first run holds the folder: its pid in the lock, its staging made.
    loop {
        let owner = std::fs::read_to_string(&lock).unwrap_or_default();
        if owner.trim() == pid.to_string() && busy.join(".partial").is_dir() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first run never took the folder"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let in_use = format!("in use by process {pid}");
    // The same command, and one that would resume: both refused at once, touching nothing.
    for extra in [&[][..], &["--resume"][..]] {
        let mut second = args.to_vec();
        second.extend_from_slice(extra);
        let o = ctxlab(d, &second);
        assert_fails_with(&o, &["busy", &in_use, "another ctxlab run"]);
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap().trim(),
            pid.to_string()
        );
        assert!(
            busy.join(".partial").is_dir(),
            "the second run cleared staging"
        );
    }
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success(), "the first run: {}", stderr(&o));
    assert!(
        started.elapsed() > Duration::from_millis(500),
        "the slow run is too quick to prove anything: {:?}",
        started.elapsed()
    );
    assert!(stdout(&o).starts_with("slow: 960000 cells over 5000 histories in "));
    assert_eq!(parquet_height(&busy.join("cells.parquet")), 960_000);
    assert_eq!(manifest(&busy)["rows"], 960_000);
    assert!(!busy.join(".partial").exists());
}

#[test]
fn parquet_bytes_do_not_depend_on_the_chunking_past_one_row_group() {
    // SLOW with 1400 histories: 268 800 cells, more than one row group (2^18 = 262 144 rows).
    // In one piece the default chunking takes 1365 histories per chunk (2 chunks); with
    // --chunk-cells 50000 it takes 260 (6 chunks), and the run is killed after 4 of them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("slow.toml"), SLOW).unwrap();
    let count = "histories.generate.count=1400";
    run_ok(
        d,
        &[
            "sweep",
            "slow.toml",
            "-q",
            "--set",
            count,
            "--out",
            "straight",
        ],
    );
    let killed = chunked("slow.toml", "resumed", "50000", &["--set", count]);
    aborted(d, &killed, "chunks:4");
    assert_eq!(chunks_done(&d.join("resumed/.partial")), 4);
    let mut resume = killed.clone();
    resume.push("--resume");
    let printed = run_ok(d, &resume);
    assert!(
        printed.starts_with("slow: 268800 cells over 1400 histories in ")
            && printed.contains("(resumed after 4 finished chunks)"),
        "{printed}"
    );
    let (straight, resumed) = (d.join("straight"), d.join("resumed"));
    assert_eq!(parquet_height(&straight.join("cells.parquet")), 268_800);
    let files = published(&straight);
    assert!(
        files.contains(&"cells.parquet".to_string()) && files.len() == 9,
        "{files:?}"
    );
    assert_eq!(published(&resumed), files);
    same_bytes(&straight, &resumed, &files);
}

#[test]
fn files_an_earlier_run_wrote_and_this_one_does_not_are_removed_and_nobody_elses() {
    let dir = setup();
    let d = dir.path();
    let out = d.join("out");
    run_ok(d, &["sweep", "exp.toml", "-q"]);
    assert_eq!(published(&out), cell_sweep_files());
    // The user's own files, beside ours and inside our charts folder.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::create_dir(out.join("mine")).unwrap();
    std::fs::write(out.join("mine/keep.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(out.join("charts/mine.png"), "not a chart").unwrap();
    let users = ["charts/mine.png", "mine/keep.csv", "notes.txt"];

    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--set",
            r#"output.formats=["parquet"]"#,
        ],
    );
    let mut expected: Vec<String> = cell_sweep_files()
        .into_iter()
        .filter(|f| !f.ends_with(".csv"))
        .chain(users.iter().map(|s| s.to_string()))
        .collect();
    expected.sort();
    assert_eq!(published(&out), expected);
    assert!(out.join("report.md").is_file());
    assert!(!manifest_files(&out).iter().any(|f| f.ends_with(".csv")));

    // CSV only draws no charts and no report: ours go, the user's chart stays.
    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--set",
            r#"output.formats=["csv"]"#,
        ],
    );
    assert_eq!(
        published(&out),
        [
            "cells.csv",
            "charts/mine.png",
            "mine/keep.csv",
            "notes.txt",
            "pairs.csv",
            "summary.csv"
        ]
    );
    assert!(!out.join("report.md").exists());
    assert_eq!(
        manifest_files(&out),
        ["cells.csv", "pairs.csv", "summary.csv"]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("mine/keep.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("charts/mine.png")).unwrap(),
        "not a chart"
    );

    // Without a file of the user's in it, our emptied charts folder goes too.
    std::fs::remove_file(out.join("charts/mine.png")).unwrap();
    run_ok(d, &["sweep", "exp.toml", "-q"]);
    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--set",
            r#"output.formats=["csv"]"#,
        ],
    );
    assert!(!out.join("charts").exists());
    assert!(!out.join("cells.parquet").exists() && !out.join("summary.parquet").exists());
}

#[test]
fn a_folder_ctxlab_did_not_write_is_refused_unless_forced() {
    let dir = setup();
    let d = dir.path();
    let theirs = d.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("data.txt"), "precious").unwrap();
    // Not a ctxlab manifest: its config_hash is not a string.
    let fake = d.join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("manifest.json"), r#"{"config_hash": 5}"#).unwrap();
    for (out, theirs_files) in [
        ("theirs", vec!["data.txt".to_string()]),
        ("fake", vec!["manifest.json".to_string()]),
    ] {
        let o = ctxlab(d, &["sweep", "exp.toml", "-q", "--out", out]);
        assert_fails_with(&o, &[out, "ctxlab did not write", "--force"]);
        assert_eq!(tree(&d.join(out)), theirs_files, "{out}: written into");
    }
    // An empty folder is anyone's.
    std::fs::create_dir(d.join("empty")).unwrap();
    run_ok(d, &["sweep", "exp.toml", "-q", "--out", "empty"]);
    assert_eq!(published(&d.join("empty")), cell_sweep_files());

    run_ok(
        d,
        &["sweep", "exp.toml", "-q", "--out", "theirs", "--force"],
    );
    assert_eq!(
        std::fs::read_to_string(theirs.join("data.txt")).unwrap(),
        "precious"
    );
    let mut expected = cell_sweep_files();
    expected.push("data.txt".into());
    expected.sort();
    assert_eq!(published(&theirs), expected);
    // Now it is ours: no --force needed, and the foreign file still stays.
    run_ok(
        d,
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--out",
            "theirs",
            "--set",
            r#"output.formats=["csv"]"#,
        ],
    );
    assert_eq!(
        published(&theirs),
        ["cells.csv", "data.txt", "pairs.csv", "summary.csv"]
    );
}

#[test]
fn an_experiment_name_must_be_one_folder_name() {
    for (experiment, table) in [(EXP, "sweep"), (SESSIONS, "session")] {
        for name in ["a/b", "../x", ".hidden", "..", r"a\b"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            // No [output] dir: the folder would be results/<name>.
            let text = experiment
                .replace("name = \"runner\"", &format!("name = {name:?}"))
                .replace("name = \"ses\"", &format!("name = {name:?}"));
            let text = text.split("[output]").next().unwrap().to_string();
            assert!(text.contains(&format!("[{table}]")));
            std::fs::write(d.join("e.toml"), text).unwrap();
            let o = ctxlab(d, &["sweep", "e.toml", "-q"]);
            assert_fails_with(
                &o,
                &[
                    "e.toml: key `name`",
                    &format!("{name:?}"),
                    "expected a single folder name",
                ],
            );
            assert_eq!(
                tree(d),
                ["e.toml"],
                "{table} {name:?}: something was written"
            );
        }
    }
    // A good name gets results/<name>.
    let dir = tempfile::tempdir().unwrap();
    let text = EXP.split("[output]").next().unwrap();
    std::fs::write(dir.path().join("e.toml"), text).unwrap();
    run_ok(dir.path(), &["sweep", "e.toml", "-q"]);
    assert!(dir.path().join("results/runner/manifest.json").is_file());
}

/// 16 records, total 635 chars, 5 required; ids 15 and 16 are the tail of `keep_recent=2`.
const LENGTHS: [usize; 16] = [
    30, 45, 12, 80, 25, 60, 15, 40, 70, 20, 35, 55, 18, 65, 28, 22,
];
const REQUIRED: [usize; 5] = [2, 5, 9, 12, 15];
const SUMMARY: &str =
    "summary(keep_recent=2, summary_size=40, recall_flagged=0.9, recall_other=0.2)";

fn write_history(dir: &Path) -> PathBuf {
    let kinds = ["user", "tool_call", "tool_result", "assistant"];
    let mut text = String::new();
    for (i, &n) in LENGTHS.iter().enumerate() {
        let id = i + 1;
        let kind = kinds[i % 4];
        let tool = if kind.starts_with("tool") {
            r#","tool":"bash""#
        } else {
            ""
        };
        let required = if REQUIRED.contains(&id) {
            r#","required":true"#
        } else {
            ""
        };
        text += &format!(
            "{{\"id\":{id},\"kind\":\"{kind}\"{tool},\"text\":\"{}\"{required}}}\n",
            "x".repeat(n)
        );
    }
    let path = dir.join("h.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn csv_rows(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn percent(field: &str) -> String {
    format!("{:.1}%", field.parse::<f64>().unwrap() * 100.0)
}

#[test]
fn table_inspect_and_a_sweep_agree_on_a_summary_cell_at_any_seed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_history(d);
    let budgets = ["12", "30", "100"];
    // (seed, budget) → retention_any: the summariser's draws depend on the seed, and the three
    // commands draw the same ones.
    let mut any_form = Vec::new();
    for seed in [0u64, 7] {
        let exp = format!(
            r#"
name = "eq"
seed = {seed}
replicates = 1
[histories]
files = ["h.jsonl"]
[sweep]
strategies = [{SUMMARY:?}]
budgets = [12, 30, 100]
[output]
dir = "eq{seed}"
formats = ["csv"]
"#
        );
        std::fs::write(d.join("eq.toml"), exp).unwrap();
        run_ok(d, &["sweep", "eq.toml", "-q"]);
        let cells =
            csv_rows(&std::fs::read_to_string(d.join(format!("eq{seed}/cells.csv"))).unwrap());
        assert_eq!(cells.len(), 3);
        let seed_text = seed.to_string();
        let table = run_ok(
            d,
            &[
                "table",
                "h.jsonl",
                "--strategies",
                SUMMARY,
                "--budgets",
                "12,30,100",
                "--format",
                "csv",
                "--seed",
                &seed_text,
            ],
        );
        assert!(table.starts_with(
            "budget_percent,strategy,capacity,used,reduction,required_retention,exact,feasible\n"
        ));
        let table = csv_rows(&table);
        assert_eq!(table.len(), 3);
        for ((budget, cell), row) in budgets.iter().zip(&cells).zip(&table) {
            assert_eq!(cell["budget_percent"], *budget);
            assert_eq!(row["budget_percent"], *budget);
            assert_eq!(cell["strategy"], SUMMARY);
            assert_eq!(cell["total"], "635");
            assert_eq!(cell["required_total"], "5");
            for column in [
                "capacity",
                "used",
                "reduction",
                "required_retention",
                "exact",
                "feasible",
            ] {
                assert_eq!(
                    cell[column], row[column],
                    "seed {seed}, {budget}%: {column}"
                );
            }
            let inspect = run_ok(
                d,
                &[
                    "inspect",
                    "h.jsonl",
                    "--strategy",
                    SUMMARY,
                    "--budget",
                    budget,
                    "--seed",
                    &seed_text,
                    "--color",
                    "never",
                ],
            );
            let any: f64 = cell["retention_any"].parse().unwrap();
            let required_any = (any * 5.0).round() as u32;
            let expected = format!(
                "metrics: used {} of {}, reduction {}, required kept {}/5 ({}), any form {required_any}/5 ({}), exact {}, placeholders {}, summarised {}",
                cell["used"],
                cell["capacity"],
                percent(&cell["reduction"]),
                cell["required_kept"],
                percent(&cell["required_retention"]),
                percent(&cell["retention_any"]),
                percent(&cell["exact"]),
                cell["placeholders"],
                cell["summarised"],
            );
            assert_eq!(
                inspect.lines().last().unwrap(),
                expected,
                "seed {seed}, {budget}%:\n{inspect}"
            );
            assert!(inspect.contains(&format!("seed {seed}, replicate 0")));
            any_form.push((
                seed,
                budget.to_string(),
                cell["used"].clone(),
                cell["required_retention"].clone(),
                cell["retention_any"].clone(),
                cell["summarised"].clone(),
            ));
        }
    }
    let expect = |seed, budget: &str, used: &str, kept: &str, any: &str, summarised: &str| {
        (
            seed,
            budget.to_string(),
            used.to_string(),
            kept.to_string(),
            any.to_string(),
            summarised.to_string(),
        )
    };
    // The head (the task) stays verbatim. At 12% the summary folds the tail's older record in
    // (15 summarised); at 30% it replaces the 13 oldest after the head; at 100% the history fits and nothing is summarised. The verbatim retention
    // is the same at both seeds, what the summary carries is not.
    assert_eq!(
        any_form,
        [
            expect(0, "12", "71", "0.000000", "0.600000", "15"),
            expect(0, "30", "123", "0.200000", "0.600000", "13"),
            expect(0, "100", "635", "1.000000", "1.000000", "0"),
            expect(7, "12", "71", "0.000000", "0.800000", "15"),
            expect(7, "30", "123", "0.200000", "0.800000", "13"),
            expect(7, "100", "635", "1.000000", "1.000000", "0"),
        ]
    );
}
