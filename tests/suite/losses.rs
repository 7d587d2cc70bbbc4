//! What a run loses, counted: a session that runs out of its window (its later needs lost, its
//! costs compared only with runs that completed), needed facts (used again by a later record),
//! a text summary carrying a record by the share of its needed facts, and the rates a noise
//! model realised, each worked by hand.

use crate::common::*;
use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::facts::Facts;
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::noise::{Draws, NoiseModel, Realised, Records};
use ctxlab::session::{simulate, SessionConfig, SessionScratch};
use ctxlab::{score, CostModel, Strategy};

/// Ten-character records, costed in chars (separator 1): system and task required, calls at
/// 2, 4, 6 and 8, a 50-character tool result at 5 that outgrows a window of 80, and a required
/// tool result at 7 that a run ended at call 3 never sees.
fn dying() -> CostedHistory {
    let r = |id: u64, kind: Kind, len: usize, required: bool| {
        Record::new(id, "x".repeat(len))
            .kind(kind)
            .required(required)
    };
    let records = vec![
        r(1, Kind::System, 10, true),
        r(2, Kind::User, 10, true),
        r(3, Kind::Assistant, 10, false),
        r(4, Kind::ToolResult, 10, false),
        r(5, Kind::Assistant, 10, false),
        r(6, Kind::ToolResult, 50, false),
        r(7, Kind::Assistant, 10, false),
        r(8, Kind::ToolResult, 10, true),
        r(9, Kind::Assistant, 10, false),
    ];
    CostedHistory::new(&History::new("dying", records), CostModel::Chars)
}

fn window(window: u64) -> SessionConfig {
    SessionConfig {
        window,
        ..SessionConfig::default()
    }
}

#[test]
fn a_session_that_runs_out_of_its_window_loses_what_its_later_calls_needed() {
    let h = dying();
    let mut scratch = SessionScratch::default();
    let raw = Strategy::parse("raw").unwrap();
    let m = simulate(&h, &h.truth, &raw, &window(80), 0, &mut scratch);
    // Call 1: input 10 + 1 + 10 = 21, output 10. Call 2: input 4 · 10 + 3 = 43. Call 3: input
    // 43 + 11 + 51 = 105 > 80: refused, the run ends there.
    assert_eq!(
        (m.run.exit_call, m.run.completed, m.run.calls),
        (Some(3), false, 2)
    );
    // Needs (required record, call): calls 1 and 2 need records 1 and 2 and have them (4 of 4);
    // call 3 needs them too, and call 4 also record 8 (which appeared before it): 2 + 3 lost.
    assert_eq!(m.retention.retention_at_need, Some(4.0 / 9.0));
    // A run that died has no end: its end-of-run measures are null, not the 2 of 3 required
    // records its last context held.
    assert_eq!(m.retention.required_total, 3);
    assert_eq!(
        (
            m.retention.retention_end,
            m.retention.required_verbatim,
            m.facts.needed_fact_retention_end
        ),
        (None, None, None)
    );
    // The agent as it ran: no window, every need met.
    let as_ran = Strategy::parse("raw(window=none)").unwrap();
    assert_eq!(as_ran.label(), "raw(window=none)");
    let m = simulate(&h, &h.truth, &as_ran, &window(80), 0, &mut scratch);
    assert_eq!(
        (m.run.exit_call, m.run.completed, m.run.calls),
        (None, true, 4)
    );
    assert_eq!(
        (m.retention.retention_at_need, m.retention.retention_end),
        (Some(1.0), Some(1.0))
    );
    // `window` takes `none` alone; other strategies take no `window`.
    assert!(Strategy::parse("raw(window=80)").is_err());
    assert!(Strategy::parse("recent(window=none)").is_err());
}

