//! `ctxlab plot RESULTS_DIR` end to end: charts and report from a summary table written here.

use crate::common::summary_fixture::{write_manifest, write_summary, Row};
use crate::common::{assert_fails_with, ctxlab, stdout};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const STRATEGIES: [&str; 2] = ["recent", "required(fill=skip)"];
const KEEP_RECENT: [u64; 2] = [0, 3];
const BUDGETS: [f64; 3] = [25.0, 50.0, 100.0];
const FALSE_NEGATIVE: [f64; 2] = [0.0, 0.2];
const FALSE_POSITIVE: [f64; 2] = [0.0, 0.1];
const CHART_STEMS: [&str; 3] = [
    "retention_vs_reduction",
    "retention_vs_noise",
    "feasibility",
];

/// A grid whose numbers are easy to derive by hand:
/// - `recent` keeps `budget / 100` of the required records, 0.1 more with keep_recent 3;
/// - `required(fill=skip)` keeps `1 − FN`, and is infeasible at a 25 % budget: 10 of 40 cells
///   without false positives, all 40 with them;
/// - reduction is `1 − budget / 100`; intervals are the mean ± 0.05, cut at 0 and 1.
fn fixture_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for strategy in STRATEGIES {
        for k in KEEP_RECENT {
            for b in BUDGETS {
                for q in FALSE_NEGATIVE {
                    for p in FALSE_POSITIVE {
                        let (retention, n_feasible) = if strategy == "recent" {
                            let bonus = if k == 3 { 0.1 } else { 0.0 };
                            (((b / 100.0) + bonus).min(1.0), 40)
                        } else {
                            let feasible = match (b == 25.0, p > 0.0) {
                                (false, _) => 40,
                                (true, false) => 30,
                                (true, true) => 0,
                            };
                            (1.0 - q, feasible)
                        };
                        let feasible = n_feasible > 0;
                        rows.push(Row {
                            strategy: strategy.to_string(),
                            keep_recent: k,
                            budget: b,
                            false_negative: q,
                            false_positive: p,
                            n: 40,
                            n_feasible,
                            reduction: feasible.then_some(1.0 - b / 100.0),
                            retention: feasible.then_some(retention),
                            ci: feasible.then_some((
                                (retention - 0.05).max(0.0),
                                (retention + 0.05).min(1.0),
                            )),
                        });
                    }
                }
            }
        }
    }
    rows
}

/// A results folder holding the fixture's summary and manifest.
fn results_folder(charts: serde_json::Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_summary(
        &dir.path().join("summary.parquet"),
        &fixture_rows(),
        None,
        None,
    );
    write_manifest(
        &dir.path().join("manifest.json"),
        &STRATEGIES,
        &KEEP_RECENT,
        &BUDGETS,
        &FALSE_NEGATIVE,
        &FALSE_POSITIVE,
        charts,
    );
    dir
}

