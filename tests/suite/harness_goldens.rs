//! Cases ported from the harnesses' own tests: each test names the file and commit it comes
//! from, restates its input history and expected output in ctxlab's terms, and says where
//! ctxlab departs. Records are `x` repeated under the chars cost model (a gap costs 1).

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate_with, SessionConfig, SessionScratch, Trace};
use ctxlab::view::View;
use ctxlab::{CostModel, Strategy};

use Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};

fn history(spec: &[(Kind, String)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, (kind, text))| {
            let r = Record::new(i as u64 + 1, text.clone()).kind(*kind);
            if *kind == T {
                r.tool("bash")
            } else {
                r
            }
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

fn xs(kind: Kind, n: usize) -> (Kind, String) {
    (kind, "x".repeat(n))
}

fn cell_with(spec: &str, h: &CostedHistory, capacity: u64, requested: bool) -> (Outcome, Context) {
    let s = Strategy::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut ctx = Context::default();
    ctx.from_session.condensation_requested = requested;
    let keep = s.effective_keep_recent(None);
    let o = s.apply(View::new(h, &h.truth), capacity, keep, 7, &mut ctx);
    (o, ctx)
}

fn cell(spec: &str, h: &CostedHistory, capacity: u64) -> (Outcome, Context) {
    cell_with(spec, h, capacity, false)
}

fn verbatim(of: &[usize]) -> Vec<Item> {
    of.iter().copied().map(Item::Verbatim).collect()
}

/// SWE-agent `tests/test_history_processors.py` @ 4bf629aa47d71e2e4ab5ab25a1a9652ad0f839c5,
/// `test_last_n_observations`: `LastNObservations(n=3)` elides every observation but the
/// newest 3 and the instance template (the first observation): `total − 3 − 1`. The source
/// runs it on a stored trajectory; here a history of the same shape: the system prompt, the
/// instance template (ctxlab's task, a `user` record kept in the head) and 7 turns.
#[test]
fn swe_agent_last_n_observations_elides_all_but_the_newest_n_and_the_template() {
    let mut spec = vec![xs(S, 10), xs(U, 10)];
    for _ in 0..7 {
        spec.push(xs(A, 5));
        spec.push(xs(T, 20));
    }
    let h = history(&spec);
    let (o, ctx) = cell("swe_agent_last_n(n=3)", &h, 10_000);
    assert_eq!(o, Outcome::Feasible);
    let elided = ctx
        .items
        .iter()
        .filter(|i| matches!(i, Item::Placeholder(_)))
        .count();
    // 8 observations (the template and 7 outputs): 8 − 3 − 1 = 4 elided, the oldest four.
    assert_eq!(elided, 4);
    assert_eq!(
        ctx.items[3..10],
        [
            Item::Placeholder(3),
            Item::Verbatim(4),
            Item::Placeholder(5),
            Item::Verbatim(6),
            Item::Placeholder(7),
            Item::Verbatim(8),
            Item::Placeholder(9)
        ]
    );
}

/// OpenHands `tests/unit/memory/condenser/test_condenser.py` @
/// 279652689eeda54a4453ac68db1144f2749ac42c, `test_recent_events_condenser`: five generic
/// events (here assistant records: no system prompt or task for the message layer to
/// re-insert).
#[test]
fn openhands_recent_events_condenser_as_its_test_has_it() {
    let h = history(&(0..5).map(|_| xs(A, 10)).collect::<Vec<_>>());
    // max_events = len(events): everything.
    assert_eq!(
        cell("openhands_recent(max_events=5)", &h, 1000).1.items,
        verbatim(&[0, 1, 2, 3, 4])
    );
    // max_events=3, keep_first at the class default 1 (the config's here): Event 1, 4, 5.
    assert_eq!(
        cell("openhands_recent(max_events=3)", &h, 1000).1.items,
        verbatim(&[0, 3, 4])
    );
    // keep_first=1, max_events=2: Event 1, 5.
    assert_eq!(
        cell("openhands_recent(keep_first=1, max_events=2)", &h, 1000)
            .1
            .items,
        verbatim(&[0, 4])
    );
    // keep_first=2, max_events=3: Event 1, 2, 5.
    assert_eq!(
        cell("openhands_recent(keep_first=2, max_events=3)", &h, 1000)
            .1
            .items,
        verbatim(&[0, 1, 4])
    );
}

/// The same file, `test_amortized_forgetting_condenser_handles_small_view_with_condensation_request`:
/// `max_size=100, keep_first=0`, ten events and an unhandled condensation request: nothing to
/// forget, the view comes back as it was (the commit ctxlab's preset follows, 76483ad8,
/// raised on `min()` of no ids there; the test pins the fixed behaviour, which ctxlab has).
#[test]
fn openhands_amortized_small_view_with_a_condensation_request_is_left_as_it_is() {
    let h = history(&(0..10).map(|_| xs(A, 10)).collect::<Vec<_>>());
    let all: Vec<usize> = (0..10).collect();
    let (o, ctx) = cell_with("openhands_amortized(keep_first=0)", &h, 1000, true);
    assert_eq!((o, ctx.items), (Outcome::Feasible, verbatim(&all)));
    // With more events than the target (50), the request cuts although the view is under
    // max_size: 60 events → the newest 50.
    let h = history(&(0..60).map(|_| xs(A, 10)).collect::<Vec<_>>());
    let (_, ctx) = cell_with("openhands_amortized(keep_first=0)", &h, 10_000, true);
    assert_eq!(ctx.items, verbatim(&(10..60).collect::<Vec<_>>()));
    let (_, ctx) = cell("openhands_amortized(keep_first=0)", &h, 10_000);
    assert_eq!(ctx.items.len(), 60, "no request, under max_size: unchanged");
}

/// The same file, `test_llm_summarizing_condenser_keeps_first_and_summary_events`:
/// `max_size=10, keep_first=3`, 100 events fed one at a time. The view never exceeds
/// `max_size`, its first 3 events are always the first 3, and once condensed the summary sits
/// right after them. In a session every event is one agent call's output (an assistant
/// record): a condensation happens when the view reaches 11 events and leaves
/// `keep_first` + summary + `events_from_tail` = 3 + 1 + 1 = 5, so after the first (11
/// events) one comes every 6 events: at 11, 17, …, 95, 15 condensations, each one summary
/// call.
#[test]
fn openhands_llm_summarizing_keeps_first_and_summary_events_as_its_test_has_it() {
    let h = history(&(0..100).map(|_| xs(A, 10)).collect::<Vec<_>>());
    let s =
        Strategy::parse("openhands_llm_summarizing(max_size=10, keep_first=3, summary_size=10)")
            .unwrap();
    let cfg = SessionConfig {
        window: 100_000,
        ..SessionConfig::default()
    };
    let mut trace = Trace::default();
    let m = simulate_with(
        &h,
        &h.truth,
        &s,
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    let before: Vec<u32> = trace.compactions.iter().map(|k| k.before_call).collect();
    assert_eq!(before, (0..15).map(|k| 12 + 6 * k).collect::<Vec<u32>>());
    assert_eq!(m.run.summary_calls, 15);
    // Every condensation leaves e0, e1, e2, the summary and the newest event: 5 × 10 + 4.
    assert!(trace.compactions.iter().all(|k| k.context_after == 54));
    // The view before each call holds at most max_size events: the largest input is 10
    // records of 10 and 9 gaps.
    assert_eq!(trace.calls.iter().map(|c| c.input).max(), Some(109));
}

/// openai/codex `codex-rs/core/src/compact.rs` @ 0100b103625752f6a10c21b79a8c423761dc4c6a,
/// `build_token_limited_compacted_history_truncates_overlong_user_messages`: a limit of 16
/// tokens and a user message of `"word " × 200` (1000 bytes, 250 tokens): the compacted
/// history is two messages, the user message truncated (a marker in it, not the whole text)
/// and the summary last. ctxlab departs in what it can hold: the truncated message is a
/// stand-in costing the kept share, ceil(1000 × 16 / 250) = 64, and the marker
/// `…234 tokens truncated…` (22 chars), 86 in all; its text is not there, so the summary
/// stands for it.
#[test]
fn codex_truncates_an_overlong_user_message_as_its_test_has_it() {
    let h = history(&[(U, "word ".repeat(200)), xs(A, 40)]);
    // The limit is `user_tokens`; a threshold low enough that this history compacts.
    let (o, ctx) = cell("codex_compact(user_tokens=16, threshold=0.1)", &h, 2000);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(ctx.items.len(), 2);
    assert_eq!(ctx.items[0], Item::Placeholder(0));
    assert!(matches!(
        ctx.items[1],
        Item::Summary {
            first: 0,
            end: 2,
            ..
        }
    ));
    assert_eq!(ctx.item_costs(&h.costs)[0], 86);
}

/// The same file, `build_token_limited_compacted_history_appends_summary_message`: no initial
/// context, one user message `"first user message"` that fits: the history is that message,
/// then the summary.
#[test]
fn codex_appends_the_summary_after_the_user_messages_as_its_test_has_it() {
    let h = history(&[(U, "first user message".into()), xs(A, 400)]);
    let (_, ctx) = cell("codex_compact(threshold=0.1)", &h, 2000);
    assert_eq!(ctx.items[0], Item::Verbatim(0));
    assert!(matches!(
        ctx.items[1],
        Item::Summary {
            first: 0,
            end: 2,
            ..
        }
    ));
    assert_eq!(ctx.items.len(), 2);
    // The summary stands for everything but the kept message.
    assert!(!ctx.summary_kept[0]);
}

/// google-gemini/gemini-cli `packages/core/src/context/chatCompressionService.test.ts` @
/// f0d2d9f246c48f7aae4b23bd4fa1a48a0cdbce87, `describe('findCompressSplitPoint')`: the
/// messages' JSON lengths (66, 68, 66, 68, 65) become records of that many chars, and
/// `findCompressSplitPoint(history, f)` is `gemini_cli_compress(preserve = 1 − f)`; the split
/// shows as the summary's end. Departure: ctxlab measures cost units, not JSON characters
/// (here the same numbers). The function is tested on the contents alone, so the preset's
/// environment-context message (which Gemini puts before them) is sized 0 here (`env=0`).
#[test]
fn gemini_split_points_as_its_tests_have_them() {
    let five = history(&[xs(U, 66), xs(A, 68), xs(U, 66), xs(A, 68), xs(U, 65)]);
    let split = |spec: &str, h: &CostedHistory| -> Vec<Item> {
        let (o, ctx) = cell(spec, h, 2000);
        assert_eq!(o, Outcome::Feasible, "{spec}");
        ctx.items
    };
    let summary_to = |end: usize, items: &[Item]| matches!(items.first(), Some(&Item::Summary { first: 0, end: e, .. }) if e == end);
    // "should handle a fraction in the middle": 0.5 → 4.
    let items = split(
        "gemini_cli_compress(threshold=0.1, preserve=0.5, env=0)",
        &five,
    );
    assert!(summary_to(4, &items), "{items:?}");
    assert_eq!(items[1..], [Item::Verbatim(4)]);
    // "should handle a fraction of last index": 0.9 → 4 (no user message at or after 90 %;
    // the last valid point).
    let items = split(
        "gemini_cli_compress(threshold=0.1, preserve=0.1, env=0)",
        &five,
    );
    assert!(summary_to(4, &items), "{items:?}");
    // "should handle a fraction of after last index": four messages ending in a model turn,
    // 0.8 → 4: everything is compressed.
    let four = history(&[xs(U, 66), xs(A, 68), xs(U, 66), xs(A, 68)]);
    let items = split(
        "gemini_cli_compress(threshold=0.1, preserve=0.2, env=0)",
        &four,
    );
    assert!(summary_to(4, &items) && items.len() == 1, "{items:?}");
    // "should return earlier splitpoint if no valid ones are after threshold": the last model
    // turn is a function call, 0.99 → 2 (112 units: the trigger at 0.05 of 2000).
    let call = history(&[xs(U, 26), xs(A, 27), xs(U, 26), xs(C, 30)]);
    let items = split(
        "gemini_cli_compress(threshold=0.05, preserve=0.01, env=0)",
        &call,
    );
    assert!(summary_to(2, &items), "{items:?}");
    assert_eq!(items[1..], [Item::Verbatim(2), Item::Verbatim(3)]);
    // "should handle a history with only one item": 0 — nothing to compress. Here the item
    // follows the (empty) environment message, a split point that compresses that message
    // alone; its summary and acknowledgement would grow the context, so it is rejected and
    // the context is unchanged.
    let one = history(&[xs(U, 9)]);
    assert_eq!(
        split("gemini_cli_compress(threshold=0.1, env=0)", &one),
        [Item::Verbatim(0)]
    );
}
