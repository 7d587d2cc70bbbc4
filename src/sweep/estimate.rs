//! What a sweep will take, worked out before anything runs: its rows, its chunks, the bytes
//! of its tables in each format and its peak memory; and the refusal of a sweep that would
//! not fit the machine (memory: the smallest of what is available, the cgroup's limit and the
//! address-space limit; the report stage's charts included) or the output folder's filesystem
//! (disk).
//!
//! The bytes are estimates from the declared columns (a typical width per column type, the
//! real widths of the history names and strategy labels), calibrated on real runs; the README
//! ("Large sweeps") gives the measured ratios. They aim to be within a factor of 2.

use super::kind::SweepGrid;
use super::machine::{free_space, machine_memory, size, CGROUP_ROOT};
use super::plan::Plan;
use super::rows_writer::ROW_GROUP;
use crate::error::{Error, Result};
use crate::formats::{Formats, TableFormat};
use crate::history::source::HistorySource;
use crate::tables::{Get, Table};
use std::path::Path;

/// A limit on one figure: what the machine offers, a size given on the command line, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Limit {
    /// Memory: the smallest of `MemAvailable`, the cgroup's room and `RLIMIT_AS`'s room (see
    /// [`super::machine::machine_memory`]); disk: the free space of the output folder's filesystem.
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
    /// The formats the rows table is written in (the others hold the small tables alone).
    pub rows_formats: Formats,
    /// The peak: the larger of the evaluation's and the report stage's (they do not overlap).
    pub memory_bytes: u64,
    /// What the evaluation's peak is made of, for the advice when it does not fit.
    pub memory: MemoryParts,
}

/// The parts of a run's memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryParts {
    /// The program itself.
    pub base: u64,
    /// The rows of a chunk: what `--chunk-cells` bounds.
    pub chunk: u64,
    /// The rows waiting for the tables' encoder (two row groups at most).
    pub writer: u64,
    /// The summary's running sums.
    pub summary: u64,
    /// The loaded histories, and those in flight.
    pub histories: u64,
    /// The report stage: the largest chart's bitmap and every chart's files.
    pub charts: u64,
    /// The panels of the largest chart.
    pub chart_panels: u64,
    /// Bytes of one row (to work out a chunk that fits).
    pub row: u64,
}

