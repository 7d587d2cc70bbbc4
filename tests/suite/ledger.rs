//! The ledger of each compaction (summary cost, cache writes caused, break-even) worked by hand
//! on a session whose compactions invalidate a known cached prefix, with a fixed per-call prefix
//! that no compaction invalidates.

use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{
    simulate_billed, simulate_logged, CacheKind, CacheRules, Ledger, LedgerTotals, Prices,
    SessionConfig, SessionScratch, TriggerMode,
};
use ctxlab::{CostModel, Strategy};

use Kind::{Assistant as A, ToolResult as T, User as U};

/// Records of the given kinds and lengths (chars); each gap between records costs 1.
fn history(spec: &[(Kind, usize)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len))| {
            let r = Record::new(i as u64 + 1, "x".repeat(len)).kind(kind);
            match kind {
                T => r.tool("bash"),
                _ => r,
            }
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// Window 80: the context trigger at 80 × 0.5 = 40 of the whole input, fixed prefix of 10
/// included, and `recent`'s room 80 × 0.5 − 10 = 30; $1 a token of input, reads 0.1×, writes
/// 1.25×, output free.
fn config(kind: CacheKind) -> SessionConfig {
    SessionConfig {
        window: 80,
        ratio: 0.5,
        target: 0.5,
        trigger: TriggerMode::Context,
        prefix_tokens: 10,
        cache: CacheRules::new(kind, 0),
        prices: Prices {
            input: 1e6,
            output: 0.0,
            cache_read_factor: 0.1,
            cache_write_factor: 1.25,
        },
        ..SessionConfig::default()
    }
}

/// Per compaction: tokens before, after, and the next call's `prefix_invalidated`.
type Tokens = Vec<(u64, u64, Option<u64>)>;

fn run(kind: CacheKind) -> (Tokens, Vec<Ledger>, LedgerTotals) {
    let h = history(&[
        (U, 5),  // r0
        (A, 2),  // r1 call 1
        (T, 10), // r2
        (A, 2),  // r3 call 2
        (T, 10), // r4
        (A, 1),  // r5 call 3
        (T, 2),  // r6
        (A, 1),  // r7 call 4
        (T, 2),  // r8
        (A, 1),  // r9 call 5
    ]);
    let recent = Strategy::parse("recent").unwrap();
    let mut log = Vec::new();
    let m = simulate_logged(
        &h,
        &h.truth,
        &recent,
        &config(kind),
        0,
        &mut SessionScratch::default(),
        &mut log,
    );
    let tokens = log
        .iter()
        .map(|e| {
            (
                e.tokens_before,
                e.tokens_after,
                e.next.map(|n| n.invalidated),
            )
        })
        .collect();
    (tokens, log.iter().map(|e| e.ledger).collect(), m.ledger)
}

#[test]
fn a_compaction_that_invalidates_a_cached_prefix_worked_by_hand() {
    // Anthropic's cache, a breakpoint after the fixed prefix and at the end of each input.
    // Call 1 sends 10 + [r0] = 15: writes 15; the cache holds 15.
    // Call 2 sends 10 + [r0 r1 r2] = 10 + 5+1+2+1+10 = 29 < 40: reads 10 + 5, writes 14;
    // the cache holds 29.
    // Before call 3: 29 + 1+2+1+10 = 43 ≥ 40, compaction k = 1. `recent` keeps within 30:
    // r4 10, r3 13, r2 24, r1 27 (r0 would make 33). After: 10 + 27 = 37; freed 6.
    //   Call 3 sends 10 + [r1 r2 r3 r4]: its first entry is new, so it reads the prefix (10)
    //   and writes 27. Invalidated: 29 − 10 = 19 (r0 and what follows it; not the prefix).
    //   Uncompacted: 43 sent, the 29 held read, 14 written. Caused: 27 − 14 = 13 (r1 r2
    //   written again). Saving at call 3: (2.9 + 17.5) − (1.0 + 33.75) = −14.35 dollars; each
    //   later call saves 6 × 0.1 = 0.6, so it pays at call 1 + ceil(14.35 / 0.6) = 25 after
    //   it; the run makes 3 (calls 3–5): never.
    // Before call 4: 37 + 1+1+1+2 = 42: k = 2. Kept r6 2, r5 4, r4 15, r3 18, r2 29 (r1 would
    // make 32). After 10 + 29 = 39; freed 3. Call 4 reads 10, writes 29; the cache held
    // 10 + 27 = 37: invalidated 27. Uncompacted: 42 sent, 37 read, 5 written; caused 29 − 5 =
    // 24. Saving (3.7 + 6.25) − (1.0 + 36.25) = −27.3, then 0.3 a call: 92 calls; 2 made: never.
    // Before call 5: 39 + 1+1+1+2 = 44: k = 3. Kept r8 2, r7 4, r6 7, r5 9, r4 20, r3 23 (r2
    // would make 34). After 10 + 23 = 33; freed 11. Call 5 reads 10, writes 23; held 39:
    // invalidated 29. Uncompacted: 44, 39 read, 5 written; caused 23 − 5 = 18. Saving
    // (3.9 + 6.25) − (1.0 + 28.75) = −19.6, then 1.1 a call: 19 calls; 1 made: never.
    let (tokens, ledgers, totals) = run(CacheKind::Anthropic);
    assert_eq!(
        tokens,
        [(43, 37, Some(19)), (42, 39, Some(27)), (44, 33, Some(29))]
    );
    let ledger: Vec<_> = ledgers
        .iter()
        .map(|l| (l.summary_cost, l.cache_write, l.invalidated, l.break_even))
        .collect();
    assert_eq!(
        ledger,
        [
            (0.0, 13, 19, None),
            (0.0, 24, 27, None),
            (0.0, 18, 29, None)
        ]
    );
    // The session's sums: 3 breaks, 13 + 24 + 18 = 55 tokens written again, no summary call.
    assert_eq!(
        totals,
        LedgerTotals {
            cache_breaks: 3,
            cache_write_tokens: 55,
            cost: 0.0
        }
    );
}

#[test]
fn without_a_cache_a_compaction_that_frees_tokens_pays_at_once() {
    // No cache: every call pays its whole input, so the call after each compaction already
    // saves what it freed (6, 3, 11 dollars), nothing is written and nothing invalidated.
    let (tokens, ledgers, totals) = run(CacheKind::None);
    assert_eq!(
        tokens,
        [(43, 37, Some(0)), (42, 39, Some(0)), (44, 33, Some(0))]
    );
    for l in &ledgers {
        assert_eq!(
            (l.cache_write, l.invalidated, l.break_even),
            (0, 0, Some(1))
        );
    }
    assert_eq!(totals, LedgerTotals::default());
}

#[test]
fn one_replay_billed_under_every_cache_is_each_cache_replayed_alone() {
    // The session of `run`, billed under every modelled cache by one replay: each cache's
    // measures and compactions must be those of its own replay (a sweep's `caches` axis).
    let h = history(&[
        (U, 5),
        (A, 2),
        (T, 10),
        (A, 2),
        (T, 10),
        (A, 1),
        (T, 2),
        (A, 1),
        (T, 2),
        (A, 1),
    ]);
    let recent = Strategy::parse("recent").unwrap();
    let cfgs: Vec<SessionConfig> = CacheKind::ALL
        .into_iter()
        .filter(|k| k.as_str() != "recorded")
        .map(config)
        .collect();
    let mut scratch = SessionScratch::default();
    let (mut alone, mut alone_log) = (Vec::new(), Vec::new());
    for cfg in &cfgs {
        let m = simulate_logged(&h, &h.truth, &recent, cfg, 0, &mut scratch, &mut alone_log);
        alone.push(m);
    }
    let (mut billed, mut billed_log) = (Vec::new(), Vec::new());
    simulate_billed(
        &h,
        &h.truth,
        &recent,
        &cfgs,
        0,
        &mut scratch,
        &mut billed_log,
        |m| billed.push(m),
    );
    assert!(alone_log.len() >= 2 * cfgs.len(), "compactions to compare");
    assert_eq!(billed, alone);
    assert_eq!(billed_log, alone_log);
}
