//! The in-memory entry point gives the very tables a sweep publishes.

use crate::common::*;
use polars::prelude::{DataFrame, ParquetReader, SerReader};
use std::path::Path;

fn read(path: &Path) -> DataFrame {
    ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

const CELLS: &str = r#"
name = "mem"
seed = 5
replicates = 2
[histories]
generate = { count = 9, records = [10, 40], required_share = 0.25, seed = 2 }
[sweep]
strategies = ["recent", "required", "summary(keep_recent=2)"]
budgets = [30, 60]
false_negative = [0.0, 0.2]
[output]
dir = "out"
"#;

const SESSIONS: &str = r#"
name = "mems"
seed = 5
replicates = 1
[histories]
generate = { count = 4, records = [20, 40], required_share = 0.2, seed = 2 }
[session]
strategies = ["recent", "mask"]
windows = [800]
ratios = [0.7]
[output]
dir = "out"
"#;

#[test]
fn in_memory_tables_equal_the_published_ones() {
    for (text, rows, groups) in [
        (CELLS, "cells.parquet", 3 * 2 * 2),
        (SESSIONS, "sessions.parquet", 2),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e.toml"), text).unwrap();
        let o = ctxlab(dir.path(), &["sweep", "e.toml", "-q"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let exp = ctxlab::experiment::parse_any("e.toml", text, &[]).unwrap();
        let tables = ctxlab::run_in_memory(&exp, Some(1)).unwrap();
        let published = read(&dir.path().join("out").join(rows));
        assert!(tables.rows.equals_missing(&published), "{rows} differs");
        assert!(tables
            .summary
            .equals_missing(&read(&dir.path().join("out/summary.parquet"))));
        assert_eq!(tables.summary.height(), groups);
    }
}
