//! Bring your own flags: `histories.flags_file` (and the `flag` field of history records), the
//! flagger's confusion matrix in the report, `ctxlab flags audit`, and every bad flags file.

use crate::common::*;
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// One history of 30 records of mixed kinds and lengths, every third one required.
fn mixed_history() -> String {
    let kinds = [
        "user",
        "assistant",
        "tool_call",
        "tool_result",
        "tool_result",
    ];
    (0..30)
        .map(|i| {
            let text = "x".repeat(10 + (i * 7) % 40);
            format!(
                "{{\"history\":\"run\",\"id\":{},\"kind\":\"{}\",\"tool\":\"bash\",\"text\":\"{text}\",\"required\":{}}}\n",
                i + 1,
                kinds[i % kinds.len()],
                i % 3 == 0
            )
        })
        .collect()
}

/// The flags `ctxlab inspect` shows a strategy seeing (the sweep's own noise draws for its
/// first history), as a flags file.
fn inspected_flags(dir: &Path, history: &str, seed: &str) -> String {
    let o = ctxlab(
        dir,
        &[
            "inspect",
            history,
            "--strategy",
            "recent",
            "--budget",
            "50",
            "--noise-fn",
            "0.3",
            "--noise-fp",
            "0.1",
            "--seed",
            seed,
            "--replicate",
            "0",
            "--color",
            "never",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = String::new();
    let mut rows = 0;
    // Record rows: id, kind, tool, cost, truth, flag, fate.
    for line in text.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.len() >= 7 && cells[0].parse::<u64>().is_ok() && cells[1] != "records" {
            let flag = cells[5] == "flagged";
            lines += &format!(
                "{{\"history\":\"run\",\"id\":{},\"flag\":{flag}}}\n",
                cells[0]
            );
            rows += 1;
        }
    }
    assert_eq!(rows, 30, "{text}");
    lines
}

/// The columns of a CSV table by name, with their values row by row.
fn columns(path: &Path) -> Vec<(String, Vec<String>)> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let names: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), rows.iter().map(|r| r[i].to_string()).collect()))
        .collect()
}

/// Asserts two tables agree, row for row, on every column naming `retention` and on the
/// coordinates that line the rows up; returns how many retention columns were compared.
fn same_retention(a: &Path, b: &Path, coordinates: &[&str]) -> usize {
    let (a, b) = (columns(a), columns(b));
    let mut compared = 0;
    for (name, values) in &a {
        if name.contains("retention") || coordinates.contains(&name.as_str()) {
            let other = &b.iter().find(|(n, _)| n == name).unwrap().1;
            assert_eq!(values, other, "column {name} differs");
            compared += usize::from(name.contains("retention"));
        }
    }
    compared
}

const CELLS: &str = r#"
name = "byo"
seed = 5
[histories]
files = ["run.jsonl"]
FLAGS
[sweep]
strategies = ["recent", "required", { name = "required", fill = "skip" }, "mask"]
budgets = [25, 50, 75]
keep_recent = [0, 2]
NOISE
[output]
formats = ["csv", "parquet"]
"#;

const SESSIONS: &str = r#"
name = "byo-sessions"
seed = 5
[histories]
files = ["run.jsonl"]
cost = "chars"
FLAGS
[session]
strategies = ["recent", "required", "summary(keep_recent=2)"]
windows = [300, 600]
ratios = [0.8]
note_rates = [0.0, 0.2]
NOISE
[output]
formats = ["csv"]
"#;

fn experiment(template: &str, flags: &str, noise: &str) -> String {
    template.replace("FLAGS", flags).replace("NOISE", noise)
}

