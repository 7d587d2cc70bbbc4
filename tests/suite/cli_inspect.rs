//! `ctxlab inspect` through the binary: the record-by-record layout and every bad-input case.

use crate::common::*;
use std::path::Path;

/// The agent-like run of `tests/strategies.rs`: total 407 chars, required ids 1 and 3.
const AGENT: &str = r#"{"id":1,"kind":"user","text":"xxxxxxxxxxxxxxxxxxxx","required":true}
{"id":2,"kind":"tool_call","tool":"bash","text":"xxxxxxxxxx"}
{"id":3,"kind":"tool_result","tool":"bash","text":"TEXT150","required":true}
{"id":4,"kind":"tool_call","tool":"grep","text":"xxxxxxxxxx"}
{"id":5,"kind":"tool_result","tool":"grep","text":"TEXT120"}
{"id":6,"kind":"tool_call","tool":"bash","text":"xxxxxxxxxx"}
{"id":7,"kind":"tool_result","tool":"bash","text":"TEXT50"}
{"id":8,"kind":"assistant","text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}
"#;

fn write_agent(dir: &Path) {
    let text = AGENT
        .replace("TEXT150", &"x".repeat(150))
        .replace("TEXT120", &"x".repeat(120))
        .replace("TEXT50", &"x".repeat(50));
    std::fs::write(dir.join("agent.jsonl"), text).unwrap();
}

fn inspect(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["inspect", "agent.jsonl"];
    args.extend_from_slice(extra);
    ctxlab(dir, &args)
}

#[test]
fn mask_cell_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path());
    // Capacity floor(407 × 0.4) = 162. The task (1, 20) is the head, kept: the rest has 142,
    // one separator of which joins it to the head. Masking 3 and 5 gives 10 + 21 + 10 + 21 + 10
    // + 50 + 30 + 6 + 1 = 159 > 142; dropping 2 (11) gives 148, dropping 3 (22) 126 ≤ 142.
    // Used 20 + 126 = 146.
    let o = inspect(
        dir.path(),
        &["--strategy", "mask(keep_recent=1)", "--budget", "40"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = "\
history \"agent\": 8 records, total 407 chars, 2 required
strategy mask(keep_recent=1) at 40% → capacity 162; keep_recent 1
flags: false negatives 0, false positives 0, seed 0, replicate 0 (as the sweep's first history)

id  kind         tool  cost  truth     flag     fate
--  -----------  ----  ----  --------  -------  -----------
 1  user         -       20  required  flagged  kept
 2  tool_call    bash    10  -         -        dropped
 3  tool_result  bash   150  required  flagged  dropped
 4  tool_call    grep    10  -         -        kept
 5  tool_result  grep   120  -         -        masked → 21
 6  tool_call    bash    10  -         -        kept
 7  tool_result  bash    50  -         -        kept
 8  assistant    -       30  -         -        kept

metrics: used 146 of 162, reduction 64.1%, required kept 1/2 (50.0%), any form 1/2 (50.0%), exact 83.3%, placeholders 1, summarised 0
";
    assert_eq!(stdout(&o), expected);
}

#[test]
fn summary_cell_shows_what_the_summary_carries() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path());
    // Summary of ids 1–6: 325 replaced → ceil(32.5) = 33; tail 7, 8: 33 + 1 + 50 + 1 + 30 = 115.
    // Recall 1 for flagged records, 0 for the rest: it carries ids 1 and 3.
    let spec = "summary(keep_recent=2, keep_first=0, recall_flagged=1, recall_other=0)";
    let o = inspect(dir.path(), &["--strategy", spec, "--budget", "40"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[6],
        " 1  user         -       20  required  flagged  summarised, kept"
    );
    assert_eq!(
        lines[7],
        " 2  tool_call    bash    10  -         -        summarised, lost"
    );
    assert_eq!(
        lines[8],
        " 3  tool_result  bash   150  required  flagged  summarised, kept"
    );
    assert_eq!(
        lines[12],
        " 7  tool_result  bash    50  -         -        kept"
    );
    assert_eq!(
        lines[15],
        "summary of ids 1–6: cost 33; carries 2 of 6 records (2 of 2 required)"
    );
    assert_eq!(
        lines[16],
        "metrics: used 115 of 162, reduction 71.7%, required kept 0/2 (0.0%), any form 2/2 (100.0%), exact 66.7%, placeholders 0, summarised 6"
    );
    // Every flag wrong (rate 1): the summariser sees no flagged record and keeps nothing.
    let o = inspect(
        dir.path(),
        &[
            "--strategy",
            spec,
            "--budget",
            "40",
            "--noise-fn",
            "1",
            "--seed",
            "9",
        ],
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[2], "flags: false negatives 1, false positives 0, seed 9, replicate 0 (as the sweep's first history)");
    // No record is flagged now, so the flag column is only as wide as its heading.
    assert_eq!(
        lines[6],
        " 1  user         -       20  required  -     summarised, lost"
    );
    assert!(lines[16].contains("any form 0/2 (0.0%)"), "{out}");
}

#[test]
fn clearing_infeasible_cells_and_colour() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path());
    // 60 % → 244: clearing 3 and 5 frees 220 → 187.
    let o = inspect(
        dir.path(),
        &["--strategy", "clear_tool_uses(keep=1)", "--budget", "60"],
    );
    let out = stdout(&o);
    assert!(
        out.contains(" 3  tool_result  bash   150  required  flagged  cleared → 25\n"),
        "{out}"
    );
    assert!(out.contains("used 187 of 244"), "{out}");
    assert!(!out.contains('\x1b'), "plain when stdout is not a terminal");
    // `required` at 10 % (40) cannot hold ids 1 and 3 (171): infeasible, fates unknown, exit 0.
    let o = inspect(dir.path(), &["--strategy", "required", "--budget", "10"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.contains(" 3  tool_result  bash   150  required  flagged  -\n"),
        "{out}"
    );
    assert!(out
        .ends_with("metrics: INFEASIBLE: what the strategy must keep does not fit the capacity\n"));
    // Colour on demand.
    let o = inspect(
        dir.path(),
        &[
            "--strategy",
            "recent",
            "--budget",
            "20",
            "--color",
            "always",
        ],
    );
    let out = stdout(&o);
    assert!(out.contains("\x1b[32mkept\x1b[0m"), "{out}");
    assert!(out.contains("\x1b[31mdropped\x1b[0m"), "{out}");
    let o = inspect(
        dir.path(),
        &["--strategy", "recent", "--budget", "20", "--color", "never"],
    );
    assert!(!stdout(&o).contains('\x1b'));
}

