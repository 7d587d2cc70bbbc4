//! Writing the cells and summary tables as Parquet and CSV, batch by batch.
//!
//! Both formats hold the same values: CSV fractions are written with at least six decimals and
//! more when needed to read back exactly (see `report::numbers`).

use super::cell::CellRow;
use super::grid::Grid;
use super::summary::SummaryRow;
use crate::report::numbers::{budget, fraction, write_fraction};
use anyhow::{Context as _, Result};
use polars::prelude::{
    Column, DataFrame, NamedFrom, ParquetCompression, ParquetWriter, Schema, Series,
};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub const CELL_COLUMNS: [&str; 19] = [
    "history",
    "replicate",
    "false_negative",
    "false_positive",
    "strategy",
    "keep_recent",
    "budget_percent",
    "capacity",
    "total",
    "used",
    "reduction",
    "required_total",
    "required_kept",
    "required_retention",
    "retention_any",
    "exact",
    "placeholders",
    "summarised",
    "feasible",
];

pub const SUMMARY_COLUMNS: [&str; 18] = [
    "strategy",
    "keep_recent",
    "budget_percent",
    "false_negative",
    "false_positive",
    "n",
    "n_feasible",
    "feasible_share",
    "reduction_mean",
    "reduction_sd",
    "required_retention_mean",
    "required_retention_sd",
    "required_retention_ci_low",
    "required_retention_ci_high",
    "retention_any_mean",
    "retention_any_ci_low",
    "retention_any_ci_high",
    "exact_mean",
];

fn col<T, P: ?Sized>(name: &str, values: T) -> Column
where
    Series: NamedFrom<T, P>,
{
    Column::new(name.into(), values)
}

/// The names of a run of consecutive histories, starting at index `base`.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub base: usize,
    pub names: &'a [String],
}

impl<'a> Names<'a> {
    pub fn get(&self, history: u32) -> &'a str {
        &self.names[history as usize - self.base]
    }
}

/// The cells of a batch as a DataFrame (columns in [`CELL_COLUMNS`] order).
pub fn cells_frame(grid: &Grid, names: Names, rows: &[CellRow]) -> Result<DataFrame> {
    let feasible = |r: &CellRow| r.metrics.feasible;
    let opt_u64 = |f: fn(&CellRow) -> u64| -> Vec<Option<u64>> {
        rows.iter().map(|r| feasible(r).then(|| f(r))).collect()
    };
    let columns = vec![
        col(
            "history",
            rows.iter()
                .map(|r| names.get(r.history))
                .collect::<Vec<_>>(),
        ),
        col(
            "replicate",
            rows.iter()
                .map(|r| u64::from(r.replicate))
                .collect::<Vec<_>>(),
        ),
        col(
            "false_negative",
            rows.iter()
                .map(|r| grid.levels[r.level as usize].false_negative)
                .collect::<Vec<_>>(),
        ),
        col(
            "false_positive",
            rows.iter()
                .map(|r| grid.levels[r.level as usize].false_positive)
                .collect::<Vec<_>>(),
        ),
        col(
            "strategy",
            rows.iter()
                .map(|r| grid.labels[r.strategy as usize].as_str())
                .collect::<Vec<_>>(),
        ),
        col(
            "keep_recent",
            rows.iter()
                .map(|r| u64::from(r.keep_recent))
                .collect::<Vec<_>>(),
        ),
        col(
            "budget_percent",
            rows.iter()
                .map(|r| grid.budgets[r.budget as usize])
                .collect::<Vec<_>>(),
        ),
        col(
            "capacity",
            rows.iter().map(|r| r.capacity).collect::<Vec<_>>(),
        ),
        col("total", rows.iter().map(|r| r.total).collect::<Vec<_>>()),
        col("used", opt_u64(|r| r.metrics.used)),
        col(
            "reduction",
            rows.iter().map(|r| r.metrics.reduction).collect::<Vec<_>>(),
        ),
        col(
            "required_total",
            rows.iter()
                .map(|r| u64::from(r.metrics.required_total))
                .collect::<Vec<_>>(),
        ),
        col(
            "required_kept",
            opt_u64(|r| u64::from(r.metrics.required_kept)),
        ),
        col(
            "required_retention",
            rows.iter()
                .map(|r| r.metrics.required_retention)
                .collect::<Vec<_>>(),
        ),
        col(
            "retention_any",
            rows.iter()
                .map(|r| r.metrics.retention_any)
                .collect::<Vec<_>>(),
        ),
        col(
            "exact",
            rows.iter().map(|r| r.metrics.exact).collect::<Vec<_>>(),
        ),
        col(
            "placeholders",
            opt_u64(|r| u64::from(r.metrics.placeholders)),
        ),
        col("summarised", opt_u64(|r| u64::from(r.metrics.summarised))),
        col("feasible", rows.iter().map(feasible).collect::<Vec<_>>()),
    ];
    Ok(DataFrame::new_infer_height(columns)?)
}

