//! `ctxlab calibrate --summaries`: what a transcript's own compaction summaries keep of the
//! facts of the records they replaced, on a hand-made Claude Code session whose kept facts are
//! known, and on the shared sessions when they are there.

use crate::common::*;
use std::path::Path;

/// A Claude Code session of 7 lines, 8 records (0-based):
///
/// | # | line | record | facts it owns | flagged (`instructions,errors`) |
/// | - | ---- | ------ | ------------- | ------------------------------- |
/// | 0 | user text | user | parse_args, load_config | yes (instruction) |
/// | 1 | assistant text | assistant | read_manifest | no |
/// | 2 | assistant tool_use `ls` | tool_call | none | no |
/// | 3 | tool_result, `is_error` | tool_result | build_index, lib_utils, 1a2b3c4d | yes (error) |
/// | 4 | compact summary naming parse_args, read_manifest | summary | none | no |
/// | 5 | tool_use `cat load_config build_index read_manifest` | tool_call | none | no |
/// | 6 | tool_result | tool_result | cache_dir_path, lru_store | no |
/// | 7 | compact summary naming cache_dir_path (only with `second`) | summary | none | no |
fn session(second: bool) -> String {
    let mut lines = vec![
        r#"{"type":"user","message":{"role":"user","content":"Please fix parse_args and load_config"}}"#,
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"I will look at read_manifest first."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"build_index failed in lib_utils at 1a2b3c4d","is_error":true}]}}"#,
        r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: the user asked to fix parse_args; I read read_manifest."}}"#,
        r#"{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cat load_config build_index read_manifest"}}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"found cache_dir_path and lru_store"}]}}"#,
    ];
    if second {
        lines.push(r#"{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: look in cache_dir_path."}}"#);
    }
    lines.join("\n") + "\n"
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The words of the first line whose first words are `start`.
fn row(out: &str, start: &[&str]) -> Vec<String> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|w| w.len() >= start.len() && w[..start.len()] == *start)
        .unwrap_or_else(|| panic!("no line starting {start:?}:\n{out}"))
}

fn calibrate(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["calibrate", "--summaries"];
    all.extend_from_slice(args);
    let o = ctxlab(dir, &all);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn one_summary_keeps_the_facts_its_text_names() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "one.jsonl", &session(false));
    let out = calibrate(dir.path(), &[&f]);
    // Summary 1 is record 5; it replaced records 1–4: 37 + 35 + 16 + 43 = 131 chars, its own
    // text 64: 64 / 131 = 0.4885.
    assert_eq!(
        row(&out, &["one", "1", "5"]),
        ["one", "1", "5", "64", "4", "131", "0.4885"]
    );
    // The replaced records own 2 + 1 + 3 = 6 facts (the `ls` call none); the summary names
    // parse_args and read_manifest: 1 + 1 + 0 = 2 kept, 2/6 = 0.333. Flagged: the user record
    // and the failed result, 1 of 5 = 0.200; not flagged: the assistant text, 1 of 1.
    let per = |g: &str| {
        let mut start = vec!["one", "1"];
        start.extend(g.split(' '));
        row(&out, &start)
    };
    assert_eq!(per("all")[3..], ["3", "6", "2", "0.333"]);
    assert_eq!(per("flagged")[3..], ["2", "5", "1", "0.200"]);
    assert_eq!(per("not flagged")[4..], ["1", "1", "1", "1.000"]);
    assert_eq!(per("kind user")[4..], ["1", "2", "1", "0.500"]);
    assert_eq!(per("kind tool_result")[4..], ["1", "3", "0", "0.000"]);
    assert!(
        !out.contains("kind tool_call"),
        "the call owns no fact:\n{out}"
    );
    // Pooled, one summary: Wilson over facts only (2/6: 0.097–0.700; 1/5: 0.036–0.624), no
    // interval by summary; record_mean (0.5 + 1 + 0) / 3 = 0.500, flagged (0.5 + 0) / 2.
    assert_eq!(
        row(&out, &["all"]),
        ["all", "1", "3", "6", "2", "0.333", "0.097–0.700", "0.500"]
    );
    assert_eq!(
        row(&out, &["flagged"]),
        [
            "flagged",
            "1",
            "2",
            "5",
            "1",
            "0.200",
            "0.036–0.624",
            "0.250"
        ]
    );
    assert!(
        out.contains("implied: simulated(recall_flagged=0.20, recall_other=1.00)"),
        "{out}"
    );
    // Seen before the summary and used again by the `cat` call after it: load_config,
    // build_index (both first held by flagged records), read_manifest (the assistant's); the
    // summary holds read_manifest only.
    assert!(
        out.contains(": 1 of 3 in the summary (0.333); first held by a flagged record 0 of 2 (0.000), by another 1 of 1 (1.000)"),
        "{out}"
    );
    assert!(
        out.contains("rests on: 1 summary in 1 of 1 transcript(s), 6 facts of the 3 replaced records that own any (of 4 replaced)"),
        "{out}"
    );
}