#[test]
fn bad_arguments_fail_clearly_and_print_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path());
    let cases: [(&[&str], &[&str]); 10] = [
        (
            &["--strategy", "masks", "--budget", "50"],
            &["--strategy", "unknown strategy `masks`"],
        ),
        (
            &["--strategy", "mask(min_chars=-3)", "--budget", "50"],
            &["--strategy", "`min_chars` expects a whole number"],
        ),
        (
            &["--strategy", "mask(keep_recent=2", "--budget", "50"],
            &["closing `)`"],
        ),
        (
            &["--strategy", "mask", "--budget", "150"],
            &["--budget", "from 0 to 100"],
        ),
        (
            &["--strategy", "mask", "--budget=-5"],
            &["--budget", "from 0 to 100"],
        ),
        (
            &["--strategy", "mask", "--budget", "half"],
            &["--budget", "not a number"],
        ),
        (
            &["--strategy", "mask", "--budget", "50,70"],
            &["--budget", "one percentage"],
        ),
        (
            &["--strategy", "mask", "--budget", "50", "--noise-fn", "1.5"],
            &["--noise-fn", "from 0 to 1"],
        ),
        (
            &["--strategy", "mask", "--budget", "50", "--noise-fp=-0.1"],
            &["--noise-fp", "from 0 to 1"],
        ),
        (
            &[
                "--strategy",
                "mask",
                "--budget",
                "50",
                "--history-name",
                "other",
            ],
            &["agent.jsonl", "no history named \"other\""],
        ),
    ];
    for (args, needles) in cases {
        let o = inspect(dir.path(), args);
        assert_fails_with(&o, needles);
        assert!(stdout(&o).is_empty(), "{args:?} printed on failure");
    }
    assert_fails_with(
        &ctxlab(
            dir.path(),
            &[
                "inspect",
                "missing.jsonl",
                "--strategy",
                "mask",
                "--budget",
                "50",
            ],
        ),
        &["missing.jsonl", "cannot read"],
    );
    assert_fails_with(&inspect(dir.path(), &["--budget", "50"]), &["--strategy"]);
}

