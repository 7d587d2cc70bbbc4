//! Label-noise models (`sweep.noise`, `session.noise`): each model's rates worked by hand on
//! records built so the expected share of flipped flags is known, common random numbers
//! (nesting across rates, `correlated` against `uniform`), determinism through the binary at any
//! thread count and shard split, and one clear error per bad spec.

use crate::common::*;
use ctxlab::noise::{Draws, NoiseLevel, NoiseModel, Records};
use ctxlab::Kind;
use polars::prelude::{DataFrame, ParquetReader, SerReader};
use std::path::Path;

const SEED: u64 = 17;
/// Records per test history: the binomial sd of a share at p = 0.5 is √(0.25 / 40 000) =
/// 0.0025, so a tolerance of 0.015 is six of them.
const N: usize = 40_000;
const TOLERANCE: f64 = 0.015;

fn model(spec: &str) -> NoiseModel {
    NoiseModel::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// The flags of `records` under `spec` for replicate `replicate` of history 0.
fn flags_of(spec: &str, records: Records, replicate: u64) -> Vec<bool> {
    model(spec).flags(records, SEED, 0, replicate)
}

/// The share of `indices` whose flag differs from the base flag.
fn flipped(base: &[bool], flags: &[bool], indices: impl Iterator<Item = usize>) -> f64 {
    let (mut n, mut wrong) = (0usize, 0usize);
    for i in indices {
        n += 1;
        wrong += usize::from(base[i] != flags[i]);
    }
    wrong as f64 / n as f64
}

fn near(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() < TOLERANCE,
        "{what}: {got} is not within {TOLERANCE} of {want}"
    );
}

/// N records: even ones required, odd ones not; kinds, costs as given by index.
struct Built {
    flags: Vec<bool>,
    kinds: Vec<Kind>,
    costs: Vec<u64>,
}

impl Built {
    fn new(kind: impl Fn(usize) -> Kind, cost: impl Fn(usize) -> u64) -> Built {
        Built {
            flags: (0..N).map(|i| i % 2 == 0).collect(),
            kinds: (0..N).map(kind).collect(),
            costs: (0..N).map(cost).collect(),
        }
    }

    fn plain() -> Built {
        Built::new(|_| Kind::Assistant, |_| 10)
    }

    fn records(&self) -> Records<'_> {
        Records {
            flags: &self.flags,
            kinds: &self.kinds,
            costs: &self.costs,
        }
    }

    fn required(&self) -> impl Iterator<Item = usize> + '_ {
        (0..N).filter(|&i| self.flags[i])
    }

    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..N).filter(|&i| !self.flags[i])
    }
}

#[test]
fn uniform_misses_fn_of_required_records_and_flags_fp_of_the_others() {
    let h = Built::plain();
    let f = flags_of("uniform(fn=0.25, fp=0.1)", h.records(), 0);
    near(flipped(&h.flags, &f, h.required()), 0.25, "false negatives");
    near(flipped(&h.flags, &f, h.others()), 0.1, "false positives");
    // The shorthand's flags, bit for bit: `noise::flags` is what the false_negative /
    // false_positive axes have always used.
    assert_eq!(
        f,
        ctxlab::noise::flags(&h.flags, NoiseLevel::new(0.25, 0.1), SEED, 0, 0)
    );
}

