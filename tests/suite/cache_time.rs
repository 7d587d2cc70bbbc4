//! Records' times and the cache: every Claude Code line type on hand-made lines, times kept and
//! checked, the TTL applied between calls with times, fitted cache parameters, and
//! `calibrate --fit-cache` on a hand-made transcript whose misses and credits are known.

use crate::common::*;
use ctxlab::cli::import::tally_text;
use ctxlab::history::{parse_jsonl, write_jsonl, CostedHistory, History, Kind, Record, Time};
use ctxlab::import::{self, Format, Problems, Tally};
use ctxlab::session::{simulate_with, CacheSpec, Pricing, SessionConfig, SessionScratch, Trace};
use ctxlab::{CostModel, Strategy};
use std::path::Path;

fn at(s: &str) -> Time {
    Time::parse(s).unwrap()
}

/// One line of each type a Claude Code session holds, and a type it does not know.
const EVERY_TYPE: &str = r#"{"type":"file-history-snapshot","messageId":"a","snapshot":{"messageId":"a","trackedFileBackups":{},"timestamp":"2026-02-07T10:00:00.000Z"},"isSnapshotUpdate":false}
{"type":"user","isSidechain":false,"timestamp":"2026-02-07T10:00:00.000Z","message":{"role":"user","content":"Fix the parser in src/parse.rs"}}
{"type":"progress","isSidechain":false,"timestamp":"2026-02-07T10:00:01.000Z","data":{"type":"hook_progress"}}
{"type":"assistant","isSidechain":false,"timestamp":"2026-02-07T10:00:05.000Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"thinking","thinking":"hmm","signature":"s"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":5}}}
{"type":"assistant","isSidechain":false,"timestamp":"2026-02-07T10:00:06.000Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Looking."}],"usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":9}}}
{"type":"assistant","isSidechain":false,"timestamp":"2026-02-07T10:00:07.000Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cat src/parse.rs"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":30}}}
{"type":"user","isSidechain":false,"timestamp":"2026-02-07T10:00:08.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"fn parse() {}"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]},"toolUseResult":{"stdout":"fn parse() {}"}}
{"type":"assistant","isSidechain":true,"timestamp":"2026-02-07T10:00:09.000Z","message":{"id":"s1","content":[{"type":"text","text":"a sub-agent"}],"usage":{"input_tokens":1,"output_tokens":1}}}
{"type":"system","subtype":"turn_duration","isSidechain":false,"timestamp":"2026-02-07T10:00:10.000Z","durationMs":10}
{"type":"assistant","isSidechain":false,"timestamp":"2026-02-07T10:00:11.000Z","message":{"id":"x1","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}],"usage":{"input_tokens":0,"output_tokens":0}}}
{"type":"assistant","isSidechain":false,"isApiErrorMessage":true,"timestamp":"2026-02-07T10:00:12.000Z","message":{"id":"x2","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}],"usage":{"input_tokens":0,"output_tokens":0}}}
{"type":"summary","summary":"Parser fix","leafUuid":"u"}
{"type":"queue-operation","operation":"enqueue","timestamp":"2026-02-07T10:00:13.000Z","content":"also the tests"}
{"type":"user","isSidechain":false,"isMeta":true,"timestamp":"2026-02-07T10:00:14.000Z","message":{"role":"user","content":"<local-command-caveat>Caveat</local-command-caveat>"}}
{"type":"pr-link","prNumber":1,"prUrl":"https://example.com/pr/1","timestamp":"2026-02-07T10:00:15.000Z"}
{"type":"system","subtype":"compact_boundary","isSidechain":false,"timestamp":"2026-02-07T10:00:16.000Z","content":"Conversation compacted"}
{"type":"user","isSidechain":false,"isCompactSummary":true,"isVisibleInTranscriptOnly":true,"timestamp":"2026-02-07T10:00:16.000Z","message":{"role":"user","content":"Summary: the parser in src/parse.rs"}}
{"type":"custom-title","title":"x"}
{"type":"assistant","isSidechain":false,"timestamp":"2026-02-07T10:06:20.000Z","message":{"id":"m2","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":0,"output_tokens":2}}}
"#;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn every_claude_code_line_type_is_counted_and_read_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "s.jsonl", EVERY_TYPE);
    let mut tally = Tally::default();
    let mut runs = import::read_tallied(
        &path,
        Format::ClaudeCode,
        &mut Problems::strict(),
        &mut tally,
    )
    .unwrap();
    // 19 lines: 7 give records (2 user, 3 of response m1 of which the thinking one gives none,
    // the tool result, the caveat, the summary, response m2), the rest are counted apart.
    assert_eq!(
        tally_text(&tally),
        "assistant: 7 lines: 3 gave 3 records (assistant 2, tool_call 1); 1 no record (thinking only, or empty); 1 sidechain (a sub-agent's own context); 2 written by Claude Code, not a model (no call)\n\
         custom-title: 1 lines; 1 unknown line type, not sent to the model\n\
         file-history-snapshot: 1 lines; 1 not sent to the model\n\
         pr-link: 1 lines; 1 not sent to the model\n\
         progress: 1 lines; 1 not sent to the model\n\
         queue-operation: 1 lines; 1 not sent to the model\n\
         summary: 1 lines; 1 not sent to the model\n\
         system: 2 lines; 2 not sent to the model\n\
         user: 4 lines: 4 gave 4 records (user 1, tool_result 1, summary 1, note 1)\n\
         model responses: 2\n"
    );
    let run = runs.remove(0);
    let recs = &run.history.records;
    let kinds: Vec<Kind> = recs.iter().map(|r| r.kind).collect();
    use Kind::*;
    assert_eq!(
        kinds,
        [User, Assistant, ToolCall, ToolResult, Note, Summary, Assistant]
    );
    assert_eq!(recs[3].text, "fn parse() {}\n[image: image/png]");
    assert_eq!(recs[3].tool.as_deref(), Some("Bash"));
    // Each record keeps its line's time.
    assert_eq!(recs[0].time, Some(at("2026-02-07T10:00:00Z")));
    assert_eq!(recs[2].time, Some(at("2026-02-07T10:00:07Z")));
    assert_eq!(recs[6].time, Some(at("2026-02-07T10:06:20Z")));
    // A caveat carries the time of the command it introduces, not its own: none is kept.
    assert_eq!(recs[4].time, None);
    // Two calls (the split response m1 is one), the synthetic lines none; the summary restarts
    // the context, so the second call starts at it.
    assert_eq!(run.calls.len(), 2);
    assert_eq!((run.calls[0].start, run.calls[0].end), (0, 1));
    assert_eq!(run.calls[0].recorded, 2010);
    assert_eq!(run.calls[0].usage.unwrap().output, 30);
    assert_eq!((run.calls[1].start, run.calls[1].end), (5, 6));
}

#[test]
fn times_go_to_the_history_file_and_back_and_files_without_them_do_not_change() {
    let plain =
        "{\"history\":\"h\",\"id\":1,\"kind\":\"user\",\"text\":\"a\",\"required\":false}\n";
    let h = parse_jsonl(Path::new("h.jsonl"), plain).unwrap();
    let mut out = Vec::new();
    write_jsonl(&mut out, &h).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), plain);
    let timed = "{\"history\":\"h\",\"id\":1,\"kind\":\"user\",\"time\":\"2026-02-07T10:00:00.000Z\",\"text\":\"a\",\"required\":false}\n\
                 {\"history\":\"h\",\"id\":2,\"kind\":\"assistant\",\"time\":\"2026-02-07T10:00:05.250Z\",\"text\":\"b\",\"required\":false}\n";
    let h = parse_jsonl(Path::new("h.jsonl"), timed).unwrap();
    assert_eq!(h[0].records[1].time, Some(at("2026-02-07T10:00:05.25Z")));
    let mut out = Vec::new();
    write_jsonl(&mut out, &h).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), timed);
}

