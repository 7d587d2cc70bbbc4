//! `ctxlab compare RESULTS --baseline SPEC [--measure NAME]`: the paired comparisons of a
//! published run against one strategy, from its `pairs.parquet` (every strategy against every
//! other, cell by cell on the same history, replicate and axes, with intervals by history).
//! Writes `compare.parquet` and `compare.csv` into the folder with the charts redrawn (a cell
//! sweep's include one `compare_<measure>` chart per measure), all listed in its manifest and
//! published together under the folder's lock like a sweep's files; nothing is written when
//! an argument is wrong.

use super::publish::FileToWrite;
use super::text_table::{self, Align};
use crate::error::{Error, InputError, Result};
use crate::strategy::Strategy;
use crate::tables::manifest::{Manifest, SweepKind, MANIFEST};
use crate::tables::numbers::write_fraction;
use crate::tables::read::Checked;
use polars::prelude::{AnyValue, BooleanChunked, DataFrame, NewChunkedArray, ParquetWriter};
use std::path::{Path, PathBuf};

/// A comparison against one baseline, ready to print and written.
pub struct Comparison {
    pub baseline: String,
    pub measures: Vec<String>,
    pub frame: DataFrame,
    pub written: Vec<PathBuf>,
}

/// Reads `dir`'s pairs against `baseline` (a strategy spec) for `measure` (or every paired
/// measure) and writes them as `compare.*`.
pub fn compare(dir: &Path, baseline: &str, measure: Option<&str>) -> Result<Comparison> {
    compare_with_fault(dir, baseline, measure, None)
}

/// [`compare`], aborting at `fault` while publishing (for the tests of a kill).
pub fn compare_with_fault(
    dir: &Path,
    baseline: &str,
    measure: Option<&str>,
    fault: Option<&crate::sweep::fault::Fault>,
) -> Result<Comparison> {
    // The folder's lock first, so the manifest and tables read are not another run's half.
    let folder = super::republish::take(dir)?;
    let manifest_path = dir.join(MANIFEST);
    let manifest = Manifest::read(&manifest_path)?;
    let label = swept_baseline(dir, &manifest, baseline)?;
    let path = dir.join("pairs.parquet");
    let pairs = match manifest.kind {
        SweepKind::Cells => Checked::read(&path, &crate::tables::cells::pairs_table(), false)?,
        SweepKind::Sessions => {
            Checked::read(&path, &crate::tables::sessions::pairs_table(), false)?
        }
    };
    let measures = paired_measures(dir, &pairs, measure)?;
    let keep: Vec<bool> = pairs
        .text("baseline")
        .iter()
        .zip(pairs.text("measure"))
        .map(|(b, m)| *b == label && measure.is_none_or(|x| x == m))
        .collect();
    let mask = BooleanChunked::from_slice("keep".into(), &keep);
    let mut frame = pairs.frame.filter(&mask).map_err(|e| Error::Table {
        path: path.clone(),
        doing: "filter",
        message: e.to_string(),
    })?;
    let files = compare_files(dir, &mut frame, &keep)?;
    let Some(folder) = folder else {
        return Err(Error::Refused(format!(
            "{}: the manifest appeared while ctxlab compared; run compare again",
            manifest_path.display()
        )));
    };
    // A compare chart of a measure this comparison leaves out would show another baseline.
    let dropped: Vec<String> = measures
        .iter()
        .filter(|m| measure.is_some_and(|x| x != m.as_str()))
        .flat_map(|m| {
            ["png", "svg"].map(|ext| format!("{}/compare_{m}.{ext}", super::publish::CHARTS_DIR))
        })
        .collect();
    // Charts and report are redrawn with the compare charts from the table staged beside them;
    // tables, charts, report and manifest are then published together.
    let written = super::republish::publish(
        &folder,
        ".partial-compare",
        manifest,
        files,
        |staging| super::republish::drawn(dir, &staging.join("compare.parquet")),
        &dropped,
        fault,
    )?;
    Ok(Comparison {
        baseline: label,
        measures,
        frame,
        written,
    })
}

/// A wrong argument, named by its flag, against the results folder.
fn wrong(dir: &Path, key: &str, message: String) -> Error {
    InputError::key(dir.display().to_string(), key.to_string(), message).into()
}

/// The baseline's label, refused unless it parses and the run swept it.
fn swept_baseline(dir: &Path, manifest: &Manifest, baseline: &str) -> Result<String> {
    let label = Strategy::parse(baseline)
        .map_err(|e| wrong(dir, "--baseline", e.0))?
        .label();
    let strategies = &manifest.grid.strategies;
    if !strategies.contains(&label) {
        return Err(wrong(
            dir,
            "--baseline",
            format!(
                "{label:?} was not swept in this run; its strategies are {}",
                strategies.join(", ")
            ),
        ));
    }
    Ok(label)
}

/// The paired measures in their table's order; `measure`, when given, must be one of them.
fn paired_measures(dir: &Path, pairs: &Checked, measure: Option<&str>) -> Result<Vec<String>> {
    let mut measures: Vec<String> = Vec::new();
    for m in pairs.text("measure") {
        if !measures.contains(&m) {
            measures.push(m);
        }
    }
    if let Some(m) = measure {
        if !measures.iter().any(|x| x == m) {
            return Err(wrong(
                dir,
                "--measure",
                format!(
                    "{m:?} is not a paired measure; they are {}",
                    measures.join(", ")
                ),
            ));
        }
    }
    Ok(measures)
}