#[test]
fn a_flags_file_reproduces_the_sweep_whose_noise_drew_the_same_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "run.jsonl", &mixed_history());
    let flags = inspected_flags(d, "run.jsonl", "5");
    write(d, "flags.jsonl", &flags);
    // The draws flip some flags at these rates, or the comparison would prove nothing.
    let flipped = flags
        .lines()
        .enumerate()
        .filter(|(i, l)| l.contains("true") != (i % 3 == 0))
        .count();
    assert!(flipped > 0, "no flag flipped:\n{flags}");
    let noisy = "false_negative = [0.3]\nfalse_positive = [0.1]";
    for (template, table, coordinates) in [
        (
            CELLS,
            "cells.csv",
            &["history", "strategy", "keep_recent", "budget_percent"][..],
        ),
        (
            SESSIONS,
            "sessions.csv",
            &["history", "strategy", "window", "note_rate"][..],
        ),
    ] {
        write(d, "noisy.toml", &experiment(template, "", noisy));
        write(
            d,
            "byo.toml",
            &experiment(template, "flags_file = \"flags.jsonl\"", ""),
        );
        for (file, out) in [("noisy.toml", "noisy"), ("byo.toml", "byo")] {
            let o = ctxlab(d, &["sweep", file, "--quiet", "--out", out]);
            assert!(o.status.success(), "{file}: {}", stderr(&o));
        }
        let compared = same_retention(
            &d.join("noisy").join(table),
            &d.join("byo").join(table),
            coordinates,
        );
        assert!(compared >= 2, "{table}: only {compared} retention columns");
        std::fs::remove_dir_all(d.join("noisy")).unwrap();
        std::fs::remove_dir_all(d.join("byo")).unwrap();
    }
}

/// Four histories of 20 records: record i (0-based) is required when even (kind `user` when
/// i % 4 = 0, `tool_result` when i % 4 = 2) and an `assistant` record when odd. History k
/// misses its last m_k = 2, 3, 3, 4 required records (i = 18, 16, 14, 12 in that order) and
/// falsely flags f_k = 0, 1, 1, 2 odd records (i = 1, then 3).
fn audited() -> (String, String) {
    let misses = [2usize, 3, 3, 4];
    let alarms = [0usize, 1, 1, 2];
    let mut histories = String::new();
    let mut flags = String::new();
    for k in 0..4 {
        for i in 0..20usize {
            let kind = match i % 4 {
                0 => "user",
                2 => "tool_result",
                _ => "assistant",
            };
            let required = i % 2 == 0;
            histories += &format!(
                "{{\"history\":\"h{k}\",\"id\":{},\"kind\":\"{kind}\",\"text\":\"{}\",\"required\":{required}}}\n",
                i + 1,
                "y".repeat(5 + i)
            );
            let missed = required && i >= 20 - 2 * misses[k];
            let alarm = !required && i < 2 * alarms[k];
            let flag = (required && !missed) || alarm;
            flags += &format!(
                "{{\"history\":\"h{k}\",\"id\":{},\"flag\":{flag}}}\n",
                i + 1
            );
        }
    }
    (histories, flags)
}

