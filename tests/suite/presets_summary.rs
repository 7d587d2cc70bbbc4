//! The summarising presets, each on a small history worked by hand from its source:
//! `openhands_llm_summarizing`, `codex_compact`, `claude_code_compact`, `gemini_cli_compress`,
//! `complexity_trap_summary`, `complexity_trap_hybrid`. Records are `x` repeated, under the chars
//! cost model: a record costs its length and each gap between two records costs 1.

use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate_with, SessionConfig, SessionScratch, Trace};
use ctxlab::strategy::{Context, Item, Outcome, View, When};
use ctxlab::{CostModel, Strategy};

use Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};

/// Records of the given kinds and lengths (chars), required where `req` says so.
fn history(spec: &[(Kind, usize, bool)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len, req))| {
            let mut r = Record::new(i as u64 + 1, "x".repeat(len))
                .kind(kind)
                .required(req);
            if matches!(kind, C | T) {
                r = r.tool("bash");
            }
            r
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// The context a preset builds for the whole history under `capacity`; the flags are the truth.
fn cell(spec: &str, h: &CostedHistory, capacity: u64) -> (Outcome, Context) {
    let s = Strategy::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert!(s.summariser().is_some(), "{spec} summarises");
    let mut ctx = Context::default();
    let keep = s.effective_keep_recent(None);
    let o = s.apply(View::new(h, &h.truth), capacity, keep, 7, &mut ctx);
    (o, ctx)
}

fn verbatim(range: std::ops::Range<usize>) -> Vec<Item> {
    range.map(Item::Verbatim).collect()
}

fn replay(h: &CostedHistory, spec: &str, window: u64) -> (ctxlab::session::SessionMetrics, Trace) {
    let s = Strategy::parse(spec).unwrap();
    let cfg = SessionConfig {
        window,
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

/// (before_call, input, output, model_call, context_after) of each compaction.
fn compactions(t: &Trace) -> Vec<(u32, u64, u64, bool, u64)> {
    t.compactions
        .iter()
        .map(|k| {
            (
                k.before_call,
                k.input,
                k.output,
                k.model_call,
                k.context_after,
            )
        })
        .collect()
}

// ---------------------------------------------------------------- OpenHands

/// The system prompt (10), the task (20), then `turns` calls: an action (5) and its
/// observation (30) each — the research's shared event list.
fn openhands_events(turns: usize) -> CostedHistory {
    let mut spec = vec![(S, 10, false), (U, 20, true)];
    for _ in 0..turns {
        spec.push((A, 5, false));
        spec.push((T, 30, false));
    }
    history(&spec)
}

#[test]
fn openhands_llm_summarizing_halves_the_view_after_the_head() {
    let s = Strategy::parse("openhands_llm_summarizing(max_size=8)").unwrap();
    assert_eq!(s.when(), Some(When::Events(8)));
    // Ten events (system, task, four actions with their observations) > 8: target 8 // 2 = 4,
    // head [0] (keep_first=1); the task (1) is what OpenHands' message layer re-inserts, kept
    // verbatim and counted towards the target: events_from_tail 4 − 1 − 1 (the task) − 1 (the
    // summary) = 1: [9] stays, 2..=8 become one summary after the task. It replaces
    // 4 × 5 + 3 × 30 + 6 gaps = 116: ceil(11.6) = 12.
    let h = openhands_events(4);
    let (o, ctx) = cell("openhands_llm_summarizing(max_size=8)", &h, 100);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 2,
        end: 9,
        cost: 12,
    };
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Verbatim(1),
            summary,
            Item::Verbatim(9)
        ]
    );
    assert_eq!(ctx.item_costs(&h.costs), [10, 20, 12, 30]);
    // 10 + 20 + 12 + 30 + 3 gaps.
    assert_eq!(ctx.cost, 75);
    // The task (required) is kept verbatim, not summarised: whatever the recall, the summary
    // carries none of the head's records.
    let (_, ctx) = cell(
        "openhands_llm_summarizing(max_size=8, recall_flagged=1, recall_other=0)",
        &h,
        100,
    );
    assert!(!ctx.summary_kept[..2].iter().any(|&k| k));
    // A harness holding 75 does not fit 74: infeasible.
    assert_eq!(
        cell("openhands_llm_summarizing(max_size=8)", &h, 74).0,
        Outcome::Infeasible
    );
    // Eight events are not more than 8: unchanged (30 + 3 × 35 + 7 gaps = 142).
    let h = openhands_events(3);
    let (o, ctx) = cell("openhands_llm_summarizing(max_size=8)", &h, 142);
    assert_eq!(
        (o, ctx.items.clone(), ctx.cost),
        (Outcome::Feasible, verbatim(0..8), 142)
    );
    assert_eq!(
        cell("openhands_llm_summarizing(max_size=8)", &h, 141).0,
        Outcome::Infeasible
    );
}

