//! What a sweep costs, measured side by side in one run so that the ratios are fair:
//!
//! 1. the hot loop alone, cells per second for each strategy;
//! 2. `experiments/noise.toml` end to end through the runner (tables only, no charts);
//! 3. a 1.2 M-cell sweep over loaded histories with the cells table and without it, whose
//!    difference is what the cells table costs;
//! 4. polars writing that same cells table from memory, the floor that cost is held to;
//! 5. the ratio of the two, against its target;
//! 6. where the cells table's cost goes: building the DataFrames from rows vs writing them.
//!
//! A plain harness (no criterion) keeps the build light. Every figure is the median of `REPS`
//! runs: the machine is small and often shared, and a median shrugs off the odd slow run where a
//! best-of-n would reward a lucky one.
//!
//! Run with `cargo bench --bench sweep`.

use anyhow::{Context as _, Result};
use ctxlab::cells::{evaluate_history, CellRow, CellScratch, Grid};
use ctxlab::experiment::{self as config, Experiment};
use ctxlab::formats::TableFormat;
use ctxlab::history::generate::{generate, GenerateConfig, Position};
use ctxlab::history::{write_jsonl, CostedHistory};
use ctxlab::strategy::Strategy;
use ctxlab::sweep::run::{self, CellsOutput, RunOptions, RunReport};
use ctxlab::tables::read::read_frame;
use ctxlab::tables::Names;
use ctxlab::CostModel;
use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};
use rayon::prelude::*;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs behind every median.
const REPS: usize = 9;

/// Rows per row group of the runner's rows tables (`ROW_GROUP` in `src/sweep/run.rs`, private
/// there), so the batched write below cuts the table as the runner does.
const ROW_GROUP: usize = 1 << 16;

/// The target for (cells table's cost in a run) / (polars writing it from memory).
const TARGET_RATIO: f64 = 1.5;

fn median(mut xs: Vec<f64>) -> f64 {
    assert!(!xs.is_empty(), "median of nothing");
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    }
}

/// Seconds `f` takes, with what it returned.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

fn row(label: &str, rows: u64, secs: f64) {
    println!(
        "{label:<58} {rows:>10} {secs:>9.3} s {:>12.0}",
        rows as f64 / secs
    );
}

fn header(title: &str) {
    println!("\n{title}");
    println!(
        "{:<58} {:>10} {:>11} {:>12}",
        "", "rows", "median", "rows/s"
    );
}

fn main() -> Result<()> {
    // The allocator as the command line sets it, so the runner (and polars beside it, in the
    // same process) is measured as `ctxlab sweep` runs.
    ctxlab::cli::allocator::tune();
    // Everything the bench writes goes here; removed at the end (and by Drop on an error).
    let tmp = tempfile::Builder::new().prefix("ctxlab-bench-").tempdir()?;
    println!(
        "machine: {} threads (rayon); every figure is the median of {REPS} runs",
        rayon::current_num_threads()
    );
    hot_loop()?;
    // `CTXLAB_BENCH_ONLY=hot` stops after the hot loop, for iterating on it.
    if std::env::var("CTXLAB_BENCH_ONLY").as_deref() == Ok("hot") {
        return Ok(());
    }
    noise_end_to_end(tmp.path())?;
    let big = big_sweep(tmp.path())?;
    let floor = polars_floor(&big.cells_parquet, tmp.path())?;
    verdict(&big, &floor);
    breakdown(&big, tmp.path())?;
    tmp.close()?;
    Ok(())
}

// --- 1. the hot loop ------------------------------------------------------------------------

