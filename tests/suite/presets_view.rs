//! The harness presets that rewrite or cut the context without a model: SWE-agent's
//! `LastNObservations`, OpenHands' masking, recent-events and amortized condensers, Anthropic's
//! tool-result clearing. Each golden is worked by hand from its source (the research notes'
//! worked examples where they fit) under the `chars` cost model, where records are joined by a
//! 1-char separator.

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate_with, SessionConfig, SessionMetrics, SessionScratch, Trace};
use ctxlab::view::View;
use ctxlab::{CostModel, Strategy};

use Item::{Placeholder as P, Verbatim as V};
use Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};

/// Record `i` of `kind` with `text` (tool records name the tool `bash`).
fn record(i: usize, kind: Kind, text: String) -> Record {
    let r = Record::new(i as u64 + 1, text).kind(kind);
    if matches!(kind, C | T) {
        r.tool("bash")
    } else {
        r
    }
}

fn lines(n: usize) -> String {
    vec!["x".repeat(20); n].join("\n")
}

fn chars(n: usize) -> String {
    "x".repeat(n)
}

fn costed(records: Vec<Record>) -> CostedHistory {
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// The research notes' shared history: 0 system ("system", 6), 1 the task ("task", 4), then
/// assistant `aK` (2 chars) and its observation `oK` of the given line counts: 3, 4, 2, 5, 1, 2
/// lines cost 62, 83, 41, 104, 20, 41. Record 2k is aK+1's call, 2k+1 its output.
fn agent_history(observations: usize) -> CostedHistory {
    costed(agent_records(observations))
}

fn agent_records(observations: usize) -> Vec<Record> {
    let obs_lines = [3, 4, 2, 5, 1, 2];
    let mut records = vec![record(0, S, "system".into()), record(1, U, "task".into())];
    for (k, &l) in obs_lines.iter().take(observations).enumerate() {
        records.push(record(2 + 2 * k, A, format!("a{}", k + 1)));
        records.push(record(3 + 2 * k, T, lines(l)));
    }
    records
}

/// Applies `spec` to the whole history under `capacity`.
fn cell(spec: &str, h: &CostedHistory, capacity: u64) -> (Outcome, Context) {
    let s = Strategy::parse(spec).unwrap();
    let mut ctx = Context::default();
    let flags = vec![false; h.len()];
    let outcome = s.apply(
        View::new(h, &flags),
        capacity,
        s.effective_keep_recent(None),
        0,
        &mut ctx,
    );
    (outcome, ctx)
}

fn replay(spec: &str, h: &CostedHistory) -> (SessionMetrics, Trace) {
    let s = Strategy::parse(spec).unwrap();
    let cfg = SessionConfig {
        window: 100_000,
        ..SessionConfig::default()
    };
    let mut trace = Trace::default();
    let m = simulate_with(
        h,
        &h.truth,
        &s,
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    (m, trace)
}

/// "Old environment output: (N lines omitted)" with a one-digit N: 24 + 1 + 1 + 15 chars.
const SWE_STAND_IN: u64 = 41;

#[test]
fn swe_agent_last_n_elides_all_but_the_newest_n_observations() {
    // Call 5 of the research example: the history up to o4 (records 0..=9), n=2, polling=1.
    // Observations: the task (obs#0) and o1..o4, so len(obs) = 5, last_removed = 5 − 2 = 3,
    // omit = obs[1:3] = o1, o2 (records 3 and 5, 3 and 4 lines).
    let h = agent_history(4);
    assert_eq!(h.costs, [6, 4, 2, 62, 2, 83, 2, 41, 2, 104]);
    assert_eq!(h.total, 308 + 9);
    let (o, ctx) = cell("swe_agent_last_n(n=2)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [V(0), V(1), V(2), P(3), V(4), P(5), V(6), V(7), V(8), V(9)]
    );
    assert_eq!(
        ctx.item_costs(&h.costs),
        [6, 4, 2, SWE_STAND_IN, 2, SWE_STAND_IN, 2, 41, 2, 104]
    );
    // 6 + 4 + 2 + 41 + 2 + 41 + 2 + 41 + 2 + 104 = 245, plus 9 separators.
    assert_eq!(ctx.cost, 254);
    // The harness sends all of it: one unit less is infeasible, never a drop.
    assert_eq!(
        cell("swe_agent_last_n(n=2)", &h, 253).0,
        Outcome::Infeasible
    );

    // polling=2: (5 // 2) × 2 − 2 = 2, omit = obs[1:2] = o1 only: 317 − 62 + 41 = 296.
    let (_, ctx) = cell("swe_agent_last_n(n=2, polling=2)", &h, 1000);
    assert_eq!(ctx.items.iter().filter(|i| matches!(i, P(_))).count(), 1);
    assert_eq!(ctx.items[3], P(3));
    assert_eq!(ctx.cost, 296);

    // Call 6 (o5 too, six observations): polling 1 and 2 agree, 6 − 2 = 4 → o1, o2, o3. o3 has
    // 2 lines, so its stand-in costs 41 as the record does.
    let h = agent_history(5);
    for spec in ["swe_agent_last_n(n=2)", "swe_agent_last_n(n=2, polling=2)"] {
        let (_, ctx) = cell(spec, &h, 1000);
        let placeholders: Vec<Item> = ctx
            .items
            .iter()
            .copied()
            .filter(|i| matches!(i, P(_)))
            .collect();
        assert_eq!(placeholders, [P(3), P(5), P(7)], "{spec}");
    }

    // The default n=5 elides nothing of six observations (6 − 5 = 1: obs[1:1] is empty).
    let (_, ctx) = cell("swe_agent_last_n", &h, 1000);
    assert_eq!(ctx.cost, h.total);
    assert!(ctx.items.iter().all(|i| matches!(i, V(_))));
}

#[test]
fn swe_agent_last_n_in_a_session_elides_before_every_call_and_calls_no_model() {
    // Five calls (a1..a5); before call k the context holds records 0..=2k−2 (up to o(k−1)).
    // n=2: nothing before calls 2 and 3 (2 and 3 observations with the task); before call 4
    // o1 (4 − 2 − 1 = 1 elided); before call 5 o1 and o2.
    let h = agent_history(5);
    let (m, t) = replay("swe_agent_last_n(n=2)", &h);
    assert_eq!(m.run.calls, 5);
    assert_eq!(m.run.model_calls, m.run.calls, "eliding calls no model");
    assert_eq!(m.run.summary_calls, 0);
    let before: Vec<u32> = t.compactions.iter().map(|k| k.before_call).collect();
    // Re-applied before every call, but a call where it changes nothing is no compaction.
    assert_eq!(before, [4, 5], "a view re-applied before every call");
    // Before call 2: 6 + 4 + 2 + 62 + 3 = 77. Call 3: + 2 + 83 + 2 = 164. Call 4: + 2 + 41 + 2
    // = 209, o1 → 41: 188. Call 5: 188 + 2 + 104 + 2 = 296, o1 stays at 41 (a stand-in is
    // kept as it is), o2 → 41: 254, as the cell on the same history.
    let input: Vec<u64> = t.compactions.iter().map(|k| k.input).collect();
    let after: Vec<u64> = t.compactions.iter().map(|k| k.context_after).collect();
    assert_eq!(input, [209, 296]);
    assert_eq!(after, [188, 254]);
    assert!(t.compactions.iter().all(|k| !k.model_call && !k.failed));
    assert_eq!(t.calls[4].input, 254);
    // After the last call o5 joins: 254 + 2 + 20 + 2.
    assert_eq!(m.run.final_context, 278);
}

#[test]
fn openhands_observation_masking_masks_observations_outside_the_event_window() {
    // The research example, attention_window=3: at call 5 (10 events) observations at i < 7
    // are masked, o1 and o2 (records 3, 5); at call 4 (8 events) i < 5, o1 only. The window
    // counts every event, the system prompt and the actions included. The actions a1, a2
    // (records 2, 4) that called the masked tools are not sent (OpenHands' ConversationMemory
    // emits an action's message only once all its tool calls are answered,
    // conversation_memory.py @ d6fab190 `process_events`): stand-ins that cost nothing.
    let h = agent_history(4);
    let masked = 8; // "<MASKED>"
    let (o, ctx) = cell(
        "openhands_observation_masking(attention_window=3)",
        &h,
        1000,
    );
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [V(0), V(1), P(2), P(3), P(4), P(5), V(6), V(7), V(8), V(9)]
    );
    assert_eq!(
        ctx.item_costs(&h.costs),
        [6, 4, 0, masked, 0, masked, 2, 41, 2, 104]
    );
    // 6 + 4 + 0 + 8 + 0 + 8 + 2 + 41 + 2 + 104 = 175, plus 9 separators.
    assert_eq!(ctx.cost, 184);
    // The head does not shift the window: with no head the same records are masked.
    let (_, no_head) = cell(
        "openhands_observation_masking(attention_window=3, keep_first=0)",
        &h,
        1000,
    );
    assert_eq!(no_head.items, ctx.items);
    // Call 4: records 0..=7, o1 masked and a1 not sent: 6 + 4 + 0 + 8 + 2 + 83 + 2 + 41 + 7 =
    // 153.
    let h8 = agent_history(3);
    let (_, ctx) = cell(
        "openhands_observation_masking(attention_window=3)",
        &h8,
        1000,
    );
    assert_eq!((ctx.items[2], ctx.items[3]), (P(2), P(3)));
    assert_eq!(ctx.cost, 153);
    // The default window (100 events) masks nothing of 10 events; 183 is infeasible.
    let (_, ctx) = cell("openhands_observation_masking", &h, 1000);
    assert_eq!(ctx.cost, h.total);
    assert_eq!(
        cell("openhands_observation_masking(attention_window=3)", &h, 183).0,
        Outcome::Infeasible
    );
}

#[test]
fn openhands_recent_keeps_the_head_the_task_and_the_newest_events() {
    // keep_first=1, max_events=4 (the research example): at call 5 (records 0..=9) OpenHands'
    // view is [0, 7, 8, 9] (the head and 4 − 1 = 3 newest), and its message layer re-inserts
    // the task (record 1) after the system prompt. o3 (7) answers a3, which was cut off: an
    // orphan OpenHands does not send (`_filter_unmatched_tool_calls`): [0, 1, 8, 9].
    let h = agent_history(4);
    let (o, ctx) = cell("openhands_recent(max_events=4)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, [V(0), V(1), V(8), V(9)]);
    assert_eq!(ctx.item_costs(&h.costs), [6, 4, 2, 104]);
    // 6 + 4 + 2 + 104 = 116, plus 3 separators.
    assert_eq!(ctx.cost, 119);
    // max_events=5: [0, 6, 7, 8, 9], the task re-inserted; a3 opens the tail, no orphan.
    let (_, ctx) = cell("openhands_recent(max_events=5)", &h, 1000);
    assert_eq!(ctx.items, [V(0), V(1), V(6), V(7), V(8), V(9)]);
    // With the head set to the system prompt and the task, max_events counts both: 4 − 2 = 2
    // newest. 6 + 4 + 2 + 104 + 3 = 119.
    let (_, ctx) = cell("openhands_recent(max_events=4, keep_first=task)", &h, 1000);
    assert_eq!(ctx.items, [V(0), V(1), V(8), V(9)]);
    assert_eq!(ctx.cost, 119);
    // The default (100 events) keeps all 10 records; a capacity under 119 is infeasible.
    assert_eq!(cell("openhands_recent", &h, 1000).1.cost, h.total);
    assert_eq!(
        cell("openhands_recent(max_events=4)", &h, 118).0,
        Outcome::Infeasible
    );
}

#[test]
fn openhands_amortized_cuts_to_half_its_size_once_over_it() {
    // max_size=6, keep_first=1 (the research example). 8 records > 6: target 6 // 2 = 3
    // events: the head (the system prompt) and events_from_tail = 3 − 1 = 2 newest (a3, o3)
    // (amortized_forgetting_condenser.py @ 76483ad8, `get_condensation`), the task OpenHands
    // re-inserts on top. 6 + 4 + 2 + 41 + 3 separators = 56.
    let h = agent_history(3);
    let (o, ctx) = cell("openhands_amortized(max_size=6)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, [V(0), V(1), V(6), V(7)]);
    assert_eq!(ctx.item_costs(&h.costs), [6, 4, 2, 41]);
    assert_eq!(ctx.cost, 56);
    // 6 records are not more than 6: kept whole (6 + 4 + 2 + 62 + 2 + 83 + 5 = 164).
    let (_, ctx) = cell("openhands_amortized(max_size=6)", &agent_history(2), 1000);
    assert_eq!(ctx.items.len(), 6);
    assert_eq!(ctx.cost, 164);
}

#[test]
fn openhands_amortized_in_a_session_cuts_when_over_max_size_and_calls_no_model() {
    // Six calls a1..a6 over the shared history. Before call k the context holds 2k entries
    // until the first cut: 4, 6 (not > 6), then 8 before call 4: cut to [0, 1, a3, o3] (56).
    // Calls 4 and 5 add a4, o4, a5, o5: 6 entries before call 5 (no cut), 8 before call 6: cut
    // to [0, 1, a5, o5] (6 + 4 + 2 + 20 + 3 = 35).
    let h = agent_history(6);
    let (m, t) = replay("openhands_amortized(max_size=6)", &h);
    assert_eq!(m.run.calls, 6);
    assert_eq!(m.run.model_calls, m.run.calls, "forgetting calls no model");
    let before: Vec<u32> = t.compactions.iter().map(|k| k.before_call).collect();
    assert_eq!(before, [4, 6]);
    // Inputs: records 0..=7 = 209; then [0, 1, a3, o3, a4, o4, a5, o5] = 6 + 4 + 2 + 41 + 2 +
    // 104 + 2 + 20 + 7 = 188.
    let input: Vec<u64> = t.compactions.iter().map(|k| k.input).collect();
    let after: Vec<u64> = t.compactions.iter().map(|k| k.context_after).collect();
    assert_eq!(input, [209, 188]);
    assert_eq!(after, [56, 35]);
    assert!(t.compactions.iter().all(|k| !k.model_call && !k.fruitless));
    // The system prompt and the task survive: the run's only required record is the task.
    let mut records = agent_records(6);
    let task = records.remove(1).required(true);
    records.insert(1, task);
    let (m, _) = replay("openhands_amortized(max_size=6)", &costed(records));
    assert_eq!(m.retention.retention_end, Some(1.0));
}

/// The research notes' Anthropic example: 0 system (100), 1 task (50), then tool uses
/// (tool_call, 20) and their results of the given sizes.
fn tool_history(results: &[usize]) -> CostedHistory {
    let mut records = vec![record(0, S, chars(100)), record(1, U, chars(50))];
    for (k, &r) in results.iter().enumerate() {
        records.push(record(2 + 2 * k, C, chars(20)));
        records.push(record(3 + 2 * k, T, chars(r)));
    }
    costed(records)
}

/// "[cleared to save context]"
const CLEARED: u64 = 25;

#[test]
fn anthropic_clear_tool_uses_clears_the_oldest_results_once_over_the_trigger() {
    let spec = "anthropic_clear_tool_uses(trigger=1000, keep=2)";
    // After R2 (records 0..=5): 100 + 50 + 2 × 320 = 790, plus 5 separators = 795 ≤ 1000.
    let (_, ctx) = cell(spec, &tool_history(&[300, 300]), 2000);
    assert_eq!(ctx.cost, 795);
    assert!(ctx.items.iter().all(|i| matches!(i, V(_))));
    // After R3: 1110 + 7 = 1117 > 1000: three pairs, the newest two kept, R1 cleared.
    let h = tool_history(&[300, 300, 300]);
    assert_eq!(h.total, 1117);
    let (o, ctx) = cell(spec, &h, 2000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items, [V(0), V(1), V(2), P(3), V(4), V(5), V(6), V(7)]);
    assert_eq!(
        ctx.item_costs(&h.costs),
        [100, 50, 20, CLEARED, 20, 300, 20, 300]
    );
    assert_eq!(ctx.cost, 1117 - 300 + CLEARED);
    // "Exceeds" is strict: a trigger of exactly 1117 leaves it alone.
    let (_, ctx) = cell("anthropic_clear_tool_uses(trigger=1117, keep=2)", &h, 2000);
    assert_eq!(ctx.cost, 1117);
    // After R4 (1439): R1 and R2 cleared: 1439 − 600 + 50 = 889.
    let h4 = tool_history(&[300, 300, 300, 300]);
    let (_, ctx) = cell(spec, &h4, 2000);
    assert_eq!(ctx.cost, 889);
    assert_eq!((ctx.items[3], ctx.items[5]), (P(3), P(5)));
    // clear_at_least=500 is a gate: after R3 only 300 − 25 = 275 can be cleared, so nothing is;
    // after R4, 2 × 275 = 550 ≥ 500, so both are.
    let gated = "anthropic_clear_tool_uses(trigger=1000, keep=2, clear_at_least=500)";
    assert_eq!(cell(gated, &h, 2000).1.cost, 1117);
    assert_eq!(cell(gated, &h4, 2000).1.cost, 889);
    // clear_tool_inputs: T1's input goes too (20 → 25): 842 − 20 + 25 = 847.
    let inputs = "anthropic_clear_tool_uses(trigger=1000, keep=2, clear_tool_inputs=true)";
    let (_, ctx) = cell(inputs, &h, 2000);
    assert_eq!((ctx.items[2], ctx.items[3]), (P(2), P(3)));
    assert_eq!(ctx.cost, 847);
    // Never drops: over the capacity it is infeasible.
    assert_eq!(cell(spec, &h, 841).0, Outcome::Infeasible);
}

#[test]
fn anthropic_clear_tool_uses_in_a_session_keeps_clearing_as_the_full_history_grows() {
    // Results of 300, 300, 300, 50, 50; five calls (the tool uses T1..T5).
    // Before call 2: 473; call 3: 795 (under 1000, nothing); call 4: 1117 > 1000 → R1
    // cleared: 842. Before call 5 the context sent is 842 + 20 + 50 + 2 = 914, under 1000,
    // but the full history the client sends is 1117 + 72 = 1189 > 1000: the API clears R2
    // too (R3, R4 are the newest two), 914 − 300 + 25 = 639.
    let h = tool_history(&[300, 300, 300, 50, 50]);
    let (m, t) = replay("anthropic_clear_tool_uses(trigger=1000, keep=2)", &h);
    assert_eq!(m.run.calls, 5);
    assert_eq!(m.run.model_calls, m.run.calls, "clearing calls no model");
    let input: Vec<u64> = t.compactions.iter().map(|k| k.input).collect();
    let after: Vec<u64> = t.compactions.iter().map(|k| k.context_after).collect();
    // Before calls 2 and 3 nothing is cleared, so no compaction is counted there.
    assert_eq!(input, [1117, 914]);
    assert_eq!(after, [842, 639]);
    assert_eq!(t.calls[4].input, 639);
    // The last result joins: 639 + 20 + 50 + 2.
    assert_eq!(m.run.final_context, 711);
}

#[test]
fn presets_carry_their_harness_trigger_and_head() {
    use ctxlab::strategy::{Head, When};
    let cases = [
        ("swe_agent_last_n", When::EveryCall, Head::Task),
        ("openhands_observation_masking", When::EveryCall, Head::Task),
        ("openhands_recent", When::EveryCall, Head::First(1)),
        ("openhands_amortized", When::Events(100), Head::First(1)),
        (
            "openhands_amortized(max_size=120)",
            When::Events(120),
            Head::First(1),
        ),
        // Measured on the full history the client sends, so decided by the rule every call.
        ("anthropic_clear_tool_uses", When::EveryCall, Head::Task),
    ];
    for (spec, when, head) in cases {
        let s = Strategy::parse(spec).unwrap();
        assert_eq!((s.when(), s.head()), (Some(when), head), "{spec}");
    }
}