#[test]
fn openhands_llm_summarizing_in_a_session_condenses_at_the_ninth_event_and_chains() {
    // Before call k the context holds 2k events. Before call 5 it holds 10 > 8: [0, 1, S1, o4]
    // (the task kept, one tail event). Then a5, o5, a6, o6, a7, o7 make 10 again before call 8:
    // the previous summary and a5..a7 become S2: [0, 1, S2, o7].
    let h = openhands_events(8);
    let (m, t) = replay(
        &h,
        "openhands_llm_summarizing(max_size=8, summary_size=10)",
        10_000,
    );
    // Inputs: call 1 [0, 1] = 31; each turn adds 5 + 30 + 2 gaps = 37: 68, 105, 142; before
    // call 5 the context is 179 (one model call: input 179, output the summary, 10), after it
    // 10 + 20 + 10 + 30 + 3 = 73. Calls 5, 6, 7: 73, 110, 147; before call 8: 184, after 73.
    assert_eq!(
        compactions(&t),
        [(5, 179, 10, true, 73), (8, 184, 10, true, 73)]
    );
    assert!(t
        .compactions
        .iter()
        .all(|k| k.capacity == 10_000 && !k.fruitless));
    let inputs: Vec<u64> = t.calls.iter().map(|c| c.input).collect();
    assert_eq!(inputs, [31, 68, 105, 142, 73, 110, 147, 73]);
    // Eight agent calls and two summaries, each billed with its input and output:
    // 749 + 179 + 184 in, 8 × 5 + 2 × 10 out.
    assert_eq!(
        (m.calls, m.compactions, m.summary_calls, m.model_calls),
        (8, 2, 2, 10)
    );
    assert_eq!((m.input_tokens, m.output_tokens), (1112, 60));
}

// ---------------------------------------------------------------- Codex

/// The research's Codex example in chars: the initial context (200), the task U1 (40 chars:
/// 10 tokens), A1 (40), a tool call (10), its output (500, required), U2 (9 chars: 3 tokens,
/// required), A2 (60), U3 (25 chars: 7 tokens), A3 (30). 914 + 8 gaps = 922.
fn codex_history() -> CostedHistory {
    history(&[
        (S, 200, false),
        (U, 40, false),
        (A, 40, false),
        (C, 10, false),
        (T, 500, true),
        (U, 9, true),
        (A, 60, false),
        (U, 25, false),
        (A, 30, false),
    ])
}

#[test]
fn codex_compact_keeps_the_initial_context_the_newest_user_messages_and_one_summary_last() {
    let h = codex_history();
    let s = Strategy::parse("codex_compact").unwrap();
    assert_eq!(s.when(), Some(When::Share(0.9)));
    // Window 1000: 922 ≥ 900 compacts. User messages newest first within 10 tokens: U3 (7,
    // 3 left), U2 (3, 0 left), then the budget is spent: U1 goes into the summary. The summary
    // replaces U1, A1, the call, its output, A2, A3: 680 + 5 gaps = 685 → ceil(68.5) = 69.
    let spec = "codex_compact(user_tokens=10, recall_flagged=1, recall_other=0)";
    let (o, ctx) = cell(spec, &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 1,
        end: 9,
        cost: 69,
    };
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Verbatim(5),
            Item::Verbatim(7),
            summary
        ]
    );
    assert_eq!(ctx.item_costs(&h.costs), [200, 9, 25, 69]);
    assert_eq!(ctx.cost, 200 + 9 + 25 + 69 + 3);
    // The summary carries the tool output (required, recall 1), not U2, which is verbatim.
    let carried: Vec<usize> = (0..9).filter(|&i| ctx.summary_kept[i]).collect();
    assert_eq!(carried, [4]);
    // Budget 12: U3 (5 left), U2 (2 left), U1 (10 > 2) does not fit — Codex would truncate it,
    // here it is dropped into the summary — and the selection stops: the same context.
    let (_, twelve) = cell("codex_compact(user_tokens=12)", &h, 1000);
    assert_eq!(twelve.items, ctx.items);
    // With the default 20 000 every user message fits: U1 is kept, the summary replaces
    // 640 + 4 gaps = 644 → 65.
    let (_, all) = cell("codex_compact", &h, 1000);
    let summary = Item::Summary {
        first: 1,
        end: 9,
        cost: 65,
    };
    assert_eq!(
        all.items,
        [
            Item::Verbatim(0),
            Item::Verbatim(1),
            Item::Verbatim(5),
            Item::Verbatim(7),
            summary
        ]
    );
    // Window 1100: 922 < 990, no compaction; the history fits whole.
    let (o, ctx) = cell("codex_compact", &h, 1100);
    assert_eq!((o, ctx.items), (Outcome::Feasible, verbatim(0..9)));
    // A lower threshold compacts earlier: at 0.5 of 1100 (550).
    let (_, ctx) = cell("codex_compact(threshold=0.5)", &h, 1100);
    assert_eq!(ctx.items.len(), 5);
}

