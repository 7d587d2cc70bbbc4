//! Parquet: a small table written whole, a rows table a row group at a time (Zstd-compressed
//! both), and the rows a file holds read from its footer.

use super::{Rows, TableWriter};
use crate::error::{At, InputError, Result};
use polars::io::parquet::write::BatchedWriter;
use polars::prelude::{ParquetCompression, ParquetReader, ParquetWriter, SerReader};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// A Parquet file written one batch (row group) at a time.
struct ParquetSink {
    writer: BatchedWriter<BufWriter<File>>,
    path: PathBuf,
}

pub(super) fn create(path: &Path, empty: &dyn Rows) -> Result<Box<dyn TableWriter>> {
    let file = crate::links::create(path)?;
    // The schema of the declared table, from an empty frame of it.
    let schema = empty.frame().at(path, "build")?.schema().clone();
    let writer = ParquetWriter::new(BufWriter::with_capacity(1 << 20, file))
        .with_compression(ParquetCompression::Zstd(None))
        .batched(&schema)
        .at(path, "start Parquet")?;
    Ok(Box::new(ParquetSink {
        writer,
        path: path.to_path_buf(),
    }))
}

impl TableWriter for ParquetSink {
    fn write(&mut self, rows: &dyn Rows) -> Result<()> {
        let df = rows.frame().at(&self.path, "build")?;
        self.writer.write_batch(&df).at(&self.path, "write Parquet")
    }

    fn finish(self: Box<Self>) -> Result<u64> {
        self.writer.finish().at(&self.path, "finish Parquet")?;
        rows_in(&self.path)
    }
}

/// Writes the rows as one Parquet file.
pub(super) fn write_whole(path: &Path, rows: &dyn Rows) -> Result<()> {
    let mut df = rows.frame().at(path, "build")?;
    let file = crate::links::create(path)?;
    ParquetWriter::new(BufWriter::new(file))
        .with_compression(ParquetCompression::Zstd(None))
        .finish(&mut df)
        .at(path, "write Parquet")?;
    Ok(())
}

/// The number of rows of a Parquet table, from its footer (nothing else is read).
pub(super) fn rows_in(path: &Path) -> Result<u64> {
    let file = File::open(path).map_err(|e| InputError::io(path, e))?;
    let mut reader = ParquetReader::new(file);
    let rows = reader.num_rows().map_err(|e| InputError::File {
        path: path.into(),
        message: format!("not a readable Parquet table: {e}"),
    })?;
    Ok(rows as u64)
}