#[test]
fn by_kind_gives_each_kind_its_own_rates() {
    // Kinds alternate in pairs: records 0, 1 user; 2, 3 tool_result; ... so each kind holds
    // required and unrequired records alike.
    let h = Built::new(
        |i| {
            if (i / 2) % 2 == 0 {
                Kind::User
            } else {
                Kind::ToolResult
            }
        },
        |_| 10,
    );
    let f = flags_of(
        "by_kind(fn=0.1, fp=0.2, fn_tool_result=0.4, fp_user=0)",
        h.records(),
        0,
    );
    let hr = &h;
    let of = |kind: Kind, required: bool| {
        (0..N).filter(move |&i| hr.kinds[i] == kind && hr.flags[i] == required)
    };
    near(flipped(&h.flags, &f, of(Kind::User, true)), 0.1, "fn user");
    near(
        flipped(&h.flags, &f, of(Kind::ToolResult, true)),
        0.4,
        "fn tool_result",
    );
    assert_eq!(
        flipped(&h.flags, &f, of(Kind::User, false)),
        0.0,
        "fp_user=0"
    );
    near(
        flipped(&h.flags, &f, of(Kind::ToolResult, false)),
        0.2,
        "fp tool_result",
    );
    // Half the required records of each kind: (0.1 + 0.4) / 2 = 0.25 overall.
    near(flipped(&h.flags, &f, h.required()), 0.25, "fn overall");
    // Without overrides it is `uniform`, bit for bit.
    assert_eq!(
        flags_of("by_kind(fn=0.3, fp=0.1)", h.records(), 0),
        flags_of("uniform(fn=0.3, fp=0.1)", h.records(), 0)
    );
}

#[test]
fn by_position_rates_run_linearly_along_the_history() {
    let h = Built::plain();
    let f = flags_of(
        "by_position(fn_start=0, fn_end=0.4, fp_start=0.2, fp_end=0)",
        h.records(),
        0,
    );
    let half = N / 2;
    // fn = 0.4 x at position x: its mean over [0, ½] is 0.4 · ¼ = 0.1, over [½, 1] 0.4 · ¾ = 0.3.
    near(
        flipped(&h.flags, &f, h.required().filter(|&i| i < half)),
        0.1,
        "fn early",
    );
    near(
        flipped(&h.flags, &f, h.required().filter(|&i| i >= half)),
        0.3,
        "fn late",
    );
    near(flipped(&h.flags, &f, h.required()), 0.2, "fn overall");
    // fp = 0.2 (1 − x): 0.15 early, 0.05 late.
    near(
        flipped(&h.flags, &f, h.others().filter(|&i| i < half)),
        0.15,
        "fp early",
    );
    near(
        flipped(&h.flags, &f, h.others().filter(|&i| i >= half)),
        0.05,
        "fp late",
    );
    assert_eq!(
        model("by_position(fn_start=0, fn_end=0.4)").nominal(),
        NoiseLevel::new(0.2, 0.0)
    );
    // Constant rates are `uniform`, bit for bit.
    assert_eq!(
        flags_of(
            "by_position(fn_start=0.3, fn_end=0.3, fp_start=0.1, fp_end=0.1)",
            h.records(),
            0
        ),
        flags_of("uniform(fn=0.3, fp=0.1)", h.records(), 0)
    );
}

#[test]
fn by_length_misses_long_records_more() {
    // Costs alternate 1, 1, 3, 3 (mean 2), so each cost holds required and unrequired records.
    let h = Built::new(
        |_| Kind::ToolResult,
        |i| if (i / 2) % 2 == 0 { 1 } else { 3 },
    );
    let f = flags_of("by_length(fn=0.36, fp=0.1)", h.records(), 0);
    let hr = &h;
    let of = |cost: u64| hr.required().filter(move |&i| hr.costs[i] == cost);
    // fn_i = 1 − (1 − 0.36)^(c / 2): cost 1 → 1 − 0.64^0.5 = 1 − 0.8 = 0.2;
    // cost 3 → 1 − 0.64^1.5 = 1 − 0.512 = 0.488; overall (0.2 + 0.488) / 2 = 0.344 ≤ 0.36.
    near(flipped(&h.flags, &f, of(1)), 0.2, "fn short");
    near(flipped(&h.flags, &f, of(3)), 0.488, "fn long");
    near(flipped(&h.flags, &f, h.required()), 0.344, "fn overall");
    // False positives do not depend on length.
    near(flipped(&h.flags, &f, h.others()), 0.1, "fp");
    // Records of one length are all of the mean length: `uniform`, bit for bit.
    let even = Built::plain();
    assert_eq!(
        flags_of("by_length(fn=0.3, fp=0.1)", even.records(), 0),
        flags_of("uniform(fn=0.3, fp=0.1)", even.records(), 0)
    );
}

