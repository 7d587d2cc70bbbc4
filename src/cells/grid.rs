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
    /// `None` = the strategy's own default.
    pub keep_recent: Vec<Option<usize>>,
    pub budgets: Vec<f64>,
}

impl std::ops::Deref for Grid {
    type Target = OuterAxes;
    fn deref(&self) -> &OuterAxes {
        &self.outer
    }
}

impl Grid {
    pub fn new(exp: &Experiment, histories: usize) -> Self {
        Grid {
            outer: OuterAxes::new(&exp.file, &exp.frame, histories),
            keep_recent: exp.keep_recent.clone(),
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
            keep_recent: vec![None],
            budgets: budgets.to_vec(),
        }
    }

    /// The distinct `keep_recent` values in force over all strategies, ascending.
    pub fn effective_keep_recent(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .strategies
            .iter()
            .flat_map(|s| self.keep_recent.iter().map(|&k| s.effective_keep_recent(k)))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Cells for one history and one replicate.
    pub fn cells_per_replicate(&self) -> usize {
        self.levels.len() * self.strategies.len() * self.keep_recent.len() * self.budgets.len()
    }

    pub fn cells_per_history(&self) -> usize {
        self.replicates as usize * self.cells_per_replicate()
    }

    pub fn cells(&self) -> u64 {
        self.histories as u64 * self.cells_per_history() as u64
    }

    /// Number of summary groups.
    pub fn groups(&self) -> usize {
        self.strategies.len() * self.keep_recent.len() * self.budgets.len() * self.levels.len()
    }

    /// The summary group of a cell's coordinates (indices into the axes).
    pub fn group(&self, strategy: usize, keep_recent: usize, budget: usize, level: usize) -> usize {
        ((strategy * self.keep_recent.len() + keep_recent) * self.budgets.len() + budget)
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
            rest / self.keep_recent.len(),
            rest % self.keep_recent.len(),
            budget,
            level,
        )
    }
}
