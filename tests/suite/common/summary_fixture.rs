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

/// The summary's columns, in the sweep's order.
pub const COLUMNS: [&str; 18] = ctxlab::sweep::tables::SUMMARY_COLUMNS;

/// Writes `rows` as `summary.parquet`, leaving out the column `skip` if given and writing
/// `retype` (if given) as a String column. sd columns are 0.1, retention_any equals the
/// required retention, exact is 1 wherever a reduction exists.
pub fn write_summary(path: &Path, rows: &[Row], skip: Option<&str>, retype: Option<&str>) {
    let f =
        |get: &dyn Fn(&Row) -> Option<f64>| -> Vec<Option<f64>> { rows.iter().map(get).collect() };
    let mut columns: Vec<Column> = vec![
        Column::new(
            "strategy".into(),
            rows.iter().map(|r| r.strategy.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "keep_recent".into(),
            rows.iter().map(|r| r.keep_recent).collect::<Vec<u64>>(),
        ),
        Column::new(
            "budget_percent".into(),
            rows.iter().map(|r| r.budget).collect::<Vec<f64>>(),
        ),
        Column::new(
            "false_negative".into(),
            rows.iter().map(|r| r.false_negative).collect::<Vec<f64>>(),
        ),
        Column::new(
            "false_positive".into(),
            rows.iter().map(|r| r.false_positive).collect::<Vec<f64>>(),
        ),
        Column::new("n".into(), rows.iter().map(|r| r.n).collect::<Vec<u64>>()),
        Column::new(
            "n_feasible".into(),
            rows.iter().map(|r| r.n_feasible).collect::<Vec<u64>>(),
        ),
        Column::new(
            "feasible_share".into(),
            rows.iter()
                .map(|r| r.n_feasible as f64 / r.n as f64)
                .collect::<Vec<f64>>(),
        ),
        Column::new("reduction_mean".into(), f(&|r| r.reduction)),
        Column::new("reduction_sd".into(), f(&|r| r.reduction.map(|_| 0.1))),
        Column::new("required_retention_mean".into(), f(&|r| r.retention)),
        Column::new(
            "required_retention_sd".into(),
            f(&|r| r.retention.map(|_| 0.1)),
        ),
        Column::new(
            "required_retention_ci_low".into(),
            f(&|r| r.ci.map(|c| c.0)),
        ),
        Column::new(
            "required_retention_ci_high".into(),
            f(&|r| r.ci.map(|c| c.1)),
        ),
        Column::new("retention_any_mean".into(), f(&|r| r.retention)),
        Column::new("retention_any_ci_low".into(), f(&|r| r.ci.map(|c| c.0))),
        Column::new("retention_any_ci_high".into(), f(&|r| r.ci.map(|c| c.1))),
        Column::new("exact_mean".into(), f(&|r| r.reduction.map(|_| 1.0))),
    ];
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
        "cells": cells,
        "histories": histories,
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
