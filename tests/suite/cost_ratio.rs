//! `cost_ratio_vs_length`: a session sweep with `raw(window=none)` draws each strategy's input
//! per call and cost over the baseline's against run length (and `ctxlab plot` redraws it); a
//! sweep without it draws none. Beside it, the Complexity Trap's own per-instance ratios.

use crate::common::*;
use ctxlab::report::complexity_trap;
use ctxlab::report::cost_ratio_chart;
use std::path::Path;

/// Two histories of 9-character records (cost `chars`: one token a character, 1 a separator):
/// `short` is user, assistant (one call); `long` is three user/assistant pairs (three calls).
fn histories() -> String {
    let mut lines = String::new();
    let mut id = 0;
    for (history, pairs) in [("short", 1), ("long", 3)] {
        for _ in 0..pairs {
            for (kind, c) in [("user", "u"), ("assistant", "a")] {
                id += 1;
                let text = c.repeat(9);
                lines.push_str(&format!(
                    "{{\"history\":\"{history}\",\"id\":{id},\"kind\":\"{kind}\",\"text\":\"{text}\"}}\n"
                ));
            }
        }
    }
    lines
}

fn experiment(strategies: &str) -> String {
    format!(
        "name = \"ratios\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\ncost = \"chars\"\n\
         [session]\nstrategies = {strategies}\nwindows = [45]\nratios = [0.8]\ncache = \"none\"\n\
         model = \"gemini-3-pro-preview\"\n[output]\ndir = \"out\"\n"
    )
}

fn sweep(dir: &Path, strategies: &str) {
    std::fs::write(dir.join("h.jsonl"), histories()).unwrap();
    std::fs::write(dir.join("e.toml"), experiment(strategies)).unwrap();
    let o = ctxlab(dir, &["sweep", "e.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn listed(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("out/manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// Window 45, no cache, $2 / $12 per million input / output tokens.
/// `short`: one call, input 9 (the user record), output 9: both strategies alike, ratios 1.
/// `long`: inputs 9, 29 (three records, two separators), 49; outputs 9 each. `raw` is refused
/// its third call (49 + 9 > 45): two calls, input 38, output 18, $(38·2 + 18·12) / 10⁶ =
/// $0.000292, against the baseline's three, input 87, output 27, $(87·2 + 27·12) / 10⁶ =
/// $0.000498. Input per call: 19 against 29.
#[test]
fn ratios_to_the_agent_as_it_ran_are_drawn_against_run_length() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path(), "[\"raw\", \"raw(window=none)\"]");
    let sessions = cost_ratio_chart::read(&dir.path().join("out/sessions.parquet")).unwrap();
    let ratios = cost_ratio_chart::ratios(&sessions);
    assert_eq!(ratios.len(), 2);
    let (short, long) = (&ratios[0], &ratios[1]);
    assert!(ratios.iter().all(|r| r.strategy == "raw" && r.window == 45));
    assert_eq!((short.history.as_str(), short.length), ("short", 1));
    assert_eq!((short.per_call_input, short.cost), (Some(1.0), Some(1.0)));
    assert!(short.completed);
    assert_eq!((long.history.as_str(), long.length), ("long", 3));
    assert!(!long.completed);
    assert!(
        (long.per_call_input.unwrap() - 19.0 / 29.0).abs() < 1e-12,
        "{long:?}"
    );
    assert!(
        (long.cost.unwrap() - 292.0 / 498.0).abs() < 1e-9,
        "{long:?}"
    );

    let charts = dir.path().join("out/charts");
    let svg = std::fs::read_to_string(charts.join("cost_ratio_vs_length.svg")).unwrap();
    assert!(svg.contains("Cost and input per call against raw(window=none), by run length"));
    assert!(charts.join("cost_ratio_vs_length.png").exists());
    let files = listed(dir.path());
    for f in [
        "charts/cost_ratio_vs_length.png",
        "charts/cost_ratio_vs_length.svg",
    ] {
        assert!(files.iter().any(|l| l == f), "{f} not in {files:?}");
    }

    // `ctxlab plot` draws it again from the tables.
    std::fs::remove_file(charts.join("cost_ratio_vs_length.svg")).unwrap();
    let o = ctxlab(dir.path(), &["plot", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("cost_ratio_vs_length.svg"));
    let again = std::fs::read_to_string(charts.join("cost_ratio_vs_length.svg")).unwrap();
    assert_eq!(again, svg);
}

#[test]
fn a_sweep_without_the_agent_as_it_ran_draws_no_cost_ratio_chart() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path(), "[\"raw\", \"recent\"]");
    assert!(!dir
        .path()
        .join("out/charts/cost_ratio_vs_length.png")
        .exists());
    assert!(!dir
        .path()
        .join("out/charts/cost_ratio_vs_length.svg")
        .exists());
    assert!(dir
        .path()
        .join("out/charts/session_tokens_retention.svg")
        .exists());
    assert!(!listed(dir.path()).iter().any(|f| f.contains("cost_ratio")));
}

