//! The summary's size as a session sweep's axis (`session.summary_ratios`,
//! `session.summary_caps`) and its frontier chart, worked by hand on a tiny history; the axis's
//! bad input; and `required_summary`, the strategy that keeps flagged records verbatim and
//! summarises the rest, record by record.

use crate::common::*;
use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::Strategy;
use ctxlab::view::View;
use ctxlab::CostModel;
use std::path::Path;

use Item::{Summary as S, Verbatim as V};

// ------------------------------------------------------------------ required_summary

/// Records of lengths 10, 20, 5, 20, 20, 5, 8, 8 (chars; a gap costs 1: total 96 + 7 = 103),
/// required (and flagged: the cells below run on the truth) at 0, 2 and 5; record 2 of kind
/// `kind2`, the others notes.
fn eight(kind2: Kind) -> CostedHistory {
    let lengths = [10, 20, 5, 20, 20, 5, 8, 8];
    let records = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let kind = if i == 2 { kind2 } else { Kind::Note };
            Record::new(i as u64 + 1, "x".repeat(n))
                .kind(kind)
                .required([0, 2, 5].contains(&i))
        })
        .collect();
    CostedHistory::new(&History::new("eight", records), CostModel::Chars)
}

const SPEC: &str = "required_summary(keep_recent=2, keep_first=0, summary_ratio=0.25)";

fn cell(h: &CostedHistory, capacity: u64) -> (Outcome, Context) {
    let s = Strategy::parse(SPEC).unwrap();
    let mut ctx = Context::default();
    let keep = s.effective_keep_recent(None);
    let o = s.apply(View::new(h, &h.truth), capacity, keep, 0, &mut ctx);
    (o, ctx)
}

#[test]
fn required_summary_keeps_the_flagged_records_and_summarises_the_stretches_between() {
    let h = eight(Kind::Note);
    assert_eq!(h.total, 103);
    let s = Strategy::parse(SPEC).unwrap();
    assert_eq!(s.label(), SPEC);
    assert_eq!(s.effective_keep_recent(None), 2);
    assert_eq!(
        Strategy::parse("required_summary")
            .unwrap()
            .effective_keep_recent(None),
        6,
        "summary's tail by default"
    );

    // Everything fits at 103: nothing summarised.
    let (o, ctx) = cell(&h, 103);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, (0..8).map(V).collect::<Vec<_>>());

    // Capacity 60. The tail is 6, 7 (keep_recent = 2); before it 0, 2, 5 are flagged and stay,
    // 1, 3, 4 are replaced: 20 + 20 + 20 + 2 gaps = 62, a summary of ceil(0.25 × 62) = 16.
    // Summary, 0, 2, 5, 6, 7: 16 + 10 + 5 + 5 + 8 + 8 + 5 gaps = 57 ≤ 60.
    let (o, ctx) = cell(&h, 60);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [
            S {
                first: 0,
                end: 6,
                cost: 16
            },
            V(0),
            V(2),
            V(5),
            V(6),
            V(7)
        ]
    );
    assert_eq!(ctx.cost, 57);
    // The summary carries none of the records kept verbatim beside it.
    assert!(!ctx.summary_kept[0] && !ctx.summary_kept[2] && !ctx.summary_kept[5]);

    // Capacity 50: 57 does not fit, so the tail folds first. 6 (unflagged) joins the summary:
    // replaced 20 + 20 + 20 + 8 + 3 gaps = 71, ceil(17.75) = 18; 18 + 10 + 5 + 5 + 8 + 4 gaps
    // = 50 ≤ 50.
    let (o, ctx) = cell(&h, 50);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [
            S {
                first: 0,
                end: 7,
                cost: 18
            },
            V(0),
            V(2),
            V(5),
            V(7)
        ]
    );
    assert_eq!(ctx.cost, 50);

    // Capacity 40: 7 folds too (replaced 76 + 4 gaps = 80, summary 20; 20 + 10 + 5 + 5 + 3
    // gaps = 43 > 40), then the oldest flagged record, 0, joins the summary rather than being
    // dropped: replaced 86 + 5 gaps = 91, ceil(22.75) = 23; 23 + 5 + 5 + 2 gaps = 35 ≤ 40.
    let (o, ctx) = cell(&h, 40);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [
            S {
                first: 0,
                end: 8,
                cost: 23
            },
            V(2),
            V(5)
        ]
    );
    assert_eq!(ctx.cost, 35);

    // Capacity 20: then 2 (replaced 97, summary 25; 25 + 5 + 1 = 31) and 5 (replaced 103,
    // summary 26 > 20): even a summary of everything does not fit.
    let (o, ctx) = cell(&h, 20);
    assert_eq!(o, Outcome::Infeasible);
    assert!(ctx.items.is_empty());
}

