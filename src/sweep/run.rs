//! Running a sweep of either kind: histories in, tables and a manifest out.
//!
//! Histories are evaluated in parallel in chunks of bounded size. After each chunk its rows go
//! to a part file, its groups into the running summary, and a checkpoint records the progress,
//! so memory stays bounded by the chunk and a killed run can `--resume` where it stopped. At
//! the end the tables are written from the parts, their row counts checked against the grid,
//! the report stage (charts, report) runs on the staged tables, and only then is everything
//! published, the manifest last; the parts stay until the manifest is in place. The output is
//! the same whatever the thread count, the chunking, the sharding or an interruption.

use super::checkpoint::{check_staging, prepare_staging, RunKey, CHECKPOINT};
use super::estimate::{Estimate, EstimateInput};
use super::external::FirstFailure;
use super::fault::{self, Fault};
use super::folder::Folder;
use super::json_file::write_json;
use super::plan::{Chunk, Plan};
use super::rows_writer::RowsWriter;
use crate::error::{Error, Result};
use crate::formats::TableFormat;
use crate::history::source::HistorySource;
use crate::history::CostedHistory;
use crate::refuse;
use crate::stats::{HistoryPartials, Summary};
use crate::strategy::external::{program_files, watch};
use crate::tables::manifest::{SweepKind, MANIFEST};
use crate::tables::summary;
use crate::tables::Table;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use super::checkpoint::ShardState;
pub(crate) use super::finish::Finish;
pub use super::kind::{SweepExperiment, SweepGrid};
pub use super::options::{CellsOutput, Progress, RunOptions, Silent, Stage, DEFAULT_CHUNK_CELLS};

#[derive(Debug, Clone)]
pub struct RunReport {
    pub kind: SweepKind,
    pub dir: PathBuf,
    /// Rows (cells or sessions) this run computed.
    pub rows: u64,
    pub histories: usize,
    pub wall: Duration,
    pub files: Vec<PathBuf>,
    /// Chunks taken over from an interrupted run.
    pub resumed_chunks: usize,
    /// The figures worked out before the run.
    pub estimate: Estimate,
    /// The flagger's confusion matrix, when the histories carry flags of their own.
    pub flagger: Option<crate::flags::Confusion>,
    /// The history or transcript files left out whole (`--skip-bad`).
    pub left_out: Vec<crate::history::batch::LeftOut>,
}

/// Runs the sweep (or one shard of it) and publishes its tables into the experiment's folder.
pub fn run<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    thread_pool(opts.threads)?.install(|| run_in_pool(exp, opts))
}

/// Refuses, before the folder is touched, a sweep whose cells overflow `u64` or exceed
/// `--max-cells` (the axes themselves were bounded when the experiment was read).
fn check_size<G: SweepGrid>(grid: &G, histories: usize, max_cells: u64) -> Result<()> {
    let per_history = grid.rows_per_history() as u64;
    match (histories as u64).checked_mul(per_history) {
        Some(rows) if rows <= max_cells => Ok(()),
        rows => refuse!(
            "the sweep has {} cells ({histories} histories × {per_history} per history), more than --max-cells {max_cells}; pass a larger --max-cells to run it anyway, or shrink the axes",
            rows.map_or("more than 2^64 − 1".to_string(), |r| r.to_string())
        ),
    }
}

/// A pool of `threads` workers (`None`: one per core).
pub(crate) fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    match threads {
        Some(0) => refuse!("--threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build(),
        None => rayon::ThreadPoolBuilder::new().build(),
    }
    .map_err(|e| Error::Refused(format!("cannot start worker threads: {e}")))
}

