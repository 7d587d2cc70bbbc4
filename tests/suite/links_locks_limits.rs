//! Links, locks and limits: each case is first set up as a hostile or careless user would
//! (a planted link, a second command in the folder, a swapped shard file, a kill at the worst
//! instant, an input at or past a limit), then the refusal or the correct result is checked.
//! Planted links point at a file of the user's that must stay byte for byte as it was.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) const EXP: &str = r#"
name = "l"
seed = 3
replicates = 2
[histories]
generate = { count = 4, records = [10, 30], required_share = 0.2, seed = 9 }
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

/// A file of the user's outside every output folder, and its bytes.
fn precious(dir: &Path) -> (PathBuf, Vec<u8>) {
    let path = dir.join("precious.txt");
    let bytes = b"the user's own file\n".to_vec();
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn unchanged(path: &Path, bytes: &[u8]) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        bytes,
        "{} changed",
        path.display()
    );
}

/// The refusal is one line.
fn one_line(o: &Output) {
    assert_eq!(stderr(o).trim_end().lines().count(), 1, "{}", stderr(o));
}

/// Runs ctxlab with resource limits set in the child before it starts.
#[cfg(unix)]
fn limited(dir: &Path, args: &[&str], limits: &[(libc::__rlimit_resource_t, u64)]) -> Output {
    use std::os::unix::process::CommandExt as _;
    let limits = limits.to_vec();
    let mut c = Command::new(env!("CARGO_BIN_EXE_ctxlab"));
    c.args(args).current_dir(dir);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            // A write past RLIMIT_FSIZE fails with EFBIG instead of killing the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            for &(resource, value) in &limits {
                let l = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                if libc::setrlimit(resource, &l) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    c.output().expect("run ctxlab")
}

// ---------------------------------------------------------------------------------------------
// R1: planted lock files.

#[cfg(unix)]
#[test]
fn r1_a_planted_lock_link_is_refused_and_its_target_unchanged() {
    let d = setup();
    let p = d.path();
    let (target, bytes) = precious(p);
    for (lock, args) in [
        (".ctxlab.lock", vec!["sweep", "exp.toml", "-q"]),
        (
            ".ctxlab-shard=0.lock",
            vec!["sweep", "exp.toml", "-q", "--shard", "0/2"],
        ),
    ] {
        let out = p.join("out");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&target, out.join(lock)).unwrap();
        let o = ctxlab(p, &args);
        assert_fails_with(
            &o,
            &[&format!("out/{lock}: is a symbolic link inside the output folder; ctxlab does not write through links")],
        );
        one_line(&o);
        unchanged(&target, &bytes);
    }
    // merge, compare and plot take the lock too.
    let out = p.join("out");
    std::fs::remove_dir_all(&out).unwrap();
    ok(p, &["sweep", "exp.toml", "-q"]);
    std::fs::remove_file(out.join(".ctxlab.lock")).unwrap();
    std::os::unix::fs::symlink(&target, out.join(".ctxlab.lock")).unwrap();
    for args in [
        &["plot", "out"][..],
        &["compare", "out", "--baseline", "recent"][..],
    ] {
        assert_fails_with(&ctxlab(p, args), &["out/.ctxlab.lock: is a symbolic link"]);
        unchanged(&target, &bytes);
    }
    // A hard link to the user's file is refused as well.
    std::fs::remove_file(out.join(".ctxlab.lock")).unwrap();
    std::fs::hard_link(&target, out.join(".ctxlab.lock")).unwrap();
    assert_fails_with(
        &ctxlab(p, &["sweep", "exp.toml", "-q"]),
        &["out/.ctxlab.lock: is a hard link to a file with 2 names"],
    );
    unchanged(&target, &bytes);
}

