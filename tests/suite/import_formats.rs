//! The record mapping of each transcript format and each label rule, on hand-written fixtures
//! (`tests/fixtures/import/`) whose answers were worked out by hand from the rules.

use crate::common::root;
use ctxlab::history::Usage;
use ctxlab::import::{self, failure, Call, Format, LabelRules, Problems, Run};
use ctxlab::Kind;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/import").join(name)
}

fn read(name: &str, format: Format) -> Run {
    let mut runs = import::read(&fixture(name), format, &mut Problems::strict()).unwrap();
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

fn kinds(run: &Run) -> Vec<&'static str> {
    run.history
        .records
        .iter()
        .map(|r| r.kind.as_str())
        .collect()
}

fn tools(run: &Run) -> Vec<Option<&str>> {
    run.history
        .records
        .iter()
        .map(|r| r.tool.as_deref())
        .collect()
}

/// Ids (1-based) of the records a rule set marks.
fn marked(run: &Run, rules: &str) -> Vec<u64> {
    let rules: LabelRules = rules.parse().unwrap();
    rules
        .apply(run.clone())
        .records
        .iter()
        .filter(|r| r.required)
        .map(|r| r.id)
        .collect()
}

#[test]
fn mini_swe_agent_maps_task_observations_and_prompt_sizes() {
    let run = read("demo__demo-1.traj.json", Format::MiniSweAgent);
    assert_eq!(run.history.name, "demo__demo-1");
    assert_eq!(
        kinds(&run),
        [
            "system",
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "tool_result",
            "assistant",
            "tool_result",
            "assistant"
        ]
    );
    let bash = Some("bash");
    assert_eq!(
        tools(&run),
        [None, None, None, bash, None, bash, None, bash, None]
    );
    let ids: Vec<u64> = run.history.records.iter().map(|r| r.id).collect();
    assert_eq!(ids, (1..=9).collect::<Vec<_>>());
    // Three assistant messages record prompt_tokens; the last does not. Only the first
    // records its billing too (completion_tokens 20, cached_tokens 0): 120 uncached.
    assert_eq!(
        run.calls,
        [
            Call {
                start: 0,
                end: 2,
                recorded: 120,
                usage: Some(Usage {
                    uncached: 120,
                    cache_read: 0,
                    cache_write: 0,
                    output: 20
                })
            },
            Call {
                start: 0,
                end: 4,
                recorded: 180,
                usage: None
            },
            Call {
                start: 0,
                end: 6,
                recorded: 260,
                usage: None
            },
        ]
    );
    assert!(run.history.records[3]
        .text
        .starts_with("<returncode>0</returncode>"));
}

#[test]
fn mini_swe_agent_labels_by_rule() {
    let run = read("demo__demo-1.traj.json", Format::MiniSweAgent);
    assert_eq!(marked(&run, "instructions"), [1, 2]);
    // Only the observation with return code 1 and a traceback.
    assert_eq!(marked(&run, "errors"), [6]);
    // 4: src/config/loader.py (used by 7, three records on). 5: empty.cfg, which the agent
    // named itself (used by 9): a token the model introduced marks nothing. 6: KeyError, used by
    // the very next record (7), within min_gap = 2. parse_config is in the task: no mark.
    assert_eq!(marked(&run, "hindsight"), [4]);
    assert_eq!(marked(&run, "hindsight(min_gap=0)"), [4, 6]);
    assert_eq!(marked(&run, "instructions,errors,hindsight"), [1, 2, 4, 6]);
    assert_eq!(marked(&run, "none"), Vec::<u64>::new());
}