/// One response with two `tool_use` blocks, logged as two lines sharing `message.id` m1
/// (first call 08:19:41.712, second .817), the first tool's result timed between them (.719)
/// but written after both, then the second's result and the next response.
const PARALLEL_CALLS: &str = r#"{"type":"user","timestamp":"2026-02-07T08:19:30.000Z","message":{"role":"user","content":"Read a.rs and b.rs"}}
{"type":"assistant","timestamp":"2026-02-07T08:19:41.712Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.rs"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":20}}}
{"type":"assistant","timestamp":"2026-02-07T08:19:41.817Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"b.rs"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":40}}}
{"type":"user","timestamp":"2026-02-07T08:19:41.719Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fn a() {}"}]}}
{"type":"user","timestamp":"2026-02-07T08:19:41.900Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"fn b() {}"}]}}
{"type":"assistant","timestamp":"2026-02-07T08:19:45.000Z","message":{"id":"m2","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Both read."}],"usage":{"input_tokens":3,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":5}}}
"#;

#[test]
fn times_are_held_against_the_start_of_the_response_a_line_follows() {
    // A history file: a record timed before the model output above it.
    let text = "{\"id\":1,\"kind\":\"assistant\",\"time\":\"2026-02-07T10:00:05Z\",\"text\":\"a\"}\n\
                {\"id\":2,\"kind\":\"tool_result\",\"time\":\"2026-02-07T10:00:04Z\",\"text\":\"b\"}\n";
    let e = parse_jsonl(Path::new("h.jsonl"), text)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("h.jsonl:2:"), "{e}");
    assert!(
        e.contains("`time` 2026-02-07T10:00:04.000Z is earlier than 2026-02-07T10:00:05.000Z, the time of the model output on line 1"),
        "{e}"
    );
    let e = parse_jsonl(
        Path::new("h.jsonl"),
        "{\"id\":1,\"time\":\"noon\",\"text\":\"a\"}",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("h.jsonl:1:") && e.contains("expected RFC 3339"),
        "{e}"
    );
    // A Claude Code session whose first tool's result is timed between the two lines of the
    // response that called it (the shape that was refused): imported whole, by hand:
    //
    // | line | type | gives | time |
    // | 1 | user task | user "Read a.rs and b.rs" | 08:19:30.000 |
    // | 2 | assistant m1 (new response: call 1 on record 1, billed 10 + 100 in, 20 out) | tool_call Read | 41.712 |
    // | 3 | assistant m1 again (output raised to 40) | tool_call Read | 41.817 |
    // | 4 | user result t1: .719 is after m1's start, .712 | tool_result Read | 41.719 |
    // | 5 | user result t2 | tool_result Read | 41.900 |
    // | 6 | assistant m2 (call 2 on records 1–5: 3 + 50 + 100 in, 5 out) | assistant | 45.000 |
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "parallel.jsonl", PARALLEL_CALLS);
    let mut tally = Tally::default();
    let runs = import::read_tallied(
        &path,
        Format::ClaudeCode,
        &mut Problems::strict(),
        &mut tally,
    )
    .unwrap();
    assert_eq!(
        tally_text(&tally),
        "assistant: 3 lines: 3 gave 3 records (assistant 1, tool_call 2)\n\
         user: 3 lines: 3 gave 3 records (user 1, tool_result 2)\n\
         model responses: 2\n"
    );
    let run = &runs[0];
    let kinds: Vec<Kind> = run.history.records.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::User,
            Kind::ToolCall,
            Kind::ToolCall,
            Kind::ToolResult,
            Kind::ToolResult,
            Kind::Assistant
        ]
    );
    let times: Vec<String> = run
        .history
        .records
        .iter()
        .map(|r| r.time.unwrap().to_string()[17..23].to_string())
        .collect();
    assert_eq!(
        times,
        ["30.000", "41.712", "41.817", "41.719", "41.900", "45.000"]
    );
    assert_eq!(run.calls.len(), 2);
    assert_eq!(
        (run.calls[0].start, run.calls[0].end, run.calls[0].recorded),
        (0, 1, 110)
    );
    assert_eq!(run.calls[0].usage.unwrap().output, 40);
    assert_eq!(
        (run.calls[1].start, run.calls[1].end, run.calls[1].recorded),
        (0, 5, 153)
    );
    // What it imports loads again: the history file keeps the same rule (the result at .719
    // is after .712, where the call's run of outputs starts).
    let o = ctxlab(
        dir.path(),
        &[
            "import",
            "parallel.jsonl",
            "--format",
            "claude-code",
            "--out",
            "out.jsonl",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let back = ctxlab::history::load_jsonl(&dir.path().join("out.jsonl")).unwrap();
    assert_eq!(back[0].records.len(), 6);
    assert_eq!(
        back[0].records[3].time,
        Some(at("2026-02-07T08:19:41.719Z"))
    );

    // A line timed before the *start* of the response it follows is still refused: the first
    // result moved to .700, before m1's first line (.712).
    let early = PARALLEL_CALLS.replace("08:19:41.719Z", "08:19:41.700Z");
    write(dir.path(), "early.jsonl", &early);
    let o = ctxlab(
        dir.path(),
        &[
            "import",
            "early.jsonl",
            "--format",
            "claude-code",
            "--out",
            "early-out.jsonl",
        ],
    );
    assert_fails_with(
        &o,
        &[
            "early.jsonl:4:",
            "`timestamp` 2026-02-07T08:19:41.700Z is earlier than 2026-02-07T08:19:41.712Z, the start of the model response on line 2",
        ],
    );
    assert!(!dir.path().join("early-out.jsonl").exists());
    // The next response's first line starts a new one: a line timed before it (the second
    // result moved after line 6, at 44.000 < 45.000) is refused.
    let lines: Vec<&str> = PARALLEL_CALLS.lines().collect();
    let late = [
        lines[0],
        lines[1],
        lines[2],
        lines[3],
        lines[5],
        &lines[4].replace("41.900", "44.000"),
    ]
    .join("\n");
    write(dir.path(), "late.jsonl", &late);
    let o = ctxlab(
        dir.path(),
        &[
            "import",
            "late.jsonl",
            "--format",
            "claude-code",
            "--out",
            "late-out.jsonl",
        ],
    );
    assert_fails_with(
        &o,
        &[
            "late.jsonl:6:",
            "earlier than 2026-02-07T08:19:45.000Z, the start of the model response on line 5",
        ],
    );
    assert!(!dir.path().join("late-out.jsonl").exists());
}

/// System 2000 chars, task 1500, then three calls (100-char outputs, 2000- and 3000-char tool
/// results), the third `gap` seconds after the second; under `chars` a gap costs 1.
///
/// Inputs: call 1 [S U] = 3501, call 2 [S U A T] = 3501 + 100 + 2000 + 2 = 5603, call 3
/// [S U A T A T] = 5603 + 100 + 3000 + 2 = 8705.
fn timed_calls(gap: Option<i64>) -> CostedHistory {
    let t0 = at("2026-02-07T10:00:00Z").0;
    let spec = [
        (Kind::System, 2000, 0),
        (Kind::User, 1500, 0),
        (Kind::Assistant, 100, 5),
        (Kind::ToolResult, 2000, 10),
        (Kind::Assistant, 100, 60),
        (Kind::ToolResult, 3000, 70),
        (Kind::Assistant, 100, 60 + gap.unwrap_or(0)),
    ];
    let records = spec
        .iter()
        .enumerate()
        .map(|(i, &(kind, len, secs))| {
            let r = Record::new(i as u64 + 1, "x".repeat(len)).kind(kind);
            match gap {
                Some(_) => r.at(Time(t0 + secs * 1000)),
                None => r,
            }
        })
        .collect();
    CostedHistory::new(&History::new("h", records), CostModel::Chars)
}

/// Per call (read, write, uncached) of a `raw` replay under `cache`.
fn bills(h: &CostedHistory, cache: &str) -> Vec<(u64, u64, u64)> {
    let spec = CacheSpec::parse(cache).unwrap();
    let p = Pricing::new(None, Some(spec.kind)).unwrap();
    let cfg = SessionConfig {
        model: p.model,
        cache: p.cache.with(&spec),
        prices: p.prices,
        ..SessionConfig::new(1_000_000, 1.0).unwrap()
    };
    let mut trace = Trace::default();
    simulate_with(
        h,
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
        .map(|c| (c.cache_read, c.cache_write, c.uncached))
        .collect()
}

#[test]
fn a_gap_past_the_ttl_misses_the_cache_and_without_times_every_call_is_within_it() {
    // Anthropic (claude-sonnet-4.5, minimum 1024): call 1 writes [S] and [S U]; call 2 reads
    // [S U] = 3501 and writes the rest, 2102; call 3 reads [S U A T] = 5603 and writes 3102.
    let within = vec![(0, 3501, 0), (3501, 2102, 0), (5603, 3102, 0)];
    assert_eq!(bills(&timed_calls(None), "anthropic"), within);
    assert_eq!(bills(&timed_calls(Some(240)), "anthropic"), within);
    // Six minutes after the second call the cache is gone: the third reads nothing and
    // writes its whole prompt.
    let missed = vec![(0, 3501, 0), (3501, 2102, 0), (0, 8705, 0)];
    assert_eq!(bills(&timed_calls(Some(360)), "anthropic"), missed);
    // The 1-hour cache outlives the gap.
    assert_eq!(
        bills(&timed_calls(Some(360)), "anthropic(ttl=3600)"),
        within
    );
    // Gemini's lifetime is undocumented: no TTL unless the spec gives one. Its minimum
    // (gemini-3-pro-preview, 4096) is above call 2's shared prefix, 3501.
    let g = vec![(0, 0, 3501), (0, 0, 5603), (5603, 0, 3102)];
    assert_eq!(bills(&timed_calls(Some(360)), "gemini"), g);
    assert_eq!(
        bills(&timed_calls(Some(360)), "gemini(ttl=300)"),
        vec![(0, 0, 3501), (0, 0, 5603), (0, 0, 8705)]
    );
}

#[test]
fn fitted_parameters_credit_their_expected_share_and_the_defaults_change_nothing() {
    // Gemini (minimum 4096) reads call 3's shared prefix, 5603.
    let h = timed_calls(None);
    assert_eq!(
        bills(&h, "gemini"),
        vec![(0, 0, 3501), (0, 0, 5603), (5603, 0, 3102)]
    );
    assert_eq!(bills(&h, "gemini(miss=0, credit=1)"), bills(&h, "gemini"));
    // (1 − 0.2) × 0.5 = 0.4 of it: 2241.2 → 2241.
    assert_eq!(
        bills(&h, "gemini(miss=0.2, credit=0.5)"),
        vec![(0, 0, 3501), (0, 0, 5603), (2241, 0, 6464)]
    );
    // Anthropic's (minimum 1024): half of [S U] = 3501 and of [S U A T] = 5603, rounded half
    // away from zero, is read; what is not read is written.
    assert_eq!(
        bills(&h, "anthropic(miss=0.5)"),
        vec![(0, 3501, 0), (1751, 3852, 0), (2802, 5903, 0)]
    );
}

#[test]
fn cache_specs_parse_their_parameters_and_refuse_bad_ones() {
    let s = CacheSpec::parse("gemini(miss=0.105, credit=0.95)").unwrap();
    assert_eq!((s.miss, s.credit, s.ttl), (Some(0.105), Some(0.95), None));
    let rules = Pricing::new(None, Some(s.kind)).unwrap().cache.with(&s);
    assert_eq!(rules.spec(), "gemini(miss=0.105, credit=0.95)");
    assert_eq!(
        Pricing::new(None, Some(s.kind)).unwrap().cache.spec(),
        "gemini"
    );
    for (bad, says) in [
        (
            "gemini(miss=1)",
            "`miss` expects a probability from 0 up to (not including) 1",
        ),
        (
            "gemini(credit=0)",
            "`credit` expects a share above 0 and at most 1",
        ),
        ("anthropic(ttl=1.5)", "`ttl` expects whole seconds above 0"),
        (
            "gemini(hit=0.9)",
            "unknown parameter `hit` (known: miss, credit, ttl)",
        ),
        ("none(miss=0.1)", "cache `none` takes no parameters"),
        ("google", "unknown cache \"google\""),
    ] {
        let e = CacheSpec::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

/// A mini-swe-agent run under `chars`: system 1000 chars, task 3999 (call 1's input 5000), then
/// six steps whose thought is 99 chars and observation 900 (each call adds 1001). Recorded:
/// prompts 5000, 6000, …, 10000; cached 0, 0, then 0.9 × the previous prompt.
fn fit_run(name: &str) -> String {
    let mut messages = vec![
        serde_json::json!({"role": "system", "content": "s".repeat(1000)}),
        serde_json::json!({"role": "user", "content": "t".repeat(3999)}),
    ];
    let cached = [0, 0, 5400, 6300, 7200, 8100];
    for (i, c) in cached.iter().enumerate() {
        let prompt = 5000 + 1000 * i as u64;
        messages.push(serde_json::json!({
            "role": "assistant",
            "content": "a".repeat(99),
            "extra": {"response": {"usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 10,
                "prompt_tokens_details": {"cached_tokens": c}
            }}}
        }));
        if i < 5 {
            messages.push(serde_json::json!({"role": "user", "content": "o".repeat(900)}));
        }
    }
    serde_json::json!({"instance_id": name, "messages": messages}).to_string()
}

#[test]
fn fit_cache_recovers_known_misses_and_credits() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.traj.json", &fit_run("a"));
    let b = write(dir.path(), "b.traj.json", &fit_run("b"));
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "mini-swe-agent",
            "--cost",
            "chars",
            "--fit-cache",
            "gemini",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Calls 2–6 could read (the previous prompt ≥ 4096); call 2 read nothing: miss = 1 / 5.
    // Recorded share: 27 000 / 45 000 = 0.6. Modelled at miss 0.2 (inputs 5000, 6001, 7002,
    // 8003, 9004, 10 005 = 45 015): reads 0.8 × 5000 … 0.8 × 9004 = 4000 + 4801 + 5602 + 6402
    // + 7203 = 28 008, share 0.62219, so credit = 0.6 / 0.62219 = 0.964. After: 0.7712 of each
    // shared prefix, 3856 + 4628 + 5400 + 6172 + 6944 = 27 000 of 45 015 = 0.600. Before: every
    // shared prefix, 35 010 / 45 015 = 0.778.
    assert!(
        out.starts_with("cache = \"gemini(miss=0.2, credit=0.964)\"\n"),
        "{out}"
    );
    assert!(
        out.contains("2 of 10 calls that could read the cache"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["pooled", "0.600", "0.778", "0.600"]),
        "{out}"
    );
    assert!(
        out.contains("fitted on A (1 runs): \"gemini(miss=0.2, credit=0.964)\"; on B (1 runs): recorded 0.600, before 0.778, after 0.600"),
        "{out}"
    );
}

#[test]
fn fit_cache_refuses_runs_without_usage_and_caches_without_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.traj.json", &fit_run("a"));
    for (cache, says) in [
        ("none", "the `none` cache has no free parameter to fit"),
        (
            "recorded",
            "the `recorded` cache has no free parameter to fit",
        ),
    ] {
        let o = ctxlab(
            dir.path(),
            &[
                "calibrate",
                a.to_str().unwrap(),
                "--format",
                "mini-swe-agent",
                "--fit-cache",
                cache,
            ],
        );
        assert_fails_with(&o, &[says]);
        assert!(stdout(&o).is_empty());
    }
    let bare = serde_json::json!({"instance_id": "bare", "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "t"},
        {"role": "assistant", "content": "a"}
    ]});
    let p = write(dir.path(), "bare.traj.json", &bare.to_string());
    let o = ctxlab(
        dir.path(),
        &[
            "calibrate",
            p.to_str().unwrap(),
            "--format",
            "mini-swe-agent",
            "--fit-cache",
            "gemini",
        ],
    );
    assert_fails_with(
        &o,
        &["none of the 1 run(s) records how its calls were billed"],
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn whole_file_formats_are_counted_by_record_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a.traj.json", &fit_run("a"));
    let mut tally = Tally::default();
    import::read_tallied(
        &path,
        Format::MiniSweAgent,
        &mut Problems::strict(),
        &mut tally,
    )
    .unwrap();
    // System, task, six thoughts and five observations; six calls record their usage.
    assert_eq!(
        tally_text(&tally),
        "messages: 13 records (system 1, user 1, assistant 6, tool_result 5)\nmodel responses: 6\n"
    );
}

/// A Claude Code session of three calls, the third `last` (a time of day) after the task.
fn gap_session(last: Option<&str>) -> String {
    let time = |t: &str| match last {
        Some(_) => format!(",\"timestamp\":\"2026-02-07T{t}Z\""),
        None => String::new(),
    };
    let call = |t: &str, id: &str, block: &str| {
        format!(
            "{{\"type\":\"assistant\"{},\"message\":{{\"id\":\"{id}\",\"content\":[{block}],\"usage\":{{\"input_tokens\":1,\"output_tokens\":5}}}}}}",
            time(t)
        )
    };
    let user = |t: &str, content: String| {
        format!(
            "{{\"type\":\"user\"{},\"message\":{{\"role\":\"user\",\"content\":{content}}}}}",
            time(t)
        )
    };
    let tool = |id: &str| {
        format!("{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"Bash\",\"input\":{{\"command\":\"ls\"}}}}")
    };
    let result = |id: &str, c: &str| {
        format!(
            "[{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"content\":\"{}\"}}]",
            c.repeat(3000)
        )
    };
    [
        user("10:00:00", format!("\"task {}\"", "x".repeat(3000))),
        call("10:00:05", "m1", &tool("t1")),
        user("10:00:06", result("t1", "y")),
        call("10:01:00", "m2", &tool("t2")),
        user("10:01:01", result("t2", "z")),
        call(
            last.unwrap_or("10:02:00"),
            "m3",
            "{\"type\":\"text\",\"text\":\"done\"}",
        ),
    ]
    .join("\n")
}

/// (cache read, cache write) of each call of the session replayed under `raw`.
fn session_reads(dir: &Path, text: &str) -> Vec<(u64, u64)> {
    write(dir, "gap.jsonl", text);
    let o = ctxlab(
        dir,
        &[
            "session",
            "gap.jsonl",
            "--transcript",
            "claude-code",
            "--strategy",
            "raw",
            "--cost",
            "chars",
            "--window",
            "100000",
            "--ratio",
            "1",
            "--cache-min-tokens",
            "0",
            "--format",
            "csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<u64> = l.split(',').filter_map(|x| x.parse().ok()).collect();
            // call, usage, cumulative, input, output, cache_read, cache_write, …
            (f[5], f[6])
        })
        .collect()
}

#[test]
fn a_transcript_with_a_six_minute_gap_misses_the_cache_at_that_call() {
    // Under `chars`: call 1 [task] = 3005; call 2 adds the tool call `{"command":"ls"}` (16)
    // and a 3000-char result: 6023, reading the task's 3005 and writing 3018; call 3 adds as
    // much again: 9041.
    let dir = tempfile::tempdir().unwrap();
    let within = vec![(0, 3005), (3005, 3018), (6023, 3018)];
    assert_eq!(session_reads(dir.path(), &gap_session(None)), within);
    assert_eq!(
        session_reads(dir.path(), &gap_session(Some("10:05:00"))),
        within
    );
    // 10:01:00 to 10:07:00: six minutes, past the 5-minute TTL: nothing read, all written.
    assert_eq!(
        session_reads(dir.path(), &gap_session(Some("10:07:00"))),
        vec![(0, 3005), (3005, 3018), (0, 9041)]
    );
}