/// Each strategy alone on 300 histories costed up front: only `evaluate_history` is timed, no
/// history loading, no tables.
fn hot_loop() -> Result<()> {
    let cfg = GenerateConfig {
        count: 300,
        records: [20, 200],
        required_share: 0.2,
        required_position: Position::Early,
        seed: 1,
        reuse_required: 0.8,
        reuse_other: 0.15,
        supersede_rate: 0.0,
    };
    let costed: Vec<CostedHistory> = generate(&cfg)
        .iter()
        .map(|h| CostedHistory::new(h, CostModel::Chars))
        .collect();
    let base = config::parse(
        "bench",
        r#"
name = "bench"
seed = 7
replicates = 5
[histories]
generate = { count = 300, records = [20, 200], required_share = 0.2 }
[sweep]
strategies = ["recent"]
budgets = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
keep_recent = [0, 3]
false_negative = [0.0, 0.1, 0.2, 0.4]
false_positive = [0.0, 0.05]
"#,
        &[],
    )?;
    header("1. hot loop only (evaluate_history on 300 costed histories), per strategy");
    for spec in ctxlab::strategy::NAMES
        .iter()
        .chain(["required(fill=skip)"].iter())
    {
        let mut exp = base.clone();
        exp.strategies = vec![Strategy::parse(spec).map_err(anyhow::Error::msg)?];
        let grid = Grid::new(&exp, costed.len());
        let mut cells = 0;
        let secs = median(
            (0..REPS)
                .map(|_| {
                    let (n, secs) = timed(|| evaluate_all(&grid, &costed));
                    cells = n;
                    secs
                })
                .collect(),
        );
        row(spec, cells, secs);
    }
    Ok(())
}

/// Cells of every history, in parallel, each worker reusing its scratch and row buffer.
fn evaluate_all(grid: &Grid, costed: &[CostedHistory]) -> u64 {
    costed
        .par_iter()
        .enumerate()
        .map_init(
            || (CellScratch::default(), Vec::<CellRow>::new()),
            |(scratch, rows), (i, h)| {
                rows.clear();
                evaluate_history(grid, i, h, scratch, rows);
                rows.len() as u64
            },
        )
        .sum()
}

// --- 2. the main job end to end -------------------------------------------------------------

fn noise_end_to_end(tmp: &Path) -> Result<()> {
    let mut exp = config::load(Path::new("experiments/noise.toml"), &[])?;
    header("2. experiments/noise.toml end to end (run::run)");
    let mut report = None;
    let secs = median(
        (0..REPS)
            .map(|i| {
                exp.output_dir = tmp.join(format!("noise-{i}"));
                let (r, secs) = run_once(&exp, CellsOutput::All)?;
                std::fs::remove_dir_all(&exp.output_dir)?;
                report = Some(r);
                Ok(secs)
            })
            .collect::<Result<_>>()?,
    );
    let report = report.expect("REPS > 0");
    let formats = match (
        exp.formats.has(TableFormat::Parquet),
        exp.formats.has(TableFormat::Csv),
    ) {
        (true, true) => "Parquet + CSV",
        (true, false) => "Parquet",
        (false, true) => "CSV",
        (false, false) => "no files",
    };
    let label = format!("tables written ({formats}), no charts (stage: None)");
    row(&label, report.rows, secs);
    Ok(())
}

/// One run into `exp.output_dir` (the caller gives a fresh one), timed from outside:
/// `RunReport::wall` stops before the summary, the manifest and publishing, which a user waits
/// for too. No charts: `RunOptions::stage` stays `None`.
fn run_once(exp: &Experiment, cells: CellsOutput) -> Result<(RunReport, f64)> {
    let opts = RunOptions {
        cells,
        ..Default::default()
    };
    let (report, secs) = timed(|| run::run(exp, &opts));
    let report = report.with_context(|| format!("sweep into {}", exp.output_dir.display()))?;
    Ok((report, secs))
}

// --- 3. the 1.2 M-cell sweep with and without its cells table -------------------------------

struct BigSweep {
    /// Cells computed by each run.
    rows: u64,
    /// Rows of the cells table an `All` run wrote.
    written: u64,
    /// Median wall seconds with the cells table (`All`) and without it (`None`).
    all: f64,
    none: f64,
    /// The cells table of the last `All` run, kept for the polars floor.
    cells_parquet: PathBuf,
    /// The experiment (its histories file included), for the breakdown.
    exp: Experiment,
}

impl BigSweep {
    fn table_cost(&self) -> f64 {
        self.all - self.none
    }
}

