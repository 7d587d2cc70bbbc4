//! The summarisers on hand-made histories: what each writes, what it costs, what it keeps by
//! facts; their parameters; the extractive one byte-stable across threads.

use crate::common::{assert_fails_with, ctxlab, stderr};
use ctxlab::context::{Context, Item};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::Strategy;
use ctxlab::view::View;
use ctxlab::{score, CostModel, Metrics};

/// r0 the task (head, required; plain words, no fact); r1 (required) three lines, the last
/// introducing the fact parser_state; r2 two lines; r3 the tail. Under `chars` (separator 1):
/// 18 + 1 + 52 + 1 + 22 + 1 + 2 = 97.
fn hand() -> CostedHistory {
    let records = vec![
        Record::new(1, "fix the parser bug")
            .kind(Kind::User)
            .required(true),
        Record::new(2, "line one parser\nunrelated words here\nparser_state = 3")
            .kind(Kind::ToolResult)
            .tool("bash")
            .required(true),
        Record::new(3, "nothing\nfix parser now")
            .kind(Kind::ToolResult)
            .tool("bash"),
        Record::new(4, "ok").kind(Kind::Assistant),
    ];
    CostedHistory::new(&History::new("hand", records), CostModel::Chars)
}

fn run(spec: &str, capacity: u64) -> (Context, Metrics) {
    let h = hand();
    let s = Strategy::parse(spec).unwrap();
    let mut ctx = Context::default();
    let outcome = s.apply(
        View::new(&h, &h.truth),
        capacity,
        s.effective_keep_recent(None),
        0,
        &mut ctx,
    );
    let m = score(&h, outcome, &ctx);
    (ctx, m)
}

#[test]
fn extractive_picks_lines_of_flagged_records_first_then_by_relevance_to_the_task() {
    // The task's words: bug, fix, parser, the. BM25 ranks `fix parser now` (two of them) over
    // `line one parser` (one) over the rest (none). Flagged first: r1's lines lead, in BM25
    // order `line one parser`, then the two scoring 0 by position. Budget 32: `line one
    // parser` (15); `unrelated words here` (+1+20 = 36) does not fit; `parser_state = 3`
    // (+1+16 = 32) does; nothing more fits.
    let spec = "summary(summariser=extractive, keep_recent=1, summary_size=32)";
    let (ctx, m) = run(spec, 60);
    assert_eq!(ctx.summary_text, "line one parser\nparser_state = 3");
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Summary {
                first: 1,
                end: 3,
                cost: 32
            },
            Item::Verbatim(3)
        ]
    );
    // Head 18 + 1 + 32 + 1 + 2.
    assert_eq!(m.used, 54);
    // The one fact of the required records (parser_state) is in the text; r1 is carried.
    assert_eq!((m.facts.facts_kept, m.facts.facts_total), (1, 1));
    assert_eq!(m.retention_any(), Some(1.0));
    assert_eq!(m.required_retention(), Some(0.5));
}

#[test]
fn extractive_by_relevance_alone_loses_the_fact() {
    // Without flags first: `fix parser now` (14), then `line one parser` (+1+15 = 30), then
    // nothing fits 32 (`nothing` would make 38). Written in original order.
    let spec =
        "summary(summariser=extractive, flagged_first=false, keep_recent=1, summary_size=32)";
    let (ctx, m) = run(spec, 60);
    assert_eq!(ctx.summary_text, "line one parser\nfix parser now");
    assert_eq!(m.used, 18 + 1 + 30 + 1 + 2);
    assert_eq!(
        (m.facts.facts_kept, m.facts.facts_total, m.fact_retention()),
        (0, 1, Some(0.0))
    );
    // r1 holds no fact in the text, so the text does not carry it: only the task counts.
    assert_eq!(m.retention_any(), Some(0.5));
}

#[test]
fn simulated_writes_the_facts_of_the_records_it_keeps() {
    // recall 1 for flagged records: r1 survives, and with it parser_state.
    let spec = "summary(summariser=simulated, recall_flagged=1, recall_other=0, keep_recent=1, summary_size=32)";
    let (ctx, m) = run(spec, 60);
    assert!(ctx.summary_text.is_empty());
    assert_eq!((m.facts.facts_kept, m.facts.facts_total), (1, 1));
    let spec = "summary(recall_flagged=0, recall_other=0, keep_recent=1, summary_size=32)";
    let (_, m) = run(spec, 60);
    assert_eq!((m.facts.facts_kept, m.retention_any()), (0, Some(0.5)));
}

#[test]
fn summariser_parameters_are_checked_and_printed_back() {
    let s = Strategy::parse("codex_compact(summariser=extractive)").unwrap();
    assert_eq!(s.label(), "codex_compact(summariser=extractive)");
    let s = Strategy::parse("summary(summariser=simulated, recall_flagged=0.4)").unwrap();
    // Flag-based once a flag recall is given: both flag recalls are named.
    assert_eq!(s.label(), "summary(recall_flagged=0.4, recall_other=0.05)");
    let e = Strategy::parse("summary(summariser=extractive, recall_flagged=0.4)")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "`recall_flagged` is a parameter of the `simulated` summariser, not of `extractive`"
        ),
        "{e}"
    );
    let e = Strategy::parse("summary(summariser=magic)")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parameter `summariser` expects one of simulated, extractive"),
        "{e}"
    );
}

