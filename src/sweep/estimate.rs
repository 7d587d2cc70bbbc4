//! What a sweep will take, worked out before anything runs: its rows, its chunks, the bytes
//! of its tables in each format and its peak memory; and the refusal of a sweep that would
//! not fit the machine (memory) or the output folder's filesystem (disk).
//!
//! The bytes are estimates from the declared columns (a typical width per column type, the
//! real widths of the history names and strategy labels), calibrated on real runs; the README
//! ("Large sweeps") gives the measured ratios. They aim to be within a factor of 2.

use super::kind::SweepGrid;
use super::plan::Plan;
use super::rows_writer::ROW_GROUP;
use crate::error::{Error, Result};
use crate::history::source::HistorySource;
use crate::tables::{Get, Table};
use std::path::Path;

/// A limit on one figure: what the machine offers, a size given on the command line, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Limit {
    /// Memory: `MemAvailable` of /proc/meminfo; disk: the free space of the output folder's
    /// filesystem.
    #[default]
    Machine,
    Bytes(u64),
    Off,
}

impl std::str::FromStr for Limit {
    type Err = String;
    /// `off`, or a size in bytes with an optional binary suffix: `512M`, `4G`, `1.5T`, `800K`.
    fn from_str(s: &str) -> std::result::Result<Limit, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("off") {
            return Ok(Limit::Off);
        }
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (number, suffix) = t.split_at(split);
        let scale: u64 = match suffix.trim().to_ascii_uppercase().trim_end_matches('B') {
            "" => 1,
            "K" | "KI" => 1 << 10,
            "M" | "MI" => 1 << 20,
            "G" | "GI" => 1 << 30,
            "T" | "TI" => 1 << 40,
            _ => {
                return Err(format!(
                    "expected a size such as 512M, 4G or 1T, or off; found {s:?}"
                ))
            }
        };
        let x: f64 = number
            .parse()
            .map_err(|_| format!("expected a size such as 512M, 4G or 1T, or off; found {s:?}"))?;
        let bytes = x * scale as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(format!("{s:?} is too large a size"));
        }
        Ok(Limit::Bytes(bytes as u64))
    }
}

/// The limits a run is checked against (`--max-memory`, `--max-disk`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub memory: Limit,
    pub disk: Limit,
}

/// A sweep's figures, before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// `cells` or `sessions`.
    pub unit: &'static str,
    pub histories: usize,
    /// Rows (cells or sessions) of this run.
    pub rows: u64,
    pub rows_per_history: u64,
    pub chunks: usize,
    pub rows_per_chunk: u64,
    /// Rows of the rows table (all, a sample or none).
    pub table_rows: u64,
    /// Bytes of the tables in Parquet and in CSV (`None`: that format is not written).
    pub parquet_bytes: Option<u64>,
    pub csv_bytes: Option<u64>,
    pub memory_bytes: u64,
}

/// What an estimate is worked out from.
pub struct EstimateInput<'a, G: SweepGrid> {
    pub grid: &'a G,
    pub table: &'a Table<G, G::Row>,
    pub plan: &'a Plan,
    pub source: &'a HistorySource,
    /// Histories of this run (a shard's own).
    pub histories: usize,
    pub rows: u64,
    pub table_rows: u64,
    pub formats: (bool, bool),
    pub threads: usize,
}

/// Memory of the program itself: code, the Parquet library, thread stacks (measured: a sweep
/// of a few cells peaks at about 30 MiB).
const BASE_MEMORY: u64 = 40 << 20;

/// Typical bytes of one value of a column type, in CSV (with its separator) and in Parquet
/// (zstd, by row group), fitted on `experiments/noise.toml` and `experiments/sessions.toml`.
/// Parquet varies most with the data (repeated values compress away): written / estimated
/// was 0.97 to 1.9 on cell tables of 144 000 to 19 200 000 rows, 0.6 on session tables.
fn value_bytes<G, R>(get: &Get<G, R>) -> (f64, f64) {
    match get {
        Get::Text(_) => (1.0, 0.02),
        Get::Whole(_) => (5.0, 0.5),
        Get::OptWhole(_) => (3.0, 0.2),
        Get::Real(_) => (9.0, 0.1),
        Get::OptReal(_) => (10.0, 0.25),
        Get::Percent(_) => (3.0, 0.02),
        Get::Flag(_) => (5.0, 0.02),
    }
}

impl<G: SweepGrid> EstimateInput<'_, G> {
    /// Bytes of one row of the rows table in (CSV, Parquet).
    fn row_bytes(&self) -> (f64, f64) {
        let labels = self.grid.labels();
        let label = labels
            .iter()
            .map(|l| l.len() as f64 + if l.contains([',', '"']) { 2.0 } else { 0.0 })
            .sum::<f64>()
            / labels.len().max(1) as f64;
        let name = mean_name_len(self.source);
        self.table
            .columns
            .iter()
            .map(|c| {
                let (csv, parquet) = value_bytes(&c.get);
                let text = match (&c.get, c.name.as_str()) {
                    (Get::Text(_), "history") => name,
                    (Get::Text(_), _) => label,
                    _ => 0.0,
                };
                (csv + text, parquet)
            })
            .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d))
    }
}

