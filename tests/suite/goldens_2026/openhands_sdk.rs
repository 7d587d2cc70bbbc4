//! `openhands_sdk_summarizing` against `OpenHands/software-agent-sdk`
//! `tests/sdk/context/condenser/test_llm_summarizing_condenser.py` and
//! `test_rolling_condenser.py` @ 611629e6999ad398dc49c761721eefe18d5e6bd9 (2026-08-22), and the
//! integration test `tests/integration/tests/c02_hard_context_reset.py` of the same commit.
//!
//! The SDK's tests build views of `MessageEvent`s; here they are `user` records (no tool calls,
//! so every index is a manipulation index). Their token counter is characters // 4 with no
//! framing; here the cost model is `chars` (a record of 10 chars stands for the tests' 40-char
//! event of 10 tokens) and every gap between records costs 1, which the expected cuts below
//! account for (they come out the same as the SDK's). The SDK's mocked summariser is
//! ctxlab's simulated one (`summary_size=10`, or the default ratio where said).

use super::{cell, compacted_before, history_in, many, replay, summary_of, verbatim};
use ctxlab::context::{Item, Outcome};
use ctxlab::history::{CostedHistory, Kind};
use ctxlab::{CostModel, Strategy};

use Kind::{Assistant as A, Summary as Sum, System as S, ToolResult as T, User as U};

fn history(spec: &[(Kind, usize)]) -> CostedHistory {
    history_in(CostModel::Chars, spec)
}

/// `n` message events of `len` chars.
fn messages(n: usize, len: usize) -> CostedHistory {
    history(&many(U, n, len))
}

/// The items of a condensation that keeps `0..start`, summarises `start..end` and keeps the
/// rest of `n` events.
fn condensed(start: usize, end: usize, n: usize) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (0..start).map(|i| (i, i + 1)).collect();
    v.push((start, end));
    v.extend((end..n).map(|i| (i, i + 1)));
    v
}

fn spans(items: &[Item]) -> Vec<(usize, usize)> {
    items
        .iter()
        .map(|i| match *i {
            Item::Verbatim(j) | Item::Placeholder(j) => (j, j + 1),
            Item::Summary { first, end, .. } => (first, end),
        })
        .collect()
}

/// `test_default_values`: `max_size == 240`, `keep_first == 2`. Spelled out they are the
/// defaults (the label drops them), and on 241 message events the condenser keeps the first 2,
/// the summary and the newest `240 // 2 − 2 − 1 = 117`: 120 events.
#[test]
fn sdk_defaults_are_240_events_keeping_the_first_2() {
    let s = Strategy::parse("openhands_sdk_summarizing(max_size=240, keep_first=2)").unwrap();
    assert_eq!(s.label(), "openhands_sdk_summarizing");
    let (o, ctx) = cell(
        "openhands_sdk_summarizing",
        &messages(241, 1),
        100_000,
        false,
    );
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(spans(&ctx.items), condensed(2, 124, 241));
    assert_eq!(ctx.items.len(), 120);
}

/// `test_should_condense` and `test_condense_returns_view_when_no_condensation_needed`
/// (`max_size=100`): 100 events need nothing and come back as they are; 101 are over the event
/// count, a soft requirement that a cut meets: 2 + summary + `50 − 2 − 1 = 47`.
#[test]
fn sdk_condenses_past_max_size_events_only() {
    let spec = "openhands_sdk_summarizing(max_size=100)";
    let (_, ctx) = cell(spec, &messages(100, 1), 100_000, false);
    assert_eq!(ctx.items, verbatim(0..100));
    let (_, ctx) = cell(spec, &messages(101, 1), 100_000, false);
    assert_eq!(spans(&ctx.items), condensed(2, 54, 101));
}

/// `test_condense_returns_condensation_when_needed`: `max_size=10, keep_first=3`, 11 events.
/// `events_from_tail = 10 // 2 − 3 − 1 = 1`; the summary sits at offset 3 = `keep_first`.
#[test]
fn sdk_summary_offset_is_keep_first() {
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=10, keep_first=3)",
        &messages(11, 1),
        100_000,
        false,
    );
    assert_eq!(spans(&ctx.items), condensed(3, 10, 11));
    assert!(matches!(ctx.items[3], Item::Summary { first: 3, .. }));
}

/// `test_get_condensation_with_previous_summary`: 14 events, an earlier condensation forgot
/// e3, e4 and put its summary at offset 3, so the view is e0 e1 e2 S e5 … e13 (13 events). Over
/// `max_size=10`: `events_from_tail = 1`, the events forgotten are `view[3:12]`, the previous
/// summary first among them (the SDK checks it reaches the summary prompt; here the new
/// summary's range holds it).
#[test]
fn sdk_summarises_the_previous_summary_again() {
    let mut spec = many(U, 3, 1);
    spec.push((Sum, 1));
    spec.extend(many(U, 9, 1));
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=10, keep_first=3)",
        &history(&spec),
        100_000,
        false,
    );
    assert_eq!(spans(&ctx.items), condensed(3, 12, 13));
}

