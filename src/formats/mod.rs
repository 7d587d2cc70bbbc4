//! The table formats a sweep writes (`output.formats`), one file each, and their registry. A
//! new format is its file — a [`TableWriter`] that writes a table batch after batch, a
//! whole-table writer and a row counter — and one line of the `table_formats!` list below (its
//! `mod` line is generated from it). The estimate of a run's size per format
//! (`sweep/estimate.rs`) is the one other place that names a format.
//!
//! A format reads a table's rows through [`Rows`], which the table's declaration
//! (`tables::Table`) implements: the formats sit below the experiment files that name them,
//! the tables above.

use crate::error::Result;
use polars::prelude::{DataFrame, PolarsResult};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// A batch of a table's rows as the formats read it (a batch of no rows is the table's header).
pub trait Rows: Sync {
    /// The rows as typed columns; with no rows, the table's schema.
    fn frame(&self) -> PolarsResult<DataFrame>;
    /// The table's CSV header line, appended to `line`.
    fn csv_header(&self, line: &mut Vec<u8>);
    /// The rows as CSV lines, written to `out` (formatted in `buf`).
    fn csv_lines(&self, out: &mut dyn Write, buf: &mut Vec<u8>) -> io::Result<()>;
}

/// A file of a table being written in one format, a batch of rows at a time.
pub trait TableWriter: Send {
    /// Appends a batch of rows.
    fn write(&mut self, rows: &dyn Rows) -> Result<()>;
    /// Closes the file; returns the rows it holds, read back from the file.
    fn finish(self: Box<Self>) -> Result<u64>;
}

/// Declares the formats: each line is the format's module (its file), its variant, the name
/// `output.formats` gives it, the name messages give it and the suffix of its shards' folder
/// (`cells<suffix>/shard=i/`). The module provides `create` (a [`TableWriter`]), `write_whole`
/// and `rows_in`.
macro_rules! table_formats {
    ($($module:ident => $variant:ident { key: $key:literal, title: $title:literal, shards: $suffix:literal }),* $(,)?) => {
        $(pub mod $module;)*

        /// A table format, as `output.formats` names it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum TableFormat {
            $($variant,)*
        }

        impl TableFormat {
            /// Every format, in the order tables are written and listed.
            pub const ALL: [TableFormat; [$($key),*].len()] = [$(TableFormat::$variant),*];

            /// The name in `output.formats`, and the files' extension.
            pub fn key(self) -> &'static str {
                match self {
                    $(TableFormat::$variant => $key,)*
                }
            }

            /// The name messages give the format (`Parquet`).
            pub fn title(self) -> &'static str {
                match self {
                    $(TableFormat::$variant => $title,)*
                }
            }

            /// The suffix of the folder a sharded run's rows go to, after the table's stem.
            fn shard_suffix(self) -> &'static str {
                match self {
                    $(TableFormat::$variant => $suffix,)*
                }
            }

            /// Starts the file at `path` of the table whose header `empty` is (a batch of no
            /// rows); the rows follow in batches.
            pub fn create(self, path: &Path, empty: &dyn Rows) -> Result<Box<dyn TableWriter>> {
                match self {
                    $(TableFormat::$variant => $module::create(path, empty),)*
                }
            }

            /// Writes a small table whole at `path`.
            pub fn write_whole(self, path: &Path, rows: &dyn Rows) -> Result<()> {
                match self {
                    $(TableFormat::$variant => $module::write_whole(path, rows),)*
                }
            }

            /// The rows a file of this format holds (a CSV file's header line is no row).
            pub fn rows_in(self, path: &Path) -> Result<u64> {
                match self {
                    $(TableFormat::$variant => $module::rows_in(path),)*
                }
            }
        }
    };
}

table_formats! {
    parquet => Parquet { key: "parquet", title: "Parquet", shards: "" },
    csv => Csv { key: "csv", title: "CSV", shards: "-csv" },
}

impl TableFormat {
    /// The file of the table with this stem: `cells.parquet`.
    pub fn file_name(self, stem: &str) -> String {
        format!("{stem}.{}", self.key())
    }

    /// The format of a file named by [`TableFormat::file_name`].
    pub fn of_file(name: &str) -> Option<TableFormat> {
        TableFormat::ALL
            .into_iter()
            .find(|f| name.ends_with(&format!(".{}", f.key())))
    }

    /// Where shard `part` (`shard=3`) publishes the rows of the table `stem`.
    pub fn shard_place(self, stem: &str, part: &str) -> String {
        format!("{stem}{}/{part}/part.{}", self.shard_suffix(), self.key())
    }

    /// The format `output.formats` names `key`.
    pub fn parse(key: &str) -> Result<TableFormat, String> {
        TableFormat::ALL
            .into_iter()
            .find(|f| f.key() == key)
            .ok_or_else(|| {
                let keys: Vec<String> = TableFormat::ALL
                    .iter()
                    .map(|f| format!("{:?}", f.key()))
                    .collect();
                format!(
                    "unknown format {key:?}, expected {}",
                    crate::quote::or_list(&keys)
                )
            })
    }
}

/// A set of table formats: which ones a run writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Formats(u32);

impl Formats {
    pub const NONE: Formats = Formats(0);

    /// Every format.
    pub fn all() -> Formats {
        TableFormat::ALL
            .into_iter()
            .fold(Formats::NONE, Formats::with)
    }

    pub fn with(self, format: TableFormat) -> Formats {
        Formats(self.0 | 1 << format as u32)
    }

    pub fn has(self, format: TableFormat) -> bool {
        self.0 & (1 << format as u32) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The formats in the set, in the order of [`TableFormat::ALL`].
    pub fn iter(self) -> impl Iterator<Item = TableFormat> {
        TableFormat::ALL.into_iter().filter(move |&f| self.has(f))
    }
}

/// `parquet, csv`, or `none`.
impl fmt::Display for Formats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let keys: Vec<&str> = self.iter().map(TableFormat::key).collect();
        f.write_str(&keys.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_places_and_sets() {
        assert_eq!(TableFormat::Parquet.file_name("cells"), "cells.parquet");
        assert_eq!(TableFormat::of_file("pairs.csv"), Some(TableFormat::Csv));
        assert_eq!(
            TableFormat::Csv.shard_place("cells", "shard=2"),
            "cells-csv/shard=2/part.csv"
        );
        assert_eq!(
            TableFormat::parse("xlsx").unwrap_err(),
            "unknown format \"xlsx\", expected \"parquet\" or \"csv\""
        );
        assert_eq!(Formats::all().to_string(), "parquet, csv");
        assert_eq!(Formats::NONE.with(TableFormat::Csv).to_string(), "csv");
        assert_eq!(Formats::NONE.to_string(), "none");
    }
}
