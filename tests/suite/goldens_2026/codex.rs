//! `codex_compact_2026` against upstream Codex's own tests: `codex-rs/core/src/compact.rs` @
//! e06dd0e5d5694c24968bf49b62466cdedae04aaa (unit tests), `codex-rs/core/tests/suite/compact.rs`
//! @ 6dca9c6dd2c5bf76d3e03d08ecb5ed8afd2e4ad5 and @ 010ccb0c68ecacf2e5a4724385d5bab9deb9510b
//! (integration tests against a mocked provider), and the request-shape snapshots
//! `tests/suite/snapshots/all__suite__compact__*.snap` named in each test.
//!
//! Records are `x` repeated under the `approx-tokens` cost model: `ceil(chars / 4)` tokens, no
//! gap — Codex's own estimate, so the tests' token counts carry over (a record of 40 chars is
//! 10 tokens). Departure throughout: Codex's mocked provider reports whatever usage the test
//! scripts and never refuses a request; here a call's usage is what its context and output
//! cost, and the window is real, so each case is sized to keep the compaction request (the
//! history and the 173-token `SUMMARIZATION_PROMPT`) inside it unless the case is about that.

use super::{cell, compacted_before, history_in, replay, summary_of};
use ctxlab::context::{Item, Outcome};
use ctxlab::history::{CostedHistory, Kind};
use ctxlab::CostModel;

use Kind::{Assistant as A, System as S, ToolResult as T, User as U};

/// Records of the given kinds and token counts (4 chars a token).
fn tokens(spec: &[(Kind, usize)]) -> CostedHistory {
    let chars: Vec<(Kind, usize)> = spec.iter().map(|&(k, t)| (k, 4 * t)).collect();
    history_in(CostModel::ApproxTokens, &chars)
}

/// `build_token_limited_compacted_history_truncates_overlong_user_messages`: a limit of 16
/// tokens and one user message of 1000 chars (250 tokens): the replacement is that message,
/// middle-truncated, and the summary last. As in `codex_compact`, the truncated message is a
/// stand-in of the kept share, 16 tokens, and the marker `…234 tokens truncated…` (22 chars, 6
/// tokens). A 10 % threshold of a 2000-token window makes this two-record history compact.
#[test]
fn codex_2026_truncates_an_overlong_user_message() {
    let h = tokens(&[(U, 250), (A, 10)]);
    let (o, ctx) = cell(
        "codex_compact_2026(user_tokens=16, threshold=0.1)",
        &h,
        2000,
        false,
    );
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items.len(), 2);
    assert_eq!(ctx.items[0], Item::Placeholder(0));
    assert_eq!(ctx.item_costs(&h.costs)[0], 22);
    assert_eq!(summary_of(&ctx), Some((0, 2)));
}

/// `build_token_limited_compacted_history_appends_summary_message`: one user message that fits
/// is kept, and the summary follows it; it stands for everything but that message.
#[test]
fn codex_2026_appends_the_summary_after_the_user_messages() {
    let h = tokens(&[(U, 5), (A, 200)]);
    let (_, ctx) = cell("codex_compact_2026(threshold=0.1)", &h, 2000, false);
    assert_eq!(ctx.items[0], Item::Verbatim(0));
    assert_eq!(summary_of(&ctx), Some((0, 2)));
    assert_eq!(ctx.items.len(), 2);
    assert!(!ctx.summary_kept[0]);
}

