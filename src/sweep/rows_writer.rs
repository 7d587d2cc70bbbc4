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
use crate::error::{At, Result};
use crate::refuse;
use crate::tables::formats::{Formats, TableFormat};
use crate::tables::read::parquet_rows;
use crate::tables::{Names, Table};
use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};
use std::fs::File;
use std::io::{BufWriter, Write as _};
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

/// The open table files, owned by the encoding thread.
struct Files {
    parquet: Option<(PathBuf, ParquetSink)>,
    csv: Option<(PathBuf, BufWriter<File>)>,
    buf: Vec<u8>,
    rows: u64,
    names: (String, String),
}

impl Files {
    fn create<G: SweepGrid, R: Sync>(
        staging: &Path,
        grid: &G,
        table: &Table<G, R>,
        formats: Formats,
    ) -> Result<Files> {
        let parquet = match formats.has(TableFormat::Parquet) {
            true => {
                let path = staging.join(table.parquet_name());
                let sink = ParquetSink::create(&path, table, grid)?;
                Some((path, sink))
            }
            false => None,
        };
        let csv = match formats.has(TableFormat::Csv) {
            true => {
                let path = staging.join(table.csv_name());
                let w = create_csv(&path, table)?;
                Some((path, w))
            }
            false => None,
        };
        Ok(Files {
            parquet,
            csv,
            buf: Vec::new(),
            rows: 0,
            names: (table.parquet_name(), table.csv_name()),
        })
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
        if let Some((path, w)) = self.csv.as_mut() {
            table
                .write_csv(grid, at, &batch.rows, w, &mut self.buf)
                .at(path, "write")?;
        }
        if let Some((path, sink)) = self.parquet.as_mut() {
            let df = table.frame(grid, at, &batch.rows).at(path, "build")?;
            sink.write(&df)?;
        }
        self.rows += batch.rows.len() as u64;
        Ok(())
    }

    /// Closes the files and checks that each holds the rows written; returns their names.
    fn finish(mut self) -> Result<Vec<String>> {
        let mut staged = Vec::new();
        if let Some((path, sink)) = self.parquet.take() {
            sink.finish()?;
            check_rows(&path, parquet_rows(&path)? as u64, self.rows)?;
            staged.push(self.names.0.clone());
        }
        if let Some((path, mut w)) = self.csv.take() {
            w.flush().at(&path, "write")?;
            drop(w);
            check_rows(&path, csv_lines(&path)?.saturating_sub(1), self.rows)?;
            staged.push(self.names.1.clone());
        }
        Ok(staged)
    }
}

/// A CSV file of `table` with its header line written.
pub(crate) fn create_csv<G, R>(path: &Path, table: &Table<G, R>) -> Result<BufWriter<File>> {
    let file = crate::links::create(path)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    table.write_csv_header(&mut w).at(path, "write")?;
    Ok(w)
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

/// Lines of a file (the CSV writer ends every record with one newline; no field holds one).
pub(crate) fn csv_lines(path: &Path) -> Result<u64> {
    use std::io::Read as _;
    let mut f = File::open(path).at(path, "read")?;
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let n = f.read(&mut buf).at(path, "read")?;
        if n == 0 {
            return Ok(lines);
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// A Parquet file written one batch (row group) at a time.
struct ParquetSink {
    writer: polars::io::parquet::write::BatchedWriter<BufWriter<File>>,
    path: PathBuf,
}

impl ParquetSink {
    fn create<G: Sync, R: Sync>(path: &Path, table: &Table<G, R>, grid: &G) -> Result<Self> {
        let file = crate::links::create(path)?;
        // The schema of the declared table, from an empty frame of it.
        let schema = table
            .frame(grid, Names::NONE, &[])
            .at(path, "build")?
            .schema()
            .clone();
        let writer = ParquetWriter::new(BufWriter::with_capacity(1 << 20, file))
            .with_compression(ParquetCompression::Zstd(None))
            .batched(&schema)
            .at(path, "start Parquet")?;
        Ok(ParquetSink {
            writer,
            path: path.to_path_buf(),
        })
    }

    fn write(&mut self, df: &DataFrame) -> Result<()> {
        self.writer.write_batch(df).at(&self.path, "write Parquet")
    }

    fn finish(self) -> Result<()> {
        self.writer.finish().at(&self.path, "finish Parquet")?;
        Ok(())
    }
}