/// 6 000 generated histories written once as JSONL, so the runs load them the way a real sweep
/// over files does (the loading is in both modes, so it cancels out of the difference).
fn big_sweep(tmp: &Path) -> Result<BigSweep> {
    let histories = write_histories(tmp, 6000)?;
    let exp = big_experiment(&histories)?;
    let mut times = [Vec::new(), Vec::new()];
    let mut rows = 0;
    let cells_parquet = tmp.join("cells.parquet");
    // Interleaved (All, None, All, None, ...) so drift on a shared machine hits both alike.
    for i in 0..REPS {
        for (m, mode) in [CellsOutput::All, CellsOutput::None]
            .into_iter()
            .enumerate()
        {
            let out = tmp.join(format!("big-{mode:?}-{i}"));
            let mut run_exp = exp.clone();
            run_exp.output_dir = out.clone();
            let (report, secs) = run_once(&run_exp, mode)?;
            times[m].push(secs);
            rows = report.rows;
            if mode == CellsOutput::All {
                std::fs::rename(out.join("cells.parquet"), &cells_parquet)?;
            }
            std::fs::remove_dir_all(&out)?;
        }
    }
    // Every run's time as well as the medians, so a reader sees how noisy the machine was.
    let runs = |xs: &[f64]| {
        xs.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let spread = format!(
        "runs (s, in order): All {} | None {}",
        runs(&times[0]),
        runs(&times[1])
    );
    let [all, none] = times.map(median);
    let big = BigSweep {
        rows,
        written: TableFormat::Parquet.rows_in(&cells_parquet)?,
        all,
        none,
        cells_parquet,
        exp,
    };
    header("3. 1.2 M cells: 6 000 loaded histories x 10 replicates x 2 strategies x 10 budgets, Parquet only (interleaved)");
    row("cells: All (cells table written)", big.rows, big.all);
    row(
        "cells: None (summary only, no cells table)",
        big.rows,
        big.none,
    );
    println!(
        "{:<58} {:>10} {:>9.3} s   (median All - median None)",
        "the cells table's cost",
        big.written,
        big.table_cost()
    );
    println!("  {spread}");
    Ok(big)
}

/// Writes `count` generated histories as one JSONL file and returns its path.
fn write_histories(tmp: &Path, count: u32) -> Result<PathBuf> {
    let cfg = GenerateConfig {
        count,
        records: [20, 200],
        required_share: 0.2,
        required_position: Position::Early,
        seed: 1,
        reuse_required: 0.8,
        reuse_other: 0.15,
        supersede_rate: 0.0,
    };
    let path = tmp.join("h.jsonl");
    let mut w = BufWriter::new(File::create(&path)?);
    write_jsonl(&mut w, &generate(&cfg))?;
    std::io::Write::flush(&mut w)?;
    Ok(path)
}

fn big_experiment(histories: &Path) -> Result<Experiment> {
    // A TOML string value, quoted and escaped by toml itself whatever the temp path holds.
    let file = toml::Value::String(histories.display().to_string());
    let text = format!(
        r#"
name = "bench-1.2m"
seed = 7
replicates = 10
[histories]
files = [{file}]
[sweep]
strategies = ["recent", "required"]
budgets = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
[output]
formats = ["parquet"]
"#
    );
    Ok(config::parse("bench-1.2m", &text, &[])?)
}

// --- 4. polars writing the same table from memory --------------------------------------------

struct Floor {
    rows: u64,
    /// `ParquetWriter::finish` on the whole frame.
    whole: f64,
    /// The batched writer fed 2^18-row slices, as the runner feeds it.
    batched: f64,
}

/// The cells table read back into memory (not timed), then written the two ways.
fn polars_floor(cells_parquet: &Path, tmp: &Path) -> Result<Floor> {
    let mut df = read_frame(cells_parquet)?;
    let out = tmp.join("rewrite.parquet");
    let whole = median(
        (0..REPS)
            .map(|_| timed(|| write_whole(&out, &mut df)).1)
            .collect(),
    );
    let batched = median(
        (0..REPS)
            .map(|_| timed(|| write_batched(&out, &df)).1)
            .collect(),
    );
    // Check once, outside the timings, that both writes succeed and hold every row.
    write_whole(&out, &mut df)?;
    anyhow::ensure!(
        TableFormat::Parquet.rows_in(&out)? == df.height() as u64,
        "whole write lost rows"
    );
    write_batched(&out, &df)?;
    anyhow::ensure!(
        TableFormat::Parquet.rows_in(&out)? == df.height() as u64,
        "batched write lost rows"
    );
    let floor = Floor {
        rows: df.height() as u64,
        whole,
        batched,
    };
    header(
        "4. polars writing that cells table from memory (zstd, read back first; read not timed)",
    );
    row(
        "ParquetWriter::finish, whole frame",
        floor.rows,
        floor.whole,
    );
    row(
        "ParquetWriter::batched, 2^18-row slices (as the runner)",
        floor.rows,
        floor.batched,
    );
    Ok(floor)
}

fn write_whole(path: &Path, df: &mut DataFrame) -> Result<()> {
    ParquetWriter::new(BufWriter::new(File::create(path)?))
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)?;
    Ok(())
}

