//! Part files: one chunk's rows in a plain binary form, kept in the staging folder until the
//! run is published. They are what `--resume` keeps of finished chunks, and the published
//! tables are written from them once, at the writers' speed: a part costs a copy of the rows,
//! not a Parquet encoding that would be read back and encoded again.
//!
//! Layout (little-endian): a magic word, the number of history names and each name
//! (length-prefixed UTF-8), the number of rows, then the rows as the kind of sweep encodes them.
//! Fractions that are undefined are stored as NaN (no measure is ever NaN).

use super::kind::SweepGrid;
use crate::error::{At, Error, Result};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"ctxlabp1";

/// Appends values to a byte buffer.
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u16(&mut self, x: u16) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }
    pub fn u32(&mut self, x: u32) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }
    pub fn u64(&mut self, x: u64) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }
    pub fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    pub fn opt_f64(&mut self, x: Option<f64>) {
        self.f64(x.unwrap_or(f64::NAN));
    }
    pub fn flag(&mut self, x: bool) {
        self.bytes.push(u8::from(x));
    }
}

/// Reads values back; `None` at the end of the bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.bytes.split_first_chunk::<N>()?;
        self.bytes = rest;
        Some(*head)
    }
    pub fn u16(&mut self) -> Option<u16> {
        self.take().map(u16::from_le_bytes)
    }
    pub fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    pub fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    pub fn opt_f64(&mut self) -> Option<Option<f64>> {
        self.f64().map(|x| (!x.is_nan()).then_some(x))
    }
    pub fn flag(&mut self) -> Option<bool> {
        self.take::<1>().map(|[b]| b != 0)
    }
    fn text(&mut self) -> Option<String> {
        let len = self.u32()? as usize;
        if self.bytes.len() < len {
            return None;
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        String::from_utf8(head.to_vec()).ok()
    }
}

/// One chunk's rows and the names of its histories (from index `base` on).
pub struct Part<R> {
    pub base: usize,
    pub names: Vec<String>,
    pub rows: Vec<R>,
}

pub fn path(staging: &Path, chunk: usize) -> PathBuf {
    staging.join(format!("part-{chunk:06}.rows"))
}

/// Writes a part through a temporary file and a rename: a part that exists is whole.
pub fn write<G: SweepGrid>(
    path: &Path,
    base: usize,
    names: &[String],
    rows: &[G::Row],
) -> Result<()> {
    let mut w = Writer {
        bytes: Vec::with_capacity(64 + rows.len() * 96),
    };
    w.bytes.extend_from_slice(MAGIC);
    w.u64(base as u64);
    w.u32(names.len() as u32);
    for n in names {
        w.u32(n.len() as u32);
        w.bytes.extend_from_slice(n.as_bytes());
    }
    w.u64(rows.len() as u64);
    for r in rows {
        G::encode(r, &mut w);
    }
    let tmp = path.with_extension("rows.tmp");
    std::fs::write(&tmp, &w.bytes).at(&tmp, "write")?;
    std::fs::rename(&tmp, path).at(path, "write")
}

/// Reads a part back.
pub fn read<G: SweepGrid>(path: &Path) -> Result<Part<G::Row>> {
    let bytes = std::fs::read(path).at(path, "read")?;
    let damaged = || {
        Error::Refused(format!(
            "{}: damaged part file; delete the staging folder to start over",
            path.display()
        ))
    };
    let Some(body) = bytes.strip_prefix(MAGIC.as_slice()) else {
        return Err(damaged());
    };
    let mut r = Reader { bytes: body };
    let base = r.u64().ok_or_else(damaged)? as usize;
    let count = r.u32().ok_or_else(damaged)?;
    let names = (0..count)
        .map(|_| r.text())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(damaged)?;
    let n = r.u64().ok_or_else(damaged)?;
    let mut rows = Vec::with_capacity(n.min(1 << 24) as usize);
    for _ in 0..n {
        rows.push(G::decode(&mut r).ok_or_else(damaged)?);
    }
    if !r.bytes.is_empty() {
        return Err(damaged());
    }
    Ok(Part { base, names, rows })
}