/// `test_invalid_config`: `max_size=0`, `keep_first=-1` and `max_size=10, keep_first=8` are
/// refused. The validator (llm_summarizing_condenser.py L73–81) refuses any `keep_first` that
/// leaves `max_size // 2 − keep_first − 1 ≤ 0`: 4 with `max_size=10`, but not 3.
#[test]
fn sdk_refuses_what_its_validators_refuse() {
    for (spec, needle) in [
        ("openhands_sdk_summarizing(max_size=0)", "max_size"),
        ("openhands_sdk_summarizing(keep_first=-1)", "keep_first"),
        (
            "openhands_sdk_summarizing(max_size=10, keep_first=8)",
            "`keep_first` (8) must be less than max_size // 2 − 1 (4)",
        ),
        (
            "openhands_sdk_summarizing(max_size=10, keep_first=4)",
            "`keep_first` (4) must be less than",
        ),
        (
            "openhands_sdk_summarizing(keep_first=task)",
            "a whole number of events",
        ),
        ("openhands_sdk_summarizing(minimum_progress=1)", "below 1"),
        ("openhands_sdk_summarizing(hard_reset_retries=0)", "≥ 1"),
        (
            "openhands_sdk_summarizing(max_input_tokens=lots)",
            "`window` or `none`",
        ),
    ] {
        let err = Strategy::parse(spec).unwrap_err().to_string();
        assert!(err.contains(needle), "{spec}: {err}");
    }
    assert!(Strategy::parse("openhands_sdk_summarizing(max_size=10, keep_first=3)").is_ok());
}

/// `test_condense_with_token_limit_exceeded`: `max_tokens=100, keep_first=2, max_size=1000`,
/// 15 events of 10 tokens (150). Only the token reason: reduce by `150 − 100 // 2 = 100`, so the
/// shortest prefix after the head above 100 tokens is 11 events and 2 stay. Here: 15 × 10 + 14
/// gaps = 164, reduce by 114; each event after the head adds 11: 11 events (121) — the same cut.
#[test]
fn sdk_token_pressure_cuts_to_half_the_limit() {
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=1000, max_tokens=100)",
        &messages(15, 10),
        10_000,
        false,
    );
    assert_eq!(spans(&ctx.items), condensed(2, 13, 15));
}

/// `test_token_limit_uses_stricter_configured_or_agent_limit` ((500, 100, 200, True), (100,
/// 500, 200, True), (100, 500, 50, False)), `test_token_limit_inherits_agent_effective_input_limit`
/// and `test_token_reduction_uses_agent_effective_input_limit`: the token limit is the smaller
/// of `max_tokens` and the agent model's input limit (`max_input_tokens`), and either alone
/// sets it. Ten events of 19 chars are 199 (the tests' 200): over a limit of 100, cut by
/// `199 − 50 = 149`, i.e. all 8 events after the head (8 × 20 = 160 > 149). Ten of 4 chars are
/// 49 (the tests' 50): no reason, no condensation.
#[test]
fn sdk_token_limit_is_the_stricter_of_its_own_and_the_models() {
    let base = "openhands_sdk_summarizing(max_size=1000, summary_window=100000";
    for limits in [
        "max_tokens=500, max_input_tokens=100",
        "max_tokens=100, max_input_tokens=500",
        "max_input_tokens=100",
    ] {
        let spec = format!("{base}, {limits})");
        let (_, ctx) = cell(&spec, &messages(10, 19), 100_000, false);
        assert_eq!(spans(&ctx.items), condensed(2, 10, 10), "{spec}");
    }
    let spec = format!("{base}, max_tokens=100, max_input_tokens=500)");
    let (_, ctx) = cell(&spec, &messages(10, 4), 100_000, false);
    assert_eq!(ctx.items, verbatim(0..10));
    // The default assumes the model's input limit is the window: 199 on a window of 150, cut
    // by 199 − 75 = 124, which 7 events do (140): one stays.
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=1000, summary_window=100000)",
        &messages(10, 19),
        150,
        false,
    );
    assert_eq!(spans(&ctx.items), condensed(2, 9, 10));
}

/// `test_condense_with_request_and_events_reasons` (25 events, `max_size=20`, a request:
/// `min(25 // 2 − 3, 20 // 2 − 3) = 7`, forget `view[2:18]`, 16 events) and
/// `test_most_aggressive_condensation_chosen` (40 events, `max_size=30`, a request:
/// `min(17, 12) = 12`, forget `view[2:28]`, 26).
#[test]
fn sdk_takes_the_strictest_target_of_request_and_events() {
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=20)",
        &messages(25, 1),
        100_000,
        true,
    );
    assert_eq!(summary_of(&ctx), Some((2, 18)));
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=30)",
        &messages(40, 1),
        100_000,
        true,
    );
    assert_eq!(summary_of(&ctx), Some((2, 28)));
}

