//! Causes a hostile or careless user finds past the loaders: each case is first set up (a
//! timestamp with a multi-byte character, a kill at every instant of a staging folder's
//! cleanup, a dry run whose `llm` answers are missing, a 309-digit number, a parameter given
//! twice, a server asking to wait, a 70 000-character column), then the refusal or the correct
//! result is checked.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// A refusal: exit status 1 (not a panic's 101 nor a signal) and a line starting `error: `
/// (after a dry run's estimate, if any).
fn refused(o: &std::process::Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert!(
        stderr(o).lines().any(|l| l.starts_with("error: ")),
        "{}",
        stderr(o)
    );
    assert_fails_with(o, needles);
}

// R3 -----------------------------------------------------------------------------------------

#[test]
fn r3_a_timestamp_with_a_multi_byte_character_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `é` where the seconds' second digit belongs, and `日本` in the offset: byte offsets 18 and
    // 23 fall inside the characters.
    for (name, stamp) in [
        ("seconds.jsonl", "2026-02-07T00:13:5é.219Z"),
        ("offset.jsonl", "2026-02-07T00:13:59.219+日本"),
    ] {
        let line = format!(
            "{{\"type\":\"user\",\"timestamp\":\"{stamp}\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
        );
        std::fs::write(d.join(name), line).unwrap();
        let o = ctxlab(
            d,
            &[
                "import",
                name,
                "--format",
                "claude-code",
                "--out",
                "o.jsonl",
            ],
        );
        refused(
            &o,
            &[
                &format!("{name}:1: `timestamp`: timestamp"),
                "expected RFC 3339",
            ],
        );
        // A history file's `time` the same way, through a sweep's dry run.
        let history = format!("{{\"id\":1,\"text\":\"a\",\"time\":\"{stamp}\"}}\n");
        std::fs::write(d.join("h.jsonl"), history).unwrap();
        std::fs::write(
            d.join("e.toml"),
            "name = \"e\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n",
        )
        .unwrap();
        let o = ctxlab(d, &["sweep", "e.toml", "--dry-run"]);
        refused(&o, &["h.jsonl:1: `time`: timestamp", "expected RFC 3339"]);
    }
    assert!(!d.join("o.jsonl").exists());
}

// R4 -----------------------------------------------------------------------------------------

/// Runs `args` killed after `k` removals of its staging folder's cleanup (`cleanup:K`); whether
/// it was killed (it was not when the cleanup has fewer removals).
fn killed_in_cleanup(dir: &Path, args: &[&str], k: usize) -> bool {
    let o = ctxlab_env(dir, args, ("CTXLAB_FAULT", &format!("cleanup:{k}")));
    !o.status.success()
}

#[test]
fn r4_a_kill_at_any_instant_of_a_staging_cleanup_leaves_a_folder_the_next_run_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("exp.toml"), crate::links_locks_limits::EXP).unwrap();
    ok(p, &["sweep", "exp.toml", "-q", "--out", "straight"]);
    let straight = std::fs::read(p.join("straight/summary.csv")).unwrap();
    // The sweep's own staging folder, then each way of running again.
    let mut kills = 0;
    for k in 1..=8 {
        for again in [&[][..], &["--resume"], &["--force"]] {
            if !killed_in_cleanup(p, &["sweep", "exp.toml", "-q"], k) {
                continue;
            }
            kills += 1;
            // Killed mid-cleanup: the tables are published; the staging folder is half gone.
            assert!(p.join("out/manifest.json").is_file(), "k = {k}");
            let mut args = vec!["sweep", "exp.toml", "-q"];
            args.extend(again);
            ok(p, &args);
            assert!(!p.join("out/.partial").exists(), "k = {k}, {again:?}");
            assert_eq!(std::fs::read(p.join("out/summary.csv")).unwrap(), straight);
        }
    }
    // The cleanup removes a checkpoint, the staged leftovers, the journal, the mark, the folder.
    assert!(kills >= 3 * 4, "only {kills} kills landed in the cleanup");
    // `merge`, `compare` and `plot` stage in `.partial-merge`, `.partial-compare`, `.partial-plot`.
    crate::hostile::sharded(p);
    let commands: [(&[&str], &str); 3] = [
        (&["merge", "s"], "s/.partial-merge"),
        (
            &["compare", "out", "--baseline", "recent"],
            "out/.partial-compare",
        ),
        (&["plot", "out"], "out/.partial-plot"),
    ];
    for (args, staging) in commands {
        let mut landed = 0;
        for k in 1..=6 {
            if killed_in_cleanup(p, args, k) {
                landed += 1;
            }
            // Whatever instant it was killed at, the same command runs again and clears it.
            ok(p, args);
            assert!(!p.join(staging).exists(), "{args:?} k = {k}");
            // And a sweep into the folder still runs.
            if staging.starts_with("out") {
                ok(p, &["sweep", "exp.toml", "-q"]);
            }
        }
        assert!(
            landed >= 2,
            "{args:?}: only {landed} kills landed in the cleanup"
        );
    }
}

