//! External strategies (`external(cmd=...)`): the Python examples equal the built-in rules
//! they re-implement, cell for cell and session for session; a rule of their own is scored as
//! worked out by hand; every wrong answer, crash and hang stops the run naming the cell and
//! publishes nothing; a changed program cannot resume; the rows do not depend on the threads.
//! Every test says it skipped where `python3` is absent.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `python3` runs here; a test that needs it says it skipped when it does not.
fn python3(test: &str) -> bool {
    let runs = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("skipped {test}: python3 is absent");
    }
    runs
}

fn example(name: &str) -> PathBuf {
    root().join("examples/strategies").join(name)
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/strategies").join(name)
}

/// The spec of an external strategy running `script` with `params` (`, key=value...`).
fn external(script: &Path, params: &str) -> String {
    format!("external(cmd=\"python3 {}\"{params})", script.display())
}

/// A TOML literal string holding `text`.
fn literal(text: &str) -> String {
    format!("'{text}'")
}

/// Rows of a table by strategy: each strategy's rows without the `strategy` column.
type ByStrategy = Vec<(String, Vec<Vec<String>>)>;

/// The columns of a CSV table but `strategy`, and its rows grouped by that column in the order
/// the strategies first appear.
fn rows_by_strategy(path: &Path) -> (Vec<String>, ByStrategy) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = headers.iter().position(|h| h == "strategy").unwrap();
    let columns = headers
        .iter()
        .filter(|h| *h != "strategy")
        .map(String::from)
        .collect();
    let mut groups: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for record in reader.records() {
        let record = record.unwrap();
        let strategy = record[at].to_string();
        let rest: Vec<String> = record
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, v)| v.to_string())
            .collect();
        match groups.iter_mut().find(|(s, _)| *s == strategy) {
            Some((_, rows)) => rows.push(rest),
            None => groups.push((strategy, vec![rest])),
        }
    }
    (columns, groups)
}

/// A cell sweep of `strategies` (TOML strings) on 6 synthetic histories, into `out`.
fn cell_experiment(strategies: &[String], extra: &str) -> String {
    format!(
        r#"name = "ext"
seed = 7
replicates = 2
[histories]
generate = {{ count = 6, records = [20, 120], required_share = 0.2, required_position = "early", seed = 1 }}
cost = "chars"
[sweep]
strategies = [{}]
budgets = [10, 30, 50, 70, 100]
keep_recent = [0, 3]
false_negative = [0.0, 0.3]
false_positive = [0.0, 0.1]
{extra}
[output]
dir = "out"
formats = ["csv"]
"#,
        strategies.join(", ")
    )
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn the_python_recent_and_required_give_the_built_in_cells_byte_for_byte() {
    if !python3("the_python_recent_and_required_give_the_built_in_cells_byte_for_byte") {
        return;
    }
    let recent = example("recent.py");
    let required = example("required.py");
    let pairs = [
        ("\"recent\"".to_string(), external(&recent, "")),
        (
            "\"recent(fill=skip)\"".to_string(),
            external(&recent, ", fill=skip"),
        ),
        ("\"required\"".to_string(), external(&required, "")),
        (
            "\"required(fill=skip, on_overflow=drop-oldest-flagged)\"".to_string(),
            external(&required, ", fill=skip, on_overflow=drop-oldest-flagged"),
        ),
    ];
    let strategies: Vec<String> = pairs
        .iter()
        .flat_map(|(b, e)| [b.clone(), literal(e)])
        .collect();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("exp.toml"), cell_experiment(&strategies, "")).unwrap();
    run_ok(d.path(), &["sweep", "exp.toml", "-q"]);
    let (columns, groups) = rows_by_strategy(&d.path().join("out/cells.csv"));
    assert_eq!(groups.len(), 8);
    // 6 histories × 2 replicates × 4 noise levels × 2 keep_recent × 5 budgets.
    let cells = 6 * 2 * 4 * 2 * 5;
    for pair in groups.chunks(2) {
        let ((builtin, a), (program, b)) = (&pair[0], &pair[1]);
        assert!(program.starts_with("external(cmd="), "{program}");
        assert_eq!((a.len(), b.len()), (cells, cells));
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(x, y, "{builtin} and {program} differ at their cell {i}");
        }
    }
    // The grid reaches both outcomes: `required` is infeasible in some cells (the flagged
    // records exceed 10 %), feasible in others.
    let at = columns.iter().position(|c| c == "feasible").unwrap();
    let feasible = |rows: &[Vec<String>]| rows.iter().filter(|r| r[at] == "true").count();
    let required_feasible = feasible(&groups[4].1);
    assert!(
        required_feasible > 0 && required_feasible < cells,
        "{required_feasible}"
    );
}

