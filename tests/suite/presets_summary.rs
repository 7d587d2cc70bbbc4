//! The summarising presets, each on a small history worked by hand from its source:
//! `openhands_llm_summarizing`, `codex_compact`, `claude_code_compact`, `gemini_cli_compress`,
//! `complexity_trap_summary`, `complexity_trap_hybrid`. Records are `x` repeated, under the chars
//! cost model: a record costs its length and each gap between two records costs 1.

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate_with, SessionConfig, SessionScratch, Trace};
use ctxlab::strategy::When;
use ctxlab::view::View;
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
    // head [0] (keep_first=1); events_from_tail = target − len(head) − 1 = 2
    // (llm_summarizing_condenser.py @ 76483ad8, L54–57): [8, 9] stay; the task (1) is what
    // OpenHands' message layer re-inserts, sent on top; 2..=7 become one summary after it. It
    // replaces 3 × 5 + 3 × 30 + 5 gaps = 110: ceil(11.0) = 11.
    let h = openhands_events(4);
    let (o, ctx) = cell("openhands_llm_summarizing(max_size=8)", &h, 100);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 2,
        end: 8,
        cost: 11,
    };
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Verbatim(1),
            summary,
            Item::Verbatim(8),
            Item::Verbatim(9)
        ]
    );
    assert_eq!(ctx.item_costs(&h.costs), [10, 20, 11, 5, 30]);
    // 10 + 20 + 11 + 5 + 30 + 4 gaps.
    assert_eq!(ctx.cost, 80);
    // The task (required) is kept verbatim, not summarised: whatever the recall, the summary
    // carries none of the head's records.
    let (_, ctx) = cell(
        "openhands_llm_summarizing(max_size=8, recall_flagged=1, recall_other=0)",
        &h,
        100,
    );
    assert!(!ctx.summary_kept[..2].iter().any(|&k| k));
    // A harness holding 80 does not fit 79: infeasible.
    assert_eq!(
        cell("openhands_llm_summarizing(max_size=8)", &h, 79).0,
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
    // Before call k the context holds 2k events. Before call 5 it holds 10 > 8: [0, 1, S1, a4,
    // o4] (the task re-inserted, two tail events). Then a5, o5, a6, o6 make 9 before call 7:
    // the previous summary, a4..o5 become S2: [0, 1, S2, a6, o6].
    let h = openhands_events(8);
    let (m, t) = replay(
        &h,
        "openhands_llm_summarizing(max_size=8, summary_size=10)",
        10_000,
    );
    // Inputs: call 1 [0, 1] = 31; each turn adds 5 + 30 + 2 gaps = 37: 68, 105, 142; before
    // call 5 the context is 179, after it 10 + 20 + 10 + 5 + 30 + 4 = 79. Calls 5, 6: 79, 116;
    // before call 7: 153, after 79; calls 7, 8: 79, 116.
    assert_eq!(
        compactions(&t),
        [(5, 179, 10, true, 79), (7, 153, 10, true, 79)]
    );
    assert!(t
        .compactions
        .iter()
        .all(|k| k.capacity == 10_000 && !k.fruitless));
    let inputs: Vec<u64> = t.calls.iter().map(|c| c.input).collect();
    assert_eq!(inputs, [31, 68, 105, 142, 79, 116, 79, 116]);
    // The summary call is OpenHands' own prompt, not the agent's context (from_config,
    // L160–169, caching off): its 520-token instruction and the forgotten events, a1..o3 =
    // 110 the first time (630), S1, a4..o5 = 10 + 5 + 30 + 5 + 30 + 4 gaps = 84 the second
    // (604). Agent calls 736 in; 8 × 5 + 2 × 10 out.
    assert_eq!(
        (
            m.run.calls,
            m.run.compactions,
            m.run.summary_calls,
            m.run.model_calls
        ),
        (8, 2, 2, 10)
    );
    assert_eq!(
        (m.bill.input_tokens, m.bill.output_tokens),
        (736 + 630 + 604, 60)
    );
    assert_eq!(m.bill.cache_read_tokens, 0);
}