/// `insert_initial_context_before_last_real_user_or_summary_keeps_summary_last` (compact.rs):
/// `[older user, latest user, summary]` with a fresh developer message becomes `[older user,
/// developer, latest user, summary]`; and the snapshot `mid_turn_compaction_shapes.snap`
/// (@ 0fa584ba): after a mid-turn compaction the request is `[initial context, USER_ONE,
/// SUMMARY]`. Here the initial context is the system record, and `collect_user_messages`' filter
/// of session prefix messages (`collect_user_messages_filters_session_prefix_entries`) is that
/// a system record is never taken for a user message. Mid-turn: the check after the last tool
/// output, no new user message. Usage: 150 reported up to the last call, 100 estimated for the
/// output after it: 250 ≥ 10 % of 2000.
#[test]
fn codex_2026_mid_turn_puts_the_initial_context_before_the_last_user_message() {
    let h = tokens(&[
        (S, 10),
        (U, 10),
        (A, 10),
        (T, 100),
        (U, 10),
        (A, 10),
        (T, 100),
    ]);
    let (_, ctx) = cell("codex_compact_2026(threshold=0.1)", &h, 2000, false);
    assert_eq!(
        ctx.items[..3],
        [Item::Verbatim(1), Item::Verbatim(0), Item::Verbatim(4)]
    );
    assert_eq!(summary_of(&ctx), Some((0, 7)));
    assert_eq!(ctx.items.len(), 4);
    let h = tokens(&[(S, 10), (U, 10), (A, 10), (T, 200)]);
    let (_, ctx) = cell("codex_compact_2026(threshold=0.1)", &h, 2000, false);
    assert_eq!(ctx.items[..2], [Item::Verbatim(0), Item::Verbatim(1)]);
    assert_eq!(summary_of(&ctx), Some((0, 4)));
}

/// `process_compacted_history_reinjects_full_initial_context` (compact.rs, the remote path's
/// processing): a compacted history of the summary alone gets the initial context in full,
/// before it. Here a run with no user message compacts on the remote path: `[system, summary]`.
#[test]
fn codex_2026_with_no_user_message_puts_the_initial_context_before_the_summary() {
    let h = tokens(&[(S, 10), (A, 10), (T, 100), (A, 10), (T, 100)]);
    let (_, ctx) = cell(
        "codex_compact_2026(threshold=0.1, path=remote)",
        &h,
        2000,
        false,
    );
    assert_eq!(ctx.items[0], Item::Verbatim(0));
    assert_eq!(summary_of(&ctx), Some((0, 5)));
    assert_eq!(ctx.items.len(), 2);
}

/// `multiple_auto_compact_per_task_runs_after_token_limit_hit` (suite/compact.rs @ 6dca9c6d):
/// one user message, three calls whose reported usage is over the limit, each followed by a
/// tool output: a compaction after each, mid-turn, every later request `[environment message,
/// user message, summary]`, then the final reply. Here: window 10 000 (limit 9000), the
/// initial context and the task 10 tokens each, three calls of 9000 tokens each followed by a
/// 10-token output (usage 20 + 9000 + 10 ≥ 9000), then a 10-token reply. Compactions before
/// calls 2, 3 and 4, each leaving `[system, user, summary]` = 30 tokens.
#[test]
fn codex_2026_compacts_after_every_call_over_the_limit_within_one_turn() {
    let mut spec = vec![(S, 10), (U, 10)];
    for _ in 0..3 {
        spec.push((A, 9000));
        spec.push((T, 10));
    }
    spec.push((A, 10));
    let (m, t) = replay(
        &tokens(&spec),
        "codex_compact_2026(summary_size=10)",
        10_000,
    );
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![2, 3, 4]);
    assert!(t.compactions.iter().all(|k| k.context_after == 30));
    assert_eq!(m.run.summary_calls, 3);
}

/// `auto_compact_starts_after_turn_started` (@ 6dca9c6d) and the snapshot
/// `pre_turn_compaction_including_incoming_shapes.snap` (@ 73cdde6a): with a limit of 200 000, a
/// first turn at 70 000 and a second whose single reply reports 330 000 needs no follow-up, so
/// nothing compacts mid-turn; the third turn compacts before its first request, the incoming
/// user message left out, and the request after it is `[USER_ONE, USER_TWO, SUMMARY, initial
/// context, USER_THREE]`. Here in hundreds (window 1000, `limit=200`): the initial context and
/// U1 10 each, A1 50 (usage 70), U2 10, A2 250 (usage 330), U3 10. Before call 2 the usage is
/// 70: nothing; before call 3, 330: the pre-turn compaction.
#[test]
fn codex_2026_pre_turn_compaction_leaves_out_the_incoming_user_message() {
    let spec = [
        (S, 10),
        (U, 10),
        (A, 50),
        (U, 10),
        (A, 250),
        (U, 10),
        (A, 10),
    ];
    let (m, t) = replay(&tokens(&spec), "codex_compact_2026(limit=200)", 1000);
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![3]);
    // [U1, U2, summary of A1 and A2 (300 → 30), system, U3] = 70.
    assert_eq!(t.compactions[0].context_after, 70);
    // The check before call 3, as a cell: the history up to U3.
    let (_, ctx) = cell(
        "codex_compact_2026(limit=200)",
        &tokens(&spec[..6]),
        1000,
        false,
    );
    assert_eq!(ctx.items[..2], [Item::Verbatim(1), Item::Verbatim(3)]);
    assert_eq!(summary_of(&ctx), Some((0, 5)));
    assert_eq!(ctx.items[3..], [Item::Verbatim(0), Item::Verbatim(5)]);
}

