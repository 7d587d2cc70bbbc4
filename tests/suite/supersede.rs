//! Superseded records: a session that keeps an overridden record and drops the one overriding
//! it is stale, worked by hand; the generator's `supersede_rate` end to end and refused out of
//! range.

use crate::common::*;
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate, SessionConfig, SessionScratch, TriggerMode};
use ctxlab::{CostModel, Strategy};
use std::collections::HashMap;
use std::path::Path;

use Kind::{Assistant as A, ToolResult as T, User as U};

/// r0 (the task, required) is overridden by r4 (required); every gap costs 1.
fn history() -> CostedHistory {
    let spec = [
        (U, 4, true),  // r0
        (A, 2, false), // r1 call 1
        (T, 3, true),  // r2
        (A, 3, false), // r3 call 2
        (T, 4, true),  // r4, overrides r0
        (A, 2, false), // r5 call 3
        (T, 3, true),  // r6
        (A, 1, false), // r7 call 4
    ];
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len, req))| {
            Record::new(i as u64 + 1, "x".repeat(len))
                .kind(kind)
                .required(req)
        })
        .collect();
    let mut h = History::new("h", records);
    h.supersessions = vec![(0, 4)];
    CostedHistory::new(&h, CostModel::Chars)
}

/// `required` under the given flags: (stale at the end, stale over agent calls).
fn stale(flags: &[bool]) -> (Option<u32>, u64) {
    // Window 20: compaction once the context reaches ceil(20 × 0.5) = 10, down to 10.
    let c = SessionConfig {
        window: 20,
        ratio: 0.5,
        target: 0.5,
        trigger: TriggerMode::Context,
        ..SessionConfig::default()
    };
    let required = Strategy::parse("required").unwrap();
    let m = simulate(
        &history(),
        flags,
        &required,
        &c,
        0,
        &mut SessionScratch::default(),
    );
    assert!(m.run.completed);
    (m.stale.end, m.stale.calls)
}

#[test]
fn a_session_that_keeps_the_old_decision_and_drops_the_new_is_stale() {
    let flags = |on: &[usize]| (0..8).map(|i| on.contains(&i)).collect::<Vec<_>>();
    // Only r0 flagged (r4 a false negative). `required` keeps the flagged, then the newest
    // that fit under 10:
    //   call 1 reads [r0] (r4 not yet appeared: nothing to be stale on);
    //   [r0 r1 r2] = 4+1+2+1+3 = 11: r0 (4), r2 (8), r1 would make 11 → call 2 reads [r0 r2];
    //   [r0 r2 r3 r4] = 8+1+3+1+4 = 17: r0 (4), r4 (9), r3 and r2 would make 13 → call 3 reads
    //   [r0 r4]: both, not stale;
    //   [r0 r4 r5 r6] = 9+1+2+1+3 = 16: r0 (4), r6 (8), r5 would make 11, r4 13 → call 4 reads
    //   [r0 r6]: r0 without r4, stale;
    //   the end [r0 r6 r7]: stale.
    assert_eq!(stale(&flags(&[0])), (Some(1), 1));
    // Both flagged: both kept at every call; only the new one: never stale.
    assert_eq!(stale(&flags(&[0, 4])), (Some(0), 0));
    assert_eq!(stale(&flags(&[4])), (Some(0), 0));
}

const EXP: &str = r#"
name = "s"
seed = 7
[histories]
generate = { count = 3, records = [400, 500], required_share = 0.05, seed = 4, supersede_rate = 0.5 }
cost = "approx-tokens"
[session]
strategies = ["recent", "summary", "required"]
windows = [8000]
ratios = [0.8]
false_negative = [0.3]
target = 0.5
[output]
dir = "out"
"#;

fn read_csv(path: &Path) -> (Vec<String>, Vec<HashMap<String, String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            headers
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    (headers, rows)
}

#[test]
fn a_sweep_reports_stale_sessions_and_a_suffix_is_never_stale() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("exp.toml"), EXP).unwrap();
    let o = ctxlab(d.path(), &["sweep", "exp.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (headers, rows) = read_csv(&d.path().join("out/sessions.csv"));
    // The stale columns, the cache, then the summary's size (each added at the end).
    assert_eq!(
        headers[headers.len() - 5..],
        [
            "stale_end",
            "stale_calls",
            "cache",
            "summary_ratio",
            "summary_cap"
        ]
    );
    let sum = |strategy: &str, key: &str| -> u64 {
        rows.iter()
            .filter(|r| r["strategy"] == strategy)
            .map(|r| r[key].parse::<u64>().unwrap_or(0))
            .sum()
    };
    // `recent` keeps a suffix of the history: whatever holds the old record holds every
    // later one, the new included.
    assert_eq!(
        (sum("recent", "stale_end"), sum("recent", "stale_calls")),
        (0, 0)
    );
    // Re-summarising loses records independently of their order: it does go stale here.
    assert!(sum("summary", "stale_calls") > 0);
    // Without supersessions nothing is stale.
    let o = ctxlab(
        d.path(),
        &[
            "sweep",
            "exp.toml",
            "-q",
            "--force",
            "--set",
            "histories.generate.supersede_rate=0",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (_, rows) = read_csv(&d.path().join("out/sessions.csv"));
    assert!(rows.iter().all(|r| r["stale_calls"] == "0"));
}

#[test]
fn a_supersede_rate_outside_0_1_is_refused_by_key_and_nothing_is_written() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("exp.toml"), EXP).unwrap();
    for bad in ["1.5", "-0.2"] {
        let set = format!("histories.generate.supersede_rate={bad}");
        let o = ctxlab(d.path(), &["sweep", "exp.toml", "-q", "--set", &set]);
        assert_fails_with(
            &o,
            &[
                "key `histories.generate.supersede_rate`",
                &format!("expected a probability from 0 to 1, found {bad}"),
            ],
        );
        assert!(!d.path().join("out").exists(), "{bad} created the folder");
    }
}
