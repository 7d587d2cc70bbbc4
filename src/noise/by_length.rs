//! `by_length(fn, fp)`: the chance of a miss grows with the record's cost (long outputs are
//! skimmed). A record of cost `c` in a history whose records cost `m` on average is missed
//! with probability
//!
//! ```text
//! fn_i = 1 − (1 − fn)^(c / m)
//! ```
//!
//! as if the flagger read the record in stretches of the mean length and noticed what must
//! survive in each stretch with probability `1 − fn`: a record of the mean cost is missed at
//! exactly `fn`, one twice as long at `1 − (1 − fn)²`, an empty one never. The form stays a
//! probability for any cost (a linear `fn · c / m` would pass 1 on long tool outputs), grows
//! with the cost, and grows with `fn` at every cost, so the draws still nest across rates.
//! Because it is concave in `c`, the mean miss rate over records is at most `fn`, close to it
//! unless costs are very uneven. False positives do not depend on length: `fp` is uniform.

use super::spec::Rates;
use super::{flag, Draws, Model, NoiseLevel, Records};
use crate::error::ParseError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByLength(pub NoiseLevel);

impl ByLength {
    /// The miss chance of a record of `cost` where records cost `mean` on average.
    pub fn false_negative(&self, cost: u64, mean: f64) -> f64 {
        // A history of empty records: every record is of the mean length.
        let relative = if mean > 0.0 { cost as f64 / mean } else { 1.0 };
        1.0 - (1.0 - self.0.false_negative).powf(relative)
    }
}

impl Model for ByLength {
    fn read(r: &mut Rates) -> Result<Self, ParseError> {
        Ok(ByLength(r.level()?))
    }

    fn params(&self) -> Vec<(String, f64)> {
        super::spec::level_params(self.0)
    }

    /// The miss chance of a record of the mean cost, and the uniform `fp`.
    fn nominal(&self) -> NoiseLevel {
        self.0
    }

    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        let n = records.costs.len().max(1) as f64;
        let mean = records.costs.iter().map(|&c| c as f64).sum::<f64>() / n;
        out.clear();
        out.extend(
            records
                .flags
                .iter()
                .zip(records.costs)
                .zip(&draws.own)
                .map(|((&base, &cost), &u)| {
                    let rates =
                        NoiseLevel::new(self.false_negative(cost, mean), self.0.false_positive);
                    flag(base, u, rates)
                }),
        );
    }
}