#[test]
fn two_summaries_pool_and_give_an_interval_by_summary() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "two.jsonl", &session(true));
    let out = calibrate(dir.path(), &[&f]);
    // Summary 2 (record 8) replaced records 5–7, the first summary included: 64 + 55 + 34 =
    // 153 chars against its 32: 0.2092.
    assert_eq!(
        row(&out, &["two", "2", "8"]),
        ["two", "2", "8", "32", "3", "153", "0.2092"]
    );
    // Of those only the last result owns facts (cache_dir_path, lru_store): 1 of 2 kept.
    assert_eq!(
        row(&out, &["two", "2", "all"])[3..],
        ["1", "2", "1", "0.500"]
    );
    // Pooled: 2 + 1 of 6 + 2 = 3/8 = 0.375 (Wilson 0.137–0.694). By summary (the share
    // interval): residuals 2 − 0.375·6 = −0.25 and 1 − 0.375·2 = 0.25, V = 2 · 0.125 / 64,
    // n* = 0.234375 / V = 60, times (t(0.975, 7)/t(0.975, 1))² = (2.3646/12.7062)²: n = 2.078,
    // Jeffreys 0.033–0.893 (normal theory: 0.375 ± 0.794, past both bounds). Not flagged:
    // 1/1 + 1/2 = 2/3, residuals 1/3 and −1/3, V = 2 · (2/9) / 9, n* = 4.5, times
    // (4.3027/12.7062)²: n = 0.516, 0.019–0.995; record_mean (1 + 0.5) / 2 = 0.750.
    assert_eq!(
        row(&out, &["all"]),
        [
            "all",
            "2",
            "4",
            "8",
            "3",
            "0.375",
            "0.137–0.694",
            "0.033–0.893",
            "0.500"
        ]
    );
    assert_eq!(
        row(&out, &["not", "flagged"]),
        [
            "not",
            "flagged",
            "2",
            "2",
            "3",
            "2",
            "0.667",
            "0.208–0.939",
            "0.019–0.995",
            "0.750"
        ]
    );
    assert!(
        out.contains("implied: simulated(recall_flagged=0.20, recall_other=0.67)"),
        "{out}"
    );
    assert!(
        out.contains("rests on: 2 summaries in 1 of 1 transcript(s), 8 facts"),
        "{out}"
    );
}

#[test]
fn the_flag_rules_decide_what_counts_as_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "one.jsonl", &session(false));
    // Without `errors` the failed result is not flagged: flagged is the user record alone
    // (1 of 2), the rest 1 of 1 + 0 of 3 = 1 of 4.
    let out = calibrate(dir.path(), &[&f, "--flags", "instructions"]);
    assert!(out.contains("flags: instructions\n"), "{out}");
    assert!(
        out.contains("implied: simulated(recall_flagged=0.50, recall_other=0.25)"),
        "{out}"
    );
    // A flag rule that sees the future is measured, with a warning.
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--summaries", &f, "--flags", "hindsight"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("`hindsight` looks at what the agent did later"));
}

