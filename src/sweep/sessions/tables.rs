//! The sessions and summary tables of a session sweep, as Parquet and CSV holding the same
//! values (fractions written as `report::numbers::fraction` does: they read back exactly).
//!
//! Each column is declared once, with how to read it from a row, and both writers walk the same
//! declarations: the two formats cannot drift apart.

use super::eval::SessionRow;
use super::grid::SessionGrid;
use super::summary::{billed_tokens, SummaryRow, REAL_MEASURES, WHOLE_MEASURES};
use crate::report::numbers::fraction;
use anyhow::{Context as _, Result};
use polars::prelude::{Column, DataFrame};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// How to read one column from a session row.
enum Getter {
    Text(for<'a> fn(&'a SessionGrid, &'a [String], &SessionRow) -> &'a str),
    Whole(fn(&SessionGrid, &SessionRow) -> u64),
    Real(fn(&SessionGrid, &SessionRow) -> f64),
    OptReal(fn(&SessionRow) -> Option<f64>),
    Flag(fn(&SessionRow) -> bool),
}

use Getter::*;

/// The sessions table, column by column.
static SESSION_TABLE: [(&str, Getter); 33] = [
    ("history", Text(|_, names, r| &names[r.history as usize])),
    ("replicate", Whole(|_, r| u64::from(r.replicate))),
    (
        "false_negative",
        Real(|g, r| g.levels[r.level as usize].false_negative),
    ),
    (
        "false_positive",
        Real(|g, r| g.levels[r.level as usize].false_positive),
    ),
    ("strategy", Text(|g, _, r| &g.labels[r.strategy as usize])),
    ("window", Whole(|g, r| g.windows[r.window as usize])),
    ("ratio", Real(|g, r| g.ratios[r.ratio as usize])),
    ("trigger", Whole(|g, r| config(g, r).trigger())),
    ("note_rate", Real(|g, r| g.note_rates[r.note_rate as usize])),
    ("records", Whole(|_, r| u64::from(r.metrics.records))),
    ("calls", Whole(|_, r| u64::from(r.metrics.calls))),
    (
        "model_calls",
        Whole(|_, r| u64::from(r.metrics.model_calls)),
    ),
    (
        "compactions",
        Whole(|_, r| u64::from(r.metrics.compactions)),
    ),
    (
        "failed_compactions",
        Whole(|_, r| u64::from(r.metrics.failed_compactions)),
    ),
    ("storms", Whole(|_, r| u64::from(r.metrics.storms))),
    ("guard_tripped", Flag(|r| r.metrics.guard_tripped)),
    (
        "over_window_calls",
        Whole(|_, r| u64::from(r.metrics.over_window_calls)),
    ),
    ("input_tokens", Whole(|_, r| r.metrics.input_tokens)),
    (
        "cache_read_tokens",
        Whole(|_, r| r.metrics.cache_read_tokens),
    ),
    (
        "cache_write_tokens",
        Whole(|_, r| r.metrics.cache_write_tokens),
    ),
    ("output_tokens", Whole(|_, r| r.metrics.output_tokens)),
    ("billed_tokens", Whole(|_, r| billed_tokens(&r.metrics))),
    ("cost", Real(|_, r| r.metrics.cost)),
    ("peak_input", Whole(|_, r| r.metrics.peak_input)),
    ("final_context", Whole(|_, r| r.metrics.final_context)),
    ("final_usage", Whole(|_, r| r.metrics.final_usage)),
    ("noted", Whole(|_, r| u64::from(r.metrics.noted))),
    (
        "required_total",
        Whole(|_, r| u64::from(r.metrics.required_total)),
    ),
    (
        "required_verbatim",
        Whole(|_, r| u64::from(r.metrics.required_verbatim)),
    ),
    (
        "required_any",
        Whole(|_, r| u64::from(r.metrics.required_any)),
    ),
    ("retention_end", OptReal(|r| r.metrics.retention_end)),
    (
        "retention_any_end",
        OptReal(|r| r.metrics.retention_any_end),
    ),
    (
        "retention_at_need",
        OptReal(|r| r.metrics.retention_at_need),
    ),
];

fn config<'g>(g: &'g SessionGrid, r: &SessionRow) -> &'g crate::session::SessionConfig {
    g.config(r.window as usize, r.ratio as usize, r.note_rate as usize)
}

/// The columns of the sessions table, in order.
pub fn session_columns() -> Vec<&'static str> {
    SESSION_TABLE.iter().map(|(name, _)| *name).collect()
}