#[test]
fn correlated_shares_mistakes_across_replicates_at_the_uniform_rates() {
    let h = Built::plain();
    let r = h.records();
    // rho = 1: every replicate of a history has the same flags.
    let first = flags_of("correlated(rho=1, fn=0.3, fp=0.1)", r, 0);
    for replicate in 1..4 {
        assert_eq!(
            first,
            flags_of("correlated(rho=1, fn=0.3, fp=0.1)", r, replicate)
        );
    }
    // ... at the uniform rates.
    near(flipped(&h.flags, &first, h.required()), 0.3, "fn at rho=1");
    near(flipped(&h.flags, &first, h.others()), 0.1, "fp at rho=1");
    // ... but other histories draw their own.
    assert_ne!(
        first,
        model("correlated(rho=1, fn=0.3, fp=0.1)").flags(r, SEED, 1, 0)
    );
    // rho = 0: `uniform`, bit for bit, replicate by replicate.
    for replicate in 0..4 {
        assert_eq!(
            flags_of("correlated(rho=0, fn=0.3, fp=0.1)", r, replicate),
            flags_of("uniform(fn=0.3, fp=0.1)", r, replicate)
        );
    }
    // rho = 0.5, fn = 0.5 on the required records: two replicates both take the history's
    // draw with probability 0.25 (then they agree); otherwise their draws are independent and
    // disagree with probability 2 · 0.5 · 0.5 = 0.5. So they disagree on 0.75 · 0.5 = 0.375.
    let a = flags_of("correlated(rho=0.5, fn=0.5)", r, 0);
    let b = flags_of("correlated(rho=0.5, fn=0.5)", r, 1);
    near(
        flipped(&a, &b, h.required()),
        0.375,
        "disagreement at rho=0.5",
    );
    // Under `uniform` they disagree on 0.5.
    let ua = flags_of("uniform(fn=0.5)", r, 0);
    let ub = flags_of("uniform(fn=0.5)", r, 1);
    near(
        flipped(&ua, &ub, h.required()),
        0.5,
        "disagreement under uniform",
    );
}

/// Every record wrong at the lower rate is wrong at the higher one.
fn nested(base: &[bool], low: &[bool], high: &[bool]) -> bool {
    (0..base.len()).all(|i| low[i] == base[i] || high[i] != base[i])
}

#[test]
fn every_model_nests_across_rates_on_the_same_draws() {
    let h = Built::new(
        |i| {
            if i % 3 == 0 {
                Kind::ToolResult
            } else {
                Kind::User
            }
        },
        |i| 1 + (i as u64 * 7919) % 50,
    );
    let r = h.records();
    for (low, high) in [
        ("uniform(fn=0.1, fp=0.02)", "uniform(fn=0.3, fp=0.05)"),
        (
            "by_kind(fn=0.1, fp=0.02, fn_tool_result=0.2)",
            "by_kind(fn=0.2, fp=0.05, fn_tool_result=0.5)",
        ),
        (
            "by_position(fn_start=0, fn_end=0.2, fp_end=0.02)",
            "by_position(fn_start=0.1, fn_end=0.4, fp_end=0.1)",
        ),
        ("by_length(fn=0.1, fp=0.02)", "by_length(fn=0.3, fp=0.05)"),
        (
            "correlated(rho=0.6, fn=0.1, fp=0.02)",
            "correlated(rho=0.6, fn=0.3, fp=0.05)",
        ),
    ] {
        for replicate in 0..3 {
            let (l, hi) = (flags_of(low, r, replicate), flags_of(high, r, replicate));
            assert!(
                nested(&h.flags, &l, &hi),
                "{low} → {high}, replicate {replicate}"
            );
            assert_ne!(l, hi, "{low} and {high} differ somewhere");
        }
    }
    // Models at one rate share the draws: a structured model at its highest per-record rate
    // errs wherever `uniform` at a rate no higher than its lowest does. by_kind's rates are
    // 0.1 and 0.4, so `uniform(fn=0.1)` nests inside it.
    let u = flags_of("uniform(fn=0.1)", r, 0);
    let k = flags_of("by_kind(fn=0.1, fn_tool_result=0.4)", r, 0);
    assert!(nested(&h.flags, &u, &k));
}