#[test]
fn required_summary_summarises_an_earlier_summary_even_when_it_is_flagged() {
    // Record 2 is an earlier summary, flagged: it is summarised again with 1, 3, 4: replaced
    // 20 + 5 + 20 + 20 + 3 gaps = 68, ceil(0.25 × 68) = 17. Summary, 0, 5, 6, 7:
    // 17 + 10 + 5 + 8 + 8 + 4 gaps = 52 ≤ 60.
    let h = eight(Kind::Summary);
    let (o, ctx) = cell(&h, 60);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [
            S {
                first: 0,
                end: 6,
                cost: 17
            },
            V(0),
            V(5),
            V(6),
            V(7)
        ]
    );
    assert_eq!(ctx.cost, 52);
}

// ------------------------------------------------------------------ the axis and its frontier

/// A task whose path `src/alpha.rs` is a needed fact (the assistant's record 6 uses it again),
/// then an agent loop; chars: 20, 10, 80, 10, 80, 17, 10.
const TINY: &str = r#"{"id":1,"kind":"user","text":"fix src/alpha.rs now","required":true}
{"id":2,"kind":"assistant","text":"AAAAAAAAAA"}
{"id":3,"kind":"tool_result","tool":"bash","text":"T80"}
{"id":4,"kind":"assistant","text":"AAAAAAAAAA"}
{"id":5,"kind":"tool_result","tool":"bash","text":"T80"}
{"id":6,"kind":"assistant","text":"open src/alpha.rs"}
{"id":7,"kind":"tool_result","tool":"bash","text":"xxxxxxxxxx"}
"#;

const GRID: &str = r#"
name = "tiny"
seed = 1
[histories]
files = ["tiny.jsonl"]
cost = "chars"
[session]
strategies = [
  "recent",
  "summary(keep_recent=1)",
  "summary(keep_recent=1, keep_first=0, recall_user=0)",
]
summary_ratios = [0.1, 0.5]
windows = [200]
ratios = [0.5]
target = 0.5
note_rates = [0.0]
false_negative = [0.0]
false_positive = [0.0]
[output]
dir = "out"
"#;

fn write_tiny(d: &Path) {
    let text = TINY
        .replace("T80", &"x".repeat(80))
        .replace("AAAAAAAAAA", &"x".repeat(10));
    std::fs::write(d.join("tiny.jsonl"), text).unwrap();
    std::fs::write(d.join("tiny.toml"), GRID).unwrap();
}

/// The rows of a CSV file as maps from column to field (no field here holds a comma but the
/// noise label, which is quoted).
fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            let mut fields = Vec::new();
            let mut field = String::new();
            let mut quoted = false;
            for c in l.chars() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => fields.push(std::mem::take(&mut field)),
                    c => field.push(c),
                }
            }
            fields.push(field);
            header.iter().cloned().zip(fields).collect()
        })
        .collect()
}

