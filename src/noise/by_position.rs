//! `by_position(fn_start, fn_end, fp_start, fp_end)`: rates linear in a record's relative
//! position `i / (n − 1)` along its history (a flagger that grows careless late in a long run,
//! or one that attends to the end). A history of one record sits at position 0.

use super::spec::Rates;
use super::{flag, Draws, Model, NoiseLevel, Records};
use crate::error::ParseError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByPosition {
    pub start: NoiseLevel,
    pub end: NoiseLevel,
}

impl ByPosition {
    /// The rates at relative position `x` in `[0, 1]`; constant rates stay exact.
    pub fn rates(&self, x: f64) -> NoiseLevel {
        let along = |a: f64, b: f64| a + (b - a) * x;
        NoiseLevel::new(
            along(self.start.false_negative, self.end.false_negative),
            along(self.start.false_positive, self.end.false_positive),
        )
    }
}

impl Model for ByPosition {
    fn read(r: &mut Rates) -> Result<Self, ParseError> {
        let fn_start = r.rate_or_zero("fn_start")?;
        let fn_end = r.rate_or_zero("fn_end")?;
        let fp_start = r.rate_or_zero("fp_start")?;
        let fp_end = r.rate_or_zero("fp_end")?;
        Ok(ByPosition {
            start: NoiseLevel::new(fn_start, fp_start),
            end: NoiseLevel::new(fn_end, fp_end),
        })
    }

    fn params(&self) -> Vec<(String, f64)> {
        vec![
            ("fn_start".into(), self.start.false_negative),
            ("fn_end".into(), self.end.false_negative),
            ("fp_start".into(), self.start.false_positive),
            ("fp_end".into(), self.end.false_positive),
        ]
    }

    /// The mean over a history's records: positions `i / (n − 1)` average ½, so the
    /// midpoint of the rates.
    fn nominal(&self) -> NoiseLevel {
        self.rates(0.5)
    }

    /// The rates relative to their mean (`0×fn`, `2×fn`): a slope is a pattern, its level the
    /// rate. A rate whose mean is 0 stays as it is.
    fn family_params(&self) -> Vec<(String, String)> {
        let mean = self.nominal();
        let relative = |rate: f64, mean: f64, what: &str| {
            if mean > 0.0 {
                // Three decimals: 0.1 / 0.15 is a ratio, not a float's last bits.
                format!("{}×{what}", (rate / mean * 1000.0).round() / 1000.0)
            } else {
                rate.to_string()
            }
        };
        let (q, p) = (mean.false_negative, mean.false_positive);
        vec![
            ("fn_start".into(), relative(self.start.false_negative, q, "fn")),
            ("fn_end".into(), relative(self.end.false_negative, q, "fn")),
            ("fp_start".into(), relative(self.start.false_positive, p, "fp")),
            ("fp_end".into(), relative(self.end.false_positive, p, "fp")),
        ]
    }

    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        let last = records.flags.len().saturating_sub(1).max(1) as f64;
        out.clear();
        out.extend(
            records
                .flags
                .iter()
                .zip(&draws.own)
                .enumerate()
                .map(|(i, (&base, &u))| flag(base, u, self.rates(i as f64 / last))),
        );
    }
}