// R5 -----------------------------------------------------------------------------------------

#[test]
fn r5_a_dry_run_checks_the_answers_the_llm_summariser_needs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.jsonl"), crate::llm_sweep::HISTORY).unwrap();
    std::fs::write(d.join("llm.toml"), crate::llm_sweep::EXPERIMENT).unwrap();
    // No cache folder at all: the dry run refuses as the run would, and writes nothing.
    let o = ctxlab(d, &["sweep", "llm.toml", "--dry-run"]);
    refused(
        &o,
        &[
            "1 summaries the `llm` summariser needs are not in answers",
            "ctxlab summaries export",
        ],
    );
    assert!(!d.join("out").exists() && !d.join("answers").exists());
    // An empty cache folder: the same.
    std::fs::create_dir(d.join("answers")).unwrap();
    refused(
        &ctxlab(d, &["sweep", "llm.toml", "--dry-run"]),
        &["1 summaries the `llm` summariser needs are not in answers"],
    );
    // Answered (export, a Batch answer, import): the dry run passes.
    ok(
        d,
        &["summaries", "export", "llm.toml", "--out", "req.jsonl"],
    );
    let request: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(d.join("req.jsonl")).unwrap().trim()).unwrap();
    let id = request["custom_id"].as_str().unwrap();
    let answer = serde_json::json!({"id": "batch_req_1", "custom_id": id, "response": {"status_code": 200,
        "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "E0308"}}]}}, "error": null});
    std::fs::write(d.join("resp.jsonl"), format!("{answer}\n")).unwrap();
    ok(
        d,
        &[
            "summaries",
            "import",
            "resp.jsonl",
            "--requests",
            "req.jsonl",
            "--into",
            "answers",
        ],
    );
    let o = ctxlab(d, &["sweep", "llm.toml", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dry run: nothing was written"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("out").exists());
}

// R7 -----------------------------------------------------------------------------------------

#[test]
fn r7_a_309_digit_number_is_cut_and_a_parameter_given_twice_is_refused_in_every_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(root().join("data/article12.jsonl"), d.join("h.jsonl")).unwrap();
    // 1e308 printed whole is a 1 and 308 zeros; the message shows 80 digits and an ellipsis.
    let o = ctxlab(d, &["table", "h.jsonl", "--budgets", "1e308"]);
    refused(
        &o,
        &[&format!("budget 1{}… is out of range", "0".repeat(79))],
    );
    assert!(stderr(&o).chars().count() < 200, "{}", stderr(&o));
    std::fs::write(
        d.join("e.toml"),
        "name = \"e\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\nfalse_negative = [1e308]\n",
    )
    .unwrap();
    let o = ctxlab(d, &["sweep", "e.toml", "--dry-run"]);
    refused(
        &o,
        &[&format!(
            "sweep.false_negative[0]`: 1{}… is out of range",
            "0".repeat(79)
        )],
    );

    // A parameter given twice, in each spec grammar: one message.
    let session = root().join("tests/fixtures/import/claude-session.jsonl");
    let session = session.to_str().unwrap();
    let twice = |what: &str, text: &str, key: &str| {
        format!("{what} \"{text}\": parameter `{key}` is given twice; give each parameter once")
    };
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![
                "table",
                "h.jsonl",
                "--strategies",
                "recent(keep_recent=3, keep_recent=4)",
            ],
            twice(
                "strategy",
                "recent(keep_recent=3, keep_recent=4)",
                "keep_recent",
            ),
        ),
        (
            vec![
                "calibrate",
                session,
                "--format",
                "claude-code",
                "--cache",
                "anthropic(ttl=300, ttl=3600)",
            ],
            twice("cache", "anthropic(ttl=300, ttl=3600)", "ttl"),
        ),
        (
            vec![
                "import",
                session,
                "--format",
                "claude-code",
                "--out",
                "o.jsonl",
                "--label",
                "hindsight(min_gap=2, min_gap=3)",
            ],
            twice("label rule", "hindsight(min_gap=2, min_gap=3)", "min_gap"),
        ),
        (
            vec![
                "calibrate",
                session,
                "--format",
                "claude-code",
                "--cost",
                "tokens(overhead=1, overhead=2)",
            ],
            twice("cost model", "tokens(overhead=1, overhead=2)", "overhead"),
        ),
        (
            vec![
                "summaries",
                "judge",
                session,
                "--summariser",
                "extractive(flagged_first=true, flagged_first=false)",
            ],
            "parameter `flagged_first` is given twice; give each parameter once".to_string(),
        ),
        (
            vec!["sweep", "n.toml", "--dry-run"],
            twice("noise model", "uniform(fn=0.1, fn=0.2)", "fn"),
        ),
    ];
    std::fs::write(
        d.join("n.toml"),
        "name = \"n\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\nnoise = [\"uniform(fn=0.1, fn=0.2)\"]\n",
    )
    .unwrap();
    for (args, message) in cases {
        let o = ctxlab(d, &args);
        // Refused (by clap, exit 2, for a flag it parses itself; by ctxlab, exit 1), no panic.
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
        assert_fails_with(&o, &[&message]);
    }
    assert!(!d.join("o.jsonl").exists());
}

// R8 -----------------------------------------------------------------------------------------

/// A server on 127.0.0.1 answering every request with 429 and `Retry-After: {after}`, until
/// `answers` requests were answered; returns its address and a count of the requests it saw.
fn always_busy(
    after: u64,
    answers: usize,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for _ in 0..answers {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end().to_ascii_lowercase();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let text = r#"{"error":{"message":"slow down"}}"#;
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: {after}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn r8_retry_after_sets_the_wait_bounded() {
    use ctxlab::llm::{Endpoint, SummaryCache, SummaryRequest};
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let request = SummaryRequest {
        prompt: "P".into(),
        input: "x".into(),
        model: "m".into(),
        max_tokens: None,
    };
    // `Retry-After: 1` against a 30 s backoff: 3 retries wait 1 s each (≈ 3 s), where taking
    // the longer of the two waited 30 + 60 + 60 s.
    let (url, seen) = always_busy(1, 4);
    let endpoint = Endpoint {
        concurrency: 1,
        retries: 3,
        timeout: Duration::from_secs(10),
        backoff: Duration::from_secs(30),
        ..Endpoint::new(url)
    };
    let started = Instant::now();
    let e = endpoint
        .fill(std::slice::from_ref(&request), &cache)
        .unwrap_err()
        .to_string();
    let waited = started.elapsed();
    assert!(e.contains("status 429: slow down (4 tries)"), "{e}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    // A wait past the bound is cut to it: `Retry-After: 3600` bounded at 0.2 s, 3 retries.
    let (url, seen) = always_busy(3600, 4);
    let endpoint = Endpoint {
        max_retry_after: Duration::from_millis(200),
        ..endpoint.clone()
    };
    let endpoint = Endpoint { url, ..endpoint };
    let started = Instant::now();
    assert!(endpoint
        .fill(std::slice::from_ref(&request), &cache)
        .is_err());
    let waited = started.elapsed();
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert_eq!(
        ctxlab::llm::endpoint::MAX_RETRY_AFTER,
        Duration::from_secs(120)
    );
    assert_eq!(
        Endpoint::new("http://x").max_retry_after,
        Duration::from_secs(120)
    );
}

// R9 -----------------------------------------------------------------------------------------

#[test]
fn r9_inspect_prints_a_column_longer_than_65535_characters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tool = "t".repeat(70_000);
    std::fs::write(
        d.join("h.jsonl"),
        format!(
            "{{\"id\":1,\"kind\":\"user\",\"text\":\"do it\",\"required\":true}}\n{{\"id\":2,\"kind\":\"tool_call\",\"tool\":\"{tool}\",\"text\":\"x\"}}\n{{\"id\":3,\"kind\":\"tool_result\",\"tool\":\"{tool}\",\"text\":\"result\"}}\n"
        ),
    )
    .unwrap();
    let out = ok(
        d,
        &[
            "inspect",
            "h.jsonl",
            "--strategy",
            "recent",
            "--budget",
            "100",
        ],
    );
    // The tool column is as wide as its 70 000 characters: the user's `-` padded to it.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with(['1', '2', '3']))
        .collect();
    assert_eq!(rows.len(), 3, "{}", &out[..out.len().min(500)]);
    assert!(
        rows[0].starts_with(&format!(" 1  user         -{}  ", " ".repeat(69_999))),
        "{}",
        &rows[0][..80]
    );
    assert!(rows[1].starts_with(&format!(" 2  tool_call    {tool}  ")));
}
