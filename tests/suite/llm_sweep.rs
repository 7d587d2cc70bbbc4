//! The `llm` summariser end to end: a sweep that lacks answers stops naming how many and how to
//! export them; `summaries export` writes the request; a hand-written Batch answer is imported;
//! the sweep then scores the model's text by facts.

use crate::common::{assert_fails_with, ctxlab, stderr, stdout};

/// The task r1 (head; facts cli.rs, parse_args, src/cli.rs), r2 (required; fact E0308), r3,
/// r4. Under `chars`: 28 + 1 + 18 + 1 + 28 + 1 + 4 = 81; at 50 % the capacity is 40.
pub(crate) const HISTORY: &str = r#"{"id": 1, "kind": "user", "text": "fix parse_args in src/cli.rs", "required": true}
{"id": 2, "kind": "tool_result", "tool": "bash", "text": "saw E0308 in build", "required": true}
{"id": 3, "kind": "assistant", "text": "looking at config_loader now", "required": false}
{"id": 4, "kind": "assistant", "text": "done", "required": false}
"#;

pub(crate) const EXPERIMENT: &str = r#"
name = "llm"
seed = 1
replicates = 1
[histories]
files = ["h.jsonl"]
cost = "chars"
[sweep]
strategies = ["summary(summariser=llm, cache=answers, model=test-model, keep_recent=1)"]
budgets = [50]
false_negative = [0.0]
false_positive = [0.0]
[output]
dir = "out"
formats = ["csv"]
"#;

#[test]
fn export_answer_import_then_the_sweep_scores_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.jsonl"), HISTORY).unwrap();
    std::fs::write(d.join("llm.toml"), EXPERIMENT).unwrap();

    // No answers yet: one summary is missing, and nothing is published.
    assert_fails_with(
        &ctxlab(d, &["sweep", "llm.toml", "-q"]),
        &[
            "1 summaries the `llm` summariser needs are not in answers",
            "ctxlab summaries export",
        ],
    );
    assert!(!d.join("out/manifest.json").exists());

    let o = ctxlab(
        d,
        &["summaries", "export", "llm.toml", "--out", "req.jsonl"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 summary requests → req.jsonl"),
        "{}",
        stdout(&o)
    );
    let line = std::fs::read_to_string(d.join("req.jsonl")).unwrap();
    assert_eq!(line.lines().count(), 1);
    let request: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    // The summary replaces r2 and r3 (capacity 40: head 28, summary, tail `done`), rendered as
    // `[kind] text` with a blank line between, under Codex's prompt.
    let messages = &request["body"]["messages"];
    assert_eq!(
        messages[1]["content"],
        "[tool_result] saw E0308 in build\n\n[assistant] looking at config_loader now"
    );
    assert_eq!(request["body"]["model"], "test-model");
    // A second export refuses to overwrite the file.
    assert_fails_with(
        &ctxlab(
            d,
            &["summaries", "export", "llm.toml", "--out", "req.jsonl"],
        ),
        &["req.jsonl", "already exists"],
    );

    // The model's answer, in the Batch output format.
    let id = request["custom_id"].as_str().unwrap();
    let answer = format!(
        r#"{{"id": "batch_req_1", "custom_id": "{id}", "response": {{"status_code": 200, "request_id": "r1", "body": {{"choices": [{{"index": 0, "message": {{"role": "assistant", "content": "E0308"}}}}]}}}}, "error": null}}"#
    );
    std::fs::write(d.join("resp.jsonl"), answer + "\n").unwrap();
    let o = ctxlab(
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
    assert!(o.status.success(), "{}", stderr(&o));

    let o = ctxlab(d, &["sweep", "llm.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut cells = csv::Reader::from_path(d.join("out/cells.csv")).unwrap();
    let header = cells.headers().unwrap().clone();
    let row = cells.records().next().unwrap().unwrap();
    let get = |k: &str| row[header.iter().position(|h| h == k).unwrap()].to_string();
    // The context: the task 28 + 1 + the answer `E0308` 5 + 1 + `done` 4 = 39 (capacity:
    // 50 % of 28 + 1 + 18 + 1 + 28 + 1 + 4 = 81 is 40).
    assert_eq!(get("used"), "39");
    // Facts of the required records: 3 in the task (verbatim), E0308 in the summary: 4 of 4;
    // r2 is carried by its fact, so retention in any form is 2 of 2.
    assert_eq!(
        (get("facts_total"), get("facts_kept")),
        ("4".into(), "4".into())
    );
    assert_eq!(get("retention_any"), "1.000000");
    assert_eq!(get("required_retention"), "0.500000");

    // Nothing is missing any more.
    let o = ctxlab(
        d,
        &["summaries", "export", "llm.toml", "--out", "again.jsonl"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("nothing to export"), "{}", stdout(&o));
    assert!(!d.join("again.jsonl").exists());
}

#[test]
fn llm_parameters_are_required_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.jsonl"), HISTORY).unwrap();
    for (spec, needle) in [
        ("summary(summariser=llm, model=m)", "needs `cache=DIR`"),
        (
            "summary(summariser=llm, cache=answers)",
            "needs `model=NAME`",
        ),
        (
            "summary(summariser=llm, cache=answers, model=m, prompt=nope)",
            "summary prompt \"nope\"",
        ),
        (
            "summary(summariser=llm, cache=answers, model=m, url=https://x)",
            "https is not supported",
        ),
    ] {
        std::fs::write(
            d.join("bad.toml"),
            EXPERIMENT.replace(
                "summary(summariser=llm, cache=answers, model=test-model, keep_recent=1)",
                spec,
            ),
        )
        .unwrap();
        assert_fails_with(&ctxlab(d, &["sweep", "bad.toml", "-q"]), &[needle]);
    }
    assert!(!d.join("out").exists());
}