fn plot(dir: &Path) -> std::process::Output {
    ctxlab(dir, &["plot", dir.to_str().unwrap()])
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Width and height of a PNG, decoding every pixel.
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Parses an SVG as XML (failing on any well-formedness error) and returns its size and the
/// text of its `<text>` elements, entities resolved.
fn parse_svg(path: &Path) -> ((u32, u32), Vec<String>) {
    use quick_xml::events::Event;
    let source = fs::read_to_string(path).unwrap();
    let mut reader = quick_xml::Reader::from_str(&source);
    let mut size = None;
    let mut texts = Vec::new();
    let mut depth = 0usize;
    let mut in_text = false;
    let mut current = String::new();
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        {
            Event::Start(e) => {
                depth += 1;
                if e.name().as_ref() == b"svg" {
                    let attr = |name: &[u8]| -> u32 {
                        let a = e.try_get_attribute(name).unwrap().unwrap();
                        String::from_utf8(a.value.to_vec())
                            .unwrap()
                            .parse()
                            .unwrap()
                    };
                    size = Some((attr(b"width"), attr(b"height")));
                }
                in_text = e.name().as_ref() == b"text";
            }
            Event::End(e) => {
                depth -= 1;
                if e.name().as_ref() == b"text" {
                    texts.push(current.trim().to_string());
                    current.clear();
                    in_text = false;
                }
            }
            Event::Text(t) if in_text => current.push_str(&t.decode().unwrap()),
            Event::GeneralRef(r) if in_text => {
                if let Some(c) = r.resolve_char_ref().unwrap() {
                    current.push(c);
                } else {
                    let name = r.decode().unwrap();
                    current.push_str(quick_xml::escape::resolve_predefined_entity(&name).unwrap());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "{}: unclosed elements", path.display());
    (size.expect("an <svg> root"), texts)
}

/// The Markdown table that follows `heading` in the report, as header and rows of cells.
fn table_after(report: &str, heading: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let start = report
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in report"));
    let lines: Vec<&str> = report[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(lines[0]);
    let rows = lines[2..].iter().map(|l| cells(l)).collect();
    (header, rows)
}

fn cell<'a>(
    (header, rows): &'a (Vec<String>, Vec<Vec<String>>),
    key: &[&str],
    column: &str,
) -> &'a str {
    let c = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column:?} in {header:?}"));
    let row = rows
        .iter()
        .find(|r| r.iter().zip(key).all(|(a, b)| a == b))
        .unwrap_or_else(|| panic!("no row {key:?}"));
    &row[c]
}

fn level(q: f64, p: f64) -> String {
    format!(
        "FN {} % · FP {} %",
        (q * 100.0).round(),
        (p * 100.0).round()
    )
}

#[test]
fn plot_writes_every_chart_as_png_and_svg_and_the_report() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    let out = plot(dir.path());
    assert!(out.status.success(), "{}", crate::common::stderr(&out));

    let charts = dir.path().join("charts");
    let expected: BTreeSet<String> = CHART_STEMS
        .iter()
        .flat_map(|s| [format!("{s}.png"), format!("{s}.svg")])
        .collect();
    assert_eq!(names_in(&charts), expected, "no temporary file is left");
    assert!(dir.path().join("report.md").is_file());
    let listed: Vec<PathBuf> = stdout(&out).lines().map(PathBuf::from).collect();
    assert_eq!(listed.len(), 7);
    assert_eq!(listed[6], dir.path().join("report.md"));

    let okabe_ito_blue = [0x00, 0x72, 0xB2];
    let okabe_ito_vermillion = [0xD5, 0x5E, 0x00];
    for stem in CHART_STEMS {
        let (width, height, pixels) = decode_png(&charts.join(format!("{stem}.png")));
        let (svg_size, _) = parse_svg(&charts.join(format!("{stem}.svg")));
        assert_eq!(width, 1600, "{stem}: wide enough for print");
        assert_eq!(
            (width, height),
            svg_size,
            "{stem}: PNG and SVG share a layout"
        );
        assert!(height > 600 && height < 2000, "{stem}: height {height}");
        // Each strategy's palette colour is drawn.
        let has = |rgb: [u8; 3]| pixels.chunks_exact(3).any(|p| p == rgb);
        assert!(has(okabe_ito_blue), "{stem}: first strategy's colour");
        assert!(
            has(okabe_ito_vermillion),
            "{stem}: second strategy's colour"
        );
    }
}

