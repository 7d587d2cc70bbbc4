//! Several caches on one session axis (`session.caches`): every session billed under each
//! cache, the pairs rows per cache worked by hand, `cost_by_cache.md`, and bad axes.

use crate::common::*;
use crate::session_sweep::six_turns;

/// `recent` against `required` on the six-turn history (see `session_sweep`), at the usage
/// trigger 100: both send 10 + 32 + 54 + 43 + 65 + 43 = 247 units of input and 60 of output
/// (output free here), with two compactions. What the next call shares with the previous
/// one: `recent` drops the prompt at each compaction, so calls 2, 3 and 5 read 10, 32 and 43
/// (85); `required` keeps the prompt first, so calls 2–6 read 10, 32, 10, 43 and 10 (105).
///
/// At $1 a unit of input and reads at 0.1×:
/// - `none`: both 247 → required − recent = 0;
/// - `gemini` (reads the whole shared prefix, minimum 0 here): recent 247 − 85 + 8.5 = 170.5,
///   required 247 − 105 + 10.5 = 152.5 → −18;
/// - `gemini(credit=0.5)`: half of each read, rounded per call: recent 5 + 16 + 22 (21.5) =
///   43 → 247 − 43 + 4.3 = 208.3; required 5 + 16 + 5 + 22 + 5 = 53 → 247 − 53 + 5.3 = 199.3
///   → −9.
const EXPERIMENT: &str = r#"
name = "caches"
seed = 1
[histories]
files = ["turns.jsonl"]
cost = "chars"
[session]
strategies = ["recent", "required"]
windows = [1000]
ratios = [0.1]
trigger = "usage"
target = 0.05
model = "gemini-2.5-flash"
caches = ["none", "gemini", "gemini(credit=0.5)"]
cache_min_tokens = 0
prices = { input = 1000000, output = 0, cache_read_factor = 0.1 }
[output]
dir = "out"
formats = ["csv"]
"#;

fn rows(path: &std::path::Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    (header, reader.records().map(Result::unwrap).collect())
}