/// The summary as a DataFrame (columns in [`SUMMARY_COLUMNS`] order).
pub fn summary_frame(rows: &[SummaryRow]) -> Result<DataFrame> {
    let f = |get: fn(&SummaryRow) -> Option<f64>| rows.iter().map(get).collect::<Vec<_>>();
    let columns = vec![
        col(
            "strategy",
            rows.iter().map(|r| r.strategy.as_str()).collect::<Vec<_>>(),
        ),
        col(
            "keep_recent",
            rows.iter().map(|r| r.keep_recent).collect::<Vec<_>>(),
        ),
        col(
            "budget_percent",
            rows.iter().map(|r| r.budget_percent).collect::<Vec<_>>(),
        ),
        col(
            "false_negative",
            rows.iter().map(|r| r.false_negative).collect::<Vec<_>>(),
        ),
        col(
            "false_positive",
            rows.iter().map(|r| r.false_positive).collect::<Vec<_>>(),
        ),
        col("n", rows.iter().map(|r| r.n).collect::<Vec<_>>()),
        col(
            "n_feasible",
            rows.iter().map(|r| r.n_feasible).collect::<Vec<_>>(),
        ),
        col(
            "feasible_share",
            rows.iter().map(|r| r.feasible_share).collect::<Vec<_>>(),
        ),
        col("reduction_mean", f(|r| r.reduction_mean)),
        col("reduction_sd", f(|r| r.reduction_sd)),
        col("required_retention_mean", f(|r| r.required_retention_mean)),
        col("required_retention_sd", f(|r| r.required_retention_sd)),
        col(
            "required_retention_ci_low",
            f(|r| r.required_retention_ci_low),
        ),
        col(
            "required_retention_ci_high",
            f(|r| r.required_retention_ci_high),
        ),
        col("retention_any_mean", f(|r| r.retention_any_mean)),
        col("retention_any_ci_low", f(|r| r.retention_any_ci_low)),
        col("retention_any_ci_high", f(|r| r.retention_any_ci_high)),
        col("exact_mean", f(|r| r.exact_mean)),
    ];
    Ok(DataFrame::new_infer_height(columns)?)
}

/// Writes a whole DataFrame as one Parquet file.
pub fn write_parquet(path: &Path, df: &mut DataFrame) -> Result<()> {
    let file = File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    ParquetWriter::new(BufWriter::new(file))
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .with_context(|| format!("{}: cannot write Parquet", path.display()))?;
    Ok(())
}

/// A Parquet file written one batch (row group) at a time.
pub struct ParquetSink {
    writer: polars::io::parquet::write::BatchedWriter<BufWriter<File>>,
    path: std::path::PathBuf,
}

impl ParquetSink {
    pub fn create(path: &Path, schema: &Schema) -> Result<Self> {
        let file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let writer = ParquetWriter::new(BufWriter::new(file))
            .with_compression(ParquetCompression::Zstd(None))
            .batched(schema)
            .with_context(|| format!("{}: cannot start Parquet", path.display()))?;
        Ok(ParquetSink {
            writer,
            path: path.to_path_buf(),
        })
    }

    pub fn write(&mut self, df: &DataFrame) -> Result<()> {
        self.writer
            .write_batch(df)
            .with_context(|| format!("{}: cannot write Parquet", self.path.display()))
    }

    pub fn finish(self) -> Result<()> {
        self.writer
            .finish()
            .with_context(|| format!("{}: cannot finish Parquet", self.path.display()))?;
        Ok(())
    }
}

/// A CSV file of cells written batch by batch, with one reused line buffer.
pub struct CellsCsv {
    out: csv::Writer<BufWriter<File>>,
    path: std::path::PathBuf,
    buf: String,
}