#[test]
fn cost_pairs_leave_out_sessions_that_did_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    let h = dying();
    let jsonl: String = h
        .records()
        .iter()
        .map(|r| {
            format!(
                "{{\"id\":{},\"kind\":\"{}\",\"text\":\"{}\",\"required\":{}}}\n",
                r.id,
                r.kind.as_str(),
                r.text,
                r.required
            )
        })
        .collect();
    std::fs::write(dir.path().join("h.jsonl"), jsonl).unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        "name = \"dying\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\ncost = \"chars\"\n\
         [session]\nstrategies = [\"raw\", \"raw(window=none)\"]\nwindows = [80]\nratios = [0.8]\n\
         [output]\ndir = \"out\"\nformats = [\"csv\"]\n",
    )
    .unwrap();
    let o = ctxlab(dir.path(), &["sweep", "e.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut reader = csv::Reader::from_path(dir.path().join("out/pairs.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let pair = |measure: &str| {
        rows.iter()
            .find(|r| &r[col("strategy")] == "raw" && &r[col("measure")] == measure)
            .unwrap_or_else(|| panic!("{measure}"))
    };
    // raw ran out of its window: its cost is of less work, so the pair is left out and counted.
    for measure in ["cost", "billed_tokens"] {
        let r = pair(measure);
        assert_eq!(
            (&r[col("n")], &r[col("n_excluded")]),
            ("0", "1"),
            "{measure}"
        );
        assert_eq!(&r[col("diff_mean")], "", "{measure}");
    }
    // Retention compares them: raw's lost needs against every need met.
    let r = pair("retention_at_need");
    assert_eq!((&r[col("n")], &r[col("n_excluded")]), ("1", "0"));
    let diff: f64 = r[col("diff_mean")].parse().unwrap();
    assert!((diff - (4.0 / 9.0 - 1.0)).abs() < 1e-9, "{diff}");
    // The summary says how many completed.
    let mut reader = csv::Reader::from_path(dir.path().join("out/summary.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let completed = header.iter().position(|h| h == "completed_mean").unwrap();
    let strategy = header.iter().position(|h| h == "strategy").unwrap();
    let means: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[strategy].to_string(), r[completed].to_string())
        })
        .collect();
    assert_eq!(
        means,
        [
            ("raw".to_string(), "0.000000".to_string()),
            ("raw(window=none)".to_string(), "1.000000".to_string())
        ]
    );
}

/// A task naming three tokens: one the agent uses again later, one only the next records use,
/// one never used again.
fn task_history() -> History {
    let r = |id: u64, kind: Kind, text: &str| Record::new(id, text).kind(kind);
    History::new(
        "needed",
        vec![
            r(
                1,
                Kind::User,
                "rename parse_args, read notes.txt, ignore old_value",
            )
            .required(true),
            r(2, Kind::Assistant, "reading"),
            r(3, Kind::ToolCall, "cat notes.txt"),
            r(4, Kind::ToolResult, "nothing here"),
            r(5, Kind::Assistant, "now rename parse_args"),
        ],
    )
}

#[test]
fn a_fact_is_needed_when_a_later_model_record_beyond_the_gap_uses_it() {
    let h = task_history();
    let f = Facts::with_min_gap(&h, 2);
    let id = |t: &str| f.id(t).unwrap_or_else(|| panic!("{t} is a fact"));
    // parse_args: used by record 5 (index 4 > 0 + 2). notes.txt: only by record 3 (index 2, not
    // beyond the gap of 2). old_value: never again.
    assert!(f.is_needed(id("parse_args")));
    assert_eq!(f.used_by(id("parse_args")), Some(4));
    assert!(!f.is_needed(id("notes.txt")));
    assert!(!f.is_needed(id("old_value")));
    // With a gap of 1, record 3's use counts.
    let f1 = Facts::with_min_gap(&h, 1);
    assert!(f1.is_needed(f1.id("notes.txt").unwrap()));
    assert_eq!(f1.used_by(f1.id("notes.txt").unwrap()), Some(2));
    // The cells score them: one needed fact of the required task.
    let c = CostedHistory::new(&h, CostModel::Chars);
    assert_eq!(c.scored.needed_facts, vec![id("parse_args")]);
    assert_eq!(c.scored.required_facts.len(), f.owned(0).len());
}

