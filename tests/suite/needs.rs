//! Loss where the agent meets it: needed facts credited through the record that introduced
//! them, their first return, re-reads of what a compaction dropped, and end-of-run measures
//! only for runs that ended. Every figure worked by hand in the comments.

use crate::common::{ctxlab, stderr};
use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{
    simulate_with, CacheRules, Compactor, SessionConfig, SessionMetrics, SessionScratch, Trace,
};
use ctxlab::strategy::When;
use ctxlab::summariser::Summariser;
use ctxlab::view::View;
use ctxlab::{score, CostModel, Strategy};

fn records(spec: &[(Kind, Option<&str>, &str, bool)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, tool, text, required))| {
            let mut r = Record::new(i as u64 + 1, text)
                .kind(kind)
                .required(required);
            if let Some(t) = tool {
                r = r.tool(t);
            }
            r
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// Compacts once the context holds more than `events` entries, keeping the first `head` and
/// the newest `tail` entries verbatim and dropping the rest.
struct Drop {
    events: usize,
    head: usize,
    tail: usize,
}

impl Compactor for Drop {
    fn compact(&self, view: View, _: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        out.clear(view.len());
        let n = view.len();
        for j in (0..self.head).chain(n - self.tail..n) {
            out.push(Item::Verbatim(j), view.costs[j], view.separator);
        }
        Outcome::Feasible
    }
    fn summariser(&self) -> Option<&Summariser> {
        None
    }
    fn keep_recent(&self, _: Option<usize>) -> usize {
        self.tail
    }
    fn when(&self) -> Option<When> {
        Some(When::Events(self.events))
    }
}

/// Anthropic's cache without its minimum length (these histories are far below it), at the
/// default prices: $3 and $15 a million, reads 0.1 ×, writes 1.25 ×.
fn config() -> SessionConfig {
    SessionConfig {
        window: 10_000,
        cache: CacheRules {
            min_tokens: 0,
            ..SessionConfig::default().cache
        },
        ..SessionConfig::default()
    }
}

fn replay(h: &CostedHistory, c: &dyn Compactor) -> (SessionMetrics, Trace) {
    let mut trace = Trace::default();
    let m = simulate_with(
        h,
        &h.truth,
        c,
        &config(),
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    (m, trace)
}

use Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};

#[test]
fn a_dropped_file_view_is_read_again_a_dropped_instruction_and_an_edited_view_are_lost() {
    // Lengths in chars: 3, 34, 14, 25, 29, 24, 25, 18, 58, 2, 67, 5. Required: the user's
    // instruction (1), the view of app.py (4) and the view of db.py (6), which the agent edits
    // at 8 before it uses what it read.
    let h = records(&[
        (S, None, "SYS", false),
        (U, None, "Never touch deploy_config in prod.", true),
        (A, None, "Reading files.", false),
        (C, Some("Read"), r#"{"file_path":"/r/app.py"}"#, false),
        (T, Some("Read"), "def load_settings(): return 1", true),
        (C, Some("Read"), r#"{"file_path":"/r/db.py"}"#, false),
        (T, Some("Read"), "def open_pool(): return 2", true),
        (A, None, "Editing db.py now.", false),
        (
            C,
            Some("Edit"),
            r#"{"file_path":"/r/db.py","old_string":"2","new_string":"3"}"#,
            false,
        ),
        (T, Some("Edit"), "ok", false),
        (
            A,
            None,
            "In app.py and db.py use load_settings, open_pool and deploy_config.",
            false,
        ),
        (A, None, "Done.", false),
    ]);
    assert_eq!(
        h.fetchable.recoverable,
        [false, false, false, false, true, false, false, false, false, false, false, false]
    );
    // Calls: 2+3, 5, 7+8, 10, 11. Before call 4 the context holds records 0..=9, 10 entries:
    // over 9, so everything but the system prompt is dropped.
    let (m, t) = replay(
        &h,
        &Drop {
            events: 9,
            head: 1,
            tail: 0,
        },
    );
    assert_eq!(
        (m.run.calls, m.run.compactions, m.run.completed),
        (5, 1, true)
    );
    // Call 4 uses the three needed facts for the first time since the records that introduced
    // them, none of which the context holds. It names app.py and db.py, whose views are gone:
    // the agent reads both again. load_settings comes back with app.py; open_pool does not
    // (db.py was edited at 8, after the view the agent had); the user's deploy_config is lost.
    let n = m.needs;
    assert_eq!((n.first_returns, n.first_returns_met), (3, 0));
    assert_eq!((n.recovered, n.lost), (1, 2));
    assert_eq!(n.first_return_retention(), Some(0.0));
    let fetched = |record| ctxlab::session::RefetchRow {
        call: 4,
        at: 10,
        record,
    };
    assert_eq!(t.refetches, [fetched(4), fetched(6)]);
    // The re-read: one extra call on the context as it stands (3 tokens, read from cache)
    // whose output is the two Read calls (25 + 24 = 49); the calls and their results
    // (49 + 29 + 25 = 103) are written to the cache at call 4 and read again at call 5.
    assert_eq!(n.refetch_calls, 1);
    assert_eq!(
        (
            n.refetch.cache_read,
            n.refetch.cache_write,
            n.refetch.uncached,
            n.refetch.output
        ),
        (3 + 103, 103, 0, 49)
    );
    assert_eq!(n.refetch_tokens(), 106 + 103 + 49);
    // (106 × 3 × 0.1 + 103 × 3 × 1.25 + 49 × 15) / 10⁶ = (31.8 + 386.25 + 735) / 10⁶.
    assert!(
        (n.refetch_cost - 1153.05e-6).abs() < 1e-12,
        "{}",
        n.refetch_cost
    );
    // Every use of the facts is at call 4, unmet there.
    assert_eq!(
        (m.facts.needed_uses, m.facts.needed_fact_retention_at_need),
        (3, Some(0.0))
    );
    // At the end the context holds the system prompt and calls 4 and 5: call 4 repeats every
    // token, but through their owners none is kept.
    assert_eq!(m.facts.needed_facts_kept, Some(0));
    assert_eq!(m.facts.needed_fact_retention_end, Some(0.0));
}

#[test]
fn first_returns_leave_out_the_uses_that_echo_the_agent() {
    // parse_header (the task) is restated by the agent at once (record 1, within the gap of 2):
    // it has no first return, and its uses at 3 and 7 echo the agent. load_config (a result)
    // first comes back at 5, then again at 7.
    let h = records(&[
        (U, None, "Fix parse_header please.", true),
        (A, None, "Looking at parse_header now.", false),
        (T, Some("bash"), "found load_config here", true),
        (A, None, "parse_header is odd", false),
        (T, Some("bash"), "ok", false),
        (A, None, "load_config is the culprit", false),
        (T, Some("bash"), "ok", false),
        (A, None, "patching load_config and parse_header", false),
    ]);
    let parse = h.scored.facts.id("parse_header").unwrap();
    let load = h.scored.facts.id("load_config").unwrap();
    assert_eq!(
        (
            h.scored.facts.first_return(parse),
            h.scored.facts.first_return(load)
        ),
        (None, Some(5))
    );
    assert!(h.scored.facts.is_needed(parse) && h.scored.facts.is_needed(load));
    // Calls at 1, 3, 5, 7. Before call 3 the context holds records 0..=4 (5 entries, over 4):
    // the newest two (3 and 4) are kept.
    let (m, _) = replay(
        &h,
        &Drop {
            events: 4,
            head: 0,
            tail: 2,
        },
    );
    assert_eq!(m.run.compactions, 1);
    // All uses: parse_header at 3 (met: record 0 is there), load_config at 5 (unmet: record 2
    // was dropped), both at 7 (met by the agent's own records 3 and 5): 3 of 4.
    assert_eq!(m.facts.needed_uses, 4);
    assert_eq!(m.facts.needed_fact_retention_at_need, Some(0.75));
    // First return: load_config at 5 alone, unmet. The use the context missed there is lost:
    // its one holder is a `bash` result of no reading call.
    let n = m.needs;
    assert_eq!((n.first_returns, n.first_returns_met), (1, 0));
    assert_eq!((n.recovered, n.lost), (0, 1));
    assert_eq!(n.first_return_retention(), Some(0.0));
}

#[test]
fn a_cell_credits_a_needed_fact_to_its_owner_not_to_a_record_repeating_it() {
    // Record 0 (required) introduces deploy_config; the agent repeats it at 4.
    let h = records(&[
        (U, None, "Keep deploy_config safe.", true),
        (A, None, "Sure.", false),
        (T, Some("bash"), "xxxxxxxxxx", false),
        (A, None, "Next.", false),
        (A, None, "deploy_config noted", false),
    ]);
    // recent at 19 chars keeps record 4 alone (19); record 3 would need 5 + 1 more.
    let strategy = Strategy::parse("recent(keep_first=0)").unwrap();
    let mut ctx = Context::default();
    let outcome = strategy.apply(View::new(&h, &h.truth), 19, 0, 0, &mut ctx);
    assert_eq!(ctx.items, [Item::Verbatim(4)]);
    let m = score(&h, outcome, &ctx);
    assert_eq!(m.facts.needed_facts_total, 1);
    // Through its owner: not kept. Through any record holding the token: kept.
    assert_eq!(m.facts.needed_facts_kept, 0);
    assert_eq!(m.needed_fact_retention(), Some(0.0));
    assert_eq!(m.facts.needed_facts_any_record, 1);
    assert_eq!(m.needed_fact_retention_any_record(), Some(1.0));
    // The dropped required record is the user's: nothing to fetch again.
    assert_eq!(
        (m.required_dropped(), m.required_dropped_recoverable),
        (1, 0)
    );
    assert_eq!(m.dropped_recoverable_share(), Some(0.0));
}

#[test]
fn a_run_that_died_has_no_end_and_the_summary_says_over_how_many_completed() {
    let dir = tempfile::tempdir().unwrap();
    // Two histories of 30-char turns under a 150-char window. The long one's third call sends
    // 4 + 4 × 31 = 128 and gets 30 back: 158 > 150, so it dies there.
    let mut lines = Vec::new();
    for (name, turns) in [("short", 1), ("long", 3)] {
        lines.push(format!(
            r#"{{"history": "{name}", "id": 1, "kind": "user", "text": "task", "required": true}}"#
        ));
        for i in 0..turns {
            for (k, kind) in [(2, "assistant"), (3, "tool_result")] {
                lines.push(format!(
                    r#"{{"history": "{name}", "id": {}, "kind": "{kind}", "tool": "bash", "text": "{}"}}"#,
                    2 * i + k,
                    "a".repeat(30)
                ));
            }
        }
    }
    std::fs::write(dir.path().join("h.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        r#"name = "dead"
seed = 1
[histories]
files = ["h.jsonl"]
cost = "chars"
[session]
strategies = ["raw"]
windows = [150]
ratios = [1.0]
[output]
dir = "out"
formats = ["csv"]
"#,
    )
    .unwrap();
    let o = ctxlab(dir.path(), &["sweep", "e.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = |name: &str| {
        let mut r = csv::Reader::from_path(dir.path().join("out").join(name)).unwrap();
        let header = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        (header, rows)
    };
    let (header, rows) = table("sessions.csv");
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let long = rows.iter().find(|r| &r[at("history")] == "long").unwrap();
    assert_eq!(&long[at("completed")], "false");
    for end in [
        "required_verbatim",
        "required_any",
        "retention_end",
        "retention_any_end",
        "facts_kept",
        "fact_retention_end",
        "needed_facts_kept",
        "needed_fact_retention_end",
    ] {
        assert_eq!(&long[at(end)], "", "{end}");
    }
    let short = rows.iter().find(|r| &r[at("history")] == "short").unwrap();
    assert_eq!(&short[at("retention_end")], "1.000000");
    // The summary: two sessions, one completed, and the end mean rests on that one.
    let (header, rows) = table("summary.csv");
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(
        (
            &rows[0][at("n")],
            &rows[0][at("n_completed")],
            &rows[0][at("n_retention")]
        ),
        ("2", "1", "1")
    );
    assert_eq!(&rows[0][at("retention_end_mean")], "1.000000");
}
