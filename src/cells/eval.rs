//! The hot loop: every cell of one history, written into a reused row buffer. Works on costs
//! and flags only; after the buffers have grown to the largest history it does not allocate.

use super::grid::Grid;
use super::reuse::Reuse;
use crate::context::Context;
use crate::history::CostedHistory;
use crate::metrics::{score, score_with, Metrics, ScoreScratch};
use crate::noise;
use crate::rng;
use crate::view::View;

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
    /// What the noise model's flags got wrong on this history and replicate.
    pub realised: noise::Realised,
    pub metrics: Metrics,
}

/// Buffers reused across histories by one worker.
#[derive(Debug, Default)]
pub struct CellScratch {
    context: Context,
    draws: noise::Draws,
    flags: Vec<bool>,
    capacities: Vec<u64>,
    score: ScoreScratch,
    reuse: Reuse,
}

/// The summariser's stream of (history, replicate), shared by every strategy, budget and
/// noise level of that replicate (common random numbers).
fn summary_stream(seed: u64, history: usize, replicate: u32) -> u64 {
    rng::key(&[
        seed,
        rng::tag::SUMMARY,
        history as u64,
        u64::from(replicate),
    ])
}

/// Appends every cell of history `index` to `out`, in grid order.
pub fn evaluate_history(
    grid: &Grid,
    index: usize,
    history: &CostedHistory,
    s: &mut CellScratch,
    out: &mut Vec<CellRow>,
) {
    evaluate_replicates(grid, index, history, 0..grid.replicates, s, out)
}

/// Appends the cells of `replicates` of history `index` to `out`, in grid order: a replicate's
/// cells depend on (history, replicate) only, so a history evaluated piece by piece gives the
/// very rows it gives whole. Inlined into each caller, as the loop was before it took a
/// range (out of line, the cheap strategies measured up to 1.8× slower in `cargo bench`).
#[inline]
pub fn evaluate_replicates(
    grid: &Grid,
    index: usize,
    history: &CostedHistory,
    replicates: std::ops::Range<u32>,
    s: &mut CellScratch,
    out: &mut Vec<CellRow>,
) {
    s.capacities.clear();
    s.capacities
        .extend(grid.budgets.iter().map(|&b| history.capacity(b)));
    let records = noise::Records::of(history);
    // Rows are copied only within this call: a history evaluated piece by piece evaluates each
    // piece's first meeting, and gets the same rows.
    s.reuse.start(history.len());
    let block = grid.keep_recent.axis_len() * s.capacities.len();
    for replicate in replicates {
        s.draws.fill(
            grid.seed,
            index as u64,
            u64::from(replicate),
            history.len(),
            grid.shares_draws,
        );
        let stream = summary_stream(grid.seed, index, replicate);
        for (level_index, model) in grid.noise.iter().enumerate() {
            model.apply(records, &s.draws, &mut s.flags);
            let realised = noise::Realised::of(&history.truth, &s.flags);
            let draw = s.reuse.key_of(&s.flags);
            for (strategy_index, strategy) in grid.strategies.iter().enumerate() {
                let key = strategy
                    .reusable()
                    .map(|reads_flags| Reuse::block_key(strategy_index, reads_flags, draw));
                if let Some(at) = key.and_then(|key| s.reuse.find(key)) {
                    out.extend_from_within(at..at + block);
                    let copied = out.len() - block;
                    for row in &mut out[copied..] {
                        row.replicate = replicate;
                        row.level = level_index as u16;
                        row.realised = realised;
                    }
                    continue;
                }
                if let Some(key) = key {
                    s.reuse.remember(key, out.len());
                }
                let flags = strategy.flags(&history.truth, &s.flags);
                let view = View::new(history, flags);
                for kr_index in 0..grid.keep_recent.axis_len() {
                    let keep_recent = grid.keep_recent.of(strategy_index, kr_index);
                    for (budget_index, &capacity) in s.capacities.iter().enumerate() {
                        let outcome =
                            strategy.apply(view, capacity, keep_recent, stream, &mut s.context);
                        out.push(CellRow {
                            history: index as u32,
                            replicate,
                            level: level_index as u16,
                            strategy: strategy_index as u16,
                            keep_recent_axis: kr_index as u16,
                            budget: budget_index as u16,
                            keep_recent: keep_recent as u32,
                            capacity,
                            realised,
                            metrics: score_with(history, outcome, &s.context, &mut s.score),
                        });
                    }
                }
            }
        }
    }
}

/// Where one cell sits: its history's index in the sweep and its axis indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAt {
    pub history: usize,
    pub replicate: u32,
    pub level: usize,
    pub strategy: usize,
    /// The index of the `keep_recent` axis's value.
    pub keep_recent_axis: usize,
    pub budget: usize,
}

/// One cell evaluated alone, with the very flags and summariser draws the sweep gives it:
/// its row, the flags the strategy saw, and the context it built.
pub fn evaluate_cell(grid: &Grid, at: CellAt, history: &CostedHistory) -> EvaluatedCell {
    let noisy = grid.noise[at.level].flags(
        noise::Records::of(history),
        grid.seed,
        at.history as u64,
        u64::from(at.replicate),
    );
    let strategy = &grid.strategies[at.strategy];
    let flags = strategy.flags(&history.truth, &noisy).to_vec();
    let keep_recent = grid.keep_recent.of(at.strategy, at.keep_recent_axis);
    let capacity = history.capacity(grid.budgets[at.budget]);
    let mut context = Context::default();
    let outcome = strategy.apply(
        View::new(history, &flags),
        capacity,
        keep_recent,
        summary_stream(grid.seed, at.history, at.replicate),
        &mut context,
    );
    let row = CellRow {
        history: at.history as u32,
        replicate: at.replicate,
        level: at.level as u16,
        strategy: at.strategy as u16,
        keep_recent_axis: at.keep_recent_axis as u16,
        budget: at.budget as u16,
        keep_recent: keep_recent as u32,
        capacity,
        realised: noise::Realised::of(&history.truth, &noisy),
        metrics: score(history, outcome, &context),
    };
    (row, flags, outcome, context)
}

/// A cell evaluated alone: its row, the flags the strategy saw, its outcome and context.
pub type EvaluatedCell = (CellRow, Vec<bool>, crate::context::Outcome, Context);

/// The cell `ctxlab inspect` shows: `strategy` at `budget_percent` on `history` as a sweep's
/// first history, at this seed, noise model and replicate.
pub fn inspect_cell(
    history: &CostedHistory,
    strategy: &crate::strategy::Strategy,
    budget_percent: f64,
    noise: crate::noise::NoiseModel,
    seed: u64,
    replicate: u64,
) -> EvaluatedCell {
    let grid = Grid::one_history(
        seed,
        std::slice::from_ref(strategy),
        &[budget_percent],
        noise,
    );
    let at = CellAt {
        history: 0,
        replicate: replicate as u32,
        level: 0,
        strategy: 0,
        keep_recent_axis: 0,
        budget: 0,
    };
    evaluate_cell(&grid, at, history)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row buffers hold a row group of rows twice over (2¹⁸ rows): every byte of a row is
    /// half a megabyte there. 128 = 20 of indices, 8 of capacity, 16 realised, 80 of metrics.
    #[test]
    fn a_cell_row_is_128_bytes() {
        assert_eq!(std::mem::size_of::<Metrics>(), 80);
        assert_eq!(std::mem::size_of::<CellRow>(), 128);
    }
}