#[cfg(unix)]
#[test]
fn r1_merge_refuses_a_planted_lock_link() {
    let d = setup();
    let p = d.path();
    let (target, bytes) = precious(p);
    for i in 0..2 {
        ok(
            p,
            &["sweep", "exp.toml", "-q", "--shard", &format!("{i}/2")],
        );
    }
    std::os::unix::fs::symlink(&target, p.join("out/.ctxlab.lock")).unwrap();
    assert_fails_with(
        &ctxlab(p, &["merge", "out"]),
        &["out/.ctxlab.lock: is a symbolic link inside the output folder"],
    );
    unchanged(&target, &bytes);
    assert!(!p.join("out/manifest.json").exists());
}

// ---------------------------------------------------------------------------------------------
// R2: links planted in a killed run's staging folder.

/// A run of EXP killed after its first chunk, leaving `out/.partial`.
fn killed(p: &Path) {
    let o = ctxlab_env(
        p,
        &["sweep", "exp.toml", "-q", "--chunk-cells", "40"],
        ("CTXLAB_FAULT", "chunks:1"),
    );
    assert!(!o.status.success());
    assert!(p.join("out/.partial/checkpoint.json").is_file());
}

#[cfg(unix)]
#[test]
fn r2_links_planted_in_the_staging_folder_are_refused_on_resume() {
    let resume = ["sweep", "exp.toml", "-q", "--chunk-cells", "40", "--resume"];
    for planted in [
        "cells.parquet",
        "manifest.json.tmp",
        "summary.csv",
        "summary.parquet",
    ] {
        let d = setup();
        let p = d.path();
        let (target, bytes) = precious(p);
        killed(p);
        let link = p.join("out/.partial").join(planted);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let o = ctxlab(p, &resume);
        assert_fails_with(
            &o,
            &[&format!(
                ".partial/{planted}: is a symbolic link inside the output folder"
            )],
        );
        one_line(&o);
        unchanged(&target, &bytes);
        assert!(!p.join("out/manifest.json").exists(), "{planted}");
    }
    // `.partial` itself a link to a folder of the user's.
    let d = setup();
    let p = d.path();
    killed(p);
    let elsewhere = p.join("elsewhere");
    std::fs::rename(p.join("out/.partial"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, p.join("out/.partial")).unwrap();
    let before: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    for args in [&resume[..], &["sweep", "exp.toml", "-q", "--force"][..]] {
        assert_fails_with(
            &ctxlab(p, args),
            &["out/.partial: is a symbolic link inside the output folder"],
        );
    }
    let after: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    assert_eq!(before, after, "the linked folder is untouched");
}

// ---------------------------------------------------------------------------------------------
// R3: links inside the answer cache.

#[cfg(unix)]
#[test]
fn r3_summaries_import_and_fill_refuse_a_link_inside_the_cache() {
    use ctxlab::llm::batch::{self, Existing};
    use ctxlab::llm::{SummaryCache, SummaryRequest};
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let (target, bytes) = precious(p);
    let request = SummaryRequest {
        prompt: "Summarise.".into(),
        input: "alpha".into(),
        model: "m".into(),
        max_tokens: None,
    };
    let hash = request.hash();
    batch::write_requests(
        &p.join("requests.jsonl"),
        std::slice::from_ref(&request),
        Existing::Refuse,
    )
    .unwrap();
    let answer = serde_json::json!({"custom_id": hash, "response": {"status_code": 200, "body":
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "sum"}}]}}, "error": null});
    std::fs::write(p.join("responses.jsonl"), format!("{answer}\n")).unwrap();
    let cache = p.join("cache");
    let cases: [(&str, PathBuf); 2] = [
        ("entry", cache.join(&hash[..2]).join(format!("{hash}.json"))),
        ("group folder", cache.join(&hash[..2])),
    ];
    for (what, link) in cases {
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        let elsewhere = p.join("elsewhere");
        let _ = std::fs::remove_dir_all(&elsewhere);
        std::fs::create_dir(&elsewhere).unwrap();
        if what == "entry" {
            std::os::unix::fs::symlink(&target, &link).unwrap();
        } else {
            std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        }
        let o = ctxlab(
            p,
            &[
                "summaries",
                "import",
                "responses.jsonl",
                "--requests",
                "requests.jsonl",
                "--into",
                "cache",
            ],
        );
        assert_fails_with(
            &o,
            &[&format!(
                "{}: is a symbolic link inside the summary cache",
                link.strip_prefix(p).unwrap().display()
            )],
        );
        unchanged(&target, &bytes);
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{what}");
        // The library's store, as `summaries fill` uses it.
        let e = SummaryCache::open(&cache)
            .unwrap()
            .put(&request, "sum")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a symbolic link inside the summary cache"),
            "{e}"
        );
        unchanged(&target, &bytes);
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{what}");
    }
}