/// `auto_compact_clamps_config_limit_to_context_window` (@ 010ccb0c): a configured limit of
/// 200 on a window of 100 is clamped to `100 × 9 / 10 = 90`, so a first turn at 91 compacts
/// before the second. Here ×100: window 10 000, `limit=20000` clamped to 9000; a first turn at
/// 9000 compacts, one at 8999 does not (nor would 9000 under the unclamped 20 000).
#[test]
fn codex_2026_clamps_a_configured_limit_to_the_window() {
    let spec = |a: usize| tokens(&[(S, 10), (U, 10), (A, a), (U, 10), (A, 10)]);
    let preset = "codex_compact_2026(limit=20000, summary_size=10)";
    let (_, t) = replay(&spec(8980), preset, 10_000);
    assert_eq!(compacted_before(&t), vec![2]);
    let (_, t) = replay(&spec(8979), preset, 10_000);
    assert!(t.compactions.is_empty());
}

/// `auto_compact_body_after_prefix_ignores_starting_window_prefix` (@ 010ccb0c): window 1000,
/// `model_auto_compact_token_limit = 100`, scope `body_after_prefix`; turns of (input, output)
/// (600, 50), (700, 50): the first two turns do not compact although the prefix alone is over
/// the budget; the third compacts before its request (usage 750, prefill 600: 150 ≥ 100). Here
/// the initial context 590 and U1 10 (the 600 prefilled), A1 50, U2 50, A2 50.
#[test]
fn codex_2026_body_after_prefix_ignores_the_windows_prefill() {
    let h = tokens(&[
        (S, 590),
        (U, 10),
        (A, 50),
        (U, 50),
        (A, 50),
        (U, 10),
        (A, 20),
    ]);
    let (m, t) = replay(
        &h,
        "codex_compact_2026(limit=100, scope=body_after_prefix)",
        1000,
    );
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![3]);
    // Over the whole context the same limit compacts at once: 650 ≥ 100 before call 2.
    let (_, t) = replay(&h, "codex_compact_2026(limit=100)", 1000);
    assert_eq!(compacted_before(&t)[0], 2);
}

/// `auto_compact_body_after_prefix_counts_growth_after_compaction` (@ 010ccb0c): limit 40,
/// window 200 000. Turn 1 (100, 50) → compact before turn 2; the first request of the new
/// window sets its prefill, so turn 2's growth (10) does not compact; turn 3 (its input 90
/// more, output 5) brings the growth to 105 and compacts before turn 4. Here the system 90 and
/// U1 10, A1 50, U2 10, A2 10, U3 90, A3 5, U4 10, A4 5.
#[test]
fn codex_2026_body_after_prefix_counts_growth_from_each_windows_first_call() {
    let h = tokens(&[
        (S, 90),
        (U, 10),
        (A, 50),
        (U, 10),
        (A, 10),
        (U, 90),
        (A, 5),
        (U, 10),
        (A, 5),
    ]);
    let (m, t) = replay(
        &h,
        "codex_compact_2026(limit=40, scope=body_after_prefix)",
        200_000,
    );
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![2, 4]);
    // [U1, summary of A1 (50 → 5), system, U2] = 115: call 2's input, the new prefill.
    assert_eq!(t.calls[1].input, 115);
}

