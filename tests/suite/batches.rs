//! Commands that read many transcripts or history files: every real Claude Code session of
//! `../shared/data/` imports whole; a batch with bad files either refuses naming every one, or
//! with `--skip-bad` leaves each out whole, names it and (a sweep) lists it in its manifest; a
//! transcript without a compaction is counted, not refused, by the commands that look for one.

use crate::common::*;
use ctxlab::import::{self, Format, Problems, Tally};
use std::collections::BTreeMap;
use std::path::Path;

/// Lines of each `type` in a JSON Lines file, counted apart from ctxlab's reader.
fn lines_by_type(text: &str) -> BTreeMap<String, u64> {
    let mut by_type = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a real line is JSON");
        let t = v["type"].as_str().expect("every real line has a type");
        *by_type.entry(t.to_string()).or_insert(0) += 1;
    }
    by_type
}

#[test]
fn every_real_claude_code_session_imports_whole() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let started = std::time::Instant::now();
    let mut files: Vec<std::path::PathBuf> = ["claude-code", "claude-code-entire"]
        .iter()
        .flat_map(|d| std::fs::read_dir(data.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 29, "4 + 25 sessions");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut tally = Tally::default();
        let runs = import::read_tallied(
            path,
            Format::ClaudeCode,
            &mut Problems::strict(),
            &mut tally,
        )
        .unwrap_or_else(|e| panic!("a real session is refused: {e}"));
        // Every line read, under its own type, and each either gave records or has a reason.
        let read: BTreeMap<String, u64> = tally
            .types
            .iter()
            .map(|(t, n)| (t.clone(), n.lines))
            .collect();
        assert_eq!(read, lines_by_type(&text), "{}", path.display());
        for (t, n) in &tally.types {
            let skipped: u64 = n.skipped.values().sum();
            assert_eq!(n.gave + skipped, n.lines, "{}: type {t}", path.display());
            assert!(
                !n.skipped.contains_key("malformed line"),
                "{}",
                path.display()
            );
        }
        // Every record given is in the run.
        let records: u64 = tally.types.values().flat_map(|t| t.records).sum();
        assert_eq!(
            runs[0].history.records.len() as u64,
            records,
            "{}",
            path.display()
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{} real sessions imported whole in {seconds:.1} s",
        files.len()
    );
}

/// A good Claude Code session, and two bad ones: a malformed line 2, and a result whose call
/// no line declared (line 1).
fn three_transcripts(d: &Path) {
    let good = r#"{"type":"user","message":{"role":"user","content":"Fix parse_args in src/main.rs"}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Reading src/main.rs now."}],"usage":{"input_tokens":12,"output_tokens":4}}}
"#;
    std::fs::write(d.join("good.jsonl"), good).unwrap();
    std::fs::write(
        d.join("broken.jsonl"),
        good.replacen("{\"type\":\"assistant\"", "not json {", 1),
    )
    .unwrap();
    std::fs::write(
        d.join("orphan.jsonl"),
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}}
"#,
    )
    .unwrap();
}

const BAD: [&str; 2] = [
    "broken.jsonl:2: column 2: expected ident",
    "orphan.jsonl:1: `tool_result` refers to tool_use_id \"toolu_9\"",
];

/// Every command that reads many transcripts, with its arguments after the files.
fn batch_commands() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    let cc = ["--format", "claude-code"];
    vec![
        (vec!["import"], [&cc[..], &["--out", "out.jsonl"]].concat()),
        (vec!["labels"], cc.to_vec()),
        (vec!["facts"], cc.to_vec()),
        (vec!["calibrate"], cc.to_vec()),
        (vec!["calibrate"], [&cc[..], &["--per-call"]].concat()),
        (
            vec!["calibrate"],
            [&cc[..], &["--fit-cache", "anthropic"]].concat(),
        ),
        (vec!["calibrate", "--summaries"], vec![]),
        (vec!["summaries", "judge"], vec![]),
        (vec!["flags", "audit"], cc.to_vec()),
    ]
}