/// A run whose tool results span several lines (SWE-agent's stand-in counts them) and whose
/// tail is tool work (so Gemini CLI's split keeps it): chars cost, 1 per separator.
fn write_multiline_agent(dir: &Path) {
    let lines = |prefix: &str, fill: char, n: usize, width: usize| {
        (0..n)
            .map(|i| format!("{prefix}{i:02}{}", fill.to_string().repeat(width)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let records = [
        serde_json::json!({"id": 1, "kind": "user", "text": format!("task {}", "u".repeat(15)), "required": true}),
        serde_json::json!({"id": 2, "kind": "tool_call", "tool": "bash", "text": format!("ls{}", "x".repeat(8))}),
        serde_json::json!({"id": 3, "kind": "tool_result", "tool": "bash", "text": lines("line", 'y', 6, 20), "required": true}),
        serde_json::json!({"id": 4, "kind": "tool_call", "tool": "grep", "text": format!("grep{}", "x".repeat(6))}),
        serde_json::json!({"id": 5, "kind": "tool_result", "tool": "grep", "text": lines("hit", 'z', 5, 20)}),
        serde_json::json!({"id": 6, "kind": "tool_call", "tool": "bash", "text": format!("cat{}", "x".repeat(7))}),
        serde_json::json!({"id": 7, "kind": "tool_result", "tool": "bash", "text": "w".repeat(50)}),
        serde_json::json!({"id": 8, "kind": "assistant", "text": "a".repeat(30)}),
        serde_json::json!({"id": 9, "kind": "tool_call", "tool": "bash", "text": format!("run{}", "x".repeat(7))}),
        serde_json::json!({"id": 10, "kind": "tool_result", "tool": "bash", "text": lines("out", 'v', 8, 30)}),
        serde_json::json!({"id": 11, "kind": "tool_call", "tool": "bash", "text": format!("run{}", "x".repeat(7))}),
        serde_json::json!({"id": 12, "kind": "tool_result", "tool": "bash", "text": lines("res", 'r', 8, 30)}),
    ];
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.join("agent.jsonl"), text).unwrap();
}

/// Each record's fate as `inspect` prints it, by id, and the `used` of its metrics line.
fn fates_and_used(out: &str) -> (Vec<(u64, u64, String)>, u64) {
    let mut fates = Vec::new();
    for line in out.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if let (Some(id), Some(cost)) = (
            cols.first().and_then(|c| c.parse::<u64>().ok()),
            cols.get(3).and_then(|c| c.parse::<u64>().ok()),
        ) {
            let fate = line.rsplit("  ").next().unwrap().to_string();
            fates.push((id, cost, fate));
        }
    }
    let used = out
        .lines()
        .find_map(|l| l.strip_prefix("metrics: used "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a feasible cell's metrics line");
    (fates, used)
}

/// Every strategy that writes stand-ins prints its own, at the cost its context gave it: the
/// costs of the kept records, the stand-ins and the summaries, joined by one separator each,
/// add up to what the cell used; and the stand-ins worked by hand from each rule's text.
#[test]
fn inspect_prints_each_strategys_own_stand_in() {
    let dir = tempfile::tempdir().unwrap();
    write_multiline_agent(dir.path());
    // (strategy, a stand-in line it must print)
    let cases = [
        // `[Previous: used grep]`: 21 characters.
        (
            "mask(keep_recent=1)",
            " 5  tool_result  grep   129  -         -        masked → 21",
        ),
        // CLEARED_PLACEHOLDER, 25 characters, for both clearing rules.
        (
            "clear_tool_uses(keep=1)",
            " 7  tool_result  bash    50  -         -        cleared → 25",
        ),
        (
            "anthropic_clear_tool_uses(trigger=100, keep=1)",
            " 3  tool_result  bash   161  required  flagged  cleared → 25",
        ),
        // `Old environment output: (6 lines omitted)`: 24 + 17 = 41 characters.
        (
            "swe_agent_last_n(n=1)",
            " 3  tool_result  bash   161  required  flagged  masked → 41",
        ),
        (
            "complexity_trap_hybrid(last_n=1)",
            " 5  tool_result  grep   129  -         -        masked → 41",
        ),
        // `<MASKED>`: 8 characters.
        (
            "openhands_observation_masking(attention_window=3)",
            " 3  tool_result  bash   161  required  flagged  masked → 8",
        ),
        // The task (20 chars, 5 approximate tokens) kept to 2 tokens: ceil(20 × 2 / 5) = 8 of
        // it and the marker `…3 tokens truncated…`, 20 characters.
        (
            "codex_compact(user_tokens=2)",
            " 1  user         -       20  required  flagged  truncated → 28",
        ),
        (
            "gemini_cli_compress(tool_budget=20, truncate_chars=100)",
            "masked or truncated → ",
        ),
    ];
    for (strategy, expected) in cases {
        // `clear_tool_uses` clears only when the context does not fit (90 %: 922 of 1 025).
        // `codex_compact` compacts when the last call would take the window over 0.9 of it
        // (at 50 %: 1 025 > 0.9 × 512).
        let budget = match strategy.split('(').next().unwrap() {
            "clear_tool_uses" => "90",
            "codex_compact" => "50",
            _ => "100",
        };
        let o = inspect(dir.path(), &["--strategy", strategy, "--budget", budget]);
        assert!(o.status.success(), "{strategy}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains(expected),
            "{strategy}: no {expected:?} in\n{out}"
        );
        let (fates, used) = fates_and_used(&out);
        let summaries: Vec<u64> = out
            .lines()
            .filter(|l| l.starts_with("summary of"))
            .map(|l| {
                let cost = l.split("cost ").nth(1).unwrap();
                cost.split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        let mut items = summaries.len() as u64;
        let mut sum: u64 = summaries.iter().sum();
        for (_, cost, fate) in &fates {
            if fate == "kept" {
                (items, sum) = (items + 1, sum + cost);
            } else if let Some(stand_in) = fate.split(" → ").nth(1) {
                (items, sum) = (items + 1, sum + stand_in.parse::<u64>().unwrap());
            }
        }
        assert!(items > 0, "{strategy}: nothing in the context");
        assert_eq!(
            sum + items - 1,
            used,
            "{strategy}: the items do not add up to used\n{out}"
        );
    }
}
