//! `ctxlab calibrate --stale-tasks`: tasks the agent's own task list had completed before a
//! compaction that the summary presents as open, on hand-made Claude Code sessions whose
//! answer is known, and on two shared sessions when they are there.

use crate::common::*;
use std::path::Path;

const TASK: &str = r#"{"type":"user","message":{"role":"user","content":"Please fix the parser"}}"#;

/// An assistant line with one tool call, then the user line with its result.
fn call(id: &str, name: &str, input: &str, result: &str) -> [String; 2] {
    [
        format!(
            r#"{{"type":"assistant","message":{{"id":"m{id}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
        ),
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{result}"}}]}}}}"#
        ),
    ]
}

fn summary(text: &str) -> String {
    format!(
        r#"{{"type":"user","isCompactSummary":true,"message":{{"role":"user","content":{}}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

/// A TodoWrite that completes "Write the parser tests" (its words: write, parser, test) with
/// "Fix the lexer bug" still in progress, then a summary holding `summary_text`.
fn todo_session(summary_text: &str) -> String {
    let todos = r#"{"todos":[{"content":"Write the parser tests","status":"completed","activeForm":"Writing"},{"content":"Fix the lexer bug","status":"in_progress","activeForm":"Fixing"}]}"#;
    let mut lines = vec![TASK.to_string()];
    lines.extend(call(
        "t1",
        "TodoWrite",
        todos,
        "Todos have been modified successfully",
    ));
    lines.push(summary(summary_text));
    lines.join("\n") + "\n"
}

/// Task #1 created, set in progress, then completed; a summary that asks to finish it.
fn task_session() -> String {
    let mut lines = vec![TASK.to_string()];
    lines.extend(call(
        "t1",
        "TaskCreate",
        r#"{"subject":"Add the cache layer","description":"d","activeForm":"Adding"}"#,
        "Task #1 created successfully: Add the cache layer",
    ));
    for (id, status) in [("t2", "in_progress"), ("t3", "completed")] {
        lines.extend(call(
            id,
            "TaskUpdate",
            &format!(r#"{{"taskId":"1","status":"{status}"}}"#),
            "Updated task #1 status",
        ));
    }
    lines.push(summary(
        "Summary:\n1. Primary Request:\n   Fix the parser.\n9. Optional Next Step:\n   Finish task #1 and commit.",
    ));
    lines.join("\n") + "\n"
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn a_completed_task_listed_as_pending_is_stale_and_one_listed_as_done_is_not() {
    let dir = tempfile::tempdir().unwrap();
    // Listed under "7. Pending Tasks:": named and stale. "Fix the lexer bug" is there too,
    // but it was never completed, so it is not counted at all.
    let pending = write(
        dir.path(),
        "pending.jsonl",
        &todo_session(
            "Summary:\n1. Primary Request:\n   Fix the parser.\n7. Pending Tasks:\n   - Write the parser tests\n   - Fix the lexer bug\n8. Current Work:\n   Reading lexer.rs.",
        ),
    );
    // Listed as done in a done section, and beside "(done)" in the pending one: named, not stale.
    let done = write(
        dir.path(),
        "done.jsonl",
        &todo_session(
            "Summary:\n3. Work so far:\n   - Wrote the parser tests\n   - Write the parser tests: finished\n7. Pending Tasks:\n   - Write the parser tests (done)\n   - Fix the lexer bug",
        ),
    );
    // Task #1, completed, cited by number under "9. Optional Next Step:": stale.
    let task = write(dir.path(), "task.jsonl", &task_session());
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            "--stale-tasks",
            &pending,
            &done,
            &task,
            "--csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // 3 compactions, each with 1 completed task; all 3 named; stale in pending and task.
    assert_eq!(
        stdout(&o),
        "compactions,with_completed,completed,named,stale,with_stale\n3,3,3,3,2,2\n"
    );
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--stale-tasks", &pending, &done, &task],
    );
    let out = stdout(&o);
    assert!(
        out.contains("stale: pending k=1: Write the parser tests\n"),
        "{out}"
    );
    assert!(
        out.contains("stale: task k=1: Add the cache layer\n"),
        "{out}"
    );
    assert!(!out.contains("stale: done"), "{out}");
    assert!(
        out.contains("pooled: 3 completed task(s) before 3 of the 3 compactions; the summaries name 3 and present 2 as open (2 compaction(s) with a stale task)"),
        "{out}"
    );
}

#[test]
fn a_paraphrase_is_not_seen_and_a_session_without_compaction_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // "Write parser tests" would name it; "Add tests for the parser" lacks "write".
    let paraphrase = write(
        dir.path(),
        "paraphrase.jsonl",
        &todo_session("Summary:\n7. Pending Tasks:\n   - Add tests for the parser"),
    );
    let plain = write(dir.path(), "plain.jsonl", &(TASK.to_string() + "\n"));
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--stale-tasks", &paraphrase, &plain],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("pooled: 1 completed task(s) before 1 of the 1 compactions; the summaries name 0 and present 0 as open"),
        "{out}"
    );
    assert!(
        out.contains("without a compaction (counted, not measured): 1 transcript(s): plain"),
        "{out}"
    );
    let o = ctxlab(dir.path(), &["calibrate", "--stale-tasks", &plain]);
    assert_fails_with(&o, &["no compaction in 1 transcript(s)"]);
}

#[test]
fn a_file_that_is_not_a_transcript_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let notes = write(dir.path(), "notes.txt", "these are my notes\n");
    let o = ctxlab(dir.path(), &["calibrate", "--stale-tasks", &notes]);
    assert_fails_with(&o, &["notes.txt:1:", "expected a Claude Code event"]);
    let o = ctxlab(
        dir.path(),
        &["calibrate", "--stale-tasks", &notes, "--cache", "anthropic"],
    );
    assert_fails_with(&o, &["--cache applies nothing with --stale-tasks"]);
}

#[test]
fn two_shared_sessions_stale_tasks() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let dir = data.join("claude-code-entire");
    let files: Vec<String> = [
        "533ff7a3-d390-41ff-b9e8-1b09fb4c2fe2.jsonl",
        "545b45d4-729e-4d0b-8e6b-45cb65d43f00.jsonl",
    ]
    .iter()
    .map(|f| dir.join(f).display().to_string())
    .collect();
    let mut args = vec!["calibrate", "--stale-tasks"];
    args.extend(files.iter().map(String::as_str));
    let o = ctxlab(&root(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    // Each has one compaction after 5 completed tasks (TaskCreate/TaskUpdate), all 5 cited by
    // number ("Task 1: …") in a list of what was done. 545b45d4's "Run fmt, lint, and tests"
    // is also named by "run fmt/lint/test" under "9. Optional Next Step:": the one stale task,
    // a fresh run of the checks after later fixes that the rule cannot tell from the old one.
    let out = stdout(&o);
    assert!(
        out.contains("stale: 545b45d4-729e-4d0b-8e6b-45cb65d43f00 k=1: Run fmt, lint, and tests\n"),
        "{out}"
    );
    args.push("--csv");
    let o = ctxlab(&root(), &args);
    assert_eq!(
        stdout(&o),
        "compactions,with_completed,completed,named,stale,with_stale\n2,2,10,10,1,1\n"
    );
}
