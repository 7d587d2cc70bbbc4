//! Provider caches in session replays: a hand-worked bill per cache model, `recorded` against
//! the shared runs' own usage, and bad input through the CLI.

use crate::common::*;
use ctxlab::history::{CostedHistory, History, Kind, Record, RecordedCall, Usage};
use ctxlab::session::cache::{anthropic, Request};
use ctxlab::session::{
    simulate_with, CacheKind, Pricing, SessionConfig, SessionMetrics, SessionScratch, Trace,
};
use ctxlab::{CostModel, Strategy};
use std::path::Path;

/// System 1000 chars, task 1500, then three calls whose outputs are 100 chars and whose tool
/// results are 2000 and 3000 chars; a gap costs 1 under `chars`.
///
/// Inputs: call 1 [S U] = 1000 + 1500 + 1 = 2501; call 2 [S U A T] = 2501 + 100 + 2000 + 2 =
/// 4603; call 3 [S U A T A T] = 4603 + 100 + 3000 + 2 = 7705. Input 14 809, output 300.
fn three_calls() -> CostedHistory {
    let spec = [
        (Kind::System, 1000),
        (Kind::User, 1500),
        (Kind::Assistant, 100),
        (Kind::ToolResult, 2000),
        (Kind::Assistant, 100),
        (Kind::ToolResult, 3000),
        (Kind::Assistant, 100),
    ];
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len))| Record::new(i as u64 + 1, "x".repeat(len)).kind(kind))
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// A `raw` replay (nothing compacts, nothing runs out of the window) under `model`'s
/// pricing with `cache` (absent: the model's provider).
fn raw(h: &CostedHistory, model: &str, cache: Option<CacheKind>) -> (SessionMetrics, Trace) {
    let p = Pricing::new(Some(model), cache).unwrap();
    let cfg = SessionConfig {
        model: p.model,
        cache: p.cache,
        prices: p.prices,
        ..SessionConfig::new(1_000_000, 1.0).unwrap()
    };
    let mut trace = Trace::default();
    let m = simulate_with(
        h,
        &h.truth,
        &Strategy::parse("raw").unwrap(),
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    (m, trace)
}

/// Per call (read, write, uncached), then the session's (input, read, write, uncached, output).
fn classes(m: &SessionMetrics, t: &Trace) -> (Vec<(u64, u64, u64)>, [u64; 5]) {
    (
        t.calls
            .iter()
            .map(|c| (c.cache_read, c.cache_write, c.uncached))
            .collect(),
        [
            m.bill.input_tokens,
            m.bill.cache_read_tokens,
            m.bill.cache_write_tokens,
            m.bill.uncached_input_tokens,
            m.bill.output_tokens,
        ],
    )
}

/// Every call's input splits into the three classes.
fn split(t: &Trace) {
    for c in &t.calls {
        assert_eq!(c.input, c.cache_read + c.cache_write + c.uncached);
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} vs {b}");
}

#[test]
fn anthropic_reads_the_last_breakpoint_and_writes_the_rest_at_a_premium() {
    let (m, t) = raw(&three_calls(), "claude-sonnet-4.5", None);
    split(&t);
    // Breakpoints after the system prompt (1000 < the minimum 1024: never cached) and after
    // each request's last entry.
    // call 1: nothing cached: write all 2501; the cache holds the 2-entry prefix.
    // call 2: the 2-entry prefix is 2 blocks back (within 20): read 2501, write 4603 − 2501 =
    //         2102; the cache adds the 4-entry prefix.
    // call 3: read the 4-entry prefix 4603, write 7705 − 4603 = 3102.
    assert_eq!(
        classes(&m, &t),
        (
            vec![(0, 2501, 0), (2501, 2102, 0), (4603, 3102, 0)],
            [14809, 7104, 7705, 0, 300]
        )
    );
    // $3 / $15, reads 0.1×, writes 1.25×:
    // 7104 × 3 × 0.1 + 7705 × 3 × 1.25 + 300 × 15 = 2131.2 + 28893.75 + 4500 = 35524.95 per 10⁶.
    close(m.bill.cost, 35524.95e-6);
}

#[test]
fn anthropic_looks_back_twenty_blocks_and_falls_back_to_the_system_prompt() {
    // A system prompt of 2000 and 31 entries of 10 after it; a gap costs 1.
    let mut cum = vec![2000u64];
    for _ in 0..31 {
        cum.push(cum.last().unwrap() + 10);
    }
    let mut points = Vec::new();
    let first = Request {
        cum: &cum[..2],
        separator: 1,
        system: 1,
    };
    // 2000 + 10 + 1 = 2011: nothing cached, all written; both breakpoints (1 entry: 2000 ≥
    // 1024; 2 entries: 2011) are cached.
    let b = anthropic::bill(&first, 1024, &mut points, 5);
    assert_eq!((b.cache_read, b.cache_write, b.uncached), (0, 2011, 0));
    assert_eq!(points, [1, 2]);
    // 30 entries later: the 2-entry prefix is 30 blocks before the last breakpoint, beyond
    // the 20 looked at; the system breakpoint still finds its own prefix: read 2000, write
    // the rest, 2000 + 31 × 10 + 31 gaps − 2000 = 341.
    let later = Request {
        cum: &cum[..32],
        separator: 1,
        system: 1,
    };
    let b = anthropic::bill(&later, 1024, &mut points, 5);
    assert_eq!((b.cache_read, b.cache_write, b.uncached), (2000, 341, 0));
    // Without the system breakpoint nothing is read.
    let mut points = vec![2];
    let no_system = Request { system: 0, ..later };
    let b = anthropic::bill(&no_system, 1024, &mut points, 5);
    assert_eq!((b.cache_read, b.cache_write), (0, 2341));
    // Below the minimum nothing is cached: plain input.
    let b = anthropic::bill(&first, 4096, &mut Vec::new(), 5);
    assert_eq!((b.cache_read, b.cache_write, b.uncached), (0, 0, 2011));
}

#[test]
fn openai_reads_the_shared_prefix_in_128_token_steps_and_writes_nothing() {
    let (m, t) = raw(&three_calls(), "gpt-5", None);
    split(&t);
    // call 1: nothing shared: 2501 uncached.
    // call 2: shares call 1's 2501 ≥ 1024: read 1024 + floor(1477 / 128) × 128 = 1024 + 1408
    //         = 2432, uncached 4603 − 2432 = 2171.
    // call 3: shares 4603: read 1024 + floor(3579 / 128) × 128 = 1024 + 3456 = 4480,
    //         uncached 7705 − 4480 = 3225.
    assert_eq!(
        classes(&m, &t),
        (
            vec![(0, 0, 2501), (2432, 0, 2171), (4480, 0, 3225)],
            [14809, 6912, 0, 7897, 300]
        )
    );
    // gpt-5: $1.25 / $10, reads 0.1×: 6912 × 0.125 + 7897 × 1.25 + 300 × 10 = 864 + 9871.25
    // + 3000 = 13735.25 per 10⁶.
    close(m.bill.cost, 13735.25e-6);
}

#[test]
fn gemini_reads_the_whole_shared_prefix_above_its_minimum() {
    let (m, t) = raw(&three_calls(), "gemini-3-pro-preview", None);
    split(&t);
    // Minimum 4096. call 1: 2501 uncached. call 2: shares 2501 < 4096: 4603 uncached.
    // call 3: shares 4603 ≥ 4096: read 4603, uncached 7705 − 4603 = 3102.
    assert_eq!(
        classes(&m, &t),
        (
            vec![(0, 0, 2501), (0, 0, 4603), (4603, 0, 3102)],
            [14809, 4603, 0, 10206, 300]
        )
    );
    // $2 / $12, reads 0.1×: 4603 × 0.2 + 10206 × 2 + 300 × 12 = 920.6 + 20412 + 3600 =
    // 24932.6 per 10⁶.
    close(m.bill.cost, 24932.6e-6);
}

#[test]
fn no_cache_bills_every_prompt_as_plain_input() {
    let (m, t) = raw(&three_calls(), "claude-sonnet-4.5", Some(CacheKind::None));
    split(&t);
    assert_eq!(
        classes(&m, &t),
        (
            vec![(0, 0, 2501), (0, 0, 4603), (0, 0, 7705)],
            [14809, 0, 0, 14809, 300]
        )
    );
    // 14809 × 3 + 300 × 15 = 44427 + 4500 = 48927 per 10⁶.
    close(m.bill.cost, 48927e-6);
}

#[test]
fn recorded_bills_what_the_transcript_records() {
    let usage = |uncached, cache_read, cache_write, output| Usage {
        uncached,
        cache_read,
        cache_write,
        output,
    };
    // Calls whose responses start at records 2, 4 and 6 (the assistant records), and one
    // after the last record (a response that left no record), billed at the end.
    let recorded = vec![
        RecordedCall {
            at: 2,
            usage: usage(10, 0, 3000, 120),
        },
        RecordedCall {
            at: 4,
            usage: usage(5, 3000, 1500, 80),
        },
        RecordedCall {
            at: 6,
            usage: usage(7, 4500, 1800, 60),
        },
        RecordedCall {
            at: 7,
            usage: usage(1, 0, 0, 1),
        },
    ];
    let h = three_calls().with_recorded(recorded);
    let (m, t) = raw(&h, "claude-sonnet-4.5", Some(CacheKind::Recorded));
    // Per call as recorded; the session's totals add the trailing call: uncached 10 + 5 + 7
    // + 1 = 23, read 7500, write 6300, input 13 823; output 120 + 80 + 60 + 1 = 261.
    assert_eq!(
        classes(&m, &t),
        (
            vec![(0, 3000, 10), (3000, 1500, 5), (4500, 1800, 7)],
            [13823, 7500, 6300, 23, 261]
        )
    );
    // 23 × 3 + 7500 × 0.3 + 6300 × 3.75 + 261 × 15 = 69 + 2250 + 23625 + 3915 = 29859 per 10⁶.
    close(m.bill.cost, 29859e-6);
    // The context the replay sends is still the modelled one.
    assert_eq!(t.calls[2].input, 7705);
}

#[test]
fn models_fill_prices_and_mismatched_or_unknown_ones_are_refused() {
    let p = Pricing::new(Some("gemini-3-pro-preview"), None).unwrap();
    assert_eq!(p.cache.kind, CacheKind::Gemini);
    assert_eq!((p.prices.input, p.prices.output), (2.0, 12.0));
    assert_eq!(
        (p.prices.cache_read_factor, p.prices.cache_write_factor),
        (0.1, 1.0)
    );
    assert_eq!(p.cache.min_tokens, 4096);
    // The default: Anthropic's cache priced as claude-sonnet-4.5, the former defaults.
    let d = Pricing::default();
    assert_eq!(
        (d.model, d.cache.kind),
        ("claude-sonnet-4.5", CacheKind::Anthropic)
    );
    assert_eq!(d.prices, ctxlab::session::Prices::default());
    assert_eq!(
        Pricing::new(None, Some(CacheKind::OpenAi)).unwrap().model,
        "gpt-5"
    );
    let e = Pricing::new(Some("gemini-3-pro-preview"), Some(CacheKind::Anthropic)).unwrap_err();
    assert_eq!(e.key, "cache");
    let e = Pricing::new(Some("gpt-9"), None).unwrap_err();
    assert_eq!(e.key, "model");
    assert!(e.message.contains("gemini-3-pro-preview"), "{}", e.message);
    let e = Pricing::new(None, Some(CacheKind::Recorded)).unwrap_err();
    assert_eq!(e.key, "model");
}

// ------------------------------------------------------------------ recorded on the shared runs

/// Σ over assistant messages of (prompt − cached) × 2 + cached × 2 × 0.1 + completion × 12,
/// per 10⁶, straight from the JSON: gemini-3-pro-preview's list prices.
fn transcript_cost(path: &Path) -> (f64, u64, u64) {
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut cost, mut prompt, mut cached) = (0.0, 0u64, 0u64);
    for m in t["messages"].as_array().unwrap() {
        let u = &m["extra"]["response"]["usage"];
        if m["role"] != "assistant" || u.is_null() {
            continue;
        }
        let p = u["prompt_tokens"].as_u64().unwrap();
        let c = u["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0);
        let out = u["completion_tokens"].as_u64().unwrap();
        cost += ((p - c) as f64 * 2.0 + c as f64 * 2.0 * 0.1 + out as f64 * 12.0) / 1e6;
        prompt += p;
        cached += c;
    }
    (cost, prompt, cached)
}

const RECORDED: &str = r#"
name = "recorded"
seed = 1
[histories]
files = ["RUNS/*.traj.json"]
format = "mini-swe-agent"
[session]
strategies = ["raw"]
windows = [10000000]
ratios = [1.0]
cache = "recorded"
model = "gemini-3-pro-preview"
[output]
dir = "out"
formats = ["csv"]
"#;

#[test]
fn recorded_on_the_shared_runs_equals_their_own_usage() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent, so `recorded` is not checked on real runs");
        return;
    };
    let runs = data.join("swebench-gemini3");
    let dir = tempfile::tempdir().unwrap();
    let text = RECORDED.replace("RUNS", &runs.display().to_string());
    std::fs::write(dir.path().join("exp.toml"), text).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut reader = csv::Reader::from_path(dir.path().join("out/sessions.csv")).unwrap();
    let head = reader.headers().unwrap().clone();
    let at = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (mut rows, mut prompt, mut cached) = (0, 0u64, 0u64);
    for row in reader.records() {
        let row = row.unwrap();
        let name = &row[at("history")];
        let (want, p, c) = transcript_cost(&runs.join(format!("{name}.traj.json")));
        let got: f64 = row[at("cost")].parse().unwrap();
        // The CSV writes six decimals.
        assert!((got - want).abs() < 1e-6, "{name}: {got} vs {want}");
        let whole = |k: &str| row[at(k)].parse::<u64>().unwrap();
        assert_eq!(whole("input_tokens"), p, "{name}");
        assert_eq!(whole("cache_read_tokens"), c, "{name}");
        assert_eq!(whole("cache_write_tokens"), 0, "{name}");
        assert_eq!(whole("uncached_input_tokens"), p - c, "{name}");
        assert_eq!(&row[at("exit_context")], "false");
        rows += 1;
        prompt += p;
        cached += c;
    }
    assert_eq!(rows, 40);
    // The notes' figures: 22 251 424 prompt tokens, 18 227 177 of them cached (81.9 %).
    assert_eq!((prompt, cached), (22_251_424, 18_227_177));
}

