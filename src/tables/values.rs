//! One column's values as a frame reads them, built straight into the arrays polars takes over:
//! a value is written once, where it stays. Read first into `Vec<Option<f64>>` (16 bytes a
//! row) or `Vec<&str>` and then copied into polars' arrays, a 2¹⁸-row group held every column
//! twice (the main job's largest allocations after its rows).
//!
//! The arrays are the ones polars' own constructors build (`Column::new` from a slice of
//! options, of strings, of flags): a null slot holds the type's zero, and a column without a
//! null has no validity mask, so the Parquet bytes are the same.

use super::{Get, Names};
use polars::prelude::{
    BooleanChunked, Column as PolarsColumn, Float64Chunked, IntoColumn, StringChunked,
    UInt64Chunked,
};
use polars_arrow::array::{BooleanArray, MutableBinaryViewArray};
use polars_arrow::bitmap::MutableBitmap;
use polars_arrow::datatypes::ArrowDataType;

pub(super) enum Values {
    Text(MutableBinaryViewArray<str>),
    Whole(Vec<u64>),
    OptWhole(Nullable<u64>),
    Real(Vec<f64>),
    OptReal(Nullable<f64>),
    Flag(MutableBitmap),
}

/// Values with a validity mask, as polars keeps them.
pub(super) struct Nullable<T> {
    values: Vec<T>,
    valid: MutableBitmap,
    nulls: usize,
}

impl<T: Copy + Default> Nullable<T> {
    fn with_capacity(rows: usize) -> Self {
        Nullable {
            values: Vec::with_capacity(rows),
            valid: MutableBitmap::with_capacity(rows),
            nulls: 0,
        }
    }

    fn extend(&mut self, values: impl Iterator<Item = Option<T>>) {
        for value in values {
            self.values.push(value.unwrap_or_default());
            self.valid.push(value.is_some());
            self.nulls += usize::from(value.is_none());
        }
    }

    /// The values and, where one is null, the mask.
    fn into_parts(self) -> (Vec<T>, Option<polars_arrow::bitmap::Bitmap>) {
        let mask = (self.nulls > 0).then(|| self.valid.into());
        (self.values, mask)
    }
}

impl Values {
    pub(super) fn for_column<G, R>(get: &Get<G, R>, rows: usize) -> Self {
        match get {
            Get::Text(_) => Values::Text(MutableBinaryViewArray::with_capacity(rows)),
            Get::Whole(_) => Values::Whole(Vec::with_capacity(rows)),
            Get::OptWhole(_) => Values::OptWhole(Nullable::with_capacity(rows)),
            Get::Real(_) | Get::Percent(_) => Values::Real(Vec::with_capacity(rows)),
            Get::OptReal(_) => Values::OptReal(Nullable::with_capacity(rows)),
            Get::Flag(_) => Values::Flag(MutableBitmap::with_capacity(rows)),
        }
    }

    /// Appends the column's values of `rows`.
    pub(super) fn read<G, R>(&mut self, get: &Get<G, R>, grid: &G, names: Names, rows: &[R]) {
        match (self, get) {
            (Values::Text(v), Get::Text(f)) => {
                for r in rows {
                    v.push_value_ignore_validity(f(grid, names, r));
                }
            }
            (Values::Whole(v), Get::Whole(f)) => v.extend(rows.iter().map(|r| f(grid, r))),
            (Values::OptWhole(v), Get::OptWhole(f)) => v.extend(rows.iter().map(|r| f(grid, r))),
            (Values::Real(v), Get::Real(f) | Get::Percent(f)) => {
                v.extend(rows.iter().map(|r| f(grid, r)))
            }
            (Values::OptReal(v), Get::OptReal(f)) => v.extend(rows.iter().map(|r| f(grid, r))),
            (Values::Flag(v), Get::Flag(f)) => v.extend(rows.iter().map(|r| f(grid, r))),
            _ => unreachable!("values made for their column"),
        }
    }

    /// The polars column, taking the values over (no copy).
    pub(super) fn into_column(self, name: &str) -> PolarsColumn {
        let name = name.into();
        match self {
            Values::Text(v) => StringChunked::with_chunk(name, v.freeze()).into_column(),
            Values::Whole(v) => UInt64Chunked::from_vec(name, v).into_column(),
            Values::OptWhole(v) => {
                let (values, mask) = v.into_parts();
                UInt64Chunked::from_vec_validity(name, values, mask).into_column()
            }
            Values::Real(v) => Float64Chunked::from_vec(name, v).into_column(),
            Values::OptReal(v) => {
                let (values, mask) = v.into_parts();
                Float64Chunked::from_vec_validity(name, values, mask).into_column()
            }
            Values::Flag(v) => {
                let array = BooleanArray::new(ArrowDataType::Boolean, v.into(), None);
                BooleanChunked::with_chunk(name, array).into_column()
            }
        }
    }
}
