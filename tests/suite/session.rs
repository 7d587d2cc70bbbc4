//! Sessions: the lesson's scripted traces (../shared/spec/sessions.json), prefix-cache billing
//! worked out by hand, retention at need, summaries summarised again, notes, storms, layers.

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{
    run_script, simulate, simulate_with, CacheRules, Compactor, Layers, SessionConfig,
    SessionMetrics, SessionScratch, Trace, TriggerMode,
};
use ctxlab::summariser::{Simulated, Summariser};
use ctxlab::view::View;
use ctxlab::{CostModel, Strategy};

/// The lesson's configuration: the usage trigger, whose figures these tests were worked by
/// hand under (the context trigger has tests of its own, below: "the context trigger").
/// The default cache (Anthropic's, breakpoints where Claude Code puts them) without its
/// minimum length: these histories are far below 1024 tokens, and the tests are about what a
/// compaction leaves of the cached prefix.
fn prefix_cache() -> CacheRules {
    CacheRules {
        min_tokens: 0,
        ..SessionConfig::default().cache
    }
}

fn cfg(window: u64, ratio: f64, reset: bool) -> SessionConfig {
    SessionConfig {
        window,
        ratio,
        trigger: TriggerMode::Usage,
        reset,
        cache: prefix_cache(),
        ..SessionConfig::default()
    }
}

fn compaction_pairs(before: &[bool]) -> Vec<(u32, u32)> {
    before
        .iter()
        .enumerate()
        .filter(|(_, b)| **b)
        .map(|(i, _)| (i as u32, i as u32 + 1))
        .collect()
}

// ---------------------------------------------------------------- scripted traces

#[test]
fn lesson_demo_compacts_before_the_fourth_call_and_resets() {
    let out = run_script(&cfg(2000, 0.7, true), &[400, 650, 800, 280, 210]);
    assert_eq!(out.trigger, 1400);
    let cumulative: Vec<u64> = out.rows.iter().map(|r| r.cumulative).collect();
    assert_eq!(cumulative, [400, 1050, 1850, 280, 490]);
    let before: Vec<bool> = out.rows.iter().map(|r| r.compaction_before).collect();
    assert_eq!(compaction_pairs(&before), [(3, 4)]);
    assert_eq!(out.rows.len(), 5);
    assert_eq!(out.model_calls, 6);
    assert_eq!((out.compactions, out.storms), (1, 0));
    assert!(!out.due_after_last);
}

#[test]
fn lesson_exercise_compacts_after_the_fourth_turn() {
    let c = cfg(6000, 0.75, true);
    assert_eq!(c.trigger(), 4500);
    let four = run_script(&c, &[1200, 1500, 900, 1100]);
    let cumulative: Vec<u64> = four.rows.iter().map(|r| r.cumulative).collect();
    assert_eq!(cumulative, [1200, 2700, 3600, 4700]);
    assert_eq!(four.compactions, 0);
    assert!(
        four.due_after_last,
        "4700 ≥ 4500: the next call compacts first"
    );
    // The next call: input 300, output 100.
    let five = run_script(&c, &[1200, 1500, 900, 1100, 300 + 100]);
    assert!(five.rows[4].compaction_before);
    assert_eq!(five.rows[4].cumulative, 400);
}

#[test]
fn forgotten_reset_is_a_storm() {
    let out = run_script(&cfg(2000, 0.7, false), &[400, 650, 800, 280, 210, 150]);
    let before: Vec<bool> = out.rows.iter().map(|r| r.compaction_before).collect();
    assert_eq!(compaction_pairs(&before), [(3, 4), (4, 5), (5, 6)]);
    let cumulative: Vec<u64> = out.rows.iter().map(|r| r.cumulative).collect();
    assert_eq!(cumulative, [400, 1050, 1850, 2130, 2340, 2490]);
    // The first compaction has no predecessor; the next two fire one call after a fruitless one.
    let storms: Vec<bool> = out.rows.iter().map(|r| r.storm).collect();
    assert_eq!(storms, [false, false, false, false, true, true]);
    assert_eq!((out.compactions, out.storms, out.model_calls), (3, 2, 9));
}

