//! An external program's failure in a sweep: which cell or session it was, from the rows the
//! failing evaluation made (see [`crate::strategy::external::failure`]), and the first
//! failure of a chunk, which stops the run. The rows of a failed chunk are never written:
//! the run ends with the error, through the same path as any other, and nothing is published.

use crate::cells::{CellRow, Grid};
use crate::error::Error;
use crate::sessions::{SessionGrid, SessionRow};
use crate::strategy::external::{is_external, Failure};
use crate::tables::numbers::budget;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The failure of the lowest history of a chunk, and whether there was one (read by every
/// worker before it starts a history: after a failure the chunk's other histories are
/// skipped).
#[derive(Default)]
pub(crate) struct FirstFailure {
    failed: AtomicBool,
    first: Mutex<Option<(usize, String)>>,
}

impl FirstFailure {
    pub fn happened(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Records the failure of history `index`, described as `message`.
    pub fn record(&self, index: usize, message: String) {
        self.failed.store(true, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.as_ref().is_none_or(|(at, _)| index < *at) {
            *first = Some((index, message));
        }
    }

    /// The error to stop the run with, if a history failed.
    pub fn error(&self) -> Option<Error> {
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        first.as_ref().map(|(_, m)| Error::External(m.clone()))
    }
}

/// The message of `failure` in the cells `rows` of history `name` (index `index`): the
/// `failure.call`-th cell of an external strategy among them.
pub fn cell_failure(
    grid: &Grid,
    index: usize,
    name: &str,
    rows: &[CellRow],
    f: &Failure,
) -> String {
    let history = format!("history {index} {name:?}");
    let cell = rows
        .iter()
        .filter(|r| is_external(&grid.strategies[usize::from(r.strategy)]))
        .nth(f.call.saturating_sub(1) as usize);
    match cell {
        Some(r) => f.message(&format!(
            "{history}, replicate {}, noise {}, strategy `{}`, keep_recent {}, budget {} % (capacity {})",
            r.replicate,
            grid.noise_labels[usize::from(r.level)],
            grid.labels[usize::from(r.strategy)],
            r.keep_recent,
            budget(grid.budgets[usize::from(r.budget)]),
            r.capacity
        )),
        None => f.message_at(&history),
    }
}

/// The message of `failure` in the sessions `rows` of history `name` (index `index`): the
/// session of an external strategy whose compactions reach the `failure.call`-th.
pub fn session_failure(
    grid: &SessionGrid,
    index: usize,
    name: &str,
    rows: &[SessionRow],
    f: &Failure,
) -> String {
    let history = format!("history {index} {name:?}");
    let mut before = 0u64;
    for r in rows
        .iter()
        .filter(|r| is_external(&grid.strategies[usize::from(r.key.strategy)]))
    {
        let compactions = u64::from(r.metrics.run.compactions);
        if before + compactions >= f.call {
            let cfg = grid.config(r.coordinates());
            return f.message(&format!(
                "{history}, replicate {}, noise {}, strategy `{}`, window {}, ratio {}, note_rate {}, compaction {} (capacity {}, keep_recent {})",
                r.key.replicate,
                grid.noise_labels[usize::from(r.key.level)],
                grid.labels[usize::from(r.key.strategy)],
                cfg.window,
                grid.ratios[usize::from(r.key.ratio)],
                grid.note_rates[usize::from(r.key.note_rate)],
                f.call - before,
                f.capacity,
                f.keep_recent
            ));
        }
        before += compactions;
    }
    f.message_at(&history)
}
