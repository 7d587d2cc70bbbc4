//! The CSV `ctxlab session --format csv` prints for a scripted trace, one row per agent call;
//! its columns open the per-call CSV of a replay too (`session_calls`).

use super::Table;
use crate::session::{CallRow, ScriptRow};

/// What the scripted columns read of a call, scripted or replayed.
pub trait ScriptedCall {
    /// 1-based agent call number.
    fn call(&self) -> u32;
    /// The call's input + output.
    fn usage(&self) -> u64;
    /// The usage counter after the call.
    fn cumulative(&self) -> u64;
    /// Whether a compaction ran just before the call.
    fn compaction_before(&self) -> bool;
}

impl ScriptedCall for ScriptRow {
    fn call(&self) -> u32 {
        self.call
    }
    fn usage(&self) -> u64 {
        self.usage
    }
    fn cumulative(&self) -> u64 {
        self.cumulative
    }
    fn compaction_before(&self) -> bool {
        self.compaction_before
    }
}

impl ScriptedCall for CallRow {
    fn call(&self) -> u32 {
        self.call
    }
    fn usage(&self) -> u64 {
        CallRow::usage(self)
    }
    fn cumulative(&self) -> u64 {
        self.cumulative
    }
    fn compaction_before(&self) -> bool {
        self.compaction_before
    }
}

/// The scripted columns, in table order.
pub fn columns<R: ScriptedCall + 'static>(t: Table<(), R>) -> Table<(), R> {
    t.whole("call", |_, r| u64::from(r.call()))
        .whole("usage", |_, r| r.usage())
        .whole("cumulative", |_, r| r.cumulative())
        .flag("compaction_before", |_, r| r.compaction_before())
}

/// The scripted trace's table, column by column.
pub fn table() -> Table<(), ScriptRow> {
    columns(Table::new("session_script"))
}
