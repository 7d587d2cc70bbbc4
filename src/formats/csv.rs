//! CSV: the header line, then the rows' lines as the table's declaration formats them; the
//! rows a file holds are its lines but the header.

use super::{Rows, TableWriter};
use crate::error::{At, Result};
use std::fs::File;
use std::io::{BufWriter, Read as _, Write as _};
use std::path::{Path, PathBuf};

/// A CSV file with its header line written, taking rows a batch at a time.
struct CsvFile {
    out: BufWriter<File>,
    path: PathBuf,
    /// The formatting buffer, kept between batches.
    buf: Vec<u8>,
}

pub(super) fn create(path: &Path, empty: &dyn Rows) -> Result<Box<dyn TableWriter>> {
    let file = crate::links::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut header = Vec::new();
    empty.csv_header(&mut header);
    out.write_all(&header).at(path, "write")?;
    Ok(Box::new(CsvFile {
        out,
        path: path.to_path_buf(),
        buf: Vec::new(),
    }))
}

impl TableWriter for CsvFile {
    fn write(&mut self, rows: &dyn Rows) -> Result<()> {
        rows.csv_lines(&mut self.out, &mut self.buf)
            .at(&self.path, "write")
    }

    fn finish(mut self: Box<Self>) -> Result<u64> {
        self.out.flush().at(&self.path, "write")?;
        let path = self.path.clone();
        drop(self);
        rows_in(&path)
    }
}

/// A text field as the csv crate writes it by default: quoted, its quotes doubled, when it
/// holds a comma, a quote or a line break; as it is otherwise. Every CSV field ctxlab writes
/// by hand goes through here.
pub fn push_field(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if !bytes
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.extend_from_slice(bytes);
        return;
    }
    out.push(b'"');
    for &b in bytes {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// Writes the rows as one CSV file.
pub(super) fn write_whole(path: &Path, rows: &dyn Rows) -> Result<()> {
    let mut file = create(path, rows)?;
    file.write(rows)?;
    file.finish().map(drop)
}

/// The rows of a CSV file: its lines (the writer ends every record with one newline; no field
/// holds one) but the header.
pub(super) fn rows_in(path: &Path) -> Result<u64> {
    let mut f = File::open(path).at(path, "read")?;
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let n = f.read(&mut buf).at(path, "read")?;
        if n == 0 {
            return Ok(lines.saturating_sub(1));
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}