fn run_in_pool<E: SweepExperiment>(exp: &E, opts: &RunOptions) -> Result<RunReport> {
    let started = Instant::now();
    let (source, left_out) =
        HistorySource::open_batch(exp.source(), exp.flags_file(), opts.bad_files)?;
    exp.check_histories(&source.recorded())?;
    let flagger = crate::flags::Confusion::of_source(&source);
    let total = source.len();
    let range = match opts.shard {
        Some(s) => s.histories(total),
        None => 0..total,
    };
    let grid = exp.grid(total);
    check_size(&grid, total, opts.max_cells)?;
    // The programs of external strategies, hashed before the first cell: a resumed run must
    // run the same ones, and they must not change while it runs.
    let programs = program_files(grid.strategy_list())?;
    let rows_table = E::Grid::rows_table();
    let events_table = E::Grid::events_table();
    let formats = exp.formats();
    let rows_formats = exp.rows_formats();
    let per_replicate = grid.rows_per_history() / (grid.replicates().max(1) as usize);
    let plan = Plan::new(
        range.clone(),
        grid.replicates(),
        per_replicate,
        opts.chunk_cells,
    );
    let shard_rows = (range.len() * grid.rows_per_history()) as u64;
    let expected_rows = (range.clone()).filter(|&i| opts.cells.keeps(i)).count() as u64
        * grid.rows_per_history() as u64;
    let wanted = opts.cells != CellsOutput::None && !rows_formats.is_empty();
    let estimate = Estimate::new(EstimateInput {
        grid: &grid,
        table: &rows_table,
        plan: &plan,
        source: &source,
        histories: range.len(),
        rows: shard_rows,
        table_rows: if wanted { expected_rows } else { 0 },
        formats,
        rows_formats,
        threads: rayon::current_num_threads(),
        charts: opts.stage.is_some() && opts.shard.is_none() && formats.has(TableFormat::Parquet),
    });
    let checked = estimate.check(&opts.limits, exp.output_dir());
    opts.progress.estimate(
        &estimate,
        checked.as_ref().map_or(&[][..], |n| n.as_slice()),
    );
    checked?;
    let key = RunKey {
        kind: E::Grid::KIND,
        config_hash: exp.config_hash(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        chunk_cells: opts.chunk_cells,
        cells: opts.cells,
        formats: rows_formats,
        shard: opts.shard.map(|s| (s.index, s.count)),
        histories: total,
        chunks_total: plan.chunks(),
        programs: programs.clone(),
    };
    let shard_index = opts.shard.map(|s| s.index);
    if opts.dry_run {
        // Everything the run checks before its first cell, reading only: the folder (ours, not
        // in use, no link for its lock), its staging folder and what resuming would need.
        let dir = exp.output_dir();
        Folder::check(dir, shard_index, opts.force)?;
        let empty = summary::empty(&rows_table, &grid);
        check_staging(
            &super::folder::staging_path(dir, shard_index),
            &key,
            &empty,
            opts.resume,
        )?;
        check_llm_answers(exp, &grid, &source)?;
        return Ok(RunReport {
            kind: E::Grid::KIND,
            dir: exp.output_dir().to_path_buf(),
            rows: 0,
            histories: range.len(),
            wall: started.elapsed(),
            files: Vec::new(),
            resumed_chunks: 0,
            estimate,
            flagger,
            left_out,
        });
    }
    let folder = Folder::open(exp.output_dir(), shard_index, opts.force)?;
    let staging = folder.staging();
    let empty = summary::empty(&rows_table, &grid);
    let mut checkpoint = prepare_staging(&staging, key, empty, opts.resume)?;
    let chunks_total = checkpoint.key.chunks_total;
    let resumed_chunks = checkpoint.chunks_done;

    let unit = match E::Grid::KIND {
        SweepKind::Cells => "cells",
        SweepKind::Sessions => "sessions",
    };
    opts.progress.start(shard_rows, unit);
    opts.progress.advance(plan.rows_before(resumed_chunks));
    // The rows tables are encoded on a thread of their own, within this scope.
    let (mut staged, events, fault) = std::thread::scope(
        |scope| -> Result<(Vec<String>, StagedEvents, Option<&Fault>)> {
            let mut writer = match wanted {
                true => Some(RowsWriter::create(
                    scope,
                    &staging,
                    &grid,
                    &rows_table,
                    rows_formats,
                    range.start,
                )?),
                false => None,
            };
            // The events table (a session sweep's compactions) is written beside the rows
            // table, for the same histories.
            let mut events_writer = match (&events_table, wanted) {
                (Some(table), true) => Some(RowsWriter::create(
                    scope,
                    &staging,
                    &grid,
                    table,
                    rows_formats,
                    range.start,
                )?),
                _ => None,
            };
            let mut partials = checkpoint.summary.partials();
            let worker_totals = WorkerTotals::new(&rows_table, &grid);
            let mut costed = CostedCache::default();
            let mut ran = 0;
            for k in 0..chunks_total {
                // A resumed run has the summary of its finished chunks, but the tables are rewritten
                // from the start: their rows are evaluated again (when there are tables to write).
                let finished = k < resumed_chunks;
                if finished && writer.is_none() {
                    continue;
                }
                let chunk = plan.chunk(k);
                let progress = (!finished).then_some(opts.progress);
                // The workers add each whole history they evaluate into totals of their own,
                // merged into the summary here once the chunk is done.
                let totals = (!finished).then_some(&worker_totals);
                let keeps = |i: usize| wanted && opts.cells.keeps(i);
                let failure = FirstFailure::default();
                let sinks = ChunkSinks {
                    progress,
                    totals,
                    keeps: &keeps,
                    failure: &failure,
                };
                let evaluated =
                    evaluate_chunk(&grid, &source, exp.cost(), &chunk, &mut costed, &sinks)?;
                if let Some(e) = failure.error() {
                    // An external program failed: nothing of this chunk is kept.
                    return Err(e);
                }
                if let Some(totals) = totals {
                    totals.merge_into(&mut checkpoint.summary);
                }
                for EvaluatedHistory {
                    index,
                    name,
                    pieces,
                    events,
                    added,
                } in evaluated
                {
                    if !finished && !added {
                        for rows in &pieces {
                            summary::gather(
                                &checkpoint.summary,
                                &mut partials,
                                &rows_table,
                                &grid,
                                rows,
                            );
                        }
                        if chunk.ends_history {
                            summary::close(&mut checkpoint.summary, &mut partials);
                        }
                    }
                    if let Some(w) = events_writer.as_mut() {
                        let mut name = name.clone();
                        for rows in &events {
                            w.push(name.take(), rows, opts.cells.keeps(index))?;
                        }
                    }
                    if let Some(w) = writer.as_mut() {
                        let mut name = name;
                        for rows in &pieces {
                            w.push(name.take(), rows, opts.cells.keeps(index))?;
                        }
                    }
                }
                if finished {
                    continue;
                }
                // A checkpoint only where a history ends: the summary of part of a history is
                // not saved, so a resumed run starts that history again.
                if chunk.ends_history {
                    checkpoint.chunks_done = k + 1;
                    write_json(&staging.join(CHECKPOINT), &checkpoint)?;
                }
                ran += 1;
                if opts.fault == Some(Fault::AfterChunks(ran)) {
                    std::process::abort();
                }
            }
            opts.progress.finish();

            let fault = opts.fault.as_ref();
            // The tables are written but their Parquet footer is not: "in the middle of assembly".
            fault::point(fault, Fault::Assembly);
            let staged = match writer {
                Some(w) => w.finish(expected_rows)?,
                None => Vec::new(),
            };
            let events = match events_writer {
                Some(w) => {
                    let written = w.written();
                    (w.finish(written)?, written)
                }
                None => (Vec::new(), 0),
            };
            Ok((staged, events, fault))
        },
    )?;
    let (staged_events, events_written) = events;
    if opts.shard.is_none() {
        // Listed in the manifest and read by the report stage like the rows table.
        staged.extend(staged_events.iter().cloned());
    }
    if program_files(grid.strategy_list())? != programs {
        refuse!(
            "an external strategy's program file changed while the run was going: its rows mix two versions; nothing was published, run again"
        );
    }
    // Summaries a model must still write: the rows rest on stand-ins, so nothing is published.
    let missing = crate::summariser::Missing::of(grid.strategy_list());
    if !missing.is_empty() {
        // Not resumable either: the checkpoint's figures rest on the stand-ins.
        let _ = super::folder::remove_staging(&staging, None);
        return Err(crate::error::InputError::Invalid(missing.error(exp.origin())).into());
    }
    let wall = started.elapsed();
    let summary = checkpoint.summary;
    let stem = rows_table.stem;
    let files = match opts.shard {
        None => {
            Finish {
                staging: &staging,
                grid: &grid,
                rows_table: &rows_table,
                formats,
                stage: opts.stage,
                fault,
                flagger: flagger.clone(),
                left_out: left_out.clone(),
                programs: &programs,
            }
            .summary_and_manifest(exp, &summary, wall, None, &mut staged, &[])?;
            let places: Vec<(String, String)> =
                staged.iter().map(|f| (f.clone(), f.clone())).collect();
            folder.publish(&staging, &places, (MANIFEST, MANIFEST), &[], &[], fault)?
        }
        Some(s) => {
            let part = format!("shard={}", s.index);
            // Shards publish their rows as a hive-partitioned dataset, one part per shard.
            let place = |stem: &str, f: &String| {
                let format = TableFormat::of_file(f).expect("a rows table is in a format");
                (f.clone(), format.shard_place(stem, &part))
            };
            let mut places: Vec<(String, String)> = staged.iter().map(|f| place(stem, f)).collect();
            if let Some(t) = &events_table {
                places.extend(staged_events.iter().map(|f| place(t.stem, f)));
            }
            let state_path = format!("shards/{part}.json");
            let previous: Vec<String> = std::fs::read_to_string(folder.dir.join(&state_path))
                .ok()
                .and_then(|t| serde_json::from_str::<ShardState>(&t).ok())
                .map(|s| s.files)
                .unwrap_or_default();
            let config_hash = exp.config_hash();
            let checksums = places
                .iter()
                .map(|(from, to)| {
                    let sum = super::verify::checksum(
                        &staging.join(from),
                        &config_hash,
                        (s.index, s.count),
                    )?;
                    Ok((to.clone(), sum))
                })
                .collect::<Result<Vec<_>>>()?;
            let state = ShardState {
                kind: E::Grid::KIND,
                config_hash,
                shard: (s.index, s.count),
                histories: (range.start, range.end),
                rows: shard_rows,
                rows_written: if staged.is_empty() { 0 } else { expected_rows },
                events_written,
                wall_seconds: wall.as_secs_f64(),
                config: exp.resolved_json(),
                summary,
                files: places.iter().map(|(_, to)| to.clone()).collect(),
                checksums,
                flagger: flagger.clone(),
                left_out: left_out.clone(),
                programs: programs.clone(),
            };
            write_json(&staging.join("state.json"), &state)?;
            folder.publish(
                &staging,
                &places,
                ("state.json", &state_path),
                &[],
                &previous,
                fault,
            )?
        }
    };
    Ok(RunReport {
        kind: E::Grid::KIND,
        dir: folder.dir.clone(),
        rows: shard_rows,
        histories: range.len(),
        wall,
        files,
        resumed_chunks,
        estimate,
        flagger,
        left_out,
    })
}

/// The costed history the chunks of a split history share, so it is costed once.
#[derive(Default)]
struct CostedCache(Option<(usize, String, CostedHistory)>);

/// The staged files of the events table and the rows they hold.
type StagedEvents = (Vec<String>, u64);

/// The rows of a history's pieces, and the events of each.
type Pieces<G> = (
    Vec<Vec<<G as SweepGrid>::Row>>,
    Vec<Vec<<G as SweepGrid>::Event>>,
);

/// One history of a chunk: its index, its name when the chunk starts it, its rows in order
/// (in pieces) and the events of each piece, and whether a worker has added it to its
/// [`WorkerTotals`].
struct EvaluatedHistory<R, V> {
    index: usize,
    name: Option<String>,
    pieces: Vec<Vec<R>>,
    events: Vec<Vec<V>>,
    added: bool,
}

/// Where a chunk's evaluated rows go besides back to the chunk loop.
struct ChunkSinks<'s, 't, G: SweepGrid> {
    progress: Option<&'s dyn Progress>,
    totals: Option<&'s WorkerTotals<'t, G>>,
    /// Whether the cells table keeps history `i`'s rows: a history the workers have added to
    /// their totals and the table does not keep (`--cells none`, and all but every 100th with
    /// `--cells sample`) is dropped on its worker.
    keeps: &'s (dyn Fn(usize) -> bool + Sync),
    /// The first external program's failure: once there is one, the chunk's other histories
    /// are skipped and the run stops with it.
    failure: &'s FirstFailure,
}

/// Summary totals of the whole histories the workers evaluate, one set per worker, merged into
/// the run's summary after each chunk. Every sum in a summary is an exact integer, so the
/// merged summary is the one adding the histories in order gives, whichever worker took which
/// history; gathering on the workers keeps the summary off the one thread that also hands the
/// rows to the writer.
struct WorkerTotals<'a, G: SweepGrid> {
    table: &'a Table<G, G::Row>,
    empty: Summary,
    slots: Vec<Mutex<Option<(HistoryPartials, Summary)>>>,
}

