//! `ctxlab import` and `ctxlab calibrate` through the binary: output, bad input, `--skip-bad`,
//! and the real transcripts in `../shared/data` when they are there.

use crate::common::*;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn import_writes_labelled_histories_that_table_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs.jsonl");
    let o = ctxlab(
        dir.path(),
        &[
            "import",
            &import_fixture("demo__demo-1.traj.json"),
            "--format",
            "mini-swe-agent",
            "--out",
            out.to_str().unwrap(),
            "--label",
            "instructions,errors,hindsight",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 runs, 9 records (4 required"),
        "{}",
        stdout(&o)
    );
    let recs = lines(&out);
    assert_eq!(recs.len(), 9);
    assert_eq!(recs[0]["history"], "demo__demo-1");
    assert_eq!(recs[3]["kind"], "tool_result");
    assert_eq!(recs[3]["tool"], "bash");
    let required: Vec<u64> = recs
        .iter()
        .filter(|r| r["required"] == true)
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(required, [1, 2, 4, 6]);
    assert!(!dir.path().join("runs.jsonl.partial").exists());
    // The output is an ordinary history file.
    let t = ctxlab(
        dir.path(),
        &[
            "table",
            out.to_str().unwrap(),
            "--cost",
            "tokens",
            "--format",
            "csv",
        ],
    );
    assert!(t.status.success(), "{}", stderr(&t));
    assert!(stdout(&t).contains(",required,"), "{}", stdout(&t));
}

#[test]
fn bad_lines_and_files_name_the_place_and_leave_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.jsonl");
    let out_s = out.to_str().unwrap().to_string();
    let good_user = r#"{"type":"user","message":{"role":"user","content":"do it"}}"#;
    let cases: Vec<(Vec<String>, &str, Vec<&str>)> = vec![
        (
            vec![write(
                d,
                "broken.jsonl",
                &format!("{good_user}\n{{\"type\": \"user\",\n"),
            )],
            "claude-code",
            vec![
                "broken.jsonl:2: column",
                "EOF while parsing",
                "expected a Claude Code event",
            ],
        ),
        (
            vec![write(
                d,
                "orphan.jsonl",
                &format!(
                    "{good_user}\n\n{}",
                    r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}}"#
                ),
            )],
            "claude-code",
            vec!["orphan.jsonl:3:", "tool_use_id \"toolu_9\""],
        ),
        (
            vec![write(d, "nomsg.jsonl", r#"{"type":"assistant"}"#)],
            "claude-code",
            vec!["nomsg.jsonl:1:", "needs a `message` object"],
        ),
        (
            vec![write(
                d,
                "robot.traj.json",
                "{\n  \"messages\": [\n    {\"role\": \"robot\", \"content\": \"x\"}\n  ]\n}",
            )],
            "mini-swe-agent",
            vec![
                "robot.traj.json:3: column",
                "unknown variant `robot`",
                "expected a mini-swe-agent trajectory",
            ],
        ),
        (
            vec![write(d, "cut.traj.json", "{\"messages\": [")],
            "mini-swe-agent",
            vec!["cut.traj.json:1: column 14", "EOF while parsing"],
        ),
        (
            vec![write(d, "empty.traj.json", "{\"messages\": []}")],
            "mini-swe-agent",
            vec!["empty.traj.json: holds no message"],
        ),
        (
            vec![write(
                d,
                "lost.json",
                r#"{"messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"call_7","content":"r"}]}"#,
            )],
            "openai-chat",
            vec!["lost.json: key `messages[1]`", "tool_call_id \"call_7\""],
        ),
        (
            vec![write(
                d,
                "lost.traj",
                r#"{"history":[{"role":"tool","content":"x","tool_call_ids":["c"]}]}"#,
            )],
            "swe-agent",
            vec!["lost.traj: key `history[0]`", "tool call \"c\""],
        ),
        (
            vec![import_fixture("chat.json"), import_fixture("chat.json")],
            "openai-chat",
            vec!["a run named \"chat\" was already read"],
        ),
        (
            vec![d.join("missing.json").display().to_string()],
            "openai-chat",
            vec!["missing.json: cannot read"],
        ),
    ];
    for (files, format, needles) in cases {
        let mut args = vec!["import".to_string()];
        args.extend(files);
        args.extend([
            "--format".into(),
            format.into(),
            "--out".into(),
            out_s.clone(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = ctxlab(d, &args);
        assert_fails_with(&o, &needles);
        assert!(!out.exists(), "nothing may be written on failure: {args:?}");
    }
    let o = ctxlab(
        d,
        &[
            "import",
            &import_fixture("chat.json"),
            "--format",
            "claude",
            "--out",
            &out_s,
        ],
    );
    assert_fails_with(
        &o,
        &[
            "unknown transcript format \"claude\"",
            "mini-swe-agent, claude-code",
        ],
    );
    let o = ctxlab(
        d,
        &[
            "import",
            &import_fixture("chat.json"),
            "--format",
            "openai-chat",
            "--out",
            &out_s,
            "--label",
            "typos",
        ],
    );
    assert_fails_with(&o, &["unknown label rule \"typos\""]);
}

#[test]
fn skip_bad_leaves_each_bad_file_out_whole_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A session with a malformed line 2 and a result of an undeclared call on line 3: the
    // file is bad, and none of its lines is kept (not even the good ones).
    let session = write(
        d,
        "s.jsonl",
        &[
            r#"{"type":"user","message":{"role":"user","content":"do it"}}"#,
            "not json",
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":5}}}"#,
        ]
        .join("\n"),
    );
    let bad_file = write(d, "bad.jsonl", "\n\n");
    let good = write(
        d,
        "good.jsonl",
        r#"{"type":"user","message":{"role":"user","content":"go on"}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"went on"}],"usage":{"input_tokens":5}}}"#,
    );
    let out = d.join("out.jsonl");
    let args = [
        "import",
        session.as_str(),
        bad_file.as_str(),
        good.as_str(),
        "--format",
        "claude-code",
        "--out",
        out.to_str().unwrap(),
    ];
    // One refusal naming both bad files, each with its first problem; nothing written.
    assert_fails_with(
        &ctxlab(d, &args),
        &[
            "2 of the 3 transcripts cannot be read",
            "s.jsonl:2: column 2: expected ident",
            "bad.jsonl: holds no message",
        ],
    );
    assert!(!out.exists());
    let mut skipping = args.to_vec();
    skipping.push("--skip-bad");
    let o = ctxlab(d, &skipping);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    for needle in [
        "left out: ",
        "s.jsonl:2: column 2: expected ident",
        "bad.jsonl: holds no message",
        "2 bad file(s) left out whole (--skip-bad)",
    ] {
        assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
    }
    let recs = lines(&out);
    let texts: Vec<&str> = recs.iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["go on", "went on"]);
}

#[test]
fn calibrate_compares_estimates_with_recorded_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            &import_fixture("claude-session.jsonl"),
            "--format",
            "claude-code",
            "--cost",
            "chars",
            "--per-call",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Call 1 sees only the task: 67 chars, recorded 2010. Call 4 sees only the compact
    // summary: its 120 chars, recorded 304.
    let out = stdout(&o);
    assert!(
        out.starts_with("run,call,estimated,recorded\nclaude-session,1,67,2010\n"),
        "{out}"
    );
    assert!(out.ends_with("claude-session,4,120,304\n"), "{out}");
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            &import_fixture("demo__demo-1.traj.json"),
            "--format",
            "mini-swe-agent",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("demo__demo-1"), "{}", stdout(&o));
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            &import_fixture("fix-pricing.traj"),
            "--format",
            "swe-agent",
        ],
    );
    assert_fails_with(&o, &["records the input size of a model call"]);
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            &import_fixture("chat.json"),
            "--format",
            "openai-chat",
            "--cost",
            "tokens(size=1)",
        ],
    );
    assert_fails_with(&o, &["unknown parameter `size`"]);
}