// ---------------------------------------------------------------------------------------------
// R4: compare and plot under the folder's lock, their files published together.

#[test]
fn r4_compare_and_plot_wait_for_no_one_and_a_killed_compare_is_finished() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "exp.toml", "-q"]);
    let out = p.join("out");
    // Another process holds the folder (a sweep overlapping): both are refused, nothing moves.
    let manifest = std::fs::read(out.join("manifest.json")).unwrap();
    let report = std::fs::read(out.join("report.md")).unwrap();
    // The test holds the lock as another run would (a lock of another process: the child
    // ctxlab sees it held).
    let holder = std::fs::File::open(out.join(".ctxlab.lock")).unwrap();
    holder.lock().unwrap();
    for args in [
        &["plot", "out"][..],
        &["compare", "out", "--baseline", "recent"][..],
    ] {
        let o = ctxlab(p, args);
        assert_fails_with(
            &o,
            &[
                "out: in use by",
                "another ctxlab run writes into this folder",
            ],
        );
        one_line(&o);
    }
    drop(holder);
    assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), manifest);
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), report);
    assert!(!out.join("compare.parquet").exists());
    // A compare killed after its first file moved: no manifest, then the next command
    // finishes the publish and the folder is whole.
    let o = ctxlab_env(
        p,
        &["compare", "out", "--baseline", "recent"],
        ("CTXLAB_FAULT", "publish"),
    );
    assert!(!o.status.success());
    assert!(!out.join("manifest.json").exists());
    assert!(out.join(".partial-compare/publish.json").is_file());
    ok(p, &["plot", "out"]);
    assert!(!out.join(".partial-compare").exists());
    assert!(!out.join(".previous-manifest.json").exists());
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let files: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for f in ["compare.parquet", "compare.csv", "report.md"] {
        assert!(files.contains(&f), "{f} not listed: {files:?}");
        assert!(out.join(f).is_file(), "{f}");
    }
    // Every listed file is there, every compare chart is listed.
    for f in &files {
        assert!(out.join(f).is_file(), "{f} listed but absent");
    }
    for e in std::fs::read_dir(out.join("charts")).unwrap() {
        let name = format!("charts/{}", e.unwrap().file_name().to_string_lossy());
        assert!(files.contains(&name.as_str()), "{name} not listed");
    }
}

// ---------------------------------------------------------------------------------------------
// R5: merge checks the bytes of each shard's rows.

#[test]
fn r5_merge_refuses_rows_of_another_shard_or_experiment_with_the_same_count() {
    let d = setup();
    let p = d.path();
    // 4 histories over 2 shards: both shards' rows files count the same.
    for i in 0..2 {
        ok(
            p,
            &["sweep", "exp.toml", "-q", "--shard", &format!("{i}/2")],
        );
        ok(
            p,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--set",
                "sweep.budgets=[25, 50]",
                "--out",
                "other",
            ],
        );
    }
    let part = |dir: &str, i: usize| p.join(format!("{dir}/cells/shard={i}/part.parquet"));
    let csv = |dir: &str, i: usize| p.join(format!("{dir}/cells-csv/shard={i}/part.csv"));
    let original = std::fs::read(part("out", 1)).unwrap();
    for (from, what) in [
        (part("out", 0), "shard 0's"),
        (part("other", 1), "another experiment's"),
    ] {
        std::fs::copy(&from, part("out", 1)).unwrap();
        let o = ctxlab(p, &["merge", "out"]);
        assert_fails_with(
            &o,
            &[
                "out/cells/shard=1/part.parquet: its bytes are not the ones shard 1 wrote for this experiment",
                "re-run the shard",
            ],
        );
        assert!(!p.join("out/manifest.json").exists(), "{what}");
    }
    std::fs::write(part("out", 1), &original).unwrap();
    std::fs::copy(csv("other", 0), csv("out", 0)).unwrap();
    assert_fails_with(
        &ctxlab(p, &["merge", "out"]),
        &["out/cells-csv/shard=0/part.csv: its bytes are not the ones shard 0 wrote"],
    );
    ok(p, &["sweep", "exp.toml", "-q", "--shard", "0/2"]);
    let printed = ok(p, &["merge", "out"]);
    assert!(printed.starts_with("merged 2 shards: "), "{printed}");
}