impl<'a, G: SweepGrid> WorkerTotals<'a, G> {
    fn new(table: &'a Table<G, G::Row>, grid: &G) -> Self {
        let empty = summary::empty(table, grid);
        WorkerTotals {
            table,
            empty,
            slots: (0..rayon::current_num_threads().max(1))
                .map(|_| Mutex::new(None))
                .collect(),
        }
    }

    /// Adds one whole history's rows to the calling worker's totals.
    fn add(&self, grid: &G, rows: &[G::Row]) {
        let slot = rayon::current_thread_index().unwrap_or(0) % self.slots.len();
        let mut slot = self.slots[slot].lock().expect("a worker's totals");
        let (partials, totals) =
            slot.get_or_insert_with(|| (self.empty.partials(), self.empty.clone()));
        summary::add(totals, partials, self.table, grid, rows);
    }

    /// Merges every worker's totals into `summary` and empties them.
    fn merge_into(&self, summary: &mut Summary) {
        for slot in &self.slots {
            if let Some((_, totals)) = slot.lock().expect("a worker's totals").take() {
                summary.merge(&totals);
            }
        }
    }
}

/// Evaluates a chunk in parallel: its histories, one per task, or (a chunk of part of one
/// history) runs of its replicates, one run per task, in order whatever the thread count.
fn evaluate_chunk<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
    chunk: &Chunk,
    cache: &mut CostedCache,
    sinks: &ChunkSinks<'_, '_, G>,
) -> Result<Vec<EvaluatedHistory<G::Row, G::Event>>> {
    use rayon::prelude::*;
    let (progress, totals) = (sinks.progress, sinks.totals);
    if chunk.replicates == (0..grid.replicates()) {
        // Histories are costed (or generated) chunk by chunk: only the chunk's are in memory.
        let evaluated = source.evaluate(
            chunk.histories.clone(),
            cost,
            |i, costed, scratch: &mut G::Scratch| {
                if sinks.failure.happened() {
                    return (Vec::new(), Vec::new());
                }
                let (rows, failed) = watch(|| {
                    let mut rows = Vec::with_capacity(grid.rows_per_history());
                    grid.evaluate_history(i, costed, scratch, &mut rows);
                    rows
                });
                if let Some(f) = failed {
                    let message = grid.failure_message(i, &costed.name, &rows, &f);
                    sinks.failure.record(i, message);
                    return (Vec::new(), Vec::new());
                }
                let mut events = Vec::new();
                G::take_events(scratch, &mut events);
                if let Some(p) = progress {
                    p.advance(rows.len() as u64);
                }
                if let Some(totals) = totals {
                    totals.add(grid, &rows);
                    if !(sinks.keeps)(i) {
                        // Added, and no table keeps them: dropped here, so a chunk's rows are
                        // never all in memory for nothing.
                        return (Vec::new(), Vec::new());
                    }
                }
                (rows, events)
            },
        )?;
        return Ok(chunk
            .histories
            .clone()
            .zip(evaluated)
            .map(|(index, (name, (rows, events)))| EvaluatedHistory {
                index,
                name: Some(name),
                pieces: vec![rows],
                events: vec![events],
                added: totals.is_some(),
            })
            .collect());
    }
    let i = chunk.histories.start;
    let (name, history) = match cache.0.take() {
        Some((at, name, history)) if at == i => (name, history),
        _ => source.costed(i, cost)?,
    };
    let per_replicate = grid.rows_per_history() / grid.replicates().max(1) as usize;
    // A few runs per worker, so the workers stay busy to the end of the chunk.
    let runs = (rayon::current_num_threads() * 4).max(1) as u32;
    let step = chunk.replicates.len().div_ceil(runs as usize).max(1) as u32;
    let starts: Vec<u32> = chunk.replicates.clone().step_by(step as usize).collect();
    let (pieces, events): Pieces<G> = starts
        .into_par_iter()
        .map_init(G::Scratch::default, |scratch, start| {
            if sinks.failure.happened() {
                return (Vec::new(), Vec::new());
            }
            let end = start.saturating_add(step).min(chunk.replicates.end);
            let (out, failed) = watch(|| {
                let mut out = Vec::with_capacity((end - start) as usize * per_replicate);
                grid.evaluate_replicates(i, &history, start..end, scratch, &mut out);
                out
            });
            if let Some(f) = failed {
                let message = grid.failure_message(i, &history.name, &out, &f);
                sinks.failure.record(i, message);
                return (Vec::new(), Vec::new());
            }
            let mut events = Vec::new();
            G::take_events(scratch, &mut events);
            if let Some(p) = progress {
                p.advance(out.len() as u64);
            }
            (out, events)
        })
        .unzip();
    let first = chunk.starts_history.then(|| name.clone());
    if !chunk.ends_history {
        cache.0 = Some((i, name, history));
    }
    Ok(vec![EvaluatedHistory {
        index: i,
        name: first,
        pieces,
        events,
        added: false,
    }])
}