/// OpenHands' controller turns a context-window error into a condensation request
/// (`agent_controller.py`, `_react_to_exception`; `enable_history_truncation` defaults to on)
/// and `should_condense` honours it (`len(view) > max_size or
/// view.unhandled_condensation_request`, llm_summarizing_condenser.py L154–155): a call the
/// window refuses is condensed at once and sent again, instead of ending the run.
#[test]
fn openhands_condensers_condense_on_a_context_window_error_and_go_on() {
    let h = openhands_events(8);
    // Window 150, max_size=12 (target 6, events_from_tail 4): before call 5 the context is 179
    // in 10 events, under the event trigger, but 179 + 5 > 150 is refused. The request
    // condenses a1..o2 (73 → 10): [0, 1, S1, a3, o3, a4, o4] = 116, and call 5 goes through;
    // so again before call 6 (153 + 5 > 150), and the run completes.
    let (m, t) = replay(
        &h,
        "openhands_llm_summarizing(max_size=12, summary_size=10)",
        150,
    );
    assert!(m.run.completed, "the run goes on after the condensation");
    assert_eq!(compactions(&t)[0], (5, 179, 10, true, 116));
    assert_eq!(t.calls[4].input, 116);
    // max_size=100: events_from_tail 48 covers every event after the head and the task, so
    // there is nothing to forget (OpenHands' `min()` of no ids would raise): the run ends at
    // call 5 as before.
    let (m, _) = replay(
        &h,
        "openhands_llm_summarizing(max_size=100, summary_size=10)",
        150,
    );
    assert_eq!(
        (m.run.completed, m.run.exit_call, m.run.summary_calls),
        (false, Some(5), 0)
    );
    // The amortized condenser honours it too: before call 5, cut to the head and the newest 5
    // events, less the orphaned observation o2 that opens them: [0, 1, a3, o3, a4, o4] = 105.
    let (m, t) = replay(&h, "openhands_amortized(max_size=12)", 150);
    assert!(m.run.completed);
    assert_eq!(compactions(&t)[0], (5, 179, 0, false, 105));
    // Masking (a per-call view, no `should_condense`) does not: the run ends.
    let (m, _) = replay(
        &h,
        "openhands_observation_masking(attention_window=100)",
        150,
    );
    assert_eq!(m.run.exit_call, Some(5));
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
    assert_eq!(s.when(), Some(When::LastCall(0.9)));
    // Window 1000: the last call's usage (everything up to A3, the last record) 922 ≥ 900
    // compacts. User messages newest first within 10 tokens: U3 (7,
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
    // Budget 12: U3 (5 left), U2 (2 left), U1 (10 > 2) does not fit: Codex keeps it
    // middle-truncated to the 2 tokens left (`build_compacted_history_with_limit`, compact.rs
    // @ 0100b103: `truncate_text(message, TruncationPolicy::Tokens(remaining))`) and stops. Its
    // stand-in: ceil(40 × 2 / 10) = 8 and the marker `…8 tokens truncated…` (20 chars) = 28;
    // the summary still stands for it (69 as above).
    let (_, twelve) = cell("codex_compact(user_tokens=12)", &h, 1000);
    assert_eq!(
        twelve.items,
        [
            Item::Verbatim(0),
            Item::Placeholder(1),
            Item::Verbatim(5),
            Item::Verbatim(7),
            summary
        ]
    );
    assert_eq!(twelve.item_costs(&h.costs), [200, 28, 9, 25, 69]);
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
    // trigger_tokens=670: 735 ≥ 670 compacts. The summary replaces U1..A2, 680 + 4 gaps = 684;
    // Claude Code's size, 4.2 % of it: ceil(28.728) = 29; U2 is not kept verbatim.
    let s = Strategy::parse("claude_code_compact(trigger_tokens=670)").unwrap();
    assert_eq!(s.when(), Some(When::Tokens(670)));
    let (o, ctx) = cell("claude_code_compact(trigger_tokens=670)", &h, 1000);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 1,
        end: 6,
        cost: 29,
    };
    assert_eq!(ctx.items, [Item::Verbatim(0), summary]);
    assert_eq!((ctx.item_costs(&h.costs), ctx.cost), (vec![50, 29], 80));
    // The formula, window − min(max_output, 20 000) − 13 000, with reserves scaled down: on a
    // window of 1000 less 200 + 130 = 670 ≤ 735 compacts as above; on 1100, 770 > 735 does not.
    let scaled = "claude_code_compact(output_reserve=200, buffer=130)";
    assert_eq!(
        Strategy::parse(scaled).unwrap().when(),
        Some(When::Below(330))
    );
    assert_eq!(cell(scaled, &h, 1000).1.items, [Item::Verbatim(0), summary]);
    assert_eq!(cell(scaled, &h, 1100).1.items, verbatim(0..6));
    // An explicit share (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE): 0.835 of 800 = 668 ≤ 735.
    let (o, ctx) = cell("claude_code_compact(threshold=0.835)", &h, 800);
    assert_eq!((o, ctx.items[1]), (Outcome::Feasible, summary));
    // keep_first=task keeps the task too: the summary replaces 630 + 3 gaps = 633 → 27
    // (ceil(26.586)); 50 + 50 + 27 + 2 gaps = 129.
    let (_, ctx) = cell(
        "claude_code_compact(threshold=0.835, keep_first=task)",
        &h,
        800,
    );
    let summary = Item::Summary {
        first: 2,
        end: 6,
        cost: 27,
    };
    assert_eq!(ctx.items, [Item::Verbatim(0), Item::Verbatim(1), summary]);
    assert_eq!(ctx.cost, 129);
    // A summary that cannot fit: infeasible (summary_size=500 of a 400 window, trigger 334).
    assert_eq!(
        cell(
            "claude_code_compact(threshold=0.835, summary_size=500)",
            &h,
            400
        )
        .0,
        Outcome::Infeasible
    );
}