/// Six records whose identifiers decide, costed in chars (separator 1): 26, 20, 28, 26, 35,
/// 18; total 153 + 5 = 158.
const IDENTIFIERS: &str = r#"{"id": 1, "kind": "user", "text": "fix parse_config in app.py", "required": true}
{"id": 2, "kind": "assistant", "text": "reading the code now", "required": false}
{"id": 3, "kind": "tool_result", "tool": "bash", "text": "def parse_config(path): pass", "required": true}
{"id": 4, "kind": "tool_result", "tool": "bash", "text": "lorem ipsum dolor sit amet", "required": false}
{"id": 5, "kind": "tool_result", "tool": "bash", "text": "config_v2 loaded from settings.toml", "required": false}
{"id": 6, "kind": "assistant", "text": "use config_v2 next", "required": false}
"#;

#[test]
fn keep_identifiers_keeps_what_the_work_comes_back_to_whatever_the_flags() {
    if !python3("keep_identifiers_keeps_what_the_work_comes_back_to_whatever_the_flags") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("ids.jsonl"), IDENTIFIERS).unwrap();
    let keep_ids = external(
        &example("keep_identifiers.py"),
        ", name=keep_ids, texts=true",
    );
    // Scores, the newest first, against the task's {parse_config, app.py} and what follows:
    // record 6 {config_v2} 0; 5 {config_v2, settings.toml} 1 (6 names config_v2); 4 none 0;
    // 3 {parse_config} 1; 2 none 0; 1 (the task) {parse_config, app.py} 2. At 60 % the capacity
    // is floor(158 × 0.6) = 94: record 1 (26), 5 (26 + 1 + 35 = 62), 3 (62 + 1 + 28 = 91);
    // then 6 (110), 4 (118) and 2 (112) do not fit. `required` keeps the flagged 1 and 3 (55)
    // and the newest that fits, 6 (74); `recent` keeps 6, 5, 4 (81) and stops at 3.
    for (noise, required_kept) in [("0", "2/2"), ("1", "0/2")] {
        let inspect = |strategy: &str| {
            run_ok(
                d.path(),
                &[
                    "inspect",
                    "ids.jsonl",
                    "--budget",
                    "60",
                    "--strategy",
                    strategy,
                    "--noise-fn",
                    noise,
                    "--color",
                    "never",
                ],
            )
        };
        let out = inspect(&keep_ids);
        let fates: Vec<&str> = out
            .lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .map(|l| l.split_whitespace().last().unwrap())
            .collect();
        assert_eq!(
            fates,
            ["kept", "dropped", "kept", "dropped", "kept", "dropped"],
            "{out}"
        );
        assert!(
            out.contains("used 91 of 94, reduction 42.4%, required kept 2/2"),
            "{out}"
        );
        // The flags do not enter it; with every flag missing `required` keeps neither.
        let required = inspect("required");
        assert!(
            required.contains(&format!("required kept {required_kept}")),
            "{required}"
        );
    }
    let table = run_ok(
        d.path(),
        &[
            "table",
            "ids.jsonl",
            "--budgets",
            "60",
            "--strategies",
            &format!("recent,{keep_ids}"),
            "--format",
            "csv",
        ],
    );
    assert!(table.contains(",94,81,"), "{table}");
    assert!(table.contains(",94,91,"), "{table}");
}

/// A session sweep of `strategies` (TOML strings).
fn session_experiment(strategies: &[String]) -> String {
    format!(
        r#"name = "ext"
seed = 13
replicates = 2
[histories]
generate = {{ count = 4, records = [30, 80], required_share = 0.2, required_position = "early", seed = 6 }}
[session]
strategies = [{}]
windows = [1500, 3000]
ratios = [0.6, 0.9]
note_rates = [0.0, 0.2]
false_negative = [0.0, 0.3]
false_positive = [0.0]
keep_recent = 4
max_consecutive = 4
[output]
dir = "out"
formats = ["csv"]
"#,
        strategies.join(", ")
    )
}

