//! The CSV `ctxlab calibrate --per-call` prints: every recorded model call of every run, its
//! estimated context size beside the size the provider reported (`crate::calibrate`).

use super::Table;

/// One model call: estimated and recorded context size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallSize {
    pub estimated: u64,
    pub recorded: u64,
}

impl CallSize {
    /// `estimated / recorded`; `None` when nothing was recorded (a zero would divide by zero).
    pub fn ratio(&self) -> Option<f64> {
        (self.recorded > 0).then(|| self.estimated as f64 / self.recorded as f64)
    }
}

/// The calls of one run (its name the grid), each row a call numbered from 1 and its sizes.
pub fn table() -> Table<String, (u64, CallSize)> {
    Table::new("call_sizes")
        .text("run", |run: &String, _, _: &(u64, CallSize)| run)
        .whole("call", |_, (call, _)| *call)
        .whole("estimated", |_, (_, size)| size.estimated)
        .whole("recorded", |_, (_, size)| size.recorded)
}
