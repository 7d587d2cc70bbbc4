//! `ctxlab session` through the binary: scripted traces, replays, and every bad argument.

use crate::common::*;

#[test]
fn scripted_lesson_demo_csv_is_exact() {
    let o = ctxlab(
        &root(),
        &[
            "session",
            "--window",
            "2000",
            "--ratio",
            "0.7",
            "--usage",
            "400,650,800,280,210",
            "--format",
            "csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "call,usage,cumulative,compaction_before\n\
         1,400,400,false\n\
         2,650,1050,false\n\
         3,800,1850,false\n\
         4,280,280,true\n\
         5,210,490,false\n"
    );
}

#[test]
fn scripted_storm_csv_and_text() {
    let args = [
        "session",
        "--window",
        "2000",
        "--ratio",
        "0.7",
        "--usage",
        "400,650,800,280,210,150",
        "--no-reset",
    ];
    let o = ctxlab(&root(), &[&args[..], &["--format", "csv"]].concat());
    assert_eq!(
        stdout(&o),
        "call,usage,cumulative,compaction_before\n\
         1,400,400,false\n\
         2,650,1050,false\n\
         3,800,1850,false\n\
         4,280,2130,true\n\
         5,210,2340,true\n\
         6,150,2490,true\n"
    );
    let text = stdout(&ctxlab(&root(), &args));
    assert!(text.contains("trigger 1400; usage is NOT reset"), "{text}");
    assert!(
        text.contains("compaction (usage 2130 ≥ 1400) — storm"),
        "{text}"
    );
    assert!(
        text.contains("6 agent calls + 3 compactions = 9 model calls; 2 storms"),
        "{text}"
    );
    let guarded = stdout(&ctxlab(
        &root(),
        &[&args[..], &["--max-consecutive", "2"]].concat(),
    ));
    assert!(
        guarded.contains("guard: compaction stopped after 2 fruitless"),
        "{guarded}"
    );
}

#[test]
fn scripted_exercise_accepts_input_plus_output() {
    let o = ctxlab(
        &root(),
        &[
            "session",
            "--window",
            "6000",
            "--ratio",
            "0.75",
            "--usage",
            "1200,1500,900,1100,300+100",
            "--format",
            "csv",
        ],
    );
    assert!(
        stdout(&o).ends_with("4,1100,4700,false\n5,400,400,true\n"),
        "{}",
        stdout(&o)
    );
    let text = stdout(&ctxlab(
        &root(),
        &[
            "session",
            "--window",
            "6000",
            "--ratio",
            "0.75",
            "--usage",
            "1200,1500,900,1100",
        ],
    ));
    assert!(
        text.contains("usage 4700 ≥ 4500 after the last call: the next call would compact first"),
        "{text}"
    );
}

#[test]
fn replay_prints_calls_compactions_and_metrics() {
    // article12 under chars: call 1 input 23 + output 27; call 2 (the tool call 4) input
    // 23+1+27+1+18 = 70, output 13 → 133; call 3 input 125, output 17 → 275 ≥ 140.
    // Before call 4 the context is records 1–9 (188 + 8 gaps = 196); `recent` under
    // floor(200 × 0.3) = 60 keeps records 8 and 9 (24 + 1 + 27 = 52), 9 required. Call 4's
    // output is records 10 and 11 (22 + 1 + 17 = 40). The context trigger (the default) fires
    // at the same call: before call 3 the context is 125 < 140, before call 4 196 ≥ 140.
    // `recent` calls no model: 5 agent calls are the 5 model calls.
    let base = [
        "session",
        "data/article12.jsonl",
        "--strategy",
        "recent",
        "--window",
        "200",
        "--ratio",
        "0.7",
        "--cost",
        "chars",
        // Anthropic's cache without its 1024-token minimum, which these 200 chars never reach.
        "--cache-min-tokens",
        "0",
    ];
    let o = ctxlab(&root(), &[&base[..], &["--format", "csv"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "call,usage,cumulative,compaction_before,input,output,cache_read,cache_write,uncached,required_present,required_appeared"
    );
    assert_eq!(lines[1], "1,50,50,false,23,27,0,23,0,1,1");
    assert_eq!(lines[2], "2,83,133,false,70,13,23,47,0,2,2");
    assert_eq!(lines[3], "3,142,275,false,125,17,70,55,0,3,3");
    assert_eq!(lines[4], "4,92,92,true,52,40,0,52,0,1,4");
    let text = stdout(&ctxlab(&root(), &base));
    assert!(
        text.contains("compaction: context 196 → 52 (capacity 60)"),
        "{text}"
    );
    assert!(text.contains("required at the end: 1/4 verbatim"), "{text}");
    let m = stdout(&ctxlab(
        &root(),
        &[&base[..], &["--format", "metrics"]].concat(),
    ));
    assert!(
        m.starts_with("history,strategy,window,ratio,trigger,"),
        "{m}"
    );
    assert!(
        m.lines()
            .nth(1)
            .unwrap()
            .starts_with("article12,recent,200,0.7,140,12,5,5,0,1,0,0,false,false,,true,"),
        "{m}"
    );
    // After its five keys, the row holds the sessions table's own columns, in its order
    // (records, calls, model_calls, summary_calls, compactions, failed_compactions, storms,
    // guard_tripped, exit_context, exit_call, completed, ...): one declaration for both.
    let header: Vec<&str> = m.lines().next().unwrap().split(',').collect();
    let sessions = ctxlab::tables::sessions::table();
    let names = sessions.column_names();
    let own = names.iter().position(|&c| c == "records").unwrap();
    assert_eq!(header[5..], names[own..]);
    let row = by_name(&m);
    // The default cache, and no summary size for `recent`, which writes no summary.
    assert_eq!(row["cache"], "anthropic");
    assert_eq!(
        (row["summary_ratio"].as_str(), row["summary_cap"].as_str()),
        ("", "")
    );
}

#[test]
fn replay_options_reach_the_session() {
    let base = [
        "session",
        "data/article12.jsonl",
        "--window",
        "200",
        "--ratio",
        "0.7",
        "--cost",
        "chars",
        "--format",
        "metrics",
    ];
    // Flagged records are noted at min(1, 2 × 0.5) = 1 and read back: 7 records noted. The
    // notes grow the context until call 4 no longer fits the window: the run has no end, so
    // its end-of-run measures are empty.
    let m = stdout(&ctxlab(
        &root(),
        &[&base[..], &["--strategy", "recent", "--note-rate", "0.5"]].concat(),
    ));
    let row = by_name(&m);
    assert_eq!(
        (row["exit_context"].as_str(), row["exit_call"].as_str()),
        ("true", "4"),
        "{m}"
    );
    assert_eq!(
        (row["final_context"].as_str(), row["noted"].as_str()),
        ("207", "7"),
        "{m}"
    );
    assert_eq!(row["required_total"], "4", "{m}");
    for end in [
        "required_verbatim",
        "required_any",
        "retention_end",
        "retention_any_end",
    ] {
        assert_eq!(row[end], "", "{end}: {m}");
    }
    let layered = ctxlab(
        &root(),
        &[
            &base[..],
            &[
                "--strategy",
                "recent",
                "--layers",
                "--reserved-output",
                "20",
            ],
        ]
        .concat(),
    );
    assert!(layered.status.success(), "{}", stderr(&layered));
}

#[test]
fn bad_arguments_fail_with_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.jsonl"),
        "{\"id\":1,\"text\":\"a\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.jsonl"),
        "{\"id\":1,\"text\":\"a\"}\n{\"id\":1}\n",
    )
    .unwrap();
    let usage = ["--usage", "400,650"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--window", "2000", "--ratio", "0"],
            vec!["--ratio", "(0, 1]"],
        ),
        (
            vec!["--window", "2000", "--ratio", "1.5"],
            vec!["--ratio", "1.5 is out of range"],
        ),
        (
            vec!["--window", "2000", "--ratio", "-0.5"],
            vec!["--ratio", "(0, 1]"],
        ),
        (
            vec!["--window", "0", "--ratio", "0.7"],
            vec!["--window", "at least 1"],
        ),
        (
            vec!["--window", "big", "--ratio", "0.7"],
            vec!["--window", "big"],
        ),
        (
            vec!["--window", "2000", "--ratio", "x"],
            vec!["--ratio", "x"],
        ),
        (
            vec!["--window", "2000", "--ratio", "0.7", "--storm-turns", "0"],
            vec!["--storm-turns", "at least 1"],
        ),
        (
            vec![
                "--window",
                "2000",
                "--ratio",
                "0.7",
                "--max-consecutive",
                "0",
            ],
            vec!["--max-consecutive"],
        ),
        (
            vec!["--window", "2000", "--ratio", "0.7", "--strategy", "recent"],
            vec!["--strategy only applies when replaying a HISTORY"],
        ),
        (
            vec!["--window", "2000", "--ratio", "0.7", "--format", "metrics"],
            vec!["--format metrics needs a HISTORY"],
        ),
    ];
    for (args, needles) in cases {
        let all = [&["session"][..], &usage, &args].concat();
        assert_fails_with(&ctxlab(&root(), &all), &needles);
    }
    let w = ["session", "--window", "2000", "--ratio", "0.7"];
    assert_fails_with(
        &ctxlab(&root(), &[&w[..], &["--usage", "400,abc,5"]].concat()),
        &["--usage", "item 2 (\"abc\")", "whole number"],
    );
    assert_fails_with(
        &ctxlab(&root(), &[&w[..], &["--usage", ""]].concat()),
        &["--usage", "expected"],
    );
    assert_fails_with(&ctxlab(&root(), &w), &["HISTORY"]);
    let h = |file: &str| dir.path().join(file).to_string_lossy().into_owned();
    let replay = |extra: &[&str]| {
        let mut a: Vec<String> = w.iter().map(|s| s.to_string()).collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        ctxlab(&root(), &refs)
    };
    assert_fails_with(
        &replay(&["data/article12.jsonl"]),
        &["--strategy is required"],
    );
    assert_fails_with(
        &replay(&["data/article12.jsonl", "--strategy", "bogus"]),
        &["--strategy", "unknown strategy `bogus`"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--note-rate",
            "2",
        ]),
        &["--note-rate", "from 0 to 1"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--target",
            "0",
        ]),
        &["--target", "(0, 1]"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--price-input",
            "-1",
        ]),
        &["--price-input", "≥ 0"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--layers",
            "--layer-shares",
            "10,20,30",
        ]),
        &["--layer-shares", "four percentages"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--layers",
            "--layer-shares",
            "10,20,30,30",
        ]),
        &["--layer-shares", "add up to 90"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--layers",
            "--reserved-output",
            "2000",
        ]),
        &["--reserved-output", "less than the window"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--reserved-output",
            "20",
        ]),
        &["only apply with --layers"],
    );
    assert_fails_with(
        &replay(&[&h("notes.jsonl"), "--strategy", "recent"]),
        &["notes.jsonl", "no `assistant` or `tool_call` records"],
    );
    assert_fails_with(
        &replay(&[&h("bad.jsonl"), "--strategy", "recent"]),
        &["bad.jsonl:2:", "missing field `text`"],
    );
    assert_fails_with(
        &replay(&[&h("missing.jsonl"), "--strategy", "recent"]),
        &["missing.jsonl"],
    );
    assert_fails_with(
        &replay(&[
            "data/article12.jsonl",
            "--strategy",
            "recent",
            "--history-name",
            "nope",
        ]),
        &["no history named \"nope\""],
    );
}

