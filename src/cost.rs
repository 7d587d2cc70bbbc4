//! Cost models: the size of a text, and of the separator between two records of a context.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the size of a record is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CostModel {
    /// Unicode scalar values, as Python's `len()` counts a `str` (not UTF-8 bytes).
    #[default]
    Chars,
    /// UTF-8 bytes.
    Bytes,
    /// `ceil(chars / 4)` per record, a common rule of thumb for tokens.
    ApproxTokens,
}

impl CostModel {
    pub const NAMES: [&'static str; 3] = ["chars", "bytes", "approx-tokens"];

    /// The cost of one text.
    pub fn cost(self, text: &str) -> u64 {
        match self {
            CostModel::Chars => text.chars().count() as u64,
            CostModel::Bytes => text.len() as u64,
            CostModel::ApproxTokens => (text.chars().count() as u64).div_ceil(4),
        }
    }

    /// The cost of the gap between two records of a context. Records are joined by `"\n"`,
    /// which is one char and one byte; under `approx-tokens` the newline is folded into the
    /// per-record rounding up, so the gap is free.
    pub fn separator(self) -> u64 {
        match self {
            CostModel::Chars | CostModel::Bytes => 1,
            CostModel::ApproxTokens => 0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CostModel::Chars => "chars",
            CostModel::Bytes => "bytes",
            CostModel::ApproxTokens => "approx-tokens",
        }
    }
}

impl fmt::Display for CostModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CostModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "chars" => Ok(CostModel::Chars),
            "bytes" => Ok(CostModel::Bytes),
            "approx-tokens" => Ok(CostModel::ApproxTokens),
            _ => Err(format!(
                "unknown cost model {s:?}, expected one of {}",
                CostModel::NAMES.join(", ")
            )),
        }
    }
}

/// The cost of texts joined by the model's separator (0 for no texts).
pub fn joined_cost<'a>(model: CostModel, texts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut n = 0u64;
    let mut sum = 0u64;
    for t in texts {
        sum += model.cost(t);
        n += 1;
    }
    sum + model.separator() * n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_japanese_characters_cost_ten_chars_and_thirty_bytes() {
        let text = "日本語のテキストです";
        assert_eq!(text.chars().count(), 10);
        assert_eq!(CostModel::Chars.cost(text), 10);
        assert_eq!(CostModel::Bytes.cost(text), 30);
        assert_eq!(CostModel::ApproxTokens.cost(text), 3);
    }

    #[test]
    fn joined_cost_counts_one_separator_per_gap() {
        assert_eq!(joined_cost(CostModel::Chars, []), 0);
        assert_eq!(joined_cost(CostModel::Chars, ["abc"]), 3);
        assert_eq!(
            joined_cost(CostModel::Chars, ["abc", "de", "é"]),
            3 + 2 + 1 + 2
        );
        assert_eq!(joined_cost(CostModel::ApproxTokens, ["abcde", "a"]), 2 + 1);
    }

    #[test]
    fn names_parse_back() {
        for name in CostModel::NAMES {
            assert_eq!(name.parse::<CostModel>().unwrap().as_str(), name);
        }
        assert!("tokens?"
            .parse::<CostModel>()
            .unwrap_err()
            .contains("expected one of"));
    }
}
