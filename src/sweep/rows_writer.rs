//! Writing a run's rows table (cells or sessions) into the staging folder as the chunks come,
//! in Parquet row groups of a fixed size (so the bytes do not depend on the chunking) and as
//! CSV, at the writers' speed: each row is encoded once, column by column, and never read back.
//!
//! The files are staged, not published: a run killed half way leaves a Parquet file without
//! its footer in the staging folder, and `--resume` rewrites the tables from the start (the
//! finished chunks' rows are evaluated again — they are a pure function of the experiment —
//! while their summary comes from the checkpoint).

use super::kind::SweepGrid;
use crate::error::{At, Result};
use crate::refuse;
use crate::tables::read::parquet_rows;
use crate::tables::{Names, Table};
use polars::prelude::{DataFrame, ParquetCompression, ParquetWriter};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Rows per Parquet row group of a rows table, whatever the chunking.
pub const ROW_GROUP: usize = 1 << 18;

pub struct RowsWriter<'a, G: SweepGrid> {
    grid: &'a G,
    table: &'a Table<G, G::Row>,
    parquet: Option<(PathBuf, ParquetSink)>,
    csv: Option<(PathBuf, csv::Writer<BufWriter<File>>)>,
    /// The names of every history so far, from index `base` on.
    base: usize,
    names: Vec<String>,
    /// Rows waiting for a full row group.
    pending: Vec<G::Row>,
    buf: String,
    written: u64,
}

impl<'a, G: SweepGrid> RowsWriter<'a, G> {
    /// Starts the tables in `staging` (`None` when no format is wanted); `base` is the index
    /// of the run's first history.
    pub fn create(
        staging: &Path,
        grid: &'a G,
        table: &'a Table<G, G::Row>,
        (parquet, csv): (bool, bool),
        base: usize,
    ) -> Result<Self> {
        let parquet = match parquet {
            true => {
                let path = staging.join(table.parquet_name());
                let sink = ParquetSink::create(&path, table, grid)?;
                Some((path, sink))
            }
            false => None,
        };
        let csv = match csv {
            true => {
                let path = staging.join(table.csv_name());
                let file = File::create(&path).at(&path, "create")?;
                let mut w = csv::Writer::from_writer(BufWriter::with_capacity(1 << 20, file));
                table.write_csv_header(&mut w).at(&path, "write")?;
                Some((path, w))
            }
            false => None,
        };
        Ok(RowsWriter {
            grid,
            table,
            parquet,
            csv,
            base,
            names: Vec::new(),
            pending: Vec::new(),
            buf: String::new(),
            written: 0,
        })
    }

    /// Appends a chunk: the names of its histories (the next ones in order) and the rows kept.
    pub fn push(&mut self, names: Vec<String>, rows: &[G::Row]) -> Result<()> {
        self.names.extend(names);
        let at = Names {
            base: self.base,
            names: &self.names,
        };
        if let Some((path, w)) = self.csv.as_mut() {
            self.table
                .write_csv(self.grid, at, rows, w, &mut self.buf)
                .at(path, "write")?;
        }
        if let Some((path, sink)) = self.parquet.as_mut() {
            self.pending.extend_from_slice(rows);
            let mut start = 0;
            while self.pending.len() - start >= ROW_GROUP {
                let df = self
                    .table
                    .frame(self.grid, at, &self.pending[start..start + ROW_GROUP])
                    .at(path, "build")?;
                sink.write(&df)?;
                start += ROW_GROUP;
            }
            self.pending.drain(..start);
        }
        self.written += rows.len() as u64;
        Ok(())
    }

    /// Finishes the tables and checks each file's rows against `expected`; returns the
    /// staged file names.
    pub fn finish(mut self, expected: u64) -> Result<Vec<String>> {
        if self.written != expected {
            refuse!(
                "the rows written ({}) are not the grid's ({expected}); nothing was published",
                self.written
            );
        }
        let mut staged = Vec::new();
        if let Some((path, mut sink)) = self.parquet.take() {
            if !self.pending.is_empty() {
                let at = Names {
                    base: self.base,
                    names: &self.names,
                };
                let df = self
                    .table
                    .frame(self.grid, at, &self.pending)
                    .at(&path, "build")?;
                sink.write(&df)?;
            }
            sink.finish()?;
            check_rows(&path, parquet_rows(&path)? as u64, expected)?;
            staged.push(self.table.parquet_name());
        }
        if let Some((path, mut w)) = self.csv.take() {
            w.flush().at(&path, "write")?;
            drop(w);
            check_rows(&path, csv_lines(&path)?.saturating_sub(1), expected)?;
            staged.push(self.table.csv_name());
        }
        Ok(staged)
    }
}

fn check_rows(path: &Path, found: u64, expected: u64) -> Result<()> {
    if found != expected {
        refuse!(
            "{}: holds {found} rows where the grid has {expected}; nothing was published",
            path.display()
        );
    }
    Ok(())
}

/// Lines of a file (the CSV writer ends every record with one newline; no field holds one).
fn csv_lines(path: &Path) -> Result<u64> {
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
        let file = File::create(path).at(path, "create")?;
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