#[test]
fn svgs_keep_their_text_with_axis_labels_and_every_series() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    assert!(plot(dir.path()).status.success());
    let charts = dir.path().join("charts");
    let series = [
        "recent · keep_recent=0",
        "recent · keep_recent=3",
        "required(fill=skip) · keep_recent=0",
        "required(fill=skip) · keep_recent=3",
    ];
    let expectations: [(&str, &[&str]); 3] = [
        (
            "retention_vs_reduction",
            &[
                "Required retention against reduction, by flag noise",
                "↑ required retention (fraction of required records kept)",
                "reduction = 1 − used / total (fraction of the history's cost removed), over feasible cells →",
                "FN 0 % · FP 0 %",
                "FN 20 % · FP 10 %",
                "95 % interval of the mean, by history",
            ],
        ),
        (
            "retention_vs_noise",
            &[
                "Required retention against flag noise at a 50 % budget",
                "↑ required retention (fraction of required records kept)",
                "false-negative rate FN (fraction of required records left unflagged) →",
                "FP 0 %",
                "FP 10 %",
            ],
        ),
        (
            "feasibility",
            &[
                "Feasible share by budget, by flag noise",
                "↑ feasible share (fraction of cells whose context fits the budget)",
                "budget (% of each history's total cost) →",
                "95 % interval of the share, by history",
            ],
        ),
    ];
    for (stem, wanted) in expectations {
        let (_, texts) = parse_svg(&charts.join(format!("{stem}.svg")));
        for w in wanted.iter().chain(series.iter()) {
            assert!(texts.iter().any(|t| t == w), "{stem}.svg lacks {w:?}");
        }
        // The 0–1 axis ticks.
        assert!(texts.iter().any(|t| t == "0.6"), "{stem}.svg ticks");
    }
}

#[test]
fn report_numbers_equal_the_summary_table() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    assert!(plot(dir.path()).status.success());
    let report = fs::read_to_string(dir.path().join("report.md")).unwrap();

    // The experiment as run, from the manifest.
    for line in [
        "| experiment | fixture |",
        "| seed | 7 |",
        "| grid | 20 histories × 2 replicates × 4 noise levels × 2 strategies × 2 keep_recent × 3 budgets = 1920 cells |",
        "| cells run | 1920 |",
        "| run time | 12.3 s |",
        "| strategies | `recent`, `required(fill=skip)` |",
    ] {
        assert!(report.contains(line), "report lacks {line:?}");
    }
    assert!(report.contains("\"noise_budget\": 50.0"), "resolved config");
    for stem in CHART_STEMS {
        assert!(
            report.contains(&format!("](charts/{stem}.png)")),
            "{stem}.png embedded"
        );
    }

    let reduction = table_after(&report, "## Required retention against reduction");
    let noise = table_after(&report, "## Required retention against flag noise");
    let feasibility = table_after(&report, "## Feasible share by budget");

    // Cells worked out by hand from the fixture's rules.
    let skip = "`required(fill=skip)`";
    assert_eq!(
        cell(&reduction, &[skip, "3", "50"], &level(0.2, 0.0)),
        "0.800 (0.750–0.850) / 0.500"
    );
    assert_eq!(
        cell(&reduction, &["`recent`", "3", "100"], &level(0.0, 0.1)),
        "1.000 (0.950–1.000) / 0.000"
    );
    assert_eq!(cell(&reduction, &[skip, "0", "25"], &level(0.0, 0.1)), "—");
    assert_eq!(
        cell(&noise, &["`recent`", "3"], &level(0.2, 0.1)),
        "0.600 (0.550–0.650)"
    );
    assert_eq!(
        cell(&noise, &[skip, "0"], &level(0.2, 0.0)),
        "0.800 (0.750–0.850)"
    );
    assert_eq!(
        cell(&feasibility, &[skip, "0", "25"], &level(0.0, 0.0)),
        "0.750 (30/40)"
    );
    assert_eq!(
        cell(&feasibility, &[skip, "3", "25"], &level(0.2, 0.1)),
        "0.000 (0/40)"
    );

    // And every row of the summary appears where it belongs.
    let f3 = |x: f64| format!("{x:.3}");
    for r in fixture_rows() {
        let name = format!("`{}`", r.strategy);
        let k = r.keep_recent.to_string();
        let b = format!("{}", r.budget);
        let column = level(r.false_negative, r.false_positive);
        let retention = match (r.retention, r.ci) {
            (Some(m), Some((lo, hi))) => format!("{} ({}–{})", f3(m), f3(lo), f3(hi)),
            _ => "—".to_string(),
        };
        // The feasible share follows where some cells were infeasible.
        let share = r.n_feasible as f64 / r.n as f64;
        let partial = if share < 1.0 {
            format!(" / feasible {}", f3(share))
        } else {
            String::new()
        };
        let drawn = match r.reduction {
            Some(x) => format!("{retention} / {}{partial}", f3(x)),
            None => "—".to_string(),
        };
        assert_eq!(cell(&reduction, &[&name, &k, &b], &column), drawn, "{r:?}");
        if r.budget == 50.0 {
            assert_eq!(cell(&noise, &[&name, &k], &column), retention, "{r:?}");
        }
        let share = format!(
            "{} ({}/{})",
            f3(r.n_feasible as f64 / r.n as f64),
            r.n_feasible,
            r.n
        );
        assert_eq!(
            cell(&feasibility, &[&name, &k, &b], &column),
            share,
            "{r:?}"
        );
    }
    // One table row per series (and budget), no more; the noise table first gives the rates
    // the flags realised (none in this fixture's summary).
    assert_eq!(reduction.1.len(), 4 * BUDGETS.len());
    assert_eq!(noise.1.len(), 1 + 4);
    assert_eq!(noise.1[0][0], "realised FN · FP");
}

