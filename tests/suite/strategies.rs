//! The strategies of the field on small hand-worked histories: what each keeps, what it costs and
//! how it scores. Every figure is derived in the comments from the rules in the strategy's module
//! (cost model `chars`, so the separator between two items costs 1).

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::Strategy;
use ctxlab::view::View;
use ctxlab::{score, CostModel, Metrics};

use Item::{Placeholder as P, Verbatim as V};

/// (kind, tool, length, required) per record; texts are `x` repeated.
type Spec = (Kind, Option<&'static str>, usize, bool);

fn history(records: &[Spec]) -> CostedHistory {
    let records = records
        .iter()
        .enumerate()
        .map(|(i, &(kind, tool, len, required))| {
            let mut r = Record::new(i as u64 + 1, "x".repeat(len))
                .kind(kind)
                .required(required);
            if let Some(t) = tool {
                r = r.tool(t);
            }
            r
        })
        .collect();
    CostedHistory::new(&History::new("hand", records), CostModel::Chars)
}

/// Notes of the given lengths, required at the given positions.
fn notes(lengths: &[usize], required: &[usize]) -> CostedHistory {
    let specs: Vec<Spec> = lengths
        .iter()
        .enumerate()
        .map(|(i, &n)| (Kind::Note, None, n, required.contains(&i)))
        .collect();
    history(&specs)
}

/// Applies `spec` with the true labels as flags, stream 0, the strategy's own `keep_recent`.
fn run(h: &CostedHistory, spec: &str, capacity: u64) -> (Outcome, Context, Metrics) {
    let s = Strategy::parse(spec).unwrap();
    let mut ctx = Context::default();
    let outcome = s.apply(
        View::new(h, &h.truth),
        capacity,
        s.effective_keep_recent(None),
        0,
        &mut ctx,
    );
    let m = score(h, outcome, &ctx);
    (outcome, ctx, m)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-12)
}

// ---------------------------------------------------------------- pinned

/// Lengths 10, 5, 5, 5, 5; required at 0 (the task) and 2. Total 30 + 4 separators = 34.
fn five() -> CostedHistory {
    notes(&[10, 5, 5, 5, 5], &[0, 2])
}

#[test]
fn pinned_keeps_the_head_then_the_newest_that_fit() {
    let h = five();
    assert_eq!(h.total, 34);
    // Head 0 (10); newest: 4 → 10 + 1 + 5 = 16 ≤ 20; 3 → 16 + 6 = 22 > 20, stop.
    let (o, ctx, m) = run(&h, "pinned(keep_first=1)", 20);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, vec![V(0), V(4)]);
    assert_eq!(ctx.cost, 16);
    assert_eq!(m.used, 16);
    assert!(close(m.reduction(), 18.0 / 34.0));
    assert_eq!((m.required_kept, m.required_total), (1, 2));
    assert!(close(m.required_retention(), 0.5));
    assert!(close(m.exact(), 1.0));
    // `recent` at the same capacity keeps 4, 3, 2 (5, 11, 17; 1 would make 23) and the task is lost.
    let (_, recent, _) = run(&h, "recent", 20);
    assert_eq!(recent.items, vec![V(2), V(3), V(4)]);
    // keep_first=2: head 10 + 1 + 5 = 16; 4 → 22 ≤ 22; 3 → 28, stop.
    let (_, ctx, _) = run(&h, "pinned(keep_first=2)", 22);
    assert_eq!(ctx.items, vec![V(0), V(1), V(4)]);
    assert_eq!(ctx.cost, 22);
    // keep_first=0 is `recent`.
    let (_, ctx, _) = run(&h, "pinned(keep_first=0)", 20);
    assert_eq!(ctx.items, recent.items);
}

#[test]
fn pinned_is_infeasible_when_the_head_alone_does_not_fit() {
    let (o, ctx, m) = run(&five(), "pinned(keep_first=1)", 9);
    assert_eq!(o, Outcome::Infeasible);
    assert!(ctx.items.is_empty());
    assert!(!m.feasible);
}

