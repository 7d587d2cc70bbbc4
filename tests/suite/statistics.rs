//! Numbers a reviewer accepts: infeasible cells counted, intervals by history, paired
//! comparisons — worked by hand, and the intervals' coverage simulated.

use crate::common::*;
use ctxlab::stats::Summary;
use std::collections::HashMap;
use std::path::Path;

/// Three histories (chars; gaps cost 1), worked at a 50 % budget with true flags:
///
/// - A: `aaaa`* `bbbbbbbb` `cc`* — total 16, capacity 8. `required` keeps both flagged
///   records (4 + 1 + 2 = 7) and cannot add `bbbbbbbb`: retention 1. `recent` keeps `cc`, then
///   `bbbbbbbb` does not fit: 1 of 2, retention 0.5.
/// - B: `aaaaaaaaaa`* `bb` — total 13, capacity 6. The flagged record alone (10) does not
///   fit: `required` is infeasible, all-cells retention 0. `recent` keeps `bb`: retention 0.
/// - C: `a` `bbbb`* `cccccc` — total 13, capacity 6. `required` keeps `bbbb` (4) and cannot
///   add `cccccc`: retention 1. `recent` keeps `cccccc` (6): retention 0.
///
/// So `required`: feasible-only mean (1 + 1) / 2 = 1, all-cells mean (1 + 0 + 1) / 3 = 2/3.
/// `recent`: 1/6 either way. Paired, `required` − `recent` per history: 0.5, 0, 1 — mean 0.5,
/// sd 0.5, by history ± t(0.975, 2) · 0.5 / √3 = ± 4.3027 · 0.288675 = ± 1.242081; better in 2
/// of 3 histories, worse in none, tied in one (B).
const HISTORIES: &str = r#"{"history": "A", "id": 1, "text": "aaaa", "required": true}
{"history": "A", "id": 2, "text": "bbbbbbbb"}
{"history": "A", "id": 3, "text": "cc", "required": true}
{"history": "B", "id": 1, "text": "aaaaaaaaaa", "required": true}
{"history": "B", "id": 2, "text": "bb"}
{"history": "C", "id": 1, "text": "a"}
{"history": "C", "id": 2, "text": "bbbb", "required": true}
{"history": "C", "id": 3, "text": "cccccc"}
"#;

const EXPERIMENT: &str = r#"
name = "three"
seed = 1
[histories]
files = ["three.jsonl"]
[sweep]
strategies = ["recent", "required"]
budgets = [50]
[compare]
baseline = "recent"
[output]
dir = "out"
formats = ["csv"]
"#;

/// The rows of a CSV table as maps from column to field.
fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|_| panic!("{key}: {:?}", row[key]))
}