#[test]
fn draws_are_shared_only_when_a_model_needs_them() {
    let mut d = Draws::default();
    d.fill(SEED, 0, 0, 10, false);
    assert_eq!((d.own.len(), d.history.len(), d.selector.len()), (10, 0, 0));
    let own = d.own.clone();
    d.fill(SEED, 0, 0, 10, true);
    assert_eq!(
        d.own, own,
        "the replicate's own draws do not depend on sharing"
    );
    let history = d.history.clone();
    d.fill(SEED, 0, 5, 10, true);
    assert_eq!(
        d.history, history,
        "the history's draws are the same in every replicate"
    );
    assert_ne!(d.own, own);
    assert!(model("correlated(rho=0.5)").shares_draws());
    assert!(!model("by_kind(fn=0.5)").shares_draws());
}

#[test]
fn every_bad_spec_is_one_error_naming_the_key() {
    for (spec, want) in [
        (
            "gaussian(fn=0.1)",
            "unknown noise model `gaussian`: expected one of uniform, by_kind, by_position, by_length, correlated",
        ),
        ("uniform(fn=1.5)", "noise model `uniform`: parameter `fn` expects a rate from 0 to 1, found `1.5`"),
        ("uniform(fn=high)", "parameter `fn` expects a number, found `high`"),
        ("uniform(fn=0.1, fn=0.2)", "parameter `fn` is given twice; give each parameter once"),
        ("uniform(q=0.1)", "noise model `uniform`: unknown parameter `q` (known: fn, fp)"),
        ("by_kind(fn_tools=0.2)", "noise model `by_kind`: unknown parameter `fn_tools` (known: fn, fp, fn_system, fp_system, fn_user"),
        ("correlated(fn=0.2)", "noise model `correlated`: parameter `rho` expects a rate from 0 to 1, but it is missing"),
        ("uniform(fn=0.2", "noise model \"uniform(fn=0.2\": expected `name(key=value, ...)` with a closing `)`"),
        ("by_length(0.2)", "parameter \"0.2\" should read `key=value`"),
    ] {
        let e = NoiseModel::parse(spec).unwrap_err().to_string();
        assert!(e.contains(want), "{spec}: wanted {want:?} in: {e}");
        assert!(!e.contains("strategy"), "{spec}: a noise spec is not a strategy: {e}");
    }
}

const GOOD: &str = r#"
name = "nm"
seed = 5
replicates = 3
[histories]
generate = { count = 9, records = [10, 40], required_share = 0.3, seed = 2 }
[sweep]
strategies = ["recent", "required"]
budgets = [30, 60]
noise = ["uniform(fn=0.2, fp=0.05)", "by_kind(fn=0.1, fn_tool_result=0.4)", "correlated(rho=0.8, fn=0.2, fp=0.05)"]
[output]
dir = "out"
"#;

fn err(text: &str) -> String {
    ctxlab::experiment::parse_any("exp.toml", text, &[])
        .unwrap_err()
        .to_string()
}

