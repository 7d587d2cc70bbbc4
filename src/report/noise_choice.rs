//! What the retention-against-noise chart draws: at which budget ([`NoiseChoice`]) and which
//! noise rate along its x axis ([`NoiseRateAxis`]); the chart and the report's table agree.

use super::manifest::{self as manifest_file, Manifest, NoiseBudget, DEFAULT_NOISE_BUDGET};
use super::summary_grid::SummaryGrid;
use super::summary_table::SummaryRow;
use crate::error::InputError;
use crate::experiment::check_noise_budget;
use crate::figures::labels;
use std::path::Path;

/// The budget of the retention-against-noise chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseChoice {
    /// Index into the grid's budgets.
    pub budget_index: usize,
    pub budget: f64,
    /// True when the experiment set no budget and 50 % was not in the sweep, so the nearest
    /// budget stands in (and the chart says so).
    pub substituted: bool,
}

impl NoiseChoice {
    /// A configured budget must be one of the sweep's; without one, 50 % or the nearest.
    pub fn resolve(
        grid: &SummaryGrid,
        manifest: &Manifest,
        manifest_path: &Path,
    ) -> Result<NoiseChoice, InputError> {
        let budgets = &grid.budgets;
        match manifest_file::noise_budget(manifest) {
            NoiseBudget::Configured(value) => {
                let b = check_noise_budget(&value, budgets).map_err(|m| {
                    InputError::key(
                        manifest_path.display().to_string(),
                        "config.charts.noise_budget",
                        m,
                    )
                })?;
                Ok(NoiseChoice {
                    budget_index: budgets
                        .iter()
                        .position(|&x| x == b)
                        .expect("checked to be one of the budgets"),
                    budget: b,
                    substituted: false,
                })
            }
            NoiseBudget::Default => {
                // Ties go to the larger budget: the nearer to a roomy context.
                let i = (0..budgets.len())
                    .min_by(|&a, &b| {
                        let da = (budgets[a] - DEFAULT_NOISE_BUDGET).abs();
                        let db = (budgets[b] - DEFAULT_NOISE_BUDGET).abs();
                        da.total_cmp(&db).then(b.cmp(&a))
                    })
                    .expect("a summary has at least one budget");
                Ok(NoiseChoice {
                    budget_index: i,
                    budget: budgets[i],
                    substituted: budgets[i] != DEFAULT_NOISE_BUDGET,
                })
            }
        }
    }
}

/// Which noise rate the retention-against-noise chart puts on its x axis; the other rate
/// splits it into panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseRateAxis {
    FalseNegative,
    FalsePositive,
}

impl NoiseRateAxis {
    /// The false-negative rate, unless only the false-positive rate varies.
    pub fn choose(grid: &SummaryGrid) -> NoiseRateAxis {
        if grid.false_negatives.len() < 2 && grid.false_positives.len() >= 2 {
            NoiseRateAxis::FalsePositive
        } else {
            NoiseRateAxis::FalseNegative
        }
    }

    /// (rates along the x axis, rates of the panels).
    pub fn rates<'g>(&self, grid: &'g SummaryGrid) -> (&'g [f64], &'g [f64]) {
        match self {
            NoiseRateAxis::FalseNegative => (&grid.false_negatives, &grid.false_positives),
            NoiseRateAxis::FalsePositive => (&grid.false_positives, &grid.false_negatives),
        }
    }

    /// The noise level at `x` along the axis in the panel of rate `panel`.
    pub fn level(&self, grid: &SummaryGrid, x: f64, panel: f64) -> Option<usize> {
        match self {
            NoiseRateAxis::FalseNegative => grid.noise_index(x, panel),
            NoiseRateAxis::FalsePositive => grid.noise_index(panel, x),
        }
    }

    /// The panel title for the other rate.
    pub fn panel_title(&self, panel: f64) -> String {
        match self {
            NoiseRateAxis::FalseNegative => format!("FP {}", labels::rate(panel)),
            NoiseRateAxis::FalsePositive => format!("FN {}", labels::rate(panel)),
        }
    }

    /// The rate a group's flags realised along this axis (`None`: the summary has none).
    pub fn realised(&self, row: &SummaryRow) -> Option<f64> {
        match self {
            NoiseRateAxis::FalseNegative => row.stats("fn_realised").mean,
            NoiseRateAxis::FalsePositive => row.stats("fp_realised").mean,
        }
    }

    /// The rate a group's flags realised along the panels' axis.
    pub fn panel_realised(&self, row: &SummaryRow) -> Option<f64> {
        match self {
            NoiseRateAxis::FalseNegative => row.stats("fp_realised").mean,
            NoiseRateAxis::FalsePositive => row.stats("fn_realised").mean,
        }
    }

    /// The panel title with the rate the panel's flags realised, e.g. `FP 5 % (realised 4.9 %)`.
    pub fn panel_title_realised(&self, panel: f64, row: Option<&SummaryRow>) -> String {
        let nominal = self.panel_title(panel);
        match row.and_then(|r| self.panel_realised(r)) {
            Some(r) => format!("{nominal} (realised {})", labels::rate_precise(r)),
            None => nominal,
        }
    }
}