/// A file in the paper's format: one row of another experiment and one LLM-Summary row (both
/// skipped), raw and masked runs of instances a, b, c:
/// raw a 30 turns $0.20 (2 000 a call), raw b 50 turns $0.60 (6 000), raw c 90 $1.00 (10 000);
/// masked a 25 turns $0.10 (500), masked b 70 $0.30 (1 500), masked c 45 $0.40 (1 000).
/// Own lengths: 20–40 0.10 / 0.20 = 0.50, prompt 500 / 2 000 = 0.25; 40–80 (masked b, c
/// against raw b) 0.35 / 0.60 = 0.5833, prompt 1 250 / 6 000 = 0.2083; 80–160 raw c only.
/// Paired: 20–40 a alone, 0.50 and 0.25; 40–80 b alone, 0.30 / 0.60 = 0.50, prompt 0.25;
/// 80–160 none.
const TRAP_CSV: &str = "experiment,strategy,instance_id,cost,summary_cost,has_summary,summary_count,turn_count,mean_reasoning_tokens,mean_completion_tokens,mean_prompt_tokens,outcome
local-qwen3-32b-baseline_raw.0-verified-500,Raw Agent,a,9.0,0.0,False,0,30,0,10,99999,1
gemini_2.5_flash-agent-t_0.8-turn-summaries,LLM-Summary,a,9.0,0.1,True,1,30,0,10,99999,1
gemini_2.5_flash-agent-t_0.8-baseline_raw.0-verified-500,Raw Agent,a,0.20,0.0,False,0,30,0,10,2000,1
gemini_2.5_flash-agent-t_0.8-baseline_raw.0-verified-500,Raw Agent,b,0.60,0.0,False,0,50,0,10,6000,0
gemini_2.5_flash-agent-t_0.8-baseline_raw.0-verified-500,Raw Agent,c,1.00,0.0,False,0,90,0,10,10000,0
gemini_2.5_flash-agent-t_0.8-baseline_N_1_M_10.0-verified-500,Observation Masking,a,0.10,0.0,False,0,25,0,10,500,1
gemini_2.5_flash-agent-t_0.8-baseline_N_1_M_10.0-verified-500,Observation Masking,b,0.30,0.0,False,0,70,0,10,1500,1
gemini_2.5_flash-agent-t_0.8-baseline_N_1_M_10.0-verified-500,Observation Masking,c,0.40,0.0,False,0,45,0,10,1000,0
";

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn complexity_trap_bands_are_computed_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(complexity_trap::FILE);
    std::fs::write(&path, TRAP_CSV).unwrap();
    let runs = complexity_trap::read(&path).unwrap();
    assert_eq!(runs.len(), 6);
    let b = complexity_trap::bands(&runs);
    assert_eq!((b[0].runs, b[1].runs, b[2].runs), ((1, 1), (1, 2), (1, 0)));
    assert!(close(b[0].cost, 0.5) && close(b[0].prompt_per_call, 0.25));
    assert!(close(b[1].cost, 0.35 / 0.6) && close(b[1].prompt_per_call, 1250.0 / 6000.0));
    assert_eq!((b[2].cost, b[2].prompt_per_call), (None, None));
    let paired: Vec<usize> = b.iter().map(|b| b.paired_instances).collect();
    assert_eq!(paired, [1, 1, 0]);
    assert!(close(b[0].paired_cost, 0.5) && close(b[0].paired_prompt_per_call, 0.25));
    assert!(close(b[1].paired_cost, 0.5) && close(b[1].paired_prompt_per_call, 0.25));
    assert_eq!(b[2].paired_cost, None);
}

