//! The chunk loop of a run: each chunk evaluated in parallel, its rows handed to the encoder
//! thread of each table, its groups added into the running summary, and a checkpoint written
//! where a history ends, at most every few seconds ([`CHECKPOINT_SECONDS`]).

use super::checkpoint::{Checkpoint, CHECKPOINT};
use super::evaluate::{
    evaluate_chunk, ChunkSinks, CostedCache, Evaluated, EvaluatedHistory, WorkerTotals,
};
use super::external::FirstFailure;
use super::fault::{self, Fault};
use super::json_file::write_json;
use super::kind::{SweepExperiment, SweepGrid};
use super::options::RunOptions;
use super::plan::Chunk;
use super::prepare::{RunHistories, RunLayout};
use super::rows_writer::RowsWriter;
use crate::error::Result;
use crate::stats::HistoryPartials;
use crate::tables::manifest::SweepKind;
use crate::tables::summary;
use std::path::Path;
use std::thread::Scope;
use std::time::{Duration, Instant};

/// The tables a run staged: the rows table's files, the events table's and the rows those
/// hold.
pub(super) struct StagedTables {
    pub(super) rows: Vec<String>,
    pub(super) events: Vec<String>,
    pub(super) events_written: u64,
}

/// What the chunk loop reads: the run's settings and layout, its histories and where it
/// stages.
pub(super) struct ChunkLoop<'a, E: SweepExperiment> {
    pub(super) exp: &'a E,
    pub(super) opts: &'a RunOptions<'a>,
    pub(super) layout: &'a RunLayout<E::Grid>,
    pub(super) histories: &'a RunHistories,
    pub(super) staging: &'a Path,
}

/// The writers of the rows table and of the events table beside it (for the same histories),
/// each encoding on a thread of its own; `None` for a table not written.
struct Writers<'scope, G: SweepGrid> {
    rows: Option<RowsWriter<'scope, G>>,
    events: Option<RowsWriter<'scope, G, G::Event>>,
}

impl<'a, E: SweepExperiment> ChunkLoop<'a, E> {
    /// Runs every chunk from the checkpoint's on and stages the tables; `checkpoint` ends
    /// with the whole run's summary.
    pub(super) fn stage(&self, checkpoint: &mut Checkpoint) -> Result<StagedTables> {
        let (layout, opts) = (self.layout, self.opts);
        let unit = match E::Grid::KIND {
            SweepKind::Cells => "cells",
            SweepKind::Sessions => "sessions",
        };
        opts.progress.start(layout.shard_rows, unit);
        opts.progress
            .advance(layout.plan.rows_before(checkpoint.chunks_done));
        // The rows tables are encoded on a thread of their own, within this scope.
        std::thread::scope(|scope| {
            let mut writers = self.writers(scope)?;
            self.run_chunks(checkpoint, &mut writers)?;
            opts.progress.finish();
            // The tables are written but their Parquet footer is not: "in the middle of
            // assembly".
            fault::point(opts.fault.as_ref(), Fault::Assembly);
            let rows = match writers.rows {
                Some(w) => w.finish(layout.expected_rows)?,
                None => Vec::new(),
            };
            let (events, events_written) = match writers.events {
                Some(w) => {
                    let written = w.written();
                    (w.finish(written)?, written)
                }
                None => (Vec::new(), 0),
            };
            Ok(StagedTables {
                rows,
                events,
                events_written,
            })
        })
    }