#[test]
fn three_caches_on_one_axis_give_pairs_rows_per_cache() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("turns.jsonl"), six_turns()).unwrap();
    std::fs::write(dir.path().join("exp.toml"), EXPERIMENT).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Sessions: strategy major, the cache innermost; the same replay under each cache.
    let (h, sessions) = rows(&dir.path().join("out/sessions.csv"));
    let at = |name: &str| h.iter().position(|x| x == name).unwrap();
    // The cache column comes after the columns written before the axis.
    assert_eq!(at("cache"), at("stale_calls") + 1);
    let got: Vec<(&str, &str, &str, &str, &str)> = sessions
        .iter()
        .map(|r| {
            (
                &r[at("strategy")],
                &r[at("cache")],
                &r[at("input_tokens")],
                &r[at("cache_read_tokens")],
                &r[at("compactions")],
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("recent", "none", "247", "0", "2"),
            ("recent", "gemini", "247", "85", "2"),
            ("recent", "gemini(credit=0.5)", "247", "43", "2"),
            ("required", "none", "247", "0", "2"),
            ("required", "gemini", "247", "105", "2"),
            ("required", "gemini(credit=0.5)", "247", "53", "2"),
        ]
    );
    let cost: Vec<f64> = sessions
        .iter()
        .map(|r| r[at("cost")].parse().unwrap())
        .collect();
    for (got, want) in cost.iter().zip([247.0, 170.5, 208.3, 247.0, 152.5, 199.3]) {
        assert!((got - want).abs() < 1e-9, "{cost:?}");
    }
    // No cache moves what the context holds.
    let need: Vec<&str> = sessions
        .iter()
        .map(|r| &r[at("retention_at_need")])
        .collect();
    assert_eq!(need[..3], [need[0]; 3]);
    assert_eq!(need[3..], [need[3]; 3]);

    // Pairs: required against recent on cost, one row per cache.
    let (h, pairs) = rows(&dir.path().join("out/pairs.csv"));
    let at = |name: &str| h.iter().position(|x| x == name).unwrap();
    let cost_pairs: Vec<(String, f64)> = pairs
        .iter()
        .filter(|r| &r[at("strategy")] == "required" && &r[at("measure")] == "cost")
        .map(|r| {
            (
                r[at("cache")].to_string(),
                r[at("diff_mean")].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(cost_pairs.len(), 3);
    for ((cache, diff), (want_cache, want)) in cost_pairs.iter().zip([
        ("none", 0.0),
        ("gemini", -18.0),
        ("gemini(credit=0.5)", -9.0),
    ]) {
        assert_eq!(cache, want_cache);
        assert!((diff - want).abs() < 1e-9, "{cache}: {diff}");
    }
    // The summary's groups carry their cache too; the manifest lists the axis.
    let (h, summary) = rows(&dir.path().join("out/summary.csv"));
    let cache = h.iter().position(|x| x == "cache").unwrap();
    let caches: Vec<&str> = summary.iter().map(|r| &r[cache]).collect();
    assert_eq!(caches, ["none", "gemini", "gemini(credit=0.5)"].repeat(2));
    let manifest = std::fs::read_to_string(dir.path().join("out/manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(
        m["grid"]["caches"],
        serde_json::json!(["none", "gemini", "gemini(credit=0.5)"])
    );
    assert_eq!(
        m["config"]["session"]["caches"],
        serde_json::json!(["none", "gemini", "gemini(credit=0.5)"])
    );
}

/// With the agent as it ran among the strategies, `cost_by_cache.md` states a sign only where
/// every cache agrees. The baseline, `raw(window=none)`, sends 10 + 32 + 54 + 76 + 98 + 120 =
/// 390 units and shares 0 + 10 + 32 + 54 + 76 + 98 = 270 of them with the previous call.
/// Two copies of the history, so each difference has an interval by history.
#[test]
fn cost_by_cache_states_a_sign_only_where_every_cache_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let two = six_turns() + &six_turns().replace("\"turns\"", "\"turns2\"");
    std::fs::write(dir.path().join("turns.jsonl"), two).unwrap();
    let text = EXPERIMENT
        .replace(
            "strategies = [\"recent\", \"required\"]",
            "strategies = [\"raw(window=none)\", \"raw\", \"recent\"]",
        )
        .replace("formats = [\"csv\"]", "formats = [\"parquet\", \"csv\"]");
    std::fs::write(dir.path().join("exp.toml"), text).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(dir.path().join("out/charts/cost_by_cache.md")).unwrap();
    let lines: Vec<&str> = md.lines().filter(|l| l.starts_with("| r")).collect();
    // The two histories are the same turns: every difference is exact, its interval a point.
    // raw never compacts at window 1000: the same bill. recent: 247 − 390 = −143 of input
    // without a cache; with gemini 170.5 against 390 − 270 + 27 = 147 → +23.5; at half credit
    // 208.3 against 390 − 135 + 13.5 = 268.5 → −60.2. Opposite signs: it depends.
    assert_eq!(
        lines,
        [
            "| raw | 1000 | +0.000 (+0.000..+0.000), 2 | +0.000 (+0.000..+0.000), 2 | +0.000 (+0.000..+0.000), 2 | the same bill (no call changed) |",
            "| recent | 1000 | -143.000 (-143.000..-143.000), 2 | +23.500 (+23.500..+23.500), 2 | -60.200 (-60.200..-60.200), 2 | depends on the cache |",
        ],
        "{md}"
    );
}

#[test]
fn bad_cache_axes_name_their_key_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("turns.jsonl"), six_turns()).unwrap();
    let axis = "caches = [\"none\", \"gemini\", \"gemini(credit=0.5)\"]";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            // `gemini(credit=1)` is `gemini`: its default spelled out.
            EXPERIMENT.replace(
                axis,
                "caches = [\"none\", \"gemini\", \"gemini(credit=1)\"]",
            ),
            vec![
                "exp.toml",
                "key `session.caches[2]`",
                "names the cache of session.caches[1] again",
            ],
        ),
        (
            EXPERIMENT.replace(axis, &format!("{axis}\ncache = \"gemini\"")),
            vec!["key `session.caches`", "not both"],
        ),
        (
            EXPERIMENT.replace(axis, "caches = []"),
            vec!["key `session.caches`", "must not be empty"],
        ),
        (
            EXPERIMENT.replace(axis, "caches = [\"gemini\", \"anthropic\"]"),
            vec![
                "key `session.caches[1]`",
                "cache \"anthropic\" with model gemini-2.5-flash",
            ],
        ),
        (
            EXPERIMENT
                .replace(axis, "caches = [\"none\", \"gemini\"]")
                .replace("model = \"gemini-2.5-flash\"\n", ""),
            vec!["key `session.caches[1]`", "the axis varies the cache alone"],
        ),
        (
            EXPERIMENT.replace(axis, "caches = [\"none\", \"gemini(miss=2)\"]"),
            vec!["session.caches", "`miss` expects a probability"],
        ),
    ];
    for (text, needles) in cases {
        std::fs::write(dir.path().join("exp.toml"), &text).unwrap();
        let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
        assert_fails_with(&o, &needles);
        assert!(
            !dir.path().join("out").exists(),
            "output written for a bad axis: {needles:?}"
        );
    }
}