/// The sweep's chart draws the paper's bands from the folder `CTXLAB_COMPLEXITY_TRAP` names,
/// and says in its caption when there is none.
#[test]
fn the_chart_quotes_the_paper_from_the_folder_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("trap")).unwrap();
    std::fs::write(
        dir.path().join("trap").join(complexity_trap::FILE),
        TRAP_CSV,
    )
    .unwrap();
    std::fs::write(dir.path().join("h.jsonl"), histories()).unwrap();
    let strategies = "[\"raw\", \"raw(window=none)\"]";
    std::fs::write(dir.path().join("e.toml"), experiment(strategies)).unwrap();
    let run = |var: &str, args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ctxlab"))
            .current_dir(dir.path())
            .env(complexity_trap::DIR_VAR, var)
            .args(args)
            .output()
            .unwrap()
    };
    // The caption's words, whatever lines the chart wraps them on.
    let caption = || {
        let svg = std::fs::read_to_string(dir.path().join("out/charts/cost_ratio_vs_length.svg"))
            .unwrap();
        svg.split('<')
            .filter_map(|tag| tag.strip_prefix("text").and_then(|t| t.split_once('>')))
            .map(|(_, text)| text.trim())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let o = run("trap", &["sweep", "e.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = caption();
    assert!(text.contains("cost × 0.50 / 0.58 / –"), "{text}");
    assert!(text.contains("paired (instances whose two runs both fall in the band: 1 / 1 / 0) cost × 0.50 / 0.50 / –"), "{text}");
    assert!(text.contains("Live runs whose length changed with the strategy, not replays"));
    let o = run("", &["plot", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        caption().contains("live runs are not drawn"),
        "{}",
        caption()
    );
    let o = run("no-such-folder", &["plot", "out"]);
    assert_fails_with(
        &o,
        &[
            "CTXLAB_COMPLEXITY_TRAP",
            "no-such-folder",
            "expected a folder",
        ],
    );
}

#[test]
fn a_malformed_complexity_trap_file_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(complexity_trap::FILE);
    let bad = TRAP_CSV.replace("Raw Agent,b,0.60", "Raw Agent,b,cheap");
    std::fs::write(&path, bad).unwrap();
    let e = complexity_trap::read(&path).unwrap_err().to_string();
    assert!(
        e.contains(":5: cost") && e.contains("\"cheap\"") && e.contains("expected a number"),
        "{e}"
    );
    std::fs::write(&path, "experiment,strategy\n").unwrap();
    let e = complexity_trap::read(&path).unwrap_err().to_string();
    assert!(e.contains("instance_id"), "{e}");
}

/// The Complexity Trap's live SWE-agent runs with Gemini 2.5 Flash, banded 20–40 / 40–80 /
/// 80–160 turns: masking's mean billed cost over raw's (each run by its own turn count) and
/// paired (both runs of an instance in the band), and the mean prompt per call likewise.
#[test]
fn complexity_trap_bands_on_the_shared_data() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent (the Complexity Trap's results are not in the repository)");
        return;
    };
    let runs =
        complexity_trap::read(&data.join("complexity-trap").join(complexity_trap::FILE)).unwrap();
    // 498 raw and 499 masked runs of the 500 instances.
    assert_eq!(runs.iter().filter(|r| r.masking).count(), 499);
    assert_eq!(runs.iter().filter(|r| !r.masking).count(), 498);
    let b = complexity_trap::bands(&runs);
    let two = |v: Option<f64>| format!("{:.2}", v.unwrap());
    let row = |f: fn(&complexity_trap::Band) -> Option<f64>| -> Vec<String> {
        b.iter().map(|b| two(f(b))).collect()
    };
    assert_eq!(row(|b| b.cost), ["1.06", "0.76", "0.55"]);
    assert_eq!(row(|b| b.paired_cost), ["0.82", "0.89", "0.60"]);
    assert_eq!(row(|b| b.prompt_per_call), ["0.76", "0.41", "0.28"]);
    assert_eq!(row(|b| b.paired_prompt_per_call), ["0.62", "0.48", "0.33"]);
    let counts: Vec<(usize, usize, usize)> = b
        .iter()
        .map(|b| (b.runs.0, b.runs.1, b.paired_instances))
        .collect();
    assert_eq!(counts, [(115, 104, 28), (62, 68, 12), (56, 39, 7)]);
}