// ------------------------------------------------------------------------------- bad input

const SESSIONS: &str = r#"
name = "bad"
seed = 1
[histories]
generate = { count = 2, records = [20, 30], required_share = 0.2 }
[session]
strategies = ["raw"]
windows = [100000]
ratios = [0.8]
[output]
dir = "out"
"#;

/// A mini-swe-agent run whose assistant messages record no usage.
const SILENT_RUN: &str = r#"{"instance_id": "silent", "messages": [
  {"role": "system", "content": "You are a helpful agent."},
  {"role": "user", "content": "Fix the bug."},
  {"role": "assistant", "content": "```bash\nls\n```", "extra": {}},
  {"role": "user", "content": "a.py"},
  {"role": "assistant", "content": "done", "extra": {}}
]}"#;

#[test]
fn bad_caches_models_and_recorded_uses_fail_clearly_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("silent.traj.json"), SILENT_RUN).unwrap();
    let transcripts = SESSIONS.replace(
        "generate = { count = 2, records = [20, 30], required_share = 0.2 }",
        "files = [\"silent.traj.json\"]\nformat = \"mini-swe-agent\"",
    );
    let recorded = "ratios = [0.8]\ncache = \"recorded\"\nmodel = \"gemini-3-pro-preview\"";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            SESSIONS.replace("ratios = [0.8]", "ratios = [0.8]\ncache = \"google\""),
            vec!["key `session.cache`", "unknown cache \"google\"", "gemini"],
        ),
        (
            SESSIONS.replace("ratios = [0.8]", "ratios = [0.8]\nmodel = \"gpt-9\""),
            vec![
                "key `session.model`",
                "unknown model \"gpt-9\"",
                "gemini-3-pro-preview",
            ],
        ),
        (
            SESSIONS.replace(
                "ratios = [0.8]",
                "ratios = [0.8]\ncache = \"anthropic\"\nmodel = \"gpt-5\"",
            ),
            vec!["key `session.cache`", "openai"],
        ),
        (
            transcripts
                .replace("ratios = [0.8]", recorded)
                .replace("[\"raw\"]", "[\"mask\"]"),
            vec!["key `session.strategies[0]`", "only a `raw` replay"],
        ),
        (
            SESSIONS.replace("ratios = [0.8]", recorded),
            vec!["key `session.cache`", "record their usage"],
        ),
        (
            transcripts.replace("ratios = [0.8]", recorded),
            vec!["key `session.cache`", "\"silent\" records none"],
        ),
        (
            transcripts.replace("ratios = [0.8]", "ratios = [0.8]\ncache = \"recorded\""),
            vec!["key `session.model`", "needs a model"],
        ),
    ];
    for (text, needles) in cases {
        std::fs::write(dir.path().join("exp.toml"), &text).unwrap();
        let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
        assert_fails_with(&o, &needles);
        assert!(
            !dir.path().join("out").exists(),
            "output written for a bad config: {needles:?}"
        );
    }
    // The same cache with a model that records usage would run: the silent run is the fault.
    std::fs::write(dir.path().join("exp.toml"), &transcripts).unwrap();
    let o = ctxlab(dir.path(), &["sweep", "exp.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_session_command_bills_recorded_transcripts_and_refuses_bad_uses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("silent.traj.json"), SILENT_RUN).unwrap();
    let demo = root().join("tests/fixtures/import/demo__demo-1.traj.json");
    let demo = demo.to_str().unwrap();
    let args = |file: &str, extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "session", file, "--window", "100000", "--ratio", "1", "--format", "metrics",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        ctxlab(dir.path(), &a)
    };
    // The demo run records one call's billing: 120 prompt tokens, none cached, 20 output.
    let o = run(args(
        demo,
        &[
            "--transcript",
            "mini-swe-agent",
            "--strategy",
            "raw",
            "--cache",
            "recorded",
            "--model",
            "gemini-3-pro-preview",
        ],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |k: &str| row[head.iter().position(|h| *h == k).unwrap()];
    assert_eq!(
        (
            at("input_tokens"),
            at("cache_read_tokens"),
            at("uncached_input_tokens"),
            at("output_tokens")
        ),
        ("120", "0", "120", "20")
    );
    // 120 × 2 + 20 × 12 = 480 per 10⁶.
    assert_eq!(at("cost"), "0.000480");

    let bad: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            args(
                demo,
                &[
                    "--transcript",
                    "mini-swe-agent",
                    "--strategy",
                    "raw",
                    "--cache",
                    "google",
                ],
            ),
            vec!["--cache: unknown cache \"google\""],
        ),
        (
            args(
                demo,
                &[
                    "--transcript",
                    "mini-swe-agent",
                    "--strategy",
                    "raw",
                    "--model",
                    "gpt-9",
                ],
            ),
            vec!["--model: unknown model \"gpt-9\""],
        ),
        (
            args(
                demo,
                &[
                    "--transcript",
                    "mini-swe-agent",
                    "--strategy",
                    "mask",
                    "--cache",
                    "recorded",
                    "--model",
                    "gpt-5",
                ],
            ),
            vec!["--cache recorded", "`--strategy raw`", "mask"],
        ),
        (
            args(
                "silent.traj.json",
                &[
                    "--transcript",
                    "mini-swe-agent",
                    "--strategy",
                    "raw",
                    "--cache",
                    "recorded",
                    "--model",
                    "gpt-5",
                ],
            ),
            vec!["--cache recorded", "\"silent\" records no usage"],
        ),
    ];
    for (a, needles) in bad {
        assert_fails_with(&run(a), &needles);
    }
}