#[test]
fn three_histories_worked_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.jsonl"), HISTORIES).unwrap();
    std::fs::write(dir.path().join("e.toml"), EXPERIMENT).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "e.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = read_csv(&dir.path().join("out/summary.csv"));
    let get = |s: &str| summary.iter().find(|r| r["strategy"] == s).unwrap();
    let required = get("required");
    assert_eq!(required["n"], "3");
    assert_eq!(required["n_histories"], "3");
    assert_eq!(required["n_feasible"], "2");
    assert_eq!(num(required, "required_retention_feasible_mean"), 1.0);
    assert!((num(required, "required_retention_all_mean") - 2.0 / 3.0).abs() < 1e-9);
    assert!((num(required, "feasible_mean") - 2.0 / 3.0).abs() < 1e-9);
    let recent = get("recent");
    assert!((num(recent, "required_retention_all_mean") - 1.0 / 6.0).abs() < 1e-9);
    assert!((num(recent, "required_retention_feasible_mean") - 1.0 / 6.0).abs() < 1e-9);

    let compare = read_csv(&dir.path().join("out/compare.csv"));
    let pair = compare
        .iter()
        .find(|r| r["measure"] == "required_retention_all")
        .unwrap();
    assert_eq!(
        (pair["strategy"].as_str(), pair["baseline"].as_str()),
        ("required", "recent")
    );
    assert_eq!(
        (pair["n"].as_str(), pair["n_histories"].as_str()),
        ("3", "3")
    );
    assert!((num(pair, "diff_mean") - 0.5).abs() < 1e-9);
    let half = 4.3027 * 0.5 / 3f64.sqrt();
    assert!((num(pair, "diff_ci_low") - (0.5 - half)).abs() < 1e-6);
    assert!((num(pair, "diff_ci_high") - (0.5 + half)).abs() < 1e-6);
    assert!((num(pair, "share_better") - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(num(pair, "share_worse"), 0.0);
    // B's difference is exactly 0 (0 − 0): tied, and the three shares add up to 1.
    assert!((num(pair, "share_tied") - 1.0 / 3.0).abs() < 1e-9);
    let shares: f64 = ["share_better", "share_worse", "share_tied"]
        .iter()
        .map(|k| num(pair, k))
        .sum();
    assert!((shares - 1.0).abs() < 1e-12, "{shares}");
    // Reduction is compared where both are feasible: A and C.
    let reduction = compare
        .iter()
        .find(|r| r["measure"] == "reduction")
        .unwrap();
    assert_eq!(reduction["n"], "2");
}

#[test]
fn compare_refuses_what_the_run_does_not_hold_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.jsonl"), HISTORIES).unwrap();
    let text = EXPERIMENT.replace("formats = [\"csv\"]", "formats = [\"parquet\", \"csv\"]");
    std::fs::write(dir.path().join("e.toml"), text).unwrap();
    assert!(ctxlab(dir.path(), &["sweep", "e.toml", "-q"])
        .status
        .success());
    let out = dir.path().join("out");
    let from_sweep = std::fs::read(out.join("compare.csv")).unwrap();
    std::fs::remove_file(out.join("compare.parquet")).unwrap();
    std::fs::remove_file(out.join("compare.csv")).unwrap();
    let before = std::fs::read(out.join("manifest.json")).unwrap();
    for (args, needles) in [
        (
            vec!["--baseline", "newest"],
            vec!["--baseline", "unknown strategy `newest`"],
        ),
        (
            vec!["--baseline", "oracle"],
            vec!["--baseline", "\"oracle\" was not swept", "recent, required"],
        ),
        (
            vec!["--baseline", "recent", "--measure", "cost"],
            vec![
                "--measure",
                "\"cost\" is not a paired measure",
                "reduction, required_retention_all",
            ],
        ),
    ] {
        let mut all = vec!["compare", "out"];
        all.extend(args);
        assert_fails_with(&ctxlab(dir.path(), &all), &needles);
        assert!(!out.join("compare.parquet").exists());
        assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), before);
    }
    let o = ctxlab(dir.path(), &["compare", "out", "--baseline", "recent"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("required_retention_all"));
    assert!(out.join("compare.parquet").is_file());
    // The same table the sweep wrote against the same baseline, byte for byte.
    assert_eq!(std::fs::read(out.join("compare.csv")).unwrap(), from_sweep);
}

/// SplitMix64: a tiny, seedable generator for the simulation.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 200 repetitions of a small sweep with strong within-history correlation: 30 histories,
/// each with its own level μ_h ~ U(0, 1) shared by its 5 replicates (each adds U(−0.05, 0.05)),
/// so the true mean is 0.5. The interval by history covers it in 92–98 % of repetitions; the
/// interval that takes the 150 cells as independent does not.
#[test]
fn intervals_by_history_cover_the_true_mean() {
    let (mut by_history, mut by_cell) = (0, 0);
    let repetitions = 200;
    let mut rng = Rng(20261201);
    for _ in 0..repetitions {
        let mut s = Summary::new(1, &[false], 1, &[]);
        let mut scratch = s.partials();
        let mut all = Vec::new();
        for _ in 0..30 {
            let level = rng.unit();
            let values: Vec<f64> = (0..5).map(|_| level + (rng.unit() - 0.5) * 0.1).collect();
            all.extend(values.iter().copied());
            s.add_history(&mut scratch, values.iter().map(|&x| (0, [Some(x)])));
        }
        let acc = &s.groups[0].measures[0];
        let (lo, hi) = acc.interval().unwrap();
        by_history += usize::from(lo <= 0.5 && 0.5 <= hi);
        let n = all.len() as f64;
        let mean = acc.mean().unwrap();
        let half = 1.96 * acc.sd().unwrap() / n.sqrt();
        by_cell += usize::from(mean - half <= 0.5 && 0.5 <= mean + half);
    }
    let share = |k: usize| k as f64 / repetitions as f64;
    let (h, c) = (share(by_history), share(by_cell));
    assert!((0.92..=0.98).contains(&h), "by history: {h}");
    assert!(c < 0.85, "by cell: {c}");
    // The figures of this seed, for the record.
    assert_eq!((by_history, by_cell), (BY_HISTORY, BY_CELL), "{h} {c}");
}

const BY_HISTORY: usize = 192;
const BY_CELL: usize = 119;