// ---------------------------------------------------------------- Claude Code

/// The research's Claude Code example: system 50, U1 50, A1 100, T1 300, U2 30, A2 200:
/// 730 + 5 gaps = 735.
fn claude_history() -> CostedHistory {
    history(&[
        (S, 50, false),
        (U, 50, true),
        (A, 100, false),
        (T, 300, false),
        (U, 30, false),
        (A, 200, false),
    ])
}

#[test]
fn claude_code_compact_keeps_the_system_prompt_and_one_summary() {
    let h = claude_history();
    // trigger_tokens=670 (window 1000 − max_out 200 − buffer 130): 735 ≥ 670 compacts. The
    // summary replaces U1..A2, 680 + 4 gaps = 684 → ceil(68.4) = 69; U2 is not kept verbatim.
    let s = Strategy::parse("claude_code_compact(trigger_tokens=670)").unwrap();
    assert_eq!(s.when(), Some(When::Tokens(670)));
    let (o, ctx) = cell("claude_code_compact(trigger_tokens=670)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 1,
        end: 6,
        cost: 69,
    };
    assert_eq!(ctx.items, [Item::Verbatim(0), summary]);
    assert_eq!((ctx.item_costs(&h.costs), ctx.cost), (vec![50, 69], 120));
    // The default share: 0.835 of 1000 = 835 > 735, nothing happens; of 800, 668 ≤ 735.
    assert_eq!(
        Strategy::parse("claude_code_compact").unwrap().when(),
        Some(When::Share(0.835))
    );
    let (_, ctx) = cell("claude_code_compact", &h, 1000);
    assert_eq!(ctx.items, verbatim(0..6));
    let (o, ctx) = cell("claude_code_compact", &h, 800);
    assert_eq!((o, ctx.items[1]), (Outcome::Feasible, summary));
    // keep_first=task keeps the task too: the summary replaces 630 + 3 gaps = 633 → 64;
    // 50 + 50 + 64 + 2 gaps = 166.
    let (_, ctx) = cell("claude_code_compact(keep_first=task)", &h, 800);
    let summary = Item::Summary {
        first: 2,
        end: 6,
        cost: 64,
    };
    assert_eq!(ctx.items, [Item::Verbatim(0), Item::Verbatim(1), summary]);
    assert_eq!(ctx.cost, 166);
    // A summary that cannot fit: infeasible (summary_size=500 of a 400 window, trigger 334).
    assert_eq!(
        cell("claude_code_compact(summary_size=500)", &h, 400).0,
        Outcome::Infeasible
    );
}

// ---------------------------------------------------------------- Gemini CLI

/// The system instruction (20), the task U1 (100), A (50), a tool output (500), A (150), U2
/// (10), A (10), a tool output (300), A (10): 1150 + 8 gaps = 1158.
fn gemini_history() -> CostedHistory {
    history(&[
        (S, 20, false),
        (U, 100, false),
        (A, 50, false),
        (T, 500, false),
        (A, 150, false),
        (U, 10, false),
        (A, 10, false),
        (T, 300, true),
        (A, 10, false),
    ])
}