impl CellsCsv {
    /// A CSV file of rows without the header line (a part of a larger table).
    pub fn create_headless(path: &Path) -> Result<Self> {
        let file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let out = csv::Writer::from_writer(BufWriter::new(file));
        Ok(CellsCsv {
            out,
            path: path.to_path_buf(),
            buf: String::new(),
        })
    }

    pub fn write(&mut self, grid: &Grid, names: Names, rows: &[CellRow]) -> Result<()> {
        use std::fmt::Write as _;
        let budgets: Vec<String> = grid.budgets.iter().map(|&b| budget(b)).collect();
        for r in rows {
            let m = &r.metrics;
            let level = grid.levels[r.level as usize];
            let b = &mut self.buf;
            let o = &mut self.out;
            o.write_field(names.get(r.history))?;
            field(o, b, |b| write!(b, "{}", r.replicate))?;
            opt_fraction(o, b, Some(level.false_negative))?;
            opt_fraction(o, b, Some(level.false_positive))?;
            o.write_field(&grid.labels[r.strategy as usize])?;
            field(o, b, |b| write!(b, "{}", r.keep_recent))?;
            o.write_field(&budgets[r.budget as usize])?;
            field(o, b, |b| write!(b, "{}", r.capacity))?;
            field(o, b, |b| write!(b, "{}", r.total))?;
            opt(o, b, m.feasible.then_some(m.used))?;
            opt_fraction(o, b, m.reduction)?;
            field(o, b, |b| write!(b, "{}", m.required_total))?;
            opt(o, b, m.feasible.then_some(m.required_kept))?;
            opt_fraction(o, b, m.required_retention)?;
            opt_fraction(o, b, m.retention_any)?;
            opt_fraction(o, b, m.exact)?;
            opt(o, b, m.feasible.then_some(m.placeholders))?;
            opt(o, b, m.feasible.then_some(m.summarised))?;
            o.write_field(if m.feasible { "true" } else { "false" })?;
            o.write_record(None::<&[u8]>)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.out
            .flush()
            .with_context(|| format!("{}: cannot write", self.path.display()))
    }
}

fn field<W: Write>(
    o: &mut csv::Writer<W>,
    buf: &mut String,
    f: impl FnOnce(&mut String) -> std::fmt::Result,
) -> Result<()> {
    buf.clear();
    f(buf)?;
    o.write_field(buf.as_str())?;
    Ok(())
}

/// An optional value (empty when `None`), formatted in the reused buffer.
fn opt<W: Write, T: std::fmt::Display>(
    o: &mut csv::Writer<W>,
    buf: &mut String,
    v: Option<T>,
) -> Result<()> {
    use std::fmt::Write as _;
    field(o, buf, |b| match v {
        Some(v) => write!(b, "{v}"),
        None => Ok(()),
    })
}

/// An optional fraction, formatted in the reused buffer.
fn opt_fraction<W: Write>(o: &mut csv::Writer<W>, buf: &mut String, v: Option<f64>) -> Result<()> {
    field(o, buf, |b| {
        if let Some(x) = v {
            write_fraction(b, x);
        }
        Ok(())
    })
}

/// Writes the summary as CSV.
pub fn write_summary_csv(path: &Path, rows: &[SummaryRow]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    let mut o = csv::Writer::from_writer(BufWriter::new(file));
    o.write_record(SUMMARY_COLUMNS)?;
    for r in rows {
        let of = |x: Option<f64>| x.map(fraction).unwrap_or_default();
        o.write_record([
            r.strategy.clone(),
            r.keep_recent.to_string(),
            budget(r.budget_percent),
            fraction(r.false_negative),
            fraction(r.false_positive),
            r.n.to_string(),
            r.n_feasible.to_string(),
            fraction(r.feasible_share),
            of(r.reduction_mean),
            of(r.reduction_sd),
            of(r.required_retention_mean),
            of(r.required_retention_sd),
            of(r.required_retention_ci_low),
            of(r.required_retention_ci_high),
            of(r.retention_any_mean),
            of(r.retention_any_ci_low),
            of(r.retention_any_ci_high),
            of(r.exact_mean),
        ])?;
    }
    o.flush()
        .with_context(|| format!("{}: cannot write", path.display()))
}