fn write_batched(path: &Path, df: &DataFrame) -> Result<()> {
    let mut w = ParquetWriter::new(BufWriter::new(File::create(path)?))
        .with_compression(ParquetCompression::Zstd(None))
        .batched(df.schema())?;
    for offset in (0..df.height()).step_by(ROW_GROUP) {
        w.write_batch(&df.slice(offset as i64, ROW_GROUP))?;
    }
    w.finish()?;
    Ok(())
}

// --- 5. the verdict ---------------------------------------------------------------------------

fn verdict(big: &BigSweep, floor: &Floor) {
    println!(
        "\n5. the cells table's cost / polars writing it from memory (target <= {TARGET_RATIO}x)"
    );
    for (label, secs) in [
        ("vs ParquetWriter::finish, whole frame", floor.whole),
        ("vs batched writer, 2^18-row slices", floor.batched),
    ] {
        let ratio = big.table_cost() / secs;
        let mark = if ratio <= TARGET_RATIO {
            "within target"
        } else {
            "ABOVE target"
        };
        println!(
            "{label:<58} {:>6.3} s / {secs:.3} s = {ratio:.2}x  ({mark})",
            big.table_cost()
        );
    }
}

// --- 6. where the cells table's cost goes ----------------------------------------------------

/// The pieces of the cells table's cost that the library exposes, timed on the same 1.2 M rows
/// computed in memory (not timed): `Table::frame` on 2^18-row slices, as the runner's assembly
/// calls it, and the batched writer fed those frames (1 MiB buffer, as the runner's sink). The
/// rest (part files encoded, written and read back, copies of the rows) is by difference:
/// `sweep::parts` is private.
fn breakdown(big: &BigSweep, tmp: &Path) -> Result<()> {
    let histories = ctxlab::history::source::load_source(&big.exp.source)?;
    let names: Vec<String> = histories.iter().map(|h| h.name.clone()).collect();
    let costed: Vec<CostedHistory> = histories
        .iter()
        .map(|h| CostedHistory::new(h, big.exp.cost))
        .collect();
    drop(histories);
    let grid = Grid::new(&big.exp, costed.len());
    let rows = all_rows(&grid, &costed);
    let table = ctxlab::tables::cells::table();
    let at = Names {
        base: 0,
        names: &names,
    };
    let schema = table.frame(&grid, Names::NONE, &[])?.schema().clone();
    let out = tmp.join("frames.parquet");
    let (mut frame_secs, mut write_secs) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let (frames, secs) = timed(|| {
            rows.chunks(ROW_GROUP)
                .map(|c| table.frame(&grid, at, c))
                .collect::<Result<Vec<DataFrame>, _>>()
        });
        let frames = frames?;
        frame_secs.push(secs);
        let (written, secs) = timed(|| write_frames(&out, &schema, &frames));
        written?;
        write_secs.push(secs);
    }
    let (frame, write) = (median(frame_secs), median(write_secs));
    let n = rows.len() as u64;
    header("6. where the cells table's cost goes (pieces timed on the same rows, in memory)");
    row("Table::frame: rows -> DataFrame, 2^18-row slices", n, frame);
    row("batched writer fed those frames", n, write);
    println!(
        "{:<58} {n:>10} {:>9.3} s   (cost - the two above)",
        "rest: row copies and hand-over (below 0: encoding overlaps evaluation)",
        big.table_cost() - frame - write
    );
    Ok(())
}

/// Every cell of every history, in history order, as the runner's chunks produce them.
fn all_rows(grid: &Grid, costed: &[CostedHistory]) -> Vec<CellRow> {
    let per_history: Vec<Vec<CellRow>> = costed
        .par_iter()
        .enumerate()
        .map_init(CellScratch::default, |scratch, (i, h)| {
            let mut rows = Vec::new();
            evaluate_history(grid, i, h, scratch, &mut rows);
            rows
        })
        .collect();
    per_history.concat()
}

fn write_frames(path: &Path, schema: &polars::prelude::Schema, frames: &[DataFrame]) -> Result<()> {
    let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut w = ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .batched(schema)?;
    for f in frames {
        w.write_batch(f)?;
    }
    w.finish()?;
    Ok(())
}