#[test]
fn gemini_cli_compress_truncates_old_tool_outputs_then_summarises_before_the_split() {
    let h = gemini_history();
    let spec = "gemini_cli_compress(tool_budget=200, truncate_chars=40)";
    // Window 2000: 1158 ≥ 1000 compresses. T = min(40, 4 × (2000 − 1158)) = 40 characters.
    // Truncation, newest first: the 300 output takes the counter over 200 (0 + 300), so it is
    // cut to 40 chars under a 98-char header ("Output too large. Showing the first 8 and last
    // 32 characters; the full output was saved to a file."): 98 + ceil(300 × 40 / 300) = 138,
    // counter 138; the 500 output (138 + 500 > 200) likewise: 138.
    // Split over sizes 100, 50, 138, 150, 10, 10, 138, 10 (606): target 0.7 × 606 = 424.2;
    // U1 at 0 is before it, U2 at 100 + 50 + 138 + 150 = 438 ≥ 424.2: split at U2 (record 5).
    // The summary reads the untruncated U1..A (100 + 50 + 500 + 150 + 3 gaps = 803 < 2000):
    // ceil(80.3) = 81. New context 20 + 81 + 10 + 10 + 138 + 10 + 5 gaps = 274 ≤ 1158: kept.
    let (o, ctx) = cell(spec, &h, 2000);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 1,
        end: 5,
        cost: 81,
    };
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            summary,
            Item::Verbatim(5),
            Item::Verbatim(6),
            Item::Placeholder(7),
            Item::Verbatim(8)
        ]
    );
    assert_eq!(ctx.item_costs(&h.costs), [20, 81, 10, 10, 138, 10]);
    assert_eq!(ctx.cost, 274);
    // A compression that would grow the context (a summary of 2000) is rejected: unchanged,
    // truncation included.
    let (o, ctx) = cell(
        "gemini_cli_compress(tool_budget=200, truncate_chars=40, summary_size=2000)",
        &h,
        2000,
    );
    assert_eq!(
        (o, ctx.items, ctx.cost),
        (Outcome::Feasible, verbatim(0..9), 1158)
    );
    // Under the threshold (0.5 of 2400 = 1200 > 1158) nothing happens.
    let (_, ctx) = cell(spec, &h, 2400);
    assert_eq!(ctx.items, verbatim(0..9));
    // With the defaults (budget 50 000) nothing is truncated: sizes 100, 50, 500, 150, 10,
    // 10, 300, 10 (1130), target 791: U2 at 800 is the split; the summary is the same 81.
    let (_, ctx) = cell("gemini_cli_compress", &h, 2000);
    assert_eq!(ctx.items[1], summary);
    assert_eq!(ctx.items[4], Item::Verbatim(7));
    assert_eq!(ctx.cost, 20 + 81 + 10 + 10 + 300 + 10 + 5);
}

// ---------------------------------------------------------------- the Complexity Trap

/// The system prompt (10), the task (10), then `turns` turns: an action (5) and its
/// observation (20).
fn swe_turns(turns: usize) -> CostedHistory {
    let mut spec = vec![(S, 10, false), (U, 10, true)];
    for _ in 0..turns {
        spec.push((A, 5, false));
        spec.push((T, 20, false));
    }
    history(&spec)
}

#[test]
fn complexity_trap_summary_summarises_n_turns_when_n_plus_m_pile_up() {
    let spec = "complexity_trap_summary(n=2, m=1)";
    assert_eq!(Strategy::parse(spec).unwrap().when(), Some(When::EveryCall));
    // The research's example (n=2, m=1). After t4: four turns ≥ 3, the oldest two (records
    // 2..6) become S1 and two remain (< 3): [sys, task, S1, a3, o3, a4, o4]. S1 replaces
    // 2 × 25 + 3 gaps = 53 → ceil(5.3) = 6.
    let (o, ctx) = cell(spec, &swe_turns(4), 1000);
    assert_eq!(o, Outcome::Feasible);
    let mut want = verbatim(0..2);
    want.push(Item::Summary {
        first: 2,
        end: 6,
        cost: 6,
    });
    want.extend(verbatim(6..10));
    assert_eq!(ctx.items, want);
    // After t5 the rule has fired twice (5 → 3 → 1 unprocessed): t1..t4 are in the checkpoint,
    // 4 × 25 + 7 gaps = 107 → 11: [sys, task, S2, a5, o5], 10 + 10 + 11 + 5 + 20 + 4 = 60.
    let (_, ctx) = cell(spec, &swe_turns(5), 1000);
    let mut want = verbatim(0..2);
    want.push(Item::Summary {
        first: 2,
        end: 10,
        cost: 11,
    });
    want.extend(verbatim(10..12));
    assert_eq!((ctx.items, ctx.cost), (want, 60));
    // After t2: two turns, nothing to do.
    let (_, ctx) = cell(spec, &swe_turns(2), 1000);
    assert_eq!(ctx.items, verbatim(0..6));
}