/// Claude Code's threshold (anthropics/claude-code#31806): `window − min(max_output, 20 000) −
/// 13 000`, so its default is undefined on a window of at most 33 000: a session refuses it
/// naming the smallest window, and a cell there is infeasible, not compacted at a share.
#[test]
fn claude_code_compact_refuses_a_window_its_formula_leaves_no_room_in() {
    let s = Strategy::parse("claude_code_compact").unwrap();
    assert_eq!(s.when(), Some(When::Below(33_000)));
    let err = s.check_window(33_000).unwrap_err();
    assert_eq!(
        err,
        "strategy `claude_code_compact`: Claude Code's auto-compact threshold, the window less \
         33000 (the output reserved for the summary and the auto-compact buffer), is not \
         positive on a window of 33000: the smallest window it is defined on is 33001"
    );
    assert_eq!(s.check_window(33_001), Ok(()));
    assert_eq!(s.check_window(200_000), Ok(()));
    // 200 000 − 33 000 = 167 000, the reported trigger.
    assert_eq!(
        cell("claude_code_compact", &claude_history(), 1000).0,
        Outcome::Infeasible
    );
    // A share or a count given instead is defined on any window.
    for spec in [
        "claude_code_compact(threshold=0.835)",
        "claude_code_compact(trigger_tokens=10)",
    ] {
        assert_eq!(Strategy::parse(spec).unwrap().check_window(1000), Ok(()));
    }
}

