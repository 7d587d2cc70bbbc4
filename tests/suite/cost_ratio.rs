//! `cost_ratio_vs_length`: a session sweep with `raw(window=none)` draws each strategy's input
//! per call and cost over the baseline's against run length (and `ctxlab plot` redraws it); a
//! sweep without it draws none. Beside it, the Complexity Trap's own per-instance ratios.

use crate::common::*;
use ctxlab::report::cost_ratio_chart::{self, COMPLEXITY_TRAP_FLASH};
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
    assert!(svg.contains("Input per call and cost against raw(window=none), by run length"));
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

/// The Complexity Trap's live SWE-agent runs with Gemini 2.5 Flash: masking's mean prompt
/// tokens per call over the raw agent's, each condition's runs banded by their own turn count,
/// are the figures the chart's subtitle quotes (to two places).
#[test]
fn complexity_trap_masking_ratios_by_turn_band_are_the_quoted_ones() {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent (the Complexity Trap's figures are not in the repository)");
        return;
    };
    let path = data.join("complexity-trap/experiment_instance_costs_sweagent.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (experiment, strategy) = (col("experiment"), col("strategy"));
    let (turns, prompt) = (col("turn_count"), col("mean_prompt_tokens"));
    // (strategy, turn count, mean prompt tokens) of the non-thinking Flash runs.
    let rows: Vec<(String, u64, f64)> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| r[experiment].starts_with("gemini_2.5_flash-agent"))
        .map(|r| {
            (
                r[strategy].to_string(),
                r[turns].parse().unwrap(),
                r[prompt].parse().unwrap(),
            )
        })
        .collect();
    let mean = |name: &str, lo: u64, hi: u64| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|(s, t, _)| s == name && (lo..hi).contains(t))
            .map(|r| r.2)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let overall = mean("Observation Masking", 0, u64::MAX) / mean("Raw Agent", 0, u64::MAX);
    assert!((overall - 0.43).abs() < 0.005, "{overall}");
    for (lo, hi, quoted) in COMPLEXITY_TRAP_FLASH {
        let ratio = mean("Observation Masking", lo, hi) / mean("Raw Agent", lo, hi);
        assert!(
            (ratio - quoted).abs() < 0.005,
            "{lo}–{hi} turns: {ratio}, quoted {quoted}"
        );
    }
}