#[test]
fn pinned_with_a_pinned_tail_keeps_head_and_tail() {
    // Tail 4 (5) pinned; the rule fills 15 − 1 (the gap to the tail) from 0..4: head 0 (10, then
    // 11 with the gap); 3 → 17 > 15, stop. Result 0, 4: 10 + 1 + 5 = 16.
    let (_, ctx, _) = run(&five(), "pinned(keep_recent=1, keep_first=1)", 16);
    assert_eq!(ctx.items, vec![V(0), V(4)]);
    assert_eq!(ctx.cost, 16);
}

// ---------------------------------------------------------------- amortized

#[test]
fn amortized_keeps_everything_until_over_capacity_then_cuts_to_half() {
    let h = five();
    // Fits (34 ≤ 40): append-only, everything kept.
    let (_, ctx, m) = run(&h, "amortized(keep_first=1)", 40);
    assert_eq!(ctx.items, (0..5).map(V).collect::<Vec<_>>());
    assert_eq!(m.used, 34);
    // 34 > 32: cut to 16. Head 0 (10); 4 → 16 ≤ 16; 3 → 22, stop.
    let (_, ctx, m) = run(&h, "amortized(keep_first=1)", 32);
    assert_eq!(ctx.items, vec![V(0), V(4)]);
    assert_eq!(m.used, 16);
    assert!(close(m.required_retention(), 0.5));
    // 34 > 30: the head (10) leaves 20, cut to half of it, 10: 4 costs 5 + 1 (the gap to the
    // head) = 6 ≤ 10; 3 would make 6 + 6 + 1 = 13 > 10.
    let (_, ctx, m) = run(&h, "amortized(keep_first=1)", 30);
    assert_eq!(ctx.items, vec![V(0), V(4)]);
    assert_eq!(m.used, 16);
    // Cut to 6 is below the head (10 ≤ 12 = capacity): the head is kept alone.
    let (_, ctx, _) = run(&h, "amortized(keep_first=1)", 12);
    assert_eq!(ctx.items, vec![V(0)]);
    // keep_first=0 at 32: cut to 16: 4, 3, 2 (5, 11, 17 > 16 → stop at 2): 3, 4.
    let (_, ctx, _) = run(&h, "amortized(keep_first=0)", 32);
    assert_eq!(ctx.items, vec![V(3), V(4)]);
    // The head alone exceeds the capacity.
    assert_eq!(run(&h, "amortized(keep_first=1)", 8).0, Outcome::Infeasible);
}

// ---------------------------------------------------------------- mask and clear_tool_uses

/// An agent-like run: task, three tool calls and results, a final answer.
///
/// | pos | kind        | tool | len | required |
/// | --- | ----------- | ---- | --- | -------- |
/// | 0   | user        |      | 20  | yes      |
/// | 1   | tool_call   | bash | 10  |          |
/// | 2   | tool_result | bash | 150 | yes      |
/// | 3   | tool_call   | grep | 10  |          |
/// | 4   | tool_result | grep | 120 |          |
/// | 5   | tool_call   | bash | 10  |          |
/// | 6   | tool_result | bash | 50  |          |
/// | 7   | assistant   |      | 30  |          |
///
/// Total 400 + 7 separators = 407. `[Previous: used bash]` and `[Previous: used grep]` cost 21,
/// `[cleared to save context]` costs 25.
fn agent_run() -> CostedHistory {
    use Kind::*;
    history(&[
        (User, None, 20, true),
        (ToolCall, Some("bash"), 10, false),
        (ToolResult, Some("bash"), 150, true),
        (ToolCall, Some("grep"), 10, false),
        (ToolResult, Some("grep"), 120, false),
        (ToolCall, Some("bash"), 10, false),
        (ToolResult, Some("bash"), 50, false),
        (Assistant, None, 30, false),
    ])
}

