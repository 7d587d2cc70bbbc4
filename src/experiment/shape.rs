//! Shapes serde does not check in an experiment table.
//!
//! - serde's derived structs also read an array by position, so
//!   `--set histories.generate=[3,[5,9],0.2]` would pass for a table. The check here
//!   serialises what was read back to TOML and looks for a place where the input had an array
//!   and the result a table: that table was read by position.
//! - `-0.0` and `0.0` are one value; an axis must not hold both as two.

use serde::Serialize;

/// What a table read by position is told.
pub const READ_BY_POSITION: &str = "found an array where a table belongs: keys are read by name, not by position (write `{ key = value, ... }`)";

/// Replaces every `-0.0` by `0.0`.
pub fn positive_zeros(value: &mut toml::Value) {
    match value {
        toml::Value::Float(f) if *f == 0.0 => *f = 0.0,
        toml::Value::Array(a) => a.iter_mut().for_each(positive_zeros),
        toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| positive_zeros(v)),
        _ => {}
    }
}

/// The dotted key of the first table that `read` took from an array of `input`, if any.
pub fn read_by_position<T: Serialize>(input: &toml::Value, read: &T) -> Option<String> {
    let back = toml::Value::try_from(read).ok()?;
    first_positional(input, &back, String::new())
}

fn first_positional(input: &toml::Value, back: &toml::Value, key: String) -> Option<String> {
    use toml::Value::{Array, Table};
    match (input, back) {
        (Array(_), Table(_)) => Some(key),
        (Table(a), Table(b)) => a.iter().find_map(|(k, v)| {
            let key = if key.is_empty() {
                k.clone()
            } else {
                format!("{key}.{k}")
            };
            b.get(k).and_then(|w| first_positional(v, w, key))
        }),
        (Array(a), Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (v, w))| first_positional(v, w, format!("{key}[{i}]"))),
        _ => None,
    }
}
