//! Small results folders for chart and report tests: a `summary.parquet` with the sweep's
//! schema and a `manifest.json`, written from rows given by the test.

use polars::prelude::*;
use std::fs::File;
use std::path::Path;

/// One summary row; the derived columns (sd, retention_any, exact, feasible_share) follow
/// from these fields as documented on `write_summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub strategy: String,
    pub keep_recent: u64,
    pub budget: f64,
    pub false_negative: f64,
    pub false_positive: f64,
    pub n: u64,
    pub n_feasible: u64,
    pub reduction: Option<f64>,
    pub retention: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

/// The summary's columns, in the sweep's order: from the declaration the sweep writes it by.
pub fn columns() -> Vec<String> {
    ctxlab::report::summary_table::required_columns()
}

/// The value a fixture row gives a measure's mean: retention_any equals the required
/// retention, exact is 1 wherever a reduction exists.
fn mean(r: &Row, measure: &str) -> Option<f64> {
    match measure {
        "reduction_feasible" => r.reduction,
        "required_retention_all"
        | "required_retention_feasible"
        | "retention_any_all"
        | "retention_any_feasible" => r.retention,
        "exact_feasible" => r.reduction.map(|_| 1.0),
        "feasible" => Some(r.n_feasible as f64 / r.n as f64),
        _ => None,
    }
}

/// Writes `rows` as `summary.parquet` with every column the sweep declares, leaving out the
/// column `skip` if given and writing `retype` (if given) as a String column. Every sd is
/// 0.1; the intervals of the retention measures are `ci`, the others' are empty.
pub fn write_summary(path: &Path, rows: &[Row], skip: Option<&str>, retype: Option<&str>) {
    let names = columns();
    let mut columns: Vec<Column> = Vec::new();
    for name in names {
        let n = name.as_str();
        let real = |get: &dyn Fn(&Row) -> Option<f64>| -> Column {
            Column::new(n.into(), rows.iter().map(get).collect::<Vec<Option<f64>>>())
        };
        let column = match n {
            "strategy" => Column::new(
                n.into(),
                rows.iter().map(|r| r.strategy.clone()).collect::<Vec<_>>(),
            ),
            "keep_recent" => Column::new(
                n.into(),
                rows.iter().map(|r| r.keep_recent).collect::<Vec<u64>>(),
            ),
            "budget_percent" => Column::new(
                n.into(),
                rows.iter().map(|r| r.budget).collect::<Vec<f64>>(),
            ),
            "noise" => Column::new(
                n.into(),
                rows.iter()
                    .map(|r| format!("uniform(fn={}, fp={})", r.false_negative, r.false_positive))
                    .collect::<Vec<_>>(),
            ),
            "false_negative" => Column::new(
                n.into(),
                rows.iter().map(|r| r.false_negative).collect::<Vec<f64>>(),
            ),
            "false_positive" => Column::new(
                n.into(),
                rows.iter().map(|r| r.false_positive).collect::<Vec<f64>>(),
            ),
            "n" => Column::new(n.into(), rows.iter().map(|r| r.n).collect::<Vec<u64>>()),
            // Every group rests on the manifest's 20 histories.
            "n_histories" => Column::new(n.into(), vec![20u64; rows.len()]),
            "n_feasible" => Column::new(
                n.into(),
                rows.iter().map(|r| r.n_feasible).collect::<Vec<u64>>(),
            ),
            // Feasible cells, where there are any, come from every history.
            "n_feasible_histories" => Column::new(
                n.into(),
                rows.iter()
                    .map(|r| if r.n_feasible > 0 { 20u64 } else { 0 })
                    .collect::<Vec<u64>>(),
            ),
            "feasible_share" => Column::new(
                n.into(),
                rows.iter()
                    .map(|r| r.n_feasible as f64 / r.n as f64)
                    .collect::<Vec<f64>>(),
            ),
            _ => {
                let (measure, stat) = n.rsplit_once('_').expect("a measure's statistic");
                let (measure, stat) = match stat {
                    "low" | "high" => (measure.trim_end_matches("_ci"), stat),
                    _ => (measure, stat),
                };
                let retention = measure.contains("retention");
                match stat {
                    "mean" => real(&|r| mean(r, measure)),
                    "sd" => real(&|r| mean(r, measure).map(|_| 0.1)),
                    "low" if retention => real(&|r| r.ci.map(|c| c.0)),
                    "high" if retention => real(&|r| r.ci.map(|c| c.1)),
                    _ => real(&|_| None),
                }
            }
        };
        columns.push(column);
    }
    if let Some(skip) = skip {
        columns.retain(|c| c.name().as_str() != skip);
    }
    if let Some(retype) = retype {
        for c in columns.iter_mut() {
            if c.name().as_str() == retype {
                *c = Column::new(retype.into(), vec!["x".to_string(); rows.len()]);
            }
        }
    }
    let mut df = DataFrame::new_infer_height(columns).unwrap();
    let file = File::create(path).unwrap();
    ParquetWriter::new(file).finish(&mut df).unwrap();
}

/// Writes a manifest for a grid with these axes.
pub fn write_manifest(
    path: &Path,
    strategies: &[&str],
    keep_recent: &[u64],
    budgets: &[f64],
    false_negative: &[f64],
    false_positive: &[f64],
    charts: serde_json::Value,
) {
    let histories = 20u64;
    let replicates = 2u64;
    let cells = histories
        * replicates
        * (strategies.len() * keep_recent.len() * budgets.len()) as u64
        * (false_negative.len() * false_positive.len()) as u64;
    let manifest = serde_json::json!({
        "kind": "cells",
        "name": "fixture",
        "seed": 7,
        "config": {
            "name": "fixture",
            "seed": 7,
            "replicates": replicates,
            "histories": { "generate": { "count": histories, "records": [20, 60] }, "cost": "chars" },
            "sweep": {
                "strategies": strategies,
                "budgets": budgets,
                "keep_recent": keep_recent,
                "false_negative": false_negative,
                "false_positive": false_positive
            },
            "charts": charts
        },
        "config_hash": "0000000000000000",
        "source": "fixture.toml",
        "rows": cells,
        "histories": histories,
        "shards": null,
        "files": ["summary.parquet"],
        "grid": {
            "histories": histories,
            "replicates": replicates,
            "false_negative": false_negative,
            "false_positive": false_positive,
            "strategies": strategies,
            "keep_recent": keep_recent,
            "budgets": budgets
        },
        "version": "0.1.0",
        "wall_seconds": 12.34
    });
    std::fs::write(path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
}
