//! `ctxlab summaries judge`: offline summarisers against a real compaction summary on the very
//! span it replaced, worked by hand on a Claude Code session whose needed facts are known, the
//! shared sessions when they are there, and one clear error per bad input.

use crate::common::*;
use std::path::Path;

/// Records (0-based) after import:
///
/// | # | record | facts it owns | used again after the summary (beyond 2 records) |
/// | - | ------ | ------------- | ---------------------------------------------- |
/// | 0 | user "Please fix parse_args and load_config" | parse_args, load_config | load_config (by 5) |
/// | 1 | assistant "I will look at read_manifest first." | read_manifest | yes (by 5) |
/// | 2 | tool_call `ls` | — | |
/// | 3 | tool_result "build_index failed in lib_utils at 1a2b3c4d" | build_index, … | by 5, but 5 ≤ 3 + 2 |
/// | 4 | the compaction summary, naming parse_args and read_manifest | | |
/// | 5 | tool_call `cat load_config build_index read_manifest` | | |
///
/// So the span's needed facts are load_config and read_manifest, and the real summary keeps one
/// of them (read_manifest): 0.5.
pub(crate) const SESSION: &str = r#"{"type":"user","message":{"role":"user","content":"Please fix parse_args and load_config"}}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"I will look at read_manifest first."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"build_index failed in lib_utils at 1a2b3c4d","is_error":true}]}}
{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: the user asked to fix parse_args; I read read_manifest."}}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cat load_config build_index read_manifest"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"found cache_dir_path and lru_store"}]}}
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

fn csv_rows(out: &str) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_reader(out.as_bytes());
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>().join(","),
        "summariser,summaries,real_kept,kept,diff_mean,diff_ci_low,diff_ci_high,correlation,jaccard"
    );
    r.records().map(Result::unwrap).collect()
}

#[test]
fn judge_scores_each_summariser_on_the_span_the_real_summary_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "s.jsonl", SESSION);
    let o = ctxlab(
        dir.path(),
        &[
            "summaries",
            "judge",
            &f,
            "--summariser",
            "extractive",
            "--summariser",
            "simulated(recall_user=1, recall_assistant=0, recall_tool_call=0, recall_tool_result=0)",
            "--summariser",
            "simulated(recall_user=1, recall_assistant=1, recall_tool_call=0, recall_tool_result=0)",
            "--csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&stdout(&o));
    let fields = |i: usize| rows[i].iter().skip(1).collect::<Vec<_>>();
    // extractive, at the real summary's 64 characters: the flagged task line fits (37), the
    // error line does not (37 + 1 + 43); the task names load_config: 1 of 2, carrying record 0
    // where the real summary carries record 1 (Jaccard 0). One summary: no interval.
    assert_eq!(
        fields(0),
        ["1", "0.500000", "0.500000", "0.000000", "", "", "", "0.000000"]
    );
    // The task alone: load_config, 1 of 2, record 0 (Jaccard 0).
    assert_eq!(
        fields(1),
        ["1", "0.500000", "0.500000", "0.000000", "", "", "", "0.000000"]
    );
    // Task and assistant: both needed facts, records {0, 1} against {1}: Jaccard 1/2.
    assert_eq!(
        fields(2),
        ["1", "0.500000", "1.000000", "0.500000", "", "", "", "0.500000"]
    );
}

#[test]
fn judge_refuses_what_it_cannot_judge() {
    let dir = tempfile::tempdir().unwrap();
    let none = write(
        dir.path(),
        "none.jsonl",
        r#"{"type":"user","message":{"role":"user","content":"hello parse_args"}}
"#,
    );
    // Counted, not refused, but with nothing else there is nothing to judge.
    let o = ctxlab(dir.path(), &["summaries", "judge", &none]);
    assert_fails_with(
        &o,
        &["no summary to judge in 1 transcript(s): 1 of them hold no compaction summary"],
    );
    // A session that goes on from another file's conversation: its first line answers a line
    // the file does not hold, so its summary replaced a span the file does not hold whole.
    let continued = SESSION.replacen(
        r#"{"type":"user","message""#,
        r#"{"type":"user","uuid":"a1","parentUuid":"elsewhere","message""#,
        1,
    );
    let c = write(dir.path(), "continued.jsonl", &continued);
    let o = ctxlab(dir.path(), &["summaries", "judge", &c]);
    assert_fails_with(
        &o,
        &[
            "no summary to judge",
            "1 replaced a span the file does not hold",
        ],
    );
    // Beside a whole one it is left out and counted.
    let s = write(dir.path(), "s.jsonl", SESSION);
    let o = ctxlab(dir.path(), &["summaries", "judge", &s, &c]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(
            "1 compaction summaries judged (1 left out: the span they replaced is not in the file"
        ),
        "{}",
        stdout(&o)
    );
    for (spec, needle) in [
        ("simulated(recall_user=2)", "recall_user"),
        ("extractive(recall_user=0.5)", "recall_user"),
        ("bogus", "bogus"),
        ("simulated(recall_user=0.5", "closing"),
    ] {
        let o = ctxlab(
            dir.path(),
            &["summaries", "judge", &s, "--summariser", spec],
        );
        assert_fails_with(&o, &["--summariser", needle]);
    }
    let o = ctxlab(dir.path(), &["summaries", "judge", &s, "--draws", "0"]);
    assert_fails_with(&o, &["--draws"]);
}

#[test]
fn judge_on_the_shared_sessions() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(data.join("claude-code-entire"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".jsonl"))
        .collect();
    files.sort();
    files.push(
        data.join("claude-code/9034225e-c367-4ab6-b1eb-1f478a7ae27a.jsonl")
            .display()
            .to_string(),
    );
    let mut args = vec!["summaries", "judge", "--csv"];
    args.extend(files.iter().map(String::as_str));
    let o = ctxlab(&root(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = csv_rows(&stdout(&o));
    let get = |i: usize, c: usize| rows[i][c].parse::<f64>().unwrap();
    // 26 summaries whose spans the files hold whole: the real ones keep 0.344 of the needed
    // facts; the simulated defaults keep more (0.424), the extractive one far less (0.194).
    assert_eq!(&rows[0][0], "simulated");
    assert_eq!(&rows[0][1], "26");
    assert!((get(0, 2) - 0.3436).abs() < 5e-4, "{}", get(0, 2));
    assert!((get(0, 3) - 0.4238).abs() < 5e-4, "{}", get(0, 3));
    assert!((get(1, 3) - 0.1942).abs() < 5e-4, "{}", get(1, 3));
    assert!(
        get(1, 6) < 0.0,
        "extractive keeps significantly less: {}",
        get(1, 6)
    );
}
