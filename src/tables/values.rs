//! One column's values as a frame reads them, built straight into the arrays polars takes over:
//! a value is written once, where it stays. Read first into `Vec<Option<f64>>` (16 bytes a
//! row) or `Vec<&str>` and then copied into polars' arrays, a 2¹⁸-row group held every column
//! twice (the main job's largest allocations after its rows).
//!
//! The arrays are the ones polars' own constructors build (`Column::new` from a slice of
//! options, of strings, of flags): a null slot holds the type's zero, and a column without a
//! null has no validity mask, so the Parquet bytes are the same.

use super::get::{Get, Names};
use polars::prelude::{
    BooleanChunked, Column as PolarsColumn, Float64Chunked, IntoColumn, StringChunked,
    UInt64Chunked,
};
use polars_arrow::array::{BooleanArray, MutableBinaryViewArray};
use polars_arrow::bitmap::MutableBitmap;
use polars_arrow::datatypes::ArrowDataType;
use std::sync::Arc;

pub(super) enum Values {
    Text(MutableBinaryViewArray<str>),
    Whole(Vec<u64>),
    OptWhole(Nullable<u64>),
    Real(Vec<f64>),
    OptReal(Nullable<f64>),
    Flag(MutableBitmap),
}

/// Values with their validity, one byte a row while they are read, packed into polars' mask
/// at the end: pushed a bit at a time, reading the nullable columns was 4.5 % of the main
/// job's instructions (callgrind), 0.7 % this way.
pub(super) struct Nullable<T> {
    values: Vec<T>,
    valid: Vec<bool>,
}

impl<T: Copy + Default> Nullable<T> {
    fn with_capacity(rows: usize) -> Self {
        Nullable {
            values: Vec::with_capacity(rows),
            valid: Vec::with_capacity(rows),
        }
    }

    fn extend(&mut self, column: impl Iterator<Item = Option<T>>) {
        for value in column {
            self.values.push(value.unwrap_or_default());
            self.valid.push(value.is_some());
        }
    }

    /// The values and, where one is null, the mask.
    fn into_parts(self) -> (Vec<T>, Option<polars_arrow::bitmap::Bitmap>) {
        let mask = self
            .valid
            .contains(&false)
            .then(|| MutableBitmap::from_trusted_len_iter(self.valid.into_iter()).into());
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
            Get::OptReal(_) | Get::OptPercent(_) => Values::OptReal(Nullable::with_capacity(rows)),
            Get::Flag(_) => Values::Flag(MutableBitmap::with_capacity(rows)),
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

/// Appends a column's values of a block of rows: one call through the declaration per block,
/// the getter inlined in its loop, not one call per row and column (the main job on one
/// thread: 2.3 % fewer instructions with this and the byte-wide validity below, callgrind).
pub(super) type Block<G, R> =
    Box<dyn for<'a> Fn(&'a G, Names<'a>, &'a [R], &mut Values) + Send + Sync>;

/// A type a column's getter returns, and the values it is appended to.
pub(super) trait Columnar: Sized {
    fn extend(values: &mut Values, column: impl Iterator<Item = Self>);
}

macro_rules! columnar {
    ($t:ty, $variant:ident) => {
        impl Columnar for $t {
            fn extend(values: &mut Values, column: impl Iterator<Item = Self>) {
                match values {
                    Values::$variant(v) => v.extend(column),
                    _ => unreachable!("values made for their column"),
                }
            }
        }
    };
}
columnar!(u64, Whole);
columnar!(Option<u64>, OptWhole);
columnar!(f64, Real);
columnar!(Option<f64>, OptReal);
columnar!(bool, Flag);

/// A column's values over a block of rows as the summary reads them, appended to a list: a
/// number, `None` where undefined (flags count as 0 or 1; text has no number).
pub(super) type NumberBlock<G, R> = Box<dyn Fn(&G, &[R], &mut Vec<Option<f64>>) + Send + Sync>;

/// A column's readers over a block of rows: for the frames and for the summary. Each reads
/// the block in one call through the declaration, not one call per row (the summary read a
/// row's measures a call at a time: reading a block per column is 0.965 × the CPU of a
/// 10⁷-cell sweep).
pub(super) struct Readers<G, R> {
    pub(super) values: Block<G, R>,
    pub(super) numbers: NumberBlock<G, R>,
}

/// A type a column's getter returns, as the summary reads it.
pub(super) trait Number: Copy {
    fn number(self) -> Option<f64>;
}

impl Number for u64 {
    fn number(self) -> Option<f64> {
        Some(self as f64)
    }
}

impl Number for Option<u64> {
    fn number(self) -> Option<f64> {
        self.map(|x| x as f64)
    }
}

impl Number for f64 {
    fn number(self) -> Option<f64> {
        Some(self)
    }
}

impl Number for Option<f64> {
    fn number(self) -> Option<f64> {
        self
    }
}

impl Number for bool {
    fn number(self) -> Option<f64> {
        Some(u64::from(self) as f64)
    }
}

/// The block readers of a column whose getter is `f`.
pub(super) fn block<G, R, T, F>(f: Arc<F>) -> Readers<G, R>
where
    T: Columnar + Number,
    F: Fn(&G, &R) -> T + Send + Sync + 'static,
{
    let numbers = Arc::clone(&f);
    Readers {
        values: Box::new(move |grid, _, rows, values| {
            T::extend(values, rows.iter().map(|r| f(grid, r)))
        }),
        numbers: Box::new(move |grid, rows, out| {
            out.extend(rows.iter().map(|r| numbers(grid, r).number()))
        }),
    }
}

/// The block readers of a text column whose getter is `f`.
pub(super) fn text_block<G, R, F>(f: Arc<F>) -> Readers<G, R>
where
    F: for<'a> Fn(&'a G, Names<'a>, &'a R) -> &'a str + Send + Sync + 'static,
{
    Readers {
        values: Box::new(move |grid, names, rows, values| match values {
            Values::Text(v) => {
                for r in rows {
                    v.push_value_ignore_validity(f(grid, names, r));
                }
            }
            _ => unreachable!("values made for their column"),
        }),
        numbers: Box::new(|_, rows, out| out.resize(out.len() + rows.len(), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As polars' own builder from options: zero in a null slot, a mask only with a null.
    #[test]
    fn nullable_values_are_the_arrays_polars_builds_from_options() {
        let mut with_null = Nullable::with_capacity(3);
        with_null.extend([Some(1.5), None].into_iter());
        with_null.extend([Some(3.0)].into_iter());
        let (values, mask) = with_null.into_parts();
        assert_eq!(values, vec![1.5, 0.0, 3.0]);
        let mask: Vec<bool> = mask.expect("a null").iter().collect();
        assert_eq!(mask, vec![true, false, true]);

        let mut none_null = Nullable::with_capacity(2);
        none_null.extend([Some(7u64), Some(0)].into_iter());
        assert_eq!(none_null.into_parts(), (vec![7, 0], None));
    }
}