#[test]
fn no_summary_and_bad_input_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Three lines: no compaction. Nothing measured is no calibration: a non-zero exit, so a
    // script cannot take an empty report for figures.
    let text: String = session(false)
        .lines()
        .take(3)
        .map(|l| l.to_string() + "\n")
        .collect();
    let f = write(dir.path(), "none.jsonl", &text);
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--summaries", &f, &f.replace("none", "none2")],
    );
    assert_fails_with(&o, &["none2.jsonl"]); // a missing file is named
    let o = ctxlab(dir.path(), &["calibrate", "--summaries", &f]);
    assert_fails_with(
        &o,
        &[
            "no compaction summaries in 1 transcript(s)",
            "isCompactSummary",
        ],
    );
    // A malformed line: the file and line are named.
    let bad = write(dir.path(), "bad.jsonl", &(session(false) + "{\"type\": \n"));
    let o = ctxlab(dir.path(), &["calibrate", "--summaries", &bad]);
    assert_fails_with(&o, &["bad.jsonl:7"]);
    // Options of the other mode are refused, not ignored.
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--summaries", &f, "--cache", "openai"],
    );
    assert_fails_with(
        &o,
        &["--cache applies only to the context-size calibration"],
    );
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            &f,
            "--format",
            "claude-code",
            "--flags",
            "errors",
        ],
    );
    assert_fails_with(&o, &["--flags applies only with --summaries"]);
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--summaries", &f, "--flags", "typos"],
    );
    assert_fails_with(&o, &["unknown label rule \"typos\""]);
    // Without --summaries the format is still required.
    let o = ctxlab(dir.path(), &["calibrate", &f]);
    assert_fails_with(&o, &["--format"]);
}

#[test]
fn the_shared_sessions_figures() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent (the real runs are not in the repository)");
        return;
    };
    let files: Vec<String> = std::fs::read_dir(data.join("claude-code"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.display().to_string())
        .collect();
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.sort();
    let out = calibrate(&root(), &args);
    // The one summary of the four sessions: 13 325 chars for 368 569 replaced (3.6 %).
    assert_eq!(
        row(&out, &["9034225e-c367-4ab6-b1eb-1f478a7ae27a", "1", "362"]),
        [
            "9034225e-c367-4ab6-b1eb-1f478a7ae27a",
            "1",
            "362",
            "13325",
            "361",
            "368569",
            "0.0362"
        ]
    );
    // 879 facts of 83 replaced records, 80 kept; the 8 flagged records (2 requests, 6 failed
    // results) 1 of 99, the rest 79 of 780.
    assert_eq!(
        row(&out, &["all"]),
        [
            "all",
            "1",
            "83",
            "879",
            "80",
            "0.091",
            "0.074–0.112",
            "0.168"
        ]
    );
    assert_eq!(
        row(&out, &["flagged"]),
        [
            "flagged",
            "1",
            "8",
            "99",
            "1",
            "0.010",
            "0.002–0.055",
            "0.007"
        ]
    );
    assert_eq!(
        row(&out, &["not", "flagged"]),
        [
            "not",
            "flagged",
            "1",
            "75",
            "780",
            "79",
            "0.101",
            "0.082–0.124",
            "0.185"
        ]
    );
    assert_eq!(
        row(&out, &["kind", "tool_result"]),
        [
            "kind",
            "tool_result",
            "1",
            "34",
            "622",
            "46",
            "0.074",
            "0.056–0.097",
            "0.080"
        ]
    );
    for needle in [
        "implied: simulated(recall_flagged=0.01, recall_other=0.10)",
        // The issue's measure: 37 % of 71 there, 26 of 73 here.
        ": 26 of 73 in the summary (0.356); first held by a flagged record 0 of 6 (0.000), by another 26 of 67 (0.388)",
        "rests on: 1 summary in 1 of 4 transcript(s), 879 facts of the 83 replaced records that own any (of 361 replaced)",
    ] {
        assert!(out.contains(needle), "{needle:?} not in\n{out}");
    }
}