fn data_files(dir: &Path, suffix: &str) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files.iter().map(|p| p.display().to_string()).collect()
}

fn csv_overall(out: &str) -> Vec<String> {
    out.lines()
        .find(|l| l.starts_with("overall,"))
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect()
}

#[test]
fn real_transcripts_import_and_calibrate() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent, so the real transcripts are not checked");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let runs = data_files(&data.join("swebench-gemini3"), ".traj.json");
    let sessions = data_files(&data.join("claude-code"), ".jsonl");
    assert_eq!((runs.len(), sessions.len()), (40, 4));

    // Counts worked out independently (a Python reading of the same mapping): 3048 messages,
    // 1484 of them assistant messages with prompt_tokens; 857 records from the Claude Code
    // main threads, 310 distinct message ids among their assistant lines.
    for (files, format, records, calls) in [
        (&runs, "mini-swe-agent", 3048, 1484),
        (&sessions, "claude-code", 857, 310),
    ] {
        let out = dir.path().join(format!("{format}.jsonl"));
        let mut args = vec![
            "import",
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
            "--label",
            "all",
        ];
        args.extend(files.iter().map(String::as_str));
        let o = ctxlab(dir.path(), &args);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        assert_eq!(lines(&out).len(), records, "{format}");

        let mut args = vec!["calibrate", "--format", format, "--csv"];
        args.extend(files.iter().map(String::as_str));
        let o = ctxlab(dir.path(), &args);
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let overall = csv_overall(&stdout(&o));
        assert_eq!(overall[1], calls.to_string(), "{format}");
        if format == "mini-swe-agent" {
            // Measured with tokens (o200k_base, 3 per record): mean 0.864, sd 0.025, min 0.794,
            // max 0.937; fit_fixed ≈ 0 and slope 1.16. The whole prompt is in these transcripts,
            // so the ratio is the tokenizer gap alone (Gemini's tokenizer counts about 16 % more
            // on this text than o200k_base). The bounds allow a few per cent of drift in the
            // tokenizer or the overhead; a mapping error (a lost task statement or lost
            // observations, a record counted twice) moves the mean far outside them.
            let mean: f64 = overall[4].parse().unwrap();
            let sd: f64 = overall[5].parse().unwrap();
            let min: f64 = overall[6].parse().unwrap();
            let max: f64 = overall[7].parse().unwrap();
            assert!((0.82..=0.91).contains(&mean), "ratio mean {mean}");
            assert!(sd < 0.05, "ratio sd {sd}");
            assert!(min > 0.75 && max < 1.0, "ratio range {min}..{max}");
            let fixed: f64 = overall[8].parse().unwrap();
            assert!(fixed.abs() < 300.0, "fit_fixed {fixed}");
        } else {
            // Claude Code logs neither its system prompt nor its tool definitions (about 14 000
            // tokens at the first call of every session), so the line has a large fixed part.
            let fixed: f64 = overall[8].parse().unwrap();
            assert!((10_000.0..30_000.0).contains(&fixed), "fit_fixed {fixed}");
        }
    }
}