#[test]
fn spec_file_traces_agree_when_present() {
    let path = crate::common::root().join("../shared/spec/sessions.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let sessions = spec["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 3);
    for s in sessions {
        let c = cfg(
            s["window"].as_u64().unwrap(),
            s["ratio"].as_f64().unwrap(),
            s["reset_after_compaction"].as_bool().unwrap(),
        );
        if let Some(t) = s["trigger"].as_u64() {
            assert_eq!(c.trigger(), t);
        }
        let mut usage: Vec<u64> = s["usage_per_call"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let e = &s["expected"];
        let next = &e["next_call_usage"];
        if next.is_object() {
            usage.push(
                next["input_tokens"].as_u64().unwrap() + next["output_tokens"].as_u64().unwrap(),
            );
        }
        let out = run_script(&c, &usage);
        let cumulative: Vec<u64> = out.rows.iter().map(|r| r.cumulative).collect();
        let before: Vec<bool> = out.rows.iter().map(|r| r.compaction_before).collect();
        let pairs = compaction_pairs(&before);
        let name = s["name"].as_str().unwrap();
        for key in ["cumulative_usage_after_each_agent_call", "cumulative_usage"] {
            if let Some(want) = e[key].as_array() {
                let want: Vec<u64> = want.iter().map(|v| v.as_u64().unwrap()).collect();
                assert_eq!(&cumulative[..want.len()], &want[..], "{name}");
            }
        }
        match &e["compaction_between_agent_calls"] {
            serde_json::Value::Array(a) if a.first().is_some_and(|x| x.is_u64()) => {
                let pair = (a[0].as_u64().unwrap() as u32, a[1].as_u64().unwrap() as u32);
                assert_eq!(pairs, [pair], "{name}");
            }
            serde_json::Value::Array(a) => {
                let want: Vec<(u32, u32)> = a
                    .iter()
                    .map(|p| (p[0].as_u64().unwrap() as u32, p[1].as_u64().unwrap() as u32))
                    .collect();
                assert_eq!(pairs, want, "{name}");
                assert_eq!(out.storms, want.len() as u32 - 1, "{name}");
            }
            _ => {}
        }
        if let Some(n) = e["agent_calls"].as_u64() {
            assert_eq!(out.rows.len() as u64, n, "{name}");
        }
        if let Some(n) = e["model_calls_including_compaction"].as_u64() {
            assert_eq!(u64::from(out.model_calls), n, "{name}");
        }
        if let Some(n) = e["compactions"].as_u64() {
            assert_eq!(u64::from(out.compactions), n, "{name}");
        }
        if let Some(turn) = e["compaction_after_turn"].as_u64() {
            assert_eq!(pairs, [(turn as u32, turn as u32 + 1)], "{name}");
            let at = e["usage_at_compaction"].as_u64().unwrap();
            assert_eq!(cumulative[turn as usize - 1], at, "{name}");
            let after = e["usage_after_next_call"].as_u64().unwrap();
            assert_eq!(cumulative[turn as usize], after, "{name}");
        }
    }
}

// ---------------------------------------------------------------- replays

/// Records of the given kinds and lengths (chars), required where `req` says so.
fn history(spec: &[(Kind, usize, bool)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len, req))| {
            let mut r = Record::new(i as u64 + 1, "x".repeat(len))
                .kind(kind)
                .required(req);
            if matches!(kind, Kind::ToolCall | Kind::ToolResult) {
                r = r.tool("bash");
            }
            r
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

fn replay(
    h: &CostedHistory,
    compactor: &dyn Compactor,
    c: &SessionConfig,
    stream: u64,
) -> (SessionMetrics, Trace) {
    let mut trace = Trace::default();
    let m = simulate_with(
        h,
        &h.truth,
        compactor,
        c,
        stream,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    (m, trace)
}

use Kind::{Assistant as A, System as S, ToolResult as T, User as U};

/// Three agent calls; records 4, 2, 3, 1, 5, 2 chars long; each gap costs 1.
fn three_calls(first_required: bool) -> CostedHistory {
    history(&[
        (U, 4, first_required),
        (A, 2, false), // call 1
        (T, 3, false),
        (A, 1, false), // call 2
        (T, 5, false),
        (A, 2, false), // call 3
    ])
}

#[test]
fn cache_billing_without_compaction() {
    let h = three_calls(false);
    let recent = Strategy::parse("recent").unwrap();
    let (m, t) = replay(&h, &recent, &cfg(1000, 1.0, true), 0);
    // call 1: input [r0] = 4, nothing cached: read 0, write 4; output 2; usage 6.
    // call 2: input [r0 r1 r2] = 4+2+3 + 2 gaps = 11; the previous input [r0] is its prefix:
    //         read 4, write 7; output 1; usage 6 + 12 = 18.
    // call 3: input [r0..r4] = 4+2+3+1+5 + 4 gaps = 19; prefix [r0 r1 r2]: read 11, write 8;
    //         output 2; usage 18 + 21 = 39.
    let rows: Vec<(u64, u64, u64, u64, u64)> = t
        .calls
        .iter()
        .map(|c| (c.input, c.cache_read, c.cache_write, c.output, c.cumulative))
        .collect();
    assert_eq!(
        rows,
        [(4, 0, 4, 2, 6), (11, 4, 7, 1, 18), (19, 11, 8, 2, 39)]
    );
    assert_eq!(
        (
            m.bill.input_tokens,
            m.bill.cache_read_tokens,
            m.bill.cache_write_tokens,
            m.bill.output_tokens
        ),
        (34, 15, 19, 5)
    );
    assert_eq!(
        (m.run.calls, m.run.model_calls, m.run.compactions),
        (3, 3, 0)
    );
    // (15 × 3 × 0.1 + 19 × 3 × 1.25 + 5 × 15) / 10⁶ = (4.5 + 71.25 + 75) / 10⁶
    assert!((m.bill.cost - 150.75e-6).abs() < 1e-15, "{}", m.bill.cost);
}

#[test]
fn cache_billing_across_a_compaction() {
    // Window 20, ratio 0.9: trigger 18, reached after call 2 (usage 18, as above), so the
    // session compacts before call 3. Capacity floor(20 × 0.5) = 10.
    let c = SessionConfig {
        target: 0.5,
        ..cfg(20, 0.9, true)
    };
    let h = three_calls(false);
    let recent = Strategy::parse("recent").unwrap();
    let (m, t) = replay(&h, &recent, &c, 0);
    // The compaction's input is the whole context [r0..r4] = 19; `recent` calls no model, so
    // nothing of it is billed (read 0, output 0). Under 10 it keeps r4 (5) and r3
    // (5 + 1 + 1 = 7); r2 would make 11.
    // Call 3: input [r3 r4] = 7 shares no prefix with [r0..r4]: read 0, write 7; output 2.
    assert_eq!(t.compactions.len(), 1);
    let k = t.compactions[0];
    assert_eq!(
        (
            k.before_call,
            k.input,
            k.cache_read,
            k.output,
            k.capacity,
            k.context_after
        ),
        (3, 19, 0, 0, 10, 7)
    );
    assert!(!k.fruitless && !k.storm && !k.failed && !k.model_call);
    let c3 = t.calls[2];
    assert_eq!(
        (
            c3.input,
            c3.cache_read,
            c3.cache_write,
            c3.cumulative,
            c3.compaction_before
        ),
        (7, 0, 7, 9, true)
    );
    // Three agent calls billed: input 4 + 11 + 7, read 0 + 4 + 0, output 2 + 1 + 2.
    assert_eq!(
        (
            m.bill.input_tokens,
            m.bill.cache_read_tokens,
            m.bill.cache_write_tokens,
            m.bill.output_tokens
        ),
        (22, 4, 18, 5)
    );
    assert_eq!(
        (m.run.calls, m.run.compactions, m.run.model_calls),
        (3, 1, 3)
    );

    // `required` keeps the flagged r0 first, so the cache still serves it: under 10 it keeps
    // r0 (4) and r4 (4 + 1 + 5 = 10); call 3's input [r0 r4] = 10 reads r0 = 4 from cache.
    let h = three_calls(true);
    let required = Strategy::parse("required").unwrap();
    let (m, t) = replay(&h, &required, &c, 0);
    assert_eq!(t.compactions[0].context_after, 10);
    assert_eq!((t.calls[2].input, t.calls[2].cache_read), (10, 4));
    assert_eq!(m.bill.cache_read_tokens, 4 + 4);
    assert_eq!(m.retention.retention_end, Some(1.0));
}

#[test]
fn retention_at_need_counts_every_later_call() {
    // r0 is required. Window 100, ratio 0.5: trigger 50; capacity floor(100 × 0.25) = 25.
    let h = history(&[
        (U, 10, true),
        (A, 10, false), // call 1: input 10, usage 20
        (T, 10, false),
        (A, 10, false), // call 2: input 32, usage 62 → compact before call 3
        (T, 10, false),
        (A, 10, false), // call 3
    ]);
    let c = SessionConfig {
        target: 0.25,
        ..cfg(100, 0.5, true)
    };
    let (m, t) = replay(&h, &Strategy::parse("recent").unwrap(), &c, 0);
    // `recent` under 25 keeps r4 and r3 (21); r0 is gone before call 3.
    assert_eq!(t.compactions[0].context_after, 21);
    let present: Vec<(f64, u32)> = t
        .calls
        .iter()
        .map(|c| (c.required_present, c.required_appeared))
        .collect();
    assert_eq!(present, [(1.0, 1), (1.0, 1), (0.0, 1)]);
    assert_eq!(m.retention.retention_at_need, Some(2.0 / 3.0));
    assert_eq!(
        (m.retention.retention_end, m.retention.retention_any_end),
        (Some(0.0), Some(0.0))
    );
    // Notes at rate 0.5 note the flagged r0 for sure (min(1, 2 × 0.5)) and read it back.
    let noted = SessionConfig {
        note_rate: 0.5,
        ..c.clone()
    };
    let (m, t) = replay(&h, &Strategy::parse("recent").unwrap(), &noted, 0);
    assert_eq!(m.retention.retention_end, Some(1.0));
    assert_eq!(m.retention.retention_at_need, Some(1.0));
    assert_eq!(t.calls[2].required_present, 1.0);
}

/// The history of `retention_at_need_counts_every_later_call`, with r0's text the fact
/// `fix_bug_01` (10 chars, as before), and r4 repeating it when `repeated`.
fn fact_history(repeated: bool) -> CostedHistory {
    let texts = [
        "fix_bug_01",
        "xxxxxxxxxx",
        "xxxxxxxxxx",
        "xxxxxxxxxx",
        if repeated { "fix_bug_01" } else { "xxxxxxxxxx" },
        "xxxxxxxxxx",
    ];
    let kinds = [U, A, T, A, T, A];
    let records = (0..6)
        .map(|i| {
            let r = Record::new(i as u64 + 1, texts[i])
                .kind(kinds[i])
                .required(i == 0);
            if kinds[i] == T {
                r.tool("bash")
            } else {
                r
            }
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

#[test]
fn fact_retention_follows_the_text_verbatim_repeated_and_noted() {
    let c = SessionConfig {
        target: 0.25,
        ..cfg(100, 0.5, true)
    };
    let recent = Strategy::parse("recent").unwrap();
    // As for records: r0 and its one fact are gone before call 3: 2 of 3 calls at need.
    let (m, _) = replay(&fact_history(false), &recent, &c, 0);
    assert_eq!((m.facts.facts_total, m.facts.facts_kept), (1, Some(0)));
    assert_eq!(m.facts.fact_retention_end, Some(0.0));
    assert_eq!(m.facts.fact_retention_at_need, Some(2.0 / 3.0));
    // r4, which `recent` keeps, repeats the fact: the record is lost, its fact is not.
    let (m, _) = replay(&fact_history(true), &recent, &c, 0);
    assert_eq!(m.retention.retention_end, Some(0.0));
    assert_eq!(
        (m.facts.fact_retention_end, m.facts.fact_retention_at_need),
        (Some(1.0), Some(1.0))
    );
    // The notes read back hold r0's text, and with it the fact.
    let noted = SessionConfig {
        note_rate: 0.5,
        ..c.clone()
    };
    let (m, _) = replay(&fact_history(false), &recent, &noted, 0);
    assert_eq!(
        (m.facts.fact_retention_end, m.facts.fact_retention_at_need),
        (Some(1.0), Some(1.0))
    );
}

#[test]
fn forgotten_reset_storms_in_a_replay_and_the_guard_stops_it() {
    let h = three_calls(false);
    let mut long = Vec::new();
    for _ in 0..4 {
        long.extend([(A, 2, false), (T, 3, false)]);
    }
    let h2 = history(&[&[(U, 4, false)][..], &long].concat());
    let recent = Strategy::parse("recent").unwrap();
    // Trigger 18 is reached after call 2 (18) and never left without the reset.
    let c = SessionConfig {
        target: 0.5,
        ..cfg(20, 0.9, false)
    };
    let (m, t) = replay(&h2, &recent, &c, 0);
    let before: Vec<u32> = t.compactions.iter().map(|k| k.before_call).collect();
    assert_eq!(before, [3, 4]);
    assert_eq!((m.run.compactions, m.run.storms), (2, 1));
    assert!(t.compactions.iter().all(|k| k.fruitless));
    let guarded = SessionConfig {
        max_consecutive: Some(1),
        ..c.clone()
    };
    let (m, _) = replay(&h2, &recent, &guarded, 0);
    assert_eq!(
        (m.run.compactions, m.run.storms, m.run.guard_tripped),
        (1, 0, true)
    );
    // With the reset, the same session compacts once and is calm.
    let (m, _) = replay(&h, &recent, &SessionConfig { reset: true, ..c }, 0);
    assert_eq!((m.run.compactions, m.run.storms), (1, 0));
}

#[test]
fn an_infeasible_strategy_fails_to_compact_and_keeps_trying() {
    // r0 is required and 30 long; capacity 10 cannot hold it.
    let h = history(&[
        (U, 30, true),
        (A, 2, false),
        (T, 3, false),
        (A, 2, false),
        (T, 3, false),
        (A, 2, false),
    ]);
    let c = SessionConfig {
        target: 0.1,
        ..cfg(100, 0.5, true)
    };
    let (m, t) = replay(&h, &Strategy::parse("required").unwrap(), &c, 0);
    // Usage: call 1 30 + 2 = 32; call 2 input 30+2+3+2 = 37, + 2 → 71 ≥ 50.
    assert_eq!(t.calls[1].cumulative, 71);
    assert_eq!((m.run.compactions, m.run.failed_compactions), (1, 1));
    let k = t.compactions[0];
    assert!(k.failed && k.fruitless);
    // The context is untouched and the failed compaction called no model, so call 3 reads
    // call 2's whole input (37) from the cache and writes what was appended since.
    assert_eq!((t.calls[2].cache_read, t.calls[2].input), (37, 44));
    assert_eq!(m.run.model_calls, 3);
    assert_eq!(m.retention.retention_end, Some(1.0));
}

#[test]
fn layers_trigger_on_the_history_share() {
    // Usable 200 (nothing reserved): history budget 40 % = 80, compact above 64, down to 40.
    let h = history(&[
        (S, 20, false),
        (U, 10, false),
        (A, 10, false), // call 1
        (T, 30, false),
        (A, 10, false), // call 2
        (T, 30, false),
        (A, 10, false), // call 3
        (T, 30, false),
        (A, 10, false), // call 4
    ]);
    let c = SessionConfig {
        layers: Some(Layers::new(0)),
        ..cfg(200, 1.0, true)
    };
    let (m, t) = replay(&h, &Strategy::parse("recent").unwrap(), &c, 0);
    // History layer (each entry after the first also pays its gap): before call 2 it holds the
    // first turn's user message, 11; before call 3 also call 1's turn (11 + 31) = 53 ≤ 64;
    // before call 4 also call 2's turn: 95 > 64 → compact.
    // Capacity = the view's cost minus history plus the history target:
    // (20+10+10+30+10+30+10+30 + 7 gaps = 157) − 95 + 40 = 102.
    // `recent` keeps r7, r6, r5, r4 (30+10+30+10 + 3 = 83); r3 would make 114.
    // Afterwards history holds r4, r5 (10 + 31 = 41 ≤ 64): not fruitless.
    assert_eq!(t.compactions.len(), 1);
    let k = t.compactions[0];
    assert_eq!((k.before_call, k.capacity, k.context_after), (4, 102, 83));
    assert!(!k.fruitless);
    assert_eq!(m.run.compactions, 1);
    // The usage counter alone (ratio 1: trigger 200) would not have fired before call 4:
    // 41, 124, 249 — it fires at the same point here, so check the layer arithmetic with a
    // tighter history share instead: 30 % → budget 60, trigger above 48: before call 3 (53).
    let mut layers = Layers::new(0);
    layers.shares = [8.0, 22.0, 40.0, 30.0];
    let (_, t) = replay(
        &h,
        &Strategy::parse("recent").unwrap(),
        &SessionConfig {
            layers: Some(layers),
            ..c
        },
        0,
    );
    assert_eq!(t.compactions[0].before_call, 3);
}

// ---------------------------------------------------------------- summaries and notes

/// A summary-style compactor for these tests: everything but the newest `keep` entries
/// becomes one summary of `size`, each entry kept with the summariser's draw.
struct SummariseOld {
    keep: usize,
    size: u64,
    summariser: Summariser,
}

impl Compactor for SummariseOld {
    fn compact(&self, view: View, _: u64, _: usize, stream: u64, out: &mut Context) -> Outcome {
        out.clear(view.len());
        let n = view.len();
        let head = n - self.keep.min(n);
        if head > 0 {
            out.push(
                Item::Summary {
                    first: 0,
                    end: head,
                    cost: self.size,
                },
                self.size,
                view.separator,
            );
            for j in 0..head {
                out.summary_kept[j] =
                    self.summariser
                        .keeps(view.flags[j], view.kinds[j], stream, j as u64);
            }
        }
        for j in head..n {
            out.push(Item::Verbatim(j), view.costs[j], view.separator);
        }
        Outcome::Feasible
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summariser)
    }

    fn keep_recent(&self, _: Option<usize>) -> usize {
        self.keep
    }
}

/// A task (required) and `turns` turns of an assistant record and a tool result, with a
/// required tool result every fourth turn.
fn long_session(turns: usize) -> CostedHistory {
    let mut spec = vec![(U, 40, true)];
    for i in 0..turns {
        spec.push((A, 20, false));
        spec.push((T, 60, i % 4 == 1));
    }
    history(&spec)
}

#[test]
fn summarising_a_summary_compounds_loss() {
    // Only the task is required; it is summarised at the first compaction and its summary
    // again at every later one, each time kept with probability p.
    let h = history(
        &[
            &[(U, 40, true)][..],
            &[(A, 20, false), (T, 60, false)].repeat(30),
        ]
        .concat(),
    );
    let p = 0.8;
    let summary = SummariseOld {
        keep: 2,
        size: 50,
        summariser: Summariser::Simulated(Simulated::by_flag(p, 0.0)),
    };
    let c = cfg(2000, 0.5, true);
    let runs = 4000;
    let mut kept = 0.0;
    let mut compactions = None;
    for stream in 0..runs {
        let (m, _) = replay(&h, &summary, &c, stream);
        // Costs do not depend on the draws, so every session compacts at the same calls.
        assert_eq!(
            *compactions.get_or_insert(m.run.compactions),
            m.run.compactions
        );
        assert_eq!(m.retention.required_verbatim, Some(0));
        kept += m.retention.required_any.unwrap();
    }
    let k = compactions.unwrap();
    assert!(k >= 3, "{k}");
    let expected = p.powi(k as i32);
    let mean = kept / runs as f64;
    // Four standard errors of a mean of 4000 Bernoulli draws.
    let tolerance = 4.0 * (expected * (1.0 - expected) / runs as f64).sqrt();
    assert!(
        (mean - expected).abs() < tolerance,
        "mean {mean}, p^{k} = {expected}"
    );
}

#[test]
fn notes_keep_required_records_a_summary_loses() {
    let summary = SummariseOld {
        keep: 4,
        size: 80,
        summariser: Summariser::Simulated(Simulated::by_flag(0.6, 0.2)),
    };
    let with = |c: &SessionConfig, rate: f64| SessionConfig {
        note_rate: rate,
        ..c.clone()
    };
    // One compaction: notes only enter the context at it, so both sessions compact at the same
    // call with the same draws, and session by session notes can only add what they carry.
    let short = long_session(10);
    let once = cfg(3000, 0.6, true);
    let mut gained = 0.0;
    for stream in 0..200 {
        let (without, _) = replay(&short, &summary, &once, stream);
        let (noted, _) = replay(&short, &summary, &with(&once, 0.25), stream);
        assert_eq!((without.run.compactions, noted.run.compactions), (1, 1));
        assert!(
            noted.retention.retention_any_end >= without.retention.retention_any_end,
            "stream {stream}"
        );
        assert!(
            noted.retention.retention_end >= without.retention.retention_end,
            "stream {stream}"
        );
        gained += noted.retention.required_any.unwrap() - without.retention.required_any.unwrap();
    }
    assert!(gained > 50.0, "{gained}");
    // Many compactions: the notes read back cost context at every later call, so usage climbs
    // faster and the summary runs more often; over many sessions notes still win.
    let long = long_session(40);
    let (mut sum_without, mut sum_with) = (0.0, 0.0);
    for stream in 0..200 {
        let (without, _) = replay(&long, &summary, &once, stream);
        let (noted, _) = replay(&long, &summary, &with(&once, 0.25), stream);
        assert!(without.run.compactions > 2);
        sum_without += without.retention.retention_any_end.unwrap();
        sum_with += noted.retention.retention_any_end.unwrap();
        // Noting everything keeps everything, verbatim.
        let (all, _) = replay(&long, &summary, &with(&once, 1.0), stream);
        // (The notes read back grow with the history until a call no longer fits the window:
        // the session then ends, having noted every record it saw, and lost those it never saw.)
        assert!(
            all.retention.noted == all.run.records || all.run.exit_context,
            "{all:?}"
        );
        if all.run.completed {
            assert_eq!(all.retention.retention_end, Some(1.0));
        } else {
            // A run that ended early has no end: every end-of-run measure is null.
            assert_eq!(
                (
                    all.retention.retention_end,
                    all.retention.required_verbatim,
                    all.retention.required_any
                ),
                (None, None, None),
                "{all:?}"
            );
        }
    }
    assert!(sum_with > sum_without + 10.0, "{sum_with} vs {sum_without}");
}

#[test]
fn summaries_are_billed_as_compaction_output() {
    let h = long_session(10);
    let summary = SummariseOld {
        keep: 2,
        size: 50,
        summariser: Summariser::default(),
    };
    let (m, t) = replay(&h, &summary, &cfg(1000, 0.5, true), 7);
    assert!(m.run.compactions >= 2);
    assert!(t.compactions.iter().all(|k| k.output == 50));
    let agent_output: u64 = t.calls.iter().map(|c| c.output).sum();
    assert_eq!(
        m.bill.output_tokens,
        agent_output + 50 * u64::from(m.run.compactions)
    );
    // After a compaction the context is the summary and the two newest entries.
    assert!(t
        .compactions
        .iter()
        .all(|k| k.context_after == 50 + 1 + 20 + 1 + 60));
}

// ---------------------------------------------------------------- determinism

#[test]
fn sessions_are_deterministic_and_scratch_reuse_changes_nothing() {
    let a = long_session(30);
    let b = long_session(12);
    let summary = SummariseOld {
        keep: 3,
        size: 60,
        summariser: Summariser::default(),
    };
    let c = SessionConfig {
        note_rate: 0.2,
        ..cfg(2500, 0.6, true)
    };
    let fresh = |h: &CostedHistory, s: u64| {
        simulate_with(
            h,
            &h.truth,
            &summary,
            &c,
            s,
            &mut SessionScratch::default(),
            None,
        )
    };
    let mut scratch = SessionScratch::default();
    for s in 0..20 {
        let reused_a = simulate_with(&a, &a.truth, &summary, &c, s, &mut scratch, None);
        let reused_b = simulate_with(&b, &b.truth, &summary, &c, s, &mut scratch, None);
        assert_eq!(reused_a, fresh(&a, s));
        assert_eq!(reused_b, fresh(&b, s));
    }
    let recent = Strategy::parse("recent(keep_recent=2)").unwrap();
    let m1 = simulate(&a, &a.truth, &recent, &c, 3, &mut scratch);
    let m2 = simulate(&a, &a.truth, &recent, &c, 3, &mut SessionScratch::default());
    assert_eq!(m1, m2);
    assert!(m1.run.compactions > 0);
}

#[test]
fn raw_never_compacts_while_recent_does() {
    // Six turns of an assistant record (10 chars) and a tool result (100 chars).
    let mut records = vec![Record::new(1, "t".repeat(50))
        .kind(Kind::User)
        .required(true)];
    for t in 0..6u64 {
        records.push(Record::new(2 + 2 * t, "a".repeat(10)).kind(Kind::Assistant));
        records.push(
            Record::new(3 + 2 * t, "o".repeat(100))
                .kind(Kind::ToolResult)
                .tool("bash"),
        );
    }
    let h = CostedHistory::new(&History::new("h", records), CostModel::Chars);
    // Window 1000: raw's largest call (611 + 10) fits; usage trigger 300.
    let c = cfg(1000, 0.3, true);
    let mut scratch = SessionScratch::default();
    let run = |spec: &str, scratch: &mut SessionScratch| {
        simulate(
            &h,
            &h.truth,
            &Strategy::parse(spec).unwrap(),
            &c,
            7,
            scratch,
        )
    };
    let raw = run("raw", &mut scratch);
    let recent = run("recent", &mut scratch);
    assert_eq!(raw.run.calls, 6);
    assert_eq!(raw.run.compactions, 0);
    assert!(
        recent.run.compactions > 0,
        "the usage trigger (300) is crossed by the third call"
    );
    assert!(raw.bill.input_tokens > recent.bill.input_tokens);
}

// ---------------------------------------------------------------- the context trigger

/// A 60-char task (required), then five calls of a 5-char assistant record each followed by a
/// 5-char tool result. Inputs: 60, 72, 84, 96, 108.
fn small_turns() -> CostedHistory {
    let mut spec = vec![(U, 60, true)];
    for _ in 0..5 {
        spec.push((A, 5, false));
        spec.push((T, 5, false));
    }
    history(&spec)
}

fn context_cfg(window: u64, ratio: f64) -> SessionConfig {
    SessionConfig {
        window,
        ratio,
        target: 0.5,
        cache: prefix_cache(),
        ..SessionConfig::default()
    }
}

#[test]
fn the_context_trigger_compacts_when_the_next_input_reaches_the_threshold() {
    let h = small_turns();
    let recent = Strategy::parse("recent(keep_first=task)").unwrap();
    assert_eq!(SessionConfig::default().trigger, TriggerMode::Context);
    // Window 200 × 0.5 = 100. The usage counter: 65 after call 1, 65 + 77 = 142 after call 2,
    // over 100 though the context is only 84: it compacts before call 3 (the context fits the
    // capacity 100 whole, so nothing changes; reset), then 89, 190: again before call 5.
    let usage = SessionConfig {
        trigger: TriggerMode::Usage,
        ..context_cfg(200, 0.5)
    };
    let (m, t) = replay(&h, &recent, &usage, 0);
    let before: Vec<u32> = t.compactions.iter().map(|k| k.before_call).collect();
    assert_eq!(before, [3, 5]);
    assert_eq!(m.run.model_calls, 5, "recent calls no model");
    // The context: 84 before call 3, 96 before call 4, 108 ≥ 100 before call 5: one compaction.
    // The task (60) and the newest six records that fit the 40 left (6 × 5 + 6 separators)
    // make 96.
    let (m, t) = replay(&h, &recent, &context_cfg(200, 0.5), 0);
    let before: Vec<u32> = t.compactions.iter().map(|k| k.before_call).collect();
    assert_eq!(before, [5]);
    assert_eq!(t.compactions[0].context_after, 96);
    assert_eq!(t.calls[4].input, 96);
    assert_eq!(
        (m.run.compactions, m.run.model_calls, m.run.summary_calls),
        (1, 5, 0)
    );
    assert_eq!(m.retention.retention_end, Some(1.0));
    // At 0.6 (120) the context never gets there: no compaction, the raw run exactly; the
    // usage counter still crosses 120 after call 2.
    let (m, _) = replay(&h, &recent, &context_cfg(200, 0.6), 0);
    let (raw, _) = replay(
        &h,
        &Strategy::parse("raw").unwrap(),
        &context_cfg(200, 0.6),
        0,
    );
    assert_eq!(m.run.compactions, 0);
    assert_eq!(m, raw);
    let (m, _) = replay(
        &h,
        &recent,
        &SessionConfig {
            trigger: TriggerMode::Usage,
            ..context_cfg(200, 0.6)
        },
        0,
    );
    assert!(m.run.compactions > 0);
}

#[test]
fn a_call_over_the_window_ends_the_session() {
    let h = small_turns();
    // Window 100: call 4 would send 96 and get 5 back, 101 > 100, so the provider refuses it.
    let (m, t) = replay(
        &h,
        &Strategy::parse("raw").unwrap(),
        &context_cfg(100, 1.0),
        0,
    );
    assert!(m.run.exit_context);
    assert_eq!(m.run.exit_call, Some(4));
    assert_eq!(m.run.calls, 3);
    assert_eq!(t.calls.len(), 3);
    // Billed: the three calls made, 60 + 72 + 84 in and 3 × 5 out.
    assert_eq!((m.bill.input_tokens, m.bill.output_tokens), (216, 15));
    // The run has no end, so no end-of-run measure (the task was there until it died).
    assert_eq!(
        (m.retention.required_total, m.retention.retention_end),
        (1, None)
    );
    // A window that holds every call: no exit.
    let (m, _) = replay(
        &h,
        &Strategy::parse("raw").unwrap(),
        &context_cfg(113, 1.0),
        0,
    );
    assert!(!m.run.exit_context && m.run.exit_call.is_none());
    assert_eq!(m.run.calls, 5);
    // A head that does not fit the capacity cannot be compacted: the run goes on until a call
    // exceeds the window. Capacity floor(100 × 0.5) = 50 < the task's 60.
    let (m, t) = replay(
        &h,
        &Strategy::parse("recent(keep_first=task)").unwrap(),
        &context_cfg(100, 0.7),
        0,
    );
    assert!(t.compactions.iter().all(|k| k.failed));
    assert_eq!((m.run.exit_context, m.run.exit_call), (true, Some(4)));
}

#[test]
fn only_a_summary_costs_a_model_call() {
    let h = small_turns();
    // Before call 5 the context is 108 ≥ 100. The task (60) is kept; of the 40 left the newest
    // two records (5 + 1 + 5) stay and the six before them become one summary of 10:
    // 1 + 10 + 1 + 11 = 23. The compaction is a model call: its input is the context (108), of
    // which call 4's input (96) is read from cache, and its output the summary (10).
    let summary = Strategy::parse("summary(keep_recent=2, summary_size=10)").unwrap();
    let (m, t) = replay(&h, &summary, &context_cfg(200, 0.5), 0);
    let k = t.compactions[0];
    assert_eq!(
        (
            k.before_call,
            k.input,
            k.cache_read,
            k.output,
            k.context_after,
            k.model_call
        ),
        (5, 108, 96, 10, 83, true)
    );
    assert_eq!(
        (m.run.compactions, m.run.summary_calls, m.run.model_calls),
        (1, 1, 6)
    );
    // Call 5 sends [task, summary, A, T] = 83 and reads the task (60) from cache.
    assert_eq!((t.calls[4].input, t.calls[4].cache_read), (83, 60));
    // Billed: the five agent calls (60 + 72 + 84 + 96 + 83) and the summary (108) in, 5 × 5 +
    // 10 out.
    assert_eq!((m.bill.input_tokens, m.bill.output_tokens), (503, 35));
    // Masking the same context calls no model and bills nothing for the compaction.
    let mask = Strategy::parse("mask(keep_recent=1)").unwrap();
    let (m, t) = replay(&h, &mask, &context_cfg(200, 0.5), 0);
    assert!(t.compactions.iter().all(|k| !k.model_call));
    assert_eq!((m.run.summary_calls, m.run.model_calls), (0, m.run.calls));
}