/// What the `llm` summarisers of an experiment still need: every history evaluated, nothing
/// written (`ctxlab summaries export`).
pub fn missing_summaries<E: SweepExperiment>(
    exp: &E,
    threads: Option<usize>,
) -> Result<crate::summariser::Missing> {
    thread_pool(threads)?.install(|| {
        let source = HistorySource::open(exp.source(), exp.flags_file())?;
        exp.check_histories(&source.recorded())?;
        let grid = exp.grid(source.len());
        needed_summaries(&grid, &source, exp.cost())
    })
}

/// Every history evaluated, nothing kept: what the `llm` summarisers of `grid` still need
/// (an external strategy that fails stops it, as it stops a run).
fn needed_summaries<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
) -> Result<crate::summariser::Missing> {
    let failure = FirstFailure::default();
    source.evaluate(
        0..source.len(),
        cost,
        |i, costed, scratch: &mut G::Scratch| {
            let (rows, failed) = watch(|| {
                let mut rows = Vec::new();
                grid.evaluate_history(i, costed, scratch, &mut rows);
                rows
            });
            if let Some(f) = failed {
                failure.record(i, grid.failure_message(i, &costed.name, &rows, &f));
            }
        },
    )?;
    if let Some(e) = failure.error() {
        return Err(e);
    }
    Ok(crate::summariser::Missing::of(grid.strategy_list()))
}

/// What a dry run checks of the `llm` summarisers: the answers the run would read from their
/// caches are all there (the run would stop for the first one missing). Every history is
/// evaluated to find them, nothing is written. A summariser with an endpoint (`url=`) asks for
/// what its cache lacks as the run goes, so a grid with one is not checked (its evaluation
/// would ask).
fn check_llm_answers<E: SweepExperiment>(
    exp: &E,
    grid: &E::Grid,
    source: &HistorySource,
) -> Result<()> {
    use crate::summariser::Summariser;
    // Per `llm` summariser: whether it has an endpoint.
    let asking: Vec<bool> = grid
        .strategy_list()
        .iter()
        .filter_map(|s| match s.summariser() {
            Some(Summariser::Llm(l)) => Some(l.url.is_some()),
            _ => None,
        })
        .collect();
    if asking.is_empty() || asking.contains(&true) {
        return Ok(());
    }
    let missing = needed_summaries(grid, source, exp.cost())?;
    if missing.is_empty() {
        return Ok(());
    }
    Err(crate::error::InputError::Invalid(missing.error(exp.origin())).into())
}