// ---------------------------------------------------------------------------------------------
// R6: --force touches only what ctxlab writes.

#[test]
fn r6_force_never_removes_a_users_partial_nor_overwrites_a_users_file() {
    let d = setup();
    let p = d.path();
    let out = p.join("out");
    std::fs::create_dir_all(out.join(".partial")).unwrap();
    std::fs::write(out.join(".partial/notes.txt"), "my notes").unwrap();
    let o = ctxlab(p, &["sweep", "exp.toml", "-q", "--force"]);
    assert_fails_with(
        &o,
        &["out/.partial: ctxlab stages its files here, but this is not a staging folder ctxlab made"],
    );
    one_line(&o);
    assert_eq!(
        std::fs::read_to_string(out.join(".partial/notes.txt")).unwrap(),
        "my notes"
    );
    std::fs::remove_dir_all(out.join(".partial")).unwrap();
    // A file of the user's under one of ctxlab's names.
    std::fs::write(out.join("summary.csv"), "mine").unwrap();
    let o = ctxlab(p, &["sweep", "exp.toml", "-q", "--force"]);
    assert_fails_with(
        &o,
        &["out/summary.csv: a file ctxlab did not write (no manifest of this folder lists it) is where ctxlab publishes summary.csv"],
    );
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv")).unwrap(),
        "mine"
    );
    assert!(!out.join("manifest.json").exists());
    // Moved away, the run (resumed: its cells are done) goes through; a rerun replaces what
    // the manifest lists.
    std::fs::remove_file(out.join("summary.csv")).unwrap();
    ok(p, &["sweep", "exp.toml", "-q", "--force", "--resume"]);
    ok(p, &["sweep", "exp.toml", "-q", "--set", "seed=4"]);
    // A manifest ctxlab did not write does not vouch for anything.
    std::fs::write(out.join("report.md"), "mine").unwrap();
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    m["files"] = serde_json::json!(["summary.csv"]);
    std::fs::write(out.join("manifest.json"), m.to_string()).unwrap();
    assert_fails_with(
        &ctxlab(p, &["sweep", "exp.toml", "-q"]),
        &["out/cells.parquet: a file ctxlab did not write"],
    );
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        "mine"
    );
}

// ---------------------------------------------------------------------------------------------
// R7, R8: strict shapes and checked sums.

#[test]
fn r7_a_flags_file_of_arrays_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(
        p.join("h.jsonl"),
        "{\"history\":\"run\",\"id\":1,\"text\":\"a\"}\n{\"history\":\"run\",\"id\":2,\"text\":\"b\"}\n",
    )
    .unwrap();
    std::fs::write(
        p.join("flags.jsonl"),
        "[\"run\", 1, true]\n[\"run\", 2, false]\n",
    )
    .unwrap();
    std::fs::write(
        p.join("e.toml"),
        "name = \"f\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\nflags_file = \"flags.jsonl\"\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n[output]\ndir = \"out\"\n",
    )
    .unwrap();
    let o = ctxlab(p, &["sweep", "e.toml", "-q"]);
    assert_fails_with(
        &o,
        &["flags.jsonl:1: found a JSON array; expected a JSON object {\"history\": NAME, \"id\": RECORD_ID, \"flag\": true|false} (fields are read by name, not by position)"],
    );
    assert!(!p.join("out").exists());
    // The same flags as objects are read.
    std::fs::write(
        p.join("flags.jsonl"),
        "{\"history\":\"run\",\"id\":1,\"flag\":true}\n{\"history\":\"run\",\"id\":2,\"flag\":false}\n",
    )
    .unwrap();
    ok(p, &["sweep", "e.toml", "-q"]);
}