#[test]
fn in_sessions_the_programs_compact_and_bill_as_the_built_in_rules() {
    if !python3("in_sessions_the_programs_compact_and_bill_as_the_built_in_rules") {
        return;
    }
    // The summary a program writes by cost alone carries nothing: the built-in `summary` whose
    // simulated summariser keeps nothing is the same rule, billed as the generic `summary`.
    let nothing = [
        "flagged",
        "other",
        "system",
        "user",
        "assistant",
        "tool_call",
        "tool_result",
        "summary",
        "note",
    ]
    .map(|k| format!(", recall_{k}=0"))
    .concat();
    let strategies = [
        "\"recent\"".to_string(),
        literal(&external(&example("recent.py"), "")),
        "\"required\"".to_string(),
        literal(&external(&example("required.py"), "")),
        format!("\"summary(keep_first=0, summary_size=120{nothing})\""),
        literal(&external(&fixture("summary_cost.py"), ", size=120")),
    ];
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), session_experiment(&strategies)).unwrap();
    run_ok(d.path(), &["sweep", "s.toml", "-q"]);
    let path = d.path().join("out/sessions.csv");
    let (_, groups) = rows_by_strategy(&path);
    assert_eq!(groups.len(), 6);
    for pair in groups.chunks(2) {
        let ((builtin, a), (program, b)) = (&pair[0], &pair[1]);
        // 4 histories × 2 replicates × 2 noise levels × 2 windows × 2 ratios × 2 note rates.
        assert_eq!((a.len(), b.len()), (128, 128));
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(x, y, "{builtin} and {program} differ at their session {i}");
        }
    }
    // The summaries were written and billed: every summarising session made summary calls.
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (strategy, calls) = (col("strategy"), col("summary_calls"));
    let summary_calls: u64 = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| r[strategy].contains("summary_cost.py"))
        .map(|r| r[calls].parse::<u64>().unwrap())
        .sum();
    assert!(summary_calls > 0);
}

/// Seven records of 100 chars each (separator 1, total 706): a system prompt, the task, then
/// assistant turns and tool results.
fn seven() -> String {
    let kinds = [
        "system",
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "tool_result",
        "assistant",
    ];
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let text = format!("{k} {i} ").repeat(20)[..100].to_string();
            format!("{{\"id\": {i}, \"kind\": \"{k}\", \"text\": \"{text}\"}}\n")
        })
        .collect()
}