    /// Starts the encoder threads of the tables the run writes.
    fn writers<'scope>(
        &self,
        scope: &'scope Scope<'scope, 'a>,
    ) -> Result<Writers<'scope, E::Grid>> {
        let layout = self.layout;
        let start = self.histories.range.start;
        let rows = match layout.wanted {
            true => Some(RowsWriter::create(
                scope,
                self.staging,
                &layout.grid,
                &layout.rows_table,
                layout.rows_formats,
                start,
            )?),
            false => None,
        };
        let events = match (&layout.events_table, layout.wanted) {
            (Some(table), true) => Some(RowsWriter::create(
                scope,
                self.staging,
                &layout.grid,
                table,
                layout.rows_formats,
                start,
            )?),
            _ => None,
        };
        Ok(Writers { rows, events })
    }

    /// Evaluates every chunk in order, hands its rows to the writers, and checkpoints.
    fn run_chunks(
        &self,
        checkpoint: &mut Checkpoint,
        writers: &mut Writers<E::Grid>,
    ) -> Result<()> {
        let (layout, opts) = (self.layout, self.opts);
        let resumed_chunks = checkpoint.chunks_done;
        let mut partials = checkpoint.summary.partials();
        let worker_totals = WorkerTotals::new(&layout.rows_table, &layout.grid);
        let mut costed = CostedCache::default();
        let mut ran = 0;
        let mut saving = Saving::new(opts.fault);
        for k in 0..checkpoint.key.chunks_total {
            // A resumed run has the summary of its finished chunks, but the tables are rewritten
            // from the start: their rows are evaluated again (when there are tables to write).
            let finished = k < resumed_chunks;
            if finished && writers.rows.is_none() {
                continue;
            }
            let chunk = layout.plan.chunk(k);
            let progress = (!finished).then_some(opts.progress);
            // The workers add each whole history they evaluate into totals of their own,
            // merged into the summary here once the chunk is done.
            let totals = (!finished).then_some(&worker_totals);
            let keeps = |i: usize| layout.wanted && opts.cells.keeps(i);
            let failure = FirstFailure::default();
            let sinks = ChunkSinks {
                progress,
                totals,
                keeps: &keeps,
                failure: &failure,
            };
            let evaluated = evaluate_chunk(
                &layout.grid,
                &self.histories.source,
                self.exp.cost(),
                &chunk,
                &mut costed,
                &sinks,
            )?;
            if let Some(e) = failure.error() {
                // An external program failed: nothing of this chunk is kept.
                return Err(e);
            }
            if let Some(totals) = totals {
                totals.merge_into(&mut checkpoint.summary);
            }
            let gather = (!finished).then_some(&mut partials);
            self.take_rows(evaluated, &chunk, checkpoint, gather, writers)?;
            if finished {
                continue;
            }
            // A checkpoint only where a history ends: the summary of part of a history is
            // not saved, so a resumed run starts that history again.
            let last = k + 1 == checkpoint.key.chunks_total;
            if chunk.ends_history && saving.due(last) {
                checkpoint.chunks_done = k + 1;
                write_json(&self.staging.join(CHECKPOINT), &*checkpoint)?;
                saving.saved();
            }
            ran += 1;
            if opts.fault == Some(Fault::AfterChunks(ran)) {
                std::process::abort();
            }
        }
        Ok(())
    }

    /// Takes a chunk's evaluated histories in order: the rows no worker added go into the
    /// summary (when `partials` is given: the chunk was not finished before a resume), and
    /// every row goes to the writers.
    fn take_rows(
        &self,
        evaluated: Vec<Evaluated<E::Grid>>,
        chunk: &Chunk,
        checkpoint: &mut Checkpoint,
        mut partials: Option<&mut HistoryPartials>,
        writers: &mut Writers<E::Grid>,
    ) -> Result<()> {
        let (layout, cells) = (self.layout, self.opts.cells);
        for EvaluatedHistory {
            index,
            name,
            pieces,
            events,
            added,
        } in evaluated
        {
            if let (Some(partials), false) = (partials.as_deref_mut(), added) {
                for rows in &pieces {
                    summary::gather(
                        &checkpoint.summary,
                        partials,
                        &layout.rows_table,
                        &layout.grid,
                        rows,
                    );
                }
                if chunk.ends_history {
                    summary::close(&mut checkpoint.summary, partials);
                }
            }
            if let Some(w) = writers.events.as_mut() {
                let mut name = name.clone();
                for rows in &events {
                    w.push(name.take(), rows, cells.keeps(index))?;
                }
            }
            if let Some(w) = writers.rows.as_mut() {
                let mut name = name;
                for rows in &pieces {
                    w.push(name.take(), rows, cells.keeps(index))?;
                }
            }
        }
        Ok(())
    }
}

/// Wall time between two checkpoints of a run. A checkpoint carries the whole summary (3.4 MB
/// of JSON for `experiments/noise.toml`'s grid), so writing one after every chunk cost about a
/// fifth of the run's CPU time; a run killed between two checkpoints evaluates again at most
/// this much work when it is resumed (the rows are a pure function of the experiment, so the
/// finished tables are the same either way).
pub const CHECKPOINT_SECONDS: u64 = 5;

/// When the next checkpoint is due: [`CHECKPOINT_SECONDS`] after the last one, after the last
/// chunk (so a run killed while publishing resumes with every chunk done), and after every
/// chunk while a `chunks:K` fault is set (the tests name the chunk a killed run stopped after).
struct Saving {
    last: Instant,
    every_chunk: bool,
}

impl Saving {
    fn new(fault: Option<Fault>) -> Saving {
        Saving {
            last: Instant::now(),
            every_chunk: matches!(fault, Some(Fault::AfterChunks(_))),
        }
    }

    fn due(&self, last_chunk: bool) -> bool {
        last_chunk
            || self.every_chunk
            || self.last.elapsed() >= Duration::from_secs(CHECKPOINT_SECONDS)
    }

    fn saved(&mut self) {
        self.last = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_is_due_after_the_interval_the_last_chunk_or_every_chunk_under_a_fault() {
        let fresh = Saving::new(None);
        assert!(!fresh.due(false), "not 5 s after the start");
        assert!(fresh.due(true), "the last chunk is always saved");
        let stale = Saving {
            last: Instant::now() - Duration::from_secs(CHECKPOINT_SECONDS),
            every_chunk: false,
        };
        assert!(stale.due(false));
        assert!(Saving::new(Some(Fault::AfterChunks(2))).due(false));
        assert!(!Saving::new(Some(Fault::Publish)).due(false));
    }
}
