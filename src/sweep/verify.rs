//! What `merge` checks in one shard state before trusting it: the numbers it holds against
//! each other and against the split, and its rows files against its row counts. Every
//! failure is one error naming the shard and the file.

use super::checkpoint::ShardState;
use super::kind::SweepGrid;
use crate::error::refuse;
use crate::error::{At, Result};
use crate::formats::{Formats, TableFormat};
use std::path::Path;

/// The longest run a shard may claim, in seconds (a century): beyond it the figure is corrupt.
const MAX_WALL_SECONDS: f64 = 3.2e9;

/// Checks the numbers of the state at `path` (shard `i` of the split): wall time, row
/// counts against its histories and the grid, its summary.
pub fn numbers<G: SweepGrid>(path: &Path, s: &ShardState, grid: &G) -> Result<()> {
    let at = || format!("{}: shard {}", path.display(), s.shard.0);
    if !(s.wall_seconds.is_finite() && (0.0..=MAX_WALL_SECONDS).contains(&s.wall_seconds)) {
        refuse!(
            "{}: `wall_seconds` is {}; expected a duration from 0 to {MAX_WALL_SECONDS} s",
            at(),
            s.wall_seconds
        );
    }
    let histories = (s.histories.1 - s.histories.0) as u64;
    let Some(expected) = histories.checked_mul(grid.rows_per_history() as u64) else {
        refuse!(
            "{}: {histories} histories hold more rows than 2^64 − 1",
            at()
        );
    };
    if s.rows != expected {
        refuse!(
            "{}: its state counts {} rows where its histories hold {expected}",
            at(),
            s.rows
        );
    }
    if s.rows_written > s.rows {
        refuse!(
            "{}: `rows_written` {} exceeds its {} rows",
            at(),
            s.rows_written,
            s.rows
        );
    }
    if let Err(e) = s.summary.check(histories, s.rows) {
        refuse!("{}: its summary is not one a run writes: {e}", at());
    }
    Ok(())
}

/// The rows files shard `s` may publish, one per format of the experiment.
pub fn expected_files(stem: &str, s: &ShardState, formats: Formats) -> Vec<String> {
    let part = format!("shard={}", s.shard.0);
    formats.iter().map(|f| f.shard_place(stem, &part)).collect()
}

/// The checksum of a shard's rows file: SHA-256 over the experiment's hash, the shard
/// (`i/n`) and the file's bytes, so a file another shard or another experiment wrote does
/// not pass for this one's even when its rows count the same.
pub fn checksum(path: &Path, config_hash: &str, shard: (usize, usize)) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read as _;
    let mut h = Sha256::new();
    h.update(
        format!(
            "ctxlab shard rows v1\n{config_hash}\n{}/{}\n",
            shard.0, shard.1
        )
        .as_bytes(),
    );
    let mut f = std::fs::File::open(path).at(path, "read")?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).at(path, "read")?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks that the state lists only files a shard publishes (all of them when it wrote rows),
/// and that each is there and holds the rows `expected` gives it (the rows table's files
/// `rows_written`, the events table's `events_written`).
pub fn files(dir: &Path, path: &Path, s: &ShardState, expected: &[(String, u64)]) -> Result<()> {
    let mut listed = s.files.clone();
    listed.sort();
    let mut want: Vec<String> = expected.iter().map(|(f, _)| f.clone()).collect();
    want.sort();
    let foreign = listed.iter().any(|f| !want.contains(f));
    if foreign || (s.rows_written > 0 && listed != want) {
        refuse!(
            "{}: shard {} lists the files {:?} where it publishes {:?}",
            path.display(),
            s.shard.0,
            listed
                .iter()
                .map(|f| crate::quote::cut(f, 80))
                .collect::<Vec<_>>(),
            want
        );
    }
    for f in &listed {
        let file = dir.join(f);
        if !file.is_file() {
            refuse!(
                "{}: missing; shard {}'s state lists it (re-run the shard)",
                file.display(),
                s.shard.0
            );
        }
        let Some(format) = TableFormat::of_file(f) else {
            refuse!("{}: not a table of a known format", file.display());
        };
        let found = match format.rows_in(&file) {
            Ok(n) => n,
            Err(e) => refuse!("shard {}: {e} (re-run the shard)", s.shard.0),
        };
        let rows = expected
            .iter()
            .find(|(name, _)| name == f)
            .map_or(s.rows_written, |&(_, n)| n);
        if found != rows {
            refuse!(
                "{}: holds {found} rows where shard {}'s state says {rows} (re-run the shard)",
                file.display(),
                s.shard.0
            );
        }
        let Some((_, recorded)) = s.checksums.iter().find(|(name, _)| name == f) else {
            refuse!(
                "{}: shard {}'s state records no checksum for {f} (written by an earlier ctxlab, or edited); re-run the shard",
                path.display(),
                s.shard.0
            );
        };
        if checksum(&file, &s.config_hash, s.shard)? != *recorded {
            refuse!(
                "{}: its bytes are not the ones shard {} wrote for this experiment (their checksum differs from its state's): the file was replaced, or comes from another shard or experiment; re-run the shard",
                file.display(),
                s.shard.0
            );
        }
    }
    Ok(())
}