#[test]
fn replay_takes_a_noise_model() {
    let base = [
        "session",
        "data/article12.jsonl",
        "--strategy",
        "required",
        "--window",
        "200",
        "--ratio",
        "0.7",
        "--cost",
        "chars",
        "--format",
        "metrics",
    ];
    let run = |extra: &[&str]| {
        let o = ctxlab(&root(), &[&base[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    // The uniform model is the rates' shorthand, draw for draw.
    assert_eq!(
        run(&["--noise", "uniform(fn=0.5, fp=0.1)"]),
        run(&["--false-negative", "0.5", "--false-positive", "0.1"])
    );
    // Every flag missed: `required` then keeps what fits of the newest, as `recent` would.
    assert_ne!(run(&["--noise", "by_kind(fn=1)"]), run(&[]));
    assert_fails_with(
        &ctxlab(
            &root(),
            &[
                &base[..],
                &["--noise", "uniform(fn=0.1)", "--false-negative", "0.1"],
            ]
            .concat(),
        ),
        &["--noise: give a noise model or the rates"],
    );
    assert_fails_with(
        &ctxlab(
            &root(),
            &[&base[..], &["--noise", "sometimes(fn=2)"]].concat(),
        ),
        &["--noise", "unknown noise model `sometimes`"],
    );
}

/// A one-row CSV's values by column name.
fn by_name(csv: &str) -> std::collections::HashMap<String, String> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let values = reader.records().next().unwrap().unwrap();
    header
        .iter()
        .zip(values.iter())
        .map(|(h, v)| (h.to_string(), v.to_string()))
        .collect()
}