#[test]
fn mask_replaces_old_long_tool_results_even_under_capacity() {
    let h = agent_run();
    assert_eq!(h.total, 407);
    assert_eq!(h.stand_ins.mask_costs[2], 21);
    // keep_recent=1: result 6 stays; 2 (150 > 100) and 4 (120 > 100) become placeholders:
    // 20 + 10 + 21 + 10 + 21 + 10 + 50 + 30 = 172, + 7 = 179.
    let (o, ctx, m) = run(&h, "mask(keep_recent=1)", 407);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        vec![V(0), V(1), P(2), V(3), P(4), V(5), V(6), V(7)]
    );
    assert_eq!(m.used, 179);
    assert!(close(m.reduction(), 228.0 / 407.0));
    assert_eq!(m.placeholders, 2);
    assert_eq!(m.summarised, 0);
    // Required: 0 (kept) and 2 (masked: its information is gone).
    assert!(close(m.required_retention(), 0.5));
    assert!(close(m.retention_any(), 0.5));
    assert!(close(m.exact(), 6.0 / 8.0));
    // At 150 the oldest items go (with no head kept): 179 − 21 (0) = 158 − 11 (1) = 147 ≤ 150.
    let (_, ctx, m) = run(&h, "mask(keep_recent=1, keep_first=0)", 150);
    assert_eq!(ctx.items, vec![P(2), V(3), P(4), V(5), V(6), V(7)]);
    assert_eq!(m.used, 147);
    assert!(close(m.required_retention(), 0.0));
    assert!(close(m.exact(), 4.0 / 6.0));
}

#[test]
fn mask_window_and_threshold() {
    let h = agent_run();
    // Default keep_recent=3 covers all three results: nothing masked, nothing dropped.
    let s = Strategy::parse("mask").unwrap();
    assert_eq!(s.effective_keep_recent(None), 3);
    assert_eq!(s.effective_keep_recent(Some(1)), 1);
    let (_, ctx, m) = run(&h, "mask", 407);
    assert_eq!(ctx.items, (0..8).map(V).collect::<Vec<_>>());
    assert_eq!(m.used, 407);
    // keep_recent=0, min_chars=40: result 6 (50 > 40) is masked too: 179 − 50 + 21 = 150.
    let (_, ctx, m) = run(&h, "mask(keep_recent=0, min_chars=40)", 407);
    assert_eq!(ctx.items[6], P(6));
    assert_eq!(m.used, 150);
    // min_chars=120: result 4 (120, not longer) stays: 179 − 21 + 120 = 278.
    let (_, ctx, m) = run(&h, "mask(keep_recent=1, min_chars=120)", 407);
    assert_eq!(ctx.items[4], V(4));
    assert_eq!(m.used, 278);
}

#[test]
fn mask_threshold_counts_chars_whatever_the_cost_model() {
    // 120 chars of 'é' cost 240 bytes: still 120 chars, not longer than min_chars=120.
    let records = vec![
        Record::new(1, "é".repeat(120))
            .kind(Kind::ToolResult)
            .tool("bash"),
        Record::new(2, "ok").kind(Kind::Assistant),
    ];
    let h = CostedHistory::new(&History::new("h", records), CostModel::Bytes);
    let s = Strategy::parse("mask(keep_recent=0, min_chars=120)").unwrap();
    let mut ctx = Context::default();
    s.apply(View::new(&h, &h.truth), h.total, 0, 0, &mut ctx);
    assert_eq!(ctx.items, vec![V(0), V(1)]);
    let s = Strategy::parse("mask(keep_recent=0, min_chars=119)").unwrap();
    s.apply(View::new(&h, &h.truth), h.total, 0, 0, &mut ctx);
    assert_eq!(ctx.items, vec![P(0), V(1)]);
    assert_eq!(ctx.cost, 21 + 1 + 2);
}

#[test]
fn clear_tool_uses_acts_only_over_capacity() {
    let h = agent_run();
    assert_eq!(h.stand_ins.clear_cost, 25);
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=1)", 407);
    assert_eq!(ctx.items, (0..8).map(V).collect::<Vec<_>>());
    assert_eq!(m.placeholders, 0);
    // keep=1 at 300: results 2 and 4 are cleared, freeing (150 − 25) + (120 − 25) = 220:
    // 407 − 220 = 187 ≤ 300.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=1)", 300);
    assert_eq!(
        ctx.items,
        vec![V(0), V(1), P(2), V(3), P(4), V(5), V(6), V(7)]
    );
    assert_eq!(m.used, 187);
    assert_eq!(m.placeholders, 2);
    assert!(close(m.required_retention(), 0.5));
    assert!(close(m.exact(), 0.75));
}

