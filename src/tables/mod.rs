//! Each table's columns, declared once.
//!
//! A [`Table`] is a list of columns, each with its name, its type and how it is computed from a
//! row; a column marked as a measure is also summarised (mean, sd and interval per group). The
//! Parquet and CSV writers, the summary accumulators, the readers behind `plot` and `merge` and
//! the test fixtures all walk the same declaration, so the formats and the tables cannot drift
//! apart. Adding a measure to a sweep is one line in its table plus the computation.

pub mod budget_table;
pub mod call_sizes;
pub mod cells;
pub mod compactions;
pub mod cost_ratios;
mod get;
pub mod judge;
pub mod manifest;
pub mod numbers;
pub mod read;
pub mod rereads;
pub mod session_calls;
pub mod session_columns;
pub mod session_metrics;
pub mod session_script;
pub mod sessions;
pub mod stale_tasks;
pub mod summary;
mod values;

use crate::formats::csv::push_field;
use crate::formats::Rows;
use crate::tables::numbers::{push_display_f64, push_fixed, push_fraction, push_whole};
use get::ValueFn;
pub use get::{Get, Names};
use polars::prelude::{Column as PolarsColumn, DataFrame, PolarsResult};
use std::io::Write;
use std::sync::Arc;
use values::Values;

/// The type of a column as stored (Parquet) and read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Text,
    Whole,
    Real,
    Flag,
}

impl Type {
    pub fn name(self) -> &'static str {
        match self {
            Type::Text => "String",
            Type::Whole => "UInt64",
            Type::Real => "Float64",
            Type::Flag => "Boolean",
        }
    }
}

/// A getter shared with its block reader, called a row at a time.
fn per_row<G, R, T, F>(f: &Arc<F>) -> ValueFn<G, R, T>
where
    F: Fn(&G, &R) -> T + Send + Sync + 'static,
{
    let f = Arc::clone(f);
    Box::new(move |g, r| f(g, r))
}

pub struct Column<G, R> {
    pub name: String,
    pub get: Get<G, R>,
    /// The same getter, over a block of rows (the frames' reader and the summary's).
    readers: values::Readers<G, R>,
    /// Summarised per group (mean, sd, interval) in the summary table.
    pub measure: bool,
    /// The summary's name for the measure when it is not the column's own, e.g.
    /// `required_retention_feasible` for a mean over feasible cells only.
    pub summary_name: Option<String>,
    /// Compared strategy against strategy, cell by cell, in the pairs table.
    pub paired: bool,
    /// Compared only where both rows completed (a cost of a session that ran out of context
    /// is a cost of less work); the pairs table counts the pairs left out.
    pub completed_only: bool,
    /// Every value lies in [0, 1] (declared with [`Table::share`]; flags always do): the
    /// summary's interval is the one for shares.
    pub share: bool,
    /// A value of 0 is a failure (declared with [`Table::zero_fails`]): the summary's interval
    /// also bounds the share of histories that fail.
    pub zero_fails: bool,
    /// A real written with exactly this many decimals (declared with [`Table::decimals`]),
    /// not as a fraction that reads back exactly.
    pub decimals: Option<usize>,
}

impl<G, R> Column<G, R> {
    pub fn ty(&self) -> Type {
        match self.get {
            Get::Text(_) => Type::Text,
            Get::Whole(_) | Get::OptWhole(_) => Type::Whole,
            Get::Real(_) | Get::OptReal(_) | Get::Percent(_) | Get::OptPercent(_) => Type::Real,
            Get::Flag(_) => Type::Flag,
        }
    }

    pub fn nullable(&self) -> bool {
        matches!(
            self.get,
            Get::OptWhole(_) | Get::OptReal(_) | Get::OptPercent(_)
        )
    }

    /// Appends the column's values in `rows` as the summary reads them: a number (flags count
    /// as 0 or 1), `None` where undefined or text.
    pub fn numbers(&self, grid: &G, rows: &[R], out: &mut Vec<Option<f64>>) {
        (self.readers.numbers)(grid, rows, out)
    }

    /// The measure's name in the summary.
    pub fn summary_name(&self) -> &str {
        self.summary_name.as_deref().unwrap_or(&self.name)
    }

    /// Whether the summary tallies this measure as whole numbers.
    pub fn whole(&self) -> bool {
        matches!(self.get, Get::Whole(_) | Get::OptWhole(_) | Get::Flag(_))
    }

    /// Whether every value lies in [0, 1], so the summary treats the mean as a share.
    pub fn unit(&self) -> bool {
        self.share || matches!(self.get, Get::Flag(_))
    }

