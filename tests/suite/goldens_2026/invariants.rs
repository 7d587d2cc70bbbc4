//! Invariants of `openhands_sdk_summarizing` and `codex_compact_2026` over seeded random
//! histories, in cells and in sessions: costs add up, a feasible context fits, an infeasible one
//! is empty, no record is both kept verbatim and carried by the summary, and the layout is the
//! one each source prescribes.

use super::cell;
use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate, SessionConfig, SessionScratch};
use ctxlab::CostModel;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// A system prompt, a task, then random records (a tenth of them long).
fn random_history(rng: &mut ChaCha8Rng) -> CostedHistory {
    let n = rng.random_range(0..60u32);
    let kinds = [
        Kind::User,
        Kind::Assistant,
        Kind::ToolCall,
        Kind::ToolResult,
    ];
    let mut records = vec![
        Record::new(1, "x".repeat(30)).kind(Kind::System),
        Record::new(2, "x".repeat(20))
            .kind(Kind::User)
            .required(true),
    ];
    for i in 0..n {
        let len = if rng.random_bool(0.1) {
            rng.random_range(100..600u32)
        } else {
            rng.random_range(1..40u32)
        };
        let mut r = Record::new(u64::from(i) + 3, "x".repeat(len as usize))
            .required(rng.random_bool(0.25))
            .kind(kinds[rng.random_range(0..4u32) as usize]);
        if matches!(r.kind, Kind::ToolResult | Kind::ToolCall) {
            r = r.tool("bash");
        }
        records.push(r);
    }
    CostedHistory::new(&History::new("random", records), CostModel::Chars)
}

fn span(item: Item) -> (usize, usize) {
    match item {
        Item::Verbatim(i) | Item::Placeholder(i) => (i, i + 1),
        Item::Summary { first, end, .. } => (first, end),
    }
}

/// Costs add up, the context fits, and no record is both verbatim and carried.
fn check_cell(spec: &str, h: &CostedHistory, cap: u64, o: Outcome, ctx: &Context) {
    if o == Outcome::Infeasible {
        assert!(ctx.items.is_empty(), "{spec}");
        return;
    }
    assert!(ctx.cost <= cap, "{spec}: {} > {cap}", ctx.cost);
    let sum: u64 = ctx.item_costs(&h.costs).iter().sum();
    let gaps = (ctx.items.len() as u64).saturating_sub(1) * h.separator;
    assert_eq!(ctx.cost, sum + gaps, "{spec}: cost bookkeeping");
    for item in &ctx.items {
        if let Item::Verbatim(i) = *item {
            assert!(!ctx.summary_kept[i], "{spec}: {i} kept twice");
        }
    }
}

#[test]
fn the_2026_presets_keep_their_invariants_on_random_histories() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let specs = [
        "openhands_sdk_summarizing(max_size=12)",
        "openhands_sdk_summarizing(max_size=20, keep_first=4, thinking_blocks=true)",
        "openhands_sdk_summarizing(max_size=1000, max_tokens=300, summary_size=30)",
        "codex_compact_2026(threshold=0.3, user_tokens=20)",
        "codex_compact_2026(scope=body_after_prefix, limit=100)",
        "codex_compact_2026(threshold=0.5, path=remote, summary_size=20)",
    ];
    let mut compacted = [0usize; 6];
    for _ in 0..600 {
        let h = random_history(&mut rng);
        let cap = rng.random_range(100..3000u64);
        for (k, spec) in specs.iter().enumerate() {
            let requested = rng.random_bool(0.2);
            let (o, ctx) = cell(spec, &h, cap, requested);
            check_cell(spec, &h, cap, o, &ctx);
            let summary = ctx
                .items
                .iter()
                .position(|i| matches!(i, Item::Summary { .. }));
            let Some(at) = summary else { continue };
            compacted[k] += 1;
            let (first, end) = span(ctx.items[at]);
            if spec.starts_with("openhands") {
                // One cut: the records before it, the summary, the records after it.
                let spans: Vec<_> = ctx.items.iter().map(|&i| span(i)).collect();
                assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spec}: order");
                assert_eq!(spans.last().map(|s| s.1), Some(h.len()), "{spec}: the end");
            } else {
                // Codex: user messages and the initial context around the summary, which
                // stands for everything up to the check; after it only the incoming turn.
                for (j, item) in ctx.items.iter().enumerate() {
                    let (i, _) = span(*item);
                    if j == at {
                        continue;
                    }
                    let kind = h.kinds[i];
                    assert!(
                        matches!(kind, Kind::System | Kind::User) || (j > at && i >= end),
                        "{spec}: {i} ({kind:?}) kept"
                    );
                }
                assert!(first <= end, "{spec}: summary range");
            }
        }
    }
    for (k, n) in compacted.iter().enumerate() {
        assert!(*n > 30, "{}: only {n} compactions", specs[k]);
    }
}

#[test]
fn the_2026_presets_replay_deterministically_and_stay_in_the_window() {
    let mut rng = ChaCha8Rng::seed_from_u64(37);
    let mut scratch = SessionScratch::default();
    for _ in 0..150 {
        let h = random_history(&mut rng);
        let window = rng.random_range(600..4000u64);
        let cfg = SessionConfig {
            window,
            ..SessionConfig::default()
        };
        for spec in [
            "openhands_sdk_summarizing(max_size=16)",
            "codex_compact_2026",
        ] {
            let s = ctxlab::Strategy::parse(spec).unwrap();
            let a = simulate(&h, &h.truth, &s, &cfg, 5, &mut scratch);
            let b = simulate(&h, &h.truth, &s, &cfg, 5, &mut scratch);
            assert_eq!(a, b, "{spec}: the same session twice");
            assert!(
                a.run.peak_input <= window,
                "{spec}: a call over the window was sent"
            );
        }
    }
}