#[test]
fn r8_recorded_usage_that_would_wrap_is_refused_naming_file_and_message() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let max = u64::MAX;
    // Two calls of 2^64 − 1 prompt tokens: their sum wrapped to a small figure.
    std::fs::write(
        p.join("chat.json"),
        format!(
            r#"{{"messages": [{{"role":"user","content":"task"}}, {{"role":"assistant","content":"a","usage":{{"prompt_tokens":{max}}}}}, {{"role":"user","content":"more"}}, {{"role":"assistant","content":"b","usage":{{"prompt_tokens":2}}}}]}}"#
        ),
    )
    .unwrap();
    assert_fails_with(
        &ctxlab(p, &["import", "chat.json", "--format", "openai-chat", "--out", "o.jsonl"]),
        &["chat.json: key `messages[1]`: recorded usage: with this message's, the transcript's model calls add up to more than 2^53 tokens"],
    );
    std::fs::write(
        p.join("t.traj.json"),
        format!(
            r#"{{"messages": [{{"role":"user","content":"task"}}, {{"role":"assistant","content":"a","extra":{{"response":{{"usage":{{"prompt_tokens":{big},"completion_tokens":{big}}}}}}}}}, {{"role":"assistant","content":"b","extra":{{"response":{{"usage":{{"prompt_tokens":{big},"completion_tokens":1}}}}}}}}]}}"#,
            big = 1u64 << 52
        ),
    )
    .unwrap();
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
        &["t.traj.json: key `messages[2]`: recorded usage"],
    );
    let line = |id: &str, input: u64, output: u64| {
        format!("{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"content\":[{{\"type\":\"text\",\"text\":\"hi\"}}],\"usage\":{{\"input_tokens\":{input},\"output_tokens\":{output}}}}}}}\n")
    };
    std::fs::write(
        p.join("cc.jsonl"),
        format!(
            "{{\"type\":\"user\",\"message\":{{\"content\":\"task\"}}}}\n{}{}",
            line("m1", 1 << 52, 0),
            line("m2", 1 << 52, 5)
        ),
    )
    .unwrap();
    assert_fails_with(
        &ctxlab(
            p,
            &[
                "import",
                "cc.jsonl",
                "--format",
                "claude-code",
                "--out",
                "o.jsonl",
            ],
        ),
        &["cc.jsonl:3: recorded usage"],
    );
    assert!(!p.join("o.jsonl").exists());
}

// ---------------------------------------------------------------------------------------------
// R9, R10, R11, R12: estimates and limits.