/// The refusal reaches the user as one error naming the flag or key, before anything is read
/// or written.
#[test]
fn claude_code_compact_on_a_small_window_is_one_clear_error() {
    use crate::common::{assert_fails_with, ctxlab};
    let dir = tempfile::tempdir().unwrap();
    let o = ctxlab(
        dir.path(),
        &[
            "session",
            "absent.jsonl",
            "--strategy",
            "claude_code_compact",
            "--window",
            "32000",
            "--ratio",
            "0.8",
        ],
    );
    assert_fails_with(
        &o,
        &[
            "--window 32000",
            "the smallest window it is defined on is 33001",
        ],
    );
    std::fs::write(dir.path().join("h.jsonl"), "").unwrap();
    let exp = "name = \"t\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\n[session]\n\
               strategies = [\"raw\", \"claude_code_compact\"]\nwindows = [200000, 32000]\nratios = [0.8]\n\
               [output]\ndir = \"out\"\n";
    std::fs::write(dir.path().join("t.toml"), exp).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "t.toml", "-q"]);
    assert_fails_with(
        &o,
        &[
            "session.windows[1]",
            "claude_code_compact",
            "window of 32000",
            "33001",
        ],
    );
    assert!(!dir.path().join("out").exists(), "nothing written");
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
    // Split (`findCompressSplitPoint`, chatCompressionService.ts:60-100) over the environment
    // message (87) and sizes 100, 50, 138, 150, 10, 10, 138, 10: 693, target 0.7 × 693 = 485.1;
    // U1 at 87 is before it, U2 at 87 + 100 + 50 + 138 + 150 = 525 ≥ 485.1: split at U2.
    // The summary reads the environment message and the untruncated U1..A (87 + 1 + 803 = 891
    // < 2000): ceil(89.1) = 90, and stands with the acknowledgement (42 chars, line 438) for
    // 90 + 42 + 1 = 133. New history 133 + 10 + 10 + 138 + 10 + 4 gaps = 305 ≤ 1158 (line
    // 462): kept. The context, with the system instruction: 20 + 305 + 1 = 326.
    let (o, ctx) = cell(spec, &h, 2000);
    assert_eq!(o, Outcome::Feasible);
    let summary = Item::Summary {
        first: 1,
        end: 5,
        cost: 133,
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
    assert_eq!(ctx.item_costs(&h.costs), [20, 133, 10, 10, 138, 10]);
    assert_eq!(ctx.cost, 326);
    assert_eq!(
        ctx.call_report.summary_read_extra, 88,
        "the environment message and its gap"
    );
    assert_eq!(ctx.call_report.rejected_call, None);
    // A compression that would grow the context (a summary of 2000: 2043 + 168 + 4 = 2215 >
    // 1158) is rejected: unchanged, truncation included, and its calls (which read 891 and
    // wrote 2000) are to be billed.
    let (o, ctx) = cell(
        "gemini_cli_compress(tool_budget=200, truncate_chars=40, summary_size=2000)",
        &h,
        2000,
    );
    assert_eq!(
        (o, ctx.items, ctx.cost),
        (Outcome::Feasible, verbatim(0..9), 1158)
    );
    assert_eq!(ctx.call_report.rejected_call, Some((891, 2000)));
    assert!(ctx.call_report.compression_failed);
    // Under the threshold (0.5 of 2400 = 1200 > 1158) nothing happens.
    let (_, ctx) = cell(spec, &h, 2400);
    assert_eq!(ctx.items, verbatim(0..9));
    // With the defaults (budget 50 000) nothing is truncated: 87 and sizes 100, 50, 500, 150,
    // 10, 10, 300, 10 (1217), target 851.9: U2 at 887 is the split; the summary is the same.
    let (_, ctx) = cell("gemini_cli_compress", &h, 2000);
    assert_eq!(ctx.items[1], summary);
    assert_eq!(ctx.items[4], Item::Verbatim(7));
    assert_eq!(ctx.cost, 20 + 133 + 10 + 10 + 300 + 10 + 5);
}

