//! Cell sweeps: the grid of a `[sweep]` experiment and the hot loop that evaluates every cell
//! of one history. `ctxlab table` and `ctxlab inspect` evaluate through the same code, so a
//! cell has the same numbers wherever it is computed.

mod eval;
mod grid;
mod reuse;
mod table;

pub use eval::{
    evaluate_cell, evaluate_history, evaluate_replicates, inspect_cell, CellAt, CellRow,
    CellScratch, EvaluatedCell,
};
pub use grid::{Grid, KeepRecentInForce};
pub use table::{table_rows, TableRow};
