//! Evaluating one chunk of a run in parallel: its whole histories, one per task, or the
//! replicates of part of one history; and the summary totals the workers keep of the whole
//! histories they evaluate.

use super::external::FirstFailure;
use super::kind::SweepGrid;
use super::options::Progress;
use super::plan::Chunk;
use crate::error::InputError;
use crate::history::source::HistorySource;
use crate::history::CostedHistory;
use crate::stats::{HistoryPartials, Summary};
use crate::strategy::external::watch;
use crate::tables::summary;
use crate::tables::Table;
use std::sync::Mutex;

/// The costed history the chunks of a split history share, so it is costed once.
#[derive(Default)]
pub(super) struct CostedCache(Option<(usize, String, CostedHistory)>);

/// The rows of a history's pieces, and the events of each.
type Pieces<G> = (
    Vec<Vec<<G as SweepGrid>::Row>>,
    Vec<Vec<<G as SweepGrid>::Event>>,
);

/// One history of a chunk of a sweep of grid `G`.
pub(super) type Evaluated<G> = EvaluatedHistory<<G as SweepGrid>::Row, <G as SweepGrid>::Event>;

/// The rows of one evaluation and their events.
type RowsAndEvents<G> = (Vec<<G as SweepGrid>::Row>, Vec<<G as SweepGrid>::Event>);

/// One history of a chunk: its index, its name when the chunk starts it, its rows in order
/// (in pieces) and the events of each piece, and whether a worker has added it to its
/// [`WorkerTotals`].
pub(super) struct EvaluatedHistory<R, V> {
    pub(super) index: usize,
    pub(super) name: Option<String>,
    pub(super) pieces: Vec<Vec<R>>,
    pub(super) events: Vec<Vec<V>>,
    pub(super) added: bool,
}

/// Where a chunk's evaluated rows go besides back to the chunk loop.
pub(super) struct ChunkSinks<'s, 't, G: SweepGrid> {
    pub(super) progress: Option<&'s dyn Progress>,
    pub(super) totals: Option<&'s WorkerTotals<'t, G>>,
    /// Whether the cells table keeps history `i`'s rows: a history the workers have added to
    /// their totals and the table does not keep (`--cells none`, and all but every 100th with
    /// `--cells sample`) is dropped on its worker.
    pub(super) keeps: &'s (dyn Fn(usize) -> bool + Sync),
    /// The first external program's failure: once there is one, the chunk's other histories
    /// are skipped and the run stops with it.
    pub(super) failure: &'s FirstFailure,
}

/// Summary totals of the whole histories the workers evaluate, one set per worker, merged into
/// the run's summary after each chunk. Every sum in a summary is an exact integer, so the
/// merged summary is the one adding the histories in order gives, whichever worker took which
/// history; gathering on the workers keeps the summary off the one thread that also hands the
/// rows to the writer.
pub(super) struct WorkerTotals<'a, G: SweepGrid> {
    table: &'a Table<G, G::Row>,
    empty: Summary,
    slots: Vec<Mutex<Option<(HistoryPartials, Summary)>>>,
}

impl<'a, G: SweepGrid> WorkerTotals<'a, G> {
    pub(super) fn new(table: &'a Table<G, G::Row>, grid: &G) -> Self {
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
    pub(super) fn merge_into(&self, summary: &mut Summary) {
        for slot in &self.slots {
            if let Some((_, totals)) = slot.lock().expect("a worker's totals").take() {
                summary.merge(&totals);
            }
        }
    }
}

/// Evaluates a chunk in parallel: its histories, one per task, or (a chunk of part of one
/// history) runs of its replicates, one run per task, in order whatever the thread count.
pub(super) fn evaluate_chunk<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
    chunk: &Chunk,
    cache: &mut CostedCache,
    sinks: &ChunkSinks<'_, '_, G>,
) -> Result<Vec<Evaluated<G>>, InputError> {
    if chunk.replicates == (0..grid.replicates()) {
        evaluate_histories(grid, source, cost, chunk, sinks)
    } else {
        Ok(vec![evaluate_replicates(
            grid, source, cost, chunk, cache, sinks,
        )?])
    }
}

/// A chunk of whole histories, one per task. Its own step because only whole histories are
/// added to the workers' totals and dropped on their worker when no table keeps them.
fn evaluate_histories<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
    chunk: &Chunk,
    sinks: &ChunkSinks<'_, '_, G>,
) -> Result<Vec<Evaluated<G>>, InputError> {
    let totals = sinks.totals;
    // Histories are costed (or generated) chunk by chunk: only the chunk's are in memory.
    let evaluated = source.evaluate(
        chunk.histories.clone(),
        cost,
        |i, costed, scratch: &mut G::Scratch| {
            let evaluated = watched(grid, i, &costed.name, sinks, scratch, |scratch| {
                let mut rows = Vec::with_capacity(grid.rows_per_history());
                grid.evaluate_history(i, costed, scratch, &mut rows);
                rows
            });
            let Some((rows, events)) = evaluated else {
                return (Vec::new(), Vec::new());
            };
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
    Ok(chunk
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
        .collect())
}

/// A chunk of part of one history: runs of its replicates, one run per task. Its own step
/// because the history is costed once for all the chunks it spans (kept in `cache`).
fn evaluate_replicates<G: SweepGrid>(
    grid: &G,
    source: &HistorySource,
    cost: crate::cost::CostModel,
    chunk: &Chunk,
    cache: &mut CostedCache,
    sinks: &ChunkSinks<'_, '_, G>,
) -> Result<Evaluated<G>, InputError> {
    use rayon::prelude::*;
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
            let end = start.saturating_add(step).min(chunk.replicates.end);
            watched(grid, i, &history.name, sinks, scratch, |scratch| {
                let mut out = Vec::with_capacity((end - start) as usize * per_replicate);
                grid.evaluate_replicates(i, &history, start..end, scratch, &mut out);
                out
            })
            .unwrap_or_default()
        })
        .unzip();
    let first = chunk.starts_history.then(|| name.clone());
    if !chunk.ends_history {
        cache.0 = Some((i, name, history));
    }
    Ok(EvaluatedHistory {
        index: i,
        name: first,
        pieces,
        events,
        added: false,
    })
}

/// One evaluation on a worker of history `i` (`name`), watched for an external program's
/// failure: its rows and their events, progress told; `None` once the chunk has a failure
/// (this one, recorded, or an earlier one, when nothing is evaluated).
fn watched<G: SweepGrid>(
    grid: &G,
    i: usize,
    name: &str,
    sinks: &ChunkSinks<'_, '_, G>,
    scratch: &mut G::Scratch,
    evaluate: impl FnOnce(&mut G::Scratch) -> Vec<G::Row>,
) -> Option<RowsAndEvents<G>> {
    if sinks.failure.happened() {
        return None;
    }
    let (rows, failed) = watch(|| evaluate(scratch));
    if let Some(f) = failed {
        sinks
            .failure
            .record(i, grid.failure_message(i, name, &rows, &f));
        return None;
    }
    let mut events = Vec::new();
    G::take_events(scratch, &mut events);
    if let Some(p) = sinks.progress {
        p.advance(rows.len() as u64);
    }
    Some((rows, events))
}