#[test]
fn experiment_errors_name_the_noise_key() {
    for (text, want) in [
        (
            GOOD.replace("\"by_kind(fn=0.1, fn_tool_result=0.4)\"", "\"by_kind(fn=2)\""),
            "exp.toml: key `sweep.noise[1]`: noise model `by_kind`: parameter `fn` expects a rate from 0 to 1, found `2`",
        ),
        (
            GOOD.replace("\"by_kind(fn=0.1, fn_tool_result=0.4)\"", "\"uniform(fp=0.05, fn=0.2)\""),
            "exp.toml: key `sweep.noise[1]`: uniform(fn=0.2, fp=0.05) appears twice",
        ),
        (
            GOOD.replace("noise = [", "false_negative = [0.2]\nfalse_positive = [0.05]\nnoise = ["),
            "exp.toml: key `sweep.noise[0]`: uniform(fn=0.2, fp=0.05) is also in the uniform grid of `sweep.false_negative` × `sweep.false_positive`",
        ),
        (
            GOOD.replace(
                "noise = [\"uniform(fn=0.2, fp=0.05)\", \"by_kind(fn=0.1, fn_tool_result=0.4)\", \"correlated(rho=0.8, fn=0.2, fp=0.05)\"]",
                "noise = []",
            ),
            "exp.toml: key `sweep.noise`: must not be empty",
        ),
        (
            GOOD.replace("noise = [\"uniform(fn=0.2, fp=0.05)\",", "noise = [3,"),
            "exp.toml: key `sweep.noise[0]`: invalid type",
        ),
    ] {
        let e = err(&text);
        assert!(e.contains(want), "wanted {want:?} in: {e}");
    }
    let sessions = r#"
name = "s"
seed = 3
[histories]
generate = { count = 2, records = [20, 30], required_share = 0.2 }
[session]
strategies = ["recent"]
windows = [1000]
ratios = [0.5]
noise = ["by_position(fn_start=0.1, fn_end=1.1)"]
"#;
    let e = err(sessions);
    assert!(
        e.contains("exp.toml: key `session.noise[0]`: noise model `by_position`: parameter `fn_end` expects a rate from 0 to 1, found `1.1`"),
        "{e}"
    );
}

#[test]
fn a_bad_spec_fails_the_sweep_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let text = GOOD.replace("correlated(rho=0.8, fn=0.2, fp=0.05)", "correlated(fn=0.2)");
    std::fs::write(dir.path().join("exp.toml"), text).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "--quiet"]);
    assert_fails_with(
        &o,
        &["exp.toml: key `sweep.noise[2]`: noise model `correlated`: parameter `rho` expects a rate from 0 to 1, but it is missing"],
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(!dir.path().join("out").exists(), "nothing written");
}

fn read_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