    /// Appends the value in `row` as the CSV writes it, text unquoted.
    #[inline]
    fn push_value(&self, grid: &G, names: Names, row: &R, buf: &mut Vec<u8>) {
        let real = |buf: &mut Vec<u8>, x: f64| match self.decimals {
            Some(places) => push_fixed(buf, x, places),
            None => push_fraction(buf, x),
        };
        match &self.get {
            Get::Text(f) => buf.extend_from_slice(f(grid, names, row).as_bytes()),
            Get::Whole(f) => push_whole(buf, f(grid, row)),
            Get::OptWhole(f) => {
                if let Some(x) = f(grid, row) {
                    push_whole(buf, x)
                }
            }
            Get::Real(f) => real(buf, f(grid, row)),
            Get::OptReal(f) => {
                if let Some(x) = f(grid, row) {
                    real(buf, x)
                }
            }
            Get::Percent(f) => push_display_f64(buf, f(grid, row)),
            Get::OptPercent(f) => {
                if let Some(x) = f(grid, row) {
                    push_display_f64(buf, x)
                }
            }
            Get::Flag(f) => buf.extend_from_slice(if f(grid, row) { b"true" } else { b"false" }),
        }
    }
}

/// A table: its file stem (`cells` → `cells.parquet`, `cells.csv`) and its columns in order.
pub struct Table<G, R> {
    pub stem: &'static str,
    pub columns: Vec<Column<G, R>>,
}

impl<G, R> Table<G, R> {
    pub fn new(stem: &'static str) -> Self {
        Table {
            stem,
            columns: Vec::new(),
        }
    }

    fn push(
        mut self,
        name: impl Into<String>,
        get: Get<G, R>,
        readers: values::Readers<G, R>,
    ) -> Self {
        self.columns.push(Column {
            name: name.into(),
            get,
            readers,
            measure: false,
            summary_name: None,
            paired: false,
            completed_only: false,
            share: false,
            zero_fails: false,
            decimals: None,
        });
        self
    }

