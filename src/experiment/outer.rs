//! The outer axes both kinds of grid share: the seed, the histories, the replicates, the noise
//! levels and the strategies. A cell grid adds keep_recent and budgets inside them, a session
//! grid windows, ratios and note rates.

use super::frame::{Frame, FrameFile};
use crate::noise::{NoiseLevel, NoiseModel};
use crate::strategy::Strategy;

#[derive(Debug, Clone)]
pub struct OuterAxes {
    pub seed: u64,
    pub histories: usize,
    pub replicates: u32,
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    /// The noise models, one per noise level.
    pub noise: Vec<NoiseModel>,
    /// Each model's label, what the `noise` column holds.
    pub noise_labels: Vec<String>,
    /// Each model's nominal rates, what the `false_negative` / `false_positive` columns hold.
    pub levels: Vec<NoiseLevel>,
    /// Whether some model reads the draws shared across replicates.
    pub shares_draws: bool,
    pub strategies: Vec<Strategy>,
    pub labels: Vec<String>,
}

impl OuterAxes {
    /// The outer axes of an experiment over `histories` histories.
    pub fn new(file: &FrameFile, frame: &Frame, histories: usize) -> Self {
        OuterAxes::of(
            file.seed,
            histories,
            file.replicates,
            (frame.false_negative.clone(), frame.false_positive.clone()),
            frame.noise.clone(),
            &frame.strategies,
        )
    }

    /// The outer axes from their values: `(false_negative, false_positive)` is the
    /// shorthand's grid, `noise` every model.
    pub fn of(
        seed: u64,
        histories: usize,
        replicates: u32,
        (false_negative, false_positive): (Vec<f64>, Vec<f64>),
        noise: Vec<NoiseModel>,
        strategies: &[Strategy],
    ) -> Self {
        OuterAxes {
            seed,
            histories,
            replicates,
            false_negative,
            false_positive,
            noise_labels: noise.iter().map(NoiseModel::label).collect(),
            levels: noise.iter().map(NoiseModel::nominal).collect(),
            shares_draws: noise.iter().any(NoiseModel::shares_draws),
            noise,
            labels: strategies.iter().map(Strategy::label).collect(),
            strategies: strategies.to_vec(),
        }
    }

    pub fn false_negatives(&self) -> Vec<f64> {
        self.false_negative.clone()
    }

    pub fn false_positives(&self) -> Vec<f64> {
        self.false_positive.clone()
    }
}
