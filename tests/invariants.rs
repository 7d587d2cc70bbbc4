//! Invariants of the strategies over many seeded random histories.

use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::{Context, Item, Outcome, Strategy, View};
use ctxlab::CostModel;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

fn random_history(rng: &mut ChaCha8Rng) -> History {
    let n = rng.random_range(0..40u32);
    let kinds = [
        Kind::User,
        Kind::Assistant,
        Kind::ToolCall,
        Kind::ToolResult,
    ];
    let records = (0..n)
        .map(|i| {
            let len = if rng.random_bool(0.1) {
                rng.random_range(100..400u32)
            } else {
                rng.random_range(0..40u32)
            };
            let mut r = Record::new(u64::from(i) * 3 + 1, "x".repeat(len as usize))
                .required(rng.random_bool(0.25))
                .kind(kinds[rng.random_range(0..4u32) as usize]);
            if r.kind == Kind::ToolResult {
                r = r.tool("bash");
            }
            r
        })
        .collect();
    History::new("random", records)
}

fn kept(ctx: &Context) -> Vec<usize> {
    ctx.items
        .iter()
        .filter_map(|i| match i {
            Item::Verbatim(i) => Some(*i),
            _ => None,
        })
        .collect()
}

#[test]
fn strategies_respect_capacity_order_and_flags() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let recent = Strategy::parse("recent").unwrap();
    let specs = [
        "recent",
        "required",
        "required(fill=skip)",
        "recent(fill=skip)",
        "required(on_overflow=drop-oldest-flagged)",
        "required(keep_recent=2)",
    ];
    let strategies: Vec<Strategy> = specs.iter().map(|s| Strategy::parse(s).unwrap()).collect();
    let mut ctx = Context::default();
    let mut other = Context::default();
    for _ in 0..500 {
        let h = CostedHistory::new(&random_history(&mut rng), CostModel::Chars);
        let flags: Vec<bool> = (0..h.len()).map(|_| rng.random_bool(0.3)).collect();
        let none = vec![false; h.len()];
        let budget = rng.random_range(0..=100u32) as f64;
        let cap = h.capacity(budget);
        for (s, spec) in strategies.iter().zip(specs) {
            let outcome = s.apply(
                View::new(&h, &flags),
                cap,
                s.effective_keep_recent(None),
                0,
                &mut ctx,
            );
            if outcome == Outcome::Infeasible {
                assert!(ctx.items.is_empty());
                continue;
            }
            assert!(
                ctx.cost <= cap,
                "{spec}: used {} > capacity {cap}",
                ctx.cost
            );
            let ids = kept(&ctx);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{spec}: order lost");
            let recomputed: u64 =
                ids.iter().map(|&i| h.costs[i]).sum::<u64>() + (ids.len() as u64).saturating_sub(1);
            assert_eq!(ctx.cost, recomputed, "{spec}: cost bookkeeping");
            if spec.starts_with("required") && !spec.contains("drop") {
                for (i, &f) in flags.iter().enumerate() {
                    assert!(
                        !f || ids.contains(&i),
                        "{spec}: flagged record {i} dropped while feasible"
                    );
                }
            }
        }
        // With nothing flagged, `required` is `recent`.
        let required = &strategies[1];
        required.apply(View::new(&h, &none), cap, 0, 0, &mut ctx);
        recent.apply(View::new(&h, &none), cap, 0, 0, &mut other);
        assert_eq!(ctx.items, other.items);
    }
}