/// A mini-swe-agent run with a `grep` that finds nothing (4), a doctest's traceback in a file
/// the agent printed (6) and a real one (8).
const LEFT_OUT: &str = r#"{"instance_id": "demo__left-out", "messages": [
  {"role": "system", "content": "Run one command per turn."},
  {"role": "user", "content": "Fix parse_config."},
  {"role": "assistant", "content": "THOUGHT: Look.\n\n```bash\ngrep -rn parse_hdr src\n```"},
  {"role": "user", "content": "<returncode>1</returncode>\n<output>\n</output>"},
  {"role": "assistant", "content": "THOUGHT: Read the docs.\n\n```bash\ncat docs/usage.rst\n```"},
  {"role": "user", "content": "<returncode>0</returncode>\n<output>\n>>> parse_config('')\nTraceback (most recent call last):\nKeyError: 'sections'\n</output>"},
  {"role": "assistant", "content": "THOUGHT: Run it.\n\n```bash\npython -c 'import loader'\n```"},
  {"role": "user", "content": "<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\nKeyError: 'sections'\n</output>"}
]}"#;

#[test]
fn labels_explains_what_errors_leaves_out_and_which_parameter_marks_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo__left-out.traj.json");
    std::fs::write(&file, LEFT_OUT).unwrap();
    let f = file.display().to_string();
    let run = |rules: &str| {
        let o = ctxlab(
            dir.path(),
            &[
                "labels",
                &f,
                "--format",
                "mini-swe-agent",
                "--rules",
                rules,
                "--explain",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let out = run("errors");
    for line in [
        "errors            1       12.5%",
        "demo__left-out   8  tool_result  errors  a Python traceback",
        "2 records with a sign of failure that `errors` leaves out:",
        "demo__left-out   4  tool_result  a non-zero <returncode> with empty output  errors(empty_exits=true)",
        "demo__left-out   6  tool_result  a Python traceback in a viewed file        errors(file_views=true)",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    let out = run("errors(empty_exits=true, file_views=true)");
    for line in [
        "rules: errors(empty_exits=true, file_views=true)",
        "errors            3       37.5%",
        "demo__left-out   4  tool_result  errors(empty_exits=true)  a non-zero <returncode> with empty output",
        "demo__left-out   6  tool_result  errors(file_views=true)   a Python traceback in a viewed file",
        "demo__left-out   8  tool_result  errors                    a Python traceback",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    assert!(!out.contains("leaves out"), "{out}");
    let o = ctxlab(
        dir.path(),
        &[
            "labels",
            &f,
            "--format",
            "mini-swe-agent",
            "--rules",
            "errors(empty_exits=maybe)",
        ],
    );
    assert_fails_with(
        &o,
        &["`empty_exits` expects true or false, found \"maybe\""],
    );
}

#[test]
fn labels_explains_every_mark() {
    let f = import_fixture("demo__demo-1.traj.json");
    let o = ctxlab(
        &root(),
        &["labels", &f, "--format", "mini-swe-agent", "--explain"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Hand-checked on the fixture: the system prompt and the task; the failed command (6);
    // loader.py, first in the observation 4, used three records later by the agent (7).
    for line in [
        "instructions      2       22.2%",
        "errors            1       11.1%",
        "hindsight         1       11.1%",
        "any               4       44.4%",
        "demo__demo-1   4  tool_result  hindsight     loader.py (used by 7, assistant)",
        "demo__demo-1   6  tool_result  errors        a non-zero <returncode>",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    // The rules before the fewer-false-marks changes mark 5 (a file the agent named itself)
    // and 6 (used by the very next record) too.
    let o = ctxlab(
        &root(),
        &[
            "labels",
            &f,
            "--format",
            "mini-swe-agent",
            "--rules",
            "hindsight(min_gap=0, own_tokens=true)",
            "--explain",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains("demo__demo-1   5  assistant    hindsight  empty.cfg (used by 9, assistant)"),
        "{out}"
    );
    assert!(
        out.contains("demo__demo-1   6  tool_result  hindsight  KeyError (used by 7, assistant)"),
        "{out}"
    );
    let o = ctxlab(
        &root(),
        &[
            "labels",
            &f,
            "--format",
            "mini-swe-agent",
            "--rules",
            "hindsight(gap=1)",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown parameter `gap`"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
}