#[test]
fn the_summary_size_axis_and_its_frontier_worked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_tiny(d);
    let o = ctxlab(d, &["sweep", "tiny.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // `recent` writes no summary and runs once; each summary runs at both ratios, its label
    // saying the size where it is not the default 0.1.
    let sessions = csv_rows(&d.join("out/sessions.csv"));
    let got: Vec<(&str, &str, &str)> = sessions
        .iter()
        .map(|r| {
            (
                r["strategy"].as_str(),
                r["summary_ratio"].as_str(),
                r["summary_cap"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("recent", "", ""),
            ("summary(keep_recent=1)", "0.100000", "2000"),
            (
                "summary(keep_recent=1, summary_ratio=0.5)",
                "0.500000",
                "2000"
            ),
            (
                "summary(keep_recent=1, keep_first=0, recall_user=0)",
                "0.100000",
                "2000"
            ),
            (
                "summary(keep_recent=1, keep_first=0, summary_ratio=0.5, recall_user=0)",
                "0.500000",
                "2000"
            ),
        ]
    );
    // Window 200, ratio 0.5, target 0.5: compact when the context reaches 100, down to 100.
    // Calls before records 2, 4, 6 (the assistant's).
    //
    // `summary(keep_recent=1)`, the task (20) kept as the head, 80 left for the rest:
    //   before call 2, [r1 r2 r3] = 20 + 10 + 80 + 2 = 112 ≥ 100. The rule sees [r2 r3]: with
    //   r3 (81 with its gap) as the tail nothing fits, so both are summarised: replaced 91,
    //   summary ceil(0.1 × 91) = 10 (ratio 0.5: 46).
    //   Before call 3, [r1 S r4 r5]: 0.1: 20 + 10 + 10 + 80 + 3 = 123 ≥ 100; S, r4, r5 all
    //   summarised again: 10 + 10 + 80 + 2 = 102, summary 11. 0.5: 46 + 10 + 80 + 2 = 138,
    //   summary 69. Call 3's input holds the task verbatim: its needed fact at need, 1 of 1.
    //   Mean summary: (10 + 11) / 2 = 10.5 at 0.1, (46 + 69) / 2 = 57.5 at 0.5.
    // `summary(keep_first=0, keep_recent=1, recall_user=0)`, no head, the task dropped by the
    // summary (user recall 0):
    //   before call 2, [r1 r2 r3] = 112: r1, r2 summarised (20 + 10 + 1 = 31: 4; at 0.5 16),
    //   r3 kept (81): 85 / 97 ≤ 100.
    //   Before call 3, [S r3 r4 r5]: 0.1: 4 + 80 + 10 + 80 + 3 = 177; S, r3, r4 summarised
    //   (4 + 80 + 10 + 2 = 96: 10), r5 kept: 91. 0.5: 16 + 80 + 10 + 2 = 108: 54, 54 + 81 =
    //   135 > 100, so r5 folds too: 189, summary ceil(94.5) = 95. The fact is gone at call
    //   3: 0 of 1. Mean summary: (4 + 10) / 2 = 7 at 0.1, (16 + 95) / 2 = 55.5 at 0.5.
    let compactions = csv_rows(&d.join("out/compactions.csv"));
    let written = |s: &str| -> Vec<u64> {
        compactions
            .iter()
            .filter(|r| r["strategy"] == s)
            .map(|r| r["summary_tokens"].parse().unwrap())
            .collect()
    };
    assert_eq!(written("summary(keep_recent=1)"), [10, 11]);
    assert_eq!(
        written("summary(keep_recent=1, summary_ratio=0.5)"),
        [46, 69]
    );
    assert_eq!(
        written("summary(keep_recent=1, keep_first=0, recall_user=0)"),
        [4, 10]
    );
    assert_eq!(
        written("summary(keep_recent=1, keep_first=0, summary_ratio=0.5, recall_user=0)"),
        [16, 95]
    );
    let at_need: Vec<&str> = sessions
        .iter()
        .map(|r| r["needed_fact_retention_at_need"].as_str())
        .collect();
    assert_eq!(
        at_need[1..],
        ["1.000000", "1.000000", "0.000000", "0.000000"]
    );

    // The frontier: one line per family, its points in order of size (one history: no band).
    let md = std::fs::read_to_string(d.join("out/charts/summary_size_frontier.md")).unwrap();
    let rows: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with("| summary"))
        .map(|l| l.split(" | ").map(str::trim).collect())
        .collect();
    let points: Vec<(&str, &str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r[0].trim_start_matches("| "),
                r[2],
                r[5],
                r[8],
                r[9].trim_end_matches(" |"),
            )
        })
        .collect();
    let fam_a = "summary(keep_recent=1)";
    let fam_b = "summary(keep_recent=1, keep_first=0, recall_user=0)";
    assert_eq!(
        points,
        [
            (fam_a, "0.1", "10.5", "1.000", "–"),
            (fam_a, "0.5", "57.5", "1.000", "–"),
            (fam_b, "0.1", "7.0", "0.000", "–"),
            (fam_b, "0.5", "55.5", "0.000", "–"),
        ]
    );
    assert!(d.join("out/charts/summary_size_frontier.svg").is_file());
    // The manifest keeps the strategies as listed and the axis, so a merge expands them again.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["config"]["session"]["strategies"][1], fam_a);
    assert_eq!(
        manifest["config"]["session"]["summary_ratios"],
        serde_json::json!([0.1, 0.5])
    );
}

#[test]
fn a_bad_summary_size_axis_names_its_key_and_writes_nothing() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "summary_ratios = [0.1, 0.5]",
            "summary_ratios = [0.1, 1.5]",
            &["tiny.toml", "key `session.summary_ratios[1]`: 1.5 is out of range: expected a share of what the summary replaces, above 0 and at most 1"],
        ),
        (
            "summary_ratios = [0.1, 0.5]",
            "summary_ratios = [0]",
            &["key `session.summary_ratios[0]`: 0 is out of range"],
        ),
        (
            "summary_ratios = [0.1, 0.5]",
            "summary_caps = [500, 0]",
            &["key `session.summary_caps[1]`: 0 is out of range: expected a cap on the summary of at least 1 token"],
        ),
        (
            "summary_ratios = [0.1, 0.5]",
            "summary_caps = []",
            &["key `session.summary_caps`: must not be empty"],
        ),
        (
            "\"summary(keep_recent=1)\"",
            "\"summary(keep_recent=1, summary_ratio=0.2)\"",
            &["key `session.strategies[1]`: summary(keep_recent=1, summary_ratio=0.2) sets its summary's size (`summary_ratio`), which the summary-size axis (`session.summary_ratios`) sweeps"],
        ),
        (
            "\"summary(keep_recent=1)\"",
            "{ name = \"summary\", keep_recent = 1, summary_size = 300 }",
            &["key `session.strategies[1]`: summary(keep_recent=1, summary_size=300) sets its summary's size (`summary_size`)"],
        ),
    ];
    for (from, to, needles) in cases {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write_tiny(d);
        let text = GRID.replace(from, to);
        assert_ne!(text, GRID, "{from}");
        std::fs::write(d.join("tiny.toml"), text).unwrap();
        let o = ctxlab(d, &["sweep", "tiny.toml", "-q"]);
        assert_fails_with(&o, needles);
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert!(!d.join("out").exists(), "{to}: wrote its output folder");
    }
}