fn run(dir: &Path, args: &[&str]) {
    let o = ctxlab(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

#[test]
fn the_noise_column_names_each_model_and_the_rates_columns_its_nominal_rates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("exp.toml"), GOOD).unwrap();
    run(d, &["sweep", "exp.toml", "--quiet"]);
    let s = read_parquet(&d.join("out/summary.parquet"));
    // 2 strategies × 2 budgets × 3 models = 12 groups, each of 9 histories × 3 replicates.
    assert_eq!(s.height(), 12);
    let noise = s.column("noise").unwrap().str().unwrap();
    let fneg = s.column("false_negative").unwrap().f64().unwrap();
    let fpos = s.column("false_positive").unwrap().f64().unwrap();
    let mut seen: Vec<(String, f64, f64)> = (0..s.height())
        .map(|i| {
            (
                noise.get(i).unwrap().to_string(),
                fneg.get(i).unwrap(),
                fpos.get(i).unwrap(),
            )
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    seen.dedup();
    assert_eq!(
        seen,
        vec![
            (
                "by_kind(fn=0.1, fp=0, fn_tool_result=0.4)".to_string(),
                0.1,
                0.0
            ),
            (
                "correlated(rho=0.8, fn=0.2, fp=0.05)".to_string(),
                0.2,
                0.05
            ),
            ("uniform(fn=0.2, fp=0.05)".to_string(), 0.2, 0.05),
        ]
    );
    let n = s.column("n").unwrap().u64().unwrap();
    assert!((0..n.len()).all(|i| n.get(i) == Some(27)));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["grid"]["noise"][1],
        "by_kind(fn=0.1, fp=0, fn_tool_result=0.4)"
    );
    assert_eq!(
        manifest["config"]["sweep"]["noise"][2],
        "correlated(rho=0.8, fn=0.2, fp=0.05)"
    );
    // The report names the models.
    let report = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(
        report.contains("`by_kind(fn=0.1, fp=0, fn_tool_result=0.4)`"),
        "{report}"
    );
}

#[test]
fn uniform_models_in_the_noise_list_are_the_shorthand_grid_cell_for_cell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shorthand = GOOD.replace(
        "noise = [\"uniform(fn=0.2, fp=0.05)\", \"by_kind(fn=0.1, fn_tool_result=0.4)\", \"correlated(rho=0.8, fn=0.2, fp=0.05)\"]",
        "false_negative = [0.0, 0.2]\nfalse_positive = [0.05]",
    );
    let listed = GOOD.replace(
        "noise = [\"uniform(fn=0.2, fp=0.05)\", \"by_kind(fn=0.1, fn_tool_result=0.4)\", \"correlated(rho=0.8, fn=0.2, fp=0.05)\"]",
        "noise = [\"uniform(fn=0, fp=0.05)\", \"correlated(rho=0, fp=0.05, fn=0.2)\"]",
    );
    std::fs::write(d.join("a.toml"), shorthand).unwrap();
    std::fs::write(d.join("b.toml"), listed).unwrap();
    run(d, &["sweep", "a.toml", "--quiet", "--out", "a"]);
    run(d, &["sweep", "b.toml", "--quiet", "--out", "b"]);
    // correlated(rho=0) is uniform's flags: every column but the label agrees.
    let a = read_parquet(&d.join("a/cells.parquet"));
    let b = read_parquet(&d.join("b/cells.parquet"));
    let without = |df: &DataFrame| df.drop("noise").unwrap();
    assert!(without(&a).equals_missing(&without(&b)));
    let labels = |df: &DataFrame| -> Vec<String> {
        let c = df.column("noise").unwrap().str().unwrap();
        let mut v: Vec<String> = c.iter().map(|x| x.unwrap().to_string()).collect();
        v.dedup();
        v.truncate(2);
        v
    };
    assert_eq!(
        labels(&a),
        ["uniform(fn=0, fp=0.05)", "uniform(fn=0.2, fp=0.05)"]
    );
    assert_eq!(
        labels(&b),
        [
            "uniform(fn=0, fp=0.05)",
            "correlated(rho=0, fn=0.2, fp=0.05)"
        ]
    );
}

#[test]
fn noise_models_give_the_same_tables_at_any_thread_count_and_shard_split() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = GOOD.replace(
        "\"correlated(rho=0.8, fn=0.2, fp=0.05)\"",
        "\"correlated(rho=0.8, fn=0.2, fp=0.05)\", \"by_position(fn_start=0, fn_end=0.4)\", \"by_length(fn=0.2)\"",
    );
    std::fs::write(d.join("exp.toml"), text).unwrap();
    run(
        d,
        &[
            "sweep",
            "exp.toml",
            "--quiet",
            "--threads",
            "1",
            "--out",
            "one",
        ],
    );
    run(
        d,
        &[
            "sweep",
            "exp.toml",
            "--quiet",
            "--threads",
            "3",
            "--out",
            "three",
        ],
    );
    for i in 0..3 {
        let shard = format!("{i}/3");
        run(
            d,
            &[
                "sweep", "exp.toml", "--quiet", "--shard", &shard, "--out", "sharded",
            ],
        );
    }
    run(d, &["merge", "sharded"]);
    for f in [
        "cells.parquet",
        "cells.csv",
        "summary.parquet",
        "summary.csv",
    ] {
        let one = std::fs::read(d.join("one").join(f)).unwrap();
        assert_eq!(one, std::fs::read(d.join("three").join(f)).unwrap(), "{f}");
        if f.starts_with("summary") {
            assert_eq!(
                one,
                std::fs::read(d.join("sharded").join(f)).unwrap(),
                "{f}"
            );
        }
    }
    let full = read_parquet(&d.join("one/cells.parquet"));
    let mut parts: Option<DataFrame> = None;
    for i in 0..3 {
        let part = read_parquet(&d.join(format!("sharded/cells/shard={i}/part.parquet")));
        parts = Some(match parts {
            None => part,
            Some(mut all) => {
                all.vstack_mut(&part).unwrap();
                all
            }
        });
    }
    assert!(
        parts.unwrap().equals_missing(&full),
        "the shards' rows are the single run's"
    );
}