#[test]
fn the_confusion_matrix_and_the_audit_count_a_hand_made_flagger() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (histories, flags) = audited();
    write(d, "h.jsonl", &histories);
    write(d, "flags.jsonl", &flags);

    // Required: 10 per history, 40 in all; misses 2 + 3 + 3 + 4 = 12, so TP = 28, FN = 12.
    // Not required: 40; false alarms 0 + 1 + 1 + 2 = 4, so FP = 4, TN = 36.
    // user: 5 required per history, misses at i = 16 (all) and 12 (h3): 1 + 1 + 1 + 2 = 5 of 20.
    // tool_result: misses at 18 (all) and 14 (h1–h3): 1 + 2 + 2 + 2 = 7 of 20.
    // assistant: the 40 not-required records, 4 false alarms.
    let exp = "name = \"conf\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\nflags_file = \"flags.jsonl\"\n[sweep]\nstrategies = [\"recent\", \"required\"]\nbudgets = [50, 100]\n[output]\ndir = \"out\"\n";
    write(d, "conf.toml", exp);
    let o = ctxlab(d, &["sweep", "conf.toml", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    for row in [
        "| records of | histories | records | TP | FN | FP | TN | FN rate (FN / required) | FP rate (FP / not required) |",
        "| all | 4 | 80 | 28 | 12 | 4 | 36 | 0.300 (12/40) | 0.100 (4/40) |",
        "| kind user | 4 | 20 | 15 | 5 | 0 | 0 | 0.250 (5/20) | — |",
        "| kind assistant | 4 | 40 | 0 | 0 | 4 | 36 | — | 0.100 (4/40) |",
        "| kind tool_result | 4 | 20 | 13 | 7 | 0 | 0 | 0.350 (7/20) | — |",
        "the flags file `flags.jsonl`",
    ] {
        assert!(report.contains(row), "report lacks {row:?}:\n{report}");
    }
    // Beside it, the retention those flags lead to: at 100 % everything fits, so 1.000.
    assert!(
        report.contains("The retention these flags lead to"),
        "{report}"
    );
    assert!(report.contains("| `required` | "), "{report}");
    // The sweep says it on the terminal too (a session sweep writes no report).
    assert!(
        stdout(&o).contains("over 4 histories, 80 records"),
        "{}",
        stdout(&o)
    );
    // Shards count every history (each loads them all), so the merged manifest has the same
    // matrix as the whole run's.
    for shard in ["0/2", "1/2"] {
        let o = ctxlab(
            d,
            &[
                "sweep",
                "conf.toml",
                "--quiet",
                "--out",
                "sh",
                "--shard",
                shard,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = ctxlab(d, &["merge", "sh"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let flagger = |dir: &str| {
        let text = std::fs::read_to_string(d.join(dir).join("manifest.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["flagger"].clone()
    };
    assert_eq!(flagger("out")["overall"]["false_negative"], 12);
    assert_eq!(flagger("sh"), flagger("out"));

    let o = ctxlab(d, &["flags", "audit", "h.jsonl", "--flags", "flags.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let audit = stdout(&o);
    // Rates are shares: Jeffreys's interval on the effective sample (stats module). FN by
    // history: misses s = 2, 3, 3, 4 of n = 10 each; p = 12/40 = 0.3; residuals s − p·n = −1,
    // 0, 0, 1; V = 4/3 · 2 / 40² = 1/600; n* = p(1 − p)/V = 126, times (t(0.975, 39) /
    // t(0.975, 3))² = (2.0227/3.1824)²: n = 50.898, so the 2.5 % and 97.5 % quantiles of
    // Beta(15.769, 36.129): 0.188–0.434 (the normal-theory interval was 0.170–0.430). FP:
    // s = 0, 1, 1, 2 of 10, p = 0.1, the same residuals: n* = 54, n = 21.813, Beta(2.681,
    // 20.132): 0.023–0.274 (was 0.1 ± 0.1299 clamped at 0). user FN: s = 1, 1, 1, 2 of 5,
    // p = 0.25, residuals −0.25 (×3), 0.75: V = 4/3 · 0.75 / 20² = 0.0025, n* = 75, times
    // (2.0930/3.1824)²: n = 32.441, 0.127–0.416. (Quantiles by the hypergeometric series of
    // the incomplete beta function, computed apart from ctxlab.)
    for want in [
        "flags audit: 4 histories, 80 records; flags from flags.jsonl",
        "uniform(fn=0.3, fp=0.1)",
        "by_kind(fn=0.3, fp=0.1, fn_user=0.25, fp_assistant=0.1, fn_tool_result=0.35)",
    ] {
        assert!(audit.contains(want), "audit lacks {want:?}:\n{audit}");
    }
    // A row's cells after its two-word scope (`all` has one word: `all` then the cells).
    let row = |scope: &str| {
        let line = audit
            .lines()
            .find(|l| l.starts_with(scope))
            .unwrap_or_else(|| panic!("no {scope:?} row:\n{audit}"));
        line[scope.len()..]
            .split_whitespace()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    // histories, required, FN, FN rate, FN interval, (histories), not required, FP, FP rate,
    // FP interval, (histories).
    assert_eq!(
        row("all "),
        [
            "4",
            "40",
            "12",
            "0.300",
            "0.188–0.434",
            "(4)",
            "40",
            "4",
            "0.100",
            "0.023–0.274",
            "(4)"
        ]
    );
    assert_eq!(row("kind user")[2..6], ["5", "0.250", "0.127–0.416", "(4)"]);
    // Quarters (floor(4i/20) = floor(i/5)): required records i = 0, 2, 4 | 6, 8 | 10, 12, 14 |
    // 16, 18, so 12, 8, 12, 8 over the four histories; misses 0, 0, 0 + 1 + 1 + 2 = 4, 8.
    assert_eq!(row("quarter 1")[1..4], ["12", "0", "0.000"]);
    assert_eq!(row("quarter 3")[1..4], ["12", "4", "0.333"]);
    assert_eq!(row("quarter 4")[1..4], ["8", "8", "1.000"]);
    // The position lines, least squares over records at x = i/19. FN: the 40 required records
    // (even i) have x̄ = 9/19, Σ(x − x̄)² = 4 · Σ(i − 9)²/19² = 1320/361, and Σ(x − x̄)(y − ȳ)
    // = Σ over the misses (i − 9)/19 = (16 + 21 + 21 + 24)/19 = 82/19; slope = 82·19/1320 =
    // 1.1803, intercept 0.3 − 1.1803 · 9/19 = −0.2591 → clamped to 0, end 0.9212. FP: the odd
    // i have x̄ = 10/19, the alarms give Σ(i − 10)/19 = −34/19, slope −34·19/1320 = −0.4894,
    // start 0.1 + 0.4894 · 10/19 = 0.3576, end −0.1318 → clamped to 0.
    assert!(
        audit.contains("by_position(fn_start=0, fn_end=0.921, fp_start=0.358, fp_end=0)"),
        "{audit}"
    );
}

/// Two histories, `a` (ids 1, 2, 3) and `b` (id 1), and a flags file naming all four.
const TWO: &str = "{\"history\":\"a\",\"id\":1,\"text\":\"one\",\"required\":true}\n{\"history\":\"a\",\"id\":2,\"text\":\"two\"}\n{\"history\":\"a\",\"id\":3,\"text\":\"three\"}\n{\"history\":\"b\",\"id\":1,\"text\":\"four\",\"required\":true}\n";

fn flag_line(history: &str, id: u64, flag: bool) -> String {
    format!("{{\"history\":\"{history}\",\"id\":{id},\"flag\":{flag}}}\n")
}

fn good_flags() -> Vec<String> {
    vec![
        flag_line("a", 1, true),
        flag_line("a", 2, false),
        flag_line("a", 3, true),
        flag_line("b", 1, false),
    ]
}

#[test]
fn every_bad_flags_file_is_one_message_naming_file_and_line_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.jsonl", TWO);
    let cells = "name = \"bad\"\nseed = 1\n[histories]\nfiles = [\"two.jsonl\"]\nflags_file = \"flags.jsonl\"\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n[output]\ndir = \"out\"\n";
    let sessions = "name = \"bad\"\nseed = 1\n[histories]\nfiles = [\"two.jsonl\"]\nflags_file = \"flags.jsonl\"\n[session]\nstrategies = [\"recent\"]\nwindows = [10]\nratios = [0.8]\n[output]\ndir = \"out\"\n";
    write(d, "cells.toml", cells);
    write(d, "sessions.toml", sessions);
    let with = |edit: &dyn Fn(&mut Vec<String>)| {
        let mut lines = good_flags();
        edit(&mut lines);
        lines.concat()
    };
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "a record without a line",
            with(&|l| {
                l.remove(1);
            }),
            // The history's last line is line 2 once line 2 (a, id 2) is gone.
            vec![
                "flags.jsonl:2:",
                "history \"a\" lacks a flag line for 1 of its 3 records (first: id 2)",
            ],
        ),
        (
            "a history without a line",
            with(&|l| {
                l.pop();
            }),
            vec!["flags.jsonl: no line names history \"b\""],
        ),
        (
            "a line for a record that does not exist",
            with(&|l| l.insert(2, flag_line("a", 9, true))),
            vec!["flags.jsonl:3:", "history \"a\" has no record with id 9"],
        ),
        (
            "an unknown history",
            with(&|l| l.push(flag_line("zz", 1, true))),
            vec![
                "flags.jsonl:5:",
                "no loaded history is named \"zz\"",
                "\"a\", \"b\"",
            ],
        ),
        (
            "a flag that is not a boolean",
            with(&|l| l[0] = "{\"history\":\"a\",\"id\":1,\"flag\":\"yes\"}\n".into()),
            vec![
                "flags.jsonl:1:",
                "invalid type: string \"yes\", expected a boolean",
            ],
        ),
        (
            "malformed JSON",
            with(&|l| l[3] = "{\"history\":\"b\",\"id\":1,\n".into()),
            vec![
                "flags.jsonl:4:",
                "EOF while parsing",
                "expected a JSON object {\"history\"",
            ],
        ),
        (
            "a duplicate line",
            with(&|l| l.push(flag_line("a", 3, false))),
            vec![
                "flags.jsonl:5:",
                "record 3 of history \"a\" already has a flag on line 3",
            ],
        ),
        (
            "an unknown field",
            with(&|l| l[0] = "{\"history\":\"a\",\"id\":1,\"flag\":true,\"score\":0.9}\n".into()),
            vec!["flags.jsonl:1:", "unknown field `score`"],
        ),
        (
            "an empty file",
            String::from("\n"),
            vec!["flags.jsonl: holds no flags"],
        ),
    ];
    for (what, text, needles) in &cases {
        write(d, "flags.jsonl", text);
        for exp in ["cells.toml", "sessions.toml"] {
            let o = ctxlab(d, &["sweep", exp, "--quiet"]);
            assert_fails_with(&o, needles);
            assert!(!stderr(&o).contains("panicked"), "{what}: {}", stderr(&o));
            assert!(
                !d.join("out").exists(),
                "{what} ({exp}): the output folder was made"
            );
        }
        let o = ctxlab(
            d,
            &["flags", "audit", "two.jsonl", "--flags", "flags.jsonl"],
        );
        assert_fails_with(&o, needles);
        assert!(
            stdout(&o).is_empty(),
            "{what}: audit printed {}",
            stdout(&o)
        );
    }
}

#[test]
fn flags_in_the_history_file_work_like_a_flags_file_and_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The same flags two ways: `flag` fields on the records, or a flags file.
    let flags = good_flags().concat();
    let flagged: String = TWO
        .lines()
        .zip(good_flags())
        .map(|(record, line)| {
            let flag = line.contains("true");
            format!("{},\"flag\":{flag}}}\n", record.trim_end_matches('}'))
        })
        .collect();
    write(d, "two.jsonl", TWO);
    write(d, "flagged.jsonl", &flagged);
    write(d, "flags.jsonl", &flags);
    let a = ctxlab(
        d,
        &["flags", "audit", "two.jsonl", "--flags", "flags.jsonl"],
    );
    let b = ctxlab(d, &["flags", "audit", "flagged.jsonl"]);
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        stderr(&a),
        stderr(&b)
    );
    // Required a1, b1; flagged a1, a3: TP 1, FN 1 (b1), FP 1 (a3), TN 1 (a2).
    let table = |o: &std::process::Output| stdout(o).lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&a), table(&b));
    assert!(
        stdout(&b).contains("uniform(fn=0.5, fp=0.5)"),
        "{}",
        stdout(&b)
    );

    // Both ways at once, half-flagged histories, flag rules beside a file, no file at all.
    let exp = |histories: &str| {
        format!("name = \"x\"\nseed = 1\n[histories]\n{histories}\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n[output]\ndir = \"out\"\n")
    };
    let half = flagged.replacen(",\"flag\":false}", "}", 1);
    write(d, "half.jsonl", &half);
    let cases = [
        (
            exp("files = [\"flagged.jsonl\"]\nflags_file = \"flags.jsonl\""),
            vec!["flags.jsonl: history \"a\" already carries flags", "not both"],
        ),
        (
            exp("files = [\"half.jsonl\"]"),
            vec!["half.jsonl:2:", "has no `flag` while line 1 has one"],
        ),
        (
            exp("files = [\"two.jsonl\"]\nformat = \"claude-code\"\nflags = \"errors\"\nflags_file = \"flags.jsonl\""),
            vec!["key `histories.flags_file`", "keep one"],
        ),
        (
            exp("files = [\"two.jsonl\"]\nflags_file = \"nowhere.jsonl\""),
            vec!["key `histories.flags_file`", "\"nowhere.jsonl\" is not a file"],
        ),
    ];
    for (text, needles) in &cases {
        write(d, "x.toml", text);
        let o = ctxlab(d, &["sweep", "x.toml", "--quiet"]);
        assert_fails_with(&o, needles);
        assert!(!d.join("out").exists());
    }
    let o = ctxlab(d, &["flags", "audit", "two.jsonl"]);
    assert_fails_with(
        &o,
        &[
            "two.jsonl: the histories carry no flags of their own",
            "--flags FILE",
        ],
    );
}