/// The mean length of the histories' names (generated ones are `synthetic-00001`).
fn mean_name_len(source: &HistorySource) -> f64 {
    match source {
        HistorySource::Generated(cfg) => format!("synthetic-{:05}", cfg.count).len() as f64,
        HistorySource::Loaded(all) => {
            all.iter().map(|h| h.0.name.len() as f64).sum::<f64>() / all.len().max(1) as f64
        }
    }
}

/// Bytes a history takes in memory while it is costed and evaluated (its texts, then its
/// per-record costs, kinds and flags), at most.
fn history_memory(source: &HistorySource) -> (u64, u64) {
    // (held for the whole run, per history in flight)
    const PER_RECORD: u64 = 120;
    match source {
        HistorySource::Generated(cfg) => (0, u64::from(cfg.records[1]) * (PER_RECORD + 400)),
        HistorySource::Loaded(all) => {
            let held: u64 = all
                .iter()
                .flat_map(|h| &h.0.records)
                .map(|r| r.text.len() as u64 + PER_RECORD)
                .sum();
            let largest = all
                .iter()
                .map(|h| h.0.records.len() as u64)
                .max()
                .unwrap_or(0);
            (held, largest * PER_RECORD)
        }
    }
}

impl Estimate {
    pub fn new<G: SweepGrid>(input: EstimateInput<'_, G>) -> Estimate {
        let EstimateInput {
            grid,
            table,
            plan,
            source,
            histories,
            rows,
            table_rows,
            formats: (parquet, csv),
            threads,
        } = input;
        let (csv_row, parquet_row) = input.row_bytes();
        // The summary and pairs tables: a row per group (and per group and baseline), about
        // six statistics per measure.
        let measures = table.measures().count() as u64;
        let groups = grid.groups() as u64;
        let strategies = grid.strategies() as u64;
        let small_rows = groups * (1 + if strategies > 1 { strategies } else { 0 });
        let small_csv = small_rows * (40 + measures * 6 * 10);
        let small_parquet = small_rows * (10 + measures * 6 * 2) + 64 * 1024;
        let bytes = |per_row: f64, small: u64| (table_rows as f64 * per_row) as u64 + small;

        let row = std::mem::size_of::<G::Row>() as u64;
        let chunk = plan.rows_per_chunk();
        // The rows of a chunk, then (with a rows table) those waiting for the encoder: the
        // pending rows, a batch in the channel and the one being encoded, each up to a row
        // group, and the columns the encoder builds from it (Parquet: values and pages).
        let group = (ROW_GROUP as u64).min(table_rows);
        let columns = table.columns.len() as u64;
        let writer = match table_rows {
            0 => 0,
            _ => {
                group * row * 3
                    + if parquet { group * columns * 24 } else { 0 }
                    + if csv { 1 << 20 } else { 0 }
            }
        };
        // The summary, a history's partial sums and the checkpoint's text.
        let summary = (groups * measures + groups * strategies) * 300;
        let (held, per_history) = history_memory(source);
        let in_flight = plan.histories_per_chunk().min(threads.max(1)) as u64;
        let memory = BASE_MEMORY + chunk * row + writer + summary + held + in_flight * per_history;
        Estimate {
            unit: match G::KIND {
                crate::tables::manifest::SweepKind::Cells => "cells",
                crate::tables::manifest::SweepKind::Sessions => "sessions",
            },
            histories,
            rows,
            rows_per_history: grid.rows_per_history() as u64,
            chunks: plan.chunks(),
            rows_per_chunk: chunk,
            table_rows,
            parquet_bytes: parquet.then(|| bytes(parquet_row, small_parquet)),
            csv_bytes: csv.then(|| bytes(csv_row, small_csv)),
            memory_bytes: memory,
        }
    }

    /// Bytes on disk of every table written.
    pub fn disk_bytes(&self) -> u64 {
        self.parquet_bytes.unwrap_or(0) + self.csv_bytes.unwrap_or(0)
    }

    /// The estimate as lines for people (stderr).
    pub fn lines(&self) -> Vec<String> {
        let unit = self.unit;
        let mut out = vec![format!(
            "estimate: {} {unit} ({} histories × {} {unit}), {} chunks of at most {} {unit}",
            self.rows, self.histories, self.rows_per_history, self.chunks, self.rows_per_chunk
        )];
        let formats: Vec<String> = [("Parquet", self.parquet_bytes), ("CSV", self.csv_bytes)]
            .into_iter()
            .filter_map(|(f, b)| b.map(|b| format!("{f} ≈ {}", size(b))))
            .collect();
        out.push(format!(
            "  {unit} table: {} rows; on disk {} (estimated, within about a factor of 2)",
            self.table_rows,
            if formats.is_empty() {
                "nothing".to_string()
            } else {
                formats.join(", ")
            }
        ));
        out.push(format!(
            "  peak memory ≈ {} (estimated)",
            size(self.memory_bytes)
        ));
        out
    }

