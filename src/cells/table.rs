//! The rows of `ctxlab table`: every strategy at every budget on one history, evaluated by the
//! sweep's own hot loop (the history as the sweep's first, replicate 0, no label noise), so a
//! cell of the table is the same cell in a sweep with the same seed.

use super::{evaluate_history, CellScratch, Grid};
use crate::history::CostedHistory;
use crate::metrics::Metrics;
use crate::noise::{NoiseLevel, NoiseModel};
use crate::strategy::Strategy;

/// One row: a strategy at a budget.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    pub budget_percent: f64,
    pub strategy: String,
    pub capacity: u64,
    pub metrics: Metrics,
}

/// Evaluates each budget × strategy with the history's own labels as flags, budget major.
pub fn table_rows(
    history: &CostedHistory,
    strategies: &[Strategy],
    budgets: &[f64],
    seed: u64,
) -> Vec<TableRow> {
    let grid = Grid::one_history(
        seed,
        strategies,
        budgets,
        NoiseModel::uniform(NoiseLevel::NONE),
    );
    let mut cells = Vec::new();
    evaluate_history(&grid, 0, history, &mut CellScratch::default(), &mut cells);
    // The grid orders cells strategy major; the table reads budget by budget.
    cells.sort_by_key(|c| (c.budget, c.strategy));
    cells
        .into_iter()
        .map(|c| TableRow {
            budget_percent: grid.budgets[c.budget as usize],
            strategy: grid.labels[c.strategy as usize].clone(),
            capacity: c.capacity,
            metrics: c.metrics,
        })
        .collect()
}