#[test]
fn clear_tool_uses_keep_threshold_exclusions_and_inputs() {
    let h = agent_run();
    // Default keep=3 covers every result: nothing to clear, so the oldest are dropped (no head
    // kept here): 407 − 21 (0) − 11 (1) − 151 (2) = 224 ≤ 300.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep_first=0)", 300);
    assert_eq!(ctx.items, (3..8).map(V).collect::<Vec<_>>());
    assert_eq!(m.used, 224);
    // clear_at_least=221 > 220 freed: no clearing, same drops.
    let (_, ctx, m) = run(
        &h,
        "clear_tool_uses(keep=1, clear_at_least=221, keep_first=0)",
        300,
    );
    assert_eq!(ctx.items, (3..8).map(V).collect::<Vec<_>>());
    assert_eq!(m.used, 224);
    // clear_at_least=220 is met exactly.
    let (_, _, m) = run(&h, "clear_tool_uses(keep=1, clear_at_least=220)", 300);
    assert_eq!(m.used, 187);
    // grep is exempt: only 2 is cleared, freeing 125: 282.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=1, exclude_tools=[grep])", 300);
    assert_eq!(ctx.items[2], P(2));
    assert_eq!(ctx.items[4], V(4));
    assert_eq!(m.used, 282);
    // clear_inputs: calls 1 and 3 (older than the newest call, 5) are cleared too, each
    // growing by 25 − 10 = 15: freed 220 − 30 = 190, used 217.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=1, clear_inputs=true)", 300);
    assert_eq!(
        ctx.items,
        vec![V(0), P(1), P(2), P(3), P(4), V(5), V(6), V(7)]
    );
    assert_eq!(m.used, 217);
    assert_eq!(m.placeholders, 4);
    // keep=0 at 100: all three results cleared (freed 125 + 95 + 25 = 245, used 162), then the
    // oldest dropped: − 21 (0) − 11 (1) − 26 (2) − 11 (3) = 93: 4, 5, 6, 7 = 25 + 10 + 25 + 30 + 3.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=0, keep_first=0)", 100);
    assert_eq!(ctx.items, vec![P(4), V(5), P(6), V(7)]);
    assert_eq!(m.used, 93);
    assert!(close(m.required_retention(), 0.0));
    // With the head (the task, 0) kept, the rest has 100 − 20 = 80, one separator of which
    // joins it to the head: 1..7 cleared cost 135 + 6 + 1 = 142; dropping 1 (11), 2 (26), 3 (11)
    // and 4 (26) leaves 5, 6, 7: 10 + 25 + 30 + 2 + 1 = 68 ≤ 80. Used 20 + 68 = 88.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=0)", 100);
    assert_eq!(ctx.items, vec![V(0), V(5), P(6), V(7)]);
    assert_eq!(m.used, 88);
    assert!(close(m.required_retention(), 0.5));
}

#[test]
fn clearing_that_frees_nothing_is_not_applied() {
    // Two short results (10 each) would each grow to 25: freed −30, nothing cleared.
    use Kind::*;
    let h = history(&[
        (ToolResult, Some("bash"), 10, false),
        (ToolResult, Some("bash"), 10, false),
        (Assistant, None, 30, false),
    ]);
    // Total 52 > 45: no clearing; drop 0 (11): 41.
    let (_, ctx, m) = run(&h, "clear_tool_uses(keep=0)", 45);
    assert_eq!(ctx.items, vec![V(1), V(2)]);
    assert_eq!(m.used, 41);
}

// ---------------------------------------------------------------- summary

/// Ten records of 100 chars, required at 0, 3 and 9. Total 1000 + 9 = 1009.
fn ten() -> CostedHistory {
    notes(&[100; 10], &[0, 3, 9])
}

