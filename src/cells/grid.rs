//! The grid of a sweep: its axes, their order, and where each cell and group sits.
//!
//! Cells are ordered history, replicate, noise level (the shorthand's uniform grid,
//! false-negative major, then the models of `noise`), strategy, keep_recent, budget — the
//! order of the rows in the cells table.
//! Summary groups are ordered strategy, keep_recent, budget, noise level.

use crate::experiment::outer::OuterAxes;
use crate::experiment::Experiment;
use crate::noise::NoiseModel;
use crate::strategy::Strategy;

#[derive(Debug, Clone)]
pub struct Grid {
    pub outer: OuterAxes,
    /// The `keep_recent` of each strategy at each value of the `keep_recent` axis.
    pub keep_recent: KeepRecentInForce,
    pub budgets: Vec<f64>,
}

/// The `keep_recent` each strategy works with at each value of the sweep's `keep_recent` axis
/// (`sweep.keep_recent`, whose `None` leaves each strategy its own): the strategy's own when its
/// spec sets one, else the axis value, else the strategy's default
/// ([`Strategy::effective_keep_recent`]). Worked out once, where the grid is built; the cells,
/// their rows, the summary's key and the manifest's axes read it from here.
#[derive(Debug, Clone)]
pub struct KeepRecentInForce {
    /// How many values the axis has.
    axis_len: usize,
    /// Strategy-major: strategy `s` at axis value `k` is `values[s * axis_len + k]`.
    values: Vec<usize>,
}

impl KeepRecentInForce {
    pub fn new(strategies: &[Strategy], keep_recent_axis: &[Option<usize>]) -> Self {
        KeepRecentInForce {
            axis_len: keep_recent_axis.len(),
            values: strategies
                .iter()
                .flat_map(|s| keep_recent_axis.iter().map(|&k| s.effective_keep_recent(k)))
                .collect(),
        }
    }

    /// The `keep_recent` of strategy `strategy` at the axis's value `axis_index`.
    pub fn of(&self, strategy: usize, axis_index: usize) -> usize {
        self.values[strategy * self.axis_len + axis_index]
    }

    /// How many values the `keep_recent` axis has (the cells per strategy, budget and level).
    pub fn axis_len(&self) -> usize {
        self.axis_len
    }

    /// The distinct values in force over all strategies, ascending (the manifest's axis).
    pub fn distinct(&self) -> Vec<usize> {
        let mut v = self.values.clone();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl std::ops::Deref for Grid {
    type Target = OuterAxes;
    fn deref(&self) -> &OuterAxes {
        &self.outer
    }
}

impl Grid {
    pub fn new(exp: &Experiment, histories: usize) -> Self {
        let outer = OuterAxes::new(&exp.file, &exp.frame, histories);
        Grid {
            keep_recent: KeepRecentInForce::new(&outer.strategies, &exp.keep_recent_axis),
            outer,
            budgets: exp.budgets.clone(),
        }
    }

    /// The grid of `ctxlab table` and `ctxlab inspect`: one history, one replicate, the
    /// given strategies and budgets, each strategy at its own `keep_recent`, under one noise
    /// model.
    pub fn one_history(
        seed: u64,
        strategies: &[Strategy],
        budgets: &[f64],
        noise: NoiseModel,
    ) -> Grid {
        let level = noise.nominal();
        Grid {
            outer: OuterAxes::of(
                seed,
                1,
                1,
                (vec![level.false_negative], vec![level.false_positive]),
                vec![noise],
                strategies,
            ),
            keep_recent: KeepRecentInForce::new(strategies, &[None]),
            budgets: budgets.to_vec(),
        }
    }

    /// Cells for one history and one replicate.
    pub fn cells_per_replicate(&self) -> usize {
        self.levels.len() * self.strategies.len() * self.keep_recent.axis_len() * self.budgets.len()
    }

    pub fn cells_per_history(&self) -> usize {
        self.replicates as usize * self.cells_per_replicate()
    }

    pub fn cells(&self) -> u64 {
        self.histories as u64 * self.cells_per_history() as u64
    }

    /// Number of summary groups.
    pub fn groups(&self) -> usize {
        self.strategies.len() * self.keep_recent.axis_len() * self.budgets.len() * self.levels.len()
    }

    /// The summary group of a cell's coordinates (indices into the axes).
    pub fn group(&self, strategy: usize, keep_recent: usize, budget: usize, level: usize) -> usize {
        ((strategy * self.keep_recent.axis_len() + keep_recent) * self.budgets.len() + budget)
            * self.levels.len()
            + level
    }

    /// The axis indices of a group, inverse of [`Grid::group`].
    pub fn group_coordinates(&self, group: usize) -> (usize, usize, usize, usize) {
        let level = group % self.levels.len();
        let rest = group / self.levels.len();
        let budget = rest % self.budgets.len();
        let rest = rest / self.budgets.len();
        (
            rest / self.keep_recent.axis_len(),
            rest % self.keep_recent.axis_len(),
            budget,
            level,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keep_recent_in_force_is_the_spec_s_then_the_axis_s_then_the_default() {
        let strategies: Vec<Strategy> = ["recent", "mask", "summary(keep_recent=2)"]
            .iter()
            .map(|s| Strategy::parse(s).unwrap())
            .collect();
        let in_force = KeepRecentInForce::new(&strategies, &[None, Some(5)]);
        assert_eq!(in_force.axis_len(), 2);
        // recent: its default 0, then the axis's 5; mask: its default 3, then 5; the summary's
        // own 2 wins over both values of the axis.
        let table: Vec<[usize; 2]> = (0..3)
            .map(|s| [in_force.of(s, 0), in_force.of(s, 1)])
            .collect();
        assert_eq!(table, [[0, 5], [3, 5], [2, 2]]);
        assert_eq!(in_force.distinct(), [0, 2, 3, 5]);
    }
}
