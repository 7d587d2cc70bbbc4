//! Writing a run's rows table (cells or sessions) into the staging folder as the chunks come,
//! in Parquet row groups of a fixed size (so the bytes do not depend on the chunking) and as
//! CSV, at the writers' speed: each row is encoded once, column by column, and never read back.
//! The encoding runs on a thread of its own, so it overlaps with the evaluation of the next
//! chunk.
//!
//! The files are staged, not published: a run killed half way leaves a Parquet file without
//! its footer in the staging folder, and `--resume` rewrites the tables from the start (the
//! finished chunks' rows are evaluated again — they are a pure function of the experiment —
//! while their summary comes from the checkpoint).

use super::kind::SweepGrid;
use crate::error::refuse;
use crate::error::Result;
use crate::formats::{Formats, TableWriter};
use crate::tables::{Names, Table};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::{Scope, ScopedJoinHandle};

/// Rows per Parquet row group of a rows table, whatever the chunking.
pub const ROW_GROUP: usize = 1 << 16;

/// Rows on their way to the encoding thread, with the names of the histories they come from
/// (from index `base` on).
struct Batch<R> {
    base: usize,
    names: Vec<String>,
    rows: Vec<R>,
}

/// The writer of a table of rows `R` (the rows table, or the events table beside it).
pub struct RowsWriter<'scope, G: SweepGrid, R = <G as SweepGrid>::Row> {
    send: Option<mpsc::SyncSender<Batch<R>>>,
    /// Buffers of encoded batches, to be filled again.
    spare: mpsc::Receiver<Vec<R>>,
    encoder: ScopedJoinHandle<'scope, Result<Vec<String>>>,
    /// The histories of the rows pending (from index `base` on) and the rows themselves.
    base: usize,
    names: Vec<String>,
    pending: Vec<R>,
    written: u64,
    grid: std::marker::PhantomData<G>,
}

impl<'scope, G: SweepGrid, R: Copy + Send + Sync + 'static> RowsWriter<'scope, G, R> {
    /// Starts the tables in `staging`; `base` is the index of the run's first history.
    pub fn create<'env>(
        scope: &'scope Scope<'scope, 'env>,
        staging: &Path,
        grid: &'env G,
        table: &'env Table<G, R>,
        formats: Formats,
        base: usize,
    ) -> Result<Self> {
        let mut files = Files::create(staging, grid, table, formats)?;
        // A batch is handed over only when the encoder is ready for it: two row groups in
        // memory at most (the one filling, the one encoding).
        let (send, receive) = mpsc::sync_channel::<Batch<R>>(0);
        // The encoded batches' buffers come back to be filled again: a fresh buffer of a row
        // group is fresh pages, which the kernel must zero (measured: a tenth of the main job).
        let (give_back, spare) = mpsc::channel::<Vec<R>>();
        let encoder = scope.spawn(move || {
            for mut batch in receive {
                files.write(grid, table, &batch)?;
                batch.rows.clear();
                let _ = give_back.send(batch.rows);
            }
            files.finish()
        });
        Ok(RowsWriter {
            send: Some(send),
            spare,
            encoder,
            base,
            names: Vec::new(),
            pending: Vec::new(),
            written: 0,
            grid: std::marker::PhantomData,
        })
    }

    /// Appends rows of the histories in order: `name` starts the next history (a history
    /// split over chunks comes in several pushes, the first with its name), its rows are kept
    /// when `keep` (the rows table may hold a sample of the histories; every name is kept so
    /// the indices line up).
    pub fn push(&mut self, name: Option<String>, rows: &[R], keep: bool) -> Result<()> {
        self.names.extend(name);
        if !keep {
            return Ok(());
        }
        self.written += rows.len() as u64;
        let mut rows = rows;
        while !rows.is_empty() {
            if self.pending.capacity() == 0 {
                self.pending = Vec::with_capacity(ROW_GROUP);
            }
            let take = rows.len().min(ROW_GROUP - self.pending.len());
            self.pending.extend_from_slice(&rows[..take]);
            rows = &rows[take..];
            if self.pending.len() == ROW_GROUP {
                let full = std::mem::take(&mut self.pending);
                self.send(full)?;
                // The encoder took this batch, so it has given the previous one's buffer back.
                self.pending = self.spare.try_recv().unwrap_or_default();
            }
        }
        Ok(())
    }

    fn send(&mut self, rows: Vec<R>) -> Result<()> {
        let batch = Batch {
            base: self.base,
            names: self.names.clone(),
            rows,
        };
        // The rows still pending belong to the newest histories only.
        let last = self.names.len().saturating_sub(1);
        self.base += last;
        self.names.drain(..last);
        if let Some(send) = &self.send {
            if send.send(batch).is_err() {
                // The encoder stopped on an error: `finish` reports it.
                self.send = None;
            }
        }
        Ok(())
    }

    /// Rows pushed and kept so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Finishes the tables and checks each file's rows against `expected`; returns the
    /// staged file names.
    pub fn finish(mut self, expected: u64) -> Result<Vec<String>> {
        let rows = std::mem::take(&mut self.pending);
        if !rows.is_empty() {
            self.send(rows)?;
        }
        drop(self.send.take());
        let staged = self
            .encoder
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        if self.written != expected {
            refuse!(
                "the rows written ({}) are not the grid's ({expected}); nothing was published",
                self.written
            );
        }
        Ok(staged)
    }
}

/// The open table files, owned by the encoding thread: each file's path, name and writer.
struct Files {
    files: Vec<(PathBuf, String, Box<dyn TableWriter>)>,
    rows: u64,
}

impl Files {
    fn create<G: SweepGrid, R: Sync>(
        staging: &Path,
        grid: &G,
        table: &Table<G, R>,
        formats: Formats,
    ) -> Result<Files> {
        let mut files = Vec::new();
        for format in formats.iter() {
            let name = format.file_name(table.stem);
            let path = staging.join(&name);
            let writer = format.create(&path, &table.batch(grid, Names::NONE, &[]))?;
            files.push((path, name, writer));
        }
        Ok(Files { files, rows: 0 })
    }

    fn write<G: SweepGrid, R: Sync>(
        &mut self,
        grid: &G,
        table: &Table<G, R>,
        batch: &Batch<R>,
    ) -> Result<()> {
        let at = Names {
            base: batch.base,
            names: &batch.names,
        };
        for (_, _, writer) in &mut self.files {
            writer.write(&table.batch(grid, at, &batch.rows))?;
        }
        self.rows += batch.rows.len() as u64;
        Ok(())
    }

    /// Closes the files and checks that each holds the rows written; returns their names.
    fn finish(self) -> Result<Vec<String>> {
        let mut staged = Vec::new();
        for (path, name, writer) in self.files {
            check_rows(&path, writer.finish()?, self.rows)?;
            staged.push(name);
        }
        Ok(staged)
    }
}

fn check_rows(path: &Path, found: u64, expected: u64) -> Result<()> {
    if found != expected {
        refuse!(
            "{}: holds {found} rows where {expected} were written; nothing was published",
            path.display()
        );
    }
    Ok(())
}