#[test]
fn redrawing_gives_the_same_bytes_and_replaces_the_old_files() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    assert!(plot(dir.path()).status.success());
    let read_all = || -> Vec<Vec<u8>> {
        let mut names: Vec<_> = names_in(&dir.path().join("charts")).into_iter().collect();
        names.sort();
        let mut all: Vec<Vec<u8>> = names
            .iter()
            .map(|n| fs::read(dir.path().join("charts").join(n)).unwrap())
            .collect();
        all.push(fs::read(dir.path().join("report.md")).unwrap());
        all
    };
    let first = read_all();
    assert!(plot(dir.path()).status.success());
    assert_eq!(read_all(), first);
    assert_eq!(names_in(&dir.path().join("charts")).len(), 6);
}

#[test]
fn without_a_configured_noise_budget_the_nearest_to_fifty_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Row> = fixture_rows()
        .into_iter()
        .filter(|r| r.budget != 50.0)
        .collect();
    write_summary(&dir.path().join("summary.parquet"), &rows, None, None);
    write_manifest(
        &dir.path().join("manifest.json"),
        &STRATEGIES,
        &KEEP_RECENT,
        &[25.0, 100.0],
        &FALSE_NEGATIVE,
        &FALSE_POSITIVE,
        serde_json::Value::Null,
    );
    assert!(plot(dir.path()).status.success());
    let report = fs::read_to_string(dir.path().join("report.md")).unwrap();
    // 25 is nearer to 50 than 100.
    assert!(report.contains("## Required retention against flag noise at a 25 % budget"));
    let noise = table_after(&report, "## Required retention against flag noise");
    assert_eq!(
        cell(&noise, &["`recent`", "0"], &level(0.0, 0.0)),
        "0.250 (0.200–0.300)"
    );
    let (_, texts) = parse_svg(&dir.path().join("charts/retention_vs_noise.svg"));
    assert!(texts.iter().any(|t| t.contains("nearest budget")));
}

