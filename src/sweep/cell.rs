//! The hot loop: every cell of one history, written into a reused row buffer. Works on costs
//! and flags only; after the buffers have grown to the largest history it does not allocate.

use super::grid::Grid;
use crate::history::CostedHistory;
use crate::metrics::{score, Metrics};
use crate::noise;
use crate::rng;
use crate::strategy::{Context, View};

/// One evaluated cell, by axis indices (labels are attached when the tables are written).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellRow {
    pub history: u32,
    pub replicate: u32,
    pub level: u16,
    pub strategy: u16,
    /// Index into the keep_recent axis.
    pub keep_recent_axis: u16,
    pub budget: u16,
    /// The keep_recent in force for this strategy.
    pub keep_recent: u32,
    pub capacity: u64,
    pub total: u64,
    pub metrics: Metrics,
}

/// Buffers reused across histories by one worker.
#[derive(Debug, Default)]
pub struct Scratch {
    context: Context,
    draws: Vec<f64>,
    flags: Vec<bool>,
    capacities: Vec<u64>,
}

/// Appends every cell of history `index` to `out`, in grid order.
pub fn evaluate_history(
    grid: &Grid,
    index: usize,
    history: &CostedHistory,
    s: &mut Scratch,
    out: &mut Vec<CellRow>,
) {
    s.capacities.clear();
    s.capacities
        .extend(grid.budgets.iter().map(|&b| history.capacity(b)));
    for replicate in 0..grid.replicates {
        noise::draws(
            grid.seed,
            index as u64,
            u64::from(replicate),
            history.len(),
            &mut s.draws,
        );
        // The summariser's draws, shared by every strategy, budget and noise level of this
        // replicate (common random numbers).
        let summary_stream = rng::key(&[
            grid.seed,
            rng::tag::SUMMARY,
            index as u64,
            u64::from(replicate),
        ]);
        for (level_index, &level) in grid.levels.iter().enumerate() {
            noise::apply(&history.truth, &s.draws, level, &mut s.flags);
            for (strategy_index, strategy) in grid.strategies.iter().enumerate() {
                let flags = strategy.flags(&history.truth, &s.flags);
                let view = View::new(history, flags);
                for (kr_index, &kr) in grid.keep_recent.iter().enumerate() {
                    let keep_recent = strategy.effective_keep_recent(kr);
                    for (budget_index, &capacity) in s.capacities.iter().enumerate() {
                        let outcome = strategy.apply(
                            view,
                            capacity,
                            keep_recent,
                            summary_stream,
                            &mut s.context,
                        );
                        out.push(CellRow {
                            history: index as u32,
                            replicate,
                            level: level_index as u16,
                            strategy: strategy_index as u16,
                            keep_recent_axis: kr_index as u16,
                            budget: budget_index as u16,
                            keep_recent: keep_recent as u32,
                            capacity,
                            total: history.total,
                            metrics: score(history, outcome, &s.context),
                        });
                    }
                }
            }
        }
    }
}
