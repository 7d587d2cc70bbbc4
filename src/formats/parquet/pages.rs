//! A rows table's row group as Parquet pages: how each column is encoded, which statistics it
//! keeps, and its pages made and compressed, a column at a time (on any thread). polars'
//! writer makes the same pages from its defaults; the choices below are what a rows table,
//! written 2¹⁶ rows a group, gains from differing (`docs/speed.md`).

use polars::prelude::PolarsResult;
use polars_arrow::array::{Array, ArrayRef, DictionaryArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::datatypes::{ArrowDataType, IntegerType};
use polars_parquet::write::{
    array_to_columns, compress, CompressedPage, Encoding, ParquetType,
    StatisticsOptions, Version, WriteOptions,
};
use std::collections::HashMap;

/// How one column of a rows table is written.
pub(super) struct ColumnPlan {
    type_: ParquetType,
    encodings: Vec<Encoding>,
    options: WriteOptions,
}

impl ColumnPlan {
    pub(super) fn new(type_: ParquetType, dtype: &ArrowDataType, polars_choice: &[Encoding]) -> Self {
        ColumnPlan {
            type_,
            encodings: encoding(dtype, polars_choice),
            // polars' writer's options (its page version and size, the file's codec), spelt out
            // because the pages are made here, with the statistics of [`statistics`].
            options: WriteOptions {
                statistics: statistics(dtype),
                version: Version::V1,
                compression: super::COMPRESSION.into(),
                data_page_size: None,
            },
        }
    }
}

/// How a rows table's column is encoded. polars' writer tries a dictionary for every column
/// of every row group, at the price of a pass over its values to decide: a min/max for
/// integers, a cardinality estimate for floats. In the cells table (2¹⁶ rows a group) that
/// decision was a tenth of the run's CPU and bought little:
/// - every float column (shares, costs, noise) was too varied for a dictionary and written
///   plain, so skipping the estimate writes the same bytes;
/// - integers (counts, ids, budgets) are written as deltas, the encoding Parquet has for them:
///   the file grew by 1 % (10⁷ cells, `noise.toml`).
///
/// Text keeps a dictionary ([`text_as_dictionary`] finds it): a history's name repeats on each
/// of its rows.
fn encoding(dtype: &ArrowDataType, polars_choice: &[Encoding]) -> Vec<Encoding> {
    use ArrowDataType as T;
    match dtype {
        T::Int8 | T::Int16 | T::Int32 | T::Int64 => vec![Encoding::DeltaBinaryPacked],
        T::UInt8 | T::UInt16 | T::UInt32 | T::UInt64 => vec![Encoding::DeltaBinaryPacked],
        _ if is_float(dtype) => vec![Encoding::Plain],
        _ => polars_choice.to_vec(),
    }
}

fn is_float(dtype: &ArrowDataType) -> bool {
    use ArrowDataType as T;
    matches!(dtype, T::Float16 | T::Float32 | T::Float64)
}

/// The statistics a rows table's column keeps: polars' (minimum, maximum, null count), but no
/// minimum and maximum of a float column. A row group of a rows table spans many histories,
/// so its floats (shares, costs, noise) range as widely as the whole table's and a filter on
/// them skips no row group: in a 10⁷-cell sweep of `noise.toml` every float column had the
/// same minimum and maximum in all 153 row groups. polars' scan for them (NaN-aware, one value
/// at a time) was 6 % of that run's CPU. Text and integers keep theirs: rows come in history
/// order, so a reader filtering by history or its coordinates skips whole row groups.
fn statistics(dtype: &ArrowDataType) -> StatisticsOptions {
    let float = is_float(dtype);
    StatisticsOptions {
        min_value: !float,
        max_value: !float,
        ..StatisticsOptions::default()
    }
}

/// One column's pages, encoded and compressed: a list per leaf (one for a flat column).
pub(super) fn column_pages(
    array: &ArrayRef,
    column: &ColumnPlan,
) -> PolarsResult<Vec<Vec<CompressedPage>>> {
    let options = column.options;
    let dictionary = text_as_dictionary(array);
    let array = dictionary.as_ref().unwrap_or(array);
    array_to_columns(array, column.type_.clone(), options, &column.encodings)?
        .into_iter()
        .map(|leaf| {
            leaf.map(|page| Ok(compress(page?, Vec::new(), options.compression)?))
                .collect()
        })
        .collect()
}

/// A text column as a dictionary of its values in order of first appearance, the order
/// polars' own dictionary gives them, so the pages are the same. The rows tables' text
/// columns (history, noise level, strategy) hold few values in long runs: a value is looked up
/// only where it differs from the one before, where polars estimates how many distinct values
/// there are and then hashes every one. `None` (polars' way is taken) for any other column, a
/// column with nulls, or one of more than 128 values of which more than a quarter are distinct
/// (where polars may judge a dictionary not worth it).
fn text_as_dictionary(array: &ArrayRef) -> Option<ArrayRef> {
    let text = array.as_any().downcast_ref::<Utf8ViewArray>()?;
    if text.null_count() > 0 {
        return None;
    }
    // polars takes a dictionary for any column of up to 128 values.
    let most = match text.len() {
        n if n <= 128 => n,
        n => n / 4,
    };
    let mut distinct: Vec<&str> = Vec::new();
    let mut key_of: HashMap<&str, u32> = HashMap::new();
    let mut keys: Vec<u32> = Vec::with_capacity(text.len());
    let mut last: Option<(&str, u32)> = None;
    for value in text.values_iter() {
        let key = match last {
            Some((before, key)) if before == value => key,
            _ => {
                let next = u32::try_from(distinct.len()).ok()?;
                let key = *key_of.entry(value).or_insert(next);
                if key == next {
                    if distinct.len() >= most {
                        return None;
                    }
                    distinct.push(value);
                }
                last = Some((value, key));
                key
            }
        };
        keys.push(key);
    }
    let values = Utf8ViewArray::from_slice_values(distinct);
    let dtype = ArrowDataType::Dictionary(
        IntegerType::UInt32,
        Box::new(values.dtype().clone()),
        false,
    );
    let dictionary =
        DictionaryArray::try_new(dtype, PrimitiveArray::from_vec(keys), values.boxed()).ok()?;
    Some(dictionary.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_deltas_floats_plain_text_as_polars_chooses() {
        let dictionary = [Encoding::RleDictionary];
        for t in [ArrowDataType::UInt64, ArrowDataType::Int32, ArrowDataType::UInt8] {
            assert_eq!(encoding(&t, &dictionary), [Encoding::DeltaBinaryPacked]);
        }
        assert_eq!(encoding(&ArrowDataType::Float64, &dictionary), [Encoding::Plain]);
        assert_eq!(encoding(&ArrowDataType::Utf8View, &dictionary), dictionary);
        assert_eq!(encoding(&ArrowDataType::Boolean, &[Encoding::Plain]), [Encoding::Plain]);
    }

    #[test]
    fn floats_keep_no_minimum_or_maximum_the_rest_keep_polars_statistics() {
        let float = statistics(&ArrowDataType::Float64);
        assert!(!float.min_value && !float.max_value && float.null_count);
        for t in [ArrowDataType::UInt64, ArrowDataType::Utf8View, ArrowDataType::Boolean] {
            assert_eq!(statistics(&t), StatisticsOptions::default());
        }
    }

    #[test]
    fn text_becomes_a_dictionary_in_order_of_first_appearance() {
        let text = Utf8ViewArray::from_slice_values(["b", "b", "a", "b", "a long history name!", "a"]);
        let dictionary = text_as_dictionary(&text.boxed()).expect("a few values");
        let dictionary = dictionary
            .as_any()
            .downcast_ref::<DictionaryArray<u32>>()
            .unwrap();
        assert_eq!(dictionary.keys().values().as_slice(), [0, 0, 1, 0, 2, 1]);
        let values = dictionary.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
        let values: Vec<&str> = values.values_iter().collect();
        assert_eq!(values, ["b", "a", "a long history name!"]);

        // More than a quarter of the values distinct, or a null: polars' own way.
        let names: Vec<String> = (0..1000).map(|i| format!("h{}", i % 250)).collect();
        let quarter = Utf8ViewArray::from_slice_values(&names);
        assert!(text_as_dictionary(&quarter.boxed()).is_some());
        let names: Vec<String> = (0..1000).map(|i| format!("h{}", i % 251)).collect();
        let more = Utf8ViewArray::from_slice_values(&names);
        assert!(text_as_dictionary(&more.boxed()).is_none());
        let with_null = Utf8ViewArray::from_slice([Some("a"), None]);
        assert!(text_as_dictionary(&with_null.boxed()).is_none());
        let numbers = PrimitiveArray::from_vec(vec![1u64, 1]);
        assert!(text_as_dictionary(&numbers.boxed()).is_none());
    }

}
