//! The compactions table: a session's compactions worked by hand (k, tokens, retention by
//! region, the cache after), a summary summarised twice with the simulated recall, and the
//! table's determinism across threads, shards and an interrupted run.

use crate::common::*;
use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{
    compaction_stream, simulate_logged, CacheRules, CompactionEvent, Compactor, SessionConfig,
    SessionScratch, TriggerMode,
};
use ctxlab::summariser::{Simulated, Summariser};
use ctxlab::view::View;
use ctxlab::{CostModel, Strategy};
use std::path::Path;

use Kind::{Assistant as A, ToolResult as T, User as U};

/// Records of the given kinds and lengths (chars), required where `req` says so; each gap
/// between records costs 1.
fn history(spec: &[(Kind, usize, bool)]) -> CostedHistory {
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len, req))| {
            let mut r = Record::new(i as u64 + 1, "x".repeat(len))
                .kind(kind)
                .required(req);
            if kind == T {
                r = r.tool("bash");
            }
            r
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// The session's compactions and its regions at the end.
fn logged(
    h: &CostedHistory,
    compactor: &dyn Compactor,
    c: &SessionConfig,
    stream: u64,
) -> (Vec<CompactionEvent>, [Option<f64>; 3]) {
    let strategy = compactor;
    let mut log = Vec::new();
    let m = simulate_logged(
        h,
        &h.truth,
        strategy,
        c,
        stream,
        &mut SessionScratch::default(),
        &mut log,
    );
    assert_eq!(
        m.run.compactions as usize,
        log.len(),
        "one row per compaction"
    );
    (log, m.retention.regions)
}

#[test]
fn three_compactions_of_recent_worked_by_hand() {
    // Window 20, the context trigger at ceil(20 × 0.5) = 10, capacity floor(20 × 0.5) = 10;
    // a prefix cache with breakpoints at the end of each input and no minimum length.
    let c = SessionConfig {
        window: 20,
        ratio: 0.5,
        target: 0.5,
        trigger: TriggerMode::Context,
        cache: CacheRules {
            min_tokens: 0,
            ..SessionConfig::default().cache
        },
        ..SessionConfig::default()
    };
    let h = history(&[
        (U, 4, true),  // r0, the first user turn
        (A, 2, false), // r1 call 1
        (T, 3, true),  // r2
        (A, 1, false), // r3 call 2
        (T, 5, true),  // r4
        (A, 2, false), // r5 call 3
        (T, 3, true),  // r6
        (A, 1, false), // r7 call 4
    ]);
    let recent = Strategy::parse("recent").unwrap();
    let (log, end) = logged(&h, &recent, &c, 0);
    // Call 1: input [r0] = 4, cached: read 0 + write 4. Then the context [r0 r1 r2] =
    // 4 + 2 + 3 + 2 gaps = 11 ≥ 10: compaction k = 1 before call 2. `recent` keeps the newest
    // that fit under 10: r2 (3), r1 (3 + 1 + 2 = 6); r0 would make 11. After: 6.
    //   Required appeared r0, r2; carried r2: 1 of 2. Regions of 3 records (floor(3r/3)):
    //   r0 oldest (required, lost: 0), r1 middle (none required), r2 newest (kept: 1).
    //   First user turn r0 (up to call 1): 1 required, 0 carried.
    //   Call 2 sends [r1 r2] = 6: no common prefix with [r0], so the 4 cached tokens are
    //   invalidated and it writes 6.
    // Call 2's output r3 (1) and r4 (5): [r1 r2 r3 r4] = 6 + 1 + 1 + 1 + 5 = 14 ≥ 10:
    // compaction k = 2 before call 3. Kept: r4 (5), r3 (7); r2 would make 11. After: 7.
    //   Required appeared r0, r2, r4; carried r4. Regions of 5 (floor(3r/5)): {r0 r1},
    //   {r2 r3}, {r4}: 0, 0, 1. Call 3 sends [r3 r4] = 7: the 6 cached by call 2 are
    //   invalidated, 7 written.
    // Then r5 (2), r6 (3): [r3 r4 r5 r6] = 7 + 1 + 2 + 1 + 3 = 14: k = 3 before call 4. Kept
    // r6 (3), r5 (6); r4 would make 12. After: 6.
    //   Required appeared r0, r2, r4, r6; carried r6. Regions of 7 (floor(3r/7)): {r0 r1 r2},
    //   {r3 r4}, {r5 r6}: 0, 0, 1. Call 4 sends [r5 r6] = 6: 7 invalidated, 6 written.
    let rows: Vec<_> = log
        .iter()
        .map(|e| {
            (
                e.k,
                e.call,
                e.tokens_before,
                e.tokens_after,
                e.summary_tokens,
                e.required.appeared,
                e.required.carried,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (1, 2, 11, 6, 0, 2, 1.0),
            (2, 3, 14, 7, 0, 3, 1.0),
            (3, 4, 14, 6, 0, 4, 1.0)
        ]
    );
    let regions: Vec<_> = log.iter().map(|e| e.regions).collect();
    assert_eq!(
        regions,
        [
            [Some(0.0), None, Some(1.0)],
            [Some(0.0), Some(0.0), Some(1.0)],
            [Some(0.0), Some(0.0), Some(1.0)]
        ]
    );
    let cache: Vec<_> = log
        .iter()
        .map(|e| e.next.map(|n| (n.invalidated, n.cache_write)))
        .collect();
    assert_eq!(cache, [Some((4, 6)), Some((6, 7)), Some((7, 6))]);
    for e in &log {
        assert_eq!(
            (e.first_turn.required, e.first_turn.required_carried),
            (1, 0.0)
        );
        assert!(!e.failed);
        // These records hold no fact (no token of their own).
        assert_eq!((e.needed_facts, e.needed_facts_carried), (0, 0));
    }
    // At the end [r5 r6 r7]; regions of 8 (floor(3r/8)): {r0 r1 r2}, {r3 r4 r5}, {r6 r7}:
    // r0, r2 lost; r4 lost; r6 kept.
    assert_eq!(end, [Some(0.0), Some(0.0), Some(1.0)]);
}

/// Everything but the newest `keep` entries becomes one summary of `size` that carries every
/// record it replaces verbatim from the context (a first summary that keeps all); a summary
/// it summarises again goes through `summariser`, as the replay applies it.
struct KeepAllThenResummarise {
    keep: usize,
    size: u64,
    summariser: Summariser,
}

impl Compactor for KeepAllThenResummarise {
    fn compact(&self, view: View, _: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        out.clear(view.len());
        let n = view.len();
        let head = n - self.keep.min(n);
        if head > 0 {
            out.push(
                Item::Summary {
                    first: 0,
                    end: head,
                    cost: self.size,
                },
                self.size,
                view.separator,
            );
            for j in 0..head {
                out.summary_kept[j] = true;
            }
        }
        for j in head..n {
            out.push(Item::Verbatim(j), view.costs[j], view.separator);
        }
        Outcome::Feasible
    }

    fn summariser(&self) -> Option<&Summariser> {
        Some(&self.summariser)
    }

    fn keep_recent(&self, _: Option<usize>) -> usize {
        self.keep
    }
}

#[test]
fn a_summary_of_a_summary_applies_the_recall_again_each_time() {
    // r0 (the task), r2 and r4 are required and appear long before the first compaction,
    // which puts them in its summary, all kept. Compaction 2 summarises that summary again:
    // each required record r survives with the simulated summariser's draw
    // `keeps(flag, kind, compaction_stream(s, 1), r)` (recall 0.5 flagged); compaction 3
    // again with `compaction_stream(s, 2)`. So after k = 3 a record survives exactly when
    // both draws keep it: the recall applied twice, 0.25 in expectation.
    let mut spec = vec![(U, 40, true), (A, 20, false), (T, 60, true)];
    spec.extend([(A, 20, false), (T, 60, true)]);
    spec.extend([(A, 20, false), (T, 60, false)].repeat(30));
    let h = history(&spec);
    let simulated = Simulated::by_flag(0.5, 0.0);
    let compactor = KeepAllThenResummarise {
        keep: 2,
        size: 50,
        summariser: Summariser::Simulated(simulated),
    };
    let c = SessionConfig {
        window: 2000,
        ratio: 0.5,
        trigger: TriggerMode::Usage,
        ..SessionConfig::default()
    };
    let required = [(0u64, U), (2, T), (4, T)];
    let (mut twice, mut once) = (0.0, 0.0);
    let streams = 200;
    for s in 0..streams {
        let (log, _) = logged(&h, &compactor, &c, s);
        assert!(log.len() >= 3, "{}", log.len());
        // k = 1 kept all three.
        assert_eq!(log[0].required.carried, 3.0);
        let kept = |upto: u32| {
            required
                .iter()
                .filter(|&&(r, kind)| {
                    (1..upto).all(|i| simulated.keeps(true, kind, compaction_stream(s, i), r))
                })
                .count() as f64
        };
        assert_eq!(log[1].required.carried, kept(2), "stream {s}, k = 2");
        assert_eq!(log[2].required.carried, kept(3), "stream {s}, k = 3");
        once += log[1].required.carried;
        twice += log[2].required.carried;
    }
    // Over 600 record draws each: 0.5 once, 0.25 twice, within four standard errors.
    let n = 3.0 * streams as f64;
    assert!(
        (once / n - 0.5).abs() < 4.0 * (0.25f64 / n).sqrt(),
        "{once}"
    );
    assert!(
        (twice / n - 0.25).abs() < 4.0 * (0.1875f64 / n).sqrt(),
        "{twice}"
    );
}

const LOOP: &str = r#"
name = "loop"
seed = 3
replicates = 2
[histories]
generate = { count = 4, records = [120, 200], required_share = 0.15, required_position = "early", seed = 2 }
[session]
strategies = ["recent", "required", { name = "summary", keep_recent = 4 }]
windows = [2500]
ratios = [0.6]
note_rates = [0.0]
false_negative = [0.0]
false_positive = [0.0]
[output]
dir = "out"
"#;

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

fn read(d: &Path, f: &str) -> Vec<u8> {
    std::fs::read(d.join(f)).unwrap_or_else(|e| panic!("{}: {e}", d.join(f).display()))
}

#[test]
fn the_compactions_table_is_the_same_across_threads_shards_and_a_resumed_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("loop.toml"), LOOP).unwrap();
    for t in ["1", "2"] {
        run_ok(d, &["sweep", "loop.toml", "-q", "--threads", t, "--out", t]);
    }
    let single = read(d, "1/compactions.csv");
    assert_eq!(single, read(d, "2/compactions.csv"), "threads");
    assert_eq!(
        read(d, "1/compactions.parquet"),
        read(d, "2/compactions.parquet")
    );
    // One row per compaction the sessions table counts.
    let sessions = String::from_utf8(read(d, "1/sessions.csv")).unwrap();
    let header: Vec<&str> = sessions.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|&c| c == "compactions").unwrap();
    // Every field before `compactions` is unquoted (the noise label is its own column
    // further left and holds commas: count from the end instead).
    let from_end = header.len() - at;
    let counted: usize = sessions
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[f.len() - from_end].parse::<usize>().unwrap()
        })
        .sum();
    let lines = String::from_utf8(single.clone()).unwrap().lines().count() - 1;
    assert_eq!(lines, counted);
    assert!(counted > 0);

    for shard in ["0/2", "1/2"] {
        run_ok(
            d,
            &[
                "sweep",
                "loop.toml",
                "-q",
                "--shard",
                shard,
                "--out",
                "sharded",
            ],
        );
    }
    run_ok(d, &["merge", "sharded"]);
    let mut joined = read(d, "sharded/compactions-csv/shard=0/part.csv");
    let second = read(d, "sharded/compactions-csv/shard=1/part.csv");
    let body = second.iter().position(|&b| b == b'\n').unwrap() + 1;
    joined.extend_from_slice(&second[body..]);
    assert_eq!(joined, single, "shards");

    let killed = ctxlab_env(
        d,
        &[
            "sweep",
            "loop.toml",
            "-q",
            "--chunk-cells",
            "1",
            "--out",
            "resumed",
        ],
        ("CTXLAB_FAULT", "chunks:2"),
    );
    assert!(!killed.status.success());
    run_ok(
        d,
        &[
            "sweep",
            "loop.toml",
            "-q",
            "--chunk-cells",
            "1",
            "--out",
            "resumed",
            "--resume",
        ],
    );
    assert_eq!(read(d, "resumed/compactions.csv"), single, "resumed");
    assert_eq!(
        read(d, "resumed/compactions.parquet"),
        read(d, "1/compactions.parquet")
    );
}