#[test]
fn one_keep_recent_value_is_not_named_in_labels() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Row> = fixture_rows()
        .into_iter()
        .filter(|r| r.keep_recent == 0)
        .collect();
    write_summary(&dir.path().join("summary.parquet"), &rows, None, None);
    write_manifest(
        &dir.path().join("manifest.json"),
        &STRATEGIES,
        &[0],
        &BUDGETS,
        &FALSE_NEGATIVE,
        &FALSE_POSITIVE,
        serde_json::json!({ "noise_budget": 100.0 }),
    );
    assert!(plot(dir.path()).status.success());
    let (_, texts) = parse_svg(&dir.path().join("charts/feasibility.svg"));
    assert!(texts.iter().any(|t| t == "recent"));
    assert!(texts.iter().any(|t| t == "required(fill=skip)"));
    assert!(!texts.iter().any(|t| t.contains("keep_recent=")));
    let report = fs::read_to_string(dir.path().join("report.md")).unwrap();
    let noise = table_after(&report, "## Required retention against flag noise");
    assert_eq!(noise.0[0], "strategy");
    assert_eq!(noise.0[1], level(0.0, 0.0));
    assert_eq!(
        cell(&noise, &["`recent`"], &level(0.2, 0.0)),
        "1.000 (0.950–1.000)"
    );
}

/// A failed run writes neither charts nor report.
fn assert_nothing_written(dir: &Path) {
    assert!(!dir.join("charts").exists(), "charts/ was created");
    assert!(!dir.join("report.md").exists(), "report.md was written");
}

#[test]
fn a_folder_without_tables_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = plot(dir.path());
    assert_fails_with(&out, &["summary.parquet", "not found", "ctxlab sweep"]);
    assert_nothing_written(dir.path());

    // A summary without its manifest.
    write_summary(
        &dir.path().join("summary.parquet"),
        &fixture_rows(),
        None,
        None,
    );
    let out = plot(dir.path());
    assert_fails_with(&out, &["manifest.json", "not found"]);
    assert_nothing_written(dir.path());

    let missing = dir.path().join("no-such-folder");
    let out = ctxlab(dir.path(), &["plot", missing.to_str().unwrap()]);
    assert_fails_with(&out, &["no-such-folder", "not a folder"]);
    assert!(!missing.exists());
}

#[test]
fn a_summary_missing_a_column_fails_naming_file_and_column() {
    for column in ["required_retention_all_ci_high", "strategy", "n_feasible"] {
        let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
        write_summary(
            &dir.path().join("summary.parquet"),
            &fixture_rows(),
            Some(column),
            None,
        );
        let out = plot(dir.path());
        assert_fails_with(
            &out,
            &[
                "summary.parquet",
                format!("column `{column}` is missing").as_str(),
            ],
        );
        assert_nothing_written(dir.path());
    }
}

#[test]
fn a_column_of_the_wrong_type_fails_naming_it() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    write_summary(
        &dir.path().join("summary.parquet"),
        &fixture_rows(),
        None,
        Some("keep_recent"),
    );
    let out = plot(dir.path());
    assert_fails_with(
        &out,
        &[
            "summary.parquet",
            "column `keep_recent` has type String, expected UInt64",
        ],
    );
    assert_nothing_written(dir.path());
}

#[test]
fn a_noise_budget_outside_the_sweep_fails_naming_the_key() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 40.0 }));
    let out = plot(dir.path());
    assert_fails_with(
        &out,
        &[
            "manifest.json",
            "config.charts.noise_budget",
            "40 is not one of the sweep's budgets (25, 50, 100)",
        ],
    );
    assert_nothing_written(dir.path());

    let dir = results_folder(serde_json::json!({ "noise_budget": "half" }));
    let out = plot(dir.path());
    assert_fails_with(
        &out,
        &["config.charts.noise_budget", "expected a percentage"],
    );
    assert_nothing_written(dir.path());
}

#[test]
fn duplicate_groups_in_the_summary_fail() {
    let dir = results_folder(serde_json::json!({ "noise_budget": 50.0 }));
    let mut rows = fixture_rows();
    rows.push(rows[5].clone());
    write_summary(&dir.path().join("summary.parquet"), &rows, None, None);
    let out = plot(dir.path());
    assert_fails_with(
        &out,
        &[
            "summary.parquet",
            "rows 6 and 49",
            "expected one row per group",
        ],
    );
    assert_nothing_written(dir.path());
}