/// The sessions as a DataFrame (columns in [`session_columns`] order).
pub fn sessions_frame(
    grid: &SessionGrid,
    names: &[String],
    rows: &[SessionRow],
) -> Result<DataFrame> {
    let columns: Vec<Column> = SESSION_TABLE
        .iter()
        .map(|(name, get)| {
            let name = (*name).into();
            match get {
                Text(f) => Column::new(
                    name,
                    rows.iter().map(|r| f(grid, names, r)).collect::<Vec<_>>(),
                ),
                Whole(f) => Column::new(name, rows.iter().map(|r| f(grid, r)).collect::<Vec<_>>()),
                Real(f) => Column::new(name, rows.iter().map(|r| f(grid, r)).collect::<Vec<_>>()),
                OptReal(f) => Column::new(name, rows.iter().map(f).collect::<Vec<_>>()),
                Flag(f) => Column::new(name, rows.iter().map(f).collect::<Vec<_>>()),
            }
        })
        .collect();
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// Writes the sessions as CSV with a header line.
pub fn write_sessions_csv(
    path: &Path,
    grid: &SessionGrid,
    names: &[String],
    rows: &[SessionRow],
) -> Result<()> {
    let mut o = csv_writer(path)?;
    o.write_record(session_columns())?;
    let mut field = String::new();
    for r in rows {
        for (_, get) in &SESSION_TABLE {
            use std::fmt::Write as _;
            field.clear();
            match get {
                Text(f) => field.push_str(f(grid, names, r)),
                Whole(f) => write!(field, "{}", f(grid, r))?,
                Real(f) => field.push_str(&fraction(f(grid, r))),
                OptReal(f) => field.push_str(&f(r).map(fraction).unwrap_or_default()),
                Flag(f) => field.push_str(if f(r) { "true" } else { "false" }),
            }
            o.write_field(&field)?;
        }
        o.write_record(None::<&[u8]>)?;
    }
    o.flush()
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// The columns of the summary table: the group's keys and counts, then mean, sd and interval
/// of every measure.
pub fn summary_columns() -> Vec<String> {
    let mut cols: Vec<String> = SUMMARY_KEYS.iter().map(|s| s.to_string()).collect();
    for m in WHOLE_MEASURES.iter().chain(&REAL_MEASURES) {
        for s in ["mean", "sd", "ci_low", "ci_high"] {
            cols.push(format!("{m}_{s}"));
        }
    }
    cols
}

const SUMMARY_KEYS: [&str; 10] = [
    "strategy",
    "window",
    "ratio",
    "trigger",
    "note_rate",
    "false_negative",
    "false_positive",
    "n",
    "n_retention",
    "n_at_need",
];

/// The summary as a DataFrame (columns in [`summary_columns`] order).
pub fn summary_frame(rows: &[SummaryRow]) -> Result<DataFrame> {
    let text = |f: fn(&SummaryRow) -> &str| rows.iter().map(f).collect::<Vec<_>>();
    let whole = |f: fn(&SummaryRow) -> u64| rows.iter().map(f).collect::<Vec<_>>();
    let real = |f: fn(&SummaryRow) -> f64| rows.iter().map(f).collect::<Vec<_>>();
    let mut columns = vec![
        Column::new("strategy".into(), text(|r| &r.strategy)),
        Column::new("window".into(), whole(|r| r.window)),
        Column::new("ratio".into(), real(|r| r.ratio)),
        Column::new("trigger".into(), whole(|r| r.trigger)),
        Column::new("note_rate".into(), real(|r| r.note_rate)),
        Column::new("false_negative".into(), real(|r| r.false_negative)),
        Column::new("false_positive".into(), real(|r| r.false_positive)),
        Column::new("n".into(), whole(|r| r.n)),
        Column::new("n_retention".into(), whole(|r| r.n_retention)),
        Column::new("n_at_need".into(), whole(|r| r.n_at_need)),
    ];
    let names = summary_columns();
    for (i, chunk) in names[SUMMARY_KEYS.len()..].chunks(4).enumerate() {
        let stat = |f: fn(&super::summary::Stat) -> Option<f64>| {
            rows.iter().map(|r| f(&r.stats[i])).collect::<Vec<_>>()
        };
        columns.push(Column::new(chunk[0].as_str().into(), stat(|s| s.mean)));
        columns.push(Column::new(chunk[1].as_str().into(), stat(|s| s.sd)));
        columns.push(Column::new(chunk[2].as_str().into(), stat(|s| s.ci_low)));
        columns.push(Column::new(chunk[3].as_str().into(), stat(|s| s.ci_high)));
    }
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// Writes the summary as CSV.
pub fn write_summary_csv(path: &Path, rows: &[SummaryRow]) -> Result<()> {
    let mut o = csv_writer(path)?;
    o.write_record(summary_columns())?;
    for r in rows {
        let mut record = vec![
            r.strategy.clone(),
            r.window.to_string(),
            fraction(r.ratio),
            r.trigger.to_string(),
            fraction(r.note_rate),
            fraction(r.false_negative),
            fraction(r.false_positive),
            r.n.to_string(),
            r.n_retention.to_string(),
            r.n_at_need.to_string(),
        ];
        let of = |x: Option<f64>| x.map(fraction).unwrap_or_default();
        for s in &r.stats {
            record.extend([of(s.mean), of(s.sd), of(s.ci_low), of(s.ci_high)]);
        }
        o.write_record(&record)?;
    }
    o.flush()
        .with_context(|| format!("{}: cannot write", path.display()))
}

fn csv_writer(path: &Path) -> Result<csv::Writer<BufWriter<File>>> {
    let file = File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    Ok(csv::Writer::from_writer(BufWriter::new(file)))
}
