//! Strategy specs: every strategy parses, prints a canonical label that parses back to an equal
//! strategy, and bad specs fail with a message naming what is wrong.

use ctxlab::spec::Spec;
use ctxlab::strategy::{Rule, Strategy, SummarySize, NAMES};

/// (spec as a user might write it, its canonical label).
const CASES: &[(&str, &str)] = &[
    ("recent", "recent"),
    ("recent(fill=skip, keep_recent=2)", "recent(keep_recent=2, fill=skip)"),
    ("required(on_overflow=infeasible)", "required"),
    (
        "required(on_overflow=drop-oldest-flagged, fill=skip)",
        "required(fill=skip, on_overflow=drop-oldest-flagged)",
    ),
    ("pinned", "pinned"),
    ("pinned(keep_first=1)", "pinned(keep_first=1)"),
    ("pinned(keep_first=task)", "pinned"),
    ("pinned(keep_first=3, keep_recent=0)", "pinned(keep_recent=0, keep_first=3)"),
    ("mask", "mask"),
    ("mask(keep_recent=3, min_chars=100)", "mask(keep_recent=3)"),
    ("mask(min_chars=0, keep_recent=10)", "mask(keep_recent=10, min_chars=0)"),
    ("clear_tool_uses", "clear_tool_uses"),
    (
        "clear_tool_uses(clear_inputs=true, exclude_tools=[grep, bash, grep], clear_at_least=20000, keep=8)",
        "clear_tool_uses(keep=8, clear_at_least=20000, exclude_tools=[bash,grep], clear_inputs=true)",
    ),
    ("clear_tool_uses(exclude_tools=[], clear_inputs=false, keep=3)", "clear_tool_uses"),
    ("summary", "summary"),
    // A flag recall makes the summariser flag-based: the label names both flag recalls.
    (
        "summary(summary_ratio=0.1, summary_max=2000, recall_flagged=0.01)",
        "summary(recall_flagged=0.01, recall_other=0.05)",
    ),
    ("summary(summary_max=2000, recall_user=0.38)", "summary"),
    ("summary(recall_tool_result=0.5)", "summary(recall_tool_result=0.5)"),
    ("required_summary", "required_summary"),
    ("required_summary(summary_ratio=0.1, summary_max=2000)", "required_summary"),
    (
        "required_summary(summary_size=300, keep_recent=2)",
        "required_summary(keep_recent=2, summary_size=300)",
    ),
    (
        "summary(recall_other=0.3, recall_user=0.9)",
        "summary(recall_flagged=0.24, recall_other=0.3, recall_user=0.9)",
    ),
    (
        "summary(recall_other=0.05, summary_size=500, keep_recent=4)",
        "summary(keep_recent=4, summary_size=500, recall_flagged=0.24, recall_other=0.05)",
    ),
    (
        "summary(summary_max=800, summary_ratio=0.25, recall_flagged=1.0, recall_other=0)",
        "summary(summary_ratio=0.25, summary_max=800, recall_flagged=1, recall_other=0)",
    ),
    ("amortized", "amortized"),
    ("amortized(keep_first=2)", "amortized(keep_first=2)"),
    ("amortized(keep_first=1)", "amortized(keep_first=1)"),
    ("amortized(keep_first=task)", "amortized"),
    ("recent(keep_first=task)", "recent(keep_first=task)"),
    ("recent(keep_first=0)", "recent"),
    ("mask(keep_first=2, keep_recent=1)", "mask(keep_recent=1, keep_first=2)"),
    ("openhands_llm_summarizing", "openhands_llm_summarizing"),
    (
        "openhands_llm_summarizing(max_size=100, keep_first=1, summary_ratio=0.1)",
        "openhands_llm_summarizing",
    ),
    (
        "openhands_llm_summarizing(keep_first=4, max_size=120, recall_other=0.5)",
        "openhands_llm_summarizing(keep_first=4, max_size=120, recall_flagged=0.24, recall_other=0.5)",
    ),
    ("codex_compact", "codex_compact"),
    ("codex_compact(user_tokens=20000, threshold=0.9, keep_first=0)", "codex_compact"),
    (
        "codex_compact(threshold=0.8, summary_size=300, user_tokens=500)",
        "codex_compact(user_tokens=500, threshold=0.8, summary_size=300)",
    ),
    ("claude_code_compact", "claude_code_compact"),
    ("claude_code_compact(threshold=0.835)", "claude_code_compact(threshold=0.835)"),
    (
        "claude_code_compact(buffer=13000, output_reserve=20000)",
        "claude_code_compact",
    ),
    (
        "claude_code_compact(buffer=130, output_reserve=200, summary_ratio=0.042)",
        "claude_code_compact(output_reserve=200, buffer=130)",
    ),
    ("claude_code_compact(summary_ratio=0.1)", "claude_code_compact(summary_ratio=0.1)"),
    ("claude_code_compact(threshold=0.9)", "claude_code_compact(threshold=0.9)"),
    (
        "claude_code_compact(summary_max=20000, trigger_tokens=167000, keep_first=task)",
        "claude_code_compact(keep_first=task, trigger_tokens=167000)",
    ),
    ("gemini_cli_compress", "gemini_cli_compress"),
    (
        "gemini_cli_compress(threshold=0.5, preserve=0.3, tool_budget=50000, truncate_chars=40000)",
        "gemini_cli_compress",
    ),
    (
        "gemini_cli_compress(truncate_chars=4000, preserve=0.5, threshold=0.7, tool_budget=1000)",
        "gemini_cli_compress(threshold=0.7, preserve=0.5, tool_budget=1000, truncate_chars=4000)",
    ),
    ("complexity_trap_summary", "complexity_trap_summary"),
    ("complexity_trap_summary(n=21, m=10, keep_first=task)", "complexity_trap_summary"),
    (
        "complexity_trap_summary(m=5, n=43, recall_flagged=0.8)",
        "complexity_trap_summary(n=43, m=5, recall_flagged=0.8, recall_other=0.05)",
    ),
    ("complexity_trap_hybrid", "complexity_trap_hybrid"),
    ("complexity_trap_hybrid(last_n=10, n=43)", "complexity_trap_hybrid"),
    ("complexity_trap_hybrid(n=21)", "complexity_trap_hybrid(n=21)"),
    (
        "complexity_trap_hybrid(last_n=5, n=21, summary_size=400)",
        "complexity_trap_hybrid(n=21, last_n=5, summary_size=400)",
    ),
    ("oracle", "oracle"),
    ("oracle()", "oracle"),
    ("raw", "raw"),
    ("raw()", "raw"),
    ("swe_agent_last_n", "swe_agent_last_n"),
    ("swe_agent_last_n(n=5, polling=1, keep_first=task)", "swe_agent_last_n"),
    ("swe_agent_last_n(polling=3, n=10)", "swe_agent_last_n(n=10, polling=3)"),
    ("swe_agent_last_n(keep_first=0, n=2)", "swe_agent_last_n(keep_first=0, n=2)"),
    ("openhands_observation_masking", "openhands_observation_masking"),
    ("openhands_observation_masking(attention_window=100)", "openhands_observation_masking"),
    (
        "openhands_observation_masking(attention_window=5)",
        "openhands_observation_masking(attention_window=5)",
    ),
    ("openhands_recent", "openhands_recent"),
    ("openhands_recent(keep_first=1, max_events=100)", "openhands_recent"),
    (
        "openhands_recent(max_events=20, keep_first=task)",
        "openhands_recent(keep_first=task, max_events=20)",
    ),
    ("openhands_amortized", "openhands_amortized"),
    ("openhands_amortized(max_size=100, keep_first=1)", "openhands_amortized"),
    (
        "openhands_amortized(keep_first=4, max_size=120)",
        "openhands_amortized(keep_first=4, max_size=120)",
    ),
    ("anthropic_clear_tool_uses", "anthropic_clear_tool_uses"),
    ("openhands_sdk_summarizing", "openhands_sdk_summarizing"),
    (
        "openhands_sdk_summarizing(max_size=240, keep_first=2, max_input_tokens=window, minimum_progress=0.1, hard_reset_retries=5, hard_reset_scaling=0.8, summary_window=window, thinking_blocks=false)",
        "openhands_sdk_summarizing",
    ),
    (
        "openhands_sdk_summarizing(max_size=80, keep_first=4)",
        "openhands_sdk_summarizing(keep_first=4, max_size=80)",
    ),
    (
        "openhands_sdk_summarizing(thinking_blocks=true, summary_window=50000, max_input_tokens=none, max_tokens=1000)",
        "openhands_sdk_summarizing(max_tokens=1000, max_input_tokens=none, summary_window=50000, thinking_blocks=true)",
    ),
    ("codex_compact_2026", "codex_compact_2026"),
    (
        "codex_compact_2026(user_tokens=20000, threshold=0.9, scope=total, effective_percent=95, path=local, keep_first=0)",
        "codex_compact_2026",
    ),
    (
        "codex_compact_2026(path=remote, scope=body_after_prefix, limit=100)",
        "codex_compact_2026(limit=100, scope=body_after_prefix, path=remote)",
    ),
    ("recorded_compaction", "recorded_compaction"),
    (
        "anthropic_clear_tool_uses(trigger=100000, keep=3, clear_at_least=0, exclude_tools=[], clear_tool_inputs=false)",
        "anthropic_clear_tool_uses",
    ),
    (
        "anthropic_clear_tool_uses(clear_tool_inputs=true, keep=5, exclude_tools=[web_search, bash], trigger=30000, clear_at_least=5000)",
        "anthropic_clear_tool_uses(trigger=30000, keep=5, clear_at_least=5000, exclude_tools=[bash,web_search], clear_tool_inputs=true)",
    ),
    ("claude_code", "claude_code"),
    (
        "claude_code(idle_minutes=60, idle_keep=5, files=5, file_tokens=5000, files_budget=50000, idle_clear=true)",
        "claude_code",
    ),
    (
        "claude_code(idle_tools=[Read, Bash, Read], idle_minutes=5, threshold=0.8)",
        "claude_code(threshold=0.8, idle_minutes=5, idle_tools=[Bash,Read])",
    ),
    ("claude_code(idle_clear=false, files=0)", "claude_code(idle_clear=false, files=0)"),
    ("anthropic_compact", "anthropic_compact"),
    ("anthropic_compact(trigger=150000)", "anthropic_compact"),
    (
        "anthropic_compact(summary_ratio=0.1, trigger=60000)",
        "anthropic_compact(trigger=60000, summary_ratio=0.1)",
    ),
    ("anthropic_clear_thinking", "anthropic_clear_thinking"),
    ("anthropic_clear_thinking(keep=1)", "anthropic_clear_thinking"),
    ("anthropic_clear_thinking(keep=3)", "anthropic_clear_thinking(keep=3)"),
    ("opencode_compact", "opencode_compact"),
    ("opencode_compact(max_output=32000, prune=false, summary_max=32000)", "opencode_compact"),
    (
        "opencode_compact(prune=true, max_output=8192, tail_turns=2)",
        "opencode_compact(max_output=8192, tail_turns=2, prune=true)",
    ),
    (
        "opencode_compact(preserve_recent_tokens=100, reserved=12000)",
        "opencode_compact(reserved=12000, preserve_recent_tokens=100)",
    ),
    ("pi_compact", "pi_compact"),
    ("pi_compact(reserve_tokens=16384, keep_recent_tokens=20000, summary_max=13107)", "pi_compact"),
    (
        "pi_compact(keep_recent_tokens=25, reserve_tokens=10000)",
        "pi_compact(reserve_tokens=10000, keep_recent_tokens=25)",
    ),
    (
        "external(zeta=2.5, cmd=\"python3  rule.py\", keep_recent=2, name=ids, time_limit=5, mode=fast)",
        "external(keep_recent=2, cmd=\"python3 rule.py\", name=ids, time_limit=5, mode=fast, zeta=2.5)",
    ),
];

