//! Reading a published table back, checked against its declaration.
//!
//! Every column the declaration names is checked (present, of its type, no null where the
//! declaration allows none, finite numbers) before any row is built, so a damaged table is one
//! error naming the file and the column, and nothing downstream sees a half-read table.

use super::{Table, Type};
use crate::error::InputError;
use polars::prelude::{DataFrame, DataType, ParquetReader, SerReader};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The error for an output of `ctxlab sweep` that cannot be opened: a missing file says what
/// should have been there.
pub fn sweep_output_error(path: &Path, e: std::io::Error, what: &str) -> InputError {
    if e.kind() == std::io::ErrorKind::NotFound {
        InputError::File {
            path: path.into(),
            message: format!("not found: expected the {what} `ctxlab sweep` writes"),
        }
    } else {
        InputError::io(path, e)
    }
}

/// A Parquet table read whole.
pub fn read_frame(path: &Path) -> Result<DataFrame, InputError> {
    let file = File::open(path).map_err(|e| sweep_output_error(path, e, "table"))?;
    ParquetReader::new(file)
        .finish()
        .map_err(|e| InputError::File {
            path: path.into(),
            message: format!("not a readable Parquet table: {e}"),
        })
}

fn matches(ty: Type, dtype: &DataType) -> bool {
    matches!(
        (ty, dtype),
        (Type::Text, DataType::String)
            | (Type::Whole, DataType::UInt64)
            | (Type::Real, DataType::Float64)
            | (Type::Flag, DataType::Boolean)
    )
}

/// A table read back and checked against its declaration, with typed access by column name.
pub struct Checked {
    pub path: PathBuf,
    pub frame: DataFrame,
    /// The declared columns, in order: a reader reads only these, so a name it spells that
    /// the declaration does not hold is a bug caught on the first read, not a silently
    /// different column an extra one in the file happened to supply.
    declared: Arc<[(String, Type)]>,
}

impl Checked {
    /// Reads `path` and checks it against `table`; `nonempty` refuses a table without rows.
    pub fn read<G, R>(
        path: &Path,
        table: &Table<G, R>,
        nonempty: bool,
    ) -> Result<Checked, InputError> {
        Checked::from_frame(read_frame(path)?, path, table, nonempty)
    }

    /// Checks a frame already read from `path` against `table`.
    pub fn from_frame<G, R>(
        frame: DataFrame,
        path: &Path,
        table: &Table<G, R>,
        nonempty: bool,
    ) -> Result<Checked, InputError> {
        check(&frame, path, table, nonempty)?;
        Ok(Checked {
            path: path.to_path_buf(),
            frame,
            declared: table
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.ty()))
                .collect(),
        })
    }

    /// The column `name`, which the declaration must hold (the check made it present).
    fn column(&self, name: &str) -> &polars::prelude::Column {
        assert!(
            self.declared.iter().any(|(d, _)| d == name),
            "column `{name}` is read but not declared in src/tables/"
        );
        self.frame.column(name).expect("checked column")
    }

    pub fn height(&self) -> usize {
        self.frame.height()
    }

    // The checks made every accessor below succeed for a declared column; `expect` says so.
    pub fn text(&self, name: &str) -> Vec<String> {
        let ca = self.column(name).str().expect("checked type");
        ca.iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect()
    }

    pub fn whole(&self, name: &str) -> Vec<u64> {
        self.opt_whole(name)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    pub fn opt_whole(&self, name: &str) -> Vec<Option<u64>> {
        let ca = self.column(name).u64().expect("checked type");
        ca.iter().collect()
    }

    pub fn real(&self, name: &str) -> Vec<f64> {
        self.opt_real(name)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    pub fn opt_real(&self, name: &str) -> Vec<Option<f64>> {
        let ca = self.column(name).f64().expect("checked type");
        ca.iter().collect()
    }

    fn opt_flag(&self, name: &str) -> Vec<Option<bool>> {
        let ca = self.column(name).bool().expect("checked type");
        ca.iter().collect()
    }

    /// Every row, each holding every declared column's value: a reader names the columns it
    /// uses where it uses them, so a column added to the declaration is read with no edit here.
    pub fn rows(&self) -> Vec<ReadRow> {
        let columns: Vec<Vec<Cell>> = self
            .declared
            .iter()
            .map(|(name, ty)| match ty {
                Type::Text => self.text(name).into_iter().map(Cell::Text).collect(),
                Type::Whole => self.opt_whole(name).into_iter().map(Cell::Whole).collect(),
                Type::Real => self.opt_real(name).into_iter().map(Cell::Real).collect(),
                Type::Flag => self.opt_flag(name).into_iter().map(Cell::Flag).collect(),
            })
            .collect();
        let mut columns: Vec<std::vec::IntoIter<Cell>> =
            columns.into_iter().map(Vec::into_iter).collect();
        (0..self.height())
            .map(|_| ReadRow {
                declared: Arc::clone(&self.declared),
                cells: columns
                    .iter_mut()
                    .map(|c| c.next().expect("a value per row"))
                    .collect(),
            })
            .collect()
    }
}

/// One value of a row read back; `None` is a null.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Text(String),
    Whole(Option<u64>),
    Real(Option<f64>),
    Flag(Option<bool>),
}