/// `ctxlab session` on `seven()` at a window of 400 chars (compacting at 0.6 × 400 = 240,
/// to 0.5 × 400 = 200), its metrics CSV as (header, values).
fn session_metrics(dir: &Path, strategy: &str) -> Vec<(String, String)> {
    let out = run_ok(
        dir,
        &[
            "session",
            "seven.jsonl",
            "--window",
            "400",
            "--ratio",
            "0.6",
            "--target",
            "0.5",
            "--keep-recent",
            "1",
            "--cost",
            "chars",
            "--strategy",
            strategy,
            "--format",
            "metrics",
        ],
    );
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    let header = reader.headers().unwrap().clone();
    let values = reader.records().next().unwrap().unwrap();
    header
        .iter()
        .zip(values.iter())
        .map(|(h, v)| (h.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_summary_call_the_answer_declares_is_billed_as_declared() {
    if !python3("a_summary_call_the_answer_declares_is_billed_as_declared") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("seven.jsonl"), seven()).unwrap();
    let script = fixture("summary_cost.py");
    let whole = session_metrics(d.path(), &external(&script, ", size=20"));
    let own = session_metrics(d.path(), &external(&script, ", size=20, prompt=50"));
    let get = |m: &[(String, String)], k: &str| {
        m.iter()
            .find(|(h, _)| h == k)
            .map(|(_, v)| v.parse::<u64>().unwrap())
            .unwrap()
    };
    // The calls are records 2, 4, 6 (assistant); before call 2 the context is records 0–3,
    // 4 × 100 + 3 = 403 ≥ 240: a compaction to 200 with keep_recent 1 summarises 0–2 into 20
    // units (20 + 1 + 100 = 121 fits). Before call 3 it is 121 + 1 + 100 + 1 + 100 = 323: the
    // summary (an entry of the view now), 3 and 4 summarised into 20, 5 kept (121 again). One
    // summary call each time. On the whole context it reads 403, then 323; with its own prompt
    // it reads 50 plus the summarised entries: 302 (0–2), then 20 + 1 + 100 + 1 + 100 = 222.
    // The agent calls read 201 (records 0–1), then 121 and 121.
    let agent = 201 + 121 + 121;
    for m in [&whole, &own] {
        // 3 agent calls and 2 summary calls.
        assert_eq!(get(m, "model_calls"), 5);
        assert_eq!(get(m, "output_tokens"), 3 * 100 + 2 * 20);
    }
    assert_eq!(get(&whole, "input_tokens"), agent + 403 + 323);
    assert_eq!(get(&own, "input_tokens"), agent + (50 + 302) + (50 + 222));
}

/// A cell experiment of `recent` and `faulty.py` with `params`, 2 histories, one noise level,
/// budgets 30, 50, 80 and keep_recent 0: the external strategy's cells of history 0 come in
/// the order of the budgets.
fn faulty_experiment(params: &str) -> String {
    format!(
        r#"name = "faulty"
seed = 3
replicates = 1
[histories]
generate = {{ count = 2, records = [20, 40], required_share = 0.2, seed = 2 }}
cost = "chars"
[sweep]
strategies = ["recent", {}]
budgets = [30, 50, 80]
keep_recent = [0]
false_negative = [0.0]
false_positive = [0.0]
[output]
dir = "out"
formats = ["csv"]
"#,
        literal(&external(&fixture("faulty.py"), params))
    )
}

/// Runs `faulty.py` with `params` on one thread; asserts it fails with `needles` and publishes
/// nothing.
fn refused(params: &str, needles: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("exp.toml"), faulty_experiment(params)).unwrap();
    let o = ctxlab(d.path(), &["sweep", "exp.toml", "-q", "--threads", "1"]);
    assert_fails_with(&o, needles);
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    let out = d.path().join("out");
    for file in ["manifest.json", "cells.csv", "summary.csv"] {
        assert!(!out.join(file).exists(), "{file} was published:\n{err}");
    }
    err
}

#[test]
fn every_wrong_answer_stops_the_run_naming_the_cell_and_publishes_nothing() {
    if !python3("every_wrong_answer_stops_the_run_naming_the_cell_and_publishes_nothing") {
        return;
    }
    let script = fixture("faulty.py");
    let cmd = format!("`python3 {}`", script.display());
    // The first history has 20–40 records; its cell at 30 % is the first external request.
    let first = "history 0 \"synthetic-00000\", replicate 0, noise uniform(fn=0, fp=0), strategy `external(";
    let err = refused(
        ", fault=unknown_id",
        &[first, "budget 30 %", "request 1 to", &cmd],
    );
    assert!(err.contains("item 0 names record"), "{err}");
    assert!(err.contains("but the history has"), "{err}");
    refused(
        ", fault=out_of_order",
        &[
            first,
            "item 1 names record 0 after record 1: items follow the order of the context",
        ],
    );
    refused(", fault=over_capacity", &[first, "over the capacity"]);
    refused(
        ", fault=wrong_cost",
        &[first, "it claims its context costs"],
    );
    refused(
        ", fault=not_json",
        &[
            first,
            "its answer is not a JSON answer object",
            "it began: kept records 1, 2 and 3",
        ],
    );
    // The third request is the cell at 80 %: the cell named is the one that failed.
    refused(
        ", fault=wrong_cost, at=3",
        &["budget 80 %", "request 3 to", "it claims its context costs"],
    );
    // A crash: its standard error is passed through.
    refused(
        ", fault=crash",
        &[
            first,
            "the program ended without answering (exit status: 1)",
            "the program's standard error ended with:",
            "faulty.py: about to fail on purpose",
            "ValueError: a bug in the strategy",
        ],
    );
    // A hang: stopped at the time limit.
    let started = std::time::Instant::now();
    refused(
        ", fault=hang, time_limit=1",
        &[
            first,
            "no answer within 1 s (the strategy's time_limit); the program was stopped",
        ],
    );
    assert!(started.elapsed().as_secs() < 30);
    // A program that is not there.
    let d = tempfile::tempdir().unwrap();
    let spec = literal("external(cmd=\"./no-such-rule --x\")");
    std::fs::write(
        d.path().join("exp.toml"),
        faulty_experiment("").replace(&literal(&external(&script, "")), &spec),
    )
    .unwrap();
    let o = ctxlab(d.path(), &["sweep", "exp.toml", "-q"]);
    assert_fails_with(&o, &["its command names no program file", "./no-such-rule"]);
}

#[test]
fn a_session_that_fails_is_named_by_its_coordinates() {
    if !python3("a_session_that_fails_is_named_by_its_coordinates") {
        return;
    }
    let strategies = [literal(&external(
        &fixture("faulty.py"),
        ", fault=wrong_cost, at=2",
    ))];
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("s.toml"), session_experiment(&strategies)).unwrap();
    let o = ctxlab(d.path(), &["sweep", "s.toml", "-q", "--threads", "1"]);
    // The first session (window 1500, ratio 0.6, no notes) compacts more than once: its second
    // compaction is the second request.
    assert_fails_with(
        &o,
        &[
            "history 0 \"synthetic-00000\", replicate 0, noise uniform(fn=0, fp=0), strategy `external(",
            "window 1500, ratio 0.6, note_rate 0, compaction 2 (capacity 450, keep_recent 4): request 2 to",
        ],
    );
    assert!(!d.path().join("out/manifest.json").exists());
}

