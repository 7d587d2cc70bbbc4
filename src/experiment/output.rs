//! `[output]` and `[compare]`, the tables every experiment file may have: where the tables go,
//! in which formats, and the strategy the comparison is against.

use crate::formats::TableFormat;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[compare]`: paired comparisons against one strategy.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompareFile {
    /// The baseline strategy, one of the swept ones (a spec string or table): the sweep then
    /// writes `compare.parquet` / `compare.csv`, every strategy minus it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<toml::Value>,
}

impl CompareFile {
    pub(crate) fn is_empty(&self) -> bool {
        self.baseline.is_none()
    }
}

/// `[output]`: where the tables go and in which formats.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputFile {
    /// Absent: `results/<name>`.
    pub dir: Option<PathBuf>,
    #[serde(default = "default_formats")]
    pub formats: Vec<String>,
    /// The formats of the rows table (`cells` or `sessions`) alone, when they differ from
    /// `formats` (absent: `formats`): a large cells table in Parquet only, say, with the small
    /// tables in both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_formats: Option<Vec<String>>,
}

impl Default for OutputFile {
    fn default() -> Self {
        OutputFile {
            dir: None,
            formats: default_formats(),
            rows_formats: None,
        }
    }
}

fn default_formats() -> Vec<String> {
    TableFormat::ALL.map(|f| f.key().to_string()).to_vec()
}