/// `test_condense_with_request_and_tokens_reasons`, `test_condense_with_events_and_tokens_reasons`
/// and `test_condense_with_all_three_reasons`: 20 events of 10 tokens, `max_tokens=100`. The
/// token target keeps 2 (reduce by `200 − 50 = 150`: 16 events; here 219 − 50 = 169, 16 × 11 =
/// 176), stricter than the request's 7 and the events' `15 // 2 − 3 = 4`: each forgets
/// `view[2:18]` (the SDK asserts only that some events go; the cut is worked here).
#[test]
fn sdk_token_target_wins_when_it_is_the_strictest() {
    let h = messages(20, 10);
    for (spec, requested) in [
        (
            "openhands_sdk_summarizing(max_size=1000, max_tokens=100)",
            true,
        ),
        (
            "openhands_sdk_summarizing(max_size=15, max_tokens=100)",
            false,
        ),
        (
            "openhands_sdk_summarizing(max_size=15, max_tokens=100)",
            true,
        ),
    ] {
        let (_, ctx) = cell(spec, &h, 100_000, requested);
        assert_eq!(summary_of(&ctx), Some((2, 18)), "{spec} {requested}");
    }
}

/// `test_minimum_progress_threshold_met`: `max_size=20, keep_first=2`, 30 events: forget
/// `30 − 7 = 23` … from index 2: `view[2:23]`, 21 events, over 10 % of 30.
/// `test_minimum_progress_threshold_not_met` mocks the cut; worked here from L384–388 instead:
/// 100 events whose third is huge (1000) under `max_tokens=1100`. The view is 1000 + 99 + 99
/// gaps = 1198; reduce by `1198 − 550 = 648`: the huge event alone does it, so only `view[2:3]`
/// would go — 1 event, under 10 % of 100. No condensation is available; token pressure is
/// hard, so the condenser resets the context: one summary of all 100 events.
#[test]
fn sdk_minimum_progress_refuses_a_cut_too_small() {
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=20)",
        &messages(30, 1),
        100_000,
        false,
    );
    assert_eq!(summary_of(&ctx), Some((2, 23)));
    let mut spec = many(U, 2, 1);
    spec.push((U, 1000));
    spec.extend(many(U, 97, 1));
    let (o, ctx) = cell(
        "openhands_sdk_summarizing(max_size=1000, max_tokens=1100)",
        &history(&spec),
        10_000,
        false,
    );
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(spans(&ctx.items), vec![(0, 100)]);
}

/// A history with no balanced cut: a SWE-agent-like run (system, task, then action and
/// observation pairs) whose tool loop carries thinking blocks (`thinking_blocks=true`,
/// tool_loop_atomicity.py L95–126) is one atomic unit from the first action on, so with
/// `keep_first=3` (inside the loop) the first manipulation index at or after 3 is the end of the
/// view and nothing can be forgotten. Worked from `RollingCondenser.condense` (base.py
/// L159–198) and the requirement tests (`test_condensation_requirement_returns_soft`,
/// `…_returns_hard_for_token_pressure`, `…_returns_hard`,
/// `test_condense_with_soft_requirement_and_no_condensation_available`,
/// rolling `test_rolling_condenser_returns_view_on_no_condensation_available_exception`,
/// `test_hard_context_reset_condensation_is_returned`): over the event count alone (soft) the
/// view comes back as it is; with token pressure or a request (hard) the context is reset to one
/// summary of every event. Without thinking blocks the same history has cuts at every action:
/// `view[4:56]` goes (46 = `50 − 3 − 1` stay after the summary).
#[test]
fn sdk_with_no_balanced_cut_soft_waits_and_hard_resets() {
    let mut spec = vec![(S, 1), (U, 1)];
    for _ in 0..50 {
        spec.push((A, 1));
        spec.push((T, 1));
    }
    let h = history(&spec);
    let n = h.len();
    let atomic = "openhands_sdk_summarizing(max_size=100, keep_first=3, thinking_blocks=true";
    let (_, ctx) = cell(&format!("{atomic})"), &h, 100_000, false);
    assert_eq!(ctx.items, verbatim(0..n), "soft: left as it is");
    let (_, ctx) = cell(&format!("{atomic})"), &h, 100_000, true);
    assert_eq!(spans(&ctx.items), vec![(0, n)], "a request resets");
    let (_, ctx) = cell(&format!("{atomic}, max_tokens=100)"), &h, 100_000, false);
    assert_eq!(spans(&ctx.items), vec![(0, n)], "token pressure resets");
    let (_, ctx) = cell(
        "openhands_sdk_summarizing(max_size=100, keep_first=3)",
        &h,
        100_000,
        false,
    );
    assert_eq!(spans(&ctx.items), condensed(4, 56, n));
}