#[test]
fn a_batch_refusal_names_every_bad_file_and_skip_bad_leaves_each_out_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    three_transcripts(d);
    for (command, rest) in batch_commands() {
        let mut args = command.clone();
        args.extend(["good.jsonl", "broken.jsonl", "orphan.jsonl"]);
        args.extend(&rest);
        let o = ctxlab(d, &args);
        let mut needles = vec!["2 of the 3 transcripts cannot be read; nothing was computed:"];
        needles.extend(BAD);
        needles.push("--skip-bad");
        assert_fails_with(&o, &needles);
        assert!(!d.join("out.jsonl").exists());
        args.push("--skip-bad");
        let o = ctxlab(d, &args);
        let err = stderr(&o);
        for needle in BAD
            .iter()
            .map(|b| format!("left out: {b}"))
            .chain(["2 bad file(s) left out whole (--skip-bad); the others were read".to_string()])
        {
            assert!(
                err.contains(&needle),
                "{args:?}: stderr lacks {needle:?}:\n{err}"
            );
        }
        // What runs on the good file alone runs here; what refuses it (no compaction to
        // judge or measure) refuses for that, not for the bad files.
        let alone: Vec<&str> = command
            .iter()
            .copied()
            .chain(["good.jsonl"])
            .chain(rest.iter().copied())
            .collect();
        let _ = std::fs::remove_file(d.join("out.jsonl"));
        let single = ctxlab(d, &alone);
        assert_eq!(
            o.status.success(),
            single.status.success(),
            "{args:?}: {err}"
        );
        assert_eq!(stdout(&o), stdout(&single), "{args:?}");
        let _ = std::fs::remove_file(d.join("out.jsonl"));
    }
    // The import of the batch keeps the good session whole: its 2 records, nothing of the rest.
    let o = ctxlab(
        d,
        &[
            "import",
            "good.jsonl",
            "broken.jsonl",
            "orphan.jsonl",
            "--format",
            "claude-code",
            "--out",
            "o.jsonl",
            "--skip-bad",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let h = ctxlab::history::load_jsonl(&d.join("o.jsonl")).unwrap();
    assert_eq!(
        (h.len(), h[0].name.as_str(), h[0].records.len()),
        (1, "good", 2)
    );
}

#[test]
fn a_session_sweep_and_its_dry_run_name_every_bad_file_and_list_those_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    three_transcripts(d);
    std::fs::write(
        d.join("s.toml"),
        r#"name = "s"
seed = 1
[histories]
files = ["good.jsonl", "broken.jsonl", "orphan.jsonl"]
format = "claude-code"
[session]
strategies = ["raw"]
windows = [100000]
ratios = [0.8]
[output]
dir = "out"
"#,
    )
    .unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["sweep", "s.toml", "-q"];
        args.extend(extra);
        let mut needles = vec!["2 of the 3 transcripts cannot be read"];
        needles.extend(BAD);
        assert_fails_with(&ctxlab(d, &args), &needles);
        assert!(!d.join("out").exists());
        args.push("--skip-bad");
        let o = ctxlab(d, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        for b in BAD {
            assert!(
                stderr(&o).contains(&format!("left out: {b}")),
                "{}",
                stderr(&o)
            );
        }
    }
    // The manifest lists the files left out, each with its reason; the one history was run.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["histories"], 1);
    let left: Vec<(&str, &str)> = manifest["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["file"].as_str().unwrap(), l["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(left.len(), 2);
    assert_eq!(left[0].0, "broken.jsonl");
    assert!(left[0].1.starts_with(BAD[0]), "{}", left[0].1);
    assert_eq!(left[1].0, "orphan.jsonl");
    assert!(left[1].1.starts_with(BAD[1]), "{}", left[1].1);
    // A sweep of history files (JSONL) names every bad one too.
    std::fs::write(d.join("a.jsonl"), "{\"id\":1,\"text\":\"a\"}\n").unwrap();
    std::fs::write(d.join("b.jsonl"), "{\"id\":1}\n").unwrap();
    std::fs::write(
        d.join("c.jsonl"),
        "{\"id\":1,\"text\":\"c\",\"kind\":\"robot\"}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("h.toml"),
        "name = \"h\"\nseed = 1\n[histories]\nfiles = [\"a.jsonl\", \"b.jsonl\", \"c.jsonl\"]\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n[output]\ndir = \"hout\"\n",
    )
    .unwrap();
    assert_fails_with(
        &ctxlab(d, &["sweep", "h.toml", "--dry-run"]),
        &[
            "2 of the 3 history files cannot be read",
            "b.jsonl:1: missing field `text`",
            "c.jsonl:1: unknown kind \"robot\"",
        ],
    );
}

#[test]
fn a_transcript_without_a_compaction_is_counted_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    three_transcripts(d);
    // The judge's hand-worked session, with one compaction summary.
    std::fs::write(d.join("summary.jsonl"), crate::judge::SESSION).unwrap();
    // Judged alone, then beside a session without one: the same rows, and the other counted.
    let alone = ctxlab(d, &["summaries", "judge", "summary.jsonl", "--csv"]);
    assert!(alone.status.success(), "{}", stderr(&alone));
    let both = ctxlab(
        d,
        &["summaries", "judge", "good.jsonl", "summary.jsonl", "--csv"],
    );
    assert!(both.status.success(), "{}", stderr(&both));
    let rows = |o: &std::process::Output| {
        // The simulated summariser's draws are keyed by the transcript's place: compare the
        // columns that do not rest on them (summariser, summaries, real_kept, and extractive's).
        stdout(o)
            .lines()
            .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&alone), rows(&both));
    assert_eq!(rows(&both)[1], "simulated,1,0.500000");
    let text = ctxlab(d, &["summaries", "judge", "good.jsonl", "summary.jsonl"]);
    assert!(
        stdout(&text).contains(
            "1 of the 2 transcripts hold no compaction summary: counted, nothing to judge in them"
        ),
        "{}",
        stdout(&text)
    );
    // calibrate --summaries counts it the same way.
    let o = ctxlab(
        d,
        &["calibrate", "--summaries", "good.jsonl", "summary.jsonl"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The shared sessions: three of the four claude-code ones hold no summary.
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let mut args = vec!["summaries".to_string(), "judge".to_string()];
    let mut files: Vec<String> = std::fs::read_dir(data.join("claude-code"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".jsonl"))
        .collect();
    files.sort();
    args.extend(files);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ctxlab(&root(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("3 of the 4 transcripts hold no compaction summary"),
        "{}",
        stdout(&o)
    );
}