#[test]
fn claude_code_joins_split_responses_and_names_results_by_tool_use_id() {
    let run = read("claude-session.jsonl", Format::ClaudeCode);
    assert_eq!(run.history.name, "claude-session");
    assert_eq!(
        kinds(&run),
        [
            "user",
            "assistant",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "assistant",
            "tool_call",
            "tool_result",
            "summary",
            "assistant",
            "note",
            "user",
            "user"
        ]
    );
    let t = tools(&run);
    assert_eq!(
        (t[2], t[3], t[4], t[5], t[7], t[8]),
        (
            Some("Read"),
            Some("Read"),
            Some("Bash"),
            Some("Bash"),
            Some("Edit"),
            Some("Edit")
        )
    );
    let texts: Vec<&str> = run
        .history
        .records
        .iter()
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(texts[2], r#"{"file_path":"/repo/src/util.rs"}"#);
    assert_eq!(texts[8], "The file /repo/src/util.rs has been updated.");
    assert_eq!(texts[12], "[image: image/png]");
    assert_eq!(texts[13], "[Image #1] looks wrong");
    // No thinking text, no sub-agent line, no title or system notice became a record.
    for skipped in [
        "probably breaks",
        "Sub-agent",
        "Three callers",
        "Rename a helper",
        "Opus",
    ] {
        assert!(texts.iter().all(|t| !t.contains(skipped)), "{skipped}");
    }
    // msg_1 and msg_3 are each split over two lines: one call apiece, input counted once
    // (input + cache creation + cache read), output the larger of the lines' (41, 60); after
    // the compact summary the context restarts.
    let usage = |uncached, cache_write, cache_read, output| {
        Some(Usage {
            uncached,
            cache_read,
            cache_write,
            output,
        })
    };
    assert_eq!(
        run.calls,
        [
            Call {
                start: 0,
                end: 1,
                recorded: 2010,
                usage: usage(10, 2000, 0, 41)
            },
            Call {
                start: 0,
                end: 4,
                recorded: 2115,
                usage: usage(5, 100, 2010, 30)
            },
            Call {
                start: 0,
                end: 6,
                recorded: 2163,
                usage: usage(3, 50, 2110, 60)
            },
            Call {
                start: 9,
                end: 10,
                recorded: 304,
                usage: usage(4, 300, 0, 2)
            },
        ]
    );
    let failed: Vec<usize> = (0..run.failed.len()).filter(|&i| run.failed[i]).collect();
    assert_eq!(failed, [5]);
}

#[test]
fn claude_code_labels_by_rule() {
    let run = read("claude-session.jsonl", Format::ClaudeCode);
    assert_eq!(marked(&run, "instructions"), [1, 13, 14]);
    // The failed build result says so only through `is_error: true`.
    assert!(!failure::reports_failure(&run.history.records[5].text));
    assert_eq!(marked(&run, "errors"), [6]);
    // 4: parse_hdr (used by 7 and 8, three records on); 6: E0425, used by the next record (7),
    // within min_gap = 2. The Edit call's JSON keys (file_path, old_string) are not tokens, so
    // the Read call (3) is not marked.
    assert_eq!(marked(&run, "hindsight"), [4]);
    assert_eq!(marked(&run, "hindsight(min_gap=0)"), [4, 6]);
    assert_eq!(marked(&run, "all"), [1, 4, 6, 13, 14]);
}

#[test]
fn openai_chat_json_and_jsonl_give_the_same_records() {
    let run = read("chat.json", Format::OpenaiChat);
    assert_eq!(
        kinds(&run),
        [
            "system",
            "user",
            "tool_call",
            "tool_result",
            "assistant",
            "tool_call",
            "tool_call",
            "tool_result",
            "tool_result",
            "assistant"
        ]
    );
    // Results come back out of order; each is named after its call's id.
    assert_eq!(
        tools(&run),
        [
            None,
            None,
            Some("run_tests"),
            Some("run_tests"),
            None,
            Some("read_file"),
            Some("grep"),
            Some("grep"),
            Some("read_file"),
            None
        ]
    );
    assert_eq!(
        run.history.records[2].text,
        r#"{"path": "tests/test_auth.py"}"#
    );
    assert_eq!(
        run.history.records[9].text,
        "LOGIN_REDIRECT_URL is /dashboard but the test expects /home."
    );
    assert!(run.calls.is_empty());
    let lines = read("chat.jsonl", Format::OpenaiChat);
    assert_eq!(lines.history.name, "chat");
    assert_eq!(lines.history.records, run.history.records);
}

#[test]
fn openai_chat_labels_by_rule() {
    let run = read("chat.json", Format::OpenaiChat);
    assert_eq!(marked(&run, "instructions"), [1, 2]);
    assert_eq!(marked(&run, "errors"), [4]); // pytest's FAILED line
                                             // LOGIN_REDIRECT_URL first appears in the grep result (8) and the final answer, the
                                             // next record, uses it: within min_gap = 2.
    assert_eq!(marked(&run, "hindsight"), Vec::<u64>::new());
    assert_eq!(marked(&run, "hindsight(min_gap=0)"), [8]);
    assert_eq!(marked(&run, "all"), [1, 2, 4]);
}

#[test]
fn swe_agent_history_maps_demos_tasks_and_function_calls() {
    let run = read("fix-pricing.traj", Format::SweAgent);
    assert_eq!(run.history.name, "fix-pricing");
    assert_eq!(
        kinds(&run),
        [
            "system",
            "note",
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result"
        ]
    );
    assert_eq!(
        tools(&run),
        [
            None,
            None,
            None,
            None,
            Some("bash"),
            None,
            Some("str_replace_editor"),
            Some("str_replace_editor"),
            Some("submit"),
            Some("submit")
        ]
    );
    assert!(run.history.records[2]
        .text
        .ends_with("Fix the overflow in compute_total_price."));
    assert_eq!(run.history.records[8].text, "{}");
    assert!(run.calls.is_empty());
    assert_eq!(marked(&run, "instructions"), [1, 3]);
    assert_eq!(marked(&run, "errors"), Vec::<u64>::new());
    // pricing.py first appears in the `ls` output (5); the editor call (7), two records on,
    // opens it: within min_gap = 2, so only a smaller gap marks it.
    assert_eq!(marked(&run, "hindsight"), Vec::<u64>::new());
    assert_eq!(marked(&run, "hindsight(min_gap=1)"), [5]);
}

#[test]
fn swe_agent_without_history_reads_the_trajectory_steps() {
    let run = read("old-format.traj", Format::SweAgent);
    assert_eq!(
        kinds(&run),
        [
            "system",
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "tool_result"
        ]
    );
    let texts: Vec<&str> = run
        .history
        .records
        .iter()
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(texts[1], "ISSUE: the app crashes on start.");
    assert_eq!(texts[2], "DISCUSSION\nList the files.\n```\nls\n```");
    assert_eq!(texts[4], "Open the readme.\n\nopen README.md");
    assert_eq!(texts[5], "[File: README.md (3 lines total)]");
}

#[test]
fn load_gives_labelled_histories_for_experiment_files() {
    let rules: LabelRules = "instructions".parse().unwrap();
    let h = import::load(
        &fixture("demo__demo-1.traj.json"),
        Format::MiniSweAgent,
        &rules,
    )
    .unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].records.len(), 9);
    assert_eq!(h[0].truth()[..3], [true, true, false]);
    assert_eq!(h[0].records[1].kind, Kind::User);
    let both = import::load_files(
        &[fixture("chat.json"), fixture("claude-session.jsonl")],
        Format::OpenaiChat,
        &rules,
    );
    // A Claude Code file is not OpenAI chat: the error names the file and what was expected.
    let err = both.unwrap_err().to_string();
    assert!(err.contains("claude-session.jsonl:1:"), "{err}");
    assert!(
        err.contains("expected one OpenAI chat message per line"),
        "{err}"
    );
    let twice = import::load_files(
        &[fixture("chat.json"), fixture("chat.json")],
        Format::OpenaiChat,
        &rules,
    )
    .unwrap_err()
    .to_string();
    assert!(
        twice.contains("a run named \"chat\" was already read"),
        "{twice}"
    );
}