#[test]
fn complexity_trap_summary_in_a_session_checks_every_call_and_calls_a_model_at_the_trigger() {
    // n=2, m=1, summaries of 8. Before call k the context holds the turns since the last
    // checkpoint: before call 4, t1..t3 (3 ≥ 3): [sys, task, S1, a3, o3]; before call 6,
    // t3..t5: S1, t3, t4 become S2: [sys, task, S2, a5, o5]. Before calls 2, 3 and 5 the rule
    // changes nothing: a per-call view that leaves the context as it is is no compaction.
    let h = swe_turns(6);
    let (m, t) = replay(
        &h,
        "complexity_trap_summary(n=2, m=1, summary_size=8)",
        10_000,
    );
    // Inputs: 21, then + 5 + 20 + 2 gaps = 27 a turn: 48, 75; before call 4: 102, after
    // 10 + 10 + 8 + 5 + 20 + 4 = 57; call 5: 84; before call 6: 111, after 57.
    assert_eq!(
        compactions(&t),
        [(4, 102, 8, true, 57), (6, 111, 8, true, 57)]
    );
    let inputs: Vec<u64> = t.calls.iter().map(|c| c.input).collect();
    assert_eq!(inputs, [21, 48, 75, 57, 84, 57]);
    // Six agent calls and two checkpoints, each one model call billed with its input and its
    // output: 342 + 102 + 111 in, 6 × 5 + 2 × 8 out.
    assert_eq!(
        (m.calls, m.compactions, m.summary_calls, m.model_calls),
        (6, 2, 2, 8)
    );
    assert_eq!((m.input_tokens, m.output_tokens), (555, 46));
    assert_eq!(m.storms, 0);
}

#[test]
fn complexity_trap_hybrid_masks_old_observations_after_the_summary() {
    // n=2, m=1 after t4: [sys, task, S1, a3, o3, a4, o4], then last_n=1 masks o3:
    // "Old environment output: (1 lines omitted)" is 41 chars.
    let h = swe_turns(4);
    let (o, ctx) = cell("complexity_trap_hybrid(n=2, m=1, last_n=1)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    let mut want = verbatim(0..2);
    want.push(Item::Summary {
        first: 2,
        end: 6,
        cost: 6,
    });
    want.extend([
        Item::Verbatim(6),
        Item::Placeholder(7),
        Item::Verbatim(8),
        Item::Verbatim(9),
    ]);
    assert_eq!(ctx.items, want);
    assert_eq!(ctx.item_costs(&h.costs), [10, 10, 6, 5, 41, 5, 20]);
    // Before the summary fires, masking alone: with the defaults (n=21, m=10, last_n=10) and
    // eleven turns the oldest observation is masked, the newest ten stay.
    let (_, ctx) = cell("complexity_trap_hybrid", &swe_turns(11), 10_000);
    assert_eq!(ctx.items[3], Item::Placeholder(3));
    assert_eq!(
        ctx.items
            .iter()
            .filter(|i| matches!(i, Item::Placeholder(_)))
            .count(),
        1
    );
    // Masked once, masked the same way again: re-applying to its own result changes nothing
    // in a session (the stand-in keeps its cost), so every call's context equals the rule
    // applied to the full history.
    let h = swe_turns(5);
    let (m, t) = replay(&h, "complexity_trap_hybrid(n=10, m=10, last_n=1)", 10_000);
    // Before call k ≥ 2, o1..o(k−2) are stand-ins of 41: o(k−1) stays. Call 5's input:
    // 10 + 10 + 3 × (5 + 41) + 5 + 20 + 9 gaps = 192.
    assert_eq!(t.calls[4].input, 192);
    assert_eq!((m.summary_calls, m.model_calls), (0, 5));
}