/// One row of a checked table: every declared column's value, found by the column's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRow {
    declared: Arc<[(String, Type)]>,
    cells: Vec<Cell>,
}

impl ReadRow {
    /// The value of column `name`, which the declaration must hold (as for [`Checked`]'s
    /// accessors, a name it does not hold is a bug in the reader).
    fn cell(&self, name: &str) -> &Cell {
        let at = self
            .declared
            .iter()
            .position(|(d, _)| d == name)
            .unwrap_or_else(|| panic!("column `{name}` is read but not declared in src/tables/"));
        &self.cells[at]
    }

    /// A reader asking a column for a type the declaration does not give it: a bug.
    fn mistyped(&self, name: &str, asked: Type) -> ! {
        let (_, ty) = self
            .declared
            .iter()
            .find(|(d, _)| d == name)
            .expect("found above");
        panic!(
            "column `{name}` is declared {}, read as {}",
            ty.name(),
            asked.name()
        )
    }

    pub fn text(&self, name: &str) -> &str {
        match self.cell(name) {
            Cell::Text(v) => v,
            _ => self.mistyped(name, Type::Text),
        }
    }

    /// A whole number; a null reads as 0, as [`Checked::whole`] reads it.
    pub fn whole(&self, name: &str) -> u64 {
        self.opt_whole(name).unwrap_or_default()
    }

    pub fn opt_whole(&self, name: &str) -> Option<u64> {
        match self.cell(name) {
            Cell::Whole(v) => *v,
            _ => self.mistyped(name, Type::Whole),
        }
    }

    /// A number; a null reads as 0, as [`Checked::real`] reads it.
    pub fn real(&self, name: &str) -> f64 {
        self.opt_real(name).unwrap_or_default()
    }

    pub fn opt_real(&self, name: &str) -> Option<f64> {
        match self.cell(name) {
            Cell::Real(v) => *v,
            _ => self.mistyped(name, Type::Real),
        }
    }

    pub fn flag(&self, name: &str) -> bool {
        match self.cell(name) {
            Cell::Flag(v) => v.unwrap_or_default(),
            _ => self.mistyped(name, Type::Flag),
        }
    }
}

/// Checks that `df` has every column of `table` (name, type, nulls only where declared),
/// finite numbers, and (with `nonempty`) at least one row; the error names the file, the
/// column and the row.
pub fn check<G, R>(
    df: &DataFrame,
    path: &Path,
    table: &Table<G, R>,
    nonempty: bool,
) -> Result<(), InputError> {
    let fail = |message: String| InputError::File {
        path: path.into(),
        message,
    };
    for c in &table.columns {
        let (name, ty) = (c.name.as_str(), c.ty());
        let column = df.column(name).map_err(|_| {
            fail(format!(
                "column `{name}` is missing (expected type {})",
                ty.name()
            ))
        })?;
        if !matches(ty, column.dtype()) {
            return Err(fail(format!(
                "column `{name}` has type {:?}, expected {}",
                column.dtype(),
                ty.name()
            )));
        }
        if !c.nullable() && column.null_count() > 0 {
            let row = (0..column.len())
                .find(|&i| column.get(i).map(|v| v.is_null()).unwrap_or(false))
                .unwrap_or(0);
            return Err(fail(format!(
                "column `{name}` row {}: null, expected a {} value",
                row + 1,
                ty.name()
            )));
        }
        if ty == Type::Real {
            let ca = column.f64().expect("checked type");
            if let Some(row) = ca.iter().position(|v| v.is_some_and(|x| !x.is_finite())) {
                return Err(fail(format!(
                    "column `{name}` row {}: not a finite number",
                    row + 1
                )));
            }
        }
    }
    if nonempty && df.height() == 0 {
        return Err(fail("holds no rows: nothing to draw".into()));
    }
    Ok(())
}
