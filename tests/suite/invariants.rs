//! Invariants of the strategies over many seeded random histories.

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::strategy::{Rule, Strategy};
use ctxlab::view::View;
use ctxlab::{score, CostModel};
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
            if matches!(r.kind, Kind::ToolResult | Kind::ToolCall) {
                r = r.tool(["bash", "grep", "read"][rng.random_range(0..3u32) as usize]);
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

/// The cost of item `k` as the strategy that made it must have counted it.
fn item_cost(h: &CostedHistory, s: &Strategy, ctx: &Context, k: usize) -> u64 {
    match ctx.items[k] {
        Item::Verbatim(i) => h.costs[i],
        Item::Placeholder(i) => match s.rule {
            Rule::Mask(_) => h.stand_ins.mask_costs[i],
            Rule::ClearToolUses(_) | Rule::AnthropicClearToolUses(_) => h.stand_ins.clear_cost,
            Rule::SweAgentLastN(_) => h.model.cost(&format!(
                "Old environment output: ({} lines omitted)",
                h.stand_ins.lines[i]
            )),
            Rule::OpenHandsObservationMasking(_) if h.kinds[i] == Kind::ToolResult => {
                h.model.cost("<MASKED>")
            }
            // The call of a masked step, which OpenHands no longer sends: it costs nothing
            // (a record that is a stand-in already keeps its cost).
            Rule::OpenHandsObservationMasking(_)
                if h.stand_ins.chars[i] == 0
                    && h.stand_ins.lines[i] == 0
                    && h.costs[i] == h.stand_ins.mask_costs[i] =>
            {
                h.costs[i]
            }
            Rule::OpenHandsObservationMasking(_) => 0,
            // A record without text that costs something counts as a stand-in already.
            Rule::ComplexityTrapHybrid(_) if h.stand_ins.chars[i] == 0 && h.costs[i] > 0 => {
                h.costs[i]
            }
            Rule::ComplexityTrapHybrid(_) => h.model.cost(&format!(
                "Old environment output: ({} lines omitted)",
                h.stand_ins.lines[i]
            )),
            // A truncated tool output: its header and the share of the record it keeps.
            Rule::GeminiCliCompress(_) => ctx.item_costs(&h.costs)[k],
            // Codex's middle-truncated user message: the share it keeps and the marker.
            Rule::CodexCompact(_) => ctx.item_costs(&h.costs)[k],
            _ => panic!(
                "{}: placeholders from a strategy that does not mask",
                s.label()
            ),
        },
        Item::Summary { cost, .. } => cost,
    }
}

/// The first and one-past-last record an item stands for.
fn span(item: Item) -> (usize, usize) {
    match item {
        Item::Verbatim(i) | Item::Placeholder(i) => (i, i + 1),
        Item::Summary { first, end, .. } => (first, end),
    }
}

/// A spec of every rule the strategy invariants cover, several with parameters.
const SPECS: &[&str] = &[
    "recent",
    "required",
    "required(fill=skip)",
    "required(on_overflow=drop-oldest-flagged)",
    "pinned",
    "pinned(keep_first=3)",
    "mask",
    "mask(min_chars=20)",
    "clear_tool_uses",
    "clear_tool_uses(keep=1, clear_inputs=true, exclude_tools=[grep])",
    "clear_tool_uses(keep=0, clear_at_least=200)",
    "summary",
    "summary(summary_size=30, recall_flagged=1, recall_other=1)",
    "summary(summary_ratio=0.3, summary_max=60)",
    "amortized",
    "amortized(keep_first=2)",
    "openhands_llm_summarizing(max_size=10)",
    "openhands_llm_summarizing(max_size=6, keep_first=task, summary_size=20)",
    "codex_compact(user_tokens=20)",
    "codex_compact(threshold=0.5, recall_flagged=1, recall_other=1)",
    "claude_code_compact(output_reserve=20, buffer=13)",
    "claude_code_compact(threshold=0.5, keep_first=task, summary_max=30)",
    "gemini_cli_compress",
    "gemini_cli_compress(tool_budget=100, truncate_chars=50, preserve=0.5)",
    "complexity_trap_summary(n=3, m=2)",
    "complexity_trap_hybrid(n=3, m=2, last_n=2)",
    "oracle",
    // The presets, with windows small enough for these short histories.
    "swe_agent_last_n(n=2)",
    "swe_agent_last_n(n=1, polling=3, keep_first=0)",
    "openhands_observation_masking(attention_window=4)",
    "openhands_recent(max_events=8)",
    "openhands_recent(max_events=5, keep_first=task)",
    "openhands_amortized(max_size=10)",
    "openhands_amortized(max_size=12, keep_first=0)",
    "anthropic_clear_tool_uses(trigger=100, keep=1)",
    "anthropic_clear_tool_uses(trigger=0, keep=0, clear_tool_inputs=true, clear_at_least=50, exclude_tools=[grep])",
];

#[test]
fn every_strategy_respects_capacity_and_order_and_the_oracle_bounds_them_all() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let specs = SPECS;
    let strategies: Vec<Strategy> = specs.iter().map(|s| Strategy::parse(s).unwrap()).collect();
    let oracle = Strategy::parse("oracle").unwrap();
    let verbatim_only = [
        "recent",
        "required",
        "pinned",
        "amortized",
        "oracle",
        "openhands_recent",
        "openhands_amortized",
    ];
    let mut ctx = Context::default();
    let mut feasible = vec![0usize; specs.len()];
    for cell in 0..1500u64 {
        let h = CostedHistory::new(&random_history(&mut rng), CostModel::Chars);
        // Noisy flags for everyone but the oracle, which is handed the truth.
        let noisy: Vec<bool> = h
            .truth
            .iter()
            .map(|&t| if rng.random_bool(0.2) { !t } else { t })
            .collect();
        let cap = h.capacity(rng.random_range(0..=100u32) as f64);
        let axis = rng.random_range(0..5usize);
        let best = {
            let o = oracle.apply(View::new(&h, &h.truth), cap, axis, cell, &mut ctx);
            score(&h, o, &ctx)
        };
        assert!(best.feasible, "the oracle is always feasible");
        for (k, s) in strategies.iter().enumerate() {
            let spec = specs[k];
            let flags = if s.sees_truth() { &h.truth } else { &noisy };
            let keep = s.effective_keep_recent(Some(axis));
            let outcome = s.apply(View::new(&h, flags), cap, keep, cell, &mut ctx);
            let m = score(&h, outcome, &ctx);
            if outcome == Outcome::Infeasible {
                assert!(ctx.items.is_empty(), "{spec}");
                // mask and clear_tool_uses drop what they must and the oracle chooses freely:
                // they fail only when the head they keep (the task) or clear_tool_uses' pinned
                // tail does not fit.
                let head = s.head().len(&h.kinds);
                let head_fits = h.costs[..head].iter().sum::<u64>()
                    + h.separator * (head as u64).saturating_sub(1)
                    <= cap;
                let never = matches!(s.rule, Rule::Oracle(_))
                    || (matches!(s.rule, Rule::Mask(_)) && head_fits)
                    || (matches!(s.rule, Rule::ClearToolUses(_)) && keep == 0 && head_fits);
                assert!(!never, "{spec} is never infeasible (keep_recent {keep})");
                continue;
            }
            feasible[k] += 1;
            assert!(
                ctx.cost <= cap,
                "{spec}: used {} > capacity {cap}",
                ctx.cost
            );
            // Original order: items stand for disjoint, increasing ranges of records. Codex's
            // summary comes last and encloses the user messages kept before it, which it does
            // not carry.
            let spans: Vec<(usize, usize)> = match (s.rule.clone(), ctx.items.last()) {
                (Rule::CodexCompact(_), Some(&Item::Summary { first, end, .. })) => {
                    assert_eq!(
                        end,
                        h.len(),
                        "{spec}: the summary reaches the newest record"
                    );
                    for (k, item) in ctx.items.iter().enumerate() {
                        if let Item::Verbatim(i) = *item {
                            assert!(i < first || h.kinds[i] == Kind::User, "{spec}: {k}");
                            assert!(!ctx.summary_kept[i], "{spec}: {i} carried twice");
                        }
                    }
                    let n = ctx.items.len();
                    ctx.items[..n - 1].iter().map(|&i| span(i)).collect()
                }
                _ => ctx.items.iter().map(|&i| span(i)).collect(),
            };
            assert!(
                spans.windows(2).all(|w| w[0].1 <= w[1].0),
                "{spec}: order lost"
            );
            let sum: u64 = (0..ctx.items.len())
                .map(|k| item_cost(&h, s, &ctx, k))
                .sum();
            let gaps = (ctx.items.len() as u64).saturating_sub(1);
            assert_eq!(ctx.cost, sum + gaps, "{spec}: cost bookkeeping");
            assert_eq!(m.used, ctx.cost);
            // Scores.
            if let (Some(any), Some(verbatim)) = (m.retention_any(), m.required_retention()) {
                assert!(
                    any >= verbatim,
                    "{spec}: retention_any < required_retention"
                );
                assert!(
                    best.required_retention().unwrap() >= verbatim,
                    "{spec}: beats the oracle ({verbatim} > {:?}) at capacity {cap}",
                    best.required_retention()
                );
                if s.summariser().is_none() {
                    assert_eq!(
                        any, verbatim,
                        "{spec}: information outside verbatim records"
                    );
                }
            }
            if verbatim_only.iter().any(|v| spec.starts_with(v)) {
                assert_eq!(m.exact(), Some(1.0), "{spec}: not verbatim only");
                assert_eq!((m.placeholders, m.summarised), (0, 0), "{spec}");
            }
            // The whole history is kept when it fits, except by mask (which masks every turn)
            // and the presets, whose harnesses compact on their own trigger.
            if h.total <= cap && !matches!(s.rule, Rule::Mask(_)) && s.when().is_none() {
                assert_eq!(ctx.items.len(), h.len(), "{spec}: dropped under capacity");
            }
        }
    }
    // Every strategy was exercised on feasible cells. The presets that never drop send at
    // least about the whole history (their stand-ins are longer than most of these short
    // records), so only the high budgets are feasible for them.
    for (k, n) in feasible.iter().enumerate() {
        let never_drops = matches!(
            strategies[k].rule,
            Rule::SweAgentLastN(_)
                | Rule::OpenHandsObservationMasking(_)
                | Rule::AnthropicClearToolUses(_)
        );
        let least = if never_drops { 50 } else { 300 };
        assert!(*n > least, "{}: only {n} feasible cells", specs[k]);
    }
}

