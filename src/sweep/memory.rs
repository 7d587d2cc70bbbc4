//! An experiment run in memory: its rows and summary tables as DataFrames, without a results
//! folder, for a notebook binding or another tool. The same hot loop, random streams and
//! table declarations as a sweep, so the frames equal the tables a sweep publishes; every row
//! is held at once, so this suits grids that fit in memory (a sweep streams instead).

use super::kind::SweepExperiment;
use super::kind::SweepGrid;
use super::run::thread_pool;
use crate::error::{At, Result};
use crate::experiment::AnyExperiment;
use crate::history::source::HistorySource;
use crate::tables::manifest::SweepKind;
use crate::tables::{summary, Names};
use polars::prelude::DataFrame;
use std::path::Path;

/// The tables of an experiment run in memory.
#[derive(Debug, Clone)]
pub struct Tables {
    pub kind: SweepKind,
    /// One row per cell (or session), as in `cells.parquet` (`sessions.parquet`).
    pub rows: DataFrame,
    /// One row per group, as in `summary.parquet`.
    pub summary: DataFrame,
}

/// Runs every row of `exp` on `threads` workers (`None`: one per core) and returns its tables.
pub fn tables<E: SweepExperiment>(exp: &E, threads: Option<usize>) -> Result<Tables> {
    thread_pool(threads)?.install(|| {
        let source = HistorySource::open(exp.source(), exp.flags_file())?;
        let grid = exp.grid(source.len());
        let table = E::Grid::rows_table();
        let failure = super::external::FirstFailure::default();
        let evaluated = source.evaluate(
            0..source.len(),
            exp.cost(),
            |i, history, scratch: &mut <E::Grid as SweepGrid>::Scratch| {
                let (rows, failed) = crate::strategy::external::watch(|| {
                    let mut rows = Vec::new();
                    grid.evaluate_history(i, history, scratch, &mut rows);
                    rows
                });
                if let Some(f) = failed {
                    failure.record(i, grid.failure_message(i, &history.name, &rows, &f));
                }
                rows
            },
        )?;
        if let Some(e) = failure.error() {
            return Err(e);
        }
        let mut totals = summary::empty(&table, &grid);
        let mut scratch = totals.partials();
        let mut names = Vec::with_capacity(evaluated.len());
        let mut rows = Vec::with_capacity(grid.rows() as usize);
        for (name, part) in evaluated {
            summary::add(&mut totals, &mut scratch, &table, &grid, &part);
            names.push(name);
            rows.extend(part);
        }
        let here = Path::new("(in memory)");
        let all = Names {
            base: 0,
            names: &names,
        };
        let summary_table = E::Grid::summary_table(&table);
        Ok(Tables {
            kind: E::Grid::KIND,
            rows: table.frame(&grid, all, &rows).at(here, "build")?,
            summary: summary_table
                .frame(&grid, Names::NONE, &summary::group_rows(&totals))
                .at(here, "build")?,
        })
    })
}

/// Runs an experiment of either kind in memory and returns its tables: the entry point for a
/// notebook or another tool.
///
/// ```no_run
/// let exp = ctxlab::experiment::load_any("experiments/noise.toml".as_ref(), &[]).unwrap();
/// let tables = ctxlab::run_in_memory(&exp, None).unwrap();
/// println!("{}", tables.summary.height());
/// ```
pub fn run_in_memory(exp: &AnyExperiment, threads: Option<usize>) -> Result<Tables> {
    match exp {
        AnyExperiment::Cells(e) => tables(e, threads),
        AnyExperiment::Sessions(e) => tables(e, threads),
    }
}