/// The compared rows as `compare.parquet`, and as `compare.csv` where the run wrote CSV.
fn compare_files(dir: &Path, frame: &mut DataFrame, keep: &[bool]) -> Result<Vec<FileToWrite>> {
    let mut parquet = Vec::new();
    ParquetWriter::new(&mut parquet)
        .finish(frame)
        .map_err(|e| Error::Table {
            path: dir.join("compare.parquet"),
            doing: "write Parquet",
            message: e.to_string(),
        })?;
    let csv = filter_csv(&dir.join("pairs.csv"), keep)?.unwrap_or_default();
    let mut files = vec![FileToWrite {
        relative: "compare.parquet".into(),
        bytes: parquet,
    }];
    // The CSV only where the run wrote CSV: its lines are the pairs' own, as the sweep wrote them.
    if !csv.is_empty() {
        files.push(FileToWrite {
            relative: "compare.csv".into(),
            bytes: csv,
        });
    }
    Ok(files)
}

/// A field of the frame as the tables' CSV writes it.
fn field(v: AnyValue, buf: &mut String) {
    use std::fmt::Write as _;
    buf.clear();
    match v {
        AnyValue::Null => {}
        AnyValue::Float64(x) => write_fraction(buf, x),
        AnyValue::UInt64(x) => {
            let _ = write!(buf, "{x}");
        }
        AnyValue::Boolean(b) => buf.push_str(if b { "true" } else { "false" }),
        AnyValue::String(s) => buf.push_str(s),
        AnyValue::StringOwned(s) => buf.push_str(s.as_str()),
        other => {
            let _ = write!(buf, "{other}");
        }
    }
}

/// The lines of `pairs.csv` whose rows `keep` selects (the CSV holds the Parquet's rows in the
/// same order), with its header; `None` when the run wrote no CSV.
fn filter_csv(path: &Path, keep: &[bool]) -> Result<Option<Vec<u8>>> {
    if !path.exists() {
        return Ok(None);
    }
    let bad = |e: csv::Error| Error::Table {
        path: path.to_path_buf(),
        doing: "read",
        message: e.to_string(),
    };
    let mut reader = csv::Reader::from_path(path).map_err(bad)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(reader.byte_headers().map_err(bad)?)
        .map_err(bad)?;
    let mut rows = 0;
    for (record, &k) in reader
        .byte_records()
        .zip(keep.iter().chain(std::iter::repeat(&false)))
    {
        let record = record.map_err(bad)?;
        rows += 1;
        if k {
            w.write_byte_record(&record).map_err(bad)?;
        }
    }
    if rows != keep.len() {
        return Err(Error::Table {
            path: path.to_path_buf(),
            doing: "read",
            message: format!(
                "holds {rows} rows where pairs.parquet holds {}: the tables are not of one run",
                keep.len()
            ),
        });
    }
    w.into_inner().map(Some).map_err(|e| Error::Table {
        path: path.to_path_buf(),
        doing: "write",
        message: e.to_string(),
    })
}

/// The comparison as a plain-text table: the group's keys, then the difference with its
/// interval by history and the shares of histories better, worse and tied.
pub fn to_text(c: &Comparison) -> String {
    let skip = [
        "baseline",
        "n",
        "diff_mean",
        "diff_ci_low",
        "diff_ci_high",
        "share_better",
        "share_worse",
        "share_tied",
    ];
    let keys: Vec<String> = c
        .frame
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .filter(|n| !skip.contains(&n.as_str()))
        .collect();
    let mut headings: Vec<&str> = keys.iter().map(String::as_str).collect();
    headings.extend(["difference (95 % by history)", "better", "worse", "tied"]);
    let value = |name: &str, i: usize| -> String {
        let mut buf = String::new();
        let v = c
            .frame
            .column(name)
            .ok()
            .and_then(|col| col.get(i).ok())
            .unwrap_or(AnyValue::Null);
        match v {
            AnyValue::Float64(x) if name == "budget_percent" => x.to_string(),
            AnyValue::Float64(x) => format!("{x:.3}"),
            v => {
                field(v, &mut buf);
                buf
            }
        }
    };
    let rows: Vec<Vec<String>> = (0..c.frame.height())
        .map(|i| {
            let mut row: Vec<String> = keys.iter().map(|k| value(k, i)).collect();
            let (m, lo, hi) = (
                value("diff_mean", i),
                value("diff_ci_low", i),
                value("diff_ci_high", i),
            );
            row.push(match (lo.is_empty(), m.is_empty()) {
                (_, true) => "—".into(),
                (true, false) => format!("{m} (one history)"),
                (false, false) => format!("{m} ({lo} to {hi})"),
            });
            row.push(value("share_better", i));
            row.push(value("share_worse", i));
            row.push(value("share_tied", i));
            row
        })
        .collect();
    let mut align = vec![Align::Right; headings.len()];
    align[0] = Align::Left;
    if let Some(i) = keys.iter().position(|k| k == "measure") {
        align[i] = Align::Left;
    }
    format!(
        "every strategy minus {:?}, cell by cell on the same history and replicate; intervals \
         treat the history as the unit; better / worse / tied: shares of histories whose mean \
         difference is above / below / exactly 0\n\n{}",
        c.baseline,
        text_table::render(&headings, &rows, &align)
    )
}