#[test]
fn summary_replaces_all_but_the_tail_with_one_summary() {
    let h = ten();
    assert_eq!(h.total, 1009);
    // Summary of 0..8 (cost 50), then 8 and 9: 50 + 1 + 100 + 1 + 100 = 252.
    let spec = "summary(keep_recent=2, summary_size=50, recall_flagged=1, recall_other=1)";
    let (o, ctx, m) = run(&h, spec, 400);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        vec![
            Item::Summary {
                first: 0,
                end: 8,
                cost: 50
            },
            V(8),
            V(9)
        ]
    );
    assert_eq!(m.used, 252);
    assert_eq!(m.summarised, 8);
    assert_eq!(m.placeholders, 0);
    // Recall 1: 0 and 3 survive paraphrased, 9 verbatim.
    assert_eq!((m.required_kept, m.required_any), (1, 3.0));
    assert!(close(m.required_retention(), 1.0 / 3.0));
    assert!(close(m.retention_any(), 1.0));
    assert!(close(m.exact(), 2.0 / 3.0));
    // Recall 0: nothing of the summarised part survives; only 9, verbatim.
    let spec = "summary(keep_recent=2, summary_size=50, recall_flagged=0, recall_other=0)";
    let (_, ctx, m) = run(&h, spec, 400);
    assert!(ctx.summary_kept.iter().all(|&k| !k));
    assert_eq!((m.required_kept, m.required_any), (1, 1.0));
    assert!(close(m.retention_any(), 1.0 / 3.0));
}

#[test]
fn summary_cost_ratio_cap_and_tail_folding() {
    let h = ten();
    // Under capacity: nothing is summarised.
    let (_, ctx, m) = run(&h, "summary", 1009);
    assert_eq!(ctx.items, (0..10).map(V).collect::<Vec<_>>());
    assert_eq!(m.summarised, 0);
    // keep_recent=2, default ratio 0.1: replaces 800 + 7 = 807 → ceil(80.7) = 81; + 1 + 201 = 283.
    let (_, ctx, m) = run(&h, "summary(keep_recent=2)", 400);
    assert_eq!(
        ctx.items[0],
        Item::Summary {
            first: 0,
            end: 8,
            cost: 81
        }
    );
    assert_eq!(m.used, 283);
    // Default keep_recent=6 at 400: summary of 0..4 (403 → 41) + tail 606 = 647 > 400; fold:
    // 0..5: 51 + 505 = 556; 0..6: ceil(60.5) = 61 + 404 = 465; 0..7: ceil(70.6) = 71 + 303 = 374.
    let (_, ctx, m) = run(&h, "summary", 400);
    assert_eq!(
        ctx.items,
        vec![
            Item::Summary {
                first: 0,
                end: 7,
                cost: 71
            },
            V(7),
            V(8),
            V(9)
        ]
    );
    assert_eq!(m.used, 374);
    assert_eq!(m.summarised, 7);
    // The cap: half of 1009 is ceil(504.5) = 505, capped at 300.
    let (_, ctx, m) = run(
        &h,
        "summary(keep_recent=0, summary_ratio=0.5, summary_max=300)",
        400,
    );
    assert_eq!(
        ctx.items,
        vec![Item::Summary {
            first: 0,
            end: 10,
            cost: 300
        }]
    );
    assert_eq!(m.used, 300);
    assert!(close(m.exact(), 0.0));
    // A fixed summary of 50 alone fits 50; it does not fit 49: infeasible.
    let (_, ctx, _) = run(&h, "summary(summary_size=50)", 50);
    assert_eq!(ctx.items.len(), 1);
    let (o, ctx, m) = run(&h, "summary(summary_size=50)", 49);
    assert_eq!(o, Outcome::Infeasible);
    assert!(ctx.items.is_empty());
    assert!(!m.feasible);
}