/// An experiment at the documented limit of noise levels: 255 × 257 rates.
fn widest_noise() -> String {
    let rates = |n: usize| {
        (0..n)
            .map(|i| format!("{}", i as f64 / 1000.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "name = \"wide\"\nseed = 1\nreplicates = 1\n[histories]\ngenerate = {{ count = 1, records = [5, 5], required_share = 0.2, seed = 1 }}\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\nfalse_negative = [{}]\nfalse_positive = [{}]\n[output]\ndir = \"out\"\n",
        rates(255),
        rates(257)
    )
}

#[test]
fn r9_charts_of_a_grid_at_the_limit_are_in_the_estimate_and_refused_up_front() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("wide.toml"), widest_noise()).unwrap();
    let o = ctxlab(p, &["sweep", "wide.toml", "-q", "--max-memory", "8G"]);
    assert_fails_with(
        &o,
        &[
            "more than the --max-memory limit, 8.0 GiB",
            "the charts take most of it",
            "for a chart of 65535 panels, one per noise level",
            "sweep fewer noise levels",
        ],
    );
    assert!(!p.join("out").exists());
    // The estimate says so before anything runs.
    let o = ctxlab(
        p,
        &["sweep", "wide.toml", "--dry-run", "--max-memory", "off"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("peak memory ≈ ") && stderr(&o).contains(" GiB (estimated)"),
        "{}",
        stderr(&o)
    );
    // A shard draws no charts and runs; the merge, which draws them, is refused up front.
    ok(p, &["sweep", "wide.toml", "-q", "--shard", "0/1"]);
    let o = ctxlab(p, &["merge", "out", "--max-memory", "8G"]);
    assert_fails_with(
        &o,
        &["the merge's charts need an estimated", "(a chart of 65535 panels, one per noise level), more than the --max-memory limit, 8.0 GiB"],
    );
    assert!(!p.join("out/manifest.json").exists());
    std::fs::remove_dir_all(p.join("out")).unwrap();
    // `plot` checks the charts of the grid its manifest names before drawing: a folder whose
    // manifest holds the widest noise grid is refused on a machine that cannot draw it.
    let fits = ctxlab::sweep::machine::machine_memory(Path::new("/sys/fs/cgroup"))
        .is_none_or(|(b, _)| b > 64 << 30);
    if !fits {
        std::fs::write(p.join("exp.toml"), EXP).unwrap();
        ok(p, &["sweep", "exp.toml", "-q", "--out", "small"]);
        let path = p.join("small/manifest.json");
        let mut m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let rates = |n: usize| (0..n).map(|i| i as f64 / 1000.0).collect::<Vec<f64>>();
        m["grid"]["false_negative"] = serde_json::json!(rates(255));
        m["grid"]["false_positive"] = serde_json::json!(rates(257));
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
        let before = std::fs::read(p.join("small/report.md")).unwrap();
        assert_fails_with(
            &ctxlab(p, &["plot", "small"]),
            &[
                "the charts need an estimated",
                "(a chart of 65535 panels, one per noise level)",
                "sweep fewer noise levels",
            ],
        );
        assert_eq!(std::fs::read(p.join("small/report.md")).unwrap(), before);
    }
    // Without charts to draw (CSV only: no summary.parquet to draw them from) it fits.
    let o = ctxlab(
        p,
        &[
            "sweep",
            "wide.toml",
            "--dry-run",
            "--max-memory",
            "8G",
            "--set",
            "output.formats=[\"csv\"]",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[cfg(target_os = "linux")]
#[test]
fn r10_an_address_space_limit_refuses_the_run_instead_of_aborting_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("wide.toml"), widest_noise()).unwrap();
    let o = limited(
        p,
        &["sweep", "wide.toml", "-q"],
        &[(libc::RLIMIT_AS, 3 << 30)],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("of memory at its peak, more than "), "{err}");
    // The smallest limit is named: under 3 GiB of address space that is RLIMIT_AS unless
    // the machine has less memory available still.
    assert!(
        err.contains("the room left under the address-space limit (RLIMIT_AS, ulimit -v: 3.0 GiB")
            || err.contains("MemAvailable"),
        "{err}"
    );
    assert!(!err.contains("lower --chunk-cells"), "{err}");
    assert!(!p.join("out").exists());
    // A run that fits is not refused under the same limit.
    std::fs::write(p.join("exp.toml"), EXP).unwrap();
    let o = limited(
        p,
        &["sweep", "exp.toml", "-q"],
        &[(libc::RLIMIT_AS, 3 << 30)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn r11_an_experiment_file_over_the_limit_is_refused_before_parsing() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut text = EXP.to_string();
    text.push_str(&format!("# {}\n", "x".repeat(5 << 20)));
    std::fs::write(p.join("big.toml"), &text).unwrap();
    let o = ctxlab(p, &["sweep", "big.toml", "--dry-run"]);
    assert_fails_with(
        &o,
        &[&format!("big.toml: is {} bytes, more than the 4194304 bytes an experiment file may have (README, \"Limits\")", text.len())],
    );
    one_line(&o);
}

#[test]
fn r12_a_toml_error_on_a_huge_line_prints_a_bounded_message() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // A 2 MB line with its error at the end, and deep nesting.
    let line = format!("seed = [{}", "3, ".repeat(700_000));
    std::fs::write(p.join("long.toml"), format!("name = \"x\"\n{line}\n")).unwrap();
    std::fs::write(
        p.join("deep.toml"),
        format!("a = {}\n", "[".repeat(100_000)),
    )
    .unwrap();
    for (file, needle) in [("long.toml", "characters cut)"), ("deep.toml", "deep.toml")] {
        let o = ctxlab(p, &["sweep", file, "--dry-run"]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(err.len() < 2_000, "{file}: {} bytes of message", err.len());
        assert!(err.contains(needle), "{err}");
    }
    let err = stderr(&ctxlab(p, &["sweep", "long.toml", "--dry-run"]));
    assert!(
        err.contains("TOML parse error at line 2, column 2100008"),
        "{err}"
    );
    assert!(err.contains("unclosed array, expected `]`"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// R13: the dry run checks what the run checks.

#[test]
fn r13_a_dry_run_refuses_what_the_run_would_refuse() {
    let d = setup();
    let p = d.path();
    // A spec's own keep_recent beside a keep_recent axis of two values: two identical groups.
    let set = [
        "--set",
        "sweep.strategies=[\"recent\", \"mask(keep_recent=2)\"]",
        "--set",
        "sweep.keep_recent=[1, 3]",
    ];
    let needles = [
        "exp.toml: key `sweep.keep_recent`: mask(keep_recent=2) sets its own keep_recent, which wins over this axis",
        "drop keep_recent from the spec",
    ];
    for extra in [&["--dry-run"][..], &["-q"][..]] {
        let mut args = vec!["sweep", "exp.toml"];
        args.extend_from_slice(&set);
        args.extend_from_slice(extra);
        assert_fails_with(&ctxlab(p, &args), &needles);
        assert!(!p.join("out").exists());
    }
    // One axis value is fine.
    ok(
        p,
        &[
            "sweep",
            "exp.toml",
            "--dry-run",
            "--set",
            "sweep.strategies=[\"recent\", \"mask(keep_recent=2)\"]",
            "--set",
            "sweep.keep_recent=[1]",
        ],
    );
    // The folder checks too: an unfinished run, a foreign folder.
    killed(p);
    assert_fails_with(
        &ctxlab(p, &["sweep", "exp.toml", "--dry-run"]),
        &["holds an unfinished run", "--resume"],
    );
    assert_fails_with(
        &ctxlab(p, &["sweep", "exp.toml", "--dry-run", "--resume"]),
        &["cannot resume: the unfinished run has another --chunk-cells"],
    );
    std::fs::create_dir(p.join("mine")).unwrap();
    std::fs::write(p.join("mine/notes.txt"), "x").unwrap();
    assert_fails_with(
        &ctxlab(p, &["sweep", "exp.toml", "--dry-run", "--out", "mine"]),
        &["mine: this folder holds files that ctxlab did not write"],
    );
}

// ---------------------------------------------------------------------------------------------
// R14: a kill at the last instant of a publish.

#[test]
fn r14_a_kill_after_the_manifest_leaves_a_folder_the_next_run_accepts() {
    let d = setup();
    let p = d.path();
    ok(p, &["sweep", "exp.toml", "-q", "--out", "straight"]);
    let o = ctxlab_env(p, &["sweep", "exp.toml", "-q"], ("CTXLAB_FAULT", "cleanup"));
    assert!(!o.status.success());
    assert!(p.join("out/manifest.json").is_file());
    assert!(p.join("out/.partial/checkpoint.json").is_file());
    // The next plain run finds the publish done, clears its staging and runs.
    ok(p, &["sweep", "exp.toml", "-q"]);
    assert!(!p.join("out/.partial").exists());
    for f in ["cells.parquet", "summary.csv", "pairs.csv"] {
        assert_eq!(
            std::fs::read(p.join("out").join(f)).unwrap(),
            std::fs::read(p.join("straight").join(f)).unwrap(),
            "{f}"
        );
    }
    // The same for a shard and for `compare`.
    let o = ctxlab_env(
        p,
        &["sweep", "exp.toml", "-q", "--shard", "0/2", "--out", "s"],
        ("CTXLAB_FAULT", "cleanup"),
    );
    assert!(!o.status.success());
    ok(
        p,
        &["sweep", "exp.toml", "-q", "--shard", "0/2", "--out", "s"],
    );
    assert!(!p.join("s/.partial-shard=0").exists());
    let o = ctxlab_env(
        p,
        &["compare", "out", "--baseline", "recent"],
        ("CTXLAB_FAULT", "cleanup"),
    );
    assert!(!o.status.success());
    ok(p, &["compare", "out", "--baseline", "required"]);
    assert!(!p.join("out/.partial-compare").exists());
}

// ---------------------------------------------------------------------------------------------
// Leftovers: a full disk, and the endpoint client's retries.

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_no_partial_or_temporary_file() {
    let d = setup();
    let p = d.path();
    let fsize = libc::RLIMIT_FSIZE;
    let o = limited(
        p,
        &[
            "generate",
            "exp.toml",
            "--out",
            "h.jsonl",
            "--set",
            "histories.generate.records=[3000,3000]",
        ],
        &[(fsize, 4096)],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_dir(p).unwrap().count(),
        1,
        "only exp.toml: no h.jsonl, no h.jsonl.partial"
    );
    ok(p, &["sweep", "exp.toml", "-q"]);
    let out = p.join("out");
    let before = listing(&out);
    for args in [
        &["plot", "out"][..],
        &["compare", "out", "--baseline", "recent"][..],
    ] {
        let o = limited(p, args, &[(fsize, 20_000)]);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(listing(&out), before, "{args:?}: the folder changed");
    }
}

/// Every file under `dir` with its bytes (the lock file aside).
fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, at: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(at).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                if name != ".ctxlab.lock" {
                    out.push((name, std::fs::read(&path).unwrap()));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn fill_retries_are_bounded_and_retry_after_is_honoured() {
    use ctxlab::llm::{Endpoint, SummaryCache, SummaryRequest};
    use std::io::{BufRead, BufReader, Read, Write};
    let d = tempfile::tempdir().unwrap();
    let o = ctxlab(
        d.path(),
        &[
            "summaries",
            "fill",
            "r.jsonl",
            "--url",
            "http://127.0.0.1:9",
            "--into",
            "c",
            "--retries",
            "11",
        ],
    );
    assert_fails_with(&o, &["--retries", "11"]);
    // A server that answers 429 with `Retry-After: 2`, then 200.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        for status in [429, 200] {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end().to_ascii_lowercase();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let text = if status == 200 {
                r#"{"choices":[{"message":{"role":"assistant","content":"done"}}]}"#
            } else {
                r#"{"error":{"message":"slow down"}}"#
            };
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nRetry-After: 2\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            )
            .unwrap();
        }
    });
    let request = SummaryRequest {
        prompt: "P".into(),
        input: "x".into(),
        model: "m".into(),
        max_tokens: None,
    };
    let cache = SummaryCache::open(&d.path().join("cache")).unwrap();
    let endpoint = Endpoint {
        concurrency: 1,
        retries: 1,
        timeout: std::time::Duration::from_secs(10),
        backoff: std::time::Duration::from_millis(10),
        ..Endpoint::new(url)
    };
    let started = std::time::Instant::now();
    assert_eq!(
        endpoint
            .fill(std::slice::from_ref(&request), &cache)
            .unwrap(),
        1
    );
    let waited = started.elapsed();
    assert!(waited >= std::time::Duration::from_secs(2), "{waited:?}");
    assert!(waited < std::time::Duration::from_secs(8), "{waited:?}");
    assert_eq!(cache.get(&request.hash()).unwrap().as_deref(), Some("done"));
    server.join().unwrap();
}