const SESSIONS: &str = r#"
name = "extractive"
seed = 3
[histories]
generate = { count = 6, records = [40, 120], required_share = 0.2, seed = 2 }
[session]
strategies = ["summary(summariser=extractive, keep_recent=4)", "codex_compact(summariser=extractive)", "summary(keep_recent=4)"]
windows = [1500, 3000]
ratios = [0.8]
[output]
dir = "out"
"#;

#[test]
fn extractive_sessions_are_byte_identical_at_one_and_two_threads_and_keep_facts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.toml"), SESSIONS).unwrap();
    for (threads, out) in [("1", "one"), ("2", "two")] {
        let o = ctxlab(
            dir.path(),
            &["sweep", "x.toml", "-q", "--threads", threads, "--out", out],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let read = |d: &str| std::fs::read(dir.path().join(d).join("sessions.csv")).unwrap();
    assert_eq!(read("one"), read("two"));
    let bytes = read("one");
    let mut csv = csv::Reader::from_reader(&bytes[..]);
    let header = csv.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (strategy, compactions, facts) = (
        col("strategy"),
        col("compactions"),
        col("fact_retention_end"),
    );
    // Some extractive session compacted and kept a share of facts strictly between 0 and 1.
    let compacted = csv.records().map(Result::unwrap).any(|r| {
        r[strategy].contains("extractive")
            && &r[compactions] != "0"
            && r[facts].parse::<f64>().is_ok_and(|f| f > 0.0 && f < 1.0)
    });
    assert!(compacted);
    // A bad summariser parameter in an experiment is one clear error naming the strategy.
    std::fs::write(
        dir.path().join("bad.toml"),
        SESSIONS.replace(
            "keep_recent=4)\", \"codex",
            "keep_recent=4, recall_other=0.1)\", \"codex",
        ),
    )
    .unwrap();
    assert_fails_with(
        &ctxlab(dir.path(), &["sweep", "bad.toml", "-q", "--out", "bad"]),
        &["`recall_other` is a parameter of the `simulated` summariser"],
    );
    assert!(!dir.path().join("bad").exists());
}

#[test]
fn recorded_compaction_restarts_the_context_at_the_transcript_summary() {
    // r0 system; r1 the task (fact parse_args); r2 a result (required, fact E0308); r3 the
    // summary the harness recorded, which names E0308 but not parse_args; r4 after it.
    let records = vec![
        Record::new(1, "be careful").kind(Kind::System),
        Record::new(2, "fix parse_args")
            .kind(Kind::User)
            .required(true),
        Record::new(3, "error E0308")
            .kind(Kind::ToolResult)
            .tool("bash")
            .required(true),
        Record::new(4, "Summary: we saw E0308").kind(Kind::Summary),
        Record::new(5, "next").kind(Kind::Assistant),
    ];
    let h = CostedHistory::new(&History::new("cc", records), CostModel::Chars);
    let s = Strategy::parse("recorded_compaction").unwrap();
    let mut ctx = Context::default();
    s.apply(View::new(&h, &h.truth), 1000, 0, 0, &mut ctx);
    // The system record, the recorded summary standing for r1..r3 at its own cost (21), r4.
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Summary {
                first: 1,
                end: 4,
                cost: 21
            },
            Item::Verbatim(4)
        ]
    );
    assert_eq!(ctx.summary_text, "Summary: we saw E0308");
    let m = score(&h, ctxlab::context::Outcome::Feasible, &ctx);
    // Facts of the required r1, r2: parse_args (lost), E0308 (in the text): 1 of 2; r2 is
    // carried by its fact, the task is not.
    assert_eq!((m.facts.facts_kept, m.facts.facts_total), (1, 2));
    assert_eq!(m.retention_any(), Some(0.5));
    // 10 + 1 + 21 + 1 + 4 = 37; under a capacity of 36 the run's own compaction does not fit.
    assert_eq!(m.used, 37);
    let mut small = Context::default();
    let o = s.apply(View::new(&h, &h.truth), 36, 0, 0, &mut small);
    assert_eq!(o, ctxlab::context::Outcome::Infeasible);
    // Without a recorded summary nothing changes.
    let plain = CostedHistory::new(
        &History::new(
            "plain",
            vec![Record::new(1, "a"), Record::new(2, "b").kind(Kind::User)],
        ),
        CostModel::Chars,
    );
    let mut p = Context::default();
    s.apply(View::new(&plain, &plain.truth), 10, 0, 0, &mut p);
    assert_eq!(p.items, [Item::Verbatim(0), Item::Verbatim(1)]);
}

#[test]
fn recorded_compaction_on_the_shared_claude_code_sessions() {
    let Some(data) = crate::common::shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exp = format!(
        r#"
name = "cc"
seed = 1
[histories]
files = ["{}/claude-code/*.jsonl"]
format = "claude-code"
cost = "tokens"
[session]
strategies = ["recorded_compaction"]
windows = [1000000]
ratios = [0.8]
[output]
dir = "out"
formats = ["csv"]
"#,
        data.display()
    );
    std::fs::write(dir.path().join("cc.toml"), exp).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "cc.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r = csv::Reader::from_path(dir.path().join("out/sessions.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |k: &str| h.iter().position(|x| x == k).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    // One session of the four compacted, where its transcript did: the real summary keeps 178
    // of the 581 facts of the required records (instructions,hindsight) at the end.
    let compacted: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|x| &x[col("compactions")] != "0")
        .collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(compacted.len(), 1);
    let c = compacted[0];
    assert!(c[col("history")].starts_with("9034225e"));
    assert_eq!(
        (&c[col("facts_kept")], &c[col("facts_total")]),
        ("178", "581")
    );
}