#[test]
fn every_name_has_a_case() {
    for name in NAMES {
        assert!(
            CASES.iter().any(|(spec, _)| spec.starts_with(name)),
            "no case for {name}"
        );
    }
}

#[test]
fn labels_are_canonical_and_parse_back_to_an_equal_strategy() {
    for &(spec, label) in CASES {
        let s = Strategy::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(s.label(), label, "label of {spec}");
        let back = Strategy::parse(&s.label()).unwrap();
        assert_eq!(back, s, "{label} parses back");
        assert_eq!(back.label(), label);
    }
}

#[test]
fn the_table_form_of_experiment_files_gives_the_same_strategy() {
    let table: toml::Table = toml::from_str(
        "name = \"clear_tool_uses\"\nkeep = 8\nexclude_tools = [\"bash\"]\nclear_inputs = true",
    )
    .unwrap();
    let s = Strategy::from_spec(&Spec::from_toml(&table).unwrap()).unwrap();
    assert_eq!(
        s,
        Strategy::parse("clear_tool_uses(keep=8, exclude_tools=[bash], clear_inputs=true)")
            .unwrap()
    );
    let table: toml::Table =
        toml::from_str("name = \"summary\"\nsummary_ratio = 0.2\nrecall_flagged = 1").unwrap();
    let s = Strategy::from_spec(&Spec::from_toml(&table).unwrap()).unwrap();
    match s.rule {
        Rule::Summary(sum) => {
            assert_eq!(
                sum.size,
                SummarySize::Ratio {
                    ratio: 0.2,
                    max: 2000
                }
            );
            assert!(matches!(
                sum.summariser,
                ctxlab::summariser::Summariser::Simulated(s) if s.recall_flagged == 1.0
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn defaults_of_keep_recent_follow_the_field() {
    let k = |spec: &str| Strategy::parse(spec).unwrap().default_keep_recent();
    assert_eq!(k("mask"), 3);
    assert_eq!(k("summary"), 6);
    for spec in [
        "recent",
        "required",
        "pinned",
        "clear_tool_uses",
        "amortized",
        "oracle",
        "raw",
        "swe_agent_last_n",
        "openhands_observation_masking",
        "openhands_recent",
        "openhands_amortized",
        "anthropic_clear_tool_uses",
    ] {
        assert_eq!(k(spec), 0, "{spec}");
    }
    // The spec's own keep_recent wins over a sweep axis, which wins over the default.
    let s = Strategy::parse("summary(keep_recent=2)").unwrap();
    assert_eq!(s.effective_keep_recent(Some(9)), 2);
    assert_eq!(
        Strategy::parse("summary")
            .unwrap()
            .effective_keep_recent(Some(9)),
        9
    );
}

#[test]
fn bad_specs_fail_with_a_clear_message() {
    let cases = [
        ("newest", "unknown strategy `newest`, expected one of raw, recent, required, pinned, mask, clear_tool_uses, summary, amortized, openhands_llm_summarizing, codex_compact, claude_code_compact, recorded_compaction, gemini_cli_compress, complexity_trap_summary, complexity_trap_hybrid, oracle"),
        ("openhands_llm_summarizing(max_size=1)", "strategy `openhands_llm_summarizing`: parameter `max_size` expects a whole number ≥ 2, found `1`"),
        ("openhands_llm_summarizing(summary_size=10, summary_ratio=0.2)", "strategy `openhands_llm_summarizing`: give either `summary_size`"),
        ("codex_compact(threshold=0)", "strategy `codex_compact`: parameter `threshold` expects a number above 0 and at most 1, found `0`"),
        ("codex_compact(threshold=1.5)", "strategy `codex_compact`: parameter `threshold` expects a number from 0 to 1, found `1.5`"),
        ("codex_compact(user_tokens=-5)", "strategy `codex_compact`: parameter `user_tokens` expects a whole number ≥ 0, found `-5`"),
        ("claude_code_compact(threshold=0.8, trigger_tokens=1000)", "strategy `claude_code_compact`: give one trigger: `threshold` (a share of the window), `trigger_tokens` (a count) or `output_reserve`/`buffer` (the window less them)"),
        ("claude_code_compact(threshold=0.8, buffer=1000)", "strategy `claude_code_compact`: give one trigger"),
        ("claude_code_compact(trigger_tokens=0.5)", "strategy `claude_code_compact`: parameter `trigger_tokens` expects a whole number ≥ 0, found `0.5`"),
        ("gemini_cli_compress(preserve=2)", "strategy `gemini_cli_compress`: parameter `preserve` expects a number from 0 to 1, found `2`"),
        ("gemini_cli_compress(threshold=-0.5)", "strategy `gemini_cli_compress`: parameter `threshold` expects a number from 0 to 1, found `-0.5`"),
        ("gemini_cli_compress(tool_budget=x)", "strategy `gemini_cli_compress`: parameter `tool_budget` expects a whole number ≥ 0, found `x`"),
        ("complexity_trap_summary(n=0)", "strategy `complexity_trap_summary`: parameter `n` expects a whole number ≥ 1, found `0`"),
        ("complexity_trap_summary(recall_flagged=2)", "strategy `complexity_trap_summary`: parameter `recall_flagged` expects a number from 0 to 1, found `2`"),
        ("complexity_trap_hybrid(last_n=-1)", "strategy `complexity_trap_hybrid`: parameter `last_n` expects a whole number ≥ 0, found `-1`"),
        ("complexity_trap_hybrid(window=10)", "strategy `complexity_trap_hybrid`: unknown parameter `window`"),
        ("mask(min_char=3)", "strategy `mask`: unknown parameter `min_char` (known: keep_recent, keep_first, min_chars)"),
        ("mask(min_chars=-1)", "parameter `min_chars` expects a whole number ≥ 0, found `-1`"),
        ("pinned(keep_first=1.5)", "parameter `keep_first` expects a whole number ≥ 0 (the first N records) or `task` (the system prompt and the first user message), found `1.5`"),
        ("amortized(keep_firs=2)", "unknown parameter `keep_firs` (known: keep_recent, keep_first)"),
        ("clear_tool_uses(clear_inputs=yes)", "parameter `clear_inputs` expects true or false, found `yes`"),
        ("clear_tool_uses(exclude_tools=3)", "parameter `exclude_tools` expects a list such as [bash,grep], found `3`"),
        ("clear_tool_uses(keep=-2)", "parameter `keep` expects a whole number ≥ 0"),
        ("summary(summary_ratio=1.5)", "parameter `summary_ratio` expects a number from 0 to 1, found `1.5`"),
        ("summary(recall_flagged=x)", "parameter `recall_flagged` expects a number from 0 to 1, found `x`"),
        ("summary(recall_other=-0.1)", "parameter `recall_other` expects a number from 0 to 1"),
        ("summary(summary_size=100, summary_ratio=0.2)", "give either `summary_size`"),
        ("summary(summary_size=100, summary_max=50)", "not both"),
        ("oracle(keep_recent=2)", "strategy `oracle`: unknown parameter `keep_recent` (it takes no parameters"),
        ("oracle(x=1)", "unknown parameter `x`"),
        ("recent(keep_first=first)", "parameter `keep_first` expects a whole number ≥ 0 (the first N records) or `task`"),
        ("oracle(keep_first=1)", "strategy `oracle`: unknown parameter `keep_first` (it takes no parameters"),
        ("raw(keep_recent=1)", "strategy `raw`: unknown parameter `keep_recent` (it takes no parameters"),
        ("swe_agent_last_n(n=0)", "strategy `swe_agent_last_n`: parameter `n` expects a whole number ≥ 1 (observations), found `0`"),
        ("swe_agent_last_n(polling=0)", "strategy `swe_agent_last_n`: parameter `polling` expects a whole number ≥ 1 (observations), found `0`"),
        ("swe_agent_last_n(n=2.5)", "parameter `n` expects a whole number ≥ 1 (observations), found `2.5`"),
        ("swe_agent_last_n(last_n=3)", "strategy `swe_agent_last_n`: unknown parameter `last_n` (known: keep_recent, keep_first, n, polling)"),
        ("openhands_observation_masking(attention_window=0)", "strategy `openhands_observation_masking`: parameter `attention_window` expects a whole number ≥ 1 (events), found `0`"),
        ("openhands_recent(max_events=0)", "strategy `openhands_recent`: parameter `max_events` expects a whole number ≥ 1 (events), found `0`"),
        ("openhands_recent(max_events=-3)", "parameter `max_events` expects a whole number ≥ 1 (events), found `-3`"),
        ("openhands_amortized(max_size=1)", "strategy `openhands_amortized`: parameter `max_size` expects a whole number ≥ 2 (events), found `1`"),
        ("openhands_amortized(max_size=4, keep_first=2)", "strategy `openhands_amortized`: `keep_first` (2) must be less than max_size / 2 (2), as OpenHands requires"),
        ("openhands_amortized(keep_frist=2)", "unknown parameter `keep_frist` (known: keep_recent, keep_first, max_size)"),
        ("anthropic_clear_tool_uses(trigger=-5)", "strategy `anthropic_clear_tool_uses`: parameter `trigger` expects a whole number ≥ 0, found `-5`"),
        ("anthropic_clear_tool_uses(clear_tool_inputs=[bash])", "parameter `clear_tool_inputs` expects true or false, found `[bash]`"),
        ("openhands_sdk_summarizing(max_size=10, keep_first=4)", "strategy `openhands_sdk_summarizing`: `keep_first` (4) must be less than max_size // 2 − 1 (4), as the SDK requires"),
        ("openhands_sdk_summarizing(summary_window=none)", "parameter `summary_window` expects a whole number of tokens or `window`, found `none`"),
        ("codex_compact_2026(scope=prefix)", "strategy `codex_compact_2026`: parameter `scope` expects one of total, body_after_prefix, found `prefix`"),
        ("codex_compact_2026(effective_percent=120)", "parameter `effective_percent` expects a whole number from 1 to 100, found `120`"),
        ("codex_compact_2026(limit=0)", "parameter `limit` expects a whole number ≥ 1 (tokens), found `0`"),
        ("anthropic_clear_tool_uses(clear_inputs=true)", "unknown parameter `clear_inputs` (known: keep_recent, keep_first, trigger, exclude_tools, keep, clear_at_least, clear_tool_inputs)"),
        ("anthropic_compact(trigger=10)", "parameter `trigger` expects a whole number of input tokens ≥ 50000 (the API's minimum), found `10`"),
        ("anthropic_clear_thinking(keep=0)", "parameter `keep` expects a whole number ≥ 1 assistant turns, found `0`"),
        ("claude_code(threshold=0.8, trigger_tokens=5)", "strategy `claude_code`: give one trigger"),
        ("claude_code(idle_keep=0)", "parameter `idle_keep` expects a whole number ≥ 1 tool results"),
        ("claude_code(idle_clear=yes)", "parameter `idle_clear` expects true or false"),
        ("opencode_compact(max_output=0)", "parameter `max_output` expects a whole number ≥ 1 tokens, found `0`"),
        ("opencode_compact(prune=1)", "parameter `prune` expects true or false, found `1`"),
        ("pi_compact(reserve=100)", "strategy `pi_compact`: unknown parameter `reserve` (known: keep_recent, keep_first, reserve_tokens, keep_recent_tokens"),
    ];
    for (spec, needle) in cases {
        let err = Strategy::parse(spec).expect_err(spec);
        assert!(err.contains(needle), "{spec}: {err}");
    }
}