/// `test_llm_error_triggers_hard_context_reset` (the summary call fails, the hard reset's
/// succeeds) and `hard_context_reset`'s retries (L316–359), worked by hand: 12 events of 1000
/// chars and a request, `max_size=10`: forget `view[2:10]` (8 events, 8007), whose summary
/// prompt, 508 + 8007 + 10 = 8525, is over a summarising window of 8300 — the call fails, the
/// requirement is hard, so the context is reset. Attempt 1 sends all 12 events: 508 + 12 011 +
/// 10 = 12 529, over. Attempt 2 cuts every event string to `int(1000 × 0.8) = 800` chars
/// (687 kept around the 113-char notice): 12 × 800 + 11 = 9611, 10 129 in all, over. Attempt
/// 3 to `int(800 × 0.8) = 640`: 7691, 8209 — it fits: one summary of all 12 events. With
/// `hard_reset_retries=2` the third attempt is never made: the SDK raises, the cell is
/// infeasible (`test_condense_with_hard_requirement_and_no_condensation_available`,
/// rolling `test_default_hard_context_reset_raises_error`).
#[test]
fn sdk_hard_reset_retries_with_shrinking_event_strings_then_refuses() {
    let h = messages(12, 1000);
    let spec = "openhands_sdk_summarizing(max_size=10, max_input_tokens=none, summary_window=8300, summary_size=10";
    let (o, ctx) = cell(&format!("{spec})"), &h, 100_000, true);
    assert_eq!((o, spans(&ctx.items)), (Outcome::Feasible, vec![(0, 12)]));
    let (o, ctx) = cell(&format!("{spec}, hard_reset_retries=2)"), &h, 100_000, true);
    assert_eq!((o, ctx.items.len()), (Outcome::Infeasible, 0));
    // A summarising window of 5000 fits none of the five: attempt 4 cuts to
    // int(640 × 0.8) = 512 chars (6673 in all), attempt 5 to int(512 × 0.8) = 409 (12 × 409 +
    // 11 = 4919, 5437 in all).
    let (o, _) = cell(
        "openhands_sdk_summarizing(max_size=10, max_input_tokens=none, summary_window=5000, summary_size=10)",
        &h,
        100_000,
        true,
    );
    assert_eq!(o, Outcome::Infeasible);
}

/// `tests/integration/tests/c02_hard_context_reset.py`: a condensation requested while the
/// view holds too few events resets the context; later a normal condensation keeps the reset's
/// summary (it sits in the first `keep_first` events). In a session, window 2000,
/// `keep_first=4`: system, task and a first turn (100 each, the observation 1500), a second
/// (100, 90): 1995 in 6 events. Call 3 (1995 + 1 + 100) is refused, so the condenser is asked
/// to condense: `6 // 2 − 4 − 1 = −2` events from the tail leave no index to cut at, and the
/// context is reset. The summary call is 508 + 1995 + 10 over the window; the retries cut the
/// 1500-char observation to 1200 (2213, over), then 960: 1973, which fits — the context is the
/// summary (10), and call 3 goes through. Five turns of 100 + 300 later it is 2020 in 11
/// events, over the token limit (the window): reduce by 2020 − 1000, the events after the head
/// [S, A3, T3, A4] give 1105 at T6, so A5 … T6 go (the cut cannot start inside A4's turn):
/// [S, A3, T3, A4, T4, S2, A7, T7] = 1220 + 7 gaps. With two attempts only, the reset fails and
/// the refused call ends the run.
#[test]
fn sdk_hard_reset_in_a_session_then_a_condensation_keeps_its_summary() {
    let mut spec = vec![(S, 100), (U, 100), (A, 100), (T, 1500), (A, 100), (T, 90)];
    for _ in 0..5 {
        spec.push((A, 100));
        spec.push((T, 300));
    }
    spec.push((A, 100));
    let h = history(&spec);
    let base = "openhands_sdk_summarizing(keep_first=4, summary_size=10";
    let (m, t) = replay(&h, &format!("{base})"), 2000);
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![3, 8]);
    assert_eq!(
        t.compactions
            .iter()
            .map(|k| k.context_after)
            .collect::<Vec<_>>(),
        vec![10, 1227]
    );
    assert_eq!(m.run.summary_calls, 2);
    let (m, _) = replay(&h, &format!("{base}, hard_reset_retries=2)"), 2000);
    assert_eq!((m.run.completed, m.run.exit_call), (false, Some(3)));
}