    pub fn text<F>(self, name: &str, f: F) -> Self
    where
        F: for<'a> Fn(&'a G, Names<'a>, &'a R) -> &'a str + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let row = Arc::clone(&f);
        self.push(
            name,
            Get::Text(Box::new(move |g, names, r| row(g, names, r))),
            values::text_block(f),
        )
    }

    pub fn whole(self, name: &str, f: impl Fn(&G, &R) -> u64 + Send + Sync + 'static) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::Whole(per_row(&f)), values::block(f))
    }

    pub fn opt_whole(
        self,
        name: &str,
        f: impl Fn(&G, &R) -> Option<u64> + Send + Sync + 'static,
    ) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::OptWhole(per_row(&f)), values::block(f))
    }

    pub fn real(self, name: &str, f: impl Fn(&G, &R) -> f64 + Send + Sync + 'static) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::Real(per_row(&f)), values::block(f))
    }

    /// `fn_realised` and `fp_realised`, measures of shares: the rates the row's flags realised
    /// (`get` reads them off the row), beside the noise model's nominal rates.
    pub fn realised(
        self,
        get: impl Fn(&R) -> crate::noise::Realised + Copy + Send + Sync + 'static,
    ) -> Self
    where
        R: 'static,
    {
        self.opt_real("fn_realised", move |_, r| get(r).false_negative())
            .measure()
            .share()
            .opt_real("fp_realised", move |_, r| get(r).false_positive())
            .measure()
            .share()
    }

    pub fn opt_real(
        self,
        name: impl Into<String>,
        f: impl Fn(&G, &R) -> Option<f64> + Send + Sync + 'static,
    ) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::OptReal(per_row(&f)), values::block(f))
    }

    pub fn percent(self, name: &str, f: impl Fn(&G, &R) -> f64 + Send + Sync + 'static) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::Percent(per_row(&f)), values::block(f))
    }

    /// A number that is not a percentage but is written the same way, as Rust displays it
    /// (`0.8`, `1`), not in the fixed point of a fraction.
    pub fn displayed(self, name: &str, f: impl Fn(&G, &R) -> f64 + Send + Sync + 'static) -> Self {
        self.percent(name, f)
    }

    /// [`Table::displayed`] for a number a row may not have (written empty, null in Parquet).
    pub fn opt_displayed(
        self,
        name: &str,
        f: impl Fn(&G, &R) -> Option<f64> + Send + Sync + 'static,
    ) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::OptPercent(per_row(&f)), values::block(f))
    }

    pub fn flag(self, name: &str, f: impl Fn(&G, &R) -> bool + Send + Sync + 'static) -> Self {
        let f = Arc::new(f);
        self.push(name, Get::Flag(per_row(&f)), values::block(f))
    }

    /// Marks the column declared last as a measure: the summary table gets its mean, sd and
    /// 95 % interval per group.
    pub fn measure(mut self) -> Self {
        self.columns
            .last_mut()
            .expect("measure() follows a column")
            .measure = true;
        self
    }

    /// [`Table::measure`] under another name in the summary, for a measure that is defined on
    /// a subset of the rows, so the summary says it is conditional.
    pub fn measure_as(mut self, summary_name: &str) -> Self {
        self = self.measure();
        self.columns
            .last_mut()
            .expect("follows a column")
            .summary_name = Some(summary_name.to_string());
        self
    }

    /// Marks the column declared last as compared between strategies: the pairs table gets
    /// the mean difference (strategy − baseline) over the cells both define, by history.
    pub fn paired(mut self) -> Self {
        self.columns.last_mut().expect("follows a column").paired = true;
        self
    }

    /// [`Table::paired`], compared only between rows that both completed (sessions that
    /// reached their last call): a cost measure of a run that ended early is not the same work.
    pub fn paired_completed(mut self) -> Self {
        self = self.paired();
        self.columns
            .last_mut()
            .expect("follows a column")
            .completed_only = true;
        self
    }

    /// Marks the column declared last as a share: every value lies in [0, 1] (a retention, a
    /// reduction), so its summary interval stays within the bounds and has width at them.
    pub fn share(mut self) -> Self {
        self.columns.last_mut().expect("follows a column").share = true;
        self
    }

    /// Marks the share declared last as one where 0 is a failure (an infeasible cell counts
    /// 0): with few or no failing histories in a group, its interval then reaches as far as
    /// the share of failing histories could (`stats::Acc::zero_fails`).
    pub fn zero_fails(mut self) -> Self {
        self.columns
            .last_mut()
            .expect("follows a column")
            .zero_fails = true;
        self
    }

    /// Marks the real column declared last as written with exactly `places` decimals
    /// (`0.333` for three), for a report read by eye rather than read back.
    pub fn decimals(mut self, places: usize) -> Self {
        let column = self.columns.last_mut().expect("follows a column");
        assert!(
            matches!(column.get, Get::Real(_) | Get::OptReal(_)),
            "decimals() follows a real column"
        );
        column.decimals = Some(places);
        self
    }

    /// The paired columns, in table order.
    pub fn paired_columns(&self) -> impl Iterator<Item = &Column<G, R>> {
        self.columns.iter().filter(|c| c.paired)
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// The measure columns, in table order.
    pub fn measures(&self) -> impl Iterator<Item = &Column<G, R>> {
        self.columns.iter().filter(|c| c.measure)
    }

    /// The rows `rows` (of the histories `names`, their indices into `grid`) as the formats
    /// read them.
    pub fn batch<'a>(&'a self, grid: &'a G, names: Names<'a>, rows: &'a [R]) -> RowBatch<'a, G, R> {
        RowBatch {
            table: self,
            grid,
            names,
            rows,
        }
    }

    /// The rows as a DataFrame, built column by column, groups of columns in parallel: the
    /// rows tables' encoder is one thread, which bounds a large Parquet-only sweep.
    ///
    /// A group reads its columns a block of rows at a time, so a block is read from memory once
    /// for all of them: read a column at a time, every column streamed the whole row group
    /// through the cache again (tens of megabytes, 32 times).
    pub fn frame(&self, grid: &G, names: Names, rows: &[R]) -> PolarsResult<DataFrame>
    where
        G: Sync,
        R: Sync,
    {
        use rayon::prelude::*;
        // A block of rows stays in the cache while its group reads every column from it.
        const BLOCK: usize = 1 << 11;
        let groups = (2 * rayon::current_num_threads()).clamp(1, self.columns.len().max(1));
        let per_group = self.columns.len().div_ceil(groups).max(1);
        let columns: Vec<Vec<PolarsColumn>> = self
            .columns
            .par_chunks(per_group)
            .map(|group| {
                let mut values: Vec<Values> = group
                    .iter()
                    .map(|c| Values::for_column(&c.get, rows.len()))
                    .collect();
                for block in rows.chunks(BLOCK) {
                    for (c, v) in group.iter().zip(&mut values) {
                        (c.readers.values)(grid, names, block, v);
                    }
                }
                group
                    .iter()
                    .zip(values)
                    .map(|(c, v)| v.into_column(c.name.as_str()))
                    .collect()
            })
            .collect();
        DataFrame::new(rows.len(), columns.into_iter().flatten().collect())
    }

    /// Writes the header line.
    pub fn write_csv_header<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        let mut line = Vec::new();
        self.push_csv_header(&mut line);
        out.write_all(&line)
    }

    /// Appends the header line to `line`.
    fn push_csv_header(&self, line: &mut Vec<u8>) {
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            push_field(line, &c.name);
        }
        self.end_csv_record(line);
    }

    /// Writes the rows as CSV lines: every field is formatted straight into a byte buffer (`buf`
    /// for a small slice; no `fmt`, no `String` per field), which goes to `out` a few megabytes
    /// at a time. The bytes are the
    /// csv crate's with its default settings (fields quoted only where they must be). Fractions
    /// are written so that they read back exactly (see `tables::numbers`).
    ///
    /// A large slice is formatted in pieces on every core, the pieces written in order: the
    /// same bytes as one thread gives (each line depends on its row alone), at the cores'
    /// speed, which a cells table of a few hundred megabytes is bounded by.
    pub fn write_csv<W: Write>(
        &self,
        grid: &G,
        names: Names,
        rows: &[R],
        out: &mut W,
        buf: &mut Vec<u8>,
    ) -> std::io::Result<()>
    where
        G: Sync,
        R: Sync,
    {
        use rayon::prelude::*;
        // Rows formatted at a time: a few megabytes of text.
        const PIECE: usize = 1 << 13;
        if rows.len() <= PIECE {
            buf.clear();
            self.push_csv_lines(grid, names, rows, buf);
            out.write_all(buf)?;
            buf.clear();
            return Ok(());
        }
        // A few pieces per worker at a time: memory stays a few megabytes per worker.
        let wave = PIECE * 2 * rayon::current_num_threads().max(1);
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        for part in rows.chunks(wave) {
            let lines: Vec<&[R]> = part.chunks(PIECE).collect();
            pieces.resize_with(lines.len(), Vec::new);
            pieces
                .par_iter_mut()
                .zip(lines.par_iter())
                .for_each(|(piece, rows)| {
                    piece.clear();
                    self.push_csv_lines(grid, names, rows, piece);
                });
            for piece in &pieces[..lines.len()] {
                out.write_all(piece)?;
            }
        }
        Ok(())
    }

    /// Formats `rows` as CSV lines onto the end of `buf`.
    fn push_csv_lines(&self, grid: &G, names: Names, rows: &[R], buf: &mut Vec<u8>) {
        for r in rows {
            for (i, c) in self.columns.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                match &c.get {
                    Get::Text(f) => push_field(buf, f(grid, names, r)),
                    _ => c.push_value(grid, names, r, buf),
                }
            }
            self.end_csv_record(buf);
        }
    }

    /// The header and `rows` as one CSV text, for a table small enough to print whole.
    pub fn csv_text(&self, grid: &G, rows: &[R]) -> String
    where
        G: Sync,
        R: Sync,
    {
        let mut out = Vec::new();
        self.push_csv_header(&mut out);
        self.push_csv_lines(grid, Names::NONE, rows, &mut out);
        String::from_utf8(out).expect("fields of text are text")
    }

    /// Each row's fields as the CSV writes them, text unquoted: the cells of a text table
    /// under [`Table::column_names`].
    pub fn text_rows(&self, grid: &G, rows: &[R]) -> Vec<Vec<String>> {
        let mut buf = Vec::new();
        rows.iter()
            .map(|r| {
                self.columns
                    .iter()
                    .map(|c| {
                        buf.clear();
                        c.push_value(grid, Names::NONE, r, &mut buf);
                        String::from_utf8_lossy(&buf).into_owned()
                    })
                    .collect()
            })
            .collect()
    }

    /// Ends a record; a record of one empty field is written `""` (as the csv crate does, so
    /// that it is not read as a blank line).
    fn end_csv_record(&self, line: &mut Vec<u8>) {
        if self.columns.len() == 1 && line.last().is_none_or(|&b| b == b'\n') {
            line.extend_from_slice(b"\"\"");
        }
        line.push(b'\n');
    }
}

/// A batch of a table's rows, with the grid their indices point into and the names of their
/// histories: what a table format writes.
pub struct RowBatch<'a, G, R> {
    table: &'a Table<G, R>,
    grid: &'a G,
    names: Names<'a>,
    rows: &'a [R],
}

impl<G: Sync, R: Sync> Rows for RowBatch<'_, G, R> {
    fn frame(&self) -> PolarsResult<DataFrame> {
        self.table.frame(self.grid, self.names, self.rows)
    }

    fn csv_header(&self, line: &mut Vec<u8>) {
        self.table.push_csv_header(line)
    }

    fn csv_lines(&self, out: &mut dyn Write, buf: &mut Vec<u8>) -> std::io::Result<()> {
        let mut out = out;
        self.table
            .write_csv(self.grid, self.names, self.rows, &mut out, buf)
    }
}
