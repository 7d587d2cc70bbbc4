//! The sweep calls `Strategy::apply` once per cell: once a `Context` has grown to the largest
//! history, no strategy may allocate. A counting allocator checks it on this thread.

use ctxlab::context::Context;
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::Strategy;
use ctxlab::view::View;
use ctxlab::CostModel;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn agent_history(n: u64) -> History {
    let kinds = [
        Kind::User,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::Assistant,
    ];
    let records = (0..n)
        .map(|i| {
            let kind = kinds[(i % 4) as usize];
            let len = if kind == Kind::ToolResult {
                50 + (i * 37) % 400
            } else {
                20 + i % 30
            };
            let mut r = Record::new(i + 1, "x".repeat(len as usize))
                .kind(kind)
                .required(i % 5 == 0);
            if matches!(kind, Kind::ToolCall | Kind::ToolResult) {
                r = r.tool(if i % 3 == 0 { "grep" } else { "bash" });
            }
            r
        })
        .collect();
    History::new("h", records)
}

#[test]
fn applying_a_strategy_does_not_allocate_once_buffers_have_grown() {
    let specs = [
        "raw",
        "recent",
        "required(fill=skip)",
        "required(keep_recent=3)",
        "pinned",
        "mask",
        "clear_tool_uses(keep=1, clear_inputs=true, exclude_tools=[grep])",
        "summary",
        "required_summary(keep_recent=3)",
        "amortized",
        "oracle",
        "swe_agent_last_n(n=2)",
        "openhands_observation_masking(attention_window=10)",
        "openhands_recent(max_events=20)",
        "openhands_amortized(max_size=30)",
        "anthropic_clear_tool_uses(trigger=500, keep=2, clear_tool_inputs=true)",
        "openhands_llm_summarizing(max_size=30)",
        "codex_compact(user_tokens=50)",
        "claude_code_compact(threshold=0.5)",
        "gemini_cli_compress(tool_budget=100, truncate_chars=50)",
        "complexity_trap_summary(n=4, m=2)",
        "complexity_trap_hybrid(n=4, m=2, last_n=3)",
        "claude_code(threshold=0.5)",
        "anthropic_compact",
        "anthropic_clear_thinking",
        "opencode_compact(max_output=10, reserved=10, prune=true)",
        "pi_compact(reserve_tokens=10, keep_recent_tokens=50)",
        "openhands_sdk_summarizing(max_size=30)",
        "openhands_sdk_summarizing(max_size=30, max_input_tokens=none, summary_window=600)",
        "codex_compact_2026(user_tokens=50)",
        "codex_compact_2026(threshold=0.5, path=remote)",
        // No record here is a recorded summary: the transcript never compacted.
        "recorded_compaction",
    ];
    // The summarisers that read text (`extractive`, `llm`) allocate by design: they tokenise
    // and rank the text they replace. Every spec above uses the simulated one.
    // Every strategy of the catalogue is here, but `external`: it writes each request and reads
    // each answer of a program, so it allocates by design (and its time is the program's).
    for name in ctxlab::strategy::NAMES.iter().filter(|n| **n != "external") {
        assert!(
            specs.iter().any(|s| s.starts_with(name)),
            "{name} is not checked"
        );
    }
    let strategies: Vec<Strategy> = specs.iter().map(|s| Strategy::parse(s).unwrap()).collect();
    let big = CostedHistory::new(&agent_history(200), CostModel::Chars);
    let small = CostedHistory::new(&agent_history(60), CostModel::Chars);
    let flags: Vec<bool> = (0..200).map(|i| i % 3 == 0).collect();
    let mut ctx = Context::default();
    let budgets = [100.0, 60.0, 30.0, 10.0];
    let run = |s: &Strategy, ctx: &mut Context| {
        for h in [&big, &small] {
            for b in budgets {
                let view = View::new(h, &flags[..h.len()]);
                s.apply(view, h.capacity(b), s.effective_keep_recent(None), 7, ctx);
            }
        }
    };
    for s in &strategies {
        run(s, &mut ctx); // grow the buffers
    }
    // Counted strategy by strategy, so a failure names the ones that allocate.
    let mut allocating = Vec::new();
    for (s, spec) in strategies.iter().zip(specs) {
        ALLOCATIONS.with(|c| c.set(0));
        COUNTING.with(|c| c.set(true));
        run(s, &mut ctx);
        COUNTING.with(|c| c.set(false));
        let n = ALLOCATIONS.with(Cell::get);
        if n > 0 {
            allocating.push((spec, n));
        }
    }
    assert_eq!(allocating, Vec::<(&str, u64)>::new());
}