/// A single-prompt run (the system instruction, one task, then calls and tool outputs, as in
/// every SWE-bench run): the only split points are the environment-context message that opens
/// Gemini's history (`getInitialChatHistory`, utils/environmentContext.ts:84-111) and the task.
/// With no user message at or after 70 %, `findCompressSplitPoint` falls back to the last one,
/// the task (chatCompressionService.ts:98-99): only the environment message is compressed. The
/// new history (fresh environment message, summary, acknowledgement, the rest) is compared
/// with the last prompt, which also counted the system instruction (lines 268 and 446-462),
/// so a summary smaller than the system instruction is kept and the context grows by it.
#[test]
fn gemini_cli_compress_on_a_single_prompt_compresses_the_environment_message_alone() {
    // S (200), U (100), A (50), T (600), A (50), T (300): 1300 + 5 gaps = 1305.
    let h = history(&[
        (S, 200, false),
        (U, 100, false),
        (A, 50, false),
        (T, 600, false),
        (A, 50, false),
        (T, 300, false),
    ]);
    // Window 2000: 1305 ≥ 1000. Split: 87 + 1100 = 1187, target 830.9; U at 87 < target,
    // no later user message, the last record a tool output: the task (record 1). The summary
    // reads the environment message (87): ceil(8.7) = 9, and stands for 9 + 42 + 1 = 52. New
    // history 52 + 1100 + 5 gaps = 1157 ≤ 1305: kept. Context 200 + 52 + 1100 + 6 gaps = 1358.
    let (o, ctx) = cell("gemini_cli_compress", &h, 2000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(
        ctx.items,
        [
            Item::Verbatim(0),
            Item::Summary {
                first: 1,
                end: 1,
                cost: 52
            },
            Item::Verbatim(1),
            Item::Verbatim(2),
            Item::Verbatim(3),
            Item::Verbatim(4),
            Item::Verbatim(5),
        ]
    );
    assert_eq!(ctx.cost, 1358);
    assert_eq!(ctx.call_report.summary_read_extra, 87);
    // A system instruction of 20 is smaller than that summary: 52 + 1100 + 5 = 1157 > 1125,
    // inflated, rejected; both calls (reading 87, writing 9) are billed.
    let small = history(&[
        (S, 20, false),
        (U, 100, false),
        (A, 50, false),
        (T, 600, false),
        (A, 50, false),
        (T, 300, false),
    ]);
    let (_, ctx) = cell("gemini_cli_compress", &small, 2000);
    assert_eq!(ctx.items, verbatim(0..6));
    assert_eq!(ctx.call_report.rejected_call, Some((87, 9)));
}

/// The tool-output masking service (context/toolOutputMaskingService.ts @ 5411f113), run on
/// every turn (core/client.ts:699): back from the record before the last call (lines 92-94,
/// the pending output not yet in the history), tool outputs fill a protection window until one
/// takes it over 50 000 tokens (lines 123-136); that one and every older one are prunable, and
/// all are masked when they add up to at least 30 000 (line 152), each to a wrapper around its
/// first and last 250 characters (lines 207-209, 360-366) when that is smaller (line 236).
#[test]
fn gemini_cli_masks_old_tool_outputs_every_turn_past_the_protection_window() {
    // S (10), U (10), then A (10) and T (2000) five times: 10070 + 11 gaps = 10081.
    let mut spec = vec![(S, 10, false), (U, 10, false)];
    for _ in 0..5 {
        spec.push((A, 10, false));
        spec.push((T, 2000, false));
    }
    let h = history(&spec);
    // Thresholds scaled down: protect 3000, prune at 5000. Window 100 000: far under the
    // compression threshold. Scanned back from record 9 (records 10 and 11, the last call and
    // its pending output, are not): T9 2000 (protected 2000), T7 4000 > 3000: prunable with T5
    // and T3: 6000 ≥ 5000, all three masked, each to the 299-char wrapper + 500 = 799 < 2000.
    let spec = "gemini_cli_compress(mask_protect=3000, mask_prunable=5000)";
    let (o, ctx) = cell(spec, &h, 100_000);
    assert_eq!(o, Outcome::Feasible);
    let mut expect = verbatim(0..12);
    for i in [3, 5, 7] {
        expect[i] = Item::Placeholder(i);
    }
    assert_eq!(ctx.items, expect);
    assert_eq!(ctx.cost, 10081 - 3 * (2000 - 799));
    // At least 7000 to prune: 6000 is not enough, nothing is masked.
    let (_, ctx) = cell(
        "gemini_cli_compress(mask_protect=3000, mask_prunable=7000)",
        &h,
        100_000,
    );
    assert_eq!(ctx.items, verbatim(0..12));
    // The defaults (50 000 and 30 000) leave these outputs whole.
    let (_, ctx) = cell("gemini_cli_compress", &h, 100_000);
    assert_eq!(ctx.items, verbatim(0..12));
}

/// Gemini CLI remembers a rejected (inflated) compression (`hasFailedCompressionAttempt` in
/// `packages/core/src/core/client.ts`, passed to `ChatCompressionService.compress`): every
/// later automatic compression of the chat skips the model and only truncates tool outputs.
/// The rejected attempt's two calls ran (chatCompressionService.ts:361-407 before the check at
/// 462) and are billed.
#[test]
fn gemini_cli_compress_only_truncates_after_an_inflated_attempt() {
    // The history above and then U3 (10), A (10): calls at records 2, 4, 6, 8, 10.
    let mut spec: Vec<(Kind, usize, bool)> = vec![
        (S, 20, false),
        (U, 100, false),
        (A, 50, false),
        (T, 500, false),
        (A, 150, false),
        (U, 10, false),
        (A, 10, false),
        (T, 300, true),
        (A, 10, false),
    ];
    spec.extend([(U, 10, false), (A, 10, false)]);
    let h = history(&spec);
    let (m, t) = replay(
        &h,
        "gemini_cli_compress(tool_budget=200, truncate_chars=40, summary_size=2000)",
        2000,
    );
    // Before call 4 the context is 1147 ≥ 1000: a summary of 2000 would grow it, rejected.
    // Before call 5 it is 1169 and only the truncation runs, as in the cell above: both
    // outputs become 138, 1169 − 162 − 362 = 645, no model call.
    assert_eq!(compactions(&t), [(5, 1169, 0, false, 645)]);
    assert_eq!(t.calls[4].input, 645);
    // The rejected attempt's snapshot and self-check are billed: it read the environment
    // message and U1..A (88 + 803 = 891) and wrote 2000; the calls send 770 + 891 = 1661 and
    // 1661 + 2000 = 3661, and write 2000 each.
    assert_eq!(m.run.summary_calls, 2);
    let agent: u64 = t.calls.iter().map(|c| c.input).sum();
    assert_eq!(m.bill.input_tokens, agent + 1661 + 3661);
    // Without the rejection (a summary that fits) the same call compresses with a summary.
    let (m, _) = replay(
        &h,
        "gemini_cli_compress(tool_budget=200, truncate_chars=40)",
        2000,
    );
    assert_eq!(m.run.summary_calls, 2, "the snapshot and the self-check");
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
    // Six agent calls and two checkpoints, each one model call on SWE-agent's own summary
    // prompt (the 380-token `summary_system_template` and the summarised turns): a1..o2 = 53
    // (433), then S1, a3..o4 = 8 + 50 + 4 gaps = 62 (442); agent calls 342 in; 6 × 5 + 2 × 8
    // out.
    assert_eq!(
        (
            m.run.calls,
            m.run.compactions,
            m.run.summary_calls,
            m.run.model_calls
        ),
        (6, 2, 2, 8)
    );
    assert_eq!(
        (m.bill.input_tokens, m.bill.output_tokens),
        (342 + 433 + 442, 46)
    );
    assert_eq!(m.run.storms, 0);
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
    // Before the summary fires, masking alone: with the defaults (n=43, m=10, last_n=10) and
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
    assert_eq!((m.run.summary_calls, m.run.model_calls), (0, 5));
}

/// The paper's hybrid: "we use N=43, M=W=10 for the hybrid setup"
/// (`config/default_no_demo_checkpoint_same_model_openhands_N=43_M=10_masking_M=10.yaml` @
/// adfaa1a: `n: 43`, `keep_last_m_turns: 10`, `last_n_observations` `n: 10`).
#[test]
fn complexity_trap_hybrid_defaults_to_the_papers_n_43() {
    let s = Strategy::parse("complexity_trap_hybrid").unwrap();
    assert_eq!(s.label(), "complexity_trap_hybrid");
    assert_eq!(
        Strategy::parse("complexity_trap_hybrid(n=43, m=10, last_n=10)").unwrap(),
        s
    );
    // 53 turns (43 + 10) fire it once; under the N=21 ablation they fire twice (53 → 32 → 11).
    let (_, ctx) = cell("complexity_trap_hybrid", &swe_turns(53), 100_000);
    let summaries: Vec<(usize, usize)> = ctx
        .items
        .iter()
        .filter_map(|i| match *i {
            Item::Summary { first, end, .. } => Some((first, end)),
            _ => None,
        })
        .collect();
    // Turns 1..=43 are records 2..88.
    assert_eq!(summaries, [(2, 88)]);
    // Turns 1..=42 are records 2..86.
    let (_, ctx) = cell("complexity_trap_hybrid(n=21)", &swe_turns(53), 100_000);
    assert!(ctx.items.iter().any(|i| matches!(
        *i,
        Item::Summary {
            first: 2,
            end: 86,
            ..
        }
    )));
}

/// SWE-agent runs its history processors in order on the full history before every call
/// (`sweagent/agent/agents.py`, `messages`: `for processor in self.history_processors`), so
/// `SummarizeEveryNTurns` reads the observations as they came, before `last_n_observations`
/// masks them. In a session the checkpoint is therefore written from the unmasked turns.
#[test]
fn complexity_trap_hybrid_summarises_the_unmasked_turns_in_a_session() {
    // n=2, m=1, last_n=1, summaries of 8. Before call 3 o1 is masked (41): the context is
    // 10 + 10 + 5 + 41 + 5 + 20 + 5 gaps = 96. Before call 4 three turns fire the summary of
    // t1, t2: read unmasked, a1 + o1 + a2 + o2 = 5 + 20 + 5 + 20 + 3 gaps = 53 (masked it would
    // be 74), so its prompt is 380 + 53 = 433. After it [sys, task, S1, a3, o3] = 57.
    let spec = "complexity_trap_hybrid(n=2, m=1, last_n=1, summary_size=8)";
    let (m, t) = replay(&swe_turns(4), spec, 10_000);
    let inputs: Vec<u64> = t.calls.iter().map(|c| c.input).collect();
    assert_eq!(inputs, [21, 48, 96, 57]);
    assert_eq!(m.run.summary_calls, 1);
    assert_eq!(m.bill.input_tokens, 21 + 48 + 96 + 57 + 433);
}