#[test]
fn summary_recall_is_drawn_from_the_cell_stream_per_record() {
    let h = notes(&[10; 200], &(0..200).step_by(2).collect::<Vec<_>>());
    let s = Strategy::parse("summary(keep_recent=0, summary_size=5)").unwrap();
    // The defaults are the measured ones (README, "What real summaries keep").
    assert_eq!(
        s.summariser(),
        Some(&ctxlab::summariser::Summariser::Simulated(
            ctxlab::summariser::simulated::MEASURED
        ))
    );
    let s = Strategy::parse(
        "summary(keep_recent=0, summary_size=5, recall_flagged=0.9, recall_other=0.2)",
    )
    .unwrap();
    let summariser = s.summariser().unwrap();
    assert_eq!(
        s.summariser(),
        Some(&ctxlab::summariser::Summariser::Simulated(
            ctxlab::summariser::Simulated::by_flag(0.9, 0.2)
        ))
    );
    let mut a = Context::default();
    let mut b = Context::default();
    s.apply(View::new(&h, &h.truth), 100, 0, 17, &mut a);
    for i in 0..200 {
        assert_eq!(
            a.summary_kept[i],
            summariser.keeps(h.truth[i], h.kinds[i], 17, i as u64)
        );
    }
    // Same stream, same draws; another stream, other draws.
    s.apply(View::new(&h, &h.truth), 100, 0, 17, &mut b);
    assert_eq!(a.summary_kept, b.summary_kept);
    s.apply(View::new(&h, &h.truth), 100, 0, 18, &mut b);
    assert_ne!(a.summary_kept, b.summary_kept);
    // Recall follows the flags the summariser sees, not the truth: with no flags set, the
    // required records are kept at recall_other.
    let none = vec![false; 200];
    s.apply(View::new(&h, &none), 100, 0, 17, &mut b);
    for i in 0..200 {
        assert_eq!(
            b.summary_kept[i],
            summariser.keeps(false, h.kinds[i], 17, i as u64)
        );
    }
    assert_eq!(Strategy::parse("mask").unwrap().summariser(), None);
}

/// Summarising a summary applies recall again: a record survives two compactions (two
/// independent streams) with probability recall². Over 20 000 records at recall 0.7, the count
/// is binomial with standard deviation √(n p (1 − p)) ≈ 70 around 9 800, so a tolerance of
/// 0.02 × n = 400 is more than five deviations.
#[test]
fn summarising_a_summary_compounds_recall() {
    let n = 20_000usize;
    let h = notes(&vec![1; n], &[]);
    let s = Strategy::parse("summary(keep_recent=0, summary_size=1, recall_other=0.7)").unwrap();
    let summariser = s.summariser().unwrap();
    let mut first = Context::default();
    s.apply(View::new(&h, &h.truth), 10, 0, 1, &mut first);
    let once = first.summary_kept.iter().filter(|&&k| k).count();
    // A second compaction with its own stream re-applies recall to what the first carried.
    let twice = (0..n)
        .filter(|&i| first.summary_kept[i] && summariser.keeps(false, h.kinds[i], 2, i as u64))
        .count();
    let rate = |k: usize| k as f64 / n as f64;
    assert!((rate(once) - 0.7).abs() < 0.02, "{}", rate(once));
    assert!((rate(twice) - 0.49).abs() < 0.02, "{}", rate(twice));
}

// ---------------------------------------------------------------- oracle

#[test]
fn oracle_keeps_the_most_required_records_then_the_newest() {
    // Lengths 30, 5, 20, 10, 8, 40; required 0, 2, 3, 5. Total 113 + 5 = 118.
    let h = notes(&[30, 5, 20, 10, 8, 40], &[0, 2, 3, 5]);
    let s = Strategy::parse("oracle").unwrap();
    assert!(s.sees_truth());
    assert!(!Strategy::parse("required").unwrap().sees_truth());
    // Required by cost: 3 (10), 2 (20 → 31), 0 (30 → 62 > 40, stop). Others from the newest:
    // 4 (8 → 40 ≤ 40), 1 (5 → 46, skipped). Kept 2, 3, 4: 20 + 10 + 8 + 2 = 40.
    let (o, ctx, m) = run(&h, "oracle", 40);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, vec![V(2), V(3), V(4)]);
    assert_eq!(m.used, 40);
    assert!(close(m.required_retention(), 0.5));
    // `required` is infeasible here (103 > 40); `recent` keeps only 5 (40): 1 of 4.
    assert_eq!(run(&h, "required", 40).0, Outcome::Infeasible);
    let (_, _, recent) = run(&h, "recent", 40);
    assert!(close(recent.required_retention(), 0.25));
    // Equal costs: the newer first. Two required records of 10, room for one.
    let h = notes(&[10, 10], &[0, 1]);
    let (_, ctx, _) = run(&h, "oracle", 15);
    assert_eq!(ctx.items, vec![V(1)]);
}

