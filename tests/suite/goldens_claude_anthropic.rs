//! Claude Code's tiers and Anthropic's server-side compaction and thinking clearing. Neither
//! has public tests of these rules (Claude Code is closed source; Anthropic's server code is
//! not public), so each case is worked by hand from what the preset rests on: the third-party
//! analyses of the Claude Code CLI the `claude_code` preset names (A: *Harness Engineering:
//! from Claude Code to AI Coding*, ch. 9–11; C: the reproduced `timeBasedMCConfig.ts` and the
//! Hacker News analysis; D: the `compact-guard` skill's constants), and Anthropic's pages
//! `build-with-claude/compaction-threshold` and `build-with-claude/context-editing`. Records
//! cost their characters and a gap costs 1 (`common::records`).

use crate::common::records::{at, cell, costed, rec, session, xs};
use crate::common::{assert_fails_with, ctxlab};
use ctxlab::context::{Item, Outcome};
use ctxlab::history::import::{read, Format, Problems};
use ctxlab::history::{Kind, THINKING_TOOL};
use ctxlab::Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};
use ctxlab::{CostedHistory, Strategy};

fn placeholders(items: &[Item]) -> Vec<usize> {
    items
        .iter()
        .filter_map(|i| match *i {
            Item::Placeholder(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// A session with times: a task, six `Bash` rounds and one `Task` round ten seconds apart,
/// each result a second after its call, the answer at 100 s, and the user back `gap` seconds
/// later. Records: 0 task; rounds at 1–2, 3–4, 5–6, 7–8 (`Task`), 9–10, 11–12, 13–14; 15 the
/// answer; 16 the user.
fn idle_history(gap: i64) -> CostedHistory {
    let mut records = vec![at(rec(U, "task"), 0)];
    for k in 1..=7 {
        let tool = if k == 4 { "Task" } else { "Bash" };
        records.push(at(rec(C, "{}").tool(tool), 10 * k));
        records.push(at(xs(T, 100).tool(tool), 10 * k + 1));
    }
    records.push(at(rec(A, "done"), 100));
    records.push(at(rec(U, "back"), 100 + gap));
    costed(records)
}

/// Worked by hand from C (`gapThresholdMinutes` 60, `keepRecent` 5, "trigger when (now − last
/// assistant timestamp) exceeds this many minutes") and A ch. 11 (the compactable tools, the
/// `[Old tool result content cleared]` stand-in, tool calls kept): back after 3 601 s, the six
/// `Bash` results are compactable and the `Task` one is not; the newest five stay and the
/// oldest (record 2) is cleared, costing its 33 characters. After exactly 3 600 s nothing
/// happens (the gap must exceed the hour). With `idle_keep=2` four go (2, 4, 6, 10); with
/// `idle_clear=false` none. In a session the clearing is one compaction that calls no model.
#[test]
fn claude_code_clears_old_tool_results_after_an_idle_hour() {
    let window = 200_000;
    let (o, ctx) = cell("claude_code", &idle_history(3_601), window, false);
    assert_eq!(o, Outcome::Feasible);
    assert_eq!(placeholders(&ctx.items), [2]);
    assert_eq!(ctx.item_costs(&idle_history(3_601).costs)[2], 33);
    let (_, ctx) = cell("claude_code", &idle_history(3_600), window, false);
    assert!(placeholders(&ctx.items).is_empty());
    let (_, ctx) = cell(
        "claude_code(idle_keep=2)",
        &idle_history(3_601),
        window,
        false,
    );
    assert_eq!(placeholders(&ctx.items), [2, 4, 6, 10]);
    let (_, ctx) = cell(
        "claude_code(idle_clear=false)",
        &idle_history(3_601),
        window,
        false,
    );
    assert!(placeholders(&ctx.items).is_empty());
    let mut records = idle_history(3_601).records().to_vec();
    records.push(at(rec(A, "welcome back"), 4_000));
    let (m, trace) = session("claude_code", &costed(records), window);
    assert_eq!((m.run.compactions, m.run.summary_calls), (1, 0));
    let k = trace.compactions[0];
    assert_eq!(k.context_after, k.input - 100 + 33);
}

/// Reads of seven files through Claude Code's `Read` tool (its call names `file_path`): a, b,
/// c, d, g (6 000 characters), e, a again, each other one 100 characters; records 1–14 (the
/// call then the result), 15 an answer.
fn reads() -> CostedHistory {
    let mut records = vec![rec(U, "task")];
    for (file, size) in [
        ("a", 100),
        ("b", 100),
        ("c", 100),
        ("d", 100),
        ("g", 6_000),
        ("e", 100),
        ("a", 100),
    ] {
        let input = format!("{{\"file_path\":\"/src/{file}.rs\"}}");
        records.push(rec(C, input).tool("Read"));
        records.push(xs(T, size).tool("Read"));
    }
    records.push(rec(A, "done"));
    costed(records)
}

/// Worked by hand from A ch. 10 and D (`POST_COMPACT_MAX_FILES_TO_RESTORE = 5`,
/// `POST_COMPACT_MAX_TOKENS_PER_FILE = 5 000`, `POST_COMPACT_TOKEN_BUDGET = 50 000`): after a
/// full compaction the five most recently read files are considered, newest first — a (its
/// second read, record 14), e (12), g (10), d (8), c (6); b is the sixth. g is over 5 000 and
/// does not come back; the others do, after the summary, newest first. A budget of 250 takes
/// the first two only; `files=0` takes none. The compaction here is forced with a small
/// `trigger_tokens`.
#[test]
fn claude_code_reattaches_recently_read_files_within_the_limits() {
    let h = reads();
    let full = |spec: &str| {
        let (o, ctx) = cell(spec, &h, 200_000, false);
        assert_eq!(o, Outcome::Feasible, "{spec}");
        assert!(matches!(
            ctx.items[0],
            Item::Summary {
                first: 0,
                end: 16,
                ..
            }
        ));
        ctx.items[1..].to_vec()
    };
    let verbatim = |items: Vec<Item>| -> Vec<usize> {
        items
            .into_iter()
            .map(|i| match i {
                Item::Verbatim(r) => r,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(
        verbatim(full("claude_code(trigger_tokens=100)")),
        [14, 12, 8, 6]
    );
    assert_eq!(
        verbatim(full("claude_code(trigger_tokens=100, files_budget=250)")),
        [14, 12]
    );
    assert!(full("claude_code(trigger_tokens=100, files=0)").is_empty());
    // The default threshold (167 000 of 200 000) is far: nothing happens.
    let (_, ctx) = cell("claude_code", &h, 200_000, false);
    assert_eq!(ctx.items.len(), 16);
}

/// B (anthropics/claude-code#31806): the full compaction fires at the window less 20 000 and
/// 13 000, 167 000 of 200 000, as `claude_code_compact`: a context of 167 000 (166 000, a gap,
/// 999) compacts, one of 166 999 does not. A window of at most 33 000 is refused, naming the
/// smallest that works, and a cell there is infeasible.
#[test]
fn claude_code_full_compaction_threshold_and_refused_window() {
    let h = |last: usize| costed(vec![xs(U, 166_000), xs(A, last)]);
    let (_, ctx) = cell("claude_code", &h(999), 200_000, false);
    assert!(matches!(
        ctx.items[0],
        Item::Summary {
            first: 0,
            end: 2,
            ..
        }
    ));
    let (_, ctx) = cell("claude_code", &h(998), 200_000, false);
    assert_eq!(ctx.items.len(), 2);
    let s = Strategy::parse("claude_code").unwrap();
    let err = s.check_window(33_000).unwrap_err();
    assert!(
        err.ends_with("the smallest window it is defined on is 33001"),
        "{err}"
    );
    assert_eq!(
        cell("claude_code", &h(1), 33_000, false).0,
        Outcome::Infeasible
    );
}

/// The refusal reaches the user as one error naming the window, for each preset with a reserve.
#[test]
fn presets_with_a_reserve_refuse_a_small_window_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    for (spec, window, smallest) in [
        ("claude_code", "33000", "33001"),
        ("pi_compact", "16000", "16385"),
        ("opencode_compact", "50000", "52001"),
        ("anthropic_compact", "100000", "150001"),
    ] {
        let o = ctxlab(
            dir.path(),
            &[
                "session",
                "absent.jsonl",
                "--strategy",
                spec,
                "--window",
                window,
                "--ratio",
                "0.8",
            ],
        );
        let smallest = format!("the smallest window it is defined on is {smallest}");
        assert_fails_with(&o, &[&format!("--window {window}"), &smallest]);
    }
}

/// Worked by hand from `compaction-threshold` ("Compaction starts at 150,000 input tokens by
/// default"; `trigger` takes no value under 50 000; the API drops every block before the
/// compaction block): a request of 50 000 input tokens with `trigger=50000` compacts, one of
/// 49 999 does not; the system record stays, everything after it becomes one summary. A
/// trigger under 50 000 is refused, and so is a window the trigger cannot be reached in.
#[test]
fn anthropic_compact_at_its_threshold() {
    let h = |last: usize| costed(vec![xs(S, 100), xs(U, 40_000), xs(A, last)]);
    // 100 + 40 000 + 9 898 + 2 gaps = 50 000.
    let (_, ctx) = cell(
        "anthropic_compact(trigger=50000)",
        &h(9_898),
        200_000,
        false,
    );
    assert_eq!(ctx.items[0], Item::Verbatim(0));
    assert!(matches!(
        ctx.items[1],
        Item::Summary {
            first: 1,
            end: 3,
            ..
        }
    ));
    assert_eq!(ctx.items.len(), 2);
    let (_, ctx) = cell(
        "anthropic_compact(trigger=50000)",
        &h(9_897),
        200_000,
        false,
    );
    assert_eq!(ctx.items.len(), 3);
    let err = Strategy::parse("anthropic_compact(trigger=49999)").unwrap_err();
    assert!(
        err.to_string().contains("≥ 50000 (the API's minimum)"),
        "{err}"
    );
    let s = Strategy::parse("anthropic_compact").unwrap();
    assert!(s.check_window(150_000).is_err());
    assert_eq!(s.check_window(150_001), Ok(()));
}

/// The summarising step is one more sampling iteration of the request, billed: it reads the
/// whole conversation and writes the summary, then the answer reads the compacted context. A
/// task of 30 000, an answer of 10 000, a user message of 10 000: the next request holds
/// 50 002 ≥ 50 000, so it compacts; the summary is ⌈0.042 × 50 002⌉ = 2 101. Input billed:
/// 30 000 (first call) + 50 002 (the summarising iteration) + 2 101 (the answer); output:
/// 10 000 + 100 + 2 101 (the summary).
#[test]
fn anthropic_compact_bills_the_summarising_iteration() {
    let h = costed(vec![
        xs(U, 30_000),
        xs(A, 10_000),
        xs(U, 10_000),
        xs(A, 100),
    ]);
    let (m, trace) = session("anthropic_compact(trigger=50000)", &h, 200_000);
    assert_eq!(
        (m.run.compactions, m.run.summary_calls, m.run.model_calls),
        (1, 1, 3)
    );
    assert_eq!(trace.compactions[0].input, 50_002);
    assert_eq!(trace.compactions[0].output, 2_101);
    assert_eq!(m.bill.input_tokens, 30_000 + 50_002 + 2_101);
    assert_eq!(m.bill.output_tokens, 10_000 + 100 + 2_101);
}

fn thinking(text: &str) -> ctxlab::Record {
    rec(C, text).tool(THINKING_TOOL)
}

/// Worked by hand from `context-editing` ("Thinking block clearing": the thinking blocks of
/// all but the newest `keep` assistant turns go, 1 by default; an assistant turn is the
/// model's answer to a user message, all its calls): two turns, thinking records 2 (turn 1),
/// 6 and 9 (turn 2). `keep=1` removes record 2, also once the user has asked again (the
/// newest assistant turn is still turn 2); `keep=2` removes none. In a session the clearing
/// happens once, before the second call of turn 2 (the first call that has a turn 2 thinking
/// block behind it), and calls no model.
#[test]
fn anthropic_clear_thinking_keeps_the_newest_turns() {
    let turns = vec![
        rec(U, "q1"),
        rec(A, "a1"),
        thinking("t1"),
        rec(U, "q2"),
        rec(A, "a2"),
        rec(C, "{}"),
        thinking("t2"),
        rec(T, "out"),
        rec(A, "a3"),
        thinking("t3"),
    ];
    let kept = |spec: &str, records: Vec<ctxlab::Record>| -> Vec<usize> {
        let (o, ctx) = cell(spec, &costed(records), 10_000, false);
        assert_eq!(o, Outcome::Feasible);
        ctx.items
            .iter()
            .map(|i| match *i {
                Item::Verbatim(r) => r,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let all: Vec<usize> = (0..10).collect();
    let without_t1: Vec<usize> = all.iter().copied().filter(|&r| r != 2).collect();
    assert_eq!(kept("anthropic_clear_thinking", turns.clone()), without_t1);
    assert_eq!(kept("anthropic_clear_thinking(keep=2)", turns.clone()), all);
    let mut asked = turns.clone();
    asked.push(rec(U, "q3"));
    let mut expect = without_t1.clone();
    expect.push(10);
    assert_eq!(kept("anthropic_clear_thinking", asked), expect);
    assert!(Strategy::parse("anthropic_clear_thinking(keep=0)").is_err());
    let (m, trace) = session("anthropic_clear_thinking", &costed(turns), 10_000);
    assert_eq!((m.run.compactions, m.run.summary_calls), (1, 0));
    // Calls: a1 (+t1), a2 (+bash, t2), a3 (+t3); the clearing comes before the third.
    assert_eq!(trace.compactions[0].before_call, 3);
    assert_eq!(
        trace.compactions[0].context_after,
        trace.compactions[0].input - 3
    );
}

/// The `claude-code-thinking` format reads a Claude Code session as `claude-code` does and
/// keeps each thinking block as a tool call of the thinking tool, placed after the last record
/// of its response so it joins that response's call: a response of thinking, text and a tool
/// use, its result, then a response of thinking and text. `claude-code` gives 5 records;
/// `claude-code-thinking` gives 7, the same calls (two), the thinking of the first response
/// between its tool use and the tool's result.
#[test]
fn claude_code_thinking_format_keeps_thinking_blocks_in_their_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let line = |kind: &str, id: &str, second: u32, content: &str| {
        let message = if kind == "assistant" {
            format!("{{\"id\":\"{id}\",\"role\":\"assistant\",\"content\":{content}}}")
        } else {
            format!("{{\"role\":\"user\",\"content\":{content}}}")
        };
        format!(
            "{{\"type\":\"{kind}\",\"message\":{message},\"timestamp\":\"2026-02-07T00:00:{second:02}.000Z\"}}\n"
        )
    };
    let text = [
        line("user", "", 0, "\"task\""),
        line(
            "assistant",
            "m1",
            1,
            r#"[{"type":"thinking","thinking":"let me think","signature":"s"}]"#,
        ),
        line(
            "assistant",
            "m1",
            2,
            r#"[{"type":"text","text":"I will run ls"}]"#,
        ),
        line(
            "assistant",
            "m1",
            3,
            r#"[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]"#,
        ),
        line(
            "user",
            "",
            4,
            r#"[{"type":"tool_result","tool_use_id":"t1","content":"a b"}]"#,
        ),
        line(
            "assistant",
            "m2",
            5,
            r#"[{"type":"thinking","thinking":"done now","signature":"s"}]"#,
        ),
        line("assistant", "m2", 6, r#"[{"type":"text","text":"Done."}]"#),
    ]
    .concat();
    std::fs::write(&path, text).unwrap();
    let kinds = |format: &str| -> Vec<(Kind, Option<String>, String)> {
        let format: Format = format.parse().unwrap();
        let runs = read(&path, format, &mut Problems::strict()).unwrap();
        runs[0]
            .history
            .records
            .iter()
            .map(|r| (r.kind, r.tool.clone(), r.text.clone()))
            .collect()
    };
    let plain = kinds("claude-code");
    assert_eq!(plain.len(), 5);
    assert!(plain
        .iter()
        .all(|(_, tool, _)| tool.as_deref() != Some(THINKING_TOOL)));
    let kept = kinds("claude-code-thinking");
    let th = Some(THINKING_TOOL.to_string());
    assert_eq!(
        kept,
        [
            (Kind::User, None, "task".to_string()),
            (Kind::Assistant, None, "I will run ls".to_string()),
            (
                Kind::ToolCall,
                Some("Bash".to_string()),
                "{\"command\":\"ls\"}".to_string()
            ),
            (Kind::ToolCall, th.clone(), "let me think".to_string()),
            (
                Kind::ToolResult,
                Some("Bash".to_string()),
                "a b".to_string()
            ),
            (Kind::Assistant, None, "Done.".to_string()),
            (Kind::ToolCall, th, "done now".to_string()),
        ]
    );
    let calls = |records: &[(Kind, Option<String>, String)]| {
        let k: Vec<Kind> = records.iter().map(|r| r.0).collect();
        (0..k.len())
            .filter(|&i| ctxlab::history::starts_call(&k, i))
            .count()
    };
    assert_eq!((calls(&plain), calls(&kept)), (2, 2));
}