impl MemoryParts {
    fn evaluation(&self) -> u64 {
        self.base + self.chunk + self.writer + self.summary + self.histories
    }
    fn report(&self) -> u64 {
        self.base + self.summary + self.charts
    }
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
    /// The small tables' formats, and the rows table's.
    pub formats: Formats,
    pub rows_formats: Formats,
    pub threads: usize,
    /// Whether the run draws charts and a report (an unsharded run with a report stage).
    pub charts: bool,
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
        Get::Percent(_) | Get::OptPercent(_) => (3.0, 0.02),
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
        HistorySource::Flagged(all) => {
            all.iter().map(|h| h.name.len() as f64).sum::<f64>() / all.len().max(1) as f64
        }
        HistorySource::Streamed(s) => {
            let all = s.skeletons();
            all.iter().map(|h| h.name.len() as f64).sum::<f64>() / all.len().max(1) as f64
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
        HistorySource::Flagged(all) => {
            let held: u64 = all
                .iter()
                .flat_map(|h| &h.records)
                .map(|r| r.text.len() as u64 + PER_RECORD)
                .sum();
            let largest = all
                .iter()
                .map(|h| h.records.len() as u64)
                .max()
                .unwrap_or(0);
            (held, largest * PER_RECORD)
        }
        // Held: each record's skeleton (id, kind, truth, flag); in flight: the history read
        // back whole, its texts with its costs.
        HistorySource::Streamed(s) => {
            const SKELETON: u64 = 11;
            let all = s.skeletons();
            let held = all
                .iter()
                .map(|h| h.len() as u64 * SKELETON + h.name.len() as u64 + 96)
                .sum();
            let largest = all
                .iter()
                .map(|h| h.text_bytes + h.len() as u64 * PER_RECORD)
                .max()
                .unwrap_or(0);
            (held, largest)
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
            formats,
            rows_formats,
            threads,
            charts,
        } = input;
        let (parquet, csv) = (
            rows_formats.has(TableFormat::Parquet),
            rows_formats.has(TableFormat::Csv),
        );
        let (small_in_parquet, small_in_csv) = (
            formats.has(TableFormat::Parquet),
            formats.has(TableFormat::Csv),
        );
        let (csv_row, parquet_row) = input.row_bytes();
        // The summary and pairs tables: a row per group (and per group and baseline), about
        // six statistics per measure.
        let measures = table.measures().count() as u64;
        let groups = grid.groups() as u64;
        let strategies = grid.strategies() as u64;
        let small_rows = groups * (1 + if strategies > 1 { strategies } else { 0 });
        let small_csv = small_rows * (40 + measures * 6 * 10);
        let small_parquet = small_rows * (10 + measures * 6 * 2) + 64 * 1024;
        // The rows table in its formats, the small tables in theirs.
        let bytes = |rows: bool, per_row: f64, small: bool, small_bytes: u64| {
            (rows || small).then(|| {
                u64::from(rows) * (table_rows as f64 * per_row) as u64
                    + u64::from(small) * small_bytes
            })
        };

        let row = std::mem::size_of::<G::Row>() as u64;
        let chunk = plan.rows_per_chunk();
        // The rows of a chunk, then (with a rows table) those waiting for the encoder: the
        // pending rows and the batch being encoded, each up to a row group (the channel holds
        // none: a batch is handed over when the encoder takes it), and the columns the encoder
        // builds from it (Parquet: values and pages).
        let group = (ROW_GROUP as u64).min(table_rows);
        let columns = table.columns.len() as u64;
        let writer = match table_rows {
            0 => 0,
            _ => {
                group * row * 2
                    + if parquet { group * columns * 24 } else { 0 }
                    + if csv { 1 << 20 } else { 0 }
            }
        };
        // The summary, a history's partial sums and the checkpoint's text.
        let summary = (groups * measures + groups * strategies) * 300;
        let (held, per_history) = history_memory(source);
        let in_flight = plan.histories_per_chunk().min(threads.max(1)) as u64;
        let (panels, lines, points) = chart_shape(&grid.axes(), G::KIND);
        let parts = MemoryParts {
            base: BASE_MEMORY,
            chunk: chunk * row,
            writer,
            summary,
            histories: held + in_flight * per_history,
            // One figure per chart kind and compare measure, each as large as the largest.
            charts: if charts {
                crate::figures::figure::memory_bound(panels, lines, points) * 2
            } else {
                0
            },
            chart_panels: panels as u64,
            row,
        };
        let memory = parts.evaluation().max(parts.report());
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
            parquet_bytes: bytes(parquet, parquet_row, small_in_parquet, small_parquet),
            csv_bytes: bytes(csv, csv_row, small_in_csv, small_csv),
            rows_formats,
            memory_bytes: memory,
            memory: parts,
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
        // A format the rows table is not written in holds the small tables alone: say so, so its
        // size is not read as the rows table's.
        let formats: Vec<String> = [
            ("Parquet", TableFormat::Parquet, self.parquet_bytes),
            ("CSV", TableFormat::Csv, self.csv_bytes),
        ]
        .into_iter()
        .filter_map(|(f, format, b)| {
            let small_only = self.table_rows > 0 && !self.rows_formats.has(format);
            b.map(|b| {
                let note = if small_only {
                    " (the small tables)"
                } else {
                    ""
                };
                format!("{f} ≈ {}{note}", size(b))
            })
        })
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
            Limit::Machine => match machine_memory(Path::new(CGROUP_ROOT)) {
                Some(found) => Some(found),
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
                    "the sweep needs an estimated {} of memory at its peak, more than {what}, {}; {}, or pass --max-memory SIZE (e.g. --max-memory {}) or --max-memory off to run it anyway",
                    size(self.memory_bytes),
                    size(limit),
                    self.advice(limit),
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
                    "the tables need an estimated {} on disk ({}), more than {what}, {}; write fewer rows (--cells sample or none, one of output.rows_formats), or pass --max-disk SIZE (e.g. --max-disk {}) or --max-disk off to run it anyway",
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

impl Estimate {
    /// What to change so that the run fits `limit`: a change that helps, worked out from the
    /// parts of the peak.
    fn advice(&self, limit: u64) -> String {
        let p = &self.memory;
        // What every stage holds: no change to the grid's shape or the chunk removes it.
        if p.base + p.summary >= limit {
            return if p.summary > p.base {
                format!("lowering --chunk-cells cannot bring it under: the summary's groups take {} on their own; sweep fewer strategies, budgets or noise levels per experiment", size(p.summary))
            } else {
                format!(
                    "lowering --chunk-cells cannot bring it under: the program itself takes {} on its own",
                    size(p.base)
                )
            };
        }
        if p.report() > limit && p.report() >= p.evaluation() {
            return format!(
                "the charts take most of it ({} for a chart of {} panels, one per noise level); sweep fewer noise levels (false_negative × false_positive rates, or noise models) per experiment",
                size(p.charts),
                p.chart_panels
            );
        }
        // Without its chunk, what the evaluation holds anyway.
        let fixed = p.evaluation() - p.chunk;
        let rows_that_fit = limit.saturating_sub(fixed) / p.row.max(1);
        if fixed < limit && rows_that_fit >= 1 {
            let per_chunk = (rows_that_fit / 2).max(1);
            return format!(
                "lower --chunk-cells (now {} {unit} a chunk; e.g. --chunk-cells {per_chunk})",
                self.rows_per_chunk,
                unit = self.unit
            );
        }
        let (bytes, what, own, hint) = [
            (
                p.histories,
                "the histories held in memory take",
                "their",
                "; load fewer or shorter histories per run",
            ),
            (
                p.writer,
                "the rows waiting for the tables take",
                "their",
                "; write fewer rows (--cells sample or none)",
            ),
            (
                p.summary,
                "the summary's groups take",
                "their",
                "; sweep fewer strategies, budgets or noise levels per experiment",
            ),
            (p.base, "the program itself takes", "its", ""),
        ]
        .into_iter()
        .max_by_key(|(b, ..)| *b)
        .expect("four parts");
        format!(
            "lowering --chunk-cells cannot bring it under: {what} {} on {own} own{hint}",
            size(bytes)
        )
    }
}

/// Refuses a merge whose report stage (the charts of the whole grid, drawn from the merged
/// summary) would not fit `limit`: the shards evaluated the cells, the merge draws.
pub fn check_report<G: SweepGrid>(grid: &G, limit: Limit) -> Result<()> {
    check_charts(&grid.axes(), G::KIND, limit, "the merge's charts", true)
}

/// Refuses drawing the charts of a run of `axes` (`what` names them: a merge's, a redraw's)
/// when their memory would not fit `limit`; `overridable`: the command takes `--max-memory`.
pub fn check_charts(
    axes: &crate::tables::manifest::Axes,
    kind: crate::tables::manifest::SweepKind,
    limit: Limit,
    what: &str,
    overridable: bool,
) -> Result<()> {
    let (panels, lines, points) = chart_shape(axes, kind);
    let charts = crate::figures::figure::memory_bound(panels, lines, points) * 2;
    let need = BASE_MEMORY + charts;
    let found = match limit {
        Limit::Off => None,
        Limit::Bytes(b) => Some((b, "the --max-memory limit".to_string())),
        Limit::Machine => machine_memory(Path::new(CGROUP_ROOT)),
    };
    match found {
        Some((limit, source)) if need > limit => Err(Error::Refused(format!(
            "{what} need an estimated {} of memory (a chart of {panels} panels, one per noise level), more than {source}, {}; sweep fewer noise levels (false_negative × false_positive rates, or noise models) per experiment{}",
            size(need),
            size(limit),
            if overridable {
                format!(
                    ", or pass --max-memory SIZE (e.g. --max-memory {}) or --max-memory off to draw them anyway",
                    suggest(need)
                )
            } else {
                String::new()
            }
        ))),
        _ => Ok(()),
    }
}

/// The panels, lines a panel and points a line of a run's largest chart, from its axes.
fn chart_shape(
    axes: &crate::tables::manifest::Axes,
    kind: crate::tables::manifest::SweepKind,
) -> (usize, usize, usize) {
    let uniform = axes.false_negative.len() * axes.false_positive.len();
    let levels = axes.noise.len().max(uniform).max(1);
    match kind {
        crate::tables::manifest::SweepKind::Cells => {
            let series = axes.strategies.len() * axes.keep_recent.len().max(1);
            // Noise models of several families: a panel per strategy and rate.
            let other = axes
                .false_negative
                .len()
                .max(axes.false_positive.len())
                .max(1);
            let panels = if axes.noise.len() > uniform {
                levels.max(series * other)
            } else {
                levels
            };
            (panels, series, axes.budgets.len())
        }
        crate::tables::manifest::SweepKind::Sessions => (
            axes.note_rates.len().max(1) * levels,
            axes.strategies.len() * axes.windows.len().max(1),
            axes.ratios.len(),
        ),
    }
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
    fn advice_names_a_change_that_helps() {
        let mut e = Estimate {
            unit: "cells",
            histories: 1,
            rows: 1 << 20,
            rows_per_history: 1 << 20,
            chunks: 4,
            rows_per_chunk: 1 << 18,
            table_rows: 0,
            parquet_bytes: None,
            csv_bytes: None,
            rows_formats: Formats::all(),
            memory_bytes: 0,
            memory: MemoryParts {
                base: 40 << 20,
                chunk: 256 << 20,
                writer: 0,
                summary: 1 << 20,
                histories: 10 << 20,
                charts: 5 << 20,
                chart_panels: 4,
                row: 1024,
            },
        };
        // 307 MiB needed, 200 MiB allowed: 149 MiB left for rows, 152 576 rows; half a chunk.
        assert_eq!(
            e.advice(200 << 20),
            "lower --chunk-cells (now 262144 cells a chunk; e.g. --chunk-cells 76288)"
        );
        // The histories alone exceed it: a smaller chunk cannot help.
        e.memory.histories = 100 << 20;
        assert_eq!(
            e.advice(120 << 20),
            "lowering --chunk-cells cannot bring it under: the histories held in memory take 100.0 MiB on their own; load fewer or shorter histories per run"
        );
        e.memory.histories = 10 << 20;
        assert_eq!(
            e.advice(1 << 20),
            "lowering --chunk-cells cannot bring it under: the program itself takes 40.0 MiB on its own"
        );
        // Charts of 65 535 panels dominate.
        e.memory.charts = 26 << 30;
        e.memory.chart_panels = 65_535;
        assert!(e
            .advice(1 << 30)
            .starts_with("the charts take most of it (26.0 GiB for a chart of 65535 panels"));
    }

    #[test]
    fn a_chart_of_every_noise_level_of_a_grid_at_the_limit_is_gigabytes() {
        // 255 × 257 levels, four panels a row of 386 px wide and 340 px high.
        let bytes = crate::figures::figure::memory_bound(65_535, 2, 2);
        assert!(bytes > 26 << 30 && bytes < 40 << 30, "{bytes}");
    }

    #[test]
    fn sizes_print() {
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
        assert_eq!(suggest(3 << 30), "4G");
    }
}
