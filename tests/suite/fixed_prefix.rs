//! The fixed prefix every call sends that transcripts do not hold (`session.prefix_tokens`):
//! billed by hand under each cache, refused where it is bad, and measured by
//! `calibrate --fit-prefix` on a hand-made transcript whose recorded input exceeds its text by
//! a known amount (and on the shared sessions when they are there).

use crate::common::*;
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate_with, CacheKind, Pricing, SessionConfig, SessionScratch, Trace};
use ctxlab::{CostModel, Strategy};
use std::path::Path;

/// User 2000 chars, then two calls of 100-char answers and a 3000-char tool result between
/// them; a gap costs 1 under `chars`. Contexts: call 1 [U] = 2000; call 2 [U A T] = 2000 +
/// 100 + 3000 + 2 = 5102.
fn two_calls() -> CostedHistory {
    let spec = [
        (Kind::User, 2000),
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

/// Per call (input, read, write, uncached) of a `raw` replay with a fixed prefix.
fn bill(model: &str, cache: CacheKind, prefix: u64) -> Vec<(u64, u64, u64, u64)> {
    let h = two_calls();
    let p = Pricing::new(Some(model), Some(cache)).unwrap();
    let cfg = SessionConfig {
        model: p.model,
        cache: p.cache,
        prices: p.prices,
        prefix_tokens: prefix,
        ..SessionConfig::new(1_000_000, 1.0).unwrap()
    };
    let mut trace = Trace::default();
    simulate_with(
        &h,
        &h.truth,
        &Strategy::parse("raw").unwrap(),
        &cfg,
        0,
        &mut SessionScratch::default(),
        Some(&mut trace),
    );
    trace
        .calls
        .iter()
        .map(|c| (c.input, c.cache_read, c.cache_write, c.uncached))
        .collect()
}

#[test]
fn the_prefix_is_in_every_call_and_read_from_the_cache_once_sent() {
    // A prefix of 1500: inputs 1500 + 2000 = 3500 and 1500 + 5102 = 6602.
    // No cache: all of it uncached.
    assert_eq!(
        bill("claude-sonnet-4.5", CacheKind::None, 1500),
        [(3500, 0, 0, 3500), (6602, 0, 0, 6602)]
    );
    // Gemini: call 1 shares nothing; call 2 reads the prefix (sent by call 1) and the 2000
    // of the context call 1 sent, 3500, and 6602 − 3500 = 3102 is uncached.
    assert_eq!(
        bill("gemini-2.5-pro", CacheKind::Gemini, 1500),
        [(3500, 0, 0, 3500), (6602, 3500, 0, 3102)]
    );
    // Anthropic: call 1 writes the prefix at its breakpoint (1500) and the context at its own
    // (2000); call 2 reads both (1500 + 2000) and writes the new 3102.
    assert_eq!(
        bill("claude-sonnet-4.5", CacheKind::Anthropic, 1500),
        [(3500, 0, 3500, 0), (6602, 3500, 3102, 0)]
    );
    // Without a prefix nothing changes: the contexts alone.
    assert_eq!(
        bill("claude-sonnet-4.5", CacheKind::None, 0),
        [(2000, 0, 0, 2000), (5102, 0, 0, 5102)]
    );
}

#[test]
fn the_prefix_takes_its_share_of_the_window() {
    // A window of 6000 holds call 2's context (5102) alone but not with a prefix of 1000
    // (6102 + its output 100): the run ends at call 2.
    let h = two_calls();
    let run = |prefix: u64| {
        let cfg = SessionConfig {
            prefix_tokens: prefix,
            ..SessionConfig::new(6000, 1.0).unwrap()
        };
        ctxlab::session::simulate(
            &h,
            &h.truth,
            &Strategy::parse("raw").unwrap(),
            &cfg,
            0,
            &mut SessionScratch::default(),
        )
    };
    assert_eq!(run(0).run.exit_call, None);
    assert_eq!(run(1000).run.exit_call, Some(2));
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A Claude Code session: the user's 21-char task, an answer of 8 chars ("Looking."), the
/// user's "Go on" (5), an answer of 5 ("Done."). Under `chars` (a gap costs 1) the replay's
/// two calls send 21 and 21 + 1 + 8 + 1 + 5 = 36: 57 in all. Anthropic recorded 1021 and 1036
/// (input, cache reads and writes added): 2057, so the prefix is (2057 − 57) / 2 = 1000.
fn session_with_usage() -> String {
    let answer = |id: &str, text: &str, input: u64| {
        format!(
            r#"{{"type":"assistant","message":{{"id":"{id}","role":"assistant","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":0,"output_tokens":3}}}}}}"#,
            input - 1000,
            1000
        )
    };
    [
        r#"{"type":"user","message":{"role":"user","content":"Please fix the parser"}}"#
            .to_string(),
        answer("m1", "Looking.", 1021),
        r#"{"type":"user","message":{"role":"user","content":"Go on"}}"#.to_string(),
        answer("m2", "Done.", 1036),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn calibrate_fits_the_prefix_a_transcript_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "s.jsonl", &session_with_usage());
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            "--fit-prefix",
            &file,
            "--format",
            "claude-code",
            "--cost",
            "chars",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The run's row: 2 calls, recorded 2057, modelled 57 (ratio 0.028), 2057 with the prefix.
    let row = out.lines().find(|l| l.starts_with("s ")).expect(&out);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["s", "2", "2057", "57", "0.028", "2057", "1.000"],
        "{out}"
    );
    assert!(
        out.contains("pooled: 0.028 without a prefix, 1.000 with it"),
        "{out}"
    );
    assert!(out.ends_with("[session]\nprefix_tokens = 1000\n"), "{out}");
}

#[test]
fn a_bad_prefix_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let experiment = |prefix: &str| {
        format!(
            "name = \"p\"\nseed = 1\n[histories]\ngenerate = {{ count = 2, records = [20, 30], required_share = 0.2 }}\n\
             [session]\nstrategies = [\"raw\"]\nwindows = [4000]\nratios = [0.8]\n\
             prefix_tokens = {prefix}\n[output]\ndir = \"out\"\n"
        )
    };
    for (prefix, expected) in [
        ("-5", "prefix_tokens"),
        ("4000", "a prefix must be smaller than every window"),
        ("\"big\"", "prefix_tokens"),
    ] {
        let file = write(dir.path(), "p.toml", &experiment(prefix));
        let o = ctxlab(dir.path(), &["sweep", &file]);
        assert!(!o.status.success(), "prefix {prefix} was accepted");
        let err = stderr(&o);
        assert!(err.contains("p.toml"), "{err}");
        assert!(err.contains(expected), "prefix {prefix}: {err}");
        assert!(
            !dir.path().join("out").exists(),
            "prefix {prefix} wrote output"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn the_shared_sessions_bill_within_five_percent_held_out() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent");
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(data.join("claude-code-entire"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".jsonl"))
        .collect();
    files.sort();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["calibrate", "--fit-prefix", "--format", "claude-code"];
    args.extend(files.iter().map(String::as_str));
    let o = ctxlab(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Measured 2026-12-03: 0.458 of the recorded input without a prefix; fitted on 13 sessions,
    // the other 12 bill 0.997 of theirs; the prefix fitted on all 25 is 52 315.
    assert!(
        out.contains("pooled: 0.458 without a prefix, 1.000 with it"),
        "{out}"
    );
    assert!(
        out.contains("(13 runs): 52166; on the other 12 runs modelled over recorded 0.997"),
        "{out}"
    );
    assert!(out.ends_with("prefix_tokens = 52315\n"), "{out}");
}