    /// Refuses a run whose memory exceeds `limits.memory` or whose tables exceed
    /// `limits.disk` (the free space of `out`'s filesystem by default); returns notes on the
    /// checks that could not be made.
    pub fn check(&self, limits: &Limits, out: &Path) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        let memory = match limits.memory {
            Limit::Off => None,
            Limit::Bytes(b) => Some((b, "the --max-memory limit".to_string())),
            Limit::Machine => match mem_available() {
                Some(b) => Some((
                    b,
                    "the memory available (MemAvailable in /proc/meminfo)".into(),
                )),
                None => {
                    notes.push(
                        "memory not checked: MemAvailable is read from /proc/meminfo, absent here"
                            .to_string(),
                    );
                    None
                }
            },
        };
        if let Some((limit, what)) = memory {
            if self.memory_bytes > limit {
                return Err(Error::Refused(format!(
                    "the sweep needs an estimated {} of memory at its peak, more than {what}, {}; lower --chunk-cells (now {} {} a chunk), or pass --max-memory SIZE (e.g. --max-memory {}) or --max-memory off to run it anyway",
                    size(self.memory_bytes),
                    size(limit),
                    self.rows_per_chunk,
                    self.unit,
                    suggest(self.memory_bytes)
                )));
            }
        }
        let disk = match limits.disk {
            Limit::Off => None,
            Limit::Bytes(b) => Some((b, "the --max-disk limit".to_string())),
            Limit::Machine => {
                match free_space(out) {
                    Some((b, at)) => Some((b, format!("the free space of {}", at.display()))),
                    None => {
                        notes.push("disk not checked: the free space is read with statvfs, not available here".to_string());
                        None
                    }
                }
            }
        };
        if let Some((limit, what)) = disk {
            let need = self.disk_bytes();
            if need > limit {
                return Err(Error::Refused(format!(
                    "the tables need an estimated {} on disk ({}), more than {what}, {}; write fewer rows (--cells sample or none, one of output.formats), or pass --max-disk SIZE (e.g. --max-disk {}) or --max-disk off to run it anyway",
                    size(need),
                    [("Parquet", self.parquet_bytes), ("CSV", self.csv_bytes)]
                        .into_iter()
                        .filter_map(|(f, b)| b.map(|b| format!("{f} {}", size(b))))
                        .collect::<Vec<_>>()
                        .join(" + "),
                    size(limit),
                    suggest(need)
                )));
            }
        }
        Ok(notes)
    }
}

/// A size for people: `812 B`, `3.4 KiB`, `1.2 GiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut x = bytes as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

/// A `--max-*` value just above `bytes`, in whole units of the size's own scale.
fn suggest(bytes: u64) -> String {
    let (scale, suffix) = match bytes {
        b if b >= 1 << 30 => (1u64 << 30, "G"),
        b if b >= 1 << 20 => (1 << 20, "M"),
        _ => (1 << 10, "K"),
    };
    format!("{}{suffix}", bytes / scale + 1)
}

/// `MemAvailable` of /proc/meminfo, in bytes (Linux only).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The free space (for an unprivileged user) of the filesystem that holds `path`, or its
/// nearest existing ancestor (the output folder may not exist yet), and that folder.
#[cfg(unix)]
fn free_space(path: &Path) -> Option<(u64, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt as _;
    let absolute = std::path::absolute(path).ok()?;
    let existing = absolute.ancestors().find(|p| p.exists())?.to_path_buf();
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `stat` a valid, writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    let free = (stat.f_bavail as u64).checked_mul(stat.f_frsize as u64)?;
    Some((free, existing))
}

#[cfg(not(unix))]
fn free_space(_: &Path) -> Option<(u64, std::path::PathBuf)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!("512M".parse(), Ok(Limit::Bytes(512 << 20)));
        assert_eq!("4G".parse(), Ok(Limit::Bytes(4 << 30)));
        assert_eq!("1.5k".parse(), Ok(Limit::Bytes(1536)));
        assert_eq!("100".parse(), Ok(Limit::Bytes(100)));
        assert_eq!("off".parse(), Ok(Limit::Off));
        assert!("4X".parse::<Limit>().is_err());
        assert!("".parse::<Limit>().is_err());
    }

    #[test]
    fn sizes_print() {
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
        assert_eq!(suggest(3 << 30), "4G");
    }
}