/// `auto_compact_body_after_prefix_still_caps_at_context_window` (@ 010ccb0c): window 100,
/// limit 200, body scope: turns (80, 5) and (98, 1); the third compacts because the whole
/// context (99) reached the usable window, `100 × 95 / 100 = 95`, whatever the body budget.
/// Here ×10: the system 790 and U1 10, A1 50 (850 < 950), U2 130, A2 10 (990 ≥ 950). The
/// request, 990 and the prompt, is over the window, so the oldest item, the system record, is
/// left out of it (the overflow retry below) — the summary starts after it — and re-injected.
#[test]
fn codex_2026_body_after_prefix_still_compacts_at_the_usable_window() {
    let records = [
        (S, 790),
        (U, 10),
        (A, 50),
        (U, 130),
        (A, 10),
        (U, 10),
        (A, 10),
    ];
    let spec = "codex_compact_2026(limit=2000, scope=body_after_prefix)";
    let (m, t) = replay(&tokens(&records), spec, 1000);
    assert!(m.run.completed);
    assert_eq!(compacted_before(&t), vec![3]);
    let (_, ctx) = cell(spec, &tokens(&records[..6]), 1000, false);
    assert_eq!(summary_of(&ctx), Some((1, 5)));
    assert_eq!(ctx.items[3..], [Item::Verbatim(0), Item::Verbatim(5)]);
}

/// `manual_compact_retries_after_context_window_error` (@ 6dca9c6d): when the provider refuses
/// the compaction request as too long, Codex drops exactly the oldest history item and retries
/// (`history.remove_first_item()`, compact.rs `run_compact_task_inner`), dropping a call's output
/// with it. Window 1000, 70 % threshold, a fixed summary of 10: with a last output of 790 the
/// request is 830 + 173 + 10 = 1013: the system record goes (993), the summary starts at the
/// task. With 760 after a first turn of 10 + 100: 910 + 183 = 1093 drops the system, the task
/// and the first call with its output (953): the summary stands for the second turn alone; the
/// task is still kept verbatim, being collected from the whole history.
#[test]
fn codex_2026_drops_the_oldest_items_from_a_request_too_long() {
    let spec = "codex_compact_2026(threshold=0.7, summary_size=10)";
    let h = tokens(&[(S, 20), (U, 10), (A, 10), (T, 790)]);
    let (o, ctx) = cell(spec, &h, 1000, false);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items[..2], [Item::Verbatim(0), Item::Verbatim(1)]);
    assert_eq!(summary_of(&ctx), Some((1, 4)));
    let h = tokens(&[(S, 20), (U, 10), (A, 10), (T, 100), (A, 10), (T, 760)]);
    let (_, ctx) = cell(spec, &h, 1000, false);
    assert_eq!(ctx.items[..2], [Item::Verbatim(0), Item::Verbatim(1)]);
    assert_eq!(summary_of(&ctx), Some((4, 6)));
    assert!(!ctx.summary_kept[2] && !ctx.summary_kept[3]);
}

/// The remote path's trim, worked by hand from compact_remote.rs @ 683f0a68
/// (`trim_function_call_history_to_fit_context_window`): while Codex's estimate of the
/// history is over the usable window (95 % of 1000), the newest item goes if Codex generated it
/// — a tool output, with its call. The last output (850) puts the history at 990: it goes with
/// its call, and the summary (10 % of what it stands for) is of the first turn only, 110 → 11.
/// The local path drops the oldest items instead, until the request fits: 990 + 173 + 97 is
/// over the window, and with the newest output alone near it every item goes — the summary
/// stands for nothing.
#[test]
fn codex_2026_remote_path_trims_the_newest_tool_outputs() {
    let h = tokens(&[(S, 10), (U, 10), (A, 10), (T, 100), (A, 10), (T, 850)]);
    let (_, ctx) = cell("codex_compact_2026(path=remote)", &h, 1000, false);
    assert_eq!(ctx.items[..2], [Item::Verbatim(0), Item::Verbatim(1)]);
    assert_eq!(summary_of(&ctx), Some((0, 6)));
    assert_eq!(ctx.item_costs(&h.costs)[2], 11);
    assert!(!ctx.summary_kept[4] && !ctx.summary_kept[5]);
    let (_, ctx) = cell("codex_compact_2026", &h, 1000, false);
    assert_eq!(summary_of(&ctx), Some((6, 6)));
}