#[test]
fn session_sweeps_take_noise_models_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("exp.toml"),
        r#"
name = "sn"
seed = 3
replicates = 2
[histories]
generate = { count = 4, records = [30, 60], required_share = 0.2, required_position = "early", seed = 6 }
[session]
strategies = ["recent", "required"]
windows = [1500]
ratios = [0.7]
false_negative = [0.0]
noise = ["correlated(rho=1, fn=0.3)", "by_kind(fn=0.1, fn_tool_result=0.5)"]
[output]
dir = "out"
"#,
    )
    .unwrap();
    run(d, &["sweep", "exp.toml", "--quiet"]);
    let s = read_parquet(&d.join("out/sessions.parquet"));
    // 4 histories × 2 replicates × 3 noise models × 2 strategies = 48 sessions.
    assert_eq!(s.height(), 48);
    let noise = s.column("noise").unwrap().str().unwrap();
    let mut labels: Vec<&str> = noise.iter().map(Option::unwrap).collect();
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(
        labels,
        [
            "by_kind(fn=0.1, fp=0, fn_tool_result=0.5)",
            "correlated(rho=1, fn=0.3, fp=0)",
            "uniform(fn=0, fp=0)"
        ]
    );
    assert!(d.join("out/charts/session_tokens_retention.png").exists());
}

#[test]
fn inspect_shows_the_flags_a_noise_model_gives_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("h.jsonl"),
        concat!(
            "{\"history\":\"h\",\"id\":1,\"text\":\"Never touch the config file.\",\"required\":true,\"kind\":\"user\"}\n",
            "{\"history\":\"h\",\"id\":2,\"text\":\"ls\",\"kind\":\"tool_call\",\"tool\":\"bash\"}\n",
            "{\"history\":\"h\",\"id\":3,\"text\":\"config.toml: port = 8080\",\"required\":true,\"kind\":\"tool_result\",\"tool\":\"bash\"}\n",
            "{\"history\":\"h\",\"id\":4,\"text\":\"Keep the port at 8080.\",\"required\":true,\"kind\":\"user\"}\n",
        ),
    )
    .unwrap();
    let args = [
        "inspect",
        "h.jsonl",
        "--strategy",
        "required",
        "--budget",
        "100",
    ];
    // fn_user = 1: both user records lose their flag (every draw is below 1), the tool result
    // keeps its own (fn = 0 for the other kinds).
    let o = ctxlab(d, &[&args[..], &["--noise", "by_kind(fn_user=1)"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2],
        "flags: noise by_kind(fn=0, fp=0, fn_user=1), seed 0, replicate 0 (as the sweep's first history)"
    );
    let flags: Vec<&str> = lines[6..10]
        .iter()
        .map(|l| l.split_whitespace().nth(5).unwrap())
        .collect();
    assert_eq!(flags, ["-", "-", "flagged", "-"], "{out}");
    assert_fails_with(
        &ctxlab(d, &[&args[..], &["--noise", "gauss(fn=1)"]].concat()),
        &["--noise: unknown noise model `gauss`"],
    );
    assert_fails_with(
        &ctxlab(
            d,
            &[
                &args[..],
                &["--noise", "uniform(fn=1)", "--noise-fn", "0.2"],
            ]
            .concat(),
        ),
        &["--noise: give a noise model or the rates --noise-fn / --noise-fp, not both"],
    );
}