#[test]
fn a_changed_program_cannot_resume_and_the_manifest_records_its_hash() {
    if !python3("a_changed_program_cannot_resume_and_the_manifest_records_its_hash") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let program = std::fs::read_to_string(example("recent.py")).unwrap();
    std::fs::write(d.path().join("rule.py"), &program).unwrap();
    let exp = cell_experiment(
        &[
            "\"recent\"".into(),
            literal("external(cmd=\"python3 rule.py\")"),
        ],
        "",
    );
    std::fs::write(d.path().join("exp.toml"), exp).unwrap();
    let args = ["sweep", "exp.toml", "-q", "--chunk-cells", "80"];
    let o = ctxlab_env(d.path(), &args, ("CTXLAB_FAULT", "chunks:2"));
    assert!(!o.status.success());
    std::fs::write(d.path().join("rule.py"), format!("{program}\n# changed\n")).unwrap();
    let resume = [&args[..], &["--resume"]].concat();
    let o = ctxlab(d.path(), &resume);
    assert_fails_with(
        &o,
        &["cannot resume: the program rule.py of `python3 rule.py` changed since the unfinished run (SHA-256 "],
    );
    // The same program resumes.
    std::fs::write(d.path().join("rule.py"), &program).unwrap();
    run_ok(d.path(), &resume);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out/manifest.json")).unwrap())
            .unwrap();
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(program.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        manifest["programs"],
        serde_json::json!([{"command": "python3 rule.py", "file": "rule.py", "sha256": sha}])
    );
}

#[test]
fn the_same_sweep_gives_the_same_rows_at_one_and_two_threads() {
    if !python3("the_same_sweep_gives_the_same_rows_at_one_and_two_threads") {
        return;
    }
    let strategies = [
        "\"required\"".to_string(),
        literal(&external(
            &example("keep_identifiers.py"),
            ", name=keep_ids, texts=true",
        )),
        literal(&external(&example("recent.py"), "")),
    ];
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("exp.toml"), cell_experiment(&strategies, "")).unwrap();
    let mut tables = Vec::new();
    for threads in ["1", "2"] {
        let out = format!("out{threads}");
        run_ok(
            d.path(),
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--threads",
                threads,
                "--chunk-cells",
                "200",
                "--out",
                &out,
            ],
        );
        tables.push(std::fs::read(d.path().join(out).join("cells.csv")).unwrap());
    }
    assert!(
        tables[0] == tables[1],
        "the cells differ between 1 and 2 threads"
    );
}
