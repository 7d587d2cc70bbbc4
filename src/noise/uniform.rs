//! `uniform(fn, fp)`: every record mislabelled with the same probability, independently —
//! the model of the `false_negative` / `false_positive` axes, whose flags it reproduces bit
//! for bit.

use super::spec::Rates;
use super::{Draws, Model, NoiseLevel, Records};
use crate::error::ParseError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Uniform(pub NoiseLevel);

impl Model for Uniform {
    fn read(r: &mut Rates) -> Result<Self, ParseError> {
        Ok(Uniform(r.level()?))
    }

    fn params(&self) -> Vec<(String, f64)> {
        super::spec::level_params(self.0)
    }

    fn nominal(&self) -> NoiseLevel {
        self.0
    }

    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        super::apply(records.flags, &draws.own, self.0, out);
    }
}
