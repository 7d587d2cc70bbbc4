//! Limits on the size of an experiment, checked before anything is allocated, so an
//! impossible size (`--set replicates=4294967295`) is one clear error rather than an abort,
//! a wrap-around or a run that fills the disk. Each message names the key, the figure and what
//! to do; README "Limits" lists them.
//!
//! - An axis holds at most [`MAX_AXIS`] values, and the noise levels (false-negative ×
//!   false-positive rates, plus the models of `noise`) as many: rows store their axis indices
//!   as `u16`.
//! - At most [`MAX_REPLICATES`] replicates.
//! - At most [`MAX_CELLS_PER_HISTORY`] cells (or sessions) per history: a history's rows are
//!   computed together, and the grid's index arithmetic stays far inside `u64`.
//! - The whole sweep's cells are checked by the runner against `--max-cells`
//!   ([`DEFAULT_MAX_CELLS`] by default), whose product is computed with checked arithmetic.

use crate::error::InputError;

/// Bytes of an experiment file: a real one is a few kilobytes, and the TOML parser needs
/// several times a file's size in memory.
pub const MAX_EXPERIMENT_BYTES: u64 = 4 << 20;

/// Values per axis: rows keep axis indices as `u16`.
pub const MAX_AXIS: usize = u16::MAX as usize;

/// Replicates per history (noise draws); a million would already be a terabyte of rows.
pub const MAX_REPLICATES: u32 = 100_000;

/// Cells (or sessions) of one history.
pub const MAX_CELLS_PER_HISTORY: u64 = 1 << 32;

/// Cells (or sessions) of a whole sweep, unless `--max-cells` says otherwise: about a
/// terabyte of rows at ~100 bytes each.
pub const DEFAULT_MAX_CELLS: u64 = 10_000_000_000;

/// Checks the lengths of an experiment's axes (`(key, length)`) and its cells per history,
/// given its number of noise levels (checked by [`super::noise_axis`]).
pub fn check_axes(
    origin: &str,
    axes: &[(&str, usize)],
    levels: usize,
    replicates: u32,
) -> Result<(), InputError> {
    for &(key, len) in axes {
        if len > MAX_AXIS {
            return Err(InputError::key(
                origin,
                key,
                format!(
                    "{len} values exceed ctxlab's limit of {MAX_AXIS} values per axis (README, \"Limits\"); split the axis over several experiments"
                ),
            ));
        }
    }
    let per_history = axes
        .iter()
        .map(|&(_, len)| len as u64)
        .chain([levels as u64, u64::from(replicates)])
        .try_fold(1u64, |acc, n| acc.checked_mul(n))
        .filter(|&n| n <= MAX_CELLS_PER_HISTORY);
    if per_history.is_none() {
        let keys: Vec<&str> = axes.iter().map(|&(k, _)| k).collect();
        return Err(InputError::key(
            origin,
            keys.join(" × "),
            format!(
                "replicates × noise levels × these axes give more than {MAX_CELLS_PER_HISTORY} cells per history, ctxlab's limit (README, \"Limits\"); shorten the axes or split the experiment"
            ),
        ));
    }
    Ok(())
}