#[test]
fn oracle_ignores_keep_recent() {
    let h = notes(&[30, 5, 20, 10, 8, 40], &[0, 2, 3, 5]);
    let s = Strategy::parse("oracle").unwrap();
    let mut ctx = Context::default();
    s.apply(View::new(&h, &h.truth), 40, 3, 0, &mut ctx);
    assert_eq!(ctx.items, vec![V(2), V(3), V(4)]);
}

// ---------------------------------------------------------------- raw

#[test]
fn raw_keeps_everything_or_is_infeasible() {
    // 10 + 20 + 30 and two separators = 62.
    let h = notes(&[10, 20, 30], &[0]);
    let (o, ctx, m) = run(&h, "raw", 62);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, vec![V(0), V(1), V(2)]);
    assert_eq!(
        (m.used, m.reduction(), m.required_retention()),
        (62, Some(0.0), Some(1.0))
    );
    let (o, ctx, _) = run(&h, "raw", 61);
    assert_eq!(o, Outcome::Infeasible);
    assert!(ctx.items.is_empty());
    assert!(Strategy::parse("raw(keep_recent=2)")
        .unwrap_err()
        .contains("no parameters"));
    assert!(!Strategy::parse("raw").unwrap().compacts());
    assert!(Strategy::parse("recent").unwrap().compacts());
}

// ---------------------------------------------------------------- heads

fn system_task_run() -> CostedHistory {
    use Kind::*;
    history(&[
        (System, None, 30, true),
        (User, None, 20, true),
        (ToolCall, Some("bash"), 10, false),
        (ToolResult, Some("bash"), 150, false),
        (Assistant, None, 30, false),
    ])
}

#[test]
fn the_system_prompt_and_the_task_are_never_summarised_or_dropped() {
    let h = system_task_run();
    // Head 0, 1: 30 + 1 + 20 = 51, leaving 49 at capacity 100. The rest (2..5) is 193 with the
    // separator to the head; summary_size 10 of 2, 3 and the tail 4: 1 + 10 + 1 + 30 = 42 ≤ 49.
    let (o, ctx, m) = run(&h, "summary(keep_recent=1, summary_size=10)", 100);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        vec![
            V(0),
            V(1),
            Item::Summary {
                first: 2,
                end: 4,
                cost: 10
            },
            V(4)
        ]
    );
    assert_eq!(ctx.cost, 93);
    assert!(close(m.required_retention(), 1.0));
    assert!(!ctx.summary_kept[0] && !ctx.summary_kept[1]);
    // Without the head the summary takes them: 0..4 summarised, 10 + 1 + 30 = 41.
    let (_, ctx, m) = run(
        &h,
        "summary(keep_recent=1, summary_size=10, keep_first=0)",
        100,
    );
    assert_eq!(ctx.cost, 41);
    assert!(close(m.required_retention(), 0.0));
    // mask and clear_tool_uses drop the oldest, but never the head: at 90 the rest has 39. Mask
    // (21) or clear (25) 3: 10 + 21 + 30 + 2 + 1 = 64 (68 cleared) > 39; dropping 2 leaves 53
    // (57); dropping 3 leaves 30 + 1 = 31 ≤ 39. Used 51 + 31 = 82.
    for spec in [
        "mask(keep_recent=0, min_chars=0)",
        "clear_tool_uses(keep=0)",
    ] {
        let (o, ctx, m) = run(&h, spec, 90);
        assert_eq!(o, Outcome::Feasible, "{spec}");
        assert_eq!(ctx.items, vec![V(0), V(1), V(4)], "{spec}");
        assert_eq!(ctx.cost, 82, "{spec}");
        assert!(close(m.required_retention(), 1.0), "{spec}");
        // A head that does not fit is infeasible, not dropped.
        let (o, ctx, _) = run(&h, spec, 50);
        assert_eq!(o, Outcome::Infeasible, "{spec}");
        assert!(ctx.items.is_empty());
    }
}