#[test]
fn a_text_summary_carries_a_record_by_the_share_of_its_needed_facts() {
    // The task's parse_args and old_value are both used again by record 4 (beyond the gap).
    let r = |id: u64, kind: Kind, text: &str| Record::new(id, text).kind(kind);
    let h = History::new(
        "half",
        vec![
            r(1, Kind::User, "rename parse_args and old_value").required(true),
            r(2, Kind::Assistant, "ok"),
            r(3, Kind::ToolResult, "done"),
            r(4, Kind::Assistant, "parse_args old_value"),
        ],
    );
    let c = CostedHistory::new(&h, CostModel::Chars);
    assert_eq!(c.scored.needed_facts.len(), 2);
    let mut ctx = Context::default();
    ctx.clear(4);
    ctx.push(
        Item::Summary {
            first: 0,
            end: 3,
            cost: 12,
        },
        12,
        1,
    );
    // The summary's text names parse_args only: half of the task's needed facts.
    ctx.summary_from_text = true;
    ctx.summary_facts = vec![c.scored.facts.id("parse_args").unwrap()];
    let m = score(&c, Outcome::Feasible, &ctx);
    assert_eq!(m.required_any, 0.5);
    assert_eq!(m.retention_any(), Some(0.5));
    assert_eq!(
        (m.facts.needed_facts_total, m.facts.needed_facts_kept),
        (2, 1)
    );
    assert_eq!(m.needed_fact_retention(), Some(0.5));
}

#[test]
fn realised_rates_follow_the_draws_by_hand() {
    // Required at 0, 1 and 3; the draws of each record, chosen by hand.
    let truth = [true, true, false, true, false];
    let kinds = [Kind::ToolResult; 5];
    let costs = [10u64; 5];
    let records = Records {
        flags: &truth,
        kinds: &kinds,
        costs: &costs,
    };
    let draws = Draws {
        own: vec![0.1, 0.6, 0.3, 0.45, 0.9],
        history: vec![0.7, 0.05, 0.2, 0.5, 0.01],
        selector: vec![0.2, 0.9, 0.1, 0.5, 0.6],
    };
    let realised = |spec: &str| {
        let mut flags = Vec::new();
        NoiseModel::parse(spec)
            .unwrap()
            .apply(records, &draws, &mut flags);
        let r = Realised::of(&truth, &flags);
        (r.false_negative(), r.false_positive())
    };
    // uniform: a required record is missed when u < 0.5 (records 0 and 3), another flagged
    // when u < 0.25 (none).
    assert_eq!(
        realised("uniform(fn=0.5, fp=0.25)"),
        (Some(2.0 / 3.0), Some(0.0))
    );
    // by_position: fn = 0.8 · i / 4 is 0, 0.2 and 0.6 at records 0, 1, 3: only record 3
    // (0.45 < 0.6) is missed. Nominally 0.4, realised 1/3.
    assert_eq!(
        realised("by_position(fn_start=0, fn_end=0.8)"),
        (Some(1.0 / 3.0), Some(0.0))
    );
    // correlated: records whose selector is below 0.5 (0, 2) take the history's draw: 0.7
    // keeps record 0's flag, 0.2 < 0.25 flags record 2; the others keep their own draw, which
    // misses record 3 (0.45).
    assert_eq!(
        realised("correlated(rho=0.5, fn=0.5, fp=0.25)"),
        (Some(1.0 / 3.0), Some(0.5))
    );
    // Without required records there is no false-negative rate.
    assert_eq!(Realised::of(&[false], &[true]).false_negative(), None);
}

#[test]
fn facts_explain_refuses_a_bad_gap_and_an_unknown_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.traj.json"), "{}").unwrap();
    for (args, needles) in [
        (vec!["--min-gap", "-1"], vec!["-1"]),
        (vec!["--min-gap", "1.5"], vec!["--min-gap", "1.5"]),
        (vec!["--min-gap", "two"], vec!["--min-gap", "two"]),
        (
            vec!["--explain", "--columns", "id,weight"],
            vec![
                "--columns",
                "`weight`",
                "run, id, kind, fact, used_by, use_kind",
            ],
        ),
    ] {
        let mut all = vec!["facts", "run.traj.json", "--format", "mini-swe-agent"];
        all.extend(args);
        let o = ctxlab(dir.path(), &all);
        assert_fails_with(&o, &needles);
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn facts_counts_needed_facts_on_the_shared_runs() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let dir = data.join("swebench-gemini3");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".traj.json"))
        .collect();
    files.sort();
    let mut args = vec!["facts".to_string()];
    args.extend(files);
    args.extend(["--format".into(), "mini-swe-agent".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ctxlab(&root(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Measured on the 40 runs: 11 141 facts, 1 581 needed; 40 % from listings, nearly none of
    // which is used again.
    assert!(out.starts_with("40 runs, 3048 records"), "{out}");
    assert!(out.contains("all       11141  1581 (14.2%)"), "{out}");
    assert!(out.contains("4453 (40.0%)"), "{out}");
    assert!(out.contains("required   1765   339 (19.2%)"), "{out}");
}