#[test]
fn a_summary_can_carry_more_than_the_oracle_fits_verbatim() {
    // Twenty required records of 50: at capacity 200 the oracle keeps 3 verbatim (50·3 + 2 =
    // 152; a 4th would make 203), while a summary of 20 at full recall carries all of them.
    let records = (0..20)
        .map(|i| Record::new(i + 1, "x".repeat(50)).required(true))
        .collect();
    let h = CostedHistory::new(&History::new("h", records), CostModel::Chars);
    let mut ctx = Context::default();
    let oracle = Strategy::parse("oracle").unwrap();
    let o = oracle.apply(View::new(&h, &h.truth), 200, 0, 0, &mut ctx);
    assert_eq!(score(&h, o, &ctx).required_kept, 3);
    let summary =
        Strategy::parse("summary(keep_recent=0, summary_size=20, recall_flagged=1)").unwrap();
    let o = summary.apply(View::new(&h, &h.truth), 200, 0, 0, &mut ctx);
    let m = score(&h, o, &ctx);
    assert_eq!((m.required_kept, m.required_any), (0, 20.0));
}

/// A rule that promises not to read the flags (`READS_FLAGS = false`) or the summariser's draws
/// (`DRAWS = false`) builds the very same context without them: a sweep copies such a cell
/// from another noise level or replicate of the history instead of evaluating it again.
#[test]
fn a_rule_that_promises_no_flags_or_draws_builds_the_same_context_whatever_they_are() {
    let specs: Vec<&str> = SPECS
        .iter()
        .copied()
        .chain(["raw", "recent(fill=skip)", "required(keep_recent=2)"])
        .collect();
    // Every rule that makes a promise is among the specs checked.
    for name in ctxlab::strategy::NAMES {
        let Ok(s) = Strategy::parse(name) else {
            continue;
        };
        if s.reusable().is_some() {
            assert!(
                specs
                    .iter()
                    .any(|spec| spec.split('(').next() == Some(name)),
                "{name} promises and is not checked"
            );
        }
    }
    let recent = Strategy::parse("recent").unwrap();
    assert_eq!(recent.reusable(), Some(false), "recent reads neither");
    let required = Strategy::parse("required").unwrap();
    assert_eq!(required.reusable(), Some(true), "required reads its flags");
    assert_eq!(Strategy::parse("summary").unwrap().reusable(), None);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (mut a, mut b) = (Context::default(), Context::default());
    let mut checked = [0usize; 2];
    for cell in 0..600u64 {
        let h = CostedHistory::new(&random_history(&mut rng), CostModel::Chars);
        let mut noisy = || -> Vec<bool> { (0..h.len()).map(|_| rng.random_bool(0.5)).collect() };
        let (first, second) = (noisy(), noisy());
        let cap = h.capacity(rng.random_range(0..=100u32) as f64);
        let axis = rng.random_range(0..5usize);
        for spec in &specs {
            let s = Strategy::parse(spec).unwrap();
            let Some(reads_flags) = s.reusable() else {
                continue;
            };
            let keep = s.effective_keep_recent(Some(axis));
            // Another stream always; other flags where the rule reads none (the oracle is
            // handed the truth, a rule that reads its flags the same ones).
            let other = if reads_flags { &first } else { &second };
            let (x_flags, y_flags) = (s.flags(&h.truth, &first), s.flags(&h.truth, other));
            let x = s.apply(View::new(&h, x_flags), cap, keep, cell, &mut a);
            let y = s.apply(View::new(&h, y_flags), cap, keep, !cell, &mut b);
            assert_eq!(x, y, "{spec}: outcome");
            assert_eq!(a.items, b.items, "{spec}: items");
            assert_eq!(a.cost, b.cost, "{spec}: cost");
            assert_eq!(score(&h, x, &a), score(&h, y, &b), "{spec}: scores");
            checked[usize::from(reads_flags)] += 1;
        }
    }
    assert!(checked.iter().all(|&n| n > 1000), "{checked:?}");
}
